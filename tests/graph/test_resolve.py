"""Name, scope and import resolution: the fixture graphs and one rule per test."""

from __future__ import annotations

from sleuth.graph import Graph
from tests.graph.fixtures import Tags, py_tags
from tests.graph.helpers import build, build_py, edges, node_id
from tests.graph.project import (
    PY,
    PY_EDGES,
    PY_UNRESOLVED,
    TS_EDGES,
    TS_UNRESOLVED,
    py_project,
    ts_project,
)


def _unresolved(graph: Graph) -> dict[str, int]:
    return {p: n for p, n in graph.snapshot()["unresolved"].items() if n}


def test_python_fixture_graph_is_exactly_the_expected_one() -> None:
    graph = build(py_project())
    assert edges(graph) == PY_EDGES
    assert _unresolved(graph) == PY_UNRESOLVED
    assert {a["precision"] for *_, a in graph.iter_edges()} == {"syntactic"}
    assert graph.node("pkg/util.py")["type"] == "file"


def test_typescript_fixture_graph_is_exactly_the_expected_one() -> None:
    graph = build(ts_project())
    assert edges(graph) == TS_EDGES
    assert _unresolved(graph) == TS_UNRESOLVED


def test_helper_is_called_from_three_places_and_its_namesake_from_one() -> None:
    graph = build(py_project())
    calls = edges(graph, {"calls"})
    callers = {s for s, t, _ in calls if t == "pkg/util.py::helper"}
    assert callers == {"pkg/util.py::format_name", "pkg/models.py::User.greet", "app/main.py::run"}
    assert {s for s, t, _ in calls if t == "other/tools.py::helper"} == {
        "other/tools.py::unrelated"
    }


def test_a_same_named_function_elsewhere_is_never_a_global_match() -> None:
    graph = build_py(
        {
            "a.py": "def run():\n    return 1\n",
            "b.py": "def main():\n    return run()\n",  # no import: stays unresolved
        }
    )
    assert edges(graph, {"calls"}) == set()
    assert graph.resolution("b.py").unresolved == 1


def test_bare_names_in_a_method_skip_the_class_scope_in_python() -> None:
    graph = build_py(
        {
            "m.py": (
                "def helper():\n    pass\n\n"
                "class C:\n"
                "    def helper(self):\n        pass\n\n"
                "    def run(self):\n        helper()\n        self.helper()\n"
            )
        }
    )
    assert edges(graph, {"calls"}) == {
        ("m.py::C.run", "m.py::helper", "calls"),
        ("m.py::C.run", "m.py::C.helper", "calls"),
    }


def test_other_languages_see_class_members_as_bare_names() -> None:
    tags = Tags("A.java", "java")
    from tests.graph.fixtures import Hand

    src = "class A {\n  void go() { help(); }\n  void help() {}\n}\n"
    hand = (
        Hand("A.java", "java", src)
        .d("A", "class", "class A {")
        .d("go", "method", "void go()", "A")
        .d("help", "method", "void help()", "A")
        .r("help", "call", "help();", "A.go")
    )
    tags = hand.tags
    graph = build({"A.java": (tags, hand.data)})
    assert ("A.java::A.go", "A.java::A.help", "calls") in edges(graph)


def test_nested_functions_resolve_innermost_first() -> None:
    graph = build_py(
        {
            "n.py": (
                "def f():\n    pass\n\n"
                "def outer():\n"
                "    def f():\n        pass\n"
                "    def inner():\n        return f()\n"
                "    return inner()\n"
            )
        }
    )
    calls = edges(graph, {"calls"})
    assert ("n.py::outer.inner", "n.py::outer.f", "calls") in calls
    assert ("n.py::outer", "n.py::outer.inner", "calls") in calls
    assert not any(t == "n.py::f" for _, t, _ in calls)


def test_self_calls_follow_bases_into_imported_modules_and_super() -> None:
    graph = build_py(
        {
            "base.py": "class Base:\n    def save(self):\n        pass\n",
            "child.py": (
                "from base import Base\n\n"
                "class Child(Base):\n"
                "    def save(self):\n        super().save()\n\n"
                "    def go(self):\n        self.save()\n        obj.save()\n"
            ),
        }
    )
    calls = edges(graph, {"calls"})
    assert ("child.py::Child.save", "base.py::Base.save", "calls") in calls
    assert ("child.py::Child.go", "child.py::Child.save", "calls") in calls
    assert ("child.py::Child", "base.py::Base", "inherits") in edges(graph)
    assert graph.resolution("child.py").unresolved == 2  # super (a builtin) and obj.save()


def test_reexports_star_imports_aliases_and_module_receivers() -> None:
    graph = build_py(
        {
            "pkg/__init__.py": "from .util import helper\n",
            "pkg/util.py": "def helper():\n    pass\n\ndef other():\n    pass\n",
            "a.py": "from pkg import helper\n\ndef f():\n    helper()\n",
            "b.py": "from pkg.util import *\n\ndef g():\n    other()\n",
            "c.py": "import pkg.util as u\n\ndef h():\n    u.helper()\n",
            "d.py": "import pkg.util\n\ndef k():\n    pkg.util.other()\n",
        }
    )
    calls = edges(graph, {"calls"})
    assert calls == {
        ("a.py::f", "pkg/util.py::helper", "calls"),
        ("b.py::g", "pkg/util.py::other", "calls"),
        ("c.py::h", "pkg/util.py::helper", "calls"),
        ("d.py::k", "pkg/util.py::other", "calls"),
    }
    imports = edges(graph, {"imports"})
    assert ("a.py", "pkg/util.py::helper", "imports") in imports
    assert ("b.py", "pkg/util.py", "imports") in imports
    assert ("c.py", "pkg/util.py", "imports") in imports


def test_class_receivers_reach_their_members() -> None:
    graph = build_py(
        {"s.py": "class K:\n    def make(cls):\n        pass\n\ndef f():\n    K.make()\n"}
    )
    assert ("s.py::f", "s.py::K.make", "calls") in edges(graph)


def test_relative_imports_and_src_roots() -> None:
    graph = build_py(
        {
            "src/app/__init__.py": "",
            "src/app/core.py": "def run():\n    pass\n",
            "src/app/sub/__init__.py": "",
            "src/app/sub/x.py": "from ..core import run\nfrom . import y\n",
            "src/app/sub/y.py": "",
            "tests/test_core.py": "from app.core import run\n",
        }
    )
    imports = edges(graph, {"imports"})
    assert ("src/app/sub/x.py", "src/app/core.py::run", "imports") in imports
    assert ("src/app/sub/x.py", "src/app/sub/y.py", "imports") in imports
    assert ("tests/test_core.py", "src/app/core.py::run", "imports") in imports


def test_a_module_inside_a_package_does_not_shadow_a_top_level_name() -> None:
    graph = build_py(
        {
            "pkg/__init__.py": "",
            "pkg/json.py": "def loads():\n    pass\n",
            "main.py": "import json\n\ndef f():\n    json.loads()\n",
        }
    )
    assert edges(graph, {"imports", "calls"}) == set()


def test_without_bytes_uses_are_bare_names_and_signatures_empty() -> None:
    src = PY["pkg/util.py"]
    graph = Graph()
    graph.update_file(py_tags("pkg/util.py", src))
    helper = node_id(graph, "pkg/util.py", "helper")
    assert graph.node(helper)["signature"] == ""
    assert ("pkg/util.py::format_name", "pkg/util.py::helper", "calls") in edges(graph)
