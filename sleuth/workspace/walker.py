"""The file walk behind ``Workspace.list_files``: ``FileEntry``, ``FileList`` and ``Walker``.

One ``os.scandir`` per folder, through a descriptor, entry types from ``d_type`` (no stat for
folders), one ``fstatat`` per file (through ``DirEntry.stat``) for the size and mtime the size
cap and the content cache need. Each folder's ``.ignore``/``.gitignore`` is compiled once
(``ignore.py``) and pushed onto the stack its subfolders inherit; the stack is prepared once
per folder for its entries' names (``ignore.folder_levels``). With ``processes`` > 1 a large
walk is shared with a forked child (``walk_split.py``).

A Python walk on purpose: the ``ignore``-crate bindings (``rignore``, ``ignore-python``) are
slower once a listing's ``lstat`` is added, and miss git's ``[[:digit:]]`` (``benchmarks/walk.py``).

Rules applied to every entry, in this order (docs/faces.md#which-files-are-searched):

* ``.git`` (any depth) and the state folder ``.sleuth`` (root only) are never entered;
* denied paths are dropped without a trace — not counted anywhere (cloaking);
* ignored paths are dropped (``no_ignore`` turns this off) and counted in ``FileList.ignored``
  (files and folders pruned, not their contents), a hint for "N hidden by .gitignore";
* ``exclude`` globs drop a file or prune a folder; ``include`` globs keep a file when they match
  it, or a folder above it by a glob without wildcards (``PathGlobs.takes_whole``);
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
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from sleuth.model import SkipCounts
from sleuth.tuning import Tuning
from sleuth.workspace.ignore import (
    FolderLevels,
    IgnoreRules,
    IgnoreStack,
    RulesCache,
    folder_levels,
    ignored_name,
    rules_key,
)
from sleuth.workspace.path_checks import is_internal
from sleuth.workspace.paths import EDIT_TEMP_PREFIX, PathGlobs, ancestors, reportable_name
from sleuth.workspace.policy import AccessPolicy

__all__ = [
    "FileEntry",
    "FileList",
    "Walker",
    "ListingKey",
    "PrefetchedListings",
    "Row",
    "Pending",
    "entries_of",
    "entries_of_columns",
]

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


Row = tuple[str, int, int, int]
"""(path, size, mtime_ns, ctime_ns): a ``FileEntry`` before it is built."""


Pending = tuple[str, IgnoreStack | None, bool]
"""A folder still to list: (path, the ignore stack its parent left, included by a glob above)."""


def entries_of(rows: Sequence[Row]) -> list[FileEntry]:
    """One ``FileEntry`` per row of the walk."""
    if not rows:
        return []
    paths, sizes, mtimes, ctimes = zip(*rows, strict=True)
    return entries_of_columns(paths, sizes, mtimes, ctimes)


def entries_of_columns(
    paths: Sequence[str], sizes: Sequence[int], mtimes: Sequence[int], ctimes: Sequence[int]
) -> list[FileEntry]:
    """``FileEntry(paths[i], sizes[i], mtimes[i], ctimes[i])`` for each i, field by field: one
    ``map`` per field runs in C, 2.5x faster than building them one by one (the CLI's parent
    waits for this on a large tree, ``sleuth.listing_prefetch``)."""
    entries: list[FileEntry] = [_new(FileEntry) for _ in paths]
    for setter, column in (
        (_set_path, paths),
        (_set_size, sizes),
        (_set_mtime, mtimes),
        (_set_ctime, ctimes),
    ):
        for _ in map(setter, entries, column):
            pass
    return entries


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
        "processes",
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
        processes: int = 1,
    ) -> None:
        """``rules`` compiles the ignore files met on the way (the workspace's, kept between
        walks; one of this walk's own when not given); ``processes`` > 1 splits a large walk
        between forked processes (``walk_split``; a single-threaded process only)."""
        self.root = root
        self.policy = policy
        self.stack0 = stack0
        self.max_filesize = max_filesize
        self.include = include
        self.exclude = exclude
        self.rules = rules if rules is not None else RulesCache(Tuning().ignore_cache_max)
        self.processes = processes
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
        rows, result = self.walk_rows(scope)
        result.files = entries_of(rows)
        return result

    def walk_rows(self, scope: str) -> tuple[list[Row], FileList]:
        """``walk`` before its entries are built: sorted rows, the counts (``files`` empty)."""
        result = FileList([])
        found: list[Row] = []
        if is_internal(scope):
            return found, result
        try:
            st = os.stat(self._abs(scope))
        except OSError:
            return found, result
        folder = stat.S_ISDIR(st.st_mode)
        if scope and self.exclude and self.exclude.match_any_level(scope, folder):
            return found, result
        included = not self.include or (bool(scope) and self.include.takes_any_level(scope, folder))
        if folder:
            self._walk(scope, included, result, found)
            found.sort()  # paths are unique, so tuples order by path alone
        elif stat.S_ISREG(st.st_mode):
            # an explicit file is listed even when ignored (as rg does), never when denied
            if self.policy.is_denied(scope) or not included:
                return found, result
            if st.st_size > self.max_filesize:
                result.skipped.too_large += 1
            else:
                found.append((scope, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
        return found, result

    def _walk(self, start: str, included: bool, result: FileList, out: list[Row]) -> None:
        parent_stack = self._stack_for(start.rpartition("/")[0]) if start else self.stack0
        todo: list[Pending] = [(start, parent_stack, included)]
        if self.processes > 1:
            from sleuth.workspace.walk_split import walk_split

            walk_split(self, todo, result, out)
        else:
            self.walk_folders(todo, result, out)

    def walk_folders(self, todo: list[Pending], result: FileList, out: list[Row]) -> None:
        """Walk every folder of ``todo`` and what lies below it, into ``out`` and ``result``."""
        while todo:
            self.walk_folder(todo.pop(), result, todo, out)

    def walk_folder(
        self, pending: Pending, result: FileList, todo: list[Pending], out: list[Row]
    ) -> None:
        """List one folder into ``out`` and push its subfolders onto ``todo``."""
        folder, stack, inc = pending
        try:
            fd = os.open(self._prefix + folder if folder else self.root, _DIR_FLAGS)
        except OSError:
            result.skipped.unreadable += 1
            return
        try:  # the descriptor stays open while the entries' stat calls use it
            result.ignored += self._folder(fd, folder, stack, inc, result.skipped, todo, out)
        except OSError:
            result.skipped.unreadable += 1
        finally:
            os.close(fd)

    def _folder(
        self,
        fd: int,
        folder: str,
        stack: IgnoreStack | None,
        inc: bool,
        skipped: SkipCounts,
        todo: list[Pending],
        out: list[Row],
    ) -> int:
        """List one folder (open as ``fd``) into ``out``, its subfolders onto ``todo``; answers
        how many entries its ignore rules dropped."""
        deny = self.policy.globs if self.policy else None
        include = self.include if self.include else None
        exclude = self.exclude if self.exclude else None
        cap = self.max_filesize
        with os.scandir(fd) as it:
            entries = list(it)
        prefix = folder + "/" if folder else ""
        levels: FolderLevels = ()
        if stack is not None:
            found: dict[str, IgnoreRules | None] = {}
            for e in entries:
                if e.name in _IGNORE_FILES and e.is_file(follow_symlinks=False):
                    try:
                        s = e.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    found[e.name] = self.rules.load(self._prefix + prefix + e.name, rules_key(s))
            if found:
                stack = stack.push(folder, found.get(".ignore"), found.get(".gitignore"))
            levels = folder_levels(stack.levels, prefix)
        n_ignored = 0
        for e in entries:
            name = e.name
            if name == ".git" or (name == ".sleuth" and not folder):
                continue
            rel = prefix + name
            if e.is_dir(follow_symlinks=False):
                if deny is not None and deny.match(rel):
                    continue
                if levels and ignored_name(levels, name, True):
                    n_ignored += 1
                    continue
                if exclude is not None and exclude.match(rel, True):
                    continue
                if not reportable_name(name):
                    # no text an answer could show (not UTF-8, or a control character): so
                    # nothing below it can be named either; left out, counted once
                    skipped.unreadable += 1
                    continue
                todo.append((rel, stack, inc or (include is not None and include.takes_whole(rel))))
                continue
            regular = e.is_file(follow_symlinks=False)
            if not regular and not e.is_symlink():
                continue  # fifo, socket, device: never listed or opened
            if name.startswith(EDIT_TEMP_PREFIX):
                continue  # an edit's temporary file, renamed over its file in a moment
            if deny is not None and deny.match(rel):
                continue
            if levels and ignored_name(levels, name, False):
                n_ignored += 1
                continue
            if exclude is not None and exclude.match(rel, False):
                continue
            if not inc and (include is None or not include.match(rel, False)):
                continue
            if not reportable_name(name):
                skipped.unreadable += 1  # a name no answer could show as one line of text
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
        return n_ignored


# Folders are scanned through a descriptor: each entry's ``stat`` is then an ``fstatat`` on the
# folder, not a lookup of the whole path again (about a tenth of a large walk). ``O_NOFOLLOW``:
# a folder swapped for a symlink since its parent was scanned is not entered.
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
