"""Incremental updates equal a full rebuild, over random edit sequences of the fixture."""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sleuth.errors import NotFound
from sleuth.graph import Graph
from tests.graph.fixtures import py_tags
from tests.graph.helpers import build_py, edges, spy_resolutions
from tests.graph.project import PY

# Each path's versions: index 0 is the fixture's (None for a file that starts absent).
VARIANTS: dict[str, list[str | None]] = {
    "pkg/__init__.py": [PY["pkg/__init__.py"], "", "from .util import *\n", None],
    "pkg/util.py": [
        PY["pkg/util.py"],
        "def helper2(x):\n    return x\n\n\ndef format_name(name):\n    return helper2(name)\n",
        "class Base:\n    def save(self):\n        pass\n\n\ndef helper(x):\n    return x\n",
        None,
    ],
    "pkg/models.py": [
        PY["pkg/models.py"],
        "from pkg import helper\nfrom pkg.util import Base\n\n\nclass User(Base):\n"
        "    def rename(self):\n        self.save()\n        return helper(2)\n",
        "from other.tools import helper\n\n\nclass Base:\n    def save(self):\n"
        "        return helper(1)\n\n\nclass User(Base):\n    def greet(self):\n"
        "        return self.save()\n",
        None,
    ],
    "other/tools.py": [
        PY["other/tools.py"],
        "from pkg.models import Base\n\n\nclass Tool(Base):\n    def validate(self):\n"
        "        return self.save()\n\n\ndef unrelated():\n    return Tool()\n",
        None,
    ],
    "app/main.py": [
        PY["app/main.py"],
        "from pkg.util import *\nimport pkg.models as m\n\n\ndef run():\n"
        "    return helper(1) + m.User()\n\n\nrun()\n",
        "from other import tools\n\n\ndef main():\n    tools.unrelated()\n",
        None,
    ],
    # Files that appear later and change how existing imports resolve.
    "pkg/util/__init__.py": [None, "def helper(x):\n    return 0\n"],
    "other/__init__.py": [None, "from .tools import unrelated\n"],
    "src/pkg/__init__.py": [None, ""],
}
# Edits inside bodies only (every position moves, no declaration, import or base changes):
# the files that read these keep their edges without being resolved again.
MOVED = "# a comment that moves every position\n\n"
for _path in ("pkg/util.py", "pkg/models.py", "other/tools.py"):
    VARIANTS[_path].append(MOVED + PY[_path].replace("return", "return  "))
PATHS = sorted(VARIANTS)
EXAMPLES = int(os.environ.get("GRAPH_EXAMPLES", "60"))  # modest by default; 500 passes too

edit = st.tuples(st.sampled_from(PATHS), st.integers(min_value=0, max_value=5))


def _current(state: dict[str, str | None]) -> dict[str, str]:
    return {p: t for p, t in state.items() if t is not None}


def _apply(graph: Graph, path: str, text: str | None) -> None:
    if text is None:
        if path in graph.files():
            graph.remove_file(path)
    else:
        graph.update_file(py_tags(path, text), text.encode())


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(edit, min_size=1, max_size=8))
def test_incremental_updates_equal_a_full_rebuild(steps: list[tuple[str, int]]) -> None:
    state: dict[str, str | None] = {p: v[0] for p, v in VARIANTS.items()}
    graph = build_py(_current(state))
    for path, choice in steps:
        versions = VARIANTS[path]
        state[path] = versions[choice % len(versions)]
        _apply(graph, path, state[path])
        assert graph.snapshot() == build_py(_current(state)).snapshot()


def test_update_replaces_one_file_and_rewires_its_users() -> None:
    graph = build_py(PY)
    renamed = VARIANTS["pkg/util.py"][1]
    assert renamed is not None
    graph.update_file(py_tags("pkg/util.py", renamed), renamed.encode())
    calls = edges(graph, {"calls"})
    assert ("pkg/util.py::format_name", "pkg/util.py::helper2", "calls") in calls
    assert not any(t == "pkg/util.py::helper" for _, t, _ in calls)
    # The namesake in other/ is not picked up by the callers that lost their target.
    assert ("pkg/models.py::User.greet", "other/tools.py::helper", "calls") not in calls
    graph.update_file(py_tags("pkg/util.py", PY["pkg/util.py"]), PY["pkg/util.py"].encode())
    assert graph.snapshot() == build_py(PY).snapshot()


def test_remove_file_drops_its_nodes_and_incoming_edges() -> None:
    graph = build_py(PY)
    graph.remove_file("pkg/util.py")
    assert "pkg/util.py" not in graph.files()
    assert not any(
        "pkg/util.py" in (s, t) or t.startswith("pkg/util.py::") for s, t, _ in edges(graph)
    )
    rest = {p: t for p, t in PY.items() if p != "pkg/util.py"}
    assert graph.snapshot() == build_py(rest).snapshot()
    try:
        graph.remove_file("pkg/util.py")
    except NotFound:
        pass
    else:
        raise AssertionError("removing an absent file must be NotFound")


def test_an_appearing_package_module_takes_over_an_import() -> None:
    graph = build_py(PY)
    text = "def helper(x):\n    return 0\n"
    graph.update_file(py_tags("pkg/util/__init__.py", text), text.encode())
    expected = build_py({**PY, "pkg/util/__init__.py": text})
    assert graph.snapshot() == expected.snapshot()


HUB = {
    "lib/base.py": "class Base:\n    def save(self):\n        return 1\n",
    "app/user.py": "from lib.base import Base\n\n\nclass User(Base):\n"
    "    def go(self):\n        return self.save()\n",
}


def test_a_body_only_edit_resolves_only_the_edited_file(monkeypatch: Any) -> None:
    graph = build_py(HUB)
    user = graph.resolution("app/user.py")
    assert user.deps == {"lib/base.py"}  # self.save() reads Base
    assert any(k.startswith("class:lib/base.py\0") for k in user.keys)
    assert any(k.startswith("member:lib/base.py\0Base\0save") for k in user.keys)
    resolved = spy_resolutions(monkeypatch)
    moved = MOVED + HUB["lib/base.py"].replace("return 1", "return  2")
    graph.update_file(py_tags("lib/base.py", moved), moved.encode())
    assert resolved == ["lib/base.py"]  # its reader keeps its edges without a new resolution
    assert graph.snapshot() == build_py({**HUB, "lib/base.py": moved}).snapshot()
    resolved.clear()
    added = HUB["lib/base.py"] + "\n    def go(self):\n        return 3\n"  # a new member
    graph.update_file(py_tags("lib/base.py", added), added.encode())
    # the shape changed, but not what its reader looked up (save): the reader keeps its edges
    assert resolved == ["lib/base.py"]
    assert graph.snapshot() == build_py({**HUB, "lib/base.py": added}).snapshot()
    resolved.clear()
    renamed = added.replace("def save(self)", "def keep(self)")  # the member it calls goes
    graph.update_file(py_tags("lib/base.py", renamed), renamed.encode())
    assert sorted(resolved) == ["app/user.py", "lib/base.py"]
    assert graph.snapshot() == build_py({**HUB, "lib/base.py": renamed}).snapshot()
