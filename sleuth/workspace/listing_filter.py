"""A listing with a scope, globs or the size cap, taken from the whole tree's listing.

A long-running face keeps listings per watcher generation (``Workspace.list_files``), but a
listing is per (scope, include, exclude) key: every new glob or folder scope used to walk the
tree again — 1.7 s on the kernel for ``--exclude x`` beside a 20 ms indexed search. The walk's
rules for globs are per path (``walker.Walker._folder``): a folder matched by an exclude glob
is pruned, one matched by an include glob takes everything below it, and a file is kept when no
exclude glob matches it and an include glob matches it or a folder above it. So, from the
listing of the whole tree without globs and without the size cap (the *base*), the same files
follow by filtering, each folder judged once; files over the cap are counted as the walk counts
them (after the globs).

Only what the base says exactly is derived: not a scope naming a file (an explicit file is
listed even when ignored, and the base holds no ignored file), not a folder with no listed file
(it may be an ignored folder, which a walk from it would still list), and nothing at all when
the base counted unreadable entries (where they were is not kept). ``ignored`` is the base's
count, not narrowed (no one reads it as a figure of the narrower listing). ``listing_key`` is
what a kept listing is filed under, ``copy_listing`` a copy whose skip counts a caller may add
to.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import replace

from sleuth.model import SkipCounts
from sleuth.workspace.paths import PathGlobs
from sleuth.workspace.walker import FileEntry, FileList

__all__ = ["derive_listing", "excludes_nothing", "names_of", "listing_key", "copy_listing"]


def _scoped(files: list[FileEntry], rel: str) -> list[FileEntry] | None:
    """The base's files under folder ``rel`` ("" = all), or None when that is not known."""
    if not rel:
        return files
    prefix = rel + "/"
    lo = bisect.bisect_left(files, prefix, key=lambda f: f.path)
    hi = lo
    while hi < len(files) and files[hi].path.startswith(prefix):
        hi += 1
    if hi == lo:
        return None  # an ignored folder, an empty one or a file: the walk knows which
    return files[lo:hi]


def names_of(base: FileList) -> frozenset[str]:
    """Every file and folder name of ``base`` (kept beside it: built once per listing)."""
    names: set[str] = set()
    folders: set[str] = set()
    for entry in base.files:
        folder, _, name = entry.path.rpartition("/")
        names.add(name)
        folders.add(folder)
    for folder in folders:
        names.update(folder.split("/"))
    names.discard("")
    return frozenset(names)


def excludes_nothing(names: frozenset[str], exclude: PathGlobs) -> bool:
    """Whether ``exclude`` can drop nothing from a listing with these ``names``: every glob is
    an exact name (it matches a path by its last part) that no file or folder has."""
    literal = exclude.literal_names()
    return literal is not None and literal.isdisjoint(names)


def derive_listing(
    base: FileList, rel: str, include: PathGlobs, exclude: PathGlobs, cap: int | None
) -> FileList | None:
    """The listing that walking folder ``rel`` with ``include``/``exclude`` and the size
    ``cap`` (None: no cap) gives, from ``base`` (the whole tree, no globs, no cap); None when
    only a walk can say."""
    if base.skipped.unreadable:
        return None
    files = _scoped(base.files, rel)
    if files is None:
        return None
    if not include and not exclude and cap is None:
        return FileList(files, SkipCounts(), base.ignored)
    verdicts: dict[str, tuple[bool, bool]] = {"": (False, not include)}
    exclude_match = exclude.match if exclude else None
    include_match = include.match if include else None

    def verdict(folder: str) -> tuple[bool, bool]:
        """(pruned by an exclude glob, taken whole by an include glob) of ``folder``."""
        hit = verdicts.get(folder)
        if hit is None:
            excluded, included = verdict(folder.rpartition("/")[0])
            if not excluded:
                excluded = exclude_match is not None and exclude_match(folder, True)
                included = included or (bool(include) and include.takes_whole(folder))
            hit = verdicts[folder] = (excluded, included)
        return hit

    kept: list[FileEntry] = []
    too_large = 0
    last_folder: str | None = None
    excluded = included = False
    for entry in files:
        path = entry.path
        cut = path.rfind("/")
        folder = path[:cut] if cut > 0 else ""
        if folder != last_folder:
            excluded, included = verdicts.get(folder) or verdict(folder)
            last_folder = folder
        if excluded or (exclude_match is not None and exclude_match(path, False)):
            continue
        if not included and (include_match is None or not include_match(path, False)):
            continue
        if cap is not None and entry.size > cap:
            too_large += 1
            continue
        kept.append(entry)
    return FileList(kept, SkipCounts(too_large=too_large), base.ignored)


def listing_key(
    rel: str, include: Sequence[str], exclude: Sequence[str], any_size: bool
) -> tuple[object, ...]:
    """What a kept listing is filed under (``Workspace.list_files``)."""
    return (rel, tuple(include), tuple(exclude), any_size)


def copy_listing(listing: FileList) -> FileList:
    """A listing whose skip counters the caller may add to without touching the cached one."""
    return replace(listing, skipped=replace(listing.skipped))
