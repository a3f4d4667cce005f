"""``Workspace``: one root folder and every rule about which of its files sleuth may touch.

The workspace is the only layer that touches the disk for searches
(docs/architecture.md#engines-never-touch-the-disk: "Engines never touch the disk directly"): it
validates user paths (docs/faces.md#paths: ``invalid_path`` for anything that leaves the root
lexically or through a symlink), cloaks denied paths (``not_found``, worded exactly like a
missing path), lists files with git's ignore semantics (``walker.py``, ``ignore.py``), reads and
stamps contents through a warm cache (``reader.py``) and owns the state folder ``.sleuth/``.

Paths going in may be any spelling ``validate_path`` accepts; paths coming out are always the
canonical relative POSIX form.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from sleuth.errors import InvalidPath, NotFound
from sleuth.model import OnProgress, SkipCounts
from sleuth.tuning import Tuning
from sleuth.workspace.ignore import IgnoreStack, RulesCache, base_stack
from sleuth.workspace.listing_filter import derive_listing, excludes_nothing, names_of
from sleuth.workspace.listing_patch import patch_listings
from sleuth.workspace.paths import PathGlobs, normalize_rel
from sleuth.workspace.policy import AccessPolicy, load_config, resolve_max_filesize
from sleuth.workspace.reader import (
    BINARY_PROBE,
    ContentCache,
    Reader,
    Wanted,
    encoding_of,
    stamp_bytes,
)
from sleuth.workspace.rooted import locate, outside_root, read_in, symlinked_component
from sleuth.workspace.text import FileText
from sleuth.workspace.walker import FileEntry, FileList, PrefetchedListings, Walker
from sleuth.workspace.watch import ChangeWatcher

__all__ = [
    "Workspace",
    "STATE_DIR",
    "state_file_id",
    "make_state_dir",
    "state_subdir",
    "path_not_found",
]

STATE_DIR = ".sleuth"


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


def path_not_found(rel: str) -> NotFound:
    """The one wording of a missing *and* a denied path, so nothing reveals cloaking."""
    # One wording for missing and denied paths: the message must not reveal cloaking
    # (docs/faces.md#access-policy-denied-files-are-cloaked).
    return NotFound(
        f"path not found: {rel}; check the spelling, or list files with a 'files:' search",
        details={"path": rel},
    )


def _split_globs(include: Sequence[str], exclude: Sequence[str]) -> tuple[PathGlobs, PathGlobs]:
    """``include`` entries written ``!glob`` are exclusions (as in rg's ``-g '!glob'``)."""
    inc = [g for g in include if not g.startswith("!")]
    exc = list(exclude) + [g[1:] for g in include if g.startswith("!")]
    return PathGlobs(inc), PathGlobs(exc)


def _listing_key(
    rel: str, include: Sequence[str], exclude: Sequence[str], any_size: bool
) -> tuple[object, ...]:
    """What a kept listing is filed under (``Workspace.list_files``)."""
    return (rel, tuple(include), tuple(exclude), any_size)


def _copy_listing(listing: FileList) -> FileList:
    """A listing whose skip counters the caller may add to without touching the cached one."""
    return replace(listing, skipped=replace(listing.skipped))


class Workspace:
    """One workspace root: path validation, access policy, file listing, reading, state."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        no_ignore: bool = False,
        max_filesize: int | None = None,
        *,
        tuning: Tuning | None = None,
        prefetched: PrefetchedListings | None = None,
    ) -> None:
        """``tuning``: the knobs of the session this workspace serves (``ws.tuning``, read by
        every engine); ``prefetched``: listings made ahead of the first walk (the CLI's child
        process, ``sleuth.listing_prefetch``), adopted by ``list_files`` when they fit."""
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
        self.root = Path(real)
        self._root = real
        self._prefix = real.rstrip("/") + "/"
        self.no_ignore = no_ignore
        self.tuning = tuning if tuning is not None else Tuning()
        self._prefetched = prefetched
        self._rules = RulesCache(self.tuning.ignore_cache_max)  # compiled ignore files
        self.config: dict[str, Any] = load_config(real)
        self.max_filesize = resolve_max_filesize(max_filesize, self.config)
        self.policy = AccessPolicy(self.config.get("deny") or ())
        self.cache = ContentCache()
        self._reader = Reader(real, self.max_filesize, self.cache)
        self._watcher: ChangeWatcher | None = None
        self._own_changes = 0
        self._listings: dict[tuple[object, ...], tuple[int, FileList]] = {}
        # the names in the whole tree's kept listing (listing_filter.names_of), with its files
        self._names: tuple[list[FileEntry], frozenset[str]] | None = None
        # files found binary, by the watcher generation they were read at (``read``)
        self._binary: dict[str, int] = {}
        self._max_filesize_arg = max_filesize
        self._safe_folders: dict[str, tuple[int, int]] = {}
        self.fault_hook: Callable[[str, str], None] | None = None
        """Called by the edit layer at its fault points (``planned``, ``verified``,
        ``before-rename``) with the file's path: the safety harness's injection seam."""
        self.progress: OnProgress | None = None
        """Where the engines report a long step (``report``); a face sets it for one call."""

    def report(self, what: str, done: int = 0, total: int = 0) -> None:
        """A long step's progress, to the face's ``progress`` if one listens (never fails the
        step: a broken display is not worth an answer)."""
        sink = self.progress
        if sink is not None:
            with contextlib.suppress(Exception):
                sink(what, done, total)

    def reporter(self, what: str) -> Callable[[int, int], None]:
        """``(done, total)`` of the step ``what`` to ``report``; the step ends at the total."""

        def report(done: int, total: int) -> None:
            self.report(what if done < total else "", done, total)

        return report

    # -- change watching (long-running faces) --------------------------------------------------

    def watch(self) -> None:
        """Watch the tree for changes so listings can be reused between queries."""
        if self._watcher is None:
            self._watcher = ChangeWatcher(
                self._root, self._changed, settle_s=self.tuning.watch_settle_s
            )
            self._watcher.start()

    @property
    def watching(self) -> bool:
        """Whether a file watcher runs for this workspace (``watch``, until ``close``)."""
        return self._watcher is not None

    def close(self) -> None:
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None
        self._listings.clear()

    @property
    def generation(self) -> int | None:
        """A counter that moves on every change, or None when changes are not being watched."""
        watcher = self._watcher
        if watcher is None or not watcher.trustworthy:
            return None
        return watcher.generation + self._own_changes

    def catch_up(self, timeout_s: float = 1.0) -> bool:
        """Before an answer that must see every change made so far (a daemon's next call):
        wait for the watcher's barrier, else drop what the watcher kept, so the answer walks
        as a cold one does. True when the kept listings stay trusted."""
        watcher = self._watcher
        if watcher is not None and watcher.barrier(timeout_s):
            return True
        self.note_changed()
        return False

    def note_changed(self) -> None:
        """sleuth itself wrote files (an edit): caches must not wait for the watcher's event."""
        self._own_changes += 1
        self._listings.clear()

    def _changed(self, changes: set[tuple[str, str]], watcher_generation: int) -> None:
        """A batch of watcher events, called before the watcher's generation moves to
        ``watcher_generation``: patch the cached listings when only listed files changed
        content (an edit saved in place or by rename), else drop them (the next query walks)."""
        names = {os.path.basename(p) for _, p in changes}
        trusted = self.generation is not None
        generation = watcher_generation + self._own_changes if trusted else None
        if not patch_listings(
            self._listings, changes, self._prefix, self.max_filesize, names, generation
        ):
            self._listings.clear()
        if names & {"pyproject.toml", ".sleuth.toml"}:
            self.config = load_config(self._root)
            self.max_filesize = resolve_max_filesize(self._max_filesize_arg, self.config)
            self.policy = AccessPolicy(self.config.get("deny") or ())
            self._reader = Reader(self._root, self.max_filesize, self.cache)

    def __repr__(self) -> str:
        return f"Workspace({self._root!r}, no_ignore={self.no_ignore})"

    # -- state -------------------------------------------------------------------------------

    @property
    def state_dir(self) -> Path:
        """``<root>/.sleuth``, created on first use with a ``.gitignore`` of ``*``
        (docs/faces.md#state-sleuth)."""
        return make_state_dir(self.root / STATE_DIR)

    # -- paths -------------------------------------------------------------------------------

    def is_denied(self, rel: str) -> bool:
        """True when ``rel`` (or a folder above it) is cloaked by a ``deny`` glob."""
        return self.policy.is_denied(normalize_rel(rel))

    def validate_path(self, p: str) -> str:
        """The canonical relative form of user path ``p``, which must exist inside the root.

        ``InvalidPath`` for absolute paths, ``..`` past the root, NUL bytes, symlinks that
        resolve outside the root, paths through a symlinked folder and a symlinked folder itself
        (never descended, docs/faces.md#which-files-are-searched — so an alias cannot uncloak a
        denied file); ``NotFound`` for missing *and* denied paths (same wording). A symlinked file
        whose target is denied is denied.
        """
        rel = normalize_rel(p)
        if not rel:
            return ""
        if self.policy.is_denied(rel):
            raise path_not_found(rel)
        if symlinked_component(self._root, rel):
            raise InvalidPath(
                f"{rel} is reached through a symlinked folder; sleuth never searches, reads or "
                "edits through one (docs/faces.md#paths): use the folder's own path inside the "
                "root",
                details={"path": rel},
            )
        full = self._prefix + rel
        try:
            st = os.lstat(full)
        except OSError:
            raise path_not_found(rel) from None
        if stat.S_ISLNK(st.st_mode):
            real = os.path.realpath(full)
            if real != self._root and not real.startswith(self._prefix):
                raise outside_root(rel)
            if real == self._root or os.path.isdir(real):
                raise InvalidPath(
                    f"{rel} is a symlinked folder; sleuth never descends one "
                    "(docs/faces.md#paths): use the folder's own path inside the root",
                    details={"path": rel},
                )
            if self.policy.is_denied(real[len(self._prefix) :]):
                raise path_not_found(rel)
            if not os.path.exists(real):
                raise path_not_found(rel)
        return rel

    def read_fresh(self, rel: str) -> FileText | None:
        """``rel``'s bytes read from disk now, reached with no symlinked folder followed
        (``rooted``), bypassing every cache: what a reference is checked against before it is
        read or edited. None when missing, not a regular file, binary or too large."""
        rel = normalize_rel(rel)
        if not rel or self.policy.is_denied(rel):
            raise path_not_found(rel)
        try:
            loc = locate(self._root, rel)
        except (InvalidPath, OSError):
            return None  # through a symlinked folder now, or a folder gone
        try:
            if loc.real != rel and self.policy.is_denied(loc.real):
                raise path_not_found(rel)
            data, st = read_in(loc.dir_fd, loc.name)
        except OSError:
            return None
        finally:
            loc.close()
        if st.st_size > self.max_filesize or b"\x00" in data[:BINARY_PROBE]:
            return None
        return FileText(rel, data, stamp_bytes(data), encoding_of(data))

    # -- listing -----------------------------------------------------------------------------

    def _stack0(self) -> IgnoreStack | None:
        return None if self.no_ignore else base_stack(self._root, self._rules)

    def list_files(
        self,
        scope: str = "",
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        *,
        any_size: bool = False,
    ) -> FileList:
        """The files under ``scope`` (root, folder or one file) that a search may read.

        ``any_size`` lists files over the size cap too (path queries never read content).

        Sorted by path (code points); ignored, denied, internal and special files are left out;
        files over the size cap are counted in ``skipped.too_large``. A scope naming a file
        lists that file even when it is ignored (as rg does for explicit paths).
        """
        rel = self.validate_path(scope) if scope else ""
        generation = self.generation
        key = _listing_key(rel, include, exclude, any_size)
        if generation is not None:
            hit = self._listings.get(key)
            if hit is not None and hit[0] == generation:
                return _copy_listing(hit[1])
            derived = self._derived(rel, include, exclude, any_size, generation)
            if derived is not None:
                if not (rel or include or exclude):  # the plain listing: kept (one key)
                    self._listings[key] = (generation, _copy_listing(derived))
                return derived
        listing = None
        if self._prefetched is not None:
            listing = self._prefetched.take(
                (self._root, self.no_ignore, rel, tuple(include), tuple(exclude), any_size),
                self.max_filesize,
            )
        if listing is None:
            listing = self._walk(rel, include, exclude, any_size)
        if generation is not None and generation == self.generation:
            self._listings[key] = (generation, _copy_listing(listing))
        return listing

    def _derived(
        self,
        rel: str,
        include: Sequence[str],
        exclude: Sequence[str],
        any_size: bool,
        generation: int,
    ) -> FileList | None:
        """A watched listing filtered from the whole tree's (``listing_filter``): a new glob or
        folder scope costs a pass over the kept listing, not a walk. The whole tree's listing
        is walked for a whole-tree key that misses; a folder scope walks its own folder until
        the whole tree's listing is there. Only the plain listing is kept of those derived: a
        glob or scope used once (the benchmarks' nonces, an agent's one-off exclude) would
        fill the cache."""
        base_key = _listing_key("", (), (), True)
        kept = self._listings.get(base_key)
        if kept is None or kept[0] != generation:
            if rel:
                return None
            base = self._walk("", (), (), True)
            if generation != self.generation:
                return None  # something changed during the walk: walk the key itself
            self._listings[base_key] = (generation, _copy_listing(base))
        else:
            base = kept[1]
        inc, exc = _split_globs(include, exclude)
        if exc and not inc:
            if self._names is None or self._names[0] is not base.files:
                self._names = (base.files, names_of(base))
            if excludes_nothing(self._names[1], exc):
                # the same listing as without the globs (its kept object, when that is kept)
                return self.list_files(rel, (), (), any_size=any_size)
        cap = None if any_size else self.max_filesize
        return derive_listing(base, rel, inc, exc, cap)

    def _walk(
        self, rel: str, include: Sequence[str], exclude: Sequence[str], any_size: bool
    ) -> FileList:
        return self.walker(include, exclude, any_size).walk(rel)

    def walker(self, include: Sequence[str], exclude: Sequence[str], any_size: bool) -> Walker:
        """The walker behind ``list_files`` for these options (a cold listing of a validated
        scope is ``walker(...).walk(scope)``; the CLI's listing child takes its rows)."""
        inc, exc = _split_globs(include, exclude)
        return Walker(
            self._root,
            policy=self.policy,
            stack0=self._stack0(),
            max_filesize=sys.maxsize if any_size else self.max_filesize,
            include=inc,
            exclude=exc,
            rules=self._rules,
            processes=self.tuning.walk_processes,
        )

    # -- contents ----------------------------------------------------------------------------

    def _stat(self, rel: str) -> os.stat_result:
        """The followed stat of ``rel`` after the symlink check; ``OSError`` when unreadable."""
        full = self._prefix + rel
        st = os.lstat(full)
        if stat.S_ISLNK(st.st_mode):
            real = os.path.realpath(full)
            if not real.startswith(self._prefix):
                raise outside_root(rel)
            if self.policy.is_denied(real[len(self._prefix) :]):
                raise path_not_found(rel)
            st = os.stat(full)
        return st

    def read(self, rel: str, skipped: SkipCounts | None = None) -> FileText | None:
        """The content of file ``rel``, or None when it is binary, too large or unreadable.

        Skips are counted in ``skipped`` and never raised. A denied path raises ``NotFound`` and
        one leaving the root raises ``InvalidPath`` — a caller should never have such a path.
        """
        text = self.read_if(rel, skipped, None)
        return None if isinstance(text, str) else text

    def read_if(
        self, rel: str, skipped: SkipCounts | None, wanted: Wanted | None
    ) -> FileText | str | None:
        """``read``, and ``UNWANTED`` for a file read from disk whose bytes ``wanted`` turns
        down (``Reader.read_if``; a cached text is returned as it is)."""
        rel = normalize_rel(rel)
        if not rel or self.policy.is_denied(rel):
            raise path_not_found(rel)
        generation = self.generation
        if generation is not None and self._binary.get(rel) == generation:
            # binary when last read, and the watcher saw no change since: counted, not read
            # (the index keeps such files as candidates: Django's 1,385 .mo catalogues cost two
            # lstat calls each per warm search)
            if skipped is not None:
                skipped.binary += 1
            return None
        try:
            if self._watcher is not None and not self._folders_real(rel):
                raise OSError("reached through a symlinked folder")
            st = self._stat(rel)
        except OSError:
            if skipped is not None:
                skipped.unreadable += 1
            return None
        if generation is None:
            return self._reader.read_if(rel, st, skipped, wanted)
        counts = skipped if skipped is not None else SkipCounts()
        binary = counts.binary
        text = self._reader.read_if(rel, st, counts, wanted)
        if text is None and counts.binary > binary:
            self._binary[rel] = generation
        return text

    def _folders_real(self, rel: str) -> bool:
        """True when no folder on the way to ``rel`` is a symlink now. A watching face lists
        from a cached listing that can lag behind a folder swapped for a symlink, and the read
        must not follow it out of the root: one ``lstat`` of the parent per read, compared with
        the parent last checked component by component (docs/SAFETY.md)."""
        head = rel.rpartition("/")[0]
        if not head:
            return True
        st = os.lstat(self._prefix + head)
        if not stat.S_ISDIR(st.st_mode):
            return False
        key = (st.st_dev, st.st_ino)
        if self._safe_folders.get(head) == key:
            return True
        if symlinked_component(self._root, rel):
            return False
        self._safe_folders[head] = key
        return True

    def stamp(self, rel: str) -> str:
        """The stamp (xxh3-64 hex) of file ``rel``'s current bytes; ``NotFound`` if absent."""
        rel = self.validate_path(rel)
        try:
            st = self._stat(rel)
            if not stat.S_ISREG(st.st_mode):
                raise InvalidPath(
                    f"not a regular file: {rel or '/'}; stamps exist for files only",
                    details={"path": rel},
                )
            return self._reader.stamp(rel, st)
        except FileNotFoundError as exc:
            raise path_not_found(rel) from exc
        except OSError as exc:
            raise InvalidPath(
                f"cannot read {rel}: {exc.strerror}; check the file's permissions",
                details={"path": rel},
            ) from exc
