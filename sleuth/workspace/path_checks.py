"""The checks a path passes before the workspace touches it, and the one wording of a refusal.

Behind ``Workspace``'s path methods (docs/architecture.md#engines-never-touch-the-disk): a user
path must stay inside the root lexically and through symlinks (docs/faces.md#paths:
``invalid_path``), is never reached through a symlinked folder, and a denied path is cloaked
(``not_found``, worded exactly like a missing path,
docs/faces.md#access-policy-denied-files-are-cloaked). ``fresh_text`` is the read a reference is
checked against: from disk now, no cache, no symlinked folder followed (``rooted``).

Each function takes the workspace's real root, its ``root/`` prefix and its current policy, so
the workspace owns every piece of state (the policy is reloaded with the config).
"""

from __future__ import annotations

import os
import stat

from sleuth.errors import InvalidPath, NotFound
from sleuth.workspace.paths import normalize_rel, reportable_name
from sleuth.workspace.policy import AccessPolicy
from sleuth.workspace.reader import BINARY_PROBE, encoding_of, stamp_bytes
from sleuth.workspace.rooted import locate, outside_root, read_in, symlinked_component
from sleuth.workspace.state_folder import STATE_DIR
from sleuth.workspace.text import FileText

__all__ = [
    "path_not_found",
    "real_root",
    "validated_path",
    "followed_stat",
    "folders_real",
    "fresh_text",
    "in_state_folder",
    "in_git_folder",
    "is_internal",
    "off_limits",
]


def path_not_found(rel: str) -> NotFound:
    """The one wording of a missing *and* a denied path, so nothing reveals cloaking."""
    # One wording for missing and denied paths: the message must not reveal cloaking
    # (docs/faces.md#access-policy-denied-files-are-cloaked).
    return NotFound(
        f"path not found: {rel}; check the spelling, or list files with a 'files:' search",
        details={"path": rel},
    )


def real_root(root: str | os.PathLike[str]) -> str:
    """The real path of workspace root ``root``: ``NotFound`` when it is missing,
    ``InvalidPath`` when it is not a folder."""
    raw = os.fspath(root)
    real = os.path.realpath(os.path.abspath(raw))
    if not os.path.exists(real):
        raise NotFound(
            f"workspace root not found: {raw}; pass an existing folder as the root",
            details={"path": raw},
        )
    if not os.path.isdir(real):
        raise InvalidPath(
            f"workspace root is not a folder: {raw}; pass the folder that holds the files",
            details={"path": raw},
        )
    return real


def validated_path(root: str, prefix: str, policy: AccessPolicy, p: str) -> str:
    """``Workspace.validate_path``: the canonical relative form of user path ``p``, which must
    exist inside ``root`` (``prefix`` is ``root`` with one trailing ``/``).

    ``InvalidPath`` for absolute paths, ``..`` past the root, NUL bytes, symlinks that
    resolve outside the root, paths through a symlinked folder and a symlinked folder itself
    (never descended, docs/faces.md#which-files-are-searched — so an alias cannot uncloak a
    denied file); ``NotFound`` for missing *and* denied paths (same wording). A symlinked file
    whose target is denied is denied.
    """
    rel = normalize_rel(p)
    if not rel:
        return ""
    if policy.is_denied(rel):
        raise path_not_found(rel)
    off_limits(rel)
    if not all(reportable_name(part) for part in rel.split("/")):
        raise InvalidPath(
            f"{rel!r} holds a control character (or is not UTF-8): such names are left out of "
            "every listing, since an answer could not show them as one line; rename the file",
            details={"path": rel},
        )
    if symlinked_component(root, rel):
        raise InvalidPath(
            f"{rel} is reached through a symlinked folder; sleuth never searches, reads or "
            "edits through one (docs/faces.md#paths): use the folder's own path inside the "
            "root",
            details={"path": rel},
        )
    full = prefix + rel
    try:
        st = os.lstat(full)
    except OSError:
        raise path_not_found(rel) from None
    if stat.S_ISLNK(st.st_mode):
        real = os.path.realpath(full)
        if real != root and not real.startswith(prefix):
            raise outside_root(rel)
        if real == root or os.path.isdir(real):
            raise InvalidPath(
                f"{rel} is a symlinked folder; sleuth never descends one "
                "(docs/faces.md#paths): use the folder's own path inside the root",
                details={"path": rel},
            )
        if policy.is_denied(real[len(prefix) :]):
            raise path_not_found(rel)
        off_limits(real[len(prefix) :], rel)
        if not os.path.exists(real):
            raise path_not_found(rel)
    return rel


def in_state_folder(rel: str) -> bool:
    """Whether ``rel`` lies in the root's state folder ``.sleuth/``: sleuth's own journal, undo
    data and registry, which no search lists and no read or edit may reach (an edit of an
    undo manifest would make ``undo`` write what it names, docs/SAFETY.md)."""
    return rel == STATE_DIR or rel.startswith(STATE_DIR + "/")


def in_git_folder(rel: str) -> bool:
    """Whether ``rel`` lies in a ``.git`` folder (or is a ``.git`` file) at any depth: git's own
    data, which the walker never lists (docs/faces.md#which-files-are-searched)."""
    return ".git" in rel.split("/")


def is_internal(rel: str) -> bool:
    """Whether ``rel`` is sleuth's or git's own (``.sleuth/`` at the root, ``.git`` at any
    depth): never listed, read or edited."""
    return bool(rel) and (in_state_folder(rel) or in_git_folder(rel))


def off_limits(rel: str, named: str | None = None) -> None:
    """``InvalidPath`` when ``rel`` is in ``.sleuth/`` or in a ``.git`` folder: neither is ever
    read or edited through sleuth (docs/SAFETY.md#cloaking-and-the-root). An edit of
    ``.git/config`` or a hook would run code at the user's next git command, and an edit of
    ``.git/HEAD`` breaks the repository. ``named`` is the path the user gave, when ``rel`` is
    where it leads."""
    shown = rel if named is None else named
    if in_state_folder(rel):
        raise _state_path(shown)
    if in_git_folder(rel):
        where = "is in" if named is None else "leads into"
        raise InvalidPath(
            f"{shown} {where} git's own data (.git/), which is never read or edited through "
            "sleuth (docs/SAFETY.md#cloaking-and-the-root); use git for it",
            details={"path": shown},
        )


def _state_path(rel: str) -> InvalidPath:
    return InvalidPath(
        f"{rel} is in sleuth's state folder {STATE_DIR}/, which is never read or edited through "
        "sleuth (docs/SAFETY.md#cloaking-and-the-root); give a path of the workspace's own files",
        details={"path": rel},
    )


def followed_stat(prefix: str, policy: AccessPolicy, rel: str) -> os.stat_result:
    """The followed stat of ``rel`` after the symlink check; ``OSError`` when unreadable."""
    full = prefix + rel
    st = os.lstat(full)
    if stat.S_ISLNK(st.st_mode):
        real = os.path.realpath(full)
        if not real.startswith(prefix):
            raise outside_root(rel)
        target = real[len(prefix) :]
        if policy.is_denied(target):
            raise path_not_found(rel)
        if is_internal(target):
            raise OSError(f"{rel} leads into the state folder or .git")
        st = os.stat(full)
    return st


def folders_real(
    root: str, prefix: str, safe_folders: dict[str, tuple[int, int]], rel: str
) -> bool:
    """True when no folder on the way to ``rel`` is a symlink now. A watching face lists
    from a cached listing that can lag behind a folder swapped for a symlink, and the read
    must not follow it out of the root: one ``lstat`` of the parent per read, compared with
    the parent last checked component by component (``safe_folders``, which this updates;
    docs/SAFETY.md)."""
    head = rel.rpartition("/")[0]
    if not head:
        return True
    st = os.lstat(prefix + head)
    if not stat.S_ISDIR(st.st_mode):
        return False
    key = (st.st_dev, st.st_ino)
    if safe_folders.get(head) == key:
        return True
    if symlinked_component(root, rel):
        return False
    safe_folders[head] = key
    return True


def fresh_text(root: str, policy: AccessPolicy, max_filesize: int, rel: str) -> FileText | None:
    """``Workspace.read_fresh``: ``rel``'s bytes read from disk now, reached with no symlinked
    folder followed (``rooted``), bypassing every cache. None when missing, not a regular file,
    binary or larger than ``max_filesize``."""
    rel = normalize_rel(rel)
    if not rel or policy.is_denied(rel):
        raise path_not_found(rel)
    try:
        loc = locate(root, rel)
    except (InvalidPath, OSError):
        return None  # through a symlinked folder now, or a folder gone
    try:
        if loc.real != rel and policy.is_denied(loc.real):
            raise path_not_found(rel)
        data, st = read_in(loc.dir_fd, loc.name)
    except OSError:
        return None
    finally:
        loc.close()
    if st.st_size > max_filesize or b"\x00" in data[:BINARY_PROBE]:
        return None
    return FileText(rel, data, stamp_bytes(data), encoding_of(data))
