"""Parsers and parse trees: a per-thread parser pool and a bounded, incremental tree cache.

``parse(lang, data)`` parses with a parser owned by the calling thread (a tree-sitter
``Parser`` must not be shared between threads). ``TreeCache`` keeps the trees of recently
searched files for the long-running faces (MCP server, in-process API): it is bounded by the
bytes of source it holds (a tree costs about 25x its source in memory, so a 64 MiB budget of
source is about 1.6 GiB of trees), evicts least recently used files first, and when a file
changed it reparses incrementally from the old tree (``tree.edit`` + ``parse(new, old)``),
which costs a fraction of a full parse.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from tree_sitter import Parser, Point, Tree

from sleuth.ast_search.languages import get_lang_spec, language_for_path

__all__ = ["parse", "TreeCache", "DEFAULT_CACHE_BYTES"]

DEFAULT_CACHE_BYTES = 64 * 1024 * 1024

_local = threading.local()


def _parser(lang: str) -> Parser:
    pool: dict[str, Parser] | None = getattr(_local, "parsers", None)
    if pool is None:
        pool = _local.parsers = {}
    parser = pool.get(lang)
    if parser is None:
        parser = pool[lang] = Parser(get_lang_spec(lang).ts_language)
    return parser


def parse(lang: str, data: bytes, old_tree: Tree | None = None) -> Tree:
    """Parse ``data`` as ``lang`` (reusing ``old_tree``, already edited, if given)."""
    parser = _parser(get_lang_spec(lang).name)
    if old_tree is None:
        return parser.parse(data)
    return parser.parse(data, old_tree)


@dataclass
class _Entry:
    lang: str
    stamp: str
    data: bytes
    tree: Tree


class TreeCache:
    """Trees of recently used files, bounded by ``max_bytes`` of source; thread-safe."""

    def __init__(self, max_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.reparses = 0
        self.parses = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def size_bytes(self) -> int:
        return self._bytes

    def get(self, path: str, stamp: str, data: bytes, lang: str | None = None) -> Tree:
        """The tree of ``data`` (the bytes of ``path`` stamped ``stamp``).

        ``lang`` defaults to the language of the path's extension. A cached tree with the same
        stamp is returned as is; one with another stamp is edited and reparsed incrementally.
        """
        name = lang or language_for_path(path)
        if name is None:
            name = get_lang_spec(path.rsplit(".", 1)[-1]).name  # raises Unsupported
        name = get_lang_spec(name).name
        with self._lock:
            entry = self._entries.get(path)
            if entry is not None:
                self._entries.move_to_end(path)
        if entry is not None and entry.lang == name and entry.stamp == stamp:
            self.hits += 1
            return entry.tree
        if entry is not None and entry.lang == name:
            old = entry.tree.copy()
            _edit(old, entry.data, data)
            tree = parse(name, data, old)
            self.reparses += 1
        else:
            tree = parse(name, data)
            self.parses += 1
        self._store(path, _Entry(name, stamp, data, tree))
        return tree

    def discard(self, path: str) -> None:
        """Forget ``path`` (deleted or moved)."""
        with self._lock:
            entry = self._entries.pop(path, None)
            if entry is not None:
                self._bytes -= len(entry.data)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    def _store(self, path: str, entry: _Entry) -> None:
        with self._lock:
            old = self._entries.pop(path, None)
            if old is not None:
                self._bytes -= len(old.data)
            if len(entry.data) > self.max_bytes:
                return  # larger than the whole budget: parse every time
            self._entries[path] = entry
            self._bytes += len(entry.data)
            while self._bytes > self.max_bytes and self._entries:
                _, evicted = self._entries.popitem(last=False)
                self._bytes -= len(evicted.data)


def _point(data: bytes, offset: int) -> Point:
    row = data.count(b"\n", 0, offset)
    line_start = data.rfind(b"\n", 0, offset) + 1
    return Point(row, offset - line_start)


def _edit(tree: Tree, old: bytes, new: bytes) -> None:
    """Describe the change from ``old`` to ``new`` to ``tree`` as one edit (common affixes)."""
    limit = min(len(old), len(new))
    start = 0
    # compare in blocks first: most edits touch a small part of a large file
    block = 4096
    while start + block <= limit and old[start : start + block] == new[start : start + block]:
        start += block
    while start < limit and old[start] == new[start]:
        start += 1
    suffix = 0
    max_suffix = limit - start
    while (
        suffix + block <= max_suffix
        and old[len(old) - suffix - block : len(old) - suffix]
        == new[len(new) - suffix - block : len(new) - suffix]
    ):
        suffix += block
    while suffix < max_suffix and old[len(old) - suffix - 1] == new[len(new) - suffix - 1]:
        suffix += 1
    old_end = len(old) - suffix
    new_end = len(new) - suffix
    tree.edit(
        start_byte=start,
        old_end_byte=old_end,
        new_end_byte=new_end,
        start_point=_point(old, start),
        old_end_point=_point(old, old_end),
        new_end_point=_point(new, new_end),
    )
