"""The part of the cached graph that ``graph:PATH`` reads, loaded without the rest.

A one-shot process (a CLI call) answering ``graph:PATH`` from a cache that is current pays the
whole cache's load for one file's view (1.7-2.9 s on Django and the kernel's drivers/net).
That view reads the file's nodes, their edges in both directions and the nodes at the other
ends — nothing else. ``load_part`` builds a ``Graph`` of exactly the files that hold those:

- the files asked for (``wanted``: one file, or a folder's files);
- every file whose resolution has an edge into one of their nodes (found by reading each
  file's resolution row once, never its record: a fraction of the load's cost), with only
  those edges;
- the files their own edges lead to (the files their resolution read, ``deps``, and file
  nodes they import), likewise with only their edges into the wanted files.

The rows are restored as a full load restores them (``Graph.restore_rows``, in the cache's row
order), so every node and edge the view reads is the one a full load would hold — checked,
not assumed: an edge of a wanted file whose other end is missing from the part gives None (the
caller loads in full). So does anything else that is not plainly current: another cache
format, a file whose stored size and mtime differ from the listing's (or were never stored),
a file added or gone, or a part larger than a quarter of the graph (a full load then costs
about the same). The part is never written back (``GraphKeeper`` keeps it apart).
"""

from __future__ import annotations

import marshal
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Literal

from sleuth.graph.build import Graph
from sleuth.graph.records import RecordRow
from sleuth.graph.table import ResolutionRow

__all__ = ["load_part", "MAX_SHARE"]

MAX_SHARE = 0.25
"""A part holding more than this share of the graph's files is not worth it: load in full."""

_CHUNK = 500  # paths per ``IN (...)`` query (well under SQLite's variable limit)

Stat = tuple[int, int, int]


def load_part(
    db: sqlite3.Connection,
    stats: Mapping[str, Stat],
    wanted: Callable[[list[str]], list[str]],
    semantic: Mapping[tuple[str, str, str], str],
) -> Graph | None:
    """The graph of the files ``wanted`` (given every cached path, sorted) and their
    neighbours, if the cache in ``db`` (format already checked, inside one read transaction)
    holds exactly the files of ``stats`` with those signatures; None otherwise."""
    order: dict[str, int] = {}
    rows = db.execute("SELECT rowid, path, size, mtime_ns, ctime_ns FROM files")
    for rowid, path, size, mtime, ctime in rows:
        if size is None or mtime is None or stats.get(path) != (size, mtime, ctime):
            return None  # changed, or never stat'ed as settled: a sync must look at it
        order[str(path)] = int(rowid)
    if len(order) != len(stats):
        return None  # a file the cache does not hold yet
    targets = [p for p in wanted(sorted(order)) if p in order]
    if len(targets) > MAX_SHARE * len(order):
        return None
    records: dict[str, RecordRow] = dict(_rows(db, "record", targets))
    resolutions: dict[str, ResolutionRow] = dict(_rows(db, "resolution", targets))
    ids = set(targets)  # the file nodes, then every declaration of the wanted files
    needed = set(targets)  # and the files their edges reach
    for path in targets:
        ids.update(d[0] for d in records[path][4])
        res = resolutions[path]
        needed.update(d for d in res[1] if d in order)
        needed.update(v for _, v, _, _ in res[0] if v in order)
    for path, blob in db.execute("SELECT path, resolution FROM files"):
        if path in resolutions:
            continue
        res = marshal.loads(blob)
        # of any other file only its edges into the wanted files are read: no other is restored
        into = tuple(e for e in res[0] if e[1] in ids)
        if into or path in needed:
            resolutions[path] = (into, res[1], res[2], res[3])
            needed.add(path)
    records.update(_rows(db, "record", [p for p in needed if p not in records]))
    graph = Graph()
    graph.restore_rows(
        [(p, records[p], resolutions[p]) for p in sorted(needed, key=order.__getitem__)],
        semantic,
    )
    nodes = graph.g._node
    for path in targets:
        if any(u not in nodes or v not in nodes for u, v, _, _ in resolutions[path][0]):
            return None  # an end the part lacks (or a full load would lack): load in full
    return graph


def _rows(
    db: sqlite3.Connection, column: Literal["record", "resolution"], paths: list[str]
) -> Iterator[tuple[str, Any]]:
    """(path, its ``column`` row decoded) for each of ``paths``."""
    for i in range(0, len(paths), _CHUNK):
        chunk = paths[i : i + _CHUNK]
        marks = ",".join("?" * len(chunk))
        query = f"SELECT path, {column} FROM files WHERE path IN ({marks})"
        for path, blob in db.execute(query, chunk):
            yield str(path), marshal.loads(blob)
