"""The reference graph: a networkx ``MultiDiGraph`` kept equal to a full rebuild under updates.

Nodes are files (id = the path, ``type="file"``) and declarations (id = ``SymbolDef.id``,
``type="decl"``, with name, kind, container, path, byte and line range and signature line).
Edges are keyed by their kind — at most one edge per (source, target, kind), carrying every
occurrence of the use — and are ``contains`` (file/class -> member), ``calls``/``references``
(the declaration holding a use, or the file for a top-level use -> the declaration it resolves
to), ``imports`` (file -> file or declaration) and ``inherits`` (class -> base). Each has
``precision`` ``"syntactic"`` until a caller confirms it with a language server
(``confirm``/``mark_semantic``).

Incremental rule: the edges a file owns (those leaving its nodes) are a function of its own
record and of the records it *read* while resolving (``Resolution.deps``) plus the module keys it
looked up. ``update_file``/``remove_file`` replace one file's nodes and re-resolve exactly the
files that read it or looked up a key it provides, so the result equals a full rebuild — this
covers every use whose name matches the file's old or new declarations and every import of it.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import networkx as nx

from sleuth.errors import InvalidQuery, NotFound
from sleuth.graph import queries
from sleuth.graph import rank as ranking
from sleuth.graph.model import Dependent, FileView, NodeView, Ranked
from sleuth.graph.modules import ModuleIndex, provided_keys
from sleuth.graph.records import FileRecord, FileTags, make_record
from sleuth.graph.resolve import EdgeKey, FileIndex, Resolution, Resolver, changed_keys

if TYPE_CHECKING:
    from sleuth.graph.store import SyncReport

__all__ = ["Graph", "EdgeKey", "EDGE_KINDS"]

_BATCH = 64
EDGE_KINDS = ("contains", "calls", "references", "imports", "inherits")


class Graph:
    """Files and declarations with their reference edges; see the module docstring."""

    def __init__(self) -> None:
        self.g: Any = nx.MultiDiGraph()
        self._records: dict[str, FileRecord] = {}
        self._indexes: dict[str, FileIndex] = {}
        self._modules = ModuleIndex()
        self._resolved: dict[str, Resolution] = {}
        self._readers: dict[str, set[str]] = {}  # path -> files whose resolution read it
        self._key_users: dict[str, set[str]] = {}  # module key -> files that looked it up
        self._semantic: dict[EdgeKey, str] = {}  # confirmed edge -> the file that owns it

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

    def apply(self, changes: dict[str, FileRecord | None]) -> None:
        """Replace (record) or remove (None) files, then re-resolve every affected file."""
        if len(changes) < _BATCH:
            self._apply(changes)
            return
        # A big batch allocates millions of small objects holding no cycles; the cyclic
        # collector scanning them repeatedly would double the build time.
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            self._apply(changes)
        finally:
            if was_enabled:
                gc.enable()

    def _apply(self, changes: dict[str, FileRecord | None]) -> None:
        affected: set[str] = set()
        for path, rec in changes.items():
            old = self._records.get(path)
            if old is None and rec is None:
                continue
            old_index = self._indexes.get(path)
            new_index = FileIndex.of(rec) if rec is not None else None
            keys = changed_keys(path, old_index, new_index)
            if (old is None) != (rec is None):
                keys |= provided_keys(path)
            for key in keys:
                affected |= self._key_users.get(key, set())
            affected |= self._readers.get(path, set())
            if old is not None and (rec is None or rec.stamp != old.stamp or not rec.stamp):
                # The content changed: a server's confirmation of its uses no longer holds.
                self._semantic = {k: p for k, p in self._semantic.items() if p != path}
            self._forget_resolution(path)
            if old is not None:
                self._drop_nodes(old, keep=rec)
            if rec is None or new_index is None:
                self._records.pop(path, None)
                self._indexes.pop(path, None)
                self._modules.remove(path)
            else:
                self._records[path] = rec
                self._indexes[path] = new_index
                self._modules.add(path)
                self._add_nodes(rec)
                affected.add(path)
        affected &= self._records.keys()
        resolver = Resolver(self._records, self._indexes.__getitem__, self._modules)
        for path in sorted(affected):
            self._forget_resolution(path)
            self._install(path, resolver.resolve_file(path))

    def restore(
        self,
        records: Mapping[str, FileRecord],
        resolutions: Mapping[str, Resolution],
        semantic: Mapping[EdgeKey, str],
    ) -> None:
        """Install saved state without resolving anything (the cache loader's door)."""
        self._semantic = dict(semantic)
        for path, rec in records.items():
            self._records[path] = rec
            self._indexes[path] = FileIndex.of(rec)
            self._modules.add(path)
            self._add_nodes(rec)
        for path in sorted(records):
            self._install(path, resolutions.get(path, Resolution()))

    def state(self) -> tuple[dict[str, FileRecord], dict[str, Resolution], dict[EdgeKey, str]]:
        """Records, resolutions and confirmed edges (what the cache stores)."""
        resolved = {p: self._resolved.get(p, Resolution()) for p in self._records}
        return dict(self._records), resolved, dict(self._semantic)

    # -- queries and persistence --------------------------------------------------------------

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

    def save(self, path: str) -> None:
        """Write the cache (e.g. ``.sleuth/graph.json``)."""
        from sleuth.graph.store import save

        save(self, path)

    @classmethod
    def load(cls, path: str) -> Graph:
        """Read a cache written by ``save``; an empty graph when there is none usable."""
        from sleuth.graph.store import load

        return load(path)

    def sync(
        self, stamps: Mapping[str, str], get_tags: Callable[[str], tuple[FileTags, bytes | None]]
    ) -> SyncReport:
        """Re-tag and re-resolve only the files whose stamps changed; drop vanished files."""
        from sleuth.graph.store import sync

        return sync(self, stamps, get_tags)

    # -- nodes and edges ----------------------------------------------------------------------

    def _add_nodes(self, rec: FileRecord) -> None:
        self.g.add_node(
            rec.path,
            type="file",
            path=rec.path,
            lang=rec.lang,
            stamp=rec.stamp,
            complete=rec.complete,
            reason=rec.reason,
        )
        by_qualified = self._indexes[rec.path].by_qualified
        for d, sig in zip(rec.defs, rec.signatures, strict=True):
            if self.g.nodes.get(d.id, {}).get("path", rec.path) != rec.path:
                continue  # an id clash with another file: keep the first owner
            self.g.add_node(
                d.id,
                type="decl",
                id=d.id,
                name=d.name,
                kind=d.kind,
                container=d.container,
                path=rec.path,
                start_byte=d.start_byte,
                end_byte=d.end_byte,
                line=d.line,
                end_line=d.end_line,
                name_start=d.name_start,
                name_end=d.name_end,
                signature=sig,
            )
        for d in rec.defs:
            if self.g.nodes[d.id].get("path") != rec.path:
                continue
            parent = by_qualified.get(d.container) if d.container else None
            source = parent.id if parent is not None and parent.id != d.id else rec.path
            self.g.add_edge(
                source,
                d.id,
                key="contains",
                kind="contains",
                precision="syntactic",
                occurrences=[(d.start_byte, d.end_byte, d.line)],
            )

    def _drop_nodes(self, rec: FileRecord, keep: FileRecord | None = None) -> None:
        """Remove a file's nodes; with ``keep`` (its next version), only the vanished ones.

        Nodes that survive an edit keep their incoming edges, so files whose uses still
        resolve to them need no re-resolution; their attributes and ``contains`` edges are
        rewritten by ``_add_nodes``.
        """
        kept = {d.id for d in keep.defs} if keep is not None else set()
        owned = [d.id for d in rec.defs if self.g.nodes.get(d.id, {}).get("path") == rec.path]
        for node in [rec.path, *owned]:
            if node in self.g:
                for u, v in [
                    (u, v) for u, v, k in self.g.out_edges(node, keys=True) if k == "contains"
                ]:
                    self.g.remove_edge(u, v, key="contains")
        for node in owned:
            if node not in kept:
                self.g.remove_node(node)
        if keep is None and rec.path in self.g:
            self.g.remove_node(rec.path)

    def _install(self, path: str, res: Resolution) -> None:
        for (u, v, kind), occs in res.edges.items():
            if u not in self.g or v not in self.g or self.g.nodes[u].get("path") != path:
                continue
            precision = "semantic" if (u, v, kind) in self._semantic else "syntactic"
            self.g.add_edge(
                u, v, key=kind, kind=kind, precision=precision, occurrences=sorted(occs)
            )
        self._resolved[path] = res
        for dep in res.deps:
            self._readers.setdefault(dep, set()).add(path)
        for key in res.keys:
            self._key_users.setdefault(key, set()).add(path)

    def _forget_resolution(self, path: str) -> None:
        res = self._resolved.pop(path, None)
        if res is None:
            return
        for u, v, kind in res.edges:
            if self.g.has_edge(u, v, key=kind):
                self.g.remove_edge(u, v, key=kind)
        for dep in res.deps:
            self._readers.get(dep, set()).discard(path)
        for key in res.keys:
            self._key_users.get(key, set()).discard(path)

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

    def files(self) -> list[str]:
        """Every file in the graph, sorted."""
        return sorted(self._records)

    def record(self, path: str) -> FileRecord:
        """The stored record of ``path``; NotFound when absent."""
        try:
            return self._records[path]
        except KeyError:
            raise NotFound(f"{path} is not in the graph; sync or update it first") from None

    def resolution(self, path: str) -> Resolution:
        """What resolving ``path`` produced (edges, dependencies, unresolved count)."""
        self.record(path)
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


def _stamp(data: bytes | None, stamp: str | None) -> str:
    if stamp is not None:
        return stamp
    if data is None:
        return ""
    from sleuth.workspace.reader import stamp_bytes

    return stamp_bytes(data)
