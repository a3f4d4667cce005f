"""A file-level trigram index: which files can contain a literal, answered in milliseconds.

Every indexed file contributes the set of 3-byte windows of its ASCII-case-folded content
(``bytes.lower()``, the folding of ``literals.fold``); postings map a trigram to a
``pyroaring.BitMap`` of file ids. A ``Literals`` hint (AND of OR-groups) is answered by
intersecting the postings of each literal's trigrams, so the result is a *superset* of the files
that really contain the literals — the verifier still runs on every candidate (non-positional
trigrams give false positives, never false negatives: benchmarks/RESULTS.md#measured-constraints).

Why it looks the way it does:
- Trigram extraction is pure Python without numpy: the folded bytes are re-laid out with three
  strided ``bytearray`` copies into 4-byte words ``(b0, b1, b2, 0)`` and read as native ``uint32``
  through ``memoryview.cast`` — every window is produced in C (Django, 36.7 MB: about 3 s).
- Postings are built in batches by appending file ids to per-trigram lists with a ``map`` loop
  that runs in C, then turned into bitmaps once (a per-pair ``BitMap.add`` is ~2x slower).
- Files over ``MAX_INDEXED_BYTES`` are tracked but not indexed and are *always* candidates, so
  the index never hides a file the searcher could match.
- The on-disk snapshot is a versioned header, a JSON file table and ``BitMap.serialize`` blobs
  (no pickle: ``.sleuth/`` lives inside an untrusted workspace), written atomically.
"""

from __future__ import annotations

import array
import json
import os
import struct
import sys
import tempfile
import zlib
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Sequence
from itertools import repeat
from pathlib import Path
from typing import cast

from pyroaring import BitMap

from sleuth.prefilter import Literals, fold

__all__ = ["TrigramIndex", "MAX_INDEXED_BYTES", "trigrams_of"]

MAX_INDEXED_BYTES = 8 * 1024 * 1024
"""Files larger than this are not indexed (the size cap, docs/faces.md#which-files-are-searched) and
are always candidates."""

_MAGIC = b"SLTRIGRM"
_VERSION = 1
_HEADER = struct.Struct("<8sIBQQI")  # magic, version, little-endian?, meta length, body length, crc
_SKIPPED = -1  # fid of a file the reader declined (None): tracked by key, never a candidate


def trigrams_of(data: bytes) -> BitMap:
    """The distinct trigrams of ``data`` after folding, each as a native ``uint32``."""
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


def _array(typecode: str, data: memoryview) -> array.array[int]:
    out = array.array(typecode)
    out.frombytes(data)
    return out


class TrigramIndex:
    """In-memory trigram index over a set of workspace files, keyed by ``(size, mtime_ns)``."""

    def __init__(self) -> None:
        self._keys: dict[str, tuple[int, int]] = {}
        self._fids: dict[str, int] = {}  # path -> file id (_SKIPPED for declined files)
        self._paths: dict[int, str] = {}  # file id -> path, indexed and oversize files only
        self._file_grams: dict[int, BitMap] = {}  # file id -> its trigrams (for removal)
        self._postings: dict[int, BitMap] = {}  # trigram -> file ids
        self._unindexed = BitMap()  # oversize files: always candidates
        self._next_id = 0

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
        self, entries: Sequence[tuple[str, int, int]], read: Callable[[str], bytes | None]
    ) -> int:
        """Make the index match ``entries`` (path, size, mtime_ns); return files (re)indexed.

        New and changed files are read through ``read`` (``None`` means "not searchable": the
        file is remembered by key and is never a candidate); files absent from ``entries`` are
        dropped.
        """
        wanted: dict[str, tuple[int, int]] = {p: (s, m) for p, s, m in entries}
        changed = [p for p, k in wanted.items() if self._keys.get(p) != k]
        vanished = [p for p in self._keys if p not in wanted]
        self._remove_many(vanished + changed)
        self._add_many((p, wanted[p], read(p)) for p in changed)
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
        result |= self._unindexed
        paths = self._paths
        found = {paths[f] for f in result}
        # declined files (binary, unreadable) stay candidates so the reader counts them as
        # skipped (never silent: docs/faces.md#which-files-are-searched); for a warm reader they
        # cost one stat each
        found.update(p for p, fid in self._fids.items() if fid == _SKIPPED)
        return found

    def _literal_files(self, literal: bytes) -> BitMap:
        grams = trigrams_of(literal)
        postings = []
        for gram in grams:
            posting = self._postings.get(gram)
            if posting is None:
                return BitMap()
            postings.append(posting)
        postings.sort(key=len)  # smallest first keeps intermediate results small
        return BitMap.intersection(*postings) if len(postings) > 1 else BitMap(postings[0])

    def _remove_many(self, paths: Iterable[str]) -> None:
        for path in paths:
            self._keys.pop(path, None)
            fid = self._fids.pop(path, None)
            if fid is None or fid == _SKIPPED:
                continue
            self._paths.pop(fid, None)
            self._unindexed.discard(fid)
            grams = self._file_grams.pop(fid, None)
            if grams is not None:
                for gram in grams.to_array():
                    posting = self._postings[gram]
                    posting.discard(fid)
                    if not posting:
                        del self._postings[gram]

    def _add_many(self, items: Iterable[tuple[str, tuple[int, int], bytes | None]]) -> int:
        pending: defaultdict[int, list[int]] = defaultdict(list)
        get, append = pending.__getitem__, list.append
        added = 0
        for path, key, data in items:
            self._keys[path] = key
            if data is None:
                self._fids[path] = _SKIPPED
                continue
            fid = self._next_id
            self._next_id += 1
            self._fids[path] = fid
            self._paths[fid] = path
            added += 1
            if len(data) > MAX_INDEXED_BYTES:
                self._unindexed.add(fid)
                continue
            grams = trigrams_of(data)
            self._file_grams[fid] = grams
            # Runs in C: pending[gram].append(fid) for every trigram of the file.
            deque(map(append, map(get, grams.to_array()), repeat(fid)), 0)
        postings = self._postings
        for gram, fids in pending.items():
            posting = postings.get(gram)
            if posting is None:
                postings[gram] = BitMap(fids)
            else:
                posting.update(fids)
        return added

    def save(self, path: Path) -> None:
        """Write a snapshot atomically (temp file + ``os.replace``) to ``path``."""
        files = [[p, fid, *self._keys[p]] for p, fid in self._fids.items()]
        meta = json.dumps(
            {"files": files, "next_id": self._next_id, "unindexed": list(self._unindexed)}
        ).encode()
        grams_order = [fid for _, fid, *_ in files if fid in self._file_grams]
        trigram_keys = array.array("I", self._postings.keys())
        blobs = [self._file_grams[fid].serialize() for fid in grams_order]
        blobs += [p.serialize() for p in self._postings.values()]
        lengths = array.array("Q", map(len, blobs))
        counts = array.array("Q", [len(grams_order), len(trigram_keys)])
        body = b"".join([counts.tobytes(), trigram_keys.tobytes(), lengths.tobytes(), *blobs])
        header = _HEADER.pack(
            _MAGIC,
            _VERSION,
            sys.byteorder == "little",
            len(meta),
            len(body),
            zlib.crc32(body, zlib.crc32(meta)),
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(header)
                fh.write(meta)
                fh.write(body)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    @classmethod
    def load(cls, path: Path) -> TrigramIndex | None:
        """Read a snapshot written by ``save``; None if missing, corrupt or from another version."""
        try:
            raw = path.read_bytes()
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
        counts = _array("Q", body[:16])
        n_files, n_grams = counts[0], counts[1]
        pos = 16
        trigram_keys = _array("I", body[pos : pos + 4 * n_grams])
        pos += 4 * n_grams
        lengths = _array("Q", body[pos : pos + 8 * (n_files + n_grams)])
        pos += 8 * (n_files + n_grams)
        bitmaps = []
        for length in lengths:
            # deserialize reads any buffer; the stub says bytes, and a copy would double the cost
            bitmaps.append(BitMap.deserialize(cast(bytes, body[pos : pos + length])))
            pos += length
        if pos != len(body):
            return None
        index = cls()
        for p, fid, size, mtime_ns in meta["files"]:
            index._keys[p] = (int(size), int(mtime_ns))
            index._fids[p] = int(fid)
            if fid != _SKIPPED:
                index._paths[int(fid)] = p
        oversize = set(meta["unindexed"])
        grams_order = [
            int(f[1]) for f in meta["files"] if f[1] != _SKIPPED and f[1] not in oversize
        ]
        if len(grams_order) != n_files:
            return None
        index._file_grams = dict(zip(grams_order, bitmaps[:n_files], strict=True))
        index._postings = dict(zip(trigram_keys, bitmaps[n_files:], strict=True))
        index._unindexed = BitMap(meta["unindexed"])
        index._next_id = int(meta["next_id"])
        return index
