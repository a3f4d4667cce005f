"""``graph:`` — declarations ranked by (personalised) PageRank, a repo map to read first.

The ranked graph is the reference graph collapsed to one weighted edge per (user, used) pair:
``calls``, ``references`` and ``inherits`` edges, weighted by how many uses they stand for;
file nodes take part (a top-level use comes from its file) but only declarations are returned.
Self-loops (recursion) are dropped: a function calling itself says nothing about its
importance. Personalisation puts the teleport mass on the given paths' files and declarations
(weight 1) and their neighbours one use away in either direction (weight 1/2), so what those
files use and what uses them moves up.

``networkx.pagerank`` needs SciPy; without it the same power iteration runs in pure Python
(same dangling-node and personalisation rules as networkx).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import networkx as nx

from sleuth.errors import InvalidQuery
from sleuth.graph.model import NodeInfo, Ranked

if TYPE_CHECKING:
    from sleuth.graph.build import Graph

__all__ = ["rank", "RANK_KINDS", "pagerank"]

RANK_KINDS = frozenset({"calls", "references", "inherits"})
ALPHA = 0.85
NEIGHBOUR_WEIGHT = 0.5


def _rank_graph(graph: Graph) -> Any:
    g = graph.g
    out = nx.DiGraph()
    out.add_nodes_from(g.nodes)
    for u, v, k, attrs in g.edges(keys=True, data=True):
        if k not in RANK_KINDS or u == v:
            continue
        w = len(attrs["occurrences"])
        if out.has_edge(u, v):
            out[u][v]["weight"] += w
        else:
            out.add_edge(u, v, weight=w)
    return out


def _personalization(graph: Graph, rg: Any, paths: Iterable[str]) -> dict[str, float] | None:
    weights: dict[str, float] = {}
    for path in paths:
        rec = graph.record(path)  # NotFound for a path outside the graph
        seeds = [path] + [d.id for d in rec.defs if d.id in rg]
        for seed in seeds:
            weights[seed] = 1.0
        for seed in seeds:
            for other in (*rg.successors(seed), *rg.predecessors(seed)):
                weights.setdefault(other, NEIGHBOUR_WEIGHT)
    return weights or None


def pagerank(
    rg: Any, personalization: dict[str, float] | None = None, alpha: float = ALPHA
) -> dict[str, float]:
    """PageRank of weighted DiGraph ``rg``: networkx's, or the pure-Python fallback."""
    if rg.number_of_nodes() == 0:
        return {}
    try:
        result: dict[str, float] = nx.pagerank(
            rg, alpha=alpha, personalization=personalization, weight="weight"
        )
        return result
    except ImportError:  # networkx's implementation needs SciPy
        return _power_iteration(rg, personalization, alpha)


def _power_iteration(
    rg: Any,
    personalization: dict[str, float] | None,
    alpha: float,
    max_iter: int = 100,
    tol: float = 1.0e-6,
) -> dict[str, float]:
    """networkx's algorithm (dangling mass follows the personalisation), on index lists."""
    nodes = list(rg.nodes)
    n = len(nodes)
    pos = {node: i for i, node in enumerate(nodes)}
    if personalization:
        total = sum(personalization.get(x, 0.0) for x in nodes)
        p = [personalization.get(x, 0.0) / total for x in nodes]
    else:
        p = [1.0 / n] * n
    links: list[list[tuple[int, float]]] = []
    for u in nodes:
        out = [(pos[v], float(d["weight"])) for _, v, d in rg.out_edges(u, data=True)]
        total_w = sum(w for _, w in out)
        links.append([(v, w / total_w) for v, w in out] if total_w else [])
    dangling = [i for i, out in enumerate(links) if not out]
    x = [1.0 / n] * n
    for _ in range(max_iter):
        last = x
        spread = alpha * sum(last[i] for i in dangling) + (1.0 - alpha)
        x = [spread * pi for pi in p]
        for i, out in enumerate(links):
            share = alpha * last[i]
            for j, w in out:
                x[j] += share * w
        if sum(abs(a - b) for a, b in zip(x, last, strict=True)) < n * tol:
            break
    return dict(zip(nodes, x, strict=True))


def rank(
    graph: Graph, limit: int = 20, personalize_paths: Iterable[str] | None = None
) -> list[Ranked]:
    """The top ``limit`` declarations by PageRank (ties: path, then line)."""
    if limit < 0:
        raise InvalidQuery(f"limit must be at least 0, got {limit}")
    rg = _rank_graph(graph)
    pers = _personalization(graph, rg, personalize_paths) if personalize_paths else None
    scores = pagerank(rg, pers)
    ranked: list[Ranked] = []
    for node_id, score in scores.items():
        attrs = graph.g.nodes[node_id]
        if attrs.get("type") == "decl":
            ranked.append(Ranked(NodeInfo.of(node_id, attrs), score))
    ranked.sort(key=lambda r: (-round(r.score, 12), r.node.path, r.node.line or 0, r.node.id))
    return ranked[:limit]
