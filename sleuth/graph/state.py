"""The graph's state, and how one file's nodes and edges are written into it.

``GraphState`` holds the networkx ``MultiDiGraph`` and everything kept beside it — records (as
cache rows until first needed), lookup indexes, module paths, each file's resolution, which
files depend on which key, confirmed edges, what the cache has not written yet, the ranked
graph's weights — and the four writers every update goes through: ``_add_nodes`` (a file's
nodes and ``contains`` edges), ``_drop_nodes`` (those that vanished), ``_install`` (a file's
use edges from its resolution) and ``_forget_resolution``. ``GraphUpdates`` (``updates``) decides
what to write; these write it.

After an edit most of a file's nodes and edges survive with moved positions: the writers update
them in place (attributes, occurrences) rather than removing and re-adding them, which is most
of a one-file update's work in networkx.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import networkx as nx

from sleuth.graph import rank as ranking
from sleuth.graph.file_index import FileIndex
from sleuth.graph.modules import ModuleIndex
from sleuth.graph.records import DefRow, FileRecord
from sleuth.graph.resolve import EdgeKey, Resolution
from sleuth.graph.table import RecordTable

__all__ = ["GraphState"]

Occurrences = tuple[tuple[int, int, int]]


class GraphState:
    """The graph and its bookkeeping; see the module docstring."""

    def __init__(self) -> None:
        self.g: Any = nx.MultiDiGraph()
        self._records = RecordTable()
        self._indexes: dict[str, FileIndex] = {}  # built on first use (a loaded cache has none)
        self._modules = ModuleIndex()
        self._resolved: dict[str, Resolution] = {}
        # path -> its resolution as ``marshal``-ed by a worker (``workers``), until written
        self._res_blobs: dict[str, bytes] = {}
        self._key_users: dict[str, set[str]] = {}  # key -> files whose resolution noted it
        self._semantic: dict[EdgeKey, str] = {}  # confirmed edge -> the file that owns it
        # What the cache has not seen yet (``take_changes``): files whose record or resolution
        # changed, files removed, and whether the confirmed edges changed.
        self._dirty: set[str] = set()
        self._gone: set[str] = set()
        self._semantic_dirty = False
        # The ranked graph's weights (user, used) -> uses, kept per owning file so an update
        # adjusts them instead of a rank walking every edge again; ``version`` moves on every
        # change of nodes or edges and keys the rank cache (``rank.RankCache``).
        self._rank_parts: dict[str, list[tuple[str, str, int]]] = {}
        self.rank_weights: dict[tuple[str, str], int] = {}
        self.version = 0
        self.rank_cache: Any = None
        self._incomplete: tuple[int, list[tuple[str, str | None]]] | None = None  # per version

    # -- nodes and edges ----------------------------------------------------------------------

    def _add_nodes(
        self,
        path: str,
        lang: str,
        stamp: str,
        complete: bool,
        reason: str | None,
        defs: Sequence[DefRow],
        *,
        replace: bool = False,
    ) -> None:
        """Add a file's nodes and ``contains`` edges; ``replace``: the file had nodes, whose
        attributes are updated and whose ``contains`` edges are kept, updated or dropped."""
        g = self.g
        g.add_node(
            path, type="file", path=path, lang=lang, stamp=stamp, complete=complete, reason=reason
        )
        attrs = g._node  # networkx's node -> attributes dict: read without a view per lookup
        succ, pred = g._succ, g._pred
        by_qualified: dict[str, str] = {}
        for d in defs:
            by_qualified.setdefault(f"{d[3]}.{d[1]}" if d[3] else d[1], d[0])
        owned: list[tuple[str, str, int, int, int]] = []
        for i, name, kind, container, sb, eb, line, eline, ns, ne, sig in defs:
            have = attrs.get(i)
            if have is not None and have.get("path", path) != path:
                continue  # an id clash with another file: keep the first owner
            new = {
                "type": "decl",
                "id": i,
                "name": name,
                "kind": kind,
                "container": container,
                "path": path,
                "start_byte": sb,
                "end_byte": eb,
                "line": line,
                "end_line": eline,
                "name_start": ns,
                "name_end": ne,
                "signature": sig,
            }
            # what ``add_node`` does, without its per-call cost; a node the file had keeps its
            # edges (the same id: the same name, kind, container and file; only places move)
            if have is None:
                succ[i], pred[i] = {}, {}
                attrs[i] = new
            else:
                have.update(new)
            owned.append((i, container, sb, eb, line))
        contains = [
            (
                parent if container and (parent := by_qualified.get(container, i)) != i else path,
                i,
                ((sb, eb, line),),
            )
            for i, container, sb, eb, line in owned
        ]
        if replace:
            contains = self._keep_contains(path, owned, contains)
        self._add_edges(
            (u, v, "contains", {"kind": "contains", "precision": "syntactic", "occurrences": occ})
            for u, v, occ in contains
        )

    def _add_edges(self, edges: Iterable[tuple[str, str, str, dict[str, Any]]]) -> None:
        """``g.add_edges_from(edges)`` for edges between existing nodes, written straight into
        networkx's adjacency dicts (its per-edge bookkeeping and views are most of a build's
        edge time); as there, an edge that exists already has its attributes updated."""
        g = self.g
        succ, pred = g._succ, g._pred
        for u, v, key, data in edges:
            out = succ.get(u)
            if out is None or v not in succ:
                g.add_edge(u, v, key, **data)  # a new node: networkx's own path
                continue
            keydict = out.get(v)
            if keydict is None:
                out[v] = pred[v][u] = {key: data}
            elif key in keydict:
                keydict[key].update(data)
            else:
                keydict[key] = data
        nx._clear_cache(g)

    def _keep_contains(
        self,
        path: str,
        owned: list[tuple[str, str, int, int, int]],
        contains: list[tuple[str, str, Occurrences]],
    ) -> list[tuple[str, str, Occurrences]]:
        """Update the ``contains`` edges a file already has in place, drop those it lost;
        the ones still to add."""
        succ = self.g._succ
        wanted = {(u, v): occ for u, v, occ in contains}
        for u in [path, *(i for i, *_ in owned)]:
            for v, keyed in list(succ.get(u, {}).items()):
                data = keyed.get("contains")
                if data is None:
                    continue
                occ = wanted.pop((u, v), None)
                if occ is None:
                    self.g.remove_edge(u, v, key="contains")
                else:
                    data["occurrences"] = occ
        return [(u, v, occ) for (u, v), occ in wanted.items()]

    def _drop_nodes(self, rec: FileRecord, keep: set[str] | None = None) -> None:
        """Remove a file's nodes; with ``keep`` (the declaration ids of its next version),
        only the vanished ones.

        Nodes that survive an edit keep their incoming edges, so files whose uses still
        resolve to them need no re-resolution; their attributes and ``contains`` edges are
        updated by ``_add_nodes`` (``replace``), their uses by ``_install``.
        """
        kept = keep if keep is not None else set()
        attrs = self.g._node
        owned = [d.id for d in rec.defs if attrs.get(d.id, {}).get("path") == rec.path]
        for node in owned:
            if node not in kept:
                self.g.remove_node(node)
        if keep is None and rec.path in self.g:
            self.g.remove_node(rec.path)

    def _install(self, path: str, res: Resolution, blob: bytes | None = None) -> None:
        """Make ``path``'s edges those of ``res``: an edge it had already is updated in place
        (after an edit that moved positions, most are), one it lost is removed. ``blob``:
        ``res`` as a ``marshal``-ed ``ResolutionRow``, kept for the cache's next write."""
        if blob is None:
            self._res_blobs.pop(path, None)
        else:
            self._res_blobs[path] = blob
        g = self.g
        attrs = g._node
        succ = g._succ
        semantic = self._semantic
        old = self._resolved.pop(path, None)
        if old is not None:
            for gone in old.edges.keys() - res.edges.keys():
                if g.has_edge(*gone):
                    g.remove_edge(*gone)
            self._drop_rank_parts(path)
            for key in old.keys - res.keys:
                self._key_users.get(key, set()).discard(path)
        parts: list[tuple[str, str, int]] = []
        edges = []
        for edge, occs in res.edges.items():
            u, v, kind = edge
            owner = attrs.get(u)
            keyed = succ[u].get(v) if owner is not None else None
            data = keyed.get(kind) if keyed is not None else None
            if owner is None or v not in attrs or owner.get("path") != path:
                if data is not None and old is not None and edge in old.edges:
                    g.remove_edge(u, v, kind)  # as a forgotten edge would be
                continue
            precision = "semantic" if semantic and edge in semantic else "syntactic"
            # a tuple: the cyclic collector stops tracking it (and then the dict) for good
            occ = tuple(sorted(occs))
            if data is not None:
                data["occurrences"], data["precision"] = occ, precision
            else:
                edges.append(
                    (u, v, kind, {"kind": kind, "precision": precision, "occurrences": occ})
                )
            if kind in ranking.RANK_KINDS and u != v:
                parts.append((u, v, len(occs)))
        self._add_edges(edges)
        self._resolved[path] = res
        if parts:
            weights = self.rank_weights
            for u, v, w in parts:
                weights[(u, v)] = weights.get((u, v), 0) + w
            self._rank_parts[path] = parts
        for new_key in res.keys - old.keys if old is not None else res.keys:
            self._key_users.setdefault(new_key, set()).add(path)

    def _drop_rank_parts(self, path: str) -> None:
        weights = self.rank_weights
        for u, v, w in self._rank_parts.pop(path, ()):
            left = weights[(u, v)] - w
            if left:
                weights[(u, v)] = left
            else:
                del weights[(u, v)]

    def _forget_resolution(self, path: str) -> None:
        self._res_blobs.pop(path, None)
        res = self._resolved.pop(path, None)
        if res is None:
            return
        for u, v, kind in res.edges:
            if self.g.has_edge(u, v, key=kind):
                self.g.remove_edge(u, v, key=kind)
        self._drop_rank_parts(path)
        for key in res.keys:
            self._key_users.get(key, set()).discard(path)
