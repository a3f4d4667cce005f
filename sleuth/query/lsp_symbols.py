"""``LspFinder``: declarations and references from real language servers (``semantic``).

It adapts ``lsp_bridge.ServerPool`` answers to the same ``SymbolDef``/``SymbolRef`` records the
tags finder yields, with the same ids (``symbol_id`` of path, qualified name and kind, the kind
normalised to the tags vocabulary), so ``symbols:``, ``symbol:#`` and ``graph:`` agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sleuth.model import SymbolDef, SymbolRef, symbol_id
from sleuth.query.symbols_mode import TagsFinder
from sleuth.workspace import FileEntry, Workspace

__all__ = ["LspFinder", "normal_kind"]

_KINDS = {
    "class": "class",
    "struct": "class",
    "interface": "interface",
    "enum": "class",
    "method": "method",
    "constructor": "method",
    "function": "function",
    "module": "module",
    "namespace": "module",
    "package": "module",
    "constant": "constant",
    "enummember": "constant",
    "variable": "variable",
    "field": "field",
    "property": "field",
    "typeparameter": "type",
    "object": "variable",
}


def normal_kind(kind: str, container: str) -> str:
    """The tags vocabulary for an LSP symbol kind (a function inside a class is a method)."""
    k = _KINDS.get(kind.lower().replace("_", ""), kind.lower())
    if k == "function" and container:
        return "method"
    return k


class LspFinder:
    """Asks the language servers of ``langs``; files of other languages get the tags' answers
    (``syntactic``), so one query over a mixed tree keeps every semantic answer it can get."""

    def __init__(self, ws: Workspace, pool: Any, langs: Sequence[str], tags: TagsFinder) -> None:
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

    def _def(self, s: Any) -> SymbolDef | None:
        ft = self._ws.read(s.path)
        if ft is None:
            return None
        # the same declaration as the tags see it keeps the same id for symbols:, symbol:# and
        # graph: (servers name kinds and containers differently: variable/constant, nesting)
        kind = normal_kind(s.kind, s.container)
        container = s.container
        qualified = f"{container}.{s.name}" if container else s.name
        sid = symbol_id(s.path, qualified, kind)
        tags = self._tags.tags_of(FileEntry(s.path, 0, 0), None)
        for d in tags.defs if tags is not None else ():
            if d.name_start == s.name_start and d.name == s.name:
                sid, kind, container = d.id, d.kind, d.container  # the server's range is kept
                break
        return SymbolDef(
            id=sid,
            name=s.name,
            kind=kind,
            container=container,
            path=s.path,
            start_byte=s.start_byte,
            end_byte=s.end_byte,
            line=ft.line_of(s.start_byte),
            end_line=ft.line_of(max(s.start_byte, s.end_byte - 1)),
            name_start=s.name_start,
            name_end=s.name_end,
        )

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
