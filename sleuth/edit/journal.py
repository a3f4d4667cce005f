"""All-or-nothing multi-file writes, verified at write time, journalled in ``.sleuth/journal/``.

``commit(ws, changes)`` writes every file of one edit so that, whatever happens (an exception,
SIGKILL, power loss after fsync), each file ends entirely old or entirely new and all of them
agree — and only ever over the bytes the edit was computed from (docs/SAFETY.md). Under the
workspace's edit lock:

1. every file is reached from the root with no symlink followed at any component
   (``workspace.rooted``), its bytes read and checked against the edit's stamp and old bytes
   (``verify_current``); one stale file and nothing is written (``stale_reference`` lists them);
2. the journal is written: per file its old bytes, its new bytes and the name of its temporary
   file, then ``manifest.json`` (state ``prepared``), all fsynced;
3. every temporary file is written in the verified folder (by its descriptor), then each file
   is verified once more and only then renamed over the original — the window in which an
   outside write can be lost is the rename itself;
4. the manifest is rewritten ``committed``, then the journal is removed.

``recover(ws)`` runs at the next start: a ``prepared`` journal is rolled back (a file that holds
the edit's new bytes gets its old bytes back, temporary files are removed). A file that cannot
be rolled back — the user changed it since, it is no longer a regular file, its folder became a
symlink — is left exactly as it is and reported; its journal moves to ``.sleuth/recovered/`` with
a ``report.json`` (``sleuth doctor`` shows them). Recovery never locks the workspace and never
opens a FIFO. It is idempotent, so a crash during recovery is fine.
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

from sleuth.errors import SleuthError, StaleReference
from sleuth.workspace import Workspace, stamp_bytes
from sleuth.workspace.path_checks import path_not_found
from sleuth.workspace.rooted import Located, locate, read_in, unlink_in, write_file, write_in
from sleuth.workspace.state_folder import state_subdir

__all__ = [
    "FileChange",
    "commit",
    "recover",
    "recovered",
    "verify_current",
    "JOURNAL_DIR",
    "RECOVERED_DIR",
    "crash_point",
]

JOURNAL_DIR = "journal"
RECOVERED_DIR = "recovered"
_TEMP_PREFIX = ".sleuth-tmp-"


@dataclass(frozen=True)
class FileChange:
    """One file of an edit: the stamp it was computed from, its old and new bytes."""

    path: str
    stamp: str
    old: bytes
    new: bytes


def verify_current(current: bytes, change: FileChange) -> bool:
    """True when ``current`` (read from disk under the lock) is what ``change`` was made from."""
    return current == change.old and stamp_bytes(current) == change.stamp


def crash_point(name: str) -> None:
    """A hook for the crash-safety tests: ``SLEUTH_CRASH_AT=name`` kills the process here."""
    if os.environ.get("SLEUTH_CRASH_AT") == name:
        os.kill(os.getpid(), 9)


def _fault(ws: Workspace, point: str, path: str) -> None:
    """The fault-injection seam of the safety harness (``Workspace.fault_hook``)."""
    hook = ws.fault_hook
    if hook is not None:
        hook(point, path)


def _fsync_fd(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.fsync(fd)


def _rename_into(loc: Located, temp_name: str) -> None:
    """Rename the temporary file ``temp_name`` over ``loc``, inside the verified folder."""
    os.rename(temp_name, loc.name, src_dir_fd=loc.dir_fd, dst_dir_fd=loc.dir_fd)


def _write_manifest(folder: Path, manifest: dict[str, object]) -> None:
    write_file(folder / "manifest.json.tmp", json.dumps(manifest).encode())
    os.replace(folder / "manifest.json.tmp", folder / "manifest.json")
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        _fsync_fd(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def _edit_lock(ws: Workspace, *, wait: bool = True) -> Iterator[bool]:
    """One writer per workspace across processes: held from the verification to the journal's
    removal. ``recover`` only tries it: while it is held the journal belongs to a live writer,
    never to a crash. The kernel drops the lock of a killed process, so a crashed edit never
    blocks recovery. (flock locks are per open file, so this also holds between threads.)"""
    state = ws.state_dir
    state_subdir(state, JOURNAL_DIR)
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(state / "edit.lock", flags, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False  # another writer is live: its journal is not a crash's leftover
            return
        yield True
    finally:
        os.close(fd)


def _stale(paths: list[str]) -> StaleReference:
    return StaleReference(
        f"nothing was written: {', '.join(paths)} changed since the search; re-run the "
        "search and edit through the fresh references",
        details={"files": paths},
    )


def commit(ws: Workspace, changes: Sequence[FileChange], verify: Sequence[FileChange] = ()) -> None:
    """Write ``changes`` all or nothing; ``stale_reference`` if any file moved on. The files of
    ``verify`` (a copy's sources) are only checked, under the same lock, never written."""
    _fault(ws, "planned", "")
    with _edit_lock(ws):
        _recover_locked(ws)
        try:
            _commit_locked(ws, changes, verify)
        finally:
            ws.note_changed()


def _verify(ws: Workspace, change: FileChange) -> tuple[Located, int] | None:
    """The file's location and mode when its bytes on disk are what the edit was made from."""
    if ws.is_denied(change.path):
        raise path_not_found(change.path)
    try:
        loc = locate(str(ws.root), change.path)
    except SleuthError:
        raise
    except OSError:
        return None  # a folder on its way is gone or no longer a folder: it moved on
    try:
        if loc.real != change.path and ws.is_denied(loc.real):
            raise path_not_found(change.path)
        try:
            current, st = read_in(loc.dir_fd, loc.name)
        except OSError:
            current, st = None, None
    except BaseException:
        loc.close()
        raise
    if current is None or st is None or not verify_current(current, change):
        loc.close()
        return None
    return loc, stat.S_IMODE(st.st_mode)


def _commit_locked(
    ws: Workspace, changes: Sequence[FileChange], verify: Sequence[FileChange] = ()
) -> None:
    located: list[tuple[Located, int]] = []
    stale: list[str] = []
    for source in verify:
        checked = _verify(ws, source)
        if checked is None:
            stale.append(source.path)
        else:
            checked[0].close()
    try:
        for change in changes:
            found = _verify(ws, change)
            if found is None:
                stale.append(change.path)
                continue
            located.append(found)
            _fault(ws, "verified", change.path)
        if stale:
            raise _stale(stale)
        _write_verified(ws, changes, located)
    finally:
        for loc, _ in located:
            loc.close()


def _write_verified(
    ws: Workspace, changes: Sequence[FileChange], located: list[tuple[Located, int]]
) -> None:
    txid = uuid.uuid4().hex[:12]
    folder = state_subdir(ws.state_dir, JOURNAL_DIR) / txid
    folder.mkdir()
    entries = []
    for i, (change, (loc, mode)) in enumerate(zip(changes, located, strict=True)):
        write_file(folder / f"{i}.old", change.old)
        write_file(folder / f"{i}.new", change.new)
        entries.append(
            {
                "path": change.path,
                "old": f"{i}.old",
                "new": f"{i}.new",
                "mode": mode,
                "temp": f"{_TEMP_PREFIX}{txid}-{i}",
                "real": loc.real,
                "new_stamp": stamp_bytes(change.new),
            }
        )
    crash_point("before-manifest")
    _write_manifest(folder, {"state": "prepared", "files": entries})
    crash_point("after-manifest")
    try:
        for change, (loc, mode), entry in zip(changes, located, entries, strict=True):
            write_in(loc.dir_fd, str(entry["temp"]), change.new, mode)
        moved = []
        for change, (loc, _), _entry in zip(changes, located, entries, strict=True):
            _fault(ws, "before-rename", change.path)
            try:
                current = read_in(loc.dir_fd, loc.name)[0]
            except OSError:
                current = None
            if current is None or not verify_current(current, change):
                moved.append(change.path)
        if moved:
            raise _stale(moved)
    except BaseException:
        for (loc, _), entry in zip(located, entries, strict=True):
            with contextlib.suppress(OSError):
                unlink_in(loc.dir_fd, str(entry["temp"]))
        shutil.rmtree(folder, ignore_errors=True)
        raise
    for i, ((loc, _), entry) in enumerate(zip(located, entries, strict=True)):
        _rename_into(loc, str(entry["temp"]))
        crash_point(f"after-file-{i}")
    for loc, _ in located:
        _fsync_fd(loc.dir_fd)
    _write_manifest(folder, {"state": "committed", "files": entries})
    crash_point("after-commit")
    shutil.rmtree(folder, ignore_errors=True)


# -- recovery ------------------------------------------------------------------------------


def recover(ws: Workspace) -> list[str]:
    """Finish what a crashed edit left behind; returns the files rolled back. Never raises for
    what it finds: files it cannot roll back are reported in ``.sleuth/recovered/``."""
    if not (ws.root / ".sleuth" / JOURNAL_DIR).is_dir():
        return []
    with _edit_lock(ws, wait=False) as locked:
        return _recover_locked(ws) if locked else []


def _journal_folders(ws: Workspace) -> list[Path]:
    root = ws.root / ".sleuth" / JOURNAL_DIR
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return []
    return [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False)]


def _recover_locked(ws: Workspace) -> list[str]:
    restored: list[str] = []
    for folder in _journal_folders(ws):
        try:
            manifest = json.loads((folder / "manifest.json").read_text())
            state, entries = manifest["state"], manifest["files"]
        except FileNotFoundError:
            shutil.rmtree(folder, ignore_errors=True)  # crashed before touching the workspace
            continue
        except (OSError, ValueError, KeyError, TypeError):
            _keep(ws, folder, [{"path": None, "reason": "its journal is unreadable"}])
            continue
        problems: list[dict[str, object]] = []
        if state == "prepared":
            for entry in entries:
                outcome = _roll_back(ws, folder, entry)
                if outcome is True:
                    restored.append(str(entry["path"]))
                elif isinstance(outcome, str):
                    problems.append({"path": entry["path"], "reason": outcome, "old": entry["old"]})
        if problems:
            _keep(ws, folder, problems)
        else:
            shutil.rmtree(folder, ignore_errors=True)
    return restored


def _keep(ws: Workspace, folder: Path, problems: list[dict[str, object]]) -> None:
    """Move a journal that could not be finished aside, with a report, for the user."""
    dest_root = state_subdir(ws.state_dir, RECOVERED_DIR)
    dest = dest_root / folder.name
    shutil.rmtree(dest, ignore_errors=True)
    with contextlib.suppress(OSError):
        os.rename(folder, dest)
        where = f".sleuth/{RECOVERED_DIR}/{folder.name}"
        report = {"journal": where, "files": problems}
        write_file(dest / "report.json", json.dumps(report, indent=1).encode())
        return
    shutil.rmtree(folder, ignore_errors=True)


def _roll_back(ws: Workspace, folder: Path, entry: dict[str, object]) -> bool | str | None:
    """True when the file got its old bytes back, None when it had them, else why not."""
    rel = str(entry.get("real", entry["path"]))
    try:
        loc = locate(str(ws.root), rel)
    except (OSError, SleuthError):
        return "its folder is no longer a real folder inside the root; the file was left as it is"
    try:
        with contextlib.suppress(OSError):
            unlink_in(loc.dir_fd, str(entry["temp"]))
        old = (folder / str(entry["old"])).read_bytes()
        try:
            current: bytes | None = read_in(loc.dir_fd, loc.name)[0]
        except FileNotFoundError:
            current = None
        except OSError:
            return "it is no longer a regular file; it was left as it is"
        if current == old:
            return None
        if current is not None and stamp_bytes(current) != entry["new_stamp"]:
            return "it changed after the interrupted edit; your version was kept"
        _restore(loc, str(entry["temp"]), old, int(str(entry["mode"])))
        return True
    except OSError as exc:
        return f"it could not be restored ({exc.strerror}); it was left as it is"
    finally:
        loc.close()


def _restore(loc: Located, temp_name: str, data: bytes, mode: int) -> None:
    """Atomically give ``loc`` its old bytes back: a temporary file renamed over it."""
    write_in(loc.dir_fd, temp_name, data, mode)
    _rename_into(loc, temp_name)


def recovered(ws: Workspace) -> list[dict[str, object]]:
    """The reports of interrupted edits that recovery could not finish (newest last)."""
    folder = ws.root / ".sleuth" / RECOVERED_DIR
    out: list[dict[str, object]] = []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return out
    for name in names:
        with contextlib.suppress(OSError, ValueError):
            out.append(json.loads((folder / name / "report.json").read_text()))
    return out
