"""The file walk behind ``Workspace.list_files``: ``FileEntry``, ``FileList`` and ``Walker``.

One ``os.scandir`` per folder, entry types from ``d_type`` (no stat for folders), one ``lstat``
per file (through ``DirEntry.stat``) for the size and mtime the size cap and the content cache
need. Each folder's ``.ignore``/``.gitignore`` is compiled once (``ignore.py``) and pushed onto
the stack its subfolders inherit.

Rules applied to every entry, in this order (docs/faces.md#which-files-are-searched):

* ``.git`` (any depth) and the state folder ``.sleuth`` (root only) are never entered;
* denied paths are dropped without a trace — not counted anywhere (cloaking);
* ignored paths are dropped (``no_ignore`` turns this off) and counted in ``FileList.ignored``
  (files and folders pruned, not their contents), a hint for "N hidden by .gitignore";
* ``exclude`` globs drop a file or prune a folder; ``include`` globs keep a file when they match
  it or a folder above it;
* files over the size cap are counted in ``skipped.too_large``;
* symlinks: a link to a regular file inside the root is listed (git lists symlinks); links to
  folders are not followed; links leaving the root are never listed. Fifos, sockets and devices
  are never listed.

The result is sorted by path as plain ``str`` (code points), the order pages follow
(docs/query.md#ordering-and-pagination) — not the per-folder walk order (``"a-b/x" < "a/x"``).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import Protocol

from sleuth.model import SkipCounts
from sleuth.tuning import Tuning
from sleuth.workspace.ignore import IgnoreLevel, IgnoreRules, IgnoreStack, RulesCache, ignored
from sleuth.workspace.paths import PathGlobs, ancestors
from sleuth.workspace.policy import AccessPolicy

__all__ = ["FileEntry", "FileList", "Walker", "is_internal", "ListingKey", "PrefetchedListings"]

_IGNORE_FILES = (".ignore", ".gitignore")


@dataclass(frozen=True, slots=True)
class FileEntry:
    """One listed file: its workspace-relative POSIX path and what ``stat`` said of it.

    ``ctime_ns`` moves on every write and every ``utime``: a listing compared by it sees a
    rewrite that keeps the size and puts the old mtime back (docs/SAFETY.md). 0 = not known.
    """

    path: str
    size: int
    mtime_ns: int
    ctime_ns: int = 0


@dataclass
class FileList:
    """The files of one listing, sorted by path, and what was left out of it."""

    files: list[FileEntry]
    skipped: SkipCounts = field(default_factory=SkipCounts)
    ignored: int = 0
    """Files and folders dropped by ignore files (a pruned folder counts once)."""

    def __len__(self) -> int:
        return len(self.files)

    @property
    def paths(self) -> list[str]:
        return [f.path for f in self.files]


ListingKey = tuple[str, bool, str, tuple[str, ...], tuple[str, ...], bool]
"""(real root, no_ignore, validated scope, include, exclude, any_size): everything a listing
depends on besides the size cap."""


class PrefetchedListings(Protocol):
    """Listings made ahead of the walk that would make them (the CLI's, in a child process:
    ``sleuth.listing_prefetch``), which ``Workspace.list_files`` adopts instead of walking.

    Contract: ``take`` answers the listing for exactly ``key`` and ``max_filesize``, at most
    once; returning None is never wrong (the workspace then walks).
    """

    def take(self, key: ListingKey, max_filesize: int) -> FileList | None: ...


def is_internal(rel: str) -> bool:
    """True for paths inside ``.git`` (at any depth) or the root state folder ``.sleuth``."""
    if not rel:
        return False
    parts = rel.split("/")
    return parts[0] == ".sleuth" or ".git" in parts


_new = object.__new__
_set_path = FileEntry.__dict__["path"].__set__
_set_size = FileEntry.__dict__["size"].__set__
_set_mtime = FileEntry.__dict__["mtime_ns"].__set__
_set_ctime = FileEntry.__dict__["ctime_ns"].__set__


def _entry(path: str, size: int, mtime_ns: int, ctime_ns: int) -> FileEntry:
    """``FileEntry(path, size, mtime_ns, ctime_ns)`` at half the cost of the frozen
    ``__init__``."""
    entry: FileEntry = _new(FileEntry)
    _set_path(entry, path)
    _set_size(entry, size)
    _set_mtime(entry, mtime_ns)
    _set_ctime(entry, ctime_ns)
    return entry


def _utf8_name(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class Walker:
    """Lists the files of one workspace under a scope; built per listing, cheap to build."""

    __slots__ = (
        "root",
        "policy",
        "stack0",
        "max_filesize",
        "include",
        "exclude",
        "rules",
        "_prefix",
    )

    def __init__(
        self,
        root: str,
        *,
        policy: AccessPolicy,
        stack0: IgnoreStack | None,
        max_filesize: int,
        include: PathGlobs,
        exclude: PathGlobs,
        rules: RulesCache | None = None,
    ) -> None:
        """``rules`` compiles the ignore files met on the way (the workspace's, kept between
        walks; one of this walk's own when not given)."""
        self.root = root
        self.policy = policy
        self.stack0 = stack0
        self.max_filesize = max_filesize
        self.include = include
        self.exclude = exclude
        self.rules = rules if rules is not None else RulesCache(Tuning().ignore_cache_max)
        self._prefix = root.rstrip("/") + "/"

    def _abs(self, rel: str) -> str:
        return self._prefix + rel if rel else self.root

    def _link_target(self, rel: str) -> os.stat_result | None:
        """The stat of a symlink's target when it is a regular, allowed file inside the root."""
        real = os.path.realpath(self._abs(rel))
        if not real.startswith(self._prefix):
            return None
        target = real[len(self._prefix) :]
        if is_internal(target) or self.policy.is_denied(target):
            return None
        try:
            st = os.stat(real)
        except OSError:
            return None
        return st if stat.S_ISREG(st.st_mode) else None

    def _stack_for(self, folder: str) -> IgnoreStack | None:
        """The ignore stack in force for the entries of ``folder`` (its own files included)."""
        stack = self.stack0
        if stack is None:
            return None
        chain = list(ancestors(folder))[::-1]
        load = self.rules.load
        for f in ["", *chain]:
            base = self._abs(f) + "/"
            stack = stack.push(f, load(base + ".ignore"), load(base + ".gitignore"))
        return stack

    def walk(self, scope: str) -> FileList:
        """Everything listable under ``scope`` ("" for the root, a folder, or one file)."""
        result = FileList([])
        if is_internal(scope):
            return result
        if scope and self.exclude and self.exclude.match_any_level(scope):
            return result
        included = not self.include or (bool(scope) and self.include.match_any_level(scope))
        try:
            st = os.stat(self._abs(scope))
        except OSError:
            return result
        if stat.S_ISDIR(st.st_mode):
            found: list[tuple[str, int, int, int]] = []
            self._walk(scope, included, result, found)
            found.sort()  # paths are unique, so tuples order by path alone
            result.files = [_entry(*row) for row in found]
        elif stat.S_ISREG(st.st_mode):
            # an explicit file is listed even when ignored (as rg does), never when denied
            if self.policy.is_denied(scope) or not included:
                return result
            if st.st_size > self.max_filesize:
                result.skipped.too_large += 1
            else:
                result.files.append(FileEntry(scope, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
        return result

    def _walk(
        self, start: str, included: bool, result: FileList, out: list[tuple[str, int, int, int]]
    ) -> None:
        skipped = result.skipped
        deny = self.policy.globs if self.policy else None
        include = self.include if self.include else None
        exclude = self.exclude if self.exclude else None
        cap = self.max_filesize
        prefix_abs = self._prefix
        load = self.rules.load
        parent_stack = self._stack_for(start.rpartition("/")[0]) if start else self.stack0
        todo: list[tuple[str, IgnoreStack | None, bool]] = [(start, parent_stack, included)]
        n_ignored = 0
        while todo:
            folder, stack, inc = todo.pop()
            try:
                with os.scandir(prefix_abs + folder if folder else self.root) as it:
                    entries = list(it)
            except OSError:
                skipped.unreadable += 1
                continue
            prefix = folder + "/" if folder else ""
            levels: tuple[IgnoreLevel, ...] = ()
            if stack is not None:
                found: dict[str, IgnoreRules | None] = {}
                for e in entries:
                    if e.name in _IGNORE_FILES and e.is_file(follow_symlinks=False):
                        try:
                            s = e.stat(follow_symlinks=False)
                        except OSError:
                            continue
                        found[e.name] = load(e.path, (s.st_size, s.st_mtime_ns, s.st_ino))
                if found:
                    stack = stack.push(folder, found.get(".ignore"), found.get(".gitignore"))
                levels = stack.levels
            for e in entries:
                name = e.name
                if name == ".git" or (name == ".sleuth" and not folder):
                    continue
                rel = prefix + name
                if e.is_dir(follow_symlinks=False):
                    if deny is not None and deny.match(rel):
                        continue
                    if levels and ignored(levels, rel, True):
                        n_ignored += 1
                        continue
                    if exclude is not None and exclude.match(rel):
                        continue
                    sub_inc = inc or (include is not None and include.match(rel))
                    todo.append((rel, stack, sub_inc))
                    continue
                regular = e.is_file(follow_symlinks=False)
                if not regular and not e.is_symlink():
                    continue  # fifo, socket, device: never listed or opened
                if deny is not None and deny.match(rel):
                    continue
                if levels and ignored(levels, rel, False):
                    n_ignored += 1
                    continue
                if exclude is not None and exclude.match(rel):
                    continue
                if not inc and (include is None or not include.match(rel)):
                    continue
                if not name.isascii() and not _utf8_name(name):
                    skipped.unreadable += 1  # a name that cannot be reported as UTF-8 text
                    continue
                if regular:
                    try:
                        st = e.stat(follow_symlinks=False)
                    except OSError:
                        continue  # vanished between scandir and stat
                else:
                    target = self._link_target(rel)
                    if target is None:
                        continue
                    st = target
                if st.st_size > cap:
                    skipped.too_large += 1
                    continue
                out.append((rel, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
        result.ignored += n_ignored
