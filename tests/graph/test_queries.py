"""``file_view``, ``node_view``, ``dependents`` and semantic confirmation."""

from __future__ import annotations

import pytest

from sleuth.errors import InvalidQuery, NotFound
from sleuth.graph import Graph
from sleuth.graph.queries import file_declarations_json
from tests.graph.fixtures import Tags, py_tags
from tests.graph.helpers import build, build_py, node_id
from tests.graph.project import PY, py_project


@pytest.fixture
def graph() -> Graph:
    return build(py_project())


def test_file_view_lists_top_level_declarations_with_members_and_edge_counts(graph: Graph) -> None:
    view = graph.file_view("pkg/models.py")
    assert view.complete and view.reason is None and view.lang == "python"
    assert [d.node.name for d in view.declarations] == ["Base", "User"]
    base, user = view.declarations
    assert [m.node.name for m in base.members] == ["save", "validate"]
    assert [m.node.name for m in user.members] == ["greet", "rename"]
    assert user.outgoing["inherits"].count == 1
    assert base.incoming["inherits"].neighbors[0].node.name == "User"
    assert base.incoming["calls"].count == 1  # models.Base() in app/main.py::run
    save = base.members[0]
    assert save.incoming["calls"].neighbors[0].node.container == "User"
    assert save.node.signature == "def save(self):"
    assert view.outgoing["imports"].count == 1
    assert view.incoming["imports"].count == 1  # from pkg import models
    assert view.unresolved == 1
    assert "contains" not in base.outgoing
    assert view.to_json()["declarations"][0]["name"] == "Base"


def test_file_view_counts_edges_and_uses(graph: Graph) -> None:
    helper = graph.file_view("pkg/util.py").declarations[0]
    assert helper.node.name == "helper"
    calls = helper.incoming["calls"]
    assert (calls.count, calls.uses) == (3, 3)
    assert [n.node.path for n in calls.neighbors] == ["app/main.py", "pkg/models.py", "pkg/util.py"]
    assert helper.incoming["imports"].count == 2


def test_file_without_tags_says_incomplete_with_the_reason() -> None:
    graph = Graph()
    graph.update_file(Tags("notes.xyz", "xyz", complete=False, reason="no tags rules for xyz"))
    view = graph.file_view("notes.xyz")
    assert view.complete is False
    assert view.reason == "no tags rules for xyz"
    assert view.declarations == []


def test_unknown_path_and_id_are_not_found(graph: Graph) -> None:
    with pytest.raises(NotFound):
        graph.file_view("nope.py")
    with pytest.raises(NotFound):
        graph.node_view("0123456789ab")
    with pytest.raises(NotFound):
        graph.dependents("0123456789ab")


def test_node_view_lists_each_use_with_a_readable_range(graph: Graph) -> None:
    helper = node_id(graph, "pkg/util.py", "helper")
    view = graph.node_view(helper)
    assert view.node.signature == "def helper(x):"
    assert view.container is not None and view.container.is_file
    kinds = [(u.kind, u.occurrence.path) for u in view.incoming]
    assert kinds == [
        ("calls", "app/main.py"),
        ("imports", "pkg/__init__.py"),
        ("imports", "pkg/models.py"),
        ("calls", "pkg/models.py"),
        ("calls", "pkg/util.py"),
    ]
    for use in view.incoming:
        data = PY[use.occurrence.path].encode()
        assert data[use.occurrence.start_byte : use.occurrence.end_byte] == b"helper"
        line = data.split(b"\n")[use.occurrence.line - 1]
        assert b"helper" in line
    assert view.outgoing == []

    run = graph.node_view(node_id(graph, "app/main.py", "run"))
    assert sorted(u.target.name for u in run.outgoing) == ["Base", "User", "helper"]


def test_node_view_of_a_class_shows_members(graph: Graph) -> None:
    view = graph.node_view(node_id(graph, "pkg/models.py", "User"))
    assert [m.name for m in view.members] == ["greet", "rename"]
    assert [(u.kind, u.target.name) for u in view.outgoing] == [("inherits", "Base")]


def test_dependents_are_bounded_by_depth_with_distances(graph: Graph) -> None:
    helper = node_id(graph, "pkg/util.py", "helper")
    one = {(d.node.path, d.node.name, d.distance) for d in graph.dependents(helper, depth=1)}
    assert one == {
        ("app/main.py", "run", 1),
        ("pkg/models.py", "greet", 1),
        ("pkg/util.py", "format_name", 1),
        ("pkg/__init__.py", "pkg/__init__.py", 1),
        ("pkg/models.py", "pkg/models.py", 1),
    }
    two = graph.dependents(helper, depth=2)
    reached = {(d.node.name, d.distance, d.via) for d in two}
    assert ("main", 2, "calls") in reached  # main() calls run()
    assert ("app/main.py", 2, "imports") in reached  # imports pkg/models.py, which imports helper
    assert all(d.distance <= 2 for d in two)
    three = {(d.node.id, d.distance) for d in graph.dependents(helper, depth=3)}
    assert {(d.node.id, d.distance) for d in two} <= three
    assert [d.distance for d in two] == sorted(d.distance for d in two)
    with pytest.raises(InvalidQuery):
        graph.dependents(helper, depth=0)


def test_confirm_and_mark_semantic(graph: Graph) -> None:
    helper = node_id(graph, "pkg/util.py", "helper")
    greet = node_id(graph, "pkg/models.py", "User.greet")
    run = node_id(graph, "app/main.py", "run")
    graph.confirm((greet, helper, "calls"))
    assert graph.g.edges[greet, helper, "calls"]["precision"] == "semantic"
    assert graph.mark_semantic(run, helper) == 1
    view = graph.node_view(helper)
    precisions = {(u.source.name, u.kind): u.precision for u in view.incoming}
    assert precisions[("greet", "calls")] == "semantic"
    assert precisions[("pkg/__init__.py", "imports")] == "syntactic"
    assert view.incoming[0].edge[1] == helper

    # A change elsewhere that re-resolves models.py keeps the confirmation...
    text = PY["pkg/util.py"] + "\n\ndef extra():\n    pass\n"
    graph.update_file(py_tags("pkg/util.py", text), text.encode())
    assert graph.g.edges[greet, helper, "calls"]["precision"] == "semantic"
    # ...an edit of models.py itself drops it.
    edited = PY["pkg/models.py"] + "\n"
    graph.update_file(py_tags("pkg/models.py", edited), edited.encode())
    assert graph.g.edges[greet, helper, "calls"]["precision"] == "syntactic"
    assert graph.g.edges[run, helper, "calls"]["precision"] == "semantic"

    graph.confirm((run, helper, "calls"), semantic=False)
    assert graph.g.edges[run, helper, "calls"]["precision"] == "syntactic"
    with pytest.raises(NotFound):
        graph.confirm((helper, run, "calls"))
    with pytest.raises(NotFound):
        graph.mark_semantic(helper, run)


def test_ids_match_the_shared_symbol_id() -> None:
    from sleuth.model import symbol_id

    graph = build_py({"a.py": "class A:\n    def m(self):\n        pass\n"})
    assert symbol_id("a.py", "A.m", "method") in graph


def test_the_graph_path_answer_is_the_file_view_declaration_by_declaration(graph: Graph) -> None:
    """``graph:PATH`` builds its JSON straight from the graph; it must be ``file_view``'s."""
    for path in graph.files():
        view = graph.file_view(path)
        expected = []
        pending = list(view.declarations)
        while pending:
            decl = pending.pop(0)
            expected.append((decl.node.start_byte, decl.node.end_byte, decl.to_json(nested=False)))
            pending.extend(decl.members)
        assert file_declarations_json(graph, path) == expected, path
    assert any(file_declarations_json(graph, p) for p in graph.files())


def test_the_incomplete_files_follow_every_update() -> None:
    from sleuth.ast_search.tags import FileTags

    graph = build_py(PY)
    assert graph.incomplete() == []
    graph.update_file(FileTags("big.py", "python", complete=False, reason="too large for tags"))
    assert graph.incomplete() == [("big.py", "too large for tags")]
    assert graph.incomplete() == [("big.py", "too large for tags")]  # asked again: the same
    text = "x = 1\n"
    graph.update_file(py_tags("big.py", text), text.encode())
    assert graph.incomplete() == []
    graph.update_file(FileTags("gen.py", "python", complete=False, reason="no tags"))
    graph.remove_file("gen.py")
    assert graph.incomplete() == []
