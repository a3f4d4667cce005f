"""Trigram postings as a few hundred 32-bit roaring bitmaps, and the numpy trigram extractor.

A posting is the set of file ids holding one trigram (a 24-bit value: the folded bytes
``b0 | b1 << 8 | b2 << 16``). Rather than one Python ``BitMap`` per trigram (about a million
objects for the kernel: slow to build, to save and to load), every ``(trigram, file id)`` pair
is one 32-bit key in a *partition* bitmap: with ``fid_bits`` bits for the file id, the key is
``(trigram low bits) << fid_bits | fid`` and the trigram's remaining high bits pick the
partition. Roaring's containers (keyed by a key's high 16 bits) are then one trigram's
postings for a run of 65,536 ids; a lookup is one ``&`` with a range and a ``shift``
(microseconds), and the whole index is a few hundred blobs (the kernel's: 512).

Building is batched pairs ``trigram << 32 | fid`` (``uint64``), grouped and sorted in numpy
and appended partition by partition; numpy is imported only for builds and re-layouts, so a
cold search that loads an index never pays for it. When file ids outgrow ``fid_bits`` (or dead
ids pile up) ``relayout`` renumbers every pair without re-reading a file.
"""

from __future__ import annotations

import array
import struct
from collections.abc import Iterator
from typing import TYPE_CHECKING, cast

from pyroaring import BitMap

from sleuth.prefilter import fold

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["Postings", "GramExtractor", "MIN_FID_BITS", "fid_bits_for"]

GRAM_BITS = 24
MIN_FID_BITS = 17
"""File ids of at least 17 bits (131,072 ids) keep partitions few: 2**(fid_bits - 8) at most."""
_PART = struct.Struct("<IQ")  # partition number, blob length


def fid_bits_for(ids: int) -> int:
    """The smallest ``fid_bits`` whose ids cover ``ids`` files (a 32-bit key needs <= 32)."""
    bits = max(MIN_FID_BITS, max(ids - 1, 1).bit_length())
    if bits > 32:
        raise ValueError(f"{ids} file ids do not fit a 32-bit key")
    return bits


class Postings:
    """All postings of one index: partition number -> 32-bit ``BitMap`` of keys."""

    def __init__(self, fid_bits: int = MIN_FID_BITS) -> None:
        self.fid_bits = fid_bits
        self._parts: dict[int, BitMap] = {}

    @property
    def capacity(self) -> int:
        """File ids below this fit the layout."""
        return 1 << self.fid_bits

    def __bool__(self) -> bool:
        return bool(self._parts)

    def get(self, gram: int) -> BitMap:
        """The file ids (dead ones included) whose trigrams include ``gram``."""
        low = 32 - self.fid_bits
        part = self._parts.get(gram >> low)
        if part is None:
            return BitMap()
        lo = (gram & ((1 << low) - 1)) << self.fid_bits
        found = part & BitMap(range(lo, lo + self.capacity))
        return found.shift(-lo) if lo else found

    def add_file(self, fid: int, grams: BitMap) -> None:
        """Add one file's trigrams without numpy (a few files synced in a cold process)."""
        low, bits = 32 - self.fid_bits, self.fid_bits
        mask = (1 << low) - 1
        grouped: dict[int, list[int]] = {}
        for gram in grams:
            grouped.setdefault(gram >> low, []).append(((gram & mask) << bits) | fid)
        for part, keys in grouped.items():
            self._part(part).update(keys)

    def add_pairs(self, pairs: npt.NDArray[np.uint64]) -> None:
        """Add ``trigram << 32 | fid`` pairs, in any order (fids below ``capacity``).

        Pairs are grouped by partition with a stable radix argsort of the partition numbers
        (``uint16``), then each partition's 32-bit keys are sorted on their own: cheaper than
        sorting the ``uint64`` pairs, and roaring appends sorted keys fastest.
        """
        import numpy as np

        if not len(pairs):
            return
        low = 32 - self.fid_bits
        grams = (pairs >> np.uint64(32)).astype(np.uint32)
        keys = (grams & np.uint32((1 << low) - 1)) << np.uint32(self.fid_bits)
        keys |= pairs.astype(np.uint32)  # the low 32 bits: the fid
        grams >>= np.uint32(low)
        parts = grams.astype(np.uint16) if self.fid_bits <= 24 else grams
        order = np.argsort(parts, kind="stable")
        keys, parts = keys[order], parts[order]
        cuts = np.flatnonzero(parts[1:] != parts[:-1]) + 1
        bounds = [0, *cuts.tolist(), len(parts)]
        for start, end in zip(bounds, bounds[1:], strict=False):
            chunk = np.sort(keys[start:end])
            self._part(int(parts[start])).update(array.array("I", chunk.tobytes()))

    def merge(self, other: Postings) -> None:
        """Union ``other`` (same ``fid_bits``) into this one."""
        if other.fid_bits != self.fid_bits:
            raise ValueError("postings of different layouts")
        for part, bm in other._parts.items():
            mine = self._parts.get(part)
            if mine is None:
                self._parts[part] = bm
            else:
                mine |= bm

    def relayout(self, fid_map: npt.NDArray[np.int64], fid_bits: int) -> Postings:
        """These postings with every fid ``f`` renamed ``fid_map[f]`` (dropped when < 0)."""
        import numpy as np

        out = Postings(fid_bits)
        low, mask = 32 - self.fid_bits, (1 << self.fid_bits) - 1
        for part in sorted(self._parts):
            keys = np.frombuffer(self._parts[part].to_array(), np.uint32)
            grams = (keys >> np.uint32(self.fid_bits)).astype(np.uint64)
            grams |= np.uint64(part << low)
            fids = fid_map[(keys & np.uint32(mask)).astype(np.intp)]
            keep = fids >= 0
            out.add_pairs((grams[keep] << np.uint64(32)) | fids[keep].astype(np.uint64))
        return out

    def drain(self) -> Iterator[bytes]:
        """Each partition as ``merge_blob`` takes it, dropped once serialized (this empties
        the postings, so a worker's memory shrinks as it sends them)."""
        for part in sorted(self._parts):
            bm = self._parts.pop(part)
            bm.run_optimize()
            yield struct.pack("<I", part) + bm.serialize()

    def merge_blob(self, blob: memoryview) -> None:
        """Union in one partition ``drain`` yielded."""
        (part,) = struct.unpack_from("<I", blob)
        # deserialize reads any buffer; the stub says bytes, and a copy would cost time
        bm = BitMap.deserialize(cast(bytes, blob[4:]))
        mine = self._parts.get(part)
        if mine is None:
            self._parts[part] = bm
        else:
            mine |= bm

    def _part(self, part: int) -> BitMap:
        bm = self._parts.get(part)
        if bm is None:
            bm = self._parts[part] = BitMap()
        return bm

    def blobs(self) -> Iterator[bytes]:
        """The serialized form, piece by piece: a count, then per partition a header + blob."""
        yield struct.pack("<II", self.fid_bits, len(self._parts))
        for part in sorted(self._parts):
            self._parts[part].run_optimize()
            blob = self._parts[part].serialize()
            yield _PART.pack(part, len(blob))
            yield blob

    @classmethod
    def from_buffer(cls, view: memoryview) -> Postings:
        """Postings from the bytes ``blobs`` wrote (ValueError when they do not add up)."""
        fid_bits, count = struct.unpack_from("<II", view)
        if not MIN_FID_BITS <= fid_bits <= 32:
            raise ValueError("bad fid_bits")
        out = cls(fid_bits)
        pos = 8
        for _ in range(count):
            part, length = _PART.unpack_from(view, pos)
            pos += _PART.size
            if pos + length > len(view):
                raise ValueError("truncated postings")
            # deserialize reads any buffer; the stub says bytes, and a copy would cost time
            out._parts[part] = BitMap.deserialize(cast(bytes, view[pos : pos + length]))
            pos += length
        if pos != len(view):
            raise ValueError("trailing bytes after the postings")
        return out


class GramExtractor:
    """Distinct trigrams of a file's bytes in numpy, with scratch reused across files.

    The folded bytes (``prefilter.fold``) are copied into a reused buffer; windows are read from it as unaligned little-endian ``uint32`` (masked to 24
    bits) and deduplicated without sorting: each trigram's slot in a 2**24-entry scratch array
    gets the position of its window, and a window is kept when its slot holds its own position
    (one window per trigram wins). The scratch is never cleared — every slot read was just
    written — and only touched pages cost memory. Every step writes into buffers of at most
    ``chunk`` windows (a big file is done in slices; a trigram found in two slices is simply
    added twice), so a file costs no allocation but its answer: no page faults, bounded memory.
    """

    def __init__(self, chunk: int = 1 << 20) -> None:
        import numpy as np

        self._chunk = chunk
        self._slots = np.empty(1 << GRAM_BITS, np.int32)
        self._positions = np.arange(chunk, dtype=np.int32)
        self._grams = np.empty(chunk, np.intp)  # intp: indexing with it converts nothing
        self._seen = np.empty(chunk, np.int32)
        self._keep = np.empty(chunk, np.bool_)
        self._folded = np.empty(0, np.uint8)

    def grams(self, data: bytes) -> npt.NDArray[np.intp]:
        """The distinct trigrams of ``data`` after folding (unordered; rare repeats allowed
        for files over ``chunk`` bytes)."""
        import numpy as np  # already loaded by __init__: a dict lookup

        n = len(data)
        if n < 3:
            return np.empty(0, np.intp)
        if len(self._folded) <= n:
            self._folded = np.empty(max(n + 1, 2 * len(self._folded)), np.uint8)
        folded = self._folded
        # bytes.lower is the fold and 5x faster than a numpy lookup table; one copy follows
        folded[:n] = np.frombuffer(fold(data), np.uint8)
        folded[n] = 0  # the 4-byte read of the last window
        found = []
        total = n - 2
        for start in range(0, total, self._chunk):
            m = min(self._chunk, total - start)
            windows = np.ndarray((m,), "<u4", buffer=folded, offset=start, strides=(1,))
            grams, seen = self._grams[:m], self._seen[:m]
            np.bitwise_and(windows, 0xFFFFFF, out=grams, casting="unsafe")
            positions = self._positions[:m]
            self._slots[grams] = positions
            np.take(self._slots, grams, out=seen)
            np.equal(seen, positions, out=self._keep[:m])
            found.append(grams[self._keep[:m]])
        unique: npt.NDArray[np.intp] = found[0] if len(found) == 1 else np.concatenate(found)
        return unique
