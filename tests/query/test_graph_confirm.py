"""``Confirmer``: a language server's references mark a declaration's graph edges semantic.

The server is a double that lists a chosen subset of the uses the graph found; the graph is the
small Python project of ``tests/graph`` (the confirmer compares the stamps the graph holds).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sleuth.errors import ServerUnavailable
from sleuth.graph import Graph
from sleuth.lsp_bridge.servers import language_of
from sleuth.query.graph_confirm import Confirmer
from tests.graph.fixtures import py_tags
from tests.graph.helpers import build_py, node_id
from tests.graph.project import PY


@dataclass(frozen=True)
class Loc:
    path: str
    start_byte: int
    end_byte: int


@dataclass
class Servers:
    """Lists the uses written in ``listed`` files; records each references call."""

    listed: set[str]
    graph: Graph
    fail: bool = False
    calls: list[tuple[str, int]] = field(default_factory=list)

    def language_of(self, path: str) -> str | None:
        return language_of(path)

    def serving(self, lang: str) -> bool:
        if self.fail:
            raise ServerUnavailable("language server ty crashed twice and is not restarted")
        return True

    def references(self, path: str, offset: int, include_declaration: bool = False) -> list[Loc]:
        self.calls.append((path, offset))
        target = next(
            n
            for n in self.graph.g.nodes
            if self.graph.g.nodes[n].get("name_start") == offset
            and self.graph.g.nodes[n].get("path") == path
        )
        view = self.graph.node_view(target)
        return [
            Loc(u.occurrence.path, u.occurrence.start_byte, u.occurrence.end_byte)
            for u in view.incoming
            if u.occurrence.path in self.listed
        ]


def setup() -> tuple[Graph, str]:
    graph = build_py(PY)
    return graph, node_id(graph, "pkg/util.py", "helper")


def precisions(graph: Graph, nid: str) -> dict[tuple[str, str], str]:
    return {(u.source.path, u.kind): u.precision for u in graph.node_view(nid).incoming}


def test_edges_the_server_lists_become_semantic_the_others_stay_syntactic() -> None:
    graph, helper = setup()
    before = precisions(graph, helper)
    assert set(before.values()) == {"syntactic"} and ("app/main.py", "calls") in before
    servers = Servers({"app/main.py", "pkg/models.py"}, graph)
    assert Confirmer().confirm(graph, helper, servers) is None
    after = precisions(graph, helper)
    assert {k for k, v in after.items() if v == "semantic"} == {
        k for k in before if k[0] in {"app/main.py", "pkg/models.py"}
    }
    assert after[("pkg/__init__.py", "imports")] == "syntactic"


def test_the_server_is_asked_again_only_after_a_file_changed() -> None:
    graph, helper = setup()
    servers = Servers({"app/main.py"}, graph)
    confirmer = Confirmer()
    confirmer.confirm(graph, helper, servers)
    confirmer.confirm(graph, helper, servers)
    assert len(servers.calls) == 1
    touched = PY["app/main.py"] + "\n# touched\n"
    graph.update_file(py_tags("app/main.py", touched), touched.encode())  # as the keeper syncs
    confirmer.confirm(graph, helper, servers)
    assert len(servers.calls) == 2


def test_a_server_that_is_down_leaves_the_edges_syntactic_with_a_note() -> None:
    graph, helper = setup()
    note = Confirmer().confirm(graph, helper, Servers(set(), graph, fail=True))
    assert note is not None and "crashed twice" in note
    assert set(precisions(graph, helper).values()) == {"syntactic"}


def test_without_servers_nothing_is_asked() -> None:
    graph, helper = setup()
    assert Confirmer().confirm(graph, helper, None) is None
    assert set(precisions(graph, helper).values()) == {"syntactic"}
