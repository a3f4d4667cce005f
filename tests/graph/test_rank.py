"""``rank``: PageRank over reference edges, with personalisation."""

from __future__ import annotations

import networkx as nx
import pytest

from sleuth.errors import InvalidQuery, NotFound
from sleuth.graph.rank import _power_iteration, pagerank
from tests.graph.helpers import build, build_py
from tests.graph.project import py_project


def _order(ranked: list) -> list[str]:  # type: ignore[type-arg]
    return [f"{r.node.path}::{r.node.name}" for r in ranked]


def test_the_most_referenced_declaration_ranks_first_with_its_signature() -> None:
    graph = build(py_project())
    top = graph.rank(limit=5)
    assert len(top) == 5
    assert _order(top)[0] == "pkg/util.py::helper"
    assert top[0].node.signature == "def helper(x):"
    assert [r.score for r in top] == sorted((r.score for r in top), reverse=True)
    assert all(not r.node.is_file for r in graph.rank(limit=100))


def test_a_hub_beats_leaves_in_a_bigger_graph() -> None:
    callers = "".join(f"def c{i}():\n    return core()\n\n" for i in range(6))
    graph = build_py(
        {
            "core.py": "def core():\n    return 1\n\ndef lonely():\n    return 2\n",
            "users.py": "from core import core\n\n" + callers,
        }
    )
    order = _order(graph.rank(limit=10))
    assert order[0] == "core.py::core"
    assert order.index("core.py::lonely") > 0


def test_personalisation_moves_a_paths_declarations_and_neighbours_up() -> None:
    graph = build(py_project())
    plain = _order(graph.rank(limit=100))
    focused = _order(graph.rank(limit=100, personalize_paths=["other/tools.py"]))
    assert focused[:2] == ["other/tools.py::helper", "other/tools.py::unrelated"]
    # app/main.py::main calls unrelated: a neighbour, so it moves up too.
    assert focused.index("app/main.py::main") < plain.index("app/main.py::main")
    assert plain.index("other/tools.py::helper") > 0


def test_limit_and_bad_input() -> None:
    graph = build(py_project())
    assert graph.rank(limit=0) == []
    with pytest.raises(InvalidQuery):
        graph.rank(limit=-1)
    with pytest.raises(NotFound):
        graph.rank(limit=3, personalize_paths=["missing.py"])
    assert build_py({}).rank() == []


def test_the_fallback_matches_networkx_reference_values() -> None:
    rg = nx.DiGraph()
    rg.add_weighted_edges_from([("a", "b", 2), ("b", "c", 1), ("c", "a", 1), ("d", "c", 1)])
    rg.add_node("e")
    # Reference values: networkx's own pure-Python PageRank on the same graph.
    expected = {"a": 0.3086, "b": 0.2985, "c": 0.3206, "d": 0.0361, "e": 0.0361}
    for got in (pagerank(rg), _power_iteration(rg, None, 0.85)):
        assert got == pytest.approx(expected, abs=1e-4)
    pers = _power_iteration(rg, {"d": 1.0}, 0.85)
    assert pers == pytest.approx(
        {"a": 0.2809, "b": 0.2387, "c": 0.3304, "d": 0.15, "e": 0.0}, abs=1e-4
    )
