"""Recovery of interrupted edits, and what ``journal.commit`` shares with it (docs/SAFETY.md).

``recover(ws)`` runs at the next start: a ``prepared`` journal is rolled back (a file that holds
the edit's new bytes gets its old bytes back, temporary files are removed). A file that cannot
be rolled back — the user changed it since, it is no longer a regular file, its folder became a
symlink, it is denied now — is left exactly as it is and reported; its journal moves to
``.sleuth/recovered/`` with a ``report.json`` (``sleuth doctor`` shows them). Recovery never
locks the workspace and never opens a FIFO. It is idempotent, so a crash during recovery is
fine.

A journal can arrive with the tree (a ``.sleuth/`` committed to a repository or unpacked from
an archive), and recovery writes what a journal says: so it acts only on a journal written for
this very root folder (its device and inode), whose every name is one ``commit`` writes; any
other is set aside untouched with a report.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

from sleuth.errors import SleuthError
from sleuth.workspace import Workspace, stamp_bytes
from sleuth.workspace.path_checks import in_git_folder, in_state_folder
from sleuth.workspace.paths import EDIT_TEMP_PREFIX, normalize_rel
from sleuth.workspace.rooted import (
    Located,
    locate,
    read_file,
    read_in,
    unlink_in,
    write_file,
    write_in,
)
from sleuth.workspace.state_folder import (
    JOURNAL_DIR,
    STATE_DIR,
    journal_pending,
    state_subdir,
)

__all__ = [
    "recover",
    "recovered",
    "recover_locked",
    "edit_lock",
    "rename_into",
    "root_id",
    "JOURNAL_DIR",
    "RECOVERED_DIR",
    "own_bytes",
    "workspace_file_path",
]

RECOVERED_DIR = "recovered"


def rename_into(loc: Located, temp_name: str) -> None:
    """Rename the temporary file ``temp_name`` over ``loc``, inside the verified folder."""
    os.rename(temp_name, loc.name, src_dir_fd=loc.dir_fd, dst_dir_fd=loc.dir_fd)


@contextlib.contextmanager
def edit_lock(ws: Workspace, *, wait: bool = True) -> Iterator[bool]:
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


def recover(ws: Workspace) -> list[str]:
    """Finish what a crashed edit left behind; returns the files rolled back. Never raises for
    what it finds: files it cannot roll back are reported in ``.sleuth/recovered/``."""
    if not journal_pending(ws.root):
        return []
    with edit_lock(ws, wait=False) as locked:
        return recover_locked(ws) if locked else []


def _journal_folders(ws: Workspace) -> list[Path]:
    root = ws.root / STATE_DIR / JOURNAL_DIR
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return []
    return [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False)]


def recover_locked(ws: Workspace) -> list[str]:
    restored: list[str] = []
    for folder in _journal_folders(ws):
        try:
            manifest = json.loads(own_bytes(folder, "manifest.json"))
            state, entries = manifest["state"], manifest["files"]
        except FileNotFoundError:
            shutil.rmtree(folder, ignore_errors=True)  # crashed before touching the workspace
            continue
        except (OSError, ValueError, KeyError, TypeError):
            _keep(ws, folder, [{"path": None, "reason": "its journal is unreadable"}])
            continue
        foreign = _foreign(ws, folder, manifest)
        if foreign is not None:
            # not this root's own journal (planted, copied with the tree, or damaged): nothing
            # in it is acted on, and it is kept for the user to look at
            _keep(ws, folder, [{"path": None, "reason": foreign}])
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


def root_id(ws: Workspace) -> list[int]:
    """The root folder's (device, inode): a journal acts only on the folder it was written in."""
    st = os.stat(ws.root)
    return [st.st_dev, st.st_ino]


def _foreign(ws: Workspace, folder: Path, manifest: object) -> str | None:
    """Why a journal is not one this root's edits wrote, or None when it is.

    Recovery writes files from what the journal says, and a journal can arrive with the tree
    (a ``.sleuth/`` committed to a repository, unpacked from an archive): so it acts only on a
    journal written for this very folder (its device and inode, which no one can know before
    the tree is checked out), whose every name is one ``commit`` writes — canonical paths
    inside the root and outside ``.sleuth/``, and the journal's own file names
    (docs/SAFETY.md#the-journal-and-recovery)."""
    if not isinstance(manifest, dict) or manifest.get("state") not in ("prepared", "committed"):
        return "its journal is unreadable; nothing in it was done"
    try:
        here = root_id(ws)
    except OSError:
        return "the root could not be examined; nothing in the journal was done"
    if manifest.get("root") != here:
        return (
            "its journal was not written for this folder (copied or unpacked with the tree?); "
            "nothing in it was done"
        )
    entries = manifest.get("files")
    if not isinstance(entries, list):
        return "its journal is unreadable; nothing in it was done"
    for i, entry in enumerate(entries):
        if not _entry_ok(ws, folder.name, i, entry):
            return f"its journal names a file sleuth would not write (entry {i}); nothing was done"
    return None


def _entry_ok(ws: Workspace, txid: str, i: int, entry: object) -> bool:
    """Whether ``entry`` is the ``i``-th file entry ``commit`` writes in journal ``txid``."""
    if not isinstance(entry, dict):
        return False
    names = {"old": f"{i}.old", "new": f"{i}.new", "temp": f"{EDIT_TEMP_PREFIX}{txid}-{i}"}
    if any(entry.get(key) != name for key, name in names.items()):
        return False
    mode = entry.get("mode")
    if not isinstance(mode, int) or isinstance(mode, bool) or not 0 <= mode <= 0o7777:
        return False
    if not isinstance(entry.get("new_stamp"), str):
        return False
    return workspace_file_path(entry.get("path")) and workspace_file_path(entry.get("real"))


def workspace_file_path(rel: object) -> bool:
    """Whether ``rel`` is the canonical path of a workspace file, as ``commit`` and undo data
    name one: relative, no ``..``/``.``/empty part, not in ``.sleuth/`` or a ``.git`` folder."""
    if not isinstance(rel, str):
        return False
    try:
        canonical = normalize_rel(rel)
    except SleuthError:
        return False
    return (
        bool(canonical) and canonical == rel and not in_state_folder(rel) and not in_git_folder(rel)
    )


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
    if ws.is_denied(rel) or ws.is_denied(str(entry["path"])):
        return "it is denied now (the access rules changed since); it was left as it is"
    try:
        loc = locate(str(ws.root), rel)
    except (OSError, SleuthError):
        return "its folder is no longer a real folder inside the root; the file was left as it is"
    try:
        with contextlib.suppress(OSError):
            unlink_in(loc.dir_fd, str(entry["temp"]))
        old = own_bytes(folder, str(entry["old"]))
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


def own_bytes(folder: Path, name: str) -> bytes:
    """The bytes of the journal's own regular file ``name``, never through a symlink."""
    fd = os.open(folder / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{name} is not a regular file")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _restore(loc: Located, temp_name: str, data: bytes, mode: int) -> None:
    """Atomically give ``loc`` its old bytes back: a temporary file renamed over it."""
    write_in(loc.dir_fd, temp_name, data, mode)
    rename_into(loc, temp_name)


def recovered(ws: Workspace) -> list[dict[str, object]]:
    """The reports of interrupted edits that recovery could not finish (newest last)."""
    folder = ws.root / ".sleuth" / RECOVERED_DIR
    out: list[dict[str, object]] = []
    if os.path.islink(folder.parent) or os.path.islink(folder):
        return out  # a planted link: reports are read only from sleuth's own folders
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return out
    for name in names:
        # read_file: no FIFO opened (it blocked doctor for ever), no symlink followed
        with contextlib.suppress(OSError, ValueError):
            out.append(json.loads(read_file(folder / name / "report.json")))
    return out
