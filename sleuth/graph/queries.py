"""Read-only questions over a ``Graph``: ``graph:PATH``, ``graph:#ID`` and dependents.

The questions are those of docs/query.md#graph-the-reference-graph.

All answers are plain records from ``sleuth.graph.model``, sorted deterministically (by path,
then line). ``contains`` edges are shown as structure (``members``), never as uses.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

from sleuth.errors import InvalidQuery
from sleuth.graph.model import (
    DeclView,
    Dependent,
    EdgeGroup,
    FileView,
    Neighbor,
    NodeInfo,
    NodeView,
    Occurrence,
    Use,
)

if TYPE_CHECKING:
    from sleuth.graph.build import Graph

__all__ = ["file_view", "file_declarations_json", "node_view", "dependents", "DEPENDENCY_KINDS"]

DEPENDENCY_KINDS = frozenset({"calls", "references", "inherits", "imports"})
"""Edge kinds along which ``dependents`` walks (a use means: the source depends on the target)."""


def _info(graph: Graph, node_id: str) -> NodeInfo:
    return NodeInfo.of(node_id, graph.g.nodes[node_id])


def _sort_key(info: NodeInfo) -> tuple[str, int, str]:
    return (info.path, info.line or 0, info.id)


class _Infos(dict[str, NodeInfo]):
    """``NodeInfo`` per node id, built once per answer (a neighbour recurs across a file), with
    its JSON and sort key, also made once."""

    def __init__(self, graph: Graph) -> None:
        super().__init__()
        self._attrs = graph.g._node  # networkx's node -> attributes dict, read without a view
        self._json: dict[str, dict[str, Any]] = {}
        self._keys: dict[str, tuple[str, int, str]] = {}

    def __missing__(self, node_id: str) -> NodeInfo:
        info = self[node_id] = NodeInfo.of(node_id, self._attrs[node_id])
        return info

    def json(self, node_id: str) -> dict[str, Any]:
        """The node's JSON, shared by every place of the answer that shows it (read-only)."""
        out = self._json.get(node_id)
        if out is None:
            out = self._json[node_id] = self[node_id].to_json()
        return out

    def key(self, node_id: str) -> tuple[str, int, str]:
        out = self._keys.get(node_id)
        if out is None:
            out = self._keys[node_id] = _sort_key(self[node_id])
        return out


_Grouped = list[tuple[str, list[tuple[str, int, str]]]]


def _grouped(infos: _Infos, adjacency: dict[str, dict[str, dict[str, Any]]]) -> _Grouped:
    """The edges of one node in one direction (``adjacency``: other end -> kind -> attributes,
    networkx's own dicts, iterated without building views) by kind, kinds sorted: each kind's
    (other end, occurrences, precision), sorted by the other end's (path, line, id)."""
    by_kind: dict[str, list[tuple[str, int, str]]] = {}
    for other, keyed in adjacency.items():
        for kind, attrs in keyed.items():
            if kind != "contains":
                by_kind.setdefault(kind, []).append(
                    (other, len(attrs["occurrences"]), attrs["precision"])
                )
    key = infos.key
    out: _Grouped = []
    for kind in sorted(by_kind) if len(by_kind) > 1 else by_kind:
        ends = by_kind[kind]
        if len(ends) > 1:
            ends.sort(key=lambda t: key(t[0]))
        out.append((kind, ends))
    return out


def _groups(infos: _Infos, adjacency: dict[str, dict[str, dict[str, Any]]]) -> dict[str, EdgeGroup]:
    out: dict[str, EdgeGroup] = {}
    for kind, ends in _grouped(infos, adjacency):
        neighbors = [Neighbor(infos[other], n, precision) for other, n, precision in ends]
        out[kind] = EdgeGroup(kind, len(ends), sum(n for _, n, _ in ends), neighbors)
    return out


def _groups_json(infos: _Infos, adjacency: dict[str, dict[str, dict[str, Any]]]) -> dict[str, Any]:
    """``_groups(...)`` as ``EdgeGroup.to_json`` shows it, without the intermediate records."""
    out: dict[str, Any] = {}
    for kind, ends in _grouped(infos, adjacency):
        out[kind] = {
            "kind": kind,
            "count": len(ends),
            "uses": sum(n for _, n, _ in ends),
            "neighbors": [
                {"node": infos.json(other), "occurrences": n, "precision": precision}
                for other, n, precision in ends
            ],
        }
    return out


def _members(graph: Graph, infos: _Infos, node_id: str) -> list[str]:
    found = [v for v, keyed in graph.g._succ[node_id].items() if "contains" in keyed]
    if len(found) > 1:
        found.sort(key=infos.key)
    return found


def _decl_view(graph: Graph, infos: _Infos, node_id: str) -> DeclView:
    g = graph.g
    return DeclView(
        node=infos[node_id],
        outgoing=_groups(infos, g._succ[node_id]),
        incoming=_groups(infos, g._pred[node_id]),
        members=[_decl_view(graph, infos, m) for m in _members(graph, infos, node_id)],
    )


def file_view(graph: Graph, path: str) -> FileView:
    """The file's top-level declarations (members nested) with edges grouped by kind."""
    rec = graph.record(path)
    g = graph.g
    infos = _Infos(graph)
    return FileView(
        path=path,
        lang=rec.lang,
        stamp=rec.stamp,
        complete=rec.complete,
        reason=rec.reason,
        declarations=[_decl_view(graph, infos, t) for t in _members(graph, infos, path)],
        outgoing=_groups(infos, g._succ[path]),
        incoming=_groups(infos, g._pred[path]),
        unresolved=graph.resolution(path).unresolved,
    )


def file_declarations_json(graph: Graph, path: str) -> list[tuple[int, int, dict[str, Any]]]:
    """``file_view``'s declarations as (start_byte, end_byte, JSON), each with its members by
    id (what ``DeclView.to_json(nested=False)`` gives): top-level declarations, then members,
    breadth first — the answer of ``graph:PATH``. One ``_Infos`` serves the whole file, so a
    neighbour met by many declarations is described once (its JSON is one shared dict)."""
    graph.stamp(path)  # NotFound for an unknown file (the record stays undecoded)
    g = graph.g
    infos = _Infos(graph)
    out = []
    pending = deque(_members(graph, infos, path))
    while pending:
        d = pending.popleft()
        inner = _members(graph, infos, d)
        decl = {
            **infos.json(d),
            "outgoing": _groups_json(infos, g._succ[d]),
            "incoming": _groups_json(infos, g._pred[d]),
            "members": inner,
        }
        attrs = g._node[d]
        out.append((attrs["start_byte"] or 0, attrs["end_byte"], decl))
        pending.extend(inner)
    return out


def _uses(graph: Graph, edges: Any) -> list[Use]:
    out: list[Use] = []
    for u, v, kind, attrs in edges:
        if kind == "contains":
            continue
        source, target = _info(graph, u), _info(graph, v)
        # An occurrence is written in the file that owns the edge: the source's file.
        for start, end, line in attrs["occurrences"]:
            occ = Occurrence(source.path, start, end, line)
            out.append(Use(kind, source, target, occ, attrs["precision"]))
    out.sort(key=lambda u: (u.occurrence.path, u.occurrence.start_byte, u.kind, u.target.id))
    return out


def node_view(graph: Graph, node_id: str) -> NodeView:
    """One node's incoming and outgoing uses, one entry per occurrence (a readable range)."""
    graph.node(node_id)  # NotFound for an unknown id
    g = graph.g
    parents = [u for u, _, k in g.in_edges(node_id, keys=True) if k == "contains"]
    members = sorted(
        (_info(graph, v) for _, v, k in g.out_edges(node_id, keys=True) if k == "contains"),
        key=_sort_key,
    )
    return NodeView(
        node=_info(graph, node_id),
        container=_info(graph, parents[0]) if parents else None,
        members=members,
        incoming=_uses(graph, g.in_edges(node_id, keys=True, data=True)),
        outgoing=_uses(graph, g.out_edges(node_id, keys=True, data=True)),
    )


def dependents(graph: Graph, node_id: str, depth: int = 2) -> list[Dependent]:
    """Nodes that use ``node_id`` directly (distance 1) or through others, up to ``depth``.

    Breadth-first over incoming calls/references/inherits/imports edges; each node is listed
    once, at its shortest distance, with the kind of the edge that first reached it.
    """
    graph.node(node_id)
    if depth < 1:
        raise InvalidQuery(f"depth must be at least 1, got {depth}")
    g = graph.g
    seen = {node_id}
    found: list[Dependent] = []
    queue: deque[tuple[str, int]] = deque([(node_id, 0)])
    while queue:
        current, dist = queue.popleft()
        if dist >= depth:
            continue
        layer = sorted(
            (u, k) for u, _, k in g.in_edges(current, keys=True) if k in DEPENDENCY_KINDS
        )
        for user, kind in layer:
            if user in seen:
                continue
            seen.add(user)
            found.append(Dependent(_info(graph, user), dist + 1, kind))
            queue.append((user, dist + 1))
    found.sort(key=lambda d: (d.distance, *_sort_key(d.node)))
    return found
