"""Patching cached listings from watcher events, so an edit does not cost a walk of the tree.

A long-running face caches file listings per watcher generation (``Workspace.list_files``).
Most changes an agent makes are edits of files already listed — saved in place (``modified``)
or written to a temporary file and renamed over the original (``added`` for a path that is
already listed, plus events for the temporary name, which is gone by the time the batch
arrives). For such a batch the cached listings are patched: each listed file's size and mtime
are stat'ed again and the listings move to the new generation. Anything else — a new or
deleted listed file, a folder, a symlink, an ignore or config file, a file now over the size
cap, an event outside the root — returns False and the caller drops the cache, as before.

What a listing leaves out stays out: a ``modified`` file that no cached listing holds was
ignored, denied or outside that listing's scope, and stays so (its rules did not change:
ignore and config files are never patched over).
"""

from __future__ import annotations

import bisect
import os
import stat
from collections.abc import Sequence
from dataclasses import replace
from itertools import compress, count
from operator import is_not

from sleuth.workspace.walker import FileEntry, FileList

__all__ = ["patch_listings", "replaced_entries", "RULE_FILES"]

RULE_FILES = frozenset(
    {".gitignore", ".ignore", ".rgignore", "exclude", "pyproject.toml", ".sleuth.toml", ".git"}
)
"""Files whose change can change what is listed: never patched over."""

Listings = dict[tuple[object, ...], tuple[int, FileList]]


def replaced_entries(old: Sequence[FileEntry], new: Sequence[FileEntry]) -> list[int] | None:
    """The positions where listing ``new`` holds another entry object than ``old`` (compared
    by identity, in C): after a patch, the files it re-stat'ed. None when the lengths differ
    (not a patch of ``old``: look at the whole listing)."""
    if len(old) != len(new):
        return None
    return list(compress(count(), map(is_not, old, new)))


def _index(files: list[FileEntry], rel: str) -> int | None:
    """Position of ``rel`` in a listing sorted by path, or None."""
    i = bisect.bisect_left(files, rel, key=lambda f: f.path)
    return i if i < len(files) and files[i].path == rel else None


def _listed(listings: Listings, rel: str) -> bool:
    return any(_index(listing.files, rel) is not None for _, listing in listings.values())


def patch_listings(
    listings: Listings,
    changes: set[tuple[str, str]],
    prefix: str,
    max_filesize: int,
    names: set[str],
    generation: int | None,
) -> bool:
    """Patch ``listings`` (in place) for one batch of ``(kind, absolute path)`` events now at
    ``generation``; False when the batch needs a walk (the caller clears the cache)."""
    if generation is None or names & RULE_FILES:
        return False
    current = {k: v for k, v in listings.items() if v[0] == generation - 1}
    if not current:
        return True  # nothing cached at the previous generation: nothing to patch
    stats: dict[str, os.stat_result] = {}
    for kind, path in changes:
        if not path.startswith(prefix):
            return False
        rel = path[len(prefix) :]
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            if _listed(current, rel):
                return False  # a listed file is gone
            continue  # a temporary file, created and removed within the batch
        except OSError:
            return False
        if not stat.S_ISREG(st.st_mode) or st.st_size > max_filesize:
            return False
        if not _listed(current, rel):
            if kind == "modified":
                continue  # ignored, denied or out of every cached scope: stays out
            return False  # a new file: its ignore rules need the walker
        stats[rel] = st
    patched: Listings = {}
    for key, (_, listing) in current.items():
        files = listing.files
        if any(_index(files, rel) is not None for rel in stats):
            files = list(files)  # listings handed out earlier keep their own entries
            for rel, st in stats.items():
                i = _index(files, rel)
                if i is not None:
                    files[i] = FileEntry(rel, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        patched[key] = (generation, replace(listing, files=files))
    listings.clear()
    listings.update(patched)
    return True
