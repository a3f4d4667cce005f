"""One running language server for one workspace: start-up, readiness, documents, requests.

A ``Session`` lives on the pool's event loop. It starts the server (``transport.Connection``),
negotiates the position encoding, answers the server's requests, waits until the server is
ready in the way that server signals it (docs/servers.md#readiness), and keeps the
server's view of the files equal to the disk:

* documents the server must see are opened (``didOpen``) and, when their bytes change, replaced
  (``didChange`` with the full text); the session remembers the exact bytes it sent each one
  (``documents``), so an answer about an open document can be read against those bytes rather
  than against whatever the disk holds by the time the answer arrives;
* other files that changed on disk are announced with ``workspace/didChangeWatchedFiles``.

Which files changed is judged from the watcher's generation and the cached listing, which lag a
change by the watcher's debounce; ``refresh`` re-stats every file instead, for a request (a
rename) whose answer must match the disk.

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
from urllib.parse import quote, unquote, urlparse

from sleuth.errors import ServerUnavailable
from sleuth.lsp_bridge.compile_db import prepare_compile_db
from sleuth.lsp_bridge.positions import LineIndex, PositionEncoding, normalize_encoding
from sleuth.lsp_bridge.servers import LANGUAGE_IDS, ServerSpec, find_binary, language_of
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


def path_uri(path: str) -> str:
    """``file://`` URI of absolute ``path``."""
    return "file://" + quote(path)


def _change_uris(change: dict[str, Any]) -> list[object]:
    """Every URI one ``documentChanges`` entry names (a text edit or a file operation)."""
    doc = change.get("textDocument")
    found = [doc.get("uri") if isinstance(doc, dict) else None]
    return found + [change.get(key) for key in ("uri", "oldUri", "newUri")]


class Session:
    """A started server with its documents; every method runs on the pool's event loop."""

    def __init__(self, spec: ServerSpec, ws: Workspace, timeout: float) -> None:
        self.spec = spec
        self.ws = ws
        self.timeout = timeout
        self.root = str(ws.root)
        self.encoding: PositionEncoding = "utf-16"
        self.capabilities: dict[str, Any] = {}
        self.conn: Connection | None = None
        self.settled = not spec.settle
        self._opened: dict[str, tuple[int, bytes]] = {}  # rel -> (version, bytes sent)
        self._version = 0  # one counter for every document: a version is never reused
        self._seen: dict[str, tuple[int, int]] = {}  # rel -> (size, mtime_ns) on disk
        self._generation: int | None = None
        self._progress: set[object] = set()
        self._progress_seen = False
        self._logs: list[str] = []
        self._changed = asyncio.Event()

    # -- paths -------------------------------------------------------------------------------

    def uri(self, rel: str) -> str:
        return path_uri(os.path.join(self.root, rel))

    def cloaked(self, uri: str) -> bool:
        """True when ``uri`` names a denied file inside the root, by its own path or by the
        file it resolves to: its edits are dropped without a word, never refused."""
        parsed = urlparse(uri)
        if parsed.scheme != "file":
            return False
        prefix = self.root.rstrip("/") + "/"
        path = os.path.normpath(unquote(parsed.path))
        for full in (path, os.path.realpath(path)):
            if full.startswith(prefix) and self.ws.is_denied(full[len(prefix) :]):
                return True
        return False

    def uncloaked(self, edit: Any) -> Any:
        """WorkspaceEdit ``edit`` without the parts that touch denied files."""
        if not isinstance(edit, dict):
            return edit
        out = dict(edit)
        changes = edit.get("documentChanges")
        if isinstance(changes, list):
            out["documentChanges"] = [
                c
                for c in changes
                if not isinstance(c, dict)
                or not any(isinstance(u, str) and self.cloaked(u) for u in _change_uris(c))
            ]
        if isinstance(edit.get("changes"), dict):
            out["changes"] = {
                uri: edits for uri, edits in edit["changes"].items() if not self.cloaked(str(uri))
            }
        return out

    def edited_files(self, edit: Any) -> set[str]:
        """Workspace paths whose text WorkspaceEdit ``edit`` changes (``documentChanges`` wins
        over ``changes``, as in ``results.edits_of``); URIs outside the workspace left out."""
        uris: list[str] = []
        changes = edit.get("documentChanges") if isinstance(edit, dict) else None
        if isinstance(changes, list):
            uris = [
                str((c.get("textDocument") or {}).get("uri", ""))
                for c in changes
                if isinstance(c, dict) and "kind" not in c
            ]
        elif isinstance(edit, dict) and isinstance(edit.get("changes"), dict):
            uris = [str(uri) for uri in edit["changes"]]
        return {rel for uri in uris if (rel := self.rel_of(uri)) is not None}

    def rel_of(self, uri: str) -> str | None:
        """Workspace-relative path of ``uri``; None outside the root, in ``.sleuth``, cloaked."""
        parsed = urlparse(uri)
        if parsed.scheme != "file":
            return None
        real = os.path.realpath(unquote(parsed.path))
        prefix = self.root.rstrip("/") + "/"
        if not real.startswith(prefix):
            return None
        rel = real[len(prefix) :]
        if rel.split("/")[0] == ".sleuth" or self.ws.is_denied(rel):
            return None
        return rel

    def index_of(self, rel: str) -> LineIndex | None:
        """Line index of ``rel``'s current bytes (None when unreadable, binary or too large)."""
        try:
            text = self.ws.read(rel)
        except Exception:
            return None
        return LineIndex(text.data) if text is not None else None

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

    # -- documents ---------------------------------------------------------------------------

    def _language_files(self, fresh: bool = False) -> dict[str, tuple[int, int]]:
        """(size, mtime_ns) of the server's files: as listed, or ``fresh`` from ``stat`` now
        (a listing reused until the watcher's event can hold an edit's old signature)."""
        langs = set(self.spec.languages)
        out: dict[str, tuple[int, int]] = {}
        for e in self.ws.list_files().files:
            if language_of(e.path) not in langs:
                continue
            if not fresh:
                out[e.path] = (e.size, e.mtime_ns)
                continue
            try:
                st = os.stat(os.path.join(self.root, e.path))
            except OSError:
                continue  # gone since the listing: announced as deleted
            out[e.path] = (st.st_size, st.st_mtime_ns)
        return out

    def refresh(self) -> None:
        """Bring the server's view up to the disk now: every file stat-ed again, open documents
        re-read, whatever the watcher's generation says."""
        self._snapshot(force=True)

    def _snapshot(self, initial: bool = False, force: bool = False) -> None:
        """Note which of the server's files changed on disk and tell the server about them."""
        generation = self.ws.generation
        if not (initial or force) and generation is not None and generation == self._generation:
            return
        now = self._language_files(fresh=force)
        self._generation = generation
        if initial:
            self._seen = now
            return
        events = []
        for rel in now.keys() | self._seen.keys():
            old, new = self._seen.get(rel), now.get(rel)
            if rel in self._opened:
                if force or old != new:  # an open document is compared by its bytes
                    self.sync_document(rel)
                continue
            if old == new:
                continue
            kind = 1 if old is None else 3 if new is None else 2
            events.append({"uri": self.uri(rel), "type": kind})
        self._seen = now
        if events and self.conn is not None:
            self.conn.notify("workspace/didChangeWatchedFiles", {"changes": events})

    def sync_document(self, rel: str) -> bytes | None:
        """Open ``rel`` in the server, or send its new text when the bytes changed; the bytes
        the server now holds for it (None when it cannot be read: then it is closed)."""
        conn = self.conn
        if conn is None:
            return None
        try:
            text = self.ws.read(rel)  # a fresh stat: denied paths raise, so never sent
        except Exception:
            text = None
        known = self._opened.get(rel)
        if text is None:
            if known is not None:
                conn.notify("textDocument/didClose", {"textDocument": {"uri": self.uri(rel)}})
                del self._opened[rel]
            return None
        data = text.data
        if known is not None and known[1] == data:
            return data
        body = data.decode("utf-8", errors="replace")
        uri = self.uri(rel)
        self._version += 1
        version = self._version
        if known is None:
            ext = os.path.splitext(rel)[1].lower()
            lang_id = LANGUAGE_IDS.get(ext) or language_of(rel) or "plaintext"
            item = {"uri": uri, "languageId": lang_id, "version": version, "text": body}
            conn.notify("textDocument/didOpen", {"textDocument": item})
        else:
            conn.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": version},
                    "contentChanges": [{"text": body}],
                },
            )
        self._opened[rel] = (version, data)
        return data

    def documents(self) -> dict[str, tuple[int, bytes]]:
        """Every open document: the version and exact bytes last sent (a copy).

        Notifications and requests reach the server in the order sent, so a request sent
        while a document's version was V is answered against that version's bytes."""
        return dict(self._opened)

    def prepare(self, rel: str | None = None) -> None:
        """Bring the server's view up to date before a request (about ``rel``)."""
        self._snapshot()
        if rel is not None:
            self.sync_document(rel)

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
