"""Small helpers shared by the graph tests."""

from __future__ import annotations

from typing import Any

import pytest

from sleuth.ast_search.tags import extract_tags
from sleuth.graph import Graph
from sleuth.graph.resolve import Resolver
from tests.graph.fixtures import Tags, label, py_tags


def build(files: dict[str, tuple[Tags, bytes | None]]) -> Graph:
    """A graph built in one pass from ``{path: (tags, bytes)}``."""
    graph = Graph()
    graph.update_files([(tags, data, None) for tags, data in files.values()])
    return graph


def build_py(sources: dict[str, str]) -> Graph:
    """A graph of Python sources (records from the ``py_tags`` mirror)."""
    return build({p: (py_tags(p, t), t.encode()) for p, t in sources.items()})


def edges(graph: Graph, kinds: set[str] | None = None) -> set[tuple[str, str, str]]:
    """Every edge as readable labels (see ``fixtures.label``)."""
    nodes = dict(graph.g.nodes(data=True))
    return {
        (label(nodes, u), label(nodes, v), k)
        for u, v, k, _ in graph.iter_edges()
        if kinds is None or k in kinds
    }


def node_id(graph: Graph, path: str, qualified: str) -> str:
    """The id of the declaration ``qualified`` in ``path``."""
    nodes = dict(graph.g.nodes(data=True))
    for nid in nodes:
        if label(nodes, nid) == f"{path}::{qualified}":
            return nid
    raise KeyError(f"{path}::{qualified}")


def spy_resolutions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths ``Resolver.resolve_file`` is called for from now on, in call order."""
    resolved: list[str] = []
    real = Resolver.resolve_file

    def spy(self: Resolver, path: str, *args: Any) -> Any:
        resolved.append(path)
        return real(self, path, *args)

    monkeypatch.setattr(Resolver, "resolve_file", spy)
    return resolved


def build_tagged(state: dict[str, str | None], lang: str) -> Graph:
    """A graph of ``{path: source}`` (None: absent) tagged by the real extractor as ``lang``."""
    graph = Graph()
    graph.update_files(
        [
            (extract_tags(p, t.encode(), lang), t.encode(), None)
            for p, t in sorted(state.items())
            if t is not None
        ]
    )
    return graph


def apply_tagged(graph: Graph, path: str, text: str | None, lang: str) -> None:
    """Replace ``path`` by ``text`` tagged as ``lang`` (None: remove it, if present)."""
    if text is None:
        if graph.has_file(path):
            graph.remove_file(path)
    else:
        graph.update_file(extract_tags(path, text.encode(), lang), text.encode())
