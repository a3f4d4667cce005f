"""``ServerPool``: the bridge's synchronous face — symbols, references, definitions, renames.

One pool per workbench. The servers, their event loop, the crash and restart policy and the
request path every query takes are ``Supervisor``'s (``supervisor.py``); the pool adds the
queries used by query/, each a coroutine run on that loop and awaited, and the outline cache.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

from sleuth.errors import InvalidQuery, SleuthError, StaleReference, Unsupported
from sleuth.lsp_bridge.positions import LineIndex
from sleuth.lsp_bridge.results import (
    LspEdit,
    LspLocation,
    edits_of,
    flatten_symbols,
    iter_locations,
)
from sleuth.lsp_bridge.servers import ServerVersions, language_of
from sleuth.lsp_bridge.session import Session
from sleuth.lsp_bridge.supervisor import Supervisor
from sleuth.model import SymbolDef
from sleuth.workspace import Workspace

__all__ = ["ServerPool", "RenamePlan", "RENAME_ROUNDS"]

ENRICH_FILES = 64
"""At most this many files get a ``documentSymbol`` call to widen workspace symbols."""
MAX_OUTLINES = 4096
"""Most cached ``documentSymbol`` answers (the cache is dropped whole past it)."""
RENAME_ROUNDS = 4
"""Most ``textDocument/rename`` requests for one rename (files opened between them)."""


class ServerPool(Supervisor):
    """Language servers of one workspace, started lazily, reused, restarted, shut down."""

    def __init__(
        self, ws: Workspace, *, timeout: float = 20.0, versions: ServerVersions | None = None
    ) -> None:
        """``versions``: what probed servers answered to ``--version``, kept by the session
        (``service.session.Session.server_versions``) so each is asked once; a memo of the
        pool's own when not given."""
        super().__init__(ws, timeout=timeout, versions=versions)
        self._outlines: dict[tuple[str, str], tuple[str, Session, list[SymbolDef]]] = {}
        """``documentSymbol`` answers by (server, file), with the file's stamp and session."""

    def __enter__(self) -> ServerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- positions ---------------------------------------------------------------------------

    def _covered(self, path: str, what: str) -> tuple[str, str]:
        """``path`` validated and its language; ``unsupported`` when no server covers it."""
        rel = self.ws.validate_path(path)
        lang = language_of(rel)
        if lang is None:
            raise Unsupported(
                f"no language server covers {rel}; {what} cover .py, .ts/.js, .c/.cpp, .go and "
                ".rs files",
                details={"path": rel},
            )
        return rel, lang

    async def _at(self, path: str) -> tuple[Session, str, dict[str, Any]]:
        """Session, relative path and ``TextDocumentPositionParams`` base for ``path``."""
        rel, lang = self._covered(path, "symbol queries")
        session = await self._session(lang)
        session.prepare(rel)
        return session, rel, {"textDocument": {"uri": session.uri(rel)}}

    async def _position(self, path: str, offset: int) -> tuple[Session, str, dict[str, Any]]:
        session, rel, params = await self._at(path)
        index = session.index_of(rel)
        if index is None:
            raise Unsupported(
                f"{rel} is binary or too large for a language server query",
                details={"path": rel},
            )
        params["position"] = index.position_json(offset, session.encoding)
        return session, rel, params

    # -- queries -----------------------------------------------------------------------------

    def document_symbols(self, path: str) -> list[SymbolDef]:
        """Declarations of one file, flattened in document order, containers dotted."""

        async def run() -> list[SymbolDef]:
            session, rel, params = await self._at(path)
            return await self._document_symbols(session, rel, params)

        return self._call(run)

    async def _document_symbols(
        self, session: Session, rel: str, params: dict[str, Any]
    ) -> list[SymbolDef]:
        if not session.supports("documentSymbolProvider"):
            raise Unsupported(
                f"language server {session.spec.name} does not list a file's symbols",
                details={"server": session.spec.name},
            )
        try:
            stamp = text.stamp if (text := self.ws.read(rel)) is not None else None
        except SleuthError:
            stamp = None
        cache_key = (self._key(session.spec), rel)
        hit = self._outlines.get(cache_key)
        if stamp is not None and hit is not None and hit[0] == stamp and hit[1] is session:
            return list(hit[2])  # a file's outline depends on its bytes alone
        result = await self._ask(session, "textDocument/documentSymbol", params)
        index = session.index_of(rel)
        found = [] if index is None else flatten_symbols(result, rel, index, session.encoding)
        if stamp is not None:
            if len(self._outlines) >= MAX_OUTLINES:
                self._outlines.clear()
            self._outlines[cache_key] = (stamp, session, found)
        return list(found)

    def workspace_symbols(self, lang: str, query: str, *, fuzzy: bool = True) -> list[SymbolDef]:
        """``workspace/symbol`` matches, widened to whole declarations by ``documentSymbol``.

        With ``fuzzy=False`` only names equal to ``query`` ignoring case are kept (and widened):
        servers answer fuzzily, and widening hundreds of near-misses costs seconds.
        """

        async def run() -> list[SymbolDef]:
            session = await self._session(lang)
            session.prepare()
            result = await self._settled(session, "workspace/symbol", {"query": query})
            items = result if isinstance(result, list) else []
            if not fuzzy:
                want = query.lower()
                items = [
                    i
                    for i in items
                    if isinstance(i, dict) and str(i.get("name", "")).lower() == want
                ]
            return await self._enrich(session, items)

        return self._call(run)

    async def _enrich(self, session: Session, items: list[Any]) -> list[SymbolDef]:
        out: list[SymbolDef] = []
        per_file: dict[str, list[SymbolDef]] = {}
        for item in items:
            if not isinstance(item, dict) or not isinstance(item.get("location"), dict):
                continue
            rel = session.rel_of(str(item["location"].get("uri", "")))
            index = session.index_of(rel) if rel is not None else None
            if rel is None or index is None:
                continue
            if rel not in per_file and len(per_file) < ENRICH_FILES:
                per_file[rel] = []
                if session.supports("documentSymbolProvider"):
                    session.sync_document(rel)  # some servers list symbols of open files only
                    params = {"textDocument": {"uri": session.uri(rel)}}
                    with contextlib.suppress(SleuthError):
                        per_file[rel] = await self._document_symbols(session, rel, params)
            flat = flatten_symbols([item], rel, index, session.encoding)
            if not flat:
                continue
            # the document symbol (of this very file) it stands for, with the whole range
            out.append(_best_match(flat[0], per_file.get(rel, [])) or flat[0])
        return sorted(set(out), key=lambda s: (s.path, s.start_byte, s.name))

    def references(
        self, path: str, byte_offset: int, include_declaration: bool = False
    ) -> list[LspLocation]:
        """Every reference to the symbol at ``byte_offset`` of ``path``, in the workspace."""

        async def run() -> list[LspLocation]:
            session, _, params = await self._position(path, byte_offset)
            params["context"] = {"includeDeclaration": include_declaration}
            result = await self._settled(session, "textDocument/references", params)
            found = iter_locations(result, session.rel_of, session.index_of, session.encoding)
            if not include_declaration and found:
                # jedi-language-server ignores includeDeclaration=false (measured,
                # docs/servers.md#per-server-quirks): drop the definition ourselves.
                base = {k: v for k, v in params.items() if k != "context"}
                defs = await self._ask(session, "textDocument/definition", base)
                decls = set(
                    iter_locations(defs, session.rel_of, session.index_of, session.encoding)
                )
                found = [loc for loc in found if loc not in decls]
            return found

        return self._call(run)

    def definition(self, path: str, byte_offset: int) -> list[LspLocation]:
        """Where the symbol at ``byte_offset`` of ``path`` is defined (inside the workspace)."""

        async def run() -> list[LspLocation]:
            session, _, params = await self._position(path, byte_offset)
            result = await self._ask(session, "textDocument/definition", params)
            return iter_locations(result, session.rel_of, session.index_of, session.encoding)

        return self._call(run)

    def rename(self, path: str, byte_offset: int, new_name: str) -> list[LspEdit]:
        """The server's rename of the symbol at ``byte_offset`` as byte-range edits (of the
        bytes in ``rename_plan(...).sources``, which the disk held when it was computed)."""
        return self.rename_plan(path, byte_offset, new_name).edits

    def rename_plan(
        self, path: str, byte_offset: int, new_name: str, *, expect: bytes | None = None
    ) -> RenamePlan:
        """The server's rename of the symbol at ``byte_offset`` of ``path`` and the exact bytes
        every edited file had in the server when it computed it. Nothing is written.

        ``byte_offset`` is an offset into ``expect`` (default: ``path``'s bytes now); when the
        disk no longer holds ``expect`` the answer is ``StaleReference``. Before asking, the
        server's view is brought up to the disk by re-stating every file (the watcher lags);
        after the answer, every file it edits must have been sent to the server as an open
        document whose version did not move until the answer came, else those files are
        opened from the bytes on disk and the server is asked again (at most
        ``RENAME_ROUNDS`` times). Edits in denied files are dropped without a word (cloaked:
        docs/faces.md#access-policy-denied-files-are-cloaked). ``prepareRename`` first where the
        server has it (a refusal is ``InvalidQuery``); file operations in the answer are
        ``Unsupported``.
        """

        async def run() -> RenamePlan:
            rel, lang = self._covered(path, "renames")
            session = await self._session(lang)
            if not session.supports("renameProvider"):
                raise Unsupported(
                    f"language server {session.spec.name} cannot rename; configure another "
                    "server in [tool.sleuth.servers]",
                    details={"server": session.spec.name},
                )
            session.refresh()
            return await self._rename_rounds(session, rel, byte_offset, new_name, expect)

        return self._call(run)

    async def _rename_rounds(
        self, session: Session, rel: str, offset: int, new_name: str, expect: bytes | None
    ) -> RenamePlan:
        """Ask for the rename until every edited file's answer is against bytes we sent."""
        pending = [rel]
        prepared = False
        for _ in range(RENAME_ROUNDS):
            for name in pending:
                if session.sync_document(name) is None:
                    raise Unsupported(
                        f"the rename would edit {name}, which is binary, too large or "
                        "unreadable for sleuth; rename by hand",
                        details={"path": name},
                    )
            sent = session.documents()
            data = sent[rel][1]
            if expect is None:
                expect = data
            elif data != expect:
                raise _stale([rel])
            params = {
                "textDocument": {"uri": session.uri(rel)},
                "position": LineIndex(data).position_json(offset, session.encoding),
            }
            if not prepared:
                await self._prepare_rename(session, params)
                prepared = True
            result = await self._ask(
                session, "textDocument/rename", {**params, "newName": new_name}
            )
            if result is None:
                raise InvalidQuery(
                    f"language server {session.spec.name} found nothing to rename here; point "
                    "at the name of a symbol",
                    details={"server": session.spec.name},
                )
            result = session.uncloaked(result)
            files = {*session.edited_files(result), rel}
            now = session.documents()
            pending = sorted(f for f in files if f not in sent or now.get(f) != sent[f])
            if not pending:
                _check_versions(session.versions_named(result), sent)
                sources = {f: sent[f][1] for f in sorted(files)}
                for f, held in sources.items():
                    _check_utf8(f, held)
                indexes = {f: LineIndex(held) for f, held in sources.items()}
                edits = edits_of(result, session.rel_of, indexes.get, session.encoding)
                return RenamePlan(edits, sources)
        raise _stale(pending, churn=True)

    async def _prepare_rename(self, session: Session, params: dict[str, Any]) -> None:
        if not session.settled:  # let a server without a readiness signal settle first
            ref_params = {**params, "context": {"includeDeclaration": True}}
            await self._settled(session, "textDocument/references", ref_params)
        provider = session.capabilities.get("renameProvider")
        if isinstance(provider, dict) and provider.get("prepareProvider"):
            prepared = await self._ask(session, "textDocument/prepareRename", params)
            if prepared is None:
                raise InvalidQuery(
                    f"language server {session.spec.name} cannot rename at this position; "
                    "point at the name of a symbol declared in the workspace",
                    details={"server": session.spec.name},
                )


@dataclass(frozen=True)
class RenamePlan:
    """A rename as the server computed it: byte-range ``edits`` of ``sources``, the exact bytes
    of every edited file (and the renamed position's file) that the server held."""

    edits: list[LspEdit]
    sources: dict[str, bytes]


def _stale(files: list[str], churn: bool = False) -> StaleReference:
    why = "changed since the search"
    if churn:
        why = "kept changing while the language server computed the rename"
    return StaleReference(
        f"nothing was written: {', '.join(files)} {why}; re-run the search and rename "
        "through the fresh reference",
        details={"files": files},
    )


def _check_versions(named: dict[str, int], sent: dict[str, tuple[int, bytes]]) -> None:
    """``stale_reference`` when the server says it edits another version of a file than the
    one sleuth sent (LSP: the version the edits apply to): its offsets are of other bytes."""
    other = sorted(f for f, version in named.items() if f in sent and sent[f][0] != version)
    if other:
        raise StaleReference(
            f"nothing was written: the language server computed the rename against another "
            f"version of {', '.join(other)} than sleuth sent it; rename again",
            details={"files": other},
        )


def _check_utf8(rel: str, data: bytes) -> None:
    """The server got ``data`` decoded with replacements: offsets only agree for UTF-8."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise Unsupported(
            f"the rename would edit {rel}, which is not valid UTF-8; a language server's "
            "positions in it cannot be trusted — fix its encoding or rename by hand",
            details={"path": rel},
        ) from None


def _best_match(hit: SymbolDef, symbols: list[SymbolDef]) -> SymbolDef | None:
    """The document symbol a workspace-symbol hit stands for: same name, overlapping range."""
    best: SymbolDef | None = None
    for sym in symbols:
        if sym.name != hit.name:
            continue
        if sym.start_byte <= hit.name_start <= sym.end_byte or (
            hit.start_byte <= sym.name_start <= hit.end_byte
        ):
            size = sym.end_byte - sym.start_byte
            if best is None or size < best.end_byte - best.start_byte:
                best = sym
    return best
