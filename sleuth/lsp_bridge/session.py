"""One running language server for one workspace: start-up, readiness, server requests.

A ``Session`` lives on the pool's event loop. It starts the server (``transport.Connection``),
negotiates the position encoding, answers the server's requests, waits until the server is
ready in the way that server signals it (docs/servers.md#readiness), and, as a
``DocumentSync`` (``documents.py``), keeps the server's view of the files equal to the disk.

Readiness by server (measured, see ``servers.py``): ty, jedi and tsgo need no wait; clangd's
background index reports ``$/progress`` and is waited for; pyright logs "Found N source
files"; servers with no signal repeat their first answer until two agree (``settle``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import time
from typing import Any

from sleuth.errors import ServerUnavailable
from sleuth.lsp_bridge.compile_db import prepare_compile_db
from sleuth.lsp_bridge.documents import DocumentSync, path_uri
from sleuth.lsp_bridge.positions import PositionEncoding, normalize_encoding
from sleuth.lsp_bridge.servers import ServerSpec, find_binary
from sleuth.lsp_bridge.transport import Connection
from sleuth.workspace import Workspace

__all__ = ["Session", "CLIENT_CAPABILITIES"]

_KINDS = {"valueSet": list(range(1, 27))}
CLIENT_CAPABILITIES: dict[str, Any] = {
    "general": {"positionEncodings": ["utf-8", "utf-16"]},
    "workspace": {
        "workspaceFolders": True,
        "configuration": True,
        "symbol": {"symbolKind": _KINDS},
        "workspaceEdit": {"documentChanges": True},
        "didChangeWatchedFiles": {"dynamicRegistration": True},
    },
    "textDocument": {
        "synchronization": {"dynamicRegistration": False},
        "documentSymbol": {"hierarchicalDocumentSymbolSupport": True, "symbolKind": _KINDS},
        "definition": {"linkSupport": True},
        "references": {},
        "rename": {"prepareSupport": True},
    },
    "window": {"workDoneProgress": True},
}
MAX_OPEN = 2000
"""Most documents opened at start (clangd, tsgo without a tsconfig)."""
QUIET_START = 1.0
"""Seconds without any ``$/progress`` after which a ``wait_progress`` server counts as idle."""


class Session(DocumentSync):
    """A started server with its documents; every method runs on the pool's event loop."""

    def __init__(self, spec: ServerSpec, ws: Workspace, timeout: float) -> None:
        super().__init__(spec, ws)
        self.timeout = timeout
        self.encoding: PositionEncoding = "utf-16"
        self.capabilities: dict[str, Any] = {}
        self.settled = not spec.settle
        self._progress: set[object] = set()
        self._progress_seen = False
        self._logs: list[str] = []
        self._changed = asyncio.Event()

    # -- server-to-client traffic ------------------------------------------------------------

    def _on_request(self, method: str, params: Any) -> Any:
        if method == "workspace/configuration":
            items = params.get("items") if isinstance(params, dict) else None
            # One entry per item (docs/servers.md#server-to-client-requests): an error here
            # hangs ty and crashes pyright.
            return [
                self.spec.settings.get(str(item.get("section"))) if isinstance(item, dict) else None
                for item in (items or [])
            ]
        if method == "workspace/workspaceFolders":
            return [{"uri": path_uri(self.root), "name": os.path.basename(self.root)}]
        if method == "workspace/applyEdit":
            return {"applied": False, "failureReason": "sleuth applies edits itself"}
        if method == "window/showDocument":
            return {"success": False}
        return None

    def _on_notification(self, method: str, params: Any) -> None:
        if not isinstance(params, dict):
            return
        if method == "$/progress":
            value = params.get("value")
            kind = value.get("kind") if isinstance(value, dict) else None
            token = params.get("token")
            if kind == "begin":
                self._progress.add(token)
                self._progress_seen = True
            elif kind == "end":
                self._progress.discard(token)
            self._changed.set()
        elif method == "window/logMessage" and self.spec.ready_log:
            self._logs.append(str(params.get("message", "")))
            self._changed.set()

    # -- lifecycle ---------------------------------------------------------------------------

    def _argv(self) -> list[str]:
        binary = find_binary(self.spec.command[0])
        if binary is None:
            raise ServerUnavailable(
                f"language server {self.spec.name} is not installed; install it with: "
                f"{self.spec.install}",
                details={"server": self.spec.name, "install": self.spec.install},
            )
        argv = [binary, *self.spec.command[1:]]
        if self.spec.name == "clangd":
            folder = prepare_compile_db(self.ws)
            argv.append(f"--compile-commands-dir={folder}")
        return argv

    async def start(self) -> None:
        """Spawn, initialize and wait for readiness; ``ServerUnavailable`` when it fails."""
        argv = self._argv()
        conn = Connection(
            argv,
            cwd=self.root,
            env=self.spec.env(),
            on_request=self._on_request,
            on_notification=self._on_notification,
            name=self.spec.name,
        )
        try:
            await conn.start()
        except OSError as exc:
            raise ServerUnavailable(
                f"cannot start language server {self.spec.name} ({argv[0]}): {exc.strerror}; "
                f"reinstall it with: {self.spec.install}",
                details={"server": self.spec.name, "install": self.spec.install},
            ) from exc
        self.conn = conn
        try:
            result = await conn.request("initialize", self._init_params(), self.timeout)
        except BaseException:
            await conn.kill()
            raise
        caps = result.get("capabilities") if isinstance(result, dict) else None
        self.capabilities = caps if isinstance(caps, dict) else {}
        self.encoding = normalize_encoding(self.capabilities.get("positionEncoding"))
        conn.notify("initialized", {})
        self._snapshot(initial=True)
        for rel in self._initial_documents():
            self.sync_document(rel)
        await self._wait_ready()

    def _initial_documents(self) -> list[str]:
        """Documents opened at start (``ServerSpec.open_files``), at most ``MAX_OPEN``."""
        files = sorted(self._seen)
        mode = self.spec.open_files
        if mode == "project":
            root = self.ws.root
            mode = "all"
            if any((root / name).is_file() for name in self.spec.project_files):
                return files[:1]
        return files[:MAX_OPEN] if mode == "all" else []

    def _init_params(self) -> dict[str, Any]:
        return {
            "processId": os.getpid(),
            "clientInfo": {"name": "sleuth"},
            "rootUri": path_uri(self.root),
            "rootPath": self.root,
            "workspaceFolders": [{"uri": path_uri(self.root), "name": os.path.basename(self.root)}],
            "capabilities": {
                **CLIENT_CAPABILITIES,
                "general": {
                    "positionEncodings": list(
                        self.spec.encodings or self.ws.tuning.position_encodings
                    )
                },
            },
            "initializationOptions": self.spec.init_options,
        }

    async def _wait_ready(self) -> None:
        """Wait (at most ``timeout``) for the server's own readiness signal, if it has one."""
        spec = self.spec
        if not spec.wait_progress and not spec.ready_log:
            return
        deadline = time.monotonic() + self.timeout
        started = time.monotonic()
        pattern = re.compile(spec.ready_log) if spec.ready_log else None
        while (left := deadline - time.monotonic()) > 0:
            if pattern is not None and any(pattern.search(m) for m in self._logs):
                return
            if spec.wait_progress and not self._progress:
                quiet = time.monotonic() - started
                if self._progress_seen or quiet >= QUIET_START:
                    return
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), min(left, 0.25))
            if self.conn is None or not self.conn.alive:
                return

    async def close(self) -> None:
        """Shut the server down and kill its process group."""
        if self.conn is not None:
            await self.conn.shutdown()

    @property
    def alive(self) -> bool:
        return self.conn is not None and self.conn.alive

    # -- requests ----------------------------------------------------------------------------

    async def request(self, method: str, params: Any, timeout: float | None = None) -> Any:
        """A raw request on this session's connection (the session timeout by default)."""
        if self.conn is None:
            raise ServerUnavailable(
                f"language server {self.spec.name} is not running; retry the query",
                details={"server": self.spec.name},
            )
        return await self.conn.request(method, params, timeout or self.timeout)

    def supports(self, provider: str) -> bool:
        """True when the server announced capability ``provider`` (e.g. ``renameProvider``)."""
        value = self.capabilities.get(provider)
        return value is not None and value is not False
