"""``FolderWatches``: inotify watches on a root's real folders, never through a symlink.

The change watcher (``watch.ChangeWatcher``) must see every change under the root and nothing
outside it. A recursive watch from watchfiles (the ``notify`` crate) follows symlinked folders
when it places its watches, so a repository holding ``ln -s / everything`` made it watch the
whole file system: tens of thousands of the user's inotify watches (a per-user limit every
program shares) and seconds of start-up holding the interpreter (docs/SAFETY.md#what-a-watching-
face-may-answer-late). sleuth never descends a symlinked folder (SPEC section 1), so its watcher
does not either: one inotify watch per real folder, found by listing each folder without
following links (as the walker does) and placed with ``IN_ONLYDIR | IN_DONT_FOLLOW``, so a
folder swapped for a symlink between the listing and the watch is refused by the kernel.

A folder that appears later (created, or moved in) gets its watch when its parent reports it,
and the folders below it are listed after that watch is placed, so nothing made inside it is
missed: what happened before the watch is covered by the batch that reports the folder, which
the watcher hands on only after the new watches are in place (a listing made before then is
dropped). A folder moved away loses its watches (their paths would be wrong); a deleted one
loses them by the kernel. Not entered: ``.git`` at any depth and the root's ``.sleuth`` below
its own level, as the walker (its barrier file sits directly in ``.sleuth``).

Linux only: ``open`` answers None elsewhere, and the watcher keeps watchfiles there.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
import struct
import sys

__all__ = ["FolderWatches", "WatchesLost"]

IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_UNMOUNT = 0x00002000
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_ISDIR = 0x40000000

_CHANGES = IN_MODIFY | IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
_MASK = _CHANGES | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW
_HEADER = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len (then the name)
_READ_SIZE = 1 << 16
_SKIPPED = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EACCES, errno.EPERM, errno.ELOOP})
"""Errors that skip one folder: gone, swapped for a file or a symlink, or unreadable (the
walker cannot list it either). Any other (ENOSPC: the user's watch limit) fails the watcher."""


class WatchesLost(Exception):
    """The root's own watch ended (deleted, moved away, unmounted): nothing more will come."""


def _kind(mask: int) -> str:
    if mask & (IN_CREATE | IN_MOVED_TO):
        return "added"
    if mask & (IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF):
        return "deleted"
    return "modified"


class FolderWatches:
    """One inotify instance holding a watch on each real folder under ``root``."""

    def __init__(self, root: str, libc: ctypes.CDLL, fd: int) -> None:
        self._root = root
        self._libc = libc
        self._fd = fd
        self._paths: dict[int, str] = {}  # watch descriptor -> folder
        self._wds: dict[str, int] = {}  # folder -> watch descriptor
        self._root_wd = -1

    @classmethod
    def open(cls, root: str) -> FolderWatches | None:
        """An inotify instance for ``root`` with no watch yet; None where the system has no
        inotify. ``OSError`` when it has one but cannot give another instance."""
        if not sys.platform.startswith("linux"):
            return None
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            init, add, rm = libc.inotify_init1, libc.inotify_add_watch, libc.inotify_rm_watch
        except (OSError, AttributeError):
            return None
        init.argtypes, init.restype = [ctypes.c_int], ctypes.c_int
        add.argtypes, add.restype = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32], ctypes.c_int
        rm.argtypes, rm.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
        fd = init(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            code = ctypes.get_errno()
            raise OSError(code, f"inotify_init1: {os.strerror(code)}")
        return cls(root.rstrip("/") or "/", libc, fd)

    def fileno(self) -> int:
        return self._fd

    @property
    def folders(self) -> list[str]:
        """The folders watched now, sorted."""
        return sorted(self._wds)

    def close(self) -> None:
        """Release the instance and every watch it holds."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    # -- placing watches -------------------------------------------------------------------

    def arm(self, folder: str | None = None) -> None:
        """Watch ``folder`` (the root when None) and every real folder below it, each watched
        before it is listed, so a folder made meanwhile is either listed or reported."""
        pending = [folder if folder is not None else self._root]
        while pending:
            path = pending.pop()
            if not self._add(path):
                if path == self._root:
                    raise WatchesLost(f"cannot watch the root {self._root!r}")
                continue
            if not self._enters(path):
                continue
            try:
                with os.scandir(path) as entries:
                    for entry in entries:
                        try:
                            real_folder = entry.is_dir(follow_symlinks=False)
                        except OSError:
                            continue
                        if real_folder and self._watches(entry.path):
                            pending.append(entry.path)
            except OSError:
                continue  # gone or unreadable since its watch was placed: reported or walked

    def _watches(self, path: str) -> bool:
        """Whether a folder at ``path`` gets a watch: not ``.git`` (any depth), nor below the
        root's ``.sleuth``."""
        parent, name = os.path.split(path)
        return name != ".git" and parent != self._root + "/.sleuth"

    def _enters(self, path: str) -> bool:
        return path != self._root + "/.sleuth"

    def _add(self, path: str) -> bool:
        wd = self._libc.inotify_add_watch(self._fd, os.fsencode(path), _MASK)
        if wd < 0:
            code = ctypes.get_errno()
            if code in _SKIPPED:
                return False
            raise OSError(code, f"inotify_add_watch {path!r}: {os.strerror(code)}")
        old = self._paths.get(wd)
        if old is not None and old != path:
            self._wds.pop(old, None)  # the same folder met again under its new name
        self._paths[wd] = path
        self._wds[path] = wd
        if path == self._root:
            self._root_wd = wd
        return True

    def _forget(self, folder: str) -> None:
        """Remove the watches on ``folder`` and below (moved away: their paths are wrong)."""
        below = folder + "/"
        for path in [p for p in self._wds if p == folder or p.startswith(below)]:
            wd = self._wds.pop(path)
            self._paths.pop(wd, None)
            self._libc.inotify_rm_watch(self._fd, wd)

    # -- reading events --------------------------------------------------------------------

    def read(self) -> set[tuple[str, str]]:
        """Every event waiting, as ``{(kind, absolute path)}`` (kind ``added``, ``modified``
        or ``deleted``), after placing the watches of the folders they made; ``WatchesLost``
        when the root's watch ended."""
        changes: set[tuple[str, str]] = set()
        while True:
            try:
                data = os.read(self._fd, _READ_SIZE)
            except BlockingIOError:
                return changes
            if not data:
                return changes
            self._take(data, changes)

    def _take(self, data: bytes, changes: set[tuple[str, str]]) -> None:
        at = 0
        while at + _HEADER.size <= len(data):
            wd, mask, _cookie, size = _HEADER.unpack_from(data, at)
            raw = data[at + _HEADER.size : at + _HEADER.size + size].rstrip(b"\0")
            at += _HEADER.size + size
            if mask & IN_Q_OVERFLOW:
                self._overflowed(changes)
                continue
            folder = self._paths.get(wd)
            if folder is None:
                continue  # a watch removed since (moved away): its paths are stale
            if mask & (IN_IGNORED | IN_UNMOUNT | IN_DELETE_SELF | IN_MOVE_SELF):
                if wd == self._root_wd:
                    raise WatchesLost(f"the watched root {self._root!r} was removed or moved")
                if mask & IN_IGNORED:
                    del self._paths[wd]
                    if self._wds.get(folder) == wd:
                        del self._wds[folder]
                continue  # the parent's watch reports the folder by name
            path = folder + "/" + os.fsdecode(raw) if raw else folder
            if mask & IN_ISDIR:
                if mask & IN_MOVED_FROM:
                    self._forget(path)
                elif mask & (IN_CREATE | IN_MOVED_TO) and self._watches(path):
                    self.arm(path)
            changes.add((_kind(mask), path))

    def _overflowed(self, changes: set[tuple[str, str]]) -> None:
        """The kernel dropped events: watch again what is there now (a folder renamed
        meanwhile keeps its watch under its new name; one gone lost its watch already) and
        report the root as changed, so every kept listing is dropped."""
        for path in list(self._wds):
            try:
                gone = not stat.S_ISDIR(os.lstat(path).st_mode)
            except OSError:
                gone = True
            if gone:
                self._forget(path)
        self.arm()
        changes.add(("modified", self._root))
