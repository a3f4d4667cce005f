"""The reference graph: a networkx ``MultiDiGraph`` kept equal to a full rebuild under updates.

Nodes are files (id = the path, ``type="file"``) and declarations (id = ``SymbolDef.id``,
``type="decl"``, with name, kind, container, path, byte and line range and signature line).
Edges are keyed by their kind — at most one edge per (source, target, kind), carrying every
occurrence of the use — and are ``contains`` (file/class -> member), ``calls``/``references``
(the declaration holding a use, or the file for a top-level use -> the declaration it resolves
to), ``imports`` (file -> file or declaration) and ``inherits`` (class -> base). Each has
``precision`` ``"syntactic"`` until a caller confirms it with a language server
(``confirm``/``mark_semantic``).

The graph also keeps what the cache (``store``) has not written yet — the files whose record or
resolution changed since ``take_changes`` — so a one-file update writes a few rows, and the
ranked graph's weights, adjusted per file, with a ``version`` that keys the rank cache.

Incremental rule: the edges a file owns (those leaving its nodes) are a function of its own
record and of what it read of other files while resolving, each read named by a key
(``Resolution.keys``, see ``file_index``: what a file binds to a top-level name, a class as seen
from outside, a star list, a module lookup). ``update_file``/``remove_file`` replace one file's
nodes, compute which of its keys changed, and re-resolve exactly the files that noted one, so
the result equals a full rebuild while an edit that moves nothing others read (inside a body, a
new function nobody names) re-resolves the edited file alone.

How files come in (``apply``: the incremental rule, a cold build's rows, pooled resolution;
``restore_rows``: the cache loader) is ``updates``; what is kept and how one file's nodes and
edges are written is ``state``. ``sync`` (a listing's stamps in, only the changed files
re-tagged) is here, beside the graph it updates; persisting is ``store``'s (``save``, ``load``,
``GraphStore``), which imports the graph and is never imported by it.
"""

from __future__ import annotations

import marshal
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from sleuth.errors import InvalidQuery, NotFound
from sleuth.graph import queries
from sleuth.graph import rank as ranking
from sleuth.graph.fits import row_fits
from sleuth.graph.model import Dependent, FileView, NodeView, Ranked
from sleuth.graph.records import FileRecord, FileTags, RecordRow, make_record, record_to_row
from sleuth.graph.resolve import EdgeKey, Resolution
from sleuth.graph.table import ResolutionRow, resolution_to_row
from sleuth.graph.updates import GraphUpdates

__all__ = ["Graph", "EdgeKey", "EDGE_KINDS", "BlobSources", "encode_blobs", "SyncReport", "sync"]

EDGE_KINDS = ("contains", "calls", "references", "imports", "inherits")
BlobSources = tuple[bytes | RecordRow | FileRecord, bytes | Resolution]
"""A file's cache row before encoding: its record and its resolution, each as the bytes to
store or as the value to encode (``Graph.blob_sources``)."""
GetTags = Callable[[str], tuple[FileTags, bytes | None]]
"""A file's tags and bytes (bytes may be None), by path: how ``sync`` re-tags a file."""


def encode_blobs(
    rec: bytes | RecordRow | FileRecord, res: bytes | Resolution
) -> tuple[bytes, bytes]:
    """A file's cache row from ``Graph.blob_sources``: (record, resolution), ``marshal``-ed."""
    if isinstance(rec, FileRecord):
        rec = record_to_row(rec)
    return (
        rec if isinstance(rec, bytes) else marshal.dumps(rec),
        res if isinstance(res, bytes) else marshal.dumps(resolution_to_row(res)),
    )


class Graph(GraphUpdates):
    """Files and declarations with their reference edges; see the module docstring."""

    # -- input --------------------------------------------------------------------------------

    def update_file(
        self, tags: FileTags, data: bytes | None = None, *, stamp: str | None = None
    ) -> None:
        """Add or replace one file from its tags; ``data`` gives signatures and receivers.

        Without ``data`` signature lines are empty and every use is taken as a bare name
        (``obj.m()`` then looks like ``m()``), so pass the bytes when they are at hand.
        """
        self.apply({tags.path: make_record(tags, data, _stamp(data, stamp))})

    def update_files(self, items: Iterable[tuple[FileTags, bytes | None, str | None]]) -> None:
        """Add or replace several files in one pass (each re-resolution happens once)."""
        self.apply({t.path: make_record(t, d, _stamp(d, s)) for t, d, s in items})

    def remove_file(self, path: str) -> None:
        """Drop a file's nodes and edges and re-resolve the files that used it."""
        if path not in self._records:
            raise NotFound(f"{path} is not in the graph; nothing to remove")
        self.apply({path: None})

    def row(self, path: str) -> tuple[RecordRow, ResolutionRow]:
        """``path``'s record and resolution as plain rows (what the cache stores)."""
        return self._records.row(path), resolution_to_row(self.resolution(path))

    def blobs(self, path: str) -> tuple[bytes, bytes]:
        """``row(path)`` as the cache stores it (``marshal``-ed), from the bytes a worker made
        when they are still current (each given once)."""
        return encode_blobs(*self.blob_sources(path))

    def blob_sources(self, path: str) -> BlobSources:
        """What ``blobs(path)`` encodes, taken now and encoded later (``encode_blobs``, e.g. by
        the cache's writer thread): the bytes a worker made when still current (each given
        once), else the record (a row or a ``FileRecord``) and the ``Resolution`` themselves,
        which the graph never changes once it holds them (an update puts new ones)."""
        rec = self._records.take_blob(path)
        res = self._res_blobs.pop(path, None)
        return (
            rec if rec is not None else self._records.source(path),
            res if res is not None else self.resolution(path),
        )

    def take_changes(self) -> tuple[set[str], set[str], dict[EdgeKey, str] | None]:
        """(changed paths, removed paths, confirmed edges if they changed) since the last call."""
        out = (self._dirty, self._gone, dict(self._semantic) if self._semantic_dirty else None)
        self._dirty, self._gone, self._semantic_dirty = set(), set(), False
        return out

    def mark_all_changed(self) -> None:
        """Make the next ``take_changes`` report every file (a full cache write)."""
        self._dirty = set(self._records)
        self._semantic_dirty = True

    def semantic_edges(self) -> dict[EdgeKey, str]:
        """Confirmed edges, each with the file that owns it."""
        return dict(self._semantic)

    def state(self) -> tuple[dict[str, FileRecord], dict[str, Resolution], dict[EdgeKey, str]]:
        """Records, resolutions and confirmed edges (decodes every record)."""
        resolved = {p: self._resolved.get(p, Resolution()) for p in self._records}
        return dict(self._records.items()), resolved, dict(self._semantic)

    # -- queries and sync ---------------------------------------------------------------------

    def file_view(self, path: str) -> FileView:
        """``graph:PATH`` — top-level declarations with edges by kind (NotFound if unknown)."""
        return queries.file_view(self, path)

    def node_view(self, node_id: str) -> NodeView:
        """``graph:#ID`` — one node's incoming and outgoing uses with their locations."""
        return queries.node_view(self, node_id)

    def dependents(self, node_id: str, depth: int = 2) -> list[Dependent]:
        """Transitive users of ``node_id`` up to ``depth`` uses away, with distances."""
        return queries.dependents(self, node_id, depth)

    def rank(self, limit: int = 20, personalize_paths: Iterable[str] | None = None) -> list[Ranked]:
        """``graph:`` — declarations by (personalised) PageRank, best first."""
        return ranking.rank(self, limit, personalize_paths)

    def sync(self, stamps: Mapping[str, str], get_tags: GetTags) -> SyncReport:
        """Re-tag and re-resolve only the files whose stamps changed; drop vanished files."""
        return sync(self, stamps, get_tags)

    # -- semantic confirmation ----------------------------------------------------------------

    def confirm(self, edge: EdgeKey, semantic: bool = True) -> None:
        """Mark edge ``(source, target, kind)`` as confirmed by a language server (or not)."""
        u, v, kind = edge
        if not self.g.has_edge(u, v, key=kind):
            raise NotFound(f"no {kind} edge from {u} to {v}; list edges with node_view")
        if kind == "contains":
            raise InvalidQuery("contains edges come from the file's structure; nothing to confirm")
        self.g.edges[u, v, kind]["precision"] = "semantic" if semantic else "syntactic"
        if semantic:
            self._semantic[edge] = str(self.g.nodes[u]["path"])
        else:
            self._semantic.pop(edge, None)
        self._semantic_dirty = True

    def mark_semantic(self, source_id: str, target_id: str) -> int:
        """Confirm every reference edge from ``source_id`` to ``target_id``; returns how many."""
        data = self.g.get_edge_data(source_id, target_id) or {}
        kinds = [k for k in data if k != "contains"]
        if not kinds:
            raise NotFound(f"no reference edge from {source_id} to {target_id}")
        for kind in kinds:
            self.confirm((source_id, target_id, kind))
        return len(kinds)

    # -- inspection ---------------------------------------------------------------------------

    def __contains__(self, node_id: object) -> bool:
        return node_id in self.g

    def has_file(self, path: str) -> bool:
        """Whether ``path`` is in the graph."""
        return path in self._records

    def file_count(self) -> int:
        """How many files the graph holds."""
        return len(self._records)

    def files(self) -> list[str]:
        """Every file in the graph, sorted."""
        return sorted(self._records)

    def incomplete(self) -> list[tuple[str, str | None]]:
        """(path, reason) of every file the graph holds without all its declarations, sorted
        (kept per graph version: every answer about the whole graph asks)."""
        memo = self._incomplete
        if memo is None or memo[0] != self.version:
            nodes = self.g._node
            found = sorted(
                (p, nodes[p].get("reason")) for p in self._records if not nodes[p].get("complete")
            )
            memo = self._incomplete = (self.version, found)
        return list(memo[1])

    def stamp(self, path: str) -> str:
        """The stamp the graph holds for ``path`` (no record decoded); NotFound when absent."""
        try:
            return self._records.stamp(path)
        except KeyError:
            raise NotFound(f"{path} is not in the graph; sync or update it first") from None

    def fits(self, path: str, data: bytes) -> bool:
        """Whether the record and resolution held for ``path`` fit its bytes ``data``
        (``fits.row_fits``: a cache row with the right stamp may still lie)."""
        if path not in self._records:
            return False
        res = self._resolved.get(path)
        held = None if res is None else resolution_to_row(res)
        return row_fits(path, self._records.row(path), held, data)

    def decl_ids(self, path: str) -> list[str]:
        """The ids of ``path``'s declarations in order (no record decoded); NotFound if absent."""
        if path not in self._records:
            raise NotFound(f"{path} is not in the graph; sync or update it first")
        return [d[0] for d in self._records.row(path)[4]]

    def record(self, path: str) -> FileRecord:
        """The stored record of ``path``; NotFound when absent."""
        try:
            return self._records[path]
        except KeyError:
            raise NotFound(f"{path} is not in the graph; sync or update it first") from None

    def resolution(self, path: str) -> Resolution:
        """What resolving ``path`` produced (edges, dependencies, unresolved count)."""
        if path not in self._records:  # (without decoding a record kept as a row)
            raise NotFound(f"{path} is not in the graph; sync or update it first")
        return self._resolved.get(path, Resolution())

    def node(self, node_id: str) -> dict[str, Any]:
        """A node's attributes; NotFound for an unknown id."""
        if node_id not in self.g:
            raise NotFound(f"no graph node {node_id!r}; ids come from symbols: or graph:PATH")
        return dict(self.g.nodes[node_id])

    def iter_edges(
        self, kinds: Iterable[str] | None = None
    ) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
        """Every edge as (source, target, kind, attributes), optionally only some kinds."""
        wanted = set(kinds) if kinds is not None else None
        for u, v, k, attrs in self.g.edges(keys=True, data=True):
            if wanted is None or k in wanted:
                yield u, v, k, attrs

    def snapshot(self) -> dict[str, Any]:
        """A canonical, comparable dump of nodes and edges (for tests and debugging)."""
        nodes = {n: dict(sorted(a.items())) for n, a in sorted(self.g.nodes(data=True))}
        edges = sorted(
            (u, v, k, a["precision"], tuple(map(tuple, a["occurrences"])))
            for u, v, k, a in self.g.edges(keys=True, data=True)
        )
        unresolved = {p: r.unresolved for p, r in sorted(self._resolved.items())}
        return {"nodes": nodes, "edges": edges, "unresolved": unresolved}


@dataclass
class SyncReport:
    """What ``sync`` did, by path (sorted)."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0


def sync(graph: Graph, stamps: Mapping[str, str], get_tags: GetTags) -> SyncReport:
    """Make the graph hold exactly the files of ``stamps``, re-tagging only changed ones.

    ``stamps`` maps every current path to its stamp (docs/references.md#stamps); ``get_tags(path)``
    returns the file's tags and bytes (bytes may be None). A file whose stored stamp equals its
    current one is not re-tagged; removed files are dropped; all changes are applied in one pass.
    """
    report = SyncReport()
    changes: dict[str, FileRecord | None] = {}
    known = set(graph.files())
    for path in sorted(stamps):
        stamp = stamps[path]
        if path in known and stamp and graph.stamp(path) == stamp:
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


def _stamp(data: bytes | None, stamp: str | None) -> str:
    if stamp is not None:
        return stamp
    if data is None:
        return ""
    from sleuth.workspace.reader import stamp_bytes

    return stamp_bytes(data)
