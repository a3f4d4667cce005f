"""Fine dependency keys: a shape change re-resolves only the files that read what changed.

A hub module of classes read from outside in every way the resolver reads another file — a
member through ``self``/``super()``/the class name, a base class found in the hub's own scopes
(its top level, an import, a star import, a class member shadowing it), a nested class — and
random sequences of edits to it and its readers (members added, bases changed, kinds changed,
functions appended, bodies moved). Tagged by the real extractor; after every step the
incrementally updated graph must equal a full rebuild.
"""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sleuth.ast_search.tags import extract_tags
from sleuth.graph import Graph, make_record
from sleuth.workspace.reader import stamp_bytes
from tests.graph.helpers import apply_tagged, build_tagged, spy_resolutions

BASE = (
    "from lib.mixins import Mixin\n"
    "\n"
    "\n"
    "class Base(Mixin):\n"
    "    def save(self):\n"
    "        return self.load() + self.mix()\n"
    "\n"
    "    def load(self):\n"
    "        return 1\n"
    "\n"
    "\n"
    "class Outer:\n"
    "    class Inner(Base):\n"
    "        def inner(self):\n"
    "            return self.mix()\n"
    "\n"
    "\n"
    "def helper():\n"
    "    return Base()\n"
)
MOVED = "# a comment that moves every position\n\n"
USER = (
    "from lib.base import Base, Outer\n"
    "\n"
    "\n"
    "class User(Base):\n"
    "    def go(self):\n"
    "        self.save()\n"
    "        self.mix()\n"
    "        self.extra()\n"
    "        return super().load()\n"
    "\n"
    "\n"
    "class Deep(Outer.Inner):\n"
    "    def go(self):\n"
    "        return self.inner() + self.mix()\n"
    "\n"
    "\n"
    "class Holder:\n"
    "    def first(self):\n"
    "        return second()\n"
    "\n"
    "    def second(self):\n"
    "        return 2\n"
    "\n"
    "\n"
    "def run():\n"
    "    Base.load()\n"
    "    return User().go() + Holder().first() + Holder.second(None)\n"
)
APPENDED = "\n\ndef appended_probe():\n    return helper()\n"

VARIANTS: dict[str, list[str | None]] = {
    "lib/base.py": [
        BASE,
        BASE + APPENDED,  # a new top-level function nobody names
        MOVED + BASE.replace("return 1", "return  2"),  # bodies only
        BASE.replace(
            "    def load(self):", "    def extra(self):\n        return 0\n\n    def load(self):"
        ),  # a new member
        BASE.replace("class Base(Mixin):", "class Base:"),  # a base dropped
        BASE.replace("from lib.mixins import Mixin\n", "from lib.mixins import *\n"),
        BASE.replace("from lib.mixins import Mixin\n", ""),  # Mixin unbound
        BASE.replace(
            "class Base(Mixin):\n",
            "class Base(Mixin):\n    class Mixin:\n"
            "        def mix(self):\n            return 3\n\n",
        ),  # a member shadows it
        BASE + "\n\nclass Mixin:\n    def mix(self):\n        return 4\n",  # a local namesake
        BASE.replace("class Outer:", "def Outer():"),  # a container changes kind
        BASE.replace("    def save(self):\n        return self.load() + self.mix()\n\n", ""),
        None,
    ],
    "lib/mixins.py": [
        "class Mixin:\n    def mix(self):\n        return 0\n\n    def save(self):\n        return 5\n",
        "class Mixin:\n    def blend(self):\n        return 0\n",
        "def Mixin():\n    return 0\n",
        None,
    ],
    "lib/__init__.py": [None, "from .base import *\n", "from .base import Base as Base\n", ""],
    "x/user.py": [
        USER,
        USER + "\n\nclass Base:\n    def load(self):\n        return 0\n",  # shadows the import
        "Holder = None\n" + USER,  # a scope around Holder's methods is no class any more
        USER.replace(
            "        return super().load()\n",
            "        return super().load()\n\n    def mix(self):\n        return 9\n",
        ),
        USER.replace("    Base.load()\n", "    Base.load()\n    Base.save(None)\n"),  # a new use
        MOVED + USER.replace("return 2", "return  3"),
        "import lib.base as b\n"
        "\n"
        "\n"
        "class User(b.Base):\n"
        "    def go(self):\n"
        "        return self.mix() + self.save()\n",
        None,
    ],
    "x/other.py": [
        "from lib import Base\n\n\nclass Other(Base):\n    def go(self):\n"
        "        return self.mix() + self.extra()\n",
        "from lib import *\n\n\ndef run():\n    return Base().save()\n",
        None,
    ],
    # resolved after the hub in a batch: it reuses what resolving the hub memoised
    "z/late.py": [
        "from lib.base import Base\n\n\nclass Late(Base):\n    def go(self):\n"
        "        return self.mix()\n",
        None,
    ],
}
PATHS = sorted(VARIANTS)
EXAMPLES = int(os.environ.get("GRAPH_EXAMPLES", "60"))


def _tags(path: str, text: str) -> Any:
    return extract_tags(path, text.encode(), "python")


def build(state: dict[str, str | None]) -> Graph:
    return build_tagged(state, "python")


def apply(graph: Graph, path: str, text: str | None) -> None:
    apply_tagged(graph, path, text, "python")


def apply_batch(graph: Graph, texts: dict[str, str | None]) -> None:
    """Several files in one ``apply`` (each re-resolution once, as a sync does)."""
    graph.apply(
        {
            p: None if t is None else make_record(_tags(p, t), t.encode(), stamp_bytes(t.encode()))
            for p, t in texts.items()
            if t is not None or graph.has_file(p)
        }
    )


step = st.tuples(st.sampled_from(PATHS), st.integers(0, 11))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(step, min_size=1, max_size=2), min_size=1, max_size=8))
def test_updates_by_fine_keys_equal_a_full_rebuild(steps: list[list[tuple[str, int]]]) -> None:
    state: dict[str, str | None] = {p: v[0] for p, v in VARIANTS.items()}
    graph = build(state)
    for batch in steps:
        texts = {}
        for path, choice in batch:
            versions = VARIANTS[path]
            texts[path] = state[path] = versions[choice % len(versions)]
        if len(texts) == 1:
            ((path, text),) = texts.items()
            apply(graph, path, text)
        else:
            apply_batch(graph, texts)
        full = build(state)
        assert graph.snapshot() == full.snapshot(), batch
        assert graph.rank_weights == full.rank_weights, batch
        for key, users in full._key_users.items():  # what the next update relies on
            assert users <= graph._key_users.get(key, set()), (batch, key)


def initial() -> dict[str, str | None]:
    return {p: v[0] for p, v in VARIANTS.items()}


def test_a_function_appended_to_a_hub_resolves_only_the_hub(monkeypatch: Any) -> None:
    state = initial()
    graph = build(state)
    user = graph.resolution("x/user.py")
    assert "lib/base.py" in user.deps  # it reads Base's members and bases
    resolved = spy_resolutions(monkeypatch)
    apply(graph, "lib/base.py", BASE + APPENDED)
    assert resolved == ["lib/base.py"]
    assert graph.snapshot() == build({**state, "lib/base.py": BASE + APPENDED}).snapshot()


def test_a_new_member_resolves_the_readers_of_that_class(monkeypatch: Any) -> None:
    state = initial()
    graph = build(state)
    resolved = spy_resolutions(monkeypatch)
    text = VARIANTS["lib/base.py"][3]
    assert text is not None
    apply(graph, "lib/base.py", text)
    # x/user.py calls self.extra() on a subclass of Base: it must see the new member
    assert "x/user.py" in resolved
    assert graph.snapshot() == build({**state, "lib/base.py": text}).snapshot()
    users = {
        u
        for u, v, k in graph.g.edges(keys=True)
        if k == "calls" and graph.g.nodes[v].get("name") == "extra"
    }
    assert users, "the new member is called from a reader"


def test_a_new_member_resolves_only_the_readers_that_looked_that_name_up(monkeypatch: Any) -> None:
    state = initial()
    graph = build(state)
    late = graph.resolution("z/late.py")
    assert any(k.startswith("class:lib/base.py\0") for k in late.keys)  # it reads Base ...
    assert not any(k.endswith("\0extra") for k in late.keys)  # ... but never looks up extra
    resolved = spy_resolutions(monkeypatch)
    text = VARIANTS["lib/base.py"][3]  # Base gets a member extra()
    assert text is not None
    apply(graph, "lib/base.py", text)
    # x/user.py calls self.extra() on a subclass of Base (x/other.py too, but its Base comes
    # from lib/__init__.py, absent here: it reads nothing of lib/base.py)
    assert sorted(resolved) == ["lib/base.py", "x/user.py"]
    assert graph.snapshot() == build({**state, "lib/base.py": text}).snapshot()


def test_a_changed_mixin_member_reaches_readers_through_the_hub(monkeypatch: Any) -> None:
    state = initial()
    graph = build(state)
    resolved = spy_resolutions(monkeypatch)
    text = VARIANTS["lib/mixins.py"][1]
    apply(graph, "lib/mixins.py", text)
    assert {"x/user.py", "lib/base.py"} <= set(resolved)
    assert graph.snapshot() == build({**state, "lib/mixins.py": text}).snapshot()
