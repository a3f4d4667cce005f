"""Language-server confirmation of a declaration's graph edges (issue 7,
docs/query.md#graph-the-reference-graph).

The graph resolves uses by name, scope and import rules (``precision: "syntactic"``). When a
``graph:#ID`` query touches a declaration whose language has a server running, the server's
``textDocument/references`` for that declaration is asked once and every incoming reference
edge whose occurrences the server lists in full is marked ``semantic``; an edge the server does
not list stays ``syntactic`` (the server disagrees, or the edge is a same-name guess). Only the
declarations queries touch are asked — never a crawl of the workspace.

The answer is remembered per declaration with the stamps of the files involved, so repeating
the query costs no server round trip until one of those files changes (the graph itself drops
confirmations of a file whose content changed).
"""

from __future__ import annotations

from collections.abc import Iterable

from sleuth.errors import SleuthError
from sleuth.graph import Graph
from sleuth.query.servers import SymbolServers

__all__ = ["Confirmer", "CONFIRMED_KINDS"]

CONFIRMED_KINDS = frozenset({"references", "calls", "inherits", "imports"})
"""Edge kinds a server's reference list can confirm (``contains`` is the file's structure)."""
MAX_REMEMBERED = 4096


def _overlaps(a_start: int, a_end: int, b_start: int, b_end: int) -> bool:
    """True when two byte ranges share a byte, or an empty one sits at the other's start."""
    return a_start < b_end and b_start < a_end or a_start == b_start


class Confirmer:
    """Asks language servers about the declarations ``graph:#ID`` queries touch."""

    def __init__(self) -> None:
        self._asked: dict[str, frozenset[tuple[str, str]]] = {}

    @staticmethod
    def _stamps(graph: Graph, paths: Iterable[str]) -> frozenset[tuple[str, str]]:
        """The stamps the graph holds (it was synced with the files just before)."""
        return frozenset((p, graph.stamp(p) if graph.has_file(p) else "") for p in paths)

    def confirm(self, graph: Graph, node_id: str, servers: SymbolServers | None) -> str | None:
        """Confirm ``node_id``'s incoming edges; a note when no server could be asked."""
        if servers is None:
            return None
        view = graph.node_view(node_id)  # NotFound for an unknown id, as the query itself
        node = view.node
        if node.is_file or node.start_byte is None:
            return None
        lang = servers.language_of(node.path)
        uses = [u for u in view.incoming if u.kind in CONFIRMED_KINDS]
        if lang is None or not uses:
            return None
        files = {node.path, *(u.occurrence.path for u in uses)}
        stamps = self._stamps(graph, files)
        if self._asked.get(node_id) == stamps:
            return None
        try:
            if not servers.serving(lang):
                return None
            at_name = graph.g.nodes[node_id].get("name_start", node.start_byte)
            found = servers.references(node.path, at_name, include_declaration=True)
        except SleuthError as exc:
            return f"edges of {node.name} not checked by a language server: {exc.message}"
        at: dict[str, list[tuple[int, int]]] = {}
        for loc in found:
            at.setdefault(loc.path, []).append((loc.start_byte, loc.end_byte))
        verdict: dict[tuple[str, str, str], bool] = {}
        for use in uses:
            occ = use.occurrence
            listed = any(
                _overlaps(occ.start_byte, occ.end_byte, s, e) for s, e in at.get(occ.path, ())
            )
            verdict[use.edge] = verdict.get(use.edge, True) and listed  # all occurrences or none
        for key, ok in verdict.items():
            graph.confirm(key, semantic=ok)
        if len(self._asked) >= MAX_REMEMBERED:
            self._asked.clear()
        self._asked[node_id] = stamps
        return None
