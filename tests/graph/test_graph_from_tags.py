"""Integration: real sources through the real tags extractor into the graph.

Only this test imports ``sleuth.ast_search``; the graph package itself never does (engines
never import each other: docs/architecture.md#layers, ``tests/test_layering.py``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sleuth.graph import Graph
from tests.graph.helpers import build, edges, node_id
from tests.graph.project import PY, PY_EDGES, PY_UNRESOLVED, TS, TS_EDGES

tags_mod = pytest.importorskip("sleuth.ast_search.tags")
extract_tags = tags_mod.extract_tags

SLEUTH = Path(__file__).resolve().parents[2] / "sleuth"


def _graph(files: dict[str, str], lang: str) -> Graph:
    return build({p: (extract_tags(p, t.encode(), lang), t.encode()) for p, t in files.items()})


def test_python_fixture_from_real_tags_gives_the_expected_graph() -> None:
    graph = _graph(PY, "python")
    assert edges(graph) == PY_EDGES
    unresolved = {p: n for p, n in graph.snapshot()["unresolved"].items() if n}
    assert set(unresolved) == set(PY_UNRESOLVED)
    assert graph.rank(1)[0].node.signature == "def helper(x):"


def test_typescript_fixture_from_real_tags() -> None:
    graph = _graph(TS, "typescript")
    got = edges(graph)
    # The extractor tags ``new Square()`` as a reference and no parameter type annotations,
    # so those two hand-written uses differ; every other expected edge is there.
    differ = {
        ("src/shapes.ts::makeSquare", "src/shapes.ts::Square", "calls"),
        ("src/util/index.ts::total", "src/shapes.ts::Shape", "references"),
    }
    assert TS_EDGES - differ <= got
    assert got - TS_EDGES == set()
    # ``import * as util from "./util"``: the alias is read from the bytes.
    assert ("src/main.ts::main", "src/util/index.ts::total", "calls") in got


def test_a_file_without_tag_rules_is_an_incomplete_view() -> None:
    graph = Graph()
    data = b"some text\n"
    graph.update_file(extract_tags("notes.txt", data, "plaintext"), data)
    view = graph.file_view("notes.txt")
    assert view.complete is False and view.reason
    assert view.declarations == []


def _sleuth_sources() -> dict[str, str]:
    return {
        str(p.relative_to(SLEUTH.parent)): p.read_text(encoding="utf-8")
        for p in sorted(SLEUTH.rglob("*.py"))
    }


def test_sleuths_own_sources_resolve_and_update_incrementally() -> None:
    files = _sleuth_sources()
    graph = _graph(files, "python")
    update = node_id(graph, "sleuth/graph/build.py", "Graph.update_file")
    apply_ = node_id(graph, "sleuth/graph/updates.py", "GraphUpdates.apply")  # inherited
    assert (update, apply_) in {(u, v) for u, v, k, _ in graph.iter_edges({"calls"})}
    error = node_id(graph, "sleuth/errors.py", "SleuthError")
    users = graph.dependents(error, depth=1)
    assert any(d.via == "inherits" and d.node.name == "NotFound" for d in users)
    assert len(graph.rank(20)) == 20

    # Edit a widely imported module: the incremental graph equals a rebuild.
    edited = dict(files)
    edited["sleuth/errors.py"] = files["sleuth/errors.py"].replace(
        "class NotFound(SleuthError):", "class Missing(SleuthError):"
    )
    text = edited["sleuth/errors.py"]
    graph.update_file(extract_tags("sleuth/errors.py", text.encode(), "python"), text.encode())
    assert graph.snapshot() == _graph(edited, "python").snapshot()
