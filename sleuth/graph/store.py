"""The graph cache (``.sleuth/graph.json``) and ``sync``: rebuild only the files that changed.

The cache holds every file's record (tags, receivers, signature lines) with its stamp, the
result of resolving it (edges with occurrences, the files and module keys it depended on) and
the edges a language server confirmed — enough to restore the graph without resolving anything.
It is a cache: a missing, unreadable, corrupt or older-version file loads as an empty graph, and
``sync`` then rebuilds everything. Writes are atomic (temporary file + ``os.replace``).
"""

from __future__ import annotations

import gc
import json
import os
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from sleuth.graph.build import Graph
from sleuth.graph.records import FileRecord, FileTags, make_record, record_from_json, record_to_json
from sleuth.graph.resolve import EdgeKey, Resolution

__all__ = ["save", "load", "sync", "SyncReport", "CACHE_VERSION", "DEFAULT_CACHE"]

CACHE_VERSION = 2
DEFAULT_CACHE = ".sleuth/graph.json"

GetTags = Callable[[str], tuple[FileTags, bytes | None]]


@dataclass
class SyncReport:
    """What ``sync`` did, by path (sorted)."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0


class _Strings:
    """A table of repeated strings (dependency paths and lookup keys), stored once."""

    def __init__(self, table: list[str] | None = None) -> None:
        self.table: list[str] = list(table or [])
        self._pos = {v: i for i, v in enumerate(self.table)}

    def ids(self, values: frozenset[str]) -> list[int]:
        out = []
        for value in sorted(values):
            if value not in self._pos:
                self._pos[value] = len(self.table)
                self.table.append(value)
            out.append(self._pos[value])
        return out

    def values(self, ids: list[int]) -> frozenset[str]:
        return frozenset(self.table[i] for i in ids)


def _resolution_to_json(res: Resolution, strings: _Strings) -> dict[str, Any]:
    return {
        "edges": [[u, v, k, [list(o) for o in occs]] for (u, v, k), occs in res.edges.items()],
        "deps": strings.ids(res.deps),
        "keys": strings.ids(res.keys),
        "unresolved": res.unresolved,
    }


def _resolution_from_json(obj: dict[str, Any], strings: _Strings) -> Resolution:
    edges: dict[EdgeKey, list[tuple[int, int, int]]] = {}
    for u, v, k, occs in obj["edges"]:
        edges[(str(u), str(v), str(k))] = [(int(s), int(e), int(ln)) for s, e, ln in occs]
    deps, keys = strings.values(obj["deps"]), strings.values(obj["keys"])
    return Resolution(edges, deps, keys, int(obj["unresolved"]))


def save(graph: Graph, path: str) -> None:
    """Write the graph's cache to ``path`` atomically (parent folders created)."""
    records, resolutions, semantic = graph.state()
    strings = _Strings()
    files = [
        {"record": record_to_json(rec), "resolution": _resolution_to_json(resolutions[p], strings)}
        for p, rec in sorted(records.items())
    ]
    doc = {
        "version": CACHE_VERSION,
        "strings": strings.table,
        "files": files,
        "semantic": sorted([u, v, k, owner] for (u, v, k), owner in semantic.items()),
    }
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".graph-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(doc, separators=(",", ":")))  # dumps: all in the C encoder
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def load(path: str) -> Graph:
    """The graph cached at ``path``; an empty graph when there is no usable cache."""
    graph = Graph()
    # Millions of small objects: without the cyclic collector running over them as they are
    # created, loading is about twice as fast (they hold no cycles worth collecting).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _load_into(graph, path)
    finally:
        if was_enabled:
            gc.enable()


def _load_into(graph: Graph, path: str) -> Graph:
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
        if not isinstance(doc, dict) or doc.get("version") != CACHE_VERSION:
            return graph
        records: dict[str, FileRecord] = {}
        resolutions: dict[str, Resolution] = {}
        strings = _Strings(doc["strings"])
        for entry in doc["files"]:
            rec = record_from_json(entry["record"])
            records[rec.path] = rec
            resolutions[rec.path] = _resolution_from_json(entry["resolution"], strings)
        semantic = {(str(u), str(v), str(k)): str(o) for u, v, k, o in doc.get("semantic", [])}
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return graph
    graph.restore(records, resolutions, semantic)
    return graph


def sync(graph: Graph, stamps: Mapping[str, str], get_tags: GetTags) -> SyncReport:
    """Make the graph hold exactly the files of ``stamps``, re-tagging only changed ones.

    ``stamps`` maps every current path to its stamp (SPEC §4); ``get_tags(path)`` returns the
    file's tags and bytes (bytes may be None). A file whose stored stamp equals its current one
    is not re-tagged; removed files are dropped; all changes are applied in one pass.
    """
    report = SyncReport()
    changes: dict[str, FileRecord | None] = {}
    known = set(graph.files())
    for path in sorted(stamps):
        stamp = stamps[path]
        if path in known and graph.record(path).stamp == stamp and stamp:
            report.unchanged += 1
            continue
        tags, data = get_tags(path)
        rec = make_record(tags, data, stamp)
        if rec.path != path:
            rec = replace(rec, path=path)
        changes[path] = rec
        (report.updated if path in known else report.added).append(path)
    for path in sorted(known - set(stamps)):
        changes[path] = None
        report.removed.append(path)
    if changes:
        graph.apply(changes)
    return report
