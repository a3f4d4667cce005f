"""Files reached from the root with no symlink followed at any path component (docs/SAFETY.md).

Every write, and every read that decides a write, goes through here: the path is walked from an
open descriptor of the root one component at a time with ``O_NOFOLLOW | O_DIRECTORY``, so a
folder swapped for a symlink between a search and an edit is refused instead of written through,
and the temporary file of an atomic write is made and renamed inside the very folder that was
verified (``dir_fd``), never by a path name that could be re-pointed in between.

A symlinked *file* inside the root is allowed (docs/faces.md#which-files-are-searched): ``locate``
resolves it once to its real location, which must lie inside the root, and walks that location with
the same rules. Only regular files are opened, ``O_NONBLOCK`` so that a FIFO swapped in after an
``lstat`` can never block: FIFOs, sockets and devices are refused (``NotRegular``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from dataclasses import dataclass

from sleuth.errors import InvalidPath

__all__ = [
    "Located",
    "NotRegular",
    "locate",
    "open_folder",
    "read_regular",
    "read_in",
    "write_in",
    "unlink_in",
    "write_file",
    "outside_root",
    "symlinked_component",
]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_MAX_LINK_HOPS = 8


class NotRegular(OSError):
    """The path names something other than a regular file (a FIFO, socket, device, folder)."""


def _through_link(rel: str) -> InvalidPath:
    return InvalidPath(
        f"{rel} is reached through a symlinked folder; sleuth never reads or writes through "
        "one (docs/faces.md#paths): use the folder's own path inside the root",
        details={"path": rel},
    )


def _not_canonical(rel: str) -> InvalidPath:
    return InvalidPath(
        f"{rel!r} is not a path inside the root: a path here names a file by its folders from "
        "the root, with no '..', '.', empty or absolute part",
        details={"path": rel},
    )


def _parts(rel: str) -> list[str]:
    """The components of a canonical root-relative path; ``InvalidPath`` for any other
    (``..`` is no symlink, so the no-follow walk alone would let it climb out of the root)."""
    parts = rel.split("/")
    if any(part in ("", ".", "..") or "\0" in part for part in parts):
        raise _not_canonical(rel)
    return parts


def outside_root(rel: str) -> InvalidPath:
    """The error for a path that leaves the root through a symlink (no absolute path shown)."""
    return InvalidPath(
        f"path leaves the workspace root through a symlink: {rel}; only files inside the root "
        "can be used",
        details={"path": rel},
    )


def open_folder(root: str, rel_dir: str, *, rel: str | None = None) -> int:
    """An fd of folder ``rel_dir`` (``""`` = the root), no component followed if a symlink.

    ``InvalidPath`` when a component is a symlink; ``FileNotFoundError``/``NotADirectoryError``
    when one is missing or not a folder. The caller closes the fd.
    """
    parts = _parts(rel_dir) if rel_dir else []
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts:
            try:
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(fd, part):
                    raise _through_link(rel or rel_dir) from None
                raise
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def _is_link(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(name, dir_fd=dir_fd).st_mode)
    except OSError:
        return False


def symlinked_component(root: str, rel: str) -> bool:
    """True when a folder component of ``rel`` (not its last part) is a symlink."""
    head = rel.rpartition("/")[0]
    try:
        os.close(open_folder(root, head))
    except InvalidPath:
        return True
    except OSError:
        return False
    return False


@dataclass
class Located:
    """Where a workspace file's bytes live: an open folder fd and the name inside it."""

    dir_fd: int
    name: str
    real: str
    """The file's real path relative to the root (differs from the asked path for a link)."""
    inode: tuple[int, int] | None = None
    """(device, inode) of the file as verified, once read (two hard links share it)."""

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.dir_fd)


def locate(root: str, rel: str) -> Located:
    """Open the folder of ``rel`` safely; a final symlink is resolved to a target in the root.

    The file itself need not exist (``read_in`` then raises ``FileNotFoundError``).
    """
    prefix = root.rstrip("/") + "/"
    current = rel
    for _ in range(_MAX_LINK_HOPS):
        _parts(current)
        head, _, name = current.rpartition("/")
        fd = open_folder(root, head, rel=rel)
        try:
            st = os.lstat(name, dir_fd=fd)
        except FileNotFoundError:
            return Located(fd, name, current)
        except BaseException:
            os.close(fd)
            raise
        if not stat.S_ISLNK(st.st_mode):
            return Located(fd, name, current)
        os.close(fd)
        real = os.path.realpath(prefix + current)
        if not real.startswith(prefix):
            raise outside_root(rel)
        current = real[len(prefix) :]
    raise InvalidPath(f"{rel}: too many levels of symlinks", details={"path": rel})


def read_in(dir_fd: int, name: str) -> tuple[bytes, os.stat_result]:
    """The bytes and stat of regular file ``name`` in ``dir_fd``; ``NotRegular`` otherwise."""
    fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegular(errno.EINVAL, "not a regular file", name)
        chunks = []
        while True:
            chunk = os.read(fd, max(1 << 16, st.st_size + 1))
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks), st
    finally:
        os.close(fd)


def read_regular(root: str, rel: str) -> bytes:
    """The bytes of regular file ``rel``, reached safely (``OSError`` when it cannot be)."""
    loc = locate(root, rel)
    try:
        return read_in(loc.dir_fd, loc.name)[0]
    finally:
        loc.close()


def write_in(dir_fd: int, name: str, data: bytes, mode: int = 0o600) -> None:
    """Create ``name`` in ``dir_fd`` (never following a link there), write, fsync."""
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISLNK(os.lstat(name, dir_fd=dir_fd).st_mode):
            os.unlink(name, dir_fd=dir_fd)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(name, flags, 0o600, dir_fd=dir_fd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegular(errno.EINVAL, "not a regular file", name)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fchmod(fd, mode)
        os.fsync(fd)
    finally:
        os.close(fd)


def write_file(path: str | os.PathLike[str], data: bytes) -> None:
    """Create or overwrite file ``path`` (in a folder of sleuth's own, such as ``.sleuth``),
    never following a symlink at its last component."""
    folder, name = os.path.split(os.fspath(path))
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        write_in(fd, name, data)
    finally:
        os.close(fd)


def read_file(path: str | os.PathLike[str]) -> bytes:
    """The bytes of regular file ``path`` in a folder of sleuth's own (such as ``.sleuth``),
    never following a symlink at its last component nor opening a FIFO (``OSError``): what is
    there may have arrived with the tree (docs/SAFETY.md#damaged-or-planted-state)."""
    folder, name = os.path.split(os.fspath(path))
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        return read_in(fd, name)[0]
    finally:
        os.close(fd)


def unlink_in(dir_fd: int, name: str) -> None:
    """Remove ``name`` from ``dir_fd`` if it is there."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(name, dir_fd=dir_fd)
