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
   is verified once more (its bytes and its mode) and only then renamed over the original — the window in which an
   outside write can be lost is the rename itself;
4. the manifest is rewritten ``committed``, then the journal is removed.

``recover(ws)`` (``edit.recovery``) rolls a ``prepared`` journal back at the next start.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sleuth.edit.recovery import (
    JOURNAL_DIR,
    RECOVERED_DIR,
    edit_lock,
    recover,
    recover_locked,
    recovered,
    rename_into,
    root_id,
)
from sleuth.errors import (
    Conflict,
    Internal,
    InvalidPath,
    SleuthError,
    StaleReference,
    UnsafeSelection,
)
from sleuth.workspace import Workspace, stamp_bytes
from sleuth.workspace.path_checks import off_limits, path_not_found
from sleuth.workspace.paths import EDIT_TEMP_PREFIX
from sleuth.workspace.policy import CONFIG_FILES, config_in
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


def _write_manifest(folder: Path, manifest: dict[str, object]) -> None:
    write_file(folder / "manifest.json.tmp", json.dumps(manifest).encode())
    os.replace(folder / "manifest.json.tmp", folder / "manifest.json")
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        _fsync_fd(fd)
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
    with edit_lock(ws):
        recover_locked(ws)
        try:
            _commit_locked(ws, changes, verify)
        finally:
            ws.note_changed()


def _verify(ws: Workspace, change: FileChange) -> tuple[Located, int] | None:
    """The file's location and mode when its bytes on disk are what the edit was made from."""
    if ws.is_denied(change.path):
        raise path_not_found(change.path)
    off_limits(change.path)  # whatever the reference claimed (docs/SAFETY.md#cloaking-and-the-root)
    try:
        loc = locate(str(ws.root), change.path)
    except SleuthError:
        raise
    except OSError:
        return None  # a folder on its way is gone or no longer a folder: it moved on
    try:
        if loc.real != change.path and ws.is_denied(loc.real):
            raise path_not_found(change.path)
        if loc.real != change.path:
            off_limits(loc.real, change.path)
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
    loc.inode = (st.st_dev, st.st_ino)
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
        kept: list[FileChange] = []
        for change in changes:
            found = _verify(ws, change)
            if found is None:
                stale.append(change.path)
                continue
            if not found[1] & stat.S_IWUSR:
                found[0].close()
                raise _read_only(change.path, found[1])
            _keeps_the_rules(change, found[0])
            if _same_file_again(kept, located, change, found[0]):
                found[0].close()
                continue
            kept.append(change)
            located.append(found)
            _fault(ws, "verified", change.path)
        if stale:
            raise _stale(stale)
        _write_verified(ws, kept, located)
    finally:
        for loc, _ in located:
            loc.close()


def _torn(
    ws: Workspace,
    folder: Path,
    changes: Sequence[FileChange],
    located: list[tuple[Located, int]],
    entries: list[dict[str, object]],
    renamed: int,
    exc: OSError,
) -> SleuthError:
    """A rename that failed after ``renamed`` files were renamed (a bind-mounted or immutable
    file, a full disk): those files get their old bytes back at once and the other temporary
    files are removed, so the edit is undone as a whole now, not at the next start; a file that
    cannot be put back leaves the journal in place for recovery (docs/SAFETY.md)."""
    failed = changes[renamed].path
    kept = False
    for i, ((loc, mode), entry) in enumerate(zip(located, entries, strict=True)):
        temp = str(entry["temp"])
        try:
            if i < renamed and read_in(loc.dir_fd, loc.name)[0] == changes[i].new:
                write_in(loc.dir_fd, temp, changes[i].old, mode)
                rename_into(loc, temp)
            elif i < renamed:
                kept = True  # changed again since: recovery reports it, nothing is overwritten
            else:
                unlink_in(loc.dir_fd, temp)
        except OSError:
            kept = kept or i < renamed
    if kept:
        recover_locked(ws)
    else:
        shutil.rmtree(folder, ignore_errors=True)
    reason = exc.strerror or str(exc)
    return Internal(
        f"could not write {failed} ({reason}); the files written before it were put back, "
        "nothing of the edit is left"
        + (" except what `sleuth doctor --recover` lists" if kept else ""),
        details={"path": failed, "errno": exc.errno},
    )


def _read_only(path: str, mode: int) -> InvalidPath:
    """A file its owner may not write (mode ``0444``): made read-only on purpose, so an edit
    would override a choice of the user's that an editor asks about first."""
    return InvalidPath(
        f"{path} is read-only (mode {mode:04o}): sleuth does not write a file you made "
        f"read-only; nothing was written — make it writable first (chmod u+w {path})",
        details={"path": path, "mode": f"{mode:04o}"},
    )


def _keeps_the_rules(change: FileChange, loc: Located) -> None:
    """``unsafe_selection`` for an edit of the root's configuration that changes sleuth's own
    settings (its deny list above all): the rules that cloak files are the user's, and an
    agent that could rewrite them through sleuth could uncloak what they hide."""
    if loc.real not in CONFIG_FILES:
        return
    try:
        same = config_in(loc.real, change.old) == config_in(loc.real, change.new)
    except SleuthError:
        same = False  # the new bytes would not parse: sleuth could not start there
    if not same:
        raise UnsafeSelection(
            f"the edit changes sleuth's own settings in {loc.real} (its deny list or other "
            "[tool.sleuth] keys): sleuth never rewrites the rules that cloak files; nothing was "
            f"written — edit {loc.real} yourself",
            details={"path": change.path},
        )


def _same_file_again(
    kept: list[FileChange], located: list[tuple[Located, int]], change: FileChange, loc: Located
) -> bool:
    """Whether ``change`` names a file already in the edit under another name (a symlinked
    file and its target): True when it writes the same bytes (an ``:all`` over both names),
    ``conflict`` when other bytes — the last rename would silently drop the other change.
    Two hard links of one file are two names of it too: other bytes are ``conflict`` (a move
    between them left the line in neither or twice), the same bytes are written through both
    (a rename makes a new file: writing one name would leave the other with the old bytes)."""
    for other, (where, _) in zip(kept, located, strict=True):
        linked = where.real != loc.real and where.inode is not None and where.inode == loc.inode
        if where.real == loc.real or linked:
            if other.new == change.new:
                return not linked
            how = "two hard links" if linked else f"{loc.real}; a symlink names it twice"
            raise Conflict(
                f"{other.path} and {change.path} are one file ({how}): one edit cannot change "
                "it through both names differently; nothing was written — edit it through one "
                "name",
                details={"files": [other.path, change.path]},
            )
    return False


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
                "temp": f"{EDIT_TEMP_PREFIX}{txid}-{i}",
                "real": loc.real,
                "new_stamp": stamp_bytes(change.new),
            }
        )
    crash_point("before-manifest")
    here = root_id(ws)
    _write_manifest(folder, {"state": "prepared", "root": here, "files": entries})
    crash_point("after-manifest")
    try:
        for change, (loc, mode), entry in zip(changes, located, entries, strict=True):
            write_in(loc.dir_fd, str(entry["temp"]), change.new, mode)
        moved = []
        for change, (loc, mode), _entry in zip(changes, located, entries, strict=True):
            _fault(ws, "before-rename", change.path)
            try:
                current, st = read_in(loc.dir_fd, loc.name)
            except OSError:
                current, st = None, None
            # a mode changed since the verification (chmod 0444, +x) is the user's too: the
            # rename would give the file the verified mode its temporary file was made with
            if (
                current is None
                or st is None
                or not verify_current(current, change)
                or stat.S_IMODE(st.st_mode) != mode
            ):
                moved.append(change.path)
        if moved:
            raise _stale(moved)
    except BaseException as exc:
        for (loc, _), entry in zip(located, entries, strict=True):
            with contextlib.suppress(OSError):
                unlink_in(loc.dir_fd, str(entry["temp"]))
        shutil.rmtree(folder, ignore_errors=True)
        if isinstance(exc, OSError):  # a full disk, a read-only folder: said, not a traceback
            raise Internal(
                f"could not write the edit ({exc.strerror or exc}); nothing was written",
                details={"errno": exc.errno},
            ) from exc
        raise
    renamed = 0
    try:
        for i, ((loc, _), entry) in enumerate(zip(located, entries, strict=True)):
            _fault(ws, "rename", changes[i].path)
            rename_into(loc, str(entry["temp"]))
            renamed = i + 1
            crash_point(f"after-file-{i}")
    except OSError as exc:
        raise _torn(ws, folder, changes, located, entries, renamed, exc) from exc
    for loc, _ in located:
        _fsync_fd(loc.dir_fd)
    _write_manifest(folder, {"state": "committed", "root": here, "files": entries})
    crash_point("after-commit")
    shutil.rmtree(folder, ignore_errors=True)
