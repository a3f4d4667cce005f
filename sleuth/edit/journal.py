"""All-or-nothing multi-file writes with a journal in ``.sleuth/journal/`` (SPEC §9).

``commit(ws, changes)`` writes every file of one edit so that, whatever happens (an exception,
SIGKILL, power loss after fsync), each file ends entirely old or entirely new and all of them
agree. The protocol:

1. every file's current bytes are checked against the stamp the edit was computed from
   (``stale_reference`` lists every stale file; nothing is written);
2. the journal is written: for each file its old bytes, its new bytes and the name of the
   temporary file it will use, then ``manifest.json`` (state ``prepared``), all fsynced — until
   the manifest exists, nothing in the workspace has been touched;
3. each file: a temporary file in the same folder gets the new bytes and the old mode, is
   fsynced and renamed over the original (atomic per file);
4. the manifest is rewritten with state ``committed``, then the journal is removed.

``recover(ws)`` runs at the next start: a ``prepared`` journal is rolled back (every file that
holds the new bytes gets its old bytes back, leftover temporary files are removed), a
``committed`` one is simply removed. Both are idempotent, so a crash during recovery is fine.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import stat
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from sleuth.errors import Conflict, StaleReference
from sleuth.workspace import Workspace, stamp_bytes

__all__ = ["FileChange", "commit", "recover", "JOURNAL_DIR", "crash_point"]

JOURNAL_DIR = "journal"
_TEMP_PREFIX = ".sleuth-tmp-"


@dataclass(frozen=True)
class FileChange:
    """One file of an edit: the stamp it was computed from, its old and new bytes."""

    path: str
    stamp: str
    old: bytes
    new: bytes


def crash_point(name: str) -> None:
    """A hook for the crash-safety tests: ``SLEUTH_CRASH_AT=name`` kills the process here."""
    if os.environ.get("SLEUTH_CRASH_AT") == name:
        os.kill(os.getpid(), 9)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_file(path: Path, data: bytes, mode: int | None = None) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        if mode is not None:
            os.fchmod(fd, mode)
        os.fsync(fd)
    finally:
        os.close(fd)


def _replace(target: Path, temp_name: str, data: bytes, mode: int) -> None:
    temp = target.parent / temp_name
    _write_file(temp, data, mode)
    os.replace(temp, target)


def _journal_root(ws: Workspace) -> Path:
    return ws.state_dir / JOURNAL_DIR


def _write_manifest(folder: Path, manifest: dict[str, object]) -> None:
    temp = folder / "manifest.json.tmp"
    _write_file(temp, json.dumps(manifest).encode())
    os.replace(temp, folder / "manifest.json")
    _fsync_dir(folder)


@contextlib.contextmanager
def _edit_lock(ws: Workspace, *, wait: bool = True) -> Iterator[bool]:
    """One writer per workspace across processes: held from the stamp check to the journal's
    removal. ``recover`` only tries it: while it is held the journal belongs to a live writer,
    never to a crash. The kernel drops the lock of a killed process, so a crashed edit never
    blocks recovery. (flock locks are per open file, so this also holds between threads.)"""
    root = ws.state_dir / JOURNAL_DIR
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root.parent / "edit.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False  # another writer is live: its journal is not a crash's leftover
            return
        yield True
    finally:
        os.close(fd)


def _real(ws: Workspace, path: str) -> Path:
    """Where ``path``'s bytes live: a symlink inside the workspace is written through, not
    replaced (the walker lists only links whose target stays inside the root)."""
    full = ws.root / path
    return Path(os.path.realpath(full)) if full.is_symlink() else full


def commit(ws: Workspace, changes: Sequence[FileChange]) -> None:
    """Write ``changes`` all or nothing; ``stale_reference`` if any file moved on."""
    with _edit_lock(ws):
        _recover_locked(ws)
        try:
            _commit_locked(ws, changes)
        finally:
            ws.note_changed()


def _commit_locked(ws: Workspace, changes: Sequence[FileChange]) -> None:
    stale = []
    modes: dict[str, int] = {}
    for change in changes:
        target = _real(ws, change.path)
        try:
            current = target.read_bytes()
            modes[change.path] = stat.S_IMODE(os.stat(target).st_mode)
        except OSError:
            stale.append(change.path)
            continue
        if stamp_bytes(current) != change.stamp or current != change.old:
            stale.append(change.path)
    if stale:
        raise StaleReference(
            f"nothing was written: {', '.join(stale)} changed since the search; re-run the "
            "search and edit through the fresh references",
            details={"files": stale},
        )
    txid = uuid.uuid4().hex[:12]
    folder = _journal_root(ws) / txid
    folder.mkdir(parents=True)
    entries = []
    for i, change in enumerate(changes):
        _write_file(folder / f"{i}.old", change.old)
        _write_file(folder / f"{i}.new", change.new)
        entries.append(
            {
                "path": change.path,
                "old": f"{i}.old",
                "new": f"{i}.new",
                "mode": modes[change.path],
                "temp": f"{_TEMP_PREFIX}{txid}-{i}",
                "real": str(_real(ws, change.path).relative_to(ws.root)),
                "new_stamp": stamp_bytes(change.new),
            }
        )
    _fsync_dir(folder)
    crash_point("before-manifest")
    _write_manifest(folder, {"state": "prepared", "files": entries})
    crash_point("after-manifest")
    for i, (change, entry) in enumerate(zip(changes, entries, strict=True)):
        _replace(ws.root / str(entry["real"]), str(entry["temp"]), change.new, modes[change.path])
        crash_point(f"after-file-{i}")
    for parent in {(ws.root / str(e["real"])).parent for e in entries}:
        _fsync_dir(parent)
    _write_manifest(folder, {"state": "committed", "files": entries})
    crash_point("after-commit")
    shutil.rmtree(folder, ignore_errors=True)


def recover(ws: Workspace) -> list[str]:
    """Finish what a crashed edit left behind; returns the files rolled back."""
    if not (ws.root / ".sleuth" / JOURNAL_DIR).is_dir():
        return []
    with _edit_lock(ws, wait=False) as locked:
        return _recover_locked(ws) if locked else []


def _recover_locked(ws: Workspace) -> list[str]:
    root = ws.root / ".sleuth" / JOURNAL_DIR
    if not root.is_dir():
        return []
    restored: list[str] = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        manifest_path = folder / "manifest.json"
        if not manifest_path.exists():
            shutil.rmtree(folder, ignore_errors=True)  # crashed before touching the workspace
            continue
        manifest = json.loads(manifest_path.read_text())
        if manifest["state"] == "prepared":
            restored += _roll_back(ws, folder, manifest["files"])
        shutil.rmtree(folder, ignore_errors=True)
    return restored


def _roll_back(ws: Workspace, folder: Path, entries: list[dict[str, object]]) -> list[str]:
    restored = []
    for entry in entries:
        target = ws.root / str(entry.get("real", entry["path"]))
        with contextlib.suppress(FileNotFoundError):
            os.unlink(target.parent / str(entry["temp"]))
        old = (folder / str(entry["old"])).read_bytes()
        try:
            current = target.read_bytes()
        except FileNotFoundError:
            current = None
        if current == old:
            continue
        if current is not None and stamp_bytes(current) != entry["new_stamp"]:
            raise Conflict(
                f"an interrupted edit left {entry['path']} in a state it did not write; "
                f"its old content is kept in {folder}",
                details={"path": entry["path"], "journal": str(folder)},
            )
        _replace(target, str(entry["temp"]), old, int(str(entry["mode"])))
        restored.append(str(entry["path"]))
    return restored
