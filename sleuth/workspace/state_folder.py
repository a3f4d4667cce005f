"""The state folder ``.sleuth/``: made on demand, and never written through anything but a real
folder of this user's (docs/faces.md#state-sleuth).

``.sleuth/`` may be deleted at any time and is made again by the next query, so every store in it
makes its folder with ``make_state_dir`` / ``state_subdir`` and notices a file deleted under it with
``state_file_id``. ``Workspace.state_dir`` is the folder of one workspace.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from sleuth.errors import InvalidPath

__all__ = [
    "STATE_DIR",
    "JOURNAL_DIR",
    "make_state_dir",
    "state_subdir",
    "state_file_id",
    "journal_pending",
]

STATE_DIR = ".sleuth"
JOURNAL_DIR = "journal"
"""``.sleuth/journal/``: the journals of edits under way (``sleuth.edit.journal``)."""


def _not_a_state_folder(path: Path, what: str) -> InvalidPath:
    rel = STATE_DIR if path.name == STATE_DIR else f"{STATE_DIR}/{path.name}"
    return InvalidPath(
        f"{rel} is {what}: sleuth keeps its state only in a real folder of yours inside the "
        f"root and never writes through anything else (docs/faces.md#state-sleuth); remove it "
        f"(rm {rel}) and run again",
        details={"path": rel},
    )


def _check_folder(path: Path) -> bool:
    """True when ``path`` is a real folder owned by this user; False when it is missing."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(st.st_mode):
        raise _not_a_state_folder(path, "a symlink")
    if not stat.S_ISDIR(st.st_mode):
        raise _not_a_state_folder(path, "not a folder")
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise _not_a_state_folder(path, "owned by another user")
    return True


def make_state_dir(path: Path) -> Path:
    """``path`` (a workspace's ``.sleuth``) as a folder with a ``.gitignore`` of ``*``
    (docs/faces.md#state-sleuth), made if missing — also by a store that finds it deleted since it
    was opened.

    ``invalid_path`` when ``.sleuth`` (or an entry directly inside it) is a symlink, or
    ``.sleuth`` is not a folder of this user's: state is never written through either.
    """
    if _check_folder(path):
        try:
            entries = list(os.scandir(path))
        except OSError:
            entries = []
        for entry in entries:
            if entry.is_symlink():
                raise _not_a_state_folder(Path(entry.path), "a symlink")
        if any(e.name == ".gitignore" for e in entries):
            return path
    else:
        with contextlib.suppress(FileExistsError):
            os.makedirs(path)
        _check_folder(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    with contextlib.suppress(FileExistsError):
        fd = os.open(path / ".gitignore", flags, 0o644)
        try:
            os.write(fd, b"*\n")
        finally:
            os.close(fd)
    return path


def state_subdir(state: Path, name: str) -> Path:
    """``state/name`` as a real folder (made if missing); ``invalid_path`` if it is not one."""
    sub = state / name
    if not _check_folder(sub):
        with contextlib.suppress(FileExistsError):
            os.mkdir(sub)
        _check_folder(sub)
    return sub


def state_file_id(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """(device, inode) of the file at ``path``, None when there is none.

    ``.sleuth/`` may be deleted at any time and made again by the next query
    (docs/faces.md#state-sleuth): a store holding one of its SQLite files open compares this with
    the file it opened (an open file keeps its inode taken, so an equal pair is the same file) and
    reopens on a change.
    """
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def journal_pending(root: Path) -> bool:
    """Whether ``<root>/.sleuth/journal/`` holds anything: an edit under way, or one a killed
    process left (``sleuth.edit.recovery.recover``). One ``scandir``, cheap enough to ask
    before every call, and no import of the edit layer to ask it."""
    try:
        with os.scandir(root / STATE_DIR / JOURNAL_DIR) as entries:
            return next(entries, None) is not None
    except OSError:
        return False
