"""Reading file contents for searches: ``stamp_bytes``, ``ContentCache`` and ``Reader``.

``Reader.read`` is the one door engines use to get bytes
(docs/architecture.md#engines-never-touch-the-disk: "Engines never touch the disk directly").
Per file it costs one ``lstat`` when the content cache is warm, and ``lstat`` + open + one
``os.read`` of the known size + close when cold (``open().read()`` is 2x slower here,
benchmarks/RESULTS.md#measured-constraints). Files are opened ``O_NONBLOCK`` and checked to be
regular, so a fifo can never hang a walk.

Outcomes are data, never exceptions (docs/faces.md#which-files-are-searched): a NUL byte in the
first 8 KiB -> ``skipped.binary``; over the size cap -> ``skipped.too_large``; any ``OSError``
(permission denied, vanished) -> ``skipped.unreadable``. Text is tagged ``utf-8-bom`` (starts with
EF BB BF), ``utf-8`` (decodes) or ``binary-safe`` (does not decode; still returned and searched as
bytes).

The cache is keyed by path and validated by (size, mtime_ns, ctime_ns, ino) — the ctime moves
on every write and every ``utime``, so a rewrite that restores the size and mtime is still seen;
it is bounded by total bytes (LRU). Like git's "racily clean" rule, a file changed within the
last two seconds is not cached: a write in the same tick could otherwise keep a stale entry.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

import xxhash

from sleuth.model import SkipCounts
from sleuth.workspace.text import Encoding, FileText

__all__ = ["stamp_bytes", "ContentCache", "Reader", "BINARY_PROBE", "BINARY", "UNWANTED", "Wanted"]

BINARY_PROBE = 8192
"""Bytes inspected for a NUL byte to call a file binary (docs/faces.md#which-files-are-searched)."""

_BOM = b"\xef\xbb\xbf"
_RACY_NS = 2_000_000_000
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)

BINARY = "binary"
"""Cache marker for a file known to be binary at a given key."""

UNWANTED = "unwanted"
"""``read_if``'s answer for a file read whole that its test turned down (not a skip)."""

Wanted = Callable[[bytes, int], bool]
"""A test of a file's bytes and its text's first offset (3 after a BOM): whether the caller
wants it as a ``FileText``."""

CacheKey = tuple[int, int, int, int]


def stamp_bytes(data: bytes) -> str:
    """The stamp of a file's content: xxh3-64 of its bytes, 16 hex digits."""
    return str(xxhash.xxh3_64(data).hexdigest())


def encoding_of(data: bytes) -> Encoding:
    """``utf-8-bom``, ``utf-8`` or ``binary-safe`` for ``data``."""
    bom = data.startswith(_BOM)
    if not bom and data.isascii():
        return "utf-8"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "binary-safe"  # a BOM before bytes that do not decode is no UTF-8 file either
    return "utf-8-bom" if bom else "utf-8"


class ContentCache:
    """LRU map path -> (key, FileText or ``BINARY``), bounded by the bytes it holds."""

    def __init__(self, max_bytes: int = 512 * 1024 * 1024) -> None:
        self.max_bytes = max_bytes
        self.total = 0
        self._items: OrderedDict[str, tuple[CacheKey, FileText | str]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, path: str, key: CacheKey) -> FileText | str | None:
        with self._lock:
            item = self._items.get(path)
            if item is None:
                return None
            if item[0] != key:
                self._drop(path)
                return None
            self._items.move_to_end(path)
            return item[1]

    def put(self, path: str, key: CacheKey, value: FileText | str) -> None:
        size = len(value.data) if isinstance(value, FileText) else 0
        if size > self.max_bytes:
            return
        items = self._items
        with self._lock:
            self._release(items.pop(path, None))
            items[path] = (key, value)
            self.total += size
            while self.total > self.max_bytes and items:
                self._release(items.popitem(last=False)[1])  # the least recently used

    def _drop(self, path: str) -> None:
        self._release(self._items.pop(path, None))

    def _release(self, item: tuple[CacheKey, FileText | str] | None) -> None:
        """Take a removed entry's bytes off ``total``."""
        if item is not None and isinstance(item[1], FileText):
            self.total -= len(item[1].data)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.total = 0


def _read_fd(fd: int, size: int) -> bytes:
    """All bytes of an open file whose size is believed to be ``size``."""
    data = os.read(fd, size) if size > 0 else b""
    if len(data) < size:
        chunks = [data]
        while True:
            more = os.read(fd, 1 << 20)
            if not more:
                break
            chunks.append(more)
        data = b"".join(chunks)
    return data


class Reader:
    """Reads workspace files into ``FileText`` with skip accounting and the content cache."""

    def __init__(self, root: str, max_filesize: int, cache: ContentCache | None = None) -> None:
        self.prefix = root.rstrip("/") + "/"
        self.max_filesize = max_filesize
        self.cache = cache if cache is not None else ContentCache()

    def read(self, rel: str, st: os.stat_result, skipped: SkipCounts | None) -> FileText | None:
        """``FileText`` of ``rel`` whose (followed) stat is ``st``, or None when skipped."""
        text = self.read_if(rel, st, skipped, None)
        return None if isinstance(text, str) else text

    def read_if(
        self, rel: str, st: os.stat_result, skipped: SkipCounts | None, wanted: Wanted | None
    ) -> FileText | str | None:
        """``read``, but a file read from disk that ``wanted`` turns down is ``UNWANTED``: no
        stamp, no ``FileText``, not cached. A scan that keeps only files with a match spends
        that on every file of a cold tree for nothing (a quarter of the kernel's first call)."""
        counts = skipped if skipped is not None else SkipCounts()
        if not stat.S_ISREG(st.st_mode):
            counts.unreadable += 1
            return None
        if st.st_size > self.max_filesize:
            counts.too_large += 1
            return None
        key = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
        hit = self.cache.get(rel, key)
        if hit is not None:
            if isinstance(hit, FileText):
                return hit
            counts.binary += 1
            return None
        try:
            fd = os.open(self.prefix + rel, _FLAGS)
        except OSError:
            counts.unreadable += 1
            return None
        try:
            data = _read_fd(fd, st.st_size)
        except OSError:
            counts.unreadable += 1
            return None
        finally:
            os.close(fd)
        cacheable = time.time_ns() - st.st_mtime_ns > _RACY_NS
        if data.find(b"\x00", 0, BINARY_PROBE) >= 0:  # no slice: a copy of 8 KiB per file
            if cacheable:
                self.cache.put(rel, key, BINARY)
            counts.binary += 1
            return None
        if len(data) > self.max_filesize:  # grew between stat and read
            counts.too_large += 1
            return None
        encoding = encoding_of(data)
        if wanted is not None and not wanted(data, 3 if encoding == "utf-8-bom" else 0):
            return UNWANTED
        text = FileText(rel, data, stamp_bytes(data), encoding)
        if cacheable:
            self.cache.put(rel, key, text)
        return text

    def stamp(self, rel: str, st: os.stat_result) -> str:
        """The stamp of ``rel``'s current bytes, whatever their size or kind (streamed)."""
        key = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
        hit = self.cache.get(rel, key)
        if isinstance(hit, FileText):
            return hit.stamp
        h = xxhash.xxh3_64()
        fd = os.open(self.prefix + rel, _FLAGS)
        try:
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                h.update(chunk)
        finally:
            os.close(fd)
        return str(h.hexdigest())
