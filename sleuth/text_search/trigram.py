"""A file-level trigram index: which files can contain a literal, answered in milliseconds.

Every indexed file contributes the set of 3-byte windows of its ASCII-case-folded content
(``bytes.lower()``, the folding of ``literals.fold``); postings map a trigram to the file ids
holding it (``trigram_postings.Postings``: a few hundred roaring bitmaps, not one per trigram).
A ``Literals`` hint (AND of OR-groups) is answered by intersecting the postings of each
literal's trigrams, so the result is a *superset* of the files that really contain the
literals — the verifier still runs on every candidate (non-positional trigrams give false
positives, never false negatives: benchmarks/RESULTS.md#measured-constraints).

Why it looks the way it does:
- Many new files at once (a cold build) go through ``trigram_build``: numpy batches, on forked
  workers when there are cores for them, with ``on_progress(done, total)``. A few files (a sync
  in a cold CLI) are added in pure Python, so a search that loads an index never imports numpy.
- A removed or changed file's id is only marked dead (dropped from ``_live``, which every answer
  is masked with); its pairs stay in the postings until dead ids outnumber live ones, or ids
  outgrow the layout, and ``_compact`` renumbers the live ids without re-reading a file. So no
  per-file trigram set is kept (it doubled memory and the snapshot).
- Files over ``MAX_INDEXED_BYTES`` are tracked but not indexed and are *always* candidates, so
  the index never hides a file the searcher could match.
- The on-disk snapshot is a versioned header, a JSON file table and the postings' roaring blobs
  (no pickle: ``.sleuth/`` lives inside an untrusted workspace), written atomically. A snapshot
  of another version (version 1 kept per-trigram bitmaps) loads as None and is rebuilt.
"""

from __future__ import annotations

import array
import json
import os
import struct
import sys
import tempfile
import zlib
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from pyroaring import BitMap

from sleuth.prefilter import Literals, fold
from sleuth.text_search.trigram_build import (
    MAX_INDEXED_BYTES,
    BuildPlan,
    Progress,
    build_postings,
)
from sleuth.text_search.trigram_postings import Postings, fid_bits_for
from sleuth.workspace.rooted import read_file

__all__ = ["TrigramIndex", "MAX_INDEXED_BYTES", "trigrams_of", "BuildPlan", "Progress"]

_MAGIC = b"SLTRIGRM"
_VERSION = 2
_HEADER = struct.Struct("<8sIBQQI")  # magic, version, little-endian?, meta length, body length, crc
_SKIPPED = -1  # fid of a file the reader declined (None): tracked by key, never a candidate
_MIN_DEAD = 4096  # dead ids tolerated before a compaction is worth its numpy import


def trigrams_of(data: bytes) -> BitMap:
    """The distinct trigrams of ``data`` after folding, each as a native ``uint32``.

    Pure Python (three strided copies into 4-byte words read as ``uint32``): used for literals
    and the few files of a small sync, where importing numpy would cost more than it saves.
    """
    data = fold(data)
    n = len(data)
    result = BitMap()
    for k in range(3):
        m = (n - k) // 3
        if m <= 0:
            continue
        end = k + 3 * m
        buf = bytearray(4 * m)
        buf[0::4] = data[k:end:3]
        buf[1::4] = data[k + 1 : end + 1 : 3]
        buf[2::4] = data[k + 2 : end + 2 : 3]
        result |= BitMap(array.array("I", bytes(buf)))
    return result


class TrigramIndex:
    """In-memory trigram index over a set of workspace files, keyed by ``(size, mtime_ns)``."""

    def __init__(self) -> None:
        self._keys: dict[str, tuple[int, int]] = {}
        self._fids: dict[str, int] = {}  # path -> file id (_SKIPPED for declined files)
        self._paths: dict[int, str] = {}  # file id -> path, indexed and oversize files only
        self._postings = Postings()
        self._live = BitMap()  # indexed files' ids: the only ids an answer may hold
        self._unindexed = BitMap()  # oversize files: always candidates
        self._next_id = 0
        self._dead = 0  # ids still in the postings whose file is gone or changed

    def __len__(self) -> int:
        return len(self._keys)

    def known(self, path: str) -> tuple[int, int] | None:
        """The ``(size, mtime_ns)`` key stored for ``path``, or None if the index lacks it."""
        return self._keys.get(path)

    def update(self, path: str, key: tuple[int, int], data: bytes | None) -> None:
        """(Re)index one file; a no-op when ``key`` is unchanged. ``None`` data = do not search."""
        if self._keys.get(path) == key:
            return
        self._remove_many([path])
        self._add_many([(path, key, data)])

    def remove(self, path: str) -> None:
        """Forget ``path`` (a no-op when it is not indexed)."""
        self._remove_many([path])

    def sync(
        self,
        entries: Sequence[tuple[str, int, int]],
        read: Callable[[str], bytes | None],
        *,
        on_progress: Progress | None = None,
        plan: BuildPlan | None = None,
    ) -> int:
        """Make the index match ``entries`` (path, size, mtime_ns); return files (re)indexed.

        New and changed files are read through ``read`` (``None`` means "not searchable": the
        file is remembered by key and is never a candidate); files absent from ``entries`` are
        dropped. ``on_progress(done, total)`` follows the files being read; with many of them
        ``read`` may be called in forked workers, so it must take no lock another thread of
        this process could hold (``trigram_build``).
        """
        plan = plan or BuildPlan()
        wanted: dict[str, tuple[int, int]] = {p: (s, m) for p, s, m in entries}
        changed = [p for p, k in wanted.items() if self._keys.get(p) != k]
        vanished = [p for p in self._keys if p not in wanted]
        self._remove_many(vanished + changed)
        if len(changed) >= plan.min_bulk_files:
            self._add_bulk(changed, wanted, read, plan, on_progress)
        else:
            self._add_many((p, wanted[p], read(p)) for p in changed)
            if on_progress is not None:
                on_progress(len(changed), len(changed))
        return len(changed)

    def candidates(self, literals: Literals | None) -> set[str] | None:
        """Paths that may contain ``literals`` (AND of OR-groups), or None if it cannot narrow.

        A group with a literal shorter than 3 bytes (or no literal) is ignored, since trigrams
        cannot speak for it; when every group is ignored the answer is None ("search all").
        Only files the index knows are considered: ``sync`` first.
        """
        if not literals:
            return None
        result: BitMap | None = None
        for group in literals:
            if not group or any(len(alt) < 3 for alt in group):
                continue
            files = BitMap()
            for alt in group:
                files |= self._literal_files(alt)
            result = files if result is None else result & files
        if result is None:
            return None
        result &= self._live
        result |= self._unindexed
        paths = self._paths
        found = {paths[f] for f in result}
        # declined files (binary, unreadable) stay candidates so the reader counts them as
        # skipped (never silent: docs/faces.md#which-files-are-searched); for a warm reader they
        # cost one stat each
        found.update(p for p, fid in self._fids.items() if fid == _SKIPPED)
        return found

    def _literal_files(self, literal: bytes) -> BitMap:
        postings = []
        for gram in trigrams_of(literal):
            posting = self._postings.get(gram)
            if not posting:
                return BitMap()
            postings.append(posting)
        postings.sort(key=len)  # smallest first keeps intermediate results small
        return BitMap.intersection(*postings) if len(postings) > 1 else postings[0]

    def _remove_many(self, paths: Iterable[str]) -> None:
        for path in paths:
            self._keys.pop(path, None)
            fid = self._fids.pop(path, None)
            if fid is None or fid == _SKIPPED:
                continue
            self._paths.pop(fid, None)
            self._unindexed.discard(fid)
            if fid in self._live:
                self._live.discard(fid)
                self._dead += 1

    def _reserve(self, count: int) -> None:
        """Make room for ``count`` new ids, compacting when ids run out or dead ones pile up."""
        full = self._next_id + count > self._postings.capacity
        wasteful = self._dead > max(_MIN_DEAD, len(self._live))
        if not self._postings and self._next_id == 0:
            self._postings = Postings(fid_bits_for(count))
        elif full or wasteful:
            self._compact(count)

    def _compact(self, room: int) -> None:
        """Renumber the live ids 0..n-1 in id order, dropping dead pairs (no file re-read)."""
        import numpy as np

        old = sorted(self._paths)
        fid_map = np.full(max(self._next_id, 1), -1, np.int64)
        fid_map[np.asarray(old, dtype=np.intp)] = np.arange(len(old), dtype=np.int64)
        # a quarter of headroom: a tree just under a power of two of files must not re-layout
        # on every update
        bits = fid_bits_for(len(old) + max(room, len(old) // 4))
        self._postings = self._postings.relayout(fid_map, bits)
        renamed = {old_fid: new_fid for new_fid, old_fid in enumerate(old)}
        self._paths = {renamed[f]: p for f, p in self._paths.items()}
        self._fids = {p: f if f == _SKIPPED else renamed[f] for p, f in self._fids.items()}
        self._live = BitMap(renamed[f] for f in self._live)
        self._unindexed = BitMap(renamed[f] for f in self._unindexed)
        self._next_id, self._dead = len(old), 0

    def _new_file(self, path: str, key: tuple[int, int]) -> int:
        fid = self._next_id
        self._next_id += 1
        self._keys[path] = key
        self._fids[path] = fid
        self._paths[fid] = path
        return fid

    def _add_many(self, items: Iterable[tuple[str, tuple[int, int], bytes | None]]) -> None:
        for path, key, data in items:
            if data is None:
                self._keys[path] = key
                self._fids[path] = _SKIPPED
                continue
            self._reserve(1)
            fid = self._new_file(path, key)
            if len(data) > MAX_INDEXED_BYTES:
                self._unindexed.add(fid)
                continue
            self._postings.add_file(fid, trigrams_of(data))
            self._live.add(fid)

    def _add_bulk(
        self,
        paths: Sequence[str],
        wanted: dict[str, tuple[int, int]],
        read: Callable[[str], bytes | None],
        plan: BuildPlan,
        on_progress: Progress | None,
    ) -> None:
        self._reserve(len(paths))
        jobs = [(self._new_file(p, wanted[p]), p) for p in paths]
        try:
            built = build_postings(
                jobs, read, self._postings.fid_bits, plan=plan, on_progress=on_progress
            )
        except BaseException:
            self._remove_many(paths)  # ids never went live: nothing dead is left behind
            raise
        self._postings.merge(built.postings)
        new = BitMap(fid for fid, _ in jobs)
        for fid in built.declined:
            self._fids[self._paths.pop(fid)] = _SKIPPED
        oversize = BitMap(built.oversize)
        self._unindexed |= oversize
        self._live |= new - BitMap(built.declined) - oversize

    def save(self, path: Path) -> None:
        """Write a snapshot atomically (temp file + ``os.replace``) to ``path``."""
        files = [[p, fid, *self._keys[p]] for p, fid in self._fids.items()]
        meta = json.dumps(
            {
                "files": files,
                "next_id": self._next_id,
                "unindexed": list(self._unindexed),
                "dead": self._dead,
            }
        ).encode()
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                # the body is streamed (hundreds of MB for a large tree): the header, which
                # holds its length and CRC, is written last over a placeholder
                fh.write(b"\0" * _HEADER.size)
                fh.write(meta)
                crc, length = zlib.crc32(meta), 0
                for blob in self._postings.blobs():
                    fh.write(blob)
                    crc, length = zlib.crc32(blob, crc), length + len(blob)
                fh.seek(0)
                little = sys.byteorder == "little"
                fh.write(_HEADER.pack(_MAGIC, _VERSION, little, len(meta), length, crc))
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    @classmethod
    def load(cls, path: Path) -> TrigramIndex | None:
        """Read a snapshot written by ``save``; None if missing, corrupt or from another version."""
        try:
            raw = read_file(path)  # no FIFO opened, no symlink followed: .sleuth/ may be planted
            return cls._decode(raw)
        except Exception:  # a bad snapshot only costs a rebuild (docs/faces.md#state-sleuth)
            return None

    @classmethod
    def _decode(cls, raw: bytes) -> TrigramIndex | None:
        magic, version, little, meta_len, body_len, crc = _HEADER.unpack_from(raw)
        start = _HEADER.size
        if magic != _MAGIC or version != _VERSION or little != (sys.byteorder == "little"):
            return None
        if len(raw) != start + meta_len + body_len:
            return None
        view = memoryview(raw)
        meta_raw, body = view[start : start + meta_len], view[start + meta_len :]
        if zlib.crc32(body, zlib.crc32(meta_raw)) != crc:
            return None
        meta = json.loads(bytes(meta_raw))
        index = cls()
        index._postings = Postings.from_buffer(body)
        index._next_id = int(meta["next_id"])
        if index._next_id > index._postings.capacity:
            return None
        index._unindexed = BitMap(int(f) for f in meta["unindexed"])
        live = []
        for p, fid, size, mtime_ns in meta["files"]:
            fid = int(fid)
            index._keys[p] = (int(size), int(mtime_ns))
            index._fids[p] = fid
            if fid != _SKIPPED:
                if not 0 <= fid < index._next_id:
                    return None
                index._paths[fid] = p
                if fid not in index._unindexed:
                    live.append(fid)
        index._live = BitMap(live)
        index._dead = int(meta["dead"])
        return index
