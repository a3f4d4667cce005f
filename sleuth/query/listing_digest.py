"""The digest of a listing: part of every result's identity (``execute._fingerprint``).

A result is reused only while the files it was computed over are the same, so its identity
hashes (path, size, mtime) of every listed file. Hashing 7,000 entries costs ~5 ms, once per
listing: a watched workspace hands out the same list object until something changes, and a
watcher's patched listing (``workspace.listing_patch``) keeps the entries it did not replace.
So each entry's own 8-byte digest is kept, and a listing of the same length as the last one
re-hashes only the entries that are not the very same objects; the listing's digest is the
xxh3 of the entries' digests in order. The memo is a ``ListingDigests`` instance: the session
owns one (``service.session.Session``) and lends it to the engines (``execute.Engines``);
``listing_digest`` alone computes from scratch.
"""

from __future__ import annotations

import xxhash

from sleuth.tuning import Tuning
from sleuth.workspace import FileEntry
from sleuth.workspace.listing_patch import replaced_entries

__all__ = ["ListingDigests", "listing_digest"]


def _entry(f: FileEntry) -> bytes:
    return xxhash.xxh3_64_digest(
        f"{f.path}\0{f.size}\0{f.mtime_ns}\0{f.ctime_ns}".encode("utf-8", "surrogateescape")
    )


def listing_digest(files: list[FileEntry], memo: ListingDigests | None = None) -> str:
    """xxh3 of the per-entry digests of ``files`` (through ``memo`` when given)."""
    if memo is not None:
        return memo.digest(files)
    return xxhash.xxh3_64_hexdigest(b"".join(map(_entry, files)))


class ListingDigests:
    """Listing digests memoised per listing object, and the last listing's entry digests."""

    def __init__(self, tuning: Tuning | None = None) -> None:
        tuning = tuning if tuning is not None else Tuning()
        self.max_listings = tuning.listing_digest_memo
        self._memo: dict[int, tuple[list[FileEntry], str]] = {}
        self._last: tuple[list[FileEntry], bytearray] | None = None

    def digest(self, files: list[FileEntry]) -> str:
        """xxh3 of the per-entry digests of ``files``, memoised per listing object."""
        hit = self._memo.get(id(files))
        if hit is not None and hit[0] is files:
            return hit[1]
        last = self._last
        replaced = replaced_entries(last[0], files) if last is not None else None
        if last is not None and replaced is not None:
            digests = bytearray(last[1])
            for i in replaced:
                digests[8 * i : 8 * i + 8] = _entry(files[i])
        else:
            digests = bytearray(b"".join(map(_entry, files)))
        self._last = (files, digests)
        digest = xxhash.xxh3_64_hexdigest(digests)
        if len(self._memo) >= self.max_listings:
            self._memo.clear()
        self._memo[id(files)] = (files, digest)
        return digest

    def clear(self) -> None:
        self._memo.clear()
        self._last = None
