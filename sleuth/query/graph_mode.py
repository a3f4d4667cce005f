"""``graph:`` queries (docs/query.md#graph-the-reference-graph): the reference graph as matches with
references.

The graph comes from the workspace's ``GraphKeeper`` (``graph_keeper``), synced before each
query. Answers are ordinary match lists, so every node and every use is a reference an agent can
``read`` or search inside:

- ``graph:PATH`` — each declaration of the file (top-level, then members) at its name, with
  ``graph`` holding its edges grouped by kind and direction;
- ``graph:#ID`` — every use of the declaration (``direction: "in"``) and every use it makes
  (``"out"``), at the occurrence, with the edge kind and precision; with
  ``navigation="references"`` also its transitive dependents up to ``depth`` (default 2);
- ``graph:`` — the workspace's declarations ranked by PageRank (personalised by ``path``),
  each with its signature line, ordered by score.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from sleuth.ast_search import language_for_path
from sleuth.errors import InvalidQuery, NotFound
from sleuth.graph import Graph
from sleuth.graph.queries import file_declarations_json
from sleuth.query.scan import Stage, make_match
from sleuth.query.symbols_mode import SymbolSource, stale_note
from sleuth.workspace import FileEntry, Workspace
from sleuth.workspace.text import whole_chars

if TYPE_CHECKING:
    from sleuth.query.execute import Engines, Prepared
    from sleuth.query.graph_keeper import GraphKeeper
    from sleuth.query.symbols_mode import TagsCache

__all__ = [
    "plan_graph",
    "synced_graph",
    "plan_graph_answer",
    "graph_node_id",
    "paths_under",
    "viewed_paths",
    "DEFAULT_DEPTH",
]

DEFAULT_DEPTH = 2


def _at_name(node: Any) -> tuple[int, int]:
    """The byte range a node's match points at (its name when known)."""
    start = node.start_byte or 0
    return start, node.end_byte if node.end_byte is not None else start


def graph_node_id(body: str) -> str:
    """The declaration id of a ``graph:#ID`` body; ``invalid_query`` when there is none (checked
    before the graph is loaded or a server is asked about it)."""
    node_id = body.strip()[1:].strip()
    if not node_id:
        raise InvalidQuery(
            "graph:# needs a declaration id (graph:#ID); ids come from symbols: or graph:PATH"
        )
    return node_id


def synced_graph(
    prepared: Prepared,
    engines: Engines,
    keeper: GraphKeeper,
    tags: TagsCache,
    everything: list[FileEntry],
) -> Graph:
    """The graph ``prepared`` reads (``keeper`` and ``tags`` are ``engines``' own; ``everything``
    is the whole workspace's listing): for a one-shot ``graph:PATH`` only the part of a current
    cache it views, else the whole graph synced; for ``graph:#ID`` its declaration is first
    confirmed by its language server."""
    ws = prepared.ws
    body = prepared.route.body.strip()
    graph = None
    if engines.one_shot and body and not body.startswith("#"):
        graph = keeper.part(everything, viewed_paths(ws, body))
    if graph is None:
        graph = keeper.graph(tags, engines.trees, everything)
    if body.startswith("#"):  # the one declaration this query touches: ask its server
        from sleuth.query.graph_confirm import Confirmer

        if engines.servers is None and engines.make_servers is not None:
            engines.servers = engines.make_servers()
        if engines.confirmer is None:
            engines.confirmer = Confirmer()
        note = engines.confirmer.confirm(graph, body[1:], engines.servers)
        if note:
            prepared.notes.append(note)
        keeper.flush()
    return graph


def plan_graph_answer(prepared: Prepared, graph: Graph) -> None:
    """``prepared``'s answer from ``graph``: the ranked declarations as score-ordered path
    matches for ``graph:`` alone, else one stage over the files with matches."""
    ws, req = prepared.ws, prepared.request
    source, ranked, reason = plan_graph(
        ws,
        prepared.route.body,
        prepared.scope,
        graph,
        navigation=req.navigation,
        depth=req.depth,
        limit=ws.tuning.graph_rank_depth + 1,
    )
    if reason:
        prepared.notes.append(reason)
    if ranked is not None:
        depth = ws.tuning.graph_rank_depth
        if len(ranked) > depth:
            ranked = ranked[:depth]
            prepared.notes.append(
                f"graph: keeps the top {depth} declarations of the ranking; "
                "graph:PATH or a path scope ranks others"
            )
        matches = []
        for path, start, end, score, extra in ranked:
            ft = ws.read(path)
            if ft is None:
                continue
            stale = not graph.has_file(path) or graph.stamp(path) != ft.stamp
            if stale or not whole_chars(ft.data, start, end):
                prepared.notes.append(stale_note(path))  # offsets of other bytes
                continue
            m = make_match(ft, start, end, req.context, None, extra)
            matches.append(replace(m, score=score))
        prepared.path_matches = matches
        prepared.ordered_by_score = True
        return
    source.stamps = {p: graph.stamp(p) for p in source.paths if graph.has_file(p)}
    source.notes = prepared.notes
    by_path = {f.path: f for f in prepared.files}
    prepared.files = [by_path.get(p) or FileEntry(p, 0, 0) for p in source.paths]
    prepared.stages = [Stage("graph", None, source)]


def plan_graph(
    ws: Workspace,
    body: str,
    scope: str,
    graph: Graph,
    *,
    navigation: str | None,
    depth: int | None,
    limit: int,
) -> tuple[SymbolSource, list[tuple[str, int, int, float, dict[str, Any]]] | None, str | None]:
    """(per-file matches, ranked matches for ``graph:`` alone, incomplete reason)."""
    source = SymbolSource()
    body = body.strip()
    if body.startswith("#"):
        node_id = graph_node_id(body)
        view = graph.node_view(node_id)
        for direction, uses in (("in", view.incoming), ("out", view.outgoing)):
            for use in uses:
                occ = use.occurrence
                other = use.source if direction == "in" else use.target
                extra: dict[str, Any] = {
                    "graph": {
                        "kind": other.kind,
                        "edge": use.kind,
                        "direction": direction,
                        "precision": use.precision,
                        "node": other.to_json(),
                    }
                }
                source.by_path.setdefault(occ.path, []).append(
                    (occ.start_byte, occ.end_byte, None, extra)
                )
        if navigation == "references":
            for dep in graph.dependents(node_id, depth if depth is not None else DEFAULT_DEPTH):
                if dep.node.is_file or dep.node.start_byte is None:
                    continue
                s, e = _at_name(dep.node)
                extra = {
                    "graph": {
                        "kind": dep.node.kind,
                        "edge": "dependent",
                        "direction": "in",
                        "distance": dep.distance,
                        "via": dep.via,
                        "precision": "syntactic",
                        "node": dep.node.to_json(),
                    }
                }
                source.by_path.setdefault(dep.node.path, []).append((s, e, None, extra))
        source.sort()
        return source, None, _whole_reason(graph)
    if body:
        path = ws.validate_path(body)
        if (ws.root / path).is_dir():  # a folder: the declarations of its files
            reasons = []
            for p in paths_under(graph.files(), path):
                sub, _, why = plan_graph(
                    ws, p, scope, graph, navigation=None, depth=None, limit=limit
                )
                source.by_path.update(sub.by_path)
                if why:
                    reasons.append(why)
            source.sort()
            return source, None, "; ".join(reasons[:5]) or None
        if not graph.has_file(path):
            if (ws.root / path).is_file():
                lang = language_for_path(path)
                return source, None, f"{path}: no declarations for {lang or 'this file type'}"
            raise NotFound(f"path not found: {path}")
        found = source.by_path.setdefault(path, [])
        for s, e, decl in file_declarations_json(graph, path):
            found.append((s, e, None, {"graph": decl}))
        source.sort()
        node = graph.node(path)
        return source, None, None if node.get("complete") else node.get("reason")
    personal = (paths_under(graph.files(), scope) or None) if scope else None
    ranked = []
    for r in graph.rank(limit=limit, personalize_paths=personal):
        s, e = _at_name(r.node)
        ranked.append((r.node.path, s, e, r.score, {"graph": r.node.to_json()}))
    return source, ranked, _whole_reason(graph)


def _whole_reason(graph: Graph) -> str | None:
    """Why an answer about the whole graph is incomplete: its files without declarations."""
    untagged = [f"{p} ({reason})" for p, reason in graph.incomplete()]
    if not untagged:
        return None
    more = " …" if len(untagged) > 5 else ""
    return f"{len(untagged)} file(s) without declarations in the graph: {', '.join(untagged[:5])}{more}"


def paths_under(paths: Iterable[str], folder: str) -> list[str]:
    """The ``paths`` that are ``folder`` or lie under it (all of them for the root, ``""``)."""
    return [p for p in paths if not folder or p == folder or p.startswith(folder + "/")]


def viewed_paths(ws: Workspace, body: str) -> Callable[[list[str]], list[str]]:
    """For ``graph:BODY``: given every graph file, the files whose declarations it shows —
    the file, or the files under a folder (``plan_graph``'s choice, for ``GraphKeeper.part``)."""
    path = ws.validate_path(body)
    if not (ws.root / path).is_dir():
        return lambda paths: [path]
    return lambda paths: paths_under(paths, path)
