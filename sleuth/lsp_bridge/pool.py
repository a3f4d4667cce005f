"""``ServerPool``: the bridge's synchronous face — lazily started servers, one per language.

One pool per workbench. Servers start on first use and are reused by every later query (the
long-running faces keep them warm); ``close()`` — also run at interpreter exit — shuts each one
down and kills its process group. The pool owns an asyncio loop on a daemon thread; every
public method submits a coroutine there and waits, so callers stay synchronous and no call can
outlive its bound: each request has the pool's ``timeout`` (``Timeout`` past it), and a whole
call has a hard ceiling on top.

Crashes: a server that exits mid-request fails that call with ``ServerUnavailable`` and is
restarted by the next call; after two crashes in a row (a hung server killed after a timeout
counts) the language is given up until ``close()`` — ``ServerUnavailable`` says so.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
import weakref
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from sleuth.errors import (
    InvalidQuery,
    ServerUnavailable,
    SleuthError,
    StaleReference,
    Timeout,
    Unsupported,
)
from sleuth.lsp_bridge.positions import LineIndex
from sleuth.lsp_bridge.results import (
    LspEdit,
    LspLocation,
    edits_of,
    flatten_symbols,
    iter_locations,
)
from sleuth.lsp_bridge.servers import (
    SERVERS,
    ServerSpec,
    ServerVersions,
    configured,
    language_of,
    resolve_spec,
    server_status,
    usable,
)
from sleuth.lsp_bridge.session import Session
from sleuth.lsp_bridge.transport import ServerError
from sleuth.model import SymbolDef
from sleuth.workspace import Workspace

__all__ = ["ServerPool", "RenamePlan", "RENAME_ROUNDS"]

T = TypeVar("T")
MAX_CRASHES = 2
ENRICH_FILES = 64
"""At most this many files get a ``documentSymbol`` call to widen workspace symbols."""
MAX_OUTLINES = 4096
"""Most cached ``documentSymbol`` answers (the cache is dropped whole past it)."""
RENAME_ROUNDS = 4
"""Most ``textDocument/rename`` requests for one rename (files opened between them)."""
_RETRY_CODES = {-32800, -32801}  # RequestCancelled, ContentModified: the server re-indexed


def _shutdown(loop: asyncio.AbstractEventLoop, sessions: dict[str, Session]) -> None:
    """Stop every server and the loop (also run by the finalizer at interpreter exit)."""
    if loop.is_closed():
        return
    if loop.is_running():

        async def stop_all() -> None:
            await asyncio.gather(*(s.close() for s in sessions.values()), return_exceptions=True)

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(stop_all(), loop).result(15)
        loop.call_soon_threadsafe(loop.stop)
    sessions.clear()


def _retrieved(future: concurrent.futures.Future[Any]) -> None:
    """Take a background start's outcome, so a failure is not logged as never retrieved."""
    if not future.cancelled():
        future.exception()


def _given_up(spec: ServerSpec) -> ServerUnavailable:
    return ServerUnavailable(
        f"language server {spec.name} crashed twice and is not restarted again; "
        "check it with `sleuth doctor`, then restart sleuth",
        details={"server": spec.name, "reason": "crashed"},
    )


class ServerPool:
    """Language servers of one workspace, started lazily, reused, restarted, shut down."""

    def __init__(
        self, ws: Workspace, *, timeout: float = 20.0, versions: ServerVersions | None = None
    ) -> None:
        """``versions``: what probed servers answered to ``--version``, kept by the session
        (``service.session.Session.server_versions``) so each is asked once; a memo of the
        pool's own when not given."""
        self.ws = ws
        self.timeout = timeout
        self._versions: ServerVersions = versions if versions is not None else {}
        self._sessions: dict[str, Session] = {}
        self._crashes: dict[str, int] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._outlines: dict[tuple[str, str], tuple[str, Session, list[SymbolDef]]] = {}
        """``documentSymbol`` answers by (server, file), with the file's stamp and session."""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="sleuth-lsp", daemon=True
        )
        self._thread.start()
        self._finalizer = weakref.finalize(self, _shutdown, self._loop, self._sessions)

    # -- plumbing ----------------------------------------------------------------------------

    def _call(self, factory: Callable[[], Awaitable[T]]) -> T:
        if not self._finalizer.alive:
            raise ServerUnavailable("the server pool is closed; create a new ServerPool")

        async def run() -> T:
            return await factory()

        future = asyncio.run_coroutine_threadsafe(run(), self._loop)
        ceiling = 4 * self.timeout + 10  # start + readiness + request + grace, with room
        try:
            return future.result(ceiling)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise Timeout(
                f"the language server did not finish within {ceiling:g} s; retry, or raise the "
                "timeout",
                details={"ceiling": ceiling},
            ) from None

    def close(self) -> None:
        """Shut every server down and kill its process group; the pool is unusable after."""
        self._finalizer()
        self._thread.join(5)
        with contextlib.suppress(Exception):
            if not self._loop.is_running():
                self._loop.close()

    def __enter__(self) -> ServerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- servers -----------------------------------------------------------------------------

    def language_of(self, path: str) -> str | None:
        """The language of ``path`` by extension, or None when no server covers it."""
        return language_of(path)

    def spec(self, lang: str) -> ServerSpec:
        """The server record used for ``lang`` (configured, else the first installed)."""
        if lang not in SERVERS:
            raise Unsupported(
                f"no language server for {lang!r}; symbol queries cover "
                f"{', '.join(sorted(SERVERS))}",
                details={"language": lang},
            )
        return resolve_spec(lang, self.ws.config, self._versions)

    def server_name(self, lang: str) -> str:
        return self.spec(lang).name

    def available(self, lang: str) -> bool:
        """True when ``lang``'s server binary is installed and not given up after crashes
        (``serving`` without its errors)."""
        try:
            return self.serving(lang)
        except ServerUnavailable:
            return False

    def serving(self, lang: str) -> bool:
        """Whether ``lang``'s queries go to a server: True when its server runs or can start.

        False when the language has no server, or none of its default candidates is installed:
        the caller answers syntactically. ``ServerUnavailable`` (with the install command) when
        the workspace configured a server that is not installed, or when the server crashed
        twice and is given up: a fault the user must see, never a silent downgrade.
        """
        try:
            spec = self.spec(lang)
        except SleuthError:
            return False
        if self._crashes.get(self._key(spec), 0) >= MAX_CRASHES:
            raise _given_up(spec)
        if usable(spec, self._versions):
            return True
        if configured(lang, self.ws.config):
            raise ServerUnavailable(
                f"language server {spec.name}, configured for {lang} in [tool.sleuth.servers], "
                f"is not installed; install it with: {spec.install}",
                details={
                    "server": spec.name,
                    "language": lang,
                    "install": spec.install,
                    "reason": "missing",
                },
            )
        return False

    def warm(self, paths: Iterable[str]) -> None:
        """Start the servers of the languages ``paths`` hold, in the background: a long-running
        face calls it at start, so a first ``symbols:`` a few seconds later finds its server
        ready. A server that fails to start is reported by the query that needs it."""
        langs = sorted({lang for path in paths if (lang := self.language_of(path))})

        def start() -> None:
            for lang in langs:
                if not self._finalizer.alive:
                    return
                if self.available(lang):
                    started = asyncio.run_coroutine_threadsafe(self._session(lang), self._loop)
                    started.add_done_callback(_retrieved)

        threading.Thread(target=start, name="sleuth-lsp-warm", daemon=True).start()

    def running(self) -> list[str]:
        """The names of the servers running now."""
        return sorted(session.spec.name for session in list(self._sessions.values()))

    def status(self) -> list[dict[str, Any]]:
        """For ``sleuth doctor``: language, server, command, found, version, install."""
        return server_status(self.ws.config, self._versions)

    @staticmethod
    def _key(spec: ServerSpec) -> str:
        return "\0".join(spec.command)

    async def _session(self, lang: str) -> Session:
        spec = self.spec(lang)
        key = self._key(spec)
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            if self._crashes.get(key, 0) >= MAX_CRASHES:
                raise _given_up(spec)
            session = self._sessions.get(key)
            if session is not None and session.alive:
                return session
            if session is not None:
                self._sessions.pop(key, None)
                await session.close()
            session = Session(spec, self.ws, self.timeout)
            self.ws.report(f"starting the {spec.name} language server")
            try:
                await session.start()
            except ServerUnavailable as exc:
                if exc.details.get("reason") == "exited":
                    self._crashes[key] = self._crashes.get(key, 0) + 1
                raise
            finally:
                self.ws.report("")
            self._sessions[key] = session
            return session

    async def _ask(self, session: Session, method: str, params: Any) -> Any:
        """One request with crash accounting and retries of cancelled (re-indexing) answers."""
        key = self._key(session.spec)
        for attempt in range(3):
            try:
                result = await session.request(method, params)
            except ServerUnavailable:
                self._crashes[key] = self._crashes.get(key, 0) + 1
                raise
            except Timeout as exc:
                if exc.details.get("killed"):
                    self._crashes[key] = self._crashes.get(key, 0) + 1
                raise
            except ServerError as exc:
                if exc.code in _RETRY_CODES and attempt < 2:
                    await asyncio.sleep(0.2)
                    continue
                raise self._translate(session, exc) from exc
            self._crashes[key] = 0
            return result
        raise AssertionError("unreachable")

    @staticmethod
    def _translate(session: Session, exc: ServerError) -> SleuthError:
        name = session.spec.name
        if exc.code == -32601:
            return Unsupported(
                f"language server {name} does not support {exc.method}; configure another "
                "server in [tool.sleuth.servers]",
                details={"server": name, "method": exc.method},
            )
        return InvalidQuery(
            f"language server {name} refused {exc.method}: {exc.message}; point at a symbol's "
            "name and try again",
            details={"server": name, "method": exc.method, "code": exc.code},
        )

    async def _settled(self, session: Session, method: str, params: Any) -> Any:
        """The first answers of a ``settle`` server repeat until two agree (max 6 tries)."""
        result = await self._ask(session, method, params)
        if session.settled:
            return result
        for _ in range(5):
            await asyncio.sleep(0.3)
            again = await self._ask(session, method, params)
            if again == result:
                break
            result = again
        session.settled = True
        return result

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
