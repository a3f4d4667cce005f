"""``graph:`` — declarations ranked by (personalised) PageRank, a repo map to read first.

The ranked graph is the reference graph collapsed to one weighted edge per (user, used) pair:
``calls``, ``references`` and ``inherits`` edges, weighted by how many uses they stand for;
file nodes take part (a top-level use comes from its file) but only declarations are returned.
Self-loops (recursion) are dropped: a function calling itself says nothing about its
importance. Personalisation puts the teleport mass on the given paths' files and declarations
(weight 1) and their neighbours one use away in either direction (weight 1/2), so what those
files use and what uses them moves up.

The ranked graph lives in a ``RankCache`` per ``Graph.version``: a SciPy matrix built from the
weights the graph keeps per file, and the PageRank vectors already computed on it (networkx's
SciPy power iteration, same dangling-node and personalisation rules). ``pagerank`` and its
pure-Python fallback run the same algorithm on a networkx ``DiGraph``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import networkx as nx

from sleuth.errors import InvalidQuery
from sleuth.graph.model import NodeInfo, Ranked

if TYPE_CHECKING:
    from sleuth.graph.build import Graph

__all__ = ["rank", "RANK_KINDS", "pagerank", "RankCache", "preload"]

RANK_KINDS = frozenset({"calls", "references", "inherits"})
ALPHA = 0.85
NEIGHBOUR_WEIGHT = 0.5
_MAX_ITER = 100
_TOL = 1.0e-6
_MEMO = 32


def preload() -> None:
    """Import what ``RankCache`` computes with (NumPy, SciPy: ~0.25 s), e.g. on a thread while
    a cold build waits for its tag workers, so the first ranking does not pay for it."""
    import importlib

    for name in ("numpy", "scipy.sparse"):
        importlib.import_module(name)


class RankCache:
    """The ranked graph of one ``Graph.version`` as a SciPy matrix, with the vectors computed.

    Built from ``Graph.rank_weights`` (kept up to date per file by the graph) in node order, as
    ``networkx.pagerank`` would see it; every (personalisation -> scores) is memoised, so a
    repeated ``graph:`` costs a sort of the top scores only.
    """

    def __init__(self, graph: Graph) -> None:
        import numpy as np
        import scipy.sparse as sparse  # type: ignore[import-untyped]

        self.version = graph.version
        attrs = graph.g._node
        self.nodes: list[str] = list(attrs)
        n = len(self.nodes)
        self.index = {node: i for i, node in enumerate(self.nodes)}
        index = self.index
        # a weight whose end is no node is left out: a planted cache's resolution can claim an
        # edge into a file that then left the graph (denied, gone) without noting its keys,
        # so no update drops it (docs/SAFETY.md#damaged-or-planted-state)
        weights = {
            (u, v): w for (u, v), w in graph.rank_weights.items() if u in index and v in index
        }
        rows = np.fromiter((index[u] for u, _ in weights), dtype=np.int64, count=len(weights))
        cols = np.fromiter((index[v] for _, v in weights), dtype=np.int64, count=len(weights))
        data = np.fromiter(weights.values(), dtype=float, count=len(weights))
        w = sparse.csr_array((data, (rows, cols)), shape=(n, n))
        self.out = w  # successors: row i; predecessors: column i (``into``)
        self.into = w.tocsc()
        s = w.sum(axis=1)
        s[s != 0] = 1.0 / s[s != 0]
        self.matrix = sparse.dia_array((s.T, 0), shape=(n, n)).tocsr() @ w
        self.dangling = np.where(s == 0)[0]
        self.is_decl = np.fromiter(
            (a.get("type") == "decl" for a in attrs.values()), dtype=bool, count=n
        )
        self._scores: dict[tuple[str, ...], Any] = {}

    def neighbours(self, i: int) -> list[int]:
        """Successors, then predecessors, of node ``i`` in the ranked graph."""
        out, into = self.out, self.into
        succ = out.indices[out.indptr[i] : out.indptr[i + 1]]
        pred = into.indices[into.indptr[i] : into.indptr[i + 1]]
        return [*succ.tolist(), *pred.tolist()]

    def scores(self, graph: Graph, paths: tuple[str, ...]) -> Any:
        """PageRank over the nodes (``paths`` personalise it; ``()`` for none), memoised."""
        hit = self._scores.get(paths)
        if hit is None:
            if len(self._scores) >= _MEMO:
                self._scores.clear()
            hit = self._scores[paths] = self._pagerank(self._personal(graph, paths))
        return hit

    def _personal(self, graph: Graph, paths: tuple[str, ...]) -> dict[int, float] | None:
        weights: dict[int, float] = {}
        for path in paths:
            ids = graph.decl_ids(path)  # NotFound for a path outside the graph
            seeds = [self.index[path]] + [self.index[i] for i in ids if i in self.index]
            for seed in seeds:
                weights[seed] = 1.0
            for seed in seeds:
                for other in self.neighbours(seed):
                    weights.setdefault(other, NEIGHBOUR_WEIGHT)
        return weights or None

    def _pagerank(self, personal: dict[int, float] | None) -> Any:
        """networkx's ``_pagerank_scipy`` on the cached matrix (dangling mass follows p)."""
        import numpy as np

        n = len(self.nodes)
        if n == 0:
            return np.zeros(0)
        x = np.repeat(1.0 / n, n)
        if personal is None:
            p = np.repeat(1.0 / n, n)
        else:
            p = np.zeros(n)
            for i, w in personal.items():
                p[i] = w
            p /= p.sum()
        for _ in range(_MAX_ITER):
            last = x
            x = ALPHA * (x @ self.matrix + x[self.dangling].sum() * p) + (1 - ALPHA) * p
            if np.absolute(x - last).sum() < n * _TOL:
                break
        return x


def _cache(graph: Graph) -> RankCache:
    cache = graph.rank_cache
    if not isinstance(cache, RankCache) or cache.version != graph.version:
        cache = graph.rank_cache = RankCache(graph)
    return cache


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
    import numpy as np

    if limit < 0:
        raise InvalidQuery(f"limit must be at least 0, got {limit}")
    cache = _cache(graph)
    paths = tuple(dict.fromkeys(personalize_paths or ()))
    scores = cache.scores(graph, paths)
    decls = np.flatnonzero(cache.is_decl)
    if limit == 0 or len(decls) == 0:
        return []
    if limit < len(decls):
        # Only the nodes that can reach the top ``limit`` once scores are rounded for ties.
        kth = np.partition(scores[decls], len(decls) - limit)[len(decls) - limit]
        decls = decls[scores[decls] >= kth - 1e-11]
    attrs = graph.g._node
    ranked = [
        Ranked(NodeInfo.of(cache.nodes[i], attrs[cache.nodes[i]]), float(scores[i]))
        for i in decls.tolist()
    ]
    ranked.sort(key=lambda r: (-round(r.score, 12), r.node.path, r.node.line or 0, r.node.id))
    return ranked[:limit]
