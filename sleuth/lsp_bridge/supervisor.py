"""``Supervisor``: the language servers of one workspace and the loop they run on.

Servers start on first use and are reused by every later query (the long-running faces keep
them warm); ``close()`` — also run at interpreter exit — shuts each one down and kills its
process group. The supervisor owns an asyncio loop on a daemon thread; ``ServerPool``
(``pool.py``) builds its queries on it, each submitting a coroutine there and waiting, so
callers stay synchronous and no call can outlive its bound: each request has the pool's
``timeout`` (``Timeout`` past it), and a whole call has a hard ceiling on top.

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
from typing import Any, TypeVar

from sleuth.errors import InvalidQuery, ServerUnavailable, SleuthError, Timeout, Unsupported
from sleuth.lsp_bridge.server_config import where_configured
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
from sleuth.workspace import Workspace

__all__ = ["Supervisor", "MAX_CRASHES"]

T = TypeVar("T")
MAX_CRASHES = 2
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


class Supervisor:
    """The servers of one workspace and their loop: each started lazily, reused, restarted
    after a crash, given up after two, shut down; every request goes through ``_ask``."""

    def __init__(
        self, ws: Workspace, *, timeout: float = 20.0, versions: ServerVersions | None = None
    ) -> None:
        self.ws = ws
        self.timeout = timeout
        self._versions: ServerVersions = versions if versions is not None else {}
        self._sessions: dict[str, Session] = {}
        self._crashes: dict[str, int] = {}
        self._locks: dict[str, asyncio.Lock] = {}
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
        except SleuthError:  # not installed, given up, or a configuration refused
            return False

    def serving(self, lang: str) -> bool:
        """Whether ``lang``'s queries go to a server: True when its server runs or can start.

        False when the language has no server, or none of its default candidates is installed:
        the caller answers syntactically. ``ServerUnavailable`` (with the install command) when
        the workspace configured a server that is not installed, or when the server crashed
        twice and is given up; the configuration's own error when it is refused
        (docs/SAFETY.md#what-runs): a fault the user must see, never a silent downgrade.
        """
        try:
            spec = self.spec(lang)
        except SleuthError:
            if lang in SERVERS and configured(lang, self.ws.config):
                raise  # the configuration itself is refused: say so, never downgrade
            return False
        if self._crashes.get(self._key(spec), 0) >= MAX_CRASHES:
            raise _given_up(spec)
        if usable(spec, self._versions):
            return True
        if configured(lang, self.ws.config):
            raise ServerUnavailable(
                f"language server {spec.name}, configured for {lang} in {where_configured(lang)}, "
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
