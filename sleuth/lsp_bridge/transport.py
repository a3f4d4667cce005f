"""One language-server process and its JSON-RPC channel (pygls's client, raw JSON).

Built on ``pygls.client.JsonRPCClient`` with a converter that leaves every message body as
plain JSON: lsprotocol's typed results cannot be parsed by every cattrs release (a parse
failure inside pygls leaves the request hanging forever — docs/servers.md#the-transport), and
results are normalised by ``results.py`` anyway.

What pygls does not do and this module adds (measured pitfalls, docs/servers.md#the-transport):

* the server's stderr is drained in a task (a chatty server blocks otherwise, and a crash goes
  unnoticed); its tail is kept for error messages;
* every request has a timeout; after it ``$/cancelRequest`` is sent and the server gets a short
  grace to answer anything — one that stays silent is hung and its process group is killed;
* the server runs in its own session (``start_new_session=True``) and is always stopped with
  ``killpg``, so wrapper launchers (npm shims, Python launchers of node servers) leave no orphans;
* server-to-client requests are answered by a callback, never with pygls's MethodNotFound
  error (which crashes pyright and tsls and hangs ty).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import logging
import os
import signal
from collections.abc import Callable, Sequence
from typing import Any

import attrs
from lsprotocol import converters
from pygls.client import JsonRPCClient
from pygls.exceptions import JsonRpcException
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCProtocol,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
)

from sleuth.errors import ServerUnavailable, Timeout

__all__ = ["Connection", "ServerError", "SERVER_REQUESTS", "SERVER_NOTIFICATIONS"]

# pygls logs every unknown notification and late reply; nothing of that is ours to print.
logging.getLogger("pygls").addHandler(logging.NullHandler())
logging.getLogger("pygls").propagate = False

SERVER_REQUESTS = (
    "workspace/configuration",
    "workspace/workspaceFolders",
    "client/registerCapability",
    "client/unregisterCapability",
    "window/workDoneProgress/create",
    "window/showMessageRequest",
    "window/showDocument",
    "workspace/applyEdit",
    "workspace/semanticTokens/refresh",
    "workspace/inlayHint/refresh",
    "workspace/inlineValue/refresh",
    "workspace/codeLens/refresh",
    "workspace/diagnostic/refresh",
    "workspace/foldingRange/refresh",
)
"""Server-to-client requests answered through ``on_request``."""

SERVER_NOTIFICATIONS = (
    "$/progress",
    "window/logMessage",
    "window/showMessage",
    "textDocument/publishDiagnostics",
    "telemetry/event",
    "$/logTrace",
    "experimental/serverStatus",
)

STDERR_TAIL = 40


class ServerError(Exception):
    """An error response from the server (``code`` and ``message`` as sent)."""

    def __init__(self, method: str, code: int, message: str) -> None:
        super().__init__(f"{method}: {message} (code {code})")
        self.method = method
        self.code = code
        self.message = message


def _pass_through(obj: dict[str, Any], cls: type[Any]) -> Any:
    return cls(**{f.name: obj.get(f.name) for f in attrs.fields(cls)})


def _raw_converter() -> Any:
    """lsprotocol's converter, with message bodies left as plain JSON."""
    conv = converters.get_converter()
    for cls in (JsonRPCRequestMessage, JsonRPCResponseMessage, JsonRPCNotification):
        conv.register_structure_hook(cls, _pass_through)
    return conv


class Connection:
    """A server subprocess speaking LSP over stdio, with timeouts and a clean kill."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        env: dict[str, str] | None = None,
        on_request: Callable[[str, Any], Any] | None = None,
        on_notification: Callable[[str, Any], None] | None = None,
        name: str = "",
    ) -> None:
        self.argv = list(argv)
        self.cwd = cwd
        self.env = env
        self.name = name or os.path.basename(self.argv[0])
        self._on_request = on_request or (lambda method, params: None)
        self._on_notification = on_notification or (lambda method, params: None)
        self._client = JsonRPCClient(JsonRPCProtocol, _raw_converter)
        self._ids = itertools.count(1)
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL)
        self._drain: asyncio.Task[None] | None = None
        self._watch: asyncio.Task[None] | None = None
        self._proc: asyncio.subprocess.Process | None = None
        for method in SERVER_REQUESTS:
            self._client.feature(method)(self._request_handler(method))
        for method in SERVER_NOTIFICATIONS:
            self._client.feature(method)(self._notification_handler(method))

    def _request_handler(self, method: str) -> Callable[[Any], Any]:
        def handle(params: Any) -> Any:
            return self._on_request(method, params)

        return handle

    def _notification_handler(self, method: str) -> Callable[[Any], None]:
        def handle(params: Any) -> None:
            self._on_notification(method, params)

        return handle

    # -- lifecycle ---------------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def alive(self) -> bool:
        proc = self._proc
        return proc is not None and proc.returncode is None and not self._client.stopped

    def stderr_tail(self, lines: int = 8) -> str:
        """The last lines the server wrote to stderr, for error messages."""
        return "\n".join(list(self._stderr)[-lines:])

    async def start(self) -> None:
        """Spawn the server in its own process group; ``OSError`` when it cannot run."""
        await self._client.start_io(
            self.argv[0], *self.argv[1:], cwd=self.cwd, env=self.env, start_new_session=True
        )
        self._proc = self._client._server
        self._drain = asyncio.create_task(self._drain_stderr())
        self._watch = asyncio.create_task(self._watch_exit())

    async def _watch_exit(self) -> None:
        """When the server's own process exits, kill its group so orphans free the pipes.

        Python sets ``returncode`` at exit, but pygls only notices once stdout closes — which a
        surviving child (a wrapper's node, a helper) may hold open forever
        (docs/servers.md#the-transport).
        """
        proc = self._proc
        while proc is not None and proc.returncode is None:
            await asyncio.sleep(0.1)
        self._killpg()

    async def _drain_stderr(self) -> None:
        proc = self._proc
        if proc is None or proc.stderr is None:
            return
        with contextlib.suppress(Exception):
            while True:
                line = await proc.stderr.readline()
                if not line:
                    return
                self._stderr.append(line.decode("utf-8", errors="replace").rstrip())

    def _gone(self, what: str) -> ServerUnavailable:
        code = self._proc.returncode if self._proc is not None else None
        tail = self.stderr_tail()
        return ServerUnavailable(
            f"language server {self.name} exited (code {code}) during {what}; the next query "
            "restarts it" + (f". Its last output:\n{tail}" if tail else ""),
            details={"server": self.name, "returncode": code, "reason": "exited"},
        )

    # -- messages ----------------------------------------------------------------------------

    def notify(self, method: str, params: Any = None) -> None:
        """Send a notification (dropped silently when the server is gone)."""
        if self.alive:
            with contextlib.suppress(Exception):
                self._client.protocol.notify(method, params)

    async def request(self, method: str, params: Any, timeout: float) -> Any:
        """Send a request and return its raw JSON result.

        ``ServerError`` for an error reply, ``ServerUnavailable`` when the process exits first,
        ``Timeout`` past ``timeout`` seconds (the request is cancelled; a server that does not
        answer within the grace after that is hung and is killed).
        """
        if not self.alive:
            raise self._gone(method)
        msg_id = next(self._ids)
        protocol = self._client.protocol
        try:
            future = asyncio.wrap_future(protocol.send_request(method, params, msg_id=msg_id))
        except Exception as exc:  # a broken pipe while writing
            raise self._gone(method) from exc
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout)
        except TimeoutError:
            killed = await self._after_timeout(msg_id, future, min(2.0, max(0.2, timeout / 4)))
            raise Timeout(
                f"language server {self.name} did not answer {method} within {timeout:g} s"
                + (
                    "; it was hung and has been stopped, the next query restarts it"
                    if killed
                    else "; the request was cancelled — retry, or raise the timeout"
                ),
                details={"server": self.name, "method": method, "killed": killed},
            ) from None
        except JsonRpcException as exc:
            raise ServerError(method, exc.code, exc.message) from exc
        except RuntimeError as exc:  # pygls: "Server process N exited with return code"
            raise self._gone(method) from exc
        finally:
            protocol._request_futures.pop(msg_id, None)

    async def _after_timeout(self, msg_id: int, future: asyncio.Future[Any], grace: float) -> bool:
        """Cancel request ``msg_id``; kill the server when it stays silent. True if killed."""
        self.notify("$/cancelRequest", {"id": msg_id})
        try:
            await asyncio.wait_for(future, grace)
        except TimeoutError:
            await self.kill()
            return True
        except Exception:  # RequestCancelled and friends: the server is alive
            pass
        return not self.alive

    # -- stopping ----------------------------------------------------------------------------

    def _killpg(self) -> None:
        pid = self.pid
        if pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)

    async def kill(self) -> None:
        """Kill the server's whole process group and release the channel (never blocks)."""
        self._killpg()
        proc = self._proc
        if proc is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(proc.wait(), 5)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._client.stop(), 5)  # type: ignore[no-untyped-call]
        for task in (self._drain, self._watch):
            if task is not None:
                task.cancel()

    async def shutdown(self, grace: float = 2.0) -> None:
        """``shutdown`` + ``exit`` within ``grace``, then kill the process group regardless."""
        if self.alive:
            with contextlib.suppress(Exception):
                await self.request("shutdown", None, grace)
            self.notify("exit")
            proc = self._proc
            if proc is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(proc.wait(), grace / 4)
        await self.kill()
