"""``Workspace``: one root folder and every rule about which of its files sleuth may touch.

The only layer that touches the disk for searches
(docs/architecture.md#engines-never-touch-the-disk): it validates user paths and cloaks denied
ones (``path_checks.py``, docs/faces.md#paths), lists files with git's ignore semantics
(``walker.py``, ``ignore.py``), reads and stamps contents through a warm cache (``reader.py``)
and owns the state folder ``.sleuth/`` (``state_folder.py``). Paths going in may be any
spelling ``validate_path`` accepts; paths coming out are always the canonical relative form.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from sleuth.errors import InvalidPath
from sleuth.model import OnProgress, SkipCounts
from sleuth.tuning import Tuning
from sleuth.workspace.ignore import IgnoreStack, RulesCache, base_stack, outside_signature
from sleuth.workspace.listing_filter import (
    copy_listing,
    derive_listing,
    excludes_nothing,
    listing_key,
    names_of,
)
from sleuth.workspace.listing_patch import patch_listings
from sleuth.workspace.path_checks import (
    folders_real,
    followed_stat,
    fresh_text,
    path_not_found,
    real_root,
    validated_path,
)
from sleuth.workspace.paths import normalize_rel, split_globs
from sleuth.workspace.policy import (
    AccessPolicy,
    ConfigSignature,
    config_signature,
    load_config,
    resolve_max_filesize,
)
from sleuth.workspace.reader import ContentCache, Reader, Wanted
from sleuth.workspace.state_folder import STATE_DIR, make_state_dir
from sleuth.workspace.text import FileText
from sleuth.workspace.walker import FileEntry, FileList, PrefetchedListings, Walker
from sleuth.workspace.watch import ChangeWatcher

__all__ = ["Workspace"]


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
        real = real_root(root)
        self.root = Path(real)
        self._root = real
        self._prefix = real.rstrip("/") + "/"
        self.no_ignore = no_ignore
        self.tuning = tuning if tuning is not None else Tuning()
        self._prefetched = prefetched
        self._rules = RulesCache(self.tuning.ignore_cache_max)  # compiled ignore files
        self.cache = ContentCache()
        self._max_filesize_arg = max_filesize
        self._config_seen: ConfigSignature | None = config_signature(real)  # before the read
        self._outside_seen = None if no_ignore else outside_signature(real)
        self._apply_config(load_config(real))
        self._watcher: ChangeWatcher | None = None
        self._own_changes = 0
        self._listings: dict[tuple[object, ...], tuple[int, FileList]] = {}
        # the names in the whole tree's kept listing (listing_filter.names_of), with its files
        self._names: tuple[list[FileEntry], frozenset[str]] | None = None
        self._binary: dict[str, int] = {}  # files found binary, by generation read (``read``)
        self._safe_folders: dict[str, tuple[int, int]] = {}
        self.fault_hook: Callable[[str, str], None] | None = None
        """Called by the edit layer at its fault points (``planned``, ``verified``,
        ``before-rename``) with the file's path: the safety harness's injection seam."""
        self.progress: OnProgress | None = None  # where engines ``report`` (set by a face)

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
            with contextlib.suppress(InvalidPath):  # the next call's refresh_config says why
                self.refresh_config(force=True)

    def refresh_config(self, *, force: bool = False) -> None:
        """Re-read the configuration if a file of it changed (before every verb; ``force``: a
        watcher saw one), so a new deny glob cloaks at once (docs/SAFETY.md#cloaking-and-the-
        root); ``InvalidPath`` (failing closed) when it can no longer be used. Kept listings go
        when an ignore file no watch reaches changed (docs/SAFETY.md#what-a-watching-face-may-answer-late)."""
        if self.generation is not None and not self.no_ignore:
            outside = outside_signature(self._root)
            if outside is None or outside != self._outside_seen:
                self._outside_seen = outside
                self.note_changed()
        seen = config_signature(self._root)
        if not force and seen is not None and seen == self._config_seen:
            return
        config = load_config(self._root)
        self._config_seen = seen
        if config != self.config:
            self._apply_config(config)
            self.note_changed()  # listings and stored results were made under other rules

    def _apply_config(self, config: dict[str, Any]) -> None:
        self.config = config
        self.max_filesize = resolve_max_filesize(self._max_filesize_arg, config)
        self.policy = AccessPolicy(config.get("deny") or ())
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
        whose target is denied is denied (``path_checks.validated_path``).
        """
        return validated_path(self._root, self._prefix, self.policy, p)

    def read_fresh(self, rel: str) -> FileText | None:
        """``rel``'s bytes read from disk now, reached with no symlinked folder followed
        (``rooted``), bypassing every cache: what a reference is checked against before it is
        read or edited. None when missing, not a regular file, binary or too large."""
        return fresh_text(self._root, self.policy, self.max_filesize, rel)

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
        key = listing_key(rel, include, exclude, any_size)
        if generation is not None:
            hit = self._listings.get(key)
            if hit is not None and hit[0] == generation:
                return copy_listing(hit[1])
            derived = self._derived(rel, include, exclude, any_size, generation)
            if derived is not None:
                if not (rel or include or exclude):  # the plain listing: kept (one key)
                    self._listings[key] = (generation, copy_listing(derived))
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
            self._listings[key] = (generation, copy_listing(listing))
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
        base_key = listing_key("", (), (), True)
        kept = self._listings.get(base_key)
        if kept is None or kept[0] != generation:
            if rel:
                return None
            base = self._walk("", (), (), True)
            if generation != self.generation:
                return None  # something changed during the walk: walk the key itself
            self._listings[base_key] = (generation, copy_listing(base))
        else:
            base = kept[1]
        inc, exc = split_globs(include, exclude)
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
        inc, exc = split_globs(include, exclude)
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
            # a watching face's listing can lag behind a folder swapped for a symlink
            if self._watcher is not None and not folders_real(
                self._root, self._prefix, self._safe_folders, rel
            ):
                raise OSError("reached through a symlinked folder")
            st = followed_stat(self._prefix, self.policy, rel)
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

    def stamp(self, rel: str) -> str:
        """The stamp (xxh3-64 hex) of file ``rel``'s current bytes; ``NotFound`` if absent."""
        rel = self.validate_path(rel)
        try:
            st = followed_stat(self._prefix, self.policy, rel)
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
