"""Declarations and references from real language servers (``semantic``), and which finder
answers a query: ``pick_finder`` gives servers where one runs, the tags finder elsewhere.

``LspFinder`` adapts ``lsp_bridge.ServerPool`` answers (already ``SymbolDef`` records in the
tags vocabulary) to the tags finder's ids: a declaration the tags see at the same name keeps
the tags' id, kind and container, so ``symbols:``, ``symbol:#`` and ``graph:`` agree.

This module sits above ``symbols_mode`` (it builds on ``TagsFinder`` and answers with a
``SymbolFinder``); ``symbols_mode`` never names it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from sleuth.ast_search import TreeCache, get_lang_spec, language_for_path
from sleuth.ast_search.tags import tags_supported
from sleuth.model import SymbolDef, SymbolRef
from sleuth.query.servers import SymbolServers
from sleuth.query.symbols_mode import SymbolFinder, TagsCache, TagsFinder
from sleuth.workspace import FileEntry, Workspace

__all__ = ["LspFinder", "pick_finder", "SERVER_LANGUAGE"]

SERVER_LANGUAGE = {"tsx": "typescript"}
"""The language server's name for a tree-sitter language where the two differ."""


def pick_finder(
    ws: Workspace,
    files: Sequence[FileEntry],
    lang: str | None,
    cache: TagsCache,
    trees: TreeCache | None,
    servers: SymbolServers | None,
) -> SymbolFinder:
    """Language servers for the languages in scope that have one running (``semantic``), tags
    for the others (``syntactic``).

    A language whose default servers are not installed falls back to tags; a server the
    workspace configured itself but is missing, or one given up after crashes, is
    ``ServerUnavailable`` (``servers.serving`` raises it) rather than a silent downgrade.
    """
    wanted = _languages(files, lang)
    tags = TagsFinder(ws, cache, trees, only=wanted if lang else None)
    if servers is None or not wanted:
        return tags
    served = sorted({sl for lg in wanted if servers.serving(sl := SERVER_LANGUAGE.get(lg, lg))})
    if not served:
        return tags
    return LspFinder(ws, servers, served, tags)


def _languages(files: Sequence[FileEntry], lang: str | None) -> set[str]:
    if lang:
        return {get_lang_spec(lang).name}
    return {lg for f in files if (lg := language_for_path(f.path)) and tags_supported(lg)}


class LspFinder:
    """Asks the language servers of ``langs``; files of other languages get the tags' answers
    (``syntactic``), so one query over a mixed tree keeps every semantic answer it can get."""

    def __init__(
        self, ws: Workspace, pool: SymbolServers, langs: Sequence[str], tags: TagsFinder
    ) -> None:
        self._ws = ws
        self._pool = pool
        self._langs = list(langs)
        self._tags = tags
        self._served: dict[str, bool] = {}

    def served(self, path: str) -> bool:
        ext = path[path.rfind(".") :] if "." in path.rsplit("/", 1)[-1] else path
        known = self._served.get(ext)
        if known is None:
            known = self._served[ext] = self._pool.language_of(path) in self._langs
        return known

    def precision_of(self, path: str) -> str:
        return "semantic" if self.served(path) else "syntactic"

    def _def(self, s: SymbolDef) -> SymbolDef | None:
        if self._ws.read(s.path) is None:
            return None
        # the same declaration as the tags see it keeps the same id for symbols:, symbol:# and
        # graph: (servers name kinds and containers differently: variable/constant, nesting)
        tags = self._tags.tags_of(FileEntry(s.path, 0, 0), None)
        for d in tags.defs if tags is not None else ():
            if d.name_start == s.name_start and d.name == s.name:
                return replace(s, id=d.id, kind=d.kind, container=d.container)  # range kept
        return s

    def defs(self, files: Sequence[FileEntry], name: str, fuzzy: bool) -> Iterable[SymbolDef]:
        mine = [f for f in files if self.served(f.path)]
        others = [f for f in files if not self.served(f.path)]
        if fuzzy and not name:  # symbol:#ID — every declaration of the candidate files
            for f in mine:
                for s in self._pool.document_symbols(f.path):
                    d = self._def(s)
                    if d is not None:
                        yield d
        elif mine:
            in_scope = {f.path for f in mine}
            for lang in self._langs:
                if not fuzzy and not self._pool.spec(lang).workspace_symbols:
                    of_lang = [f for f in mine if self._pool.language_of(f.path) == lang]
                    yield from self._declared_in(of_lang, name)
                    continue
                for s in self._pool.workspace_symbols(lang, name, fuzzy=fuzzy):
                    if s.path in in_scope:
                        d = self._def(s)
                        if d is not None:
                            yield d
        if others:
            yield from self._tags.defs(others, name, fuzzy)

    def _declared_in(self, files: Sequence[FileEntry], name: str) -> Iterable[SymbolDef]:
        """Declarations named ``name`` (ignoring case) as the server lists them, asked only of
        the files whose tags declare such a name (for servers whose ``workspace/symbol`` is
        capped)."""
        want = name.lower()
        for f in files:
            tags = self._tags.tags_of(f, want.encode())
            if tags is None or not any(t.name.lower() == want for t in tags.defs):
                continue
            for s in self._pool.document_symbols(f.path):
                if s.name.lower() == want:
                    d = self._def(s)
                    if d is not None:
                        yield d

    def refs(self, d: SymbolDef, files: Sequence[FileEntry]) -> Iterable[SymbolRef]:
        if not self.served(d.path):
            yield from self._tags.refs(d, files)
            return
        # with the declaration included, servers also list imports and prototypes (ty, tsc and
        # clangd drop them otherwise); the declaration's own name is dropped by plan_symbols
        for loc in self._pool.references(d.path, d.name_start, include_declaration=True):
            ft = self._ws.read(loc.path)
            if ft is None:
                continue
            yield SymbolRef(
                name=d.name,
                kind="reference",
                path=loc.path,
                start_byte=loc.start_byte,
                end_byte=loc.end_byte,
                line=ft.line_of(loc.start_byte),
                target=d.id,
            )
