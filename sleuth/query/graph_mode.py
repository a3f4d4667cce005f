"""``graph:`` queries (SPEC §8): the reference graph as matches with references.

``GraphKeeper`` keeps one workspace's graph in step with its files: tags come from the tags
extractor (``ast_search``) through the shared ``TagsCache``, the graph (``sleuth.graph``) is
updated only for files whose stamp changed, and it is cached in ``.sleuth/graph.json`` so a new
process does not re-tag everything. A watched workspace skips the stamp pass while nothing
changed.

Answers are ordinary match lists, so every node and every use is a reference an agent can
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

import contextlib
from collections.abc import Sequence
from typing import Any

from sleuth.ast_search import TreeCache, language_for_path
from sleuth.ast_search.tags import FileTags, tags_supported
from sleuth.errors import NotFound
from sleuth.graph import DEFAULT_CACHE, Graph
from sleuth.graph import sync as sync_graph
from sleuth.query.symbols_mode import SymbolSource, TagsCache
from sleuth.workspace import FileEntry, Workspace

__all__ = ["GraphKeeper", "plan_graph", "DEFAULT_DEPTH"]

DEFAULT_DEPTH = 2


class GraphKeeper:
    """The graph of one workspace, synced by stamps before each query."""

    def __init__(self, ws: Workspace) -> None:
        self._ws = ws
        self._graph: Graph | None = None
        self._synced_at: int | None = None

    @property
    def cache_path(self) -> str:
        return str(self._ws.root / DEFAULT_CACHE)

    def graph(
        self, tags: TagsCache, trees: TreeCache | None, files: Sequence[FileEntry]
    ) -> Graph:
        """The graph, synced with ``files`` (the whole workspace's listing)."""
        generation = self._ws.generation
        if self._graph is not None and generation is not None and generation == self._synced_at:
            return self._graph
        if self._graph is None:
            self._graph = Graph()
            with contextlib.suppress(Exception):  # a bad cache is only lost speed
                self._graph = Graph.load(self.cache_path)
        graph = self._graph
        stamps: dict[str, str] = {}
        for entry in files:
            if language_for_path(entry.path) is None:
                continue
            ft = self._ws.read(entry.path)
            if ft is not None:
                stamps[entry.path] = ft.stamp

        def get_tags(path: str) -> tuple[Any, bytes | None]:
            ft = self._ws.read(path)
            lang = language_for_path(path) or ""
            if ft is None:
                return FileTags(path, lang, complete=False, reason="unreadable"), None
            if not tags_supported(lang):
                return FileTags(path, lang, complete=False, reason=f"no tags rules for {lang}"), ft.data
            return tags.get(ft, lang, trees), ft.data

        report = sync_graph(graph, stamps, get_tags)
        if report.added or report.updated or report.removed:
            with contextlib.suppress(OSError):
                self._ws.state_dir  # noqa: B018 - creates .sleuth/ with its .gitignore
                graph.save(self.cache_path)
        self._synced_at = generation
        return graph


def _at_name(node: Any) -> tuple[int, int]:
    """The byte range a node's match points at (its name when known)."""
    start = node.start_byte or 0
    return start, node.end_byte if node.end_byte is not None else start


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
    untagged = sorted(
        f"{p} ({graph.record(p).reason})" for p in graph.files() if not graph.record(p).complete
    )
    whole_reason = (
        f"{len(untagged)} file(s) without declarations in the graph: {', '.join(untagged[:5])}"
        + (" …" if len(untagged) > 5 else "")
        if untagged
        else None
    )
    if body.startswith("#"):
        node_id = body[1:]
        view = graph.node_view(node_id)
        for direction, uses in (("in", view.incoming), ("out", view.outgoing)):
            for use in uses:
                occ = use.occurrence
                other = use.source if direction == "in" else use.target
                extra: dict[str, Any] = {"graph": {"kind": other.kind, "edge": use.kind, "direction": direction,
                                   "precision": use.precision, "node": other.to_json()}}
                source.by_path.setdefault(occ.path, []).append(
                    (occ.start_byte, occ.end_byte, None, extra)
                )
        if navigation == "references":
            for dep in graph.dependents(node_id, depth if depth is not None else DEFAULT_DEPTH):
                if dep.node.is_file or dep.node.start_byte is None:
                    continue
                s, e = _at_name(dep.node)
                extra = {"graph": {"kind": dep.node.kind, "edge": "dependent",
                                   "direction": "in", "distance": dep.distance, "via": dep.via,
                                   "precision": "syntactic", "node": dep.node.to_json()}}
                source.by_path.setdefault(dep.node.path, []).append((s, e, None, extra))
        source.sort()
        return source, None, whole_reason
    if body:
        path = ws.validate_path(body)
        if (ws.root / path).is_dir():  # a folder: the declarations of its files
            reasons = []
            for p in graph.files():
                if p.startswith(path + "/") or not path:
                    sub, _, why = plan_graph(ws, p, scope, graph, navigation=None, depth=None,
                                             limit=limit)
                    source.by_path.update(sub.by_path)
                    if why:
                        reasons.append(why)
            source.sort()
            return source, None, "; ".join(reasons[:5]) or None
        if path not in graph.files():
            if (ws.root / path).is_file():
                lang = language_for_path(path)
                return source, None, f"{path}: no declarations for {lang or 'this file type'}"
            raise NotFound(f"path not found: {path}")
        fview = graph.file_view(path)
        pending = list(fview.declarations)
        while pending:
            decl = pending.pop(0)
            s, e = _at_name(decl.node)
            extra = {"graph": decl.to_json() | {"members": [m.node.id for m in decl.members]}}
            source.by_path.setdefault(path, []).append((s, e, None, extra))
            pending.extend(decl.members)
        source.sort()
        return source, None, None if fview.complete else fview.reason
    personal = [scope] if scope else None
    ranked = []
    for r in graph.rank(limit=limit, personalize_paths=_paths_under(graph, personal)):
        s, e = _at_name(r.node)
        ranked.append((r.node.path, s, e, r.score, {"graph": r.node.to_json()}))
    return source, ranked, whole_reason


def _paths_under(graph: Graph, scopes: Sequence[str] | None) -> list[str] | None:
    if not scopes:
        return None
    out = [p for p in graph.files() for s in scopes if p == s or p.startswith(s + "/")]
    return out or None


