"""``DocumentSync``: what one language server was told about the workspace's files.

``Session`` (``session.py``) is a ``DocumentSync`` with a running server; this part keeps the
server's view of the files equal to the disk and maps URIs to workspace paths:

* documents the server must see are opened (``didOpen``) and, when their bytes change, replaced
  (``didChange`` with the full text); the session remembers the exact bytes it sent each one
  (``documents``), so an answer about an open document can be read against those bytes rather
  than against whatever the disk holds by the time the answer arrives;
* other files that changed on disk are announced with ``workspace/didChangeWatchedFiles``;
* URIs of denied files are cloaked: edits to them are dropped, paths to them never returned.

Which files changed is judged from the watcher's generation and the cached listing, which lag a
change by the watcher's debounce; ``refresh`` re-stats every file instead, for a request (a
rename) whose answer must match the disk.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import quote, unquote, urlparse

from sleuth.lsp_bridge.positions import LineIndex
from sleuth.lsp_bridge.servers import LANGUAGE_IDS, ServerSpec, language_of
from sleuth.lsp_bridge.transport import Connection
from sleuth.workspace import Workspace
from sleuth.workspace.path_checks import is_internal

__all__ = ["DocumentSync", "path_uri"]


def path_uri(path: str) -> str:
    """``file://`` URI of absolute ``path``."""
    return "file://" + quote(path)


def _change_uris(change: dict[str, Any]) -> list[object]:
    """Every URI one ``documentChanges`` entry names (a text edit or a file operation)."""
    doc = change.get("textDocument")
    found = [doc.get("uri") if isinstance(doc, dict) else None]
    return found + [change.get(key) for key in ("uri", "oldUri", "newUri")]


class DocumentSync:
    """A server's view of the workspace's files; every method runs on the pool's event loop."""

    def __init__(self, spec: ServerSpec, ws: Workspace) -> None:
        self.spec = spec
        self.ws = ws
        self.root = str(ws.root)
        self.conn: Connection | None = None
        self._opened: dict[str, tuple[int, bytes]] = {}  # rel -> (version, bytes sent)
        self._version = 0  # one counter for every document: a version is never reused
        self._seen: dict[str, tuple[int, int]] = {}  # rel -> (size, mtime_ns) on disk
        self._generation: int | None = None

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
                str(c["textDocument"].get("uri", ""))
                for c in changes
                if isinstance(c, dict)
                and "kind" not in c
                and isinstance(c.get("textDocument"), dict)
            ]
        elif isinstance(edit, dict) and isinstance(edit.get("changes"), dict):
            uris = [str(uri) for uri in edit["changes"]]
        return {rel for uri in uris if (rel := self.rel_of(uri)) is not None}

    def versions_named(self, edit: Any) -> dict[str, int]:
        """Workspace path -> the document version a ``documentChanges`` entry says its edits
        apply to (entries with a null version, for files not open, left out)."""
        changes = edit.get("documentChanges") if isinstance(edit, dict) else None
        out: dict[str, int] = {}
        for c in changes if isinstance(changes, list) else []:
            doc = c.get("textDocument") if isinstance(c, dict) else None
            version = doc.get("version") if isinstance(doc, dict) else None
            if not isinstance(doc, dict) or type(version) is not int:
                continue
            rel = self.rel_of(str(doc.get("uri", "")))
            if rel is not None:
                out[rel] = version
        return out

    def rel_of(self, uri: str) -> str | None:
        """Workspace-relative path of ``uri``; None outside the root, in ``.sleuth`` or a
        ``.git`` folder (never written, docs/SAFETY.md#cloaking-and-the-root), cloaked."""
        parsed = urlparse(uri)
        if parsed.scheme != "file":
            return None
        real = os.path.realpath(unquote(parsed.path))
        prefix = self.root.rstrip("/") + "/"
        if not real.startswith(prefix):
            return None
        rel = real[len(prefix) :]
        if is_internal(rel) or self.ws.is_denied(rel):
            return None
        return rel

    def index_of(self, rel: str) -> LineIndex | None:
        """Line index of ``rel``'s current bytes (None when unreadable, binary or too large)."""
        try:
            text = self.ws.read(rel)
        except Exception:
            return None
        return LineIndex(text.data) if text is not None else None

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
