"""Parsing and parse trees: ``parse`` and a bounded, incremental tree cache.

``parse(lang, data)`` parses with a new tree-sitter ``Parser``: one must not be shared between
threads, and making one costs about a microsecond, lost in the parse (measured on sleuth's own
sources, a fresh parser per file parses as fast as one reused), so no pool of parsers is kept
anywhere. ``TreeCache`` keeps the trees of recently searched files for the long-running faces
(MCP server, in-process API): it is bounded by the bytes of source it holds (a tree costs about
25x its source in memory, so a 64 MiB budget of source is about 1.6 GiB of trees), evicts least
recently used files first, and when a file changed it reparses incrementally from the old tree
(``tree.edit`` + ``parse(new, old)``), which costs a fraction of a full parse. A reparse that
finds a syntax error is redone from scratch: tree-sitter's error recovery can differ between the
two, and the tree must be the one a fresh process would build.

An entry can also carry what was derived from its tree (the file's tags, ``attach``): ``revise``
hands back, besides the new tree, the previous version's edited tree, bytes, the edit between
them (one range: the common prefix and suffix) and what was attached to it, so a deriver can
redo only the part the edit touched (``tags_update``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from tree_sitter import Parser, Point, Tree

from sleuth.ast_search.languages import get_lang_spec, language_for_path

__all__ = ["parse", "TreeCache", "DEFAULT_CACHE_BYTES", "Edit", "Revision", "Previous"]

DEFAULT_CACHE_BYTES = 64 * 1024 * 1024


def parse(lang: str, data: bytes, old_tree: Tree | None = None) -> Tree:
    """Parse ``data`` as ``lang`` (reusing ``old_tree``, already edited, if given)."""
    parser = Parser(get_lang_spec(lang).ts_language)
    if old_tree is None:
        return parser.parse(data)
    return parser.parse(data, old_tree)


@dataclass(frozen=True)
class Edit:
    """One edit from old to new bytes: ``old[start:old_end]`` became ``new[start:new_end]``."""

    start: int
    old_end: int
    new_end: int

    @property
    def delta(self) -> int:
        """How far everything after the edit moved."""
        return self.new_end - self.old_end


@dataclass(frozen=True)
class Previous:
    """The version a tree was reparsed from: its tree (edited to the new positions), bytes,
    the edit, and what had been attached to it."""

    tree: Tree
    data: bytes
    edit: Edit
    attached: object


@dataclass(frozen=True)
class Revision:
    """A file's current tree; ``attached`` if this very version has something attached, else
    ``previous`` when it was reparsed from a version that had."""

    tree: Tree
    attached: object = None
    previous: Previous | None = None


@dataclass
class _Entry:
    lang: str
    stamp: str
    data: bytes
    tree: Tree
    attached: object = None


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
        return self.revise(path, stamp, data, name).tree

    def _reparse(self, lang: str, data: bytes, old: Tree) -> Tree | None:
        """``data`` reparsed from ``old`` (edited); None when the result has a syntax error:
        error recovery can differ between an incremental and a fresh parse, and a fresh
        parse is what a new process would see."""
        tree = parse(lang, data, old)
        if tree.root_node.has_error:
            return None
        self.reparses += 1
        return tree

    def revise(self, path: str, stamp: str, data: bytes, lang: str) -> Revision:
        """Like ``get``, with what was attached to this version or to the one reparsed from."""
        name = get_lang_spec(lang).name
        with self._lock:
            entry = self._entries.get(path)
            if entry is not None:
                self._entries.move_to_end(path)
        if entry is not None and entry.lang == name and entry.stamp == stamp:
            self.hits += 1
            return Revision(entry.tree, entry.attached)
        previous = None
        tree = None
        # An incremental parse is tried only from a tree without syntax errors: one from a
        # tree with errors nearly always has errors too and is then thrown away (``_reparse``),
        # which doubled the cost of every edit of such a file (C files with macros).
        if entry is not None and entry.lang == name and not entry.tree.root_node.has_error:
            old = entry.tree.copy()
            edit = _edit(old, entry.data, data)
            tree = self._reparse(name, data, old)
            if tree is not None and entry.attached is not None:
                previous = Previous(old, entry.data, edit, entry.attached)
        if tree is None:
            tree = parse(name, data)
            self.parses += 1
        self._store(path, _Entry(name, stamp, data, tree))
        return Revision(tree, None, previous)

    def attach(self, path: str, stamp: str, value: object) -> None:
        """Keep ``value`` with the tree of ``path`` at ``stamp`` (if that is the one held)."""
        with self._lock:
            entry = self._entries.get(path)
            if entry is not None and entry.stamp == stamp:
                entry.attached = value

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


def _edit(tree: Tree, old: bytes, new: bytes) -> Edit:
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
    return Edit(start, old_end, new_end)
