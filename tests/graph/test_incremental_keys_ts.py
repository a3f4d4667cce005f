"""Fine dependency keys in TypeScript: ``this.m()`` through a base class in another file.

The same property as ``test_incremental_keys`` (after every random edit the incrementally
updated graph equals a full rebuild, and every key a full rebuild notes is noted), for the
JavaScript family's scope rules: a class's own members are not in scope for bare names, a
member is reached through ``this``/``super``/the class name, and a base class is imported.
"""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sleuth.graph import Graph
from tests.graph.helpers import apply_tagged, build_tagged, spy_resolutions

BASE = (
    'import { Mixin } from "./mixin";\n'
    "\n"
    "export class Base extends Mixin {\n"
    "  save(): number {\n"
    "    return this.load() + this.mix();\n"
    "  }\n"
    "  load(): number {\n"
    "    return 1;\n"
    "  }\n"
    "}\n"
    "\n"
    "export function helper(): Base {\n"
    "  return new Base();\n"
    "}\n"
)
USER = (
    'import { Base, helper } from "../lib/base";\n'
    "\n"
    "export class User extends Base {\n"
    "  go(): number {\n"
    "    this.save();\n"
    "    this.extra();\n"
    "    return super.load() + helper().load();\n"
    "  }\n"
    "}\n"
)
LATE = (
    'import { Base } from "../lib/base";\n'
    "\n"
    "export class Late extends Base {\n"
    "  go(): number {\n"
    "    return this.mix();\n"
    "  }\n"
    "}\n"
)
VARIANTS: dict[str, list[str | None]] = {
    "lib/base.ts": [
        BASE,
        BASE.replace(
            "  load(): number {", "  extra(): number {\n    return 0;\n  }\n  load(): number {"
        ),
        BASE.replace("  load(): number {", "  loaded(): number {"),  # a member renamed
        BASE.replace("export class Base extends Mixin {", "export class Base {"),
        "// moved\n" + BASE.replace("return 1;", "return  2;"),
        BASE + "\nexport function probe(): number {\n  return helper().load();\n}\n",
        None,
    ],
    "lib/mixin.ts": [
        "export class Mixin {\n  mix(): number {\n    return 0;\n  }\n}\n",
        "export class Mixin {\n  blend(): number {\n    return 0;\n  }\n}\n",
        "export class Mixin {\n  mix(): number {\n    return 0;\n  }\n  extra(): number {\n"
        "    return 5;\n  }\n}\n",
        None,
    ],
    "app/user.ts": [USER, USER.replace("    this.extra();\n", ""), "// moved\n" + USER, None],
    "app/late.ts": [LATE, LATE.replace("this.mix()", "this.load()"), None],
}
PATHS = sorted(VARIANTS)
EXAMPLES = int(os.environ.get("GRAPH_EXAMPLES", "60"))


def build(state: dict[str, str | None]) -> Graph:
    return build_tagged(state, "typescript")


def apply(graph: Graph, path: str, text: str | None) -> None:
    apply_tagged(graph, path, text, "typescript")


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(PATHS), st.integers(0, 6)), min_size=1, max_size=8))
def test_typescript_updates_by_fine_keys_equal_a_full_rebuild(steps: list[tuple[str, int]]) -> None:
    state: dict[str, str | None] = {p: v[0] for p, v in VARIANTS.items()}
    graph = build(state)
    for path, choice in steps:
        versions = VARIANTS[path]
        state[path] = versions[choice % len(versions)]
        apply(graph, path, state[path])
        full = build(state)
        assert graph.snapshot() == full.snapshot(), (path, choice)
        for key, users in full._key_users.items():
            assert users <= graph._key_users.get(key, set()), (path, key)


def test_a_new_member_resolves_only_the_typescript_readers_that_looked_it_up(
    monkeypatch: Any,
) -> None:
    state: dict[str, str | None] = {p: v[0] for p, v in VARIANTS.items()}
    graph = build(state)
    assert any(
        k.startswith("member:lib/base.ts\0Base\0extra")
        for k in graph.resolution("app/user.ts").keys
    )
    resolved = spy_resolutions(monkeypatch)
    text = VARIANTS["lib/base.ts"][1]  # Base gets extra()
    apply(graph, "lib/base.ts", text)
    assert sorted(resolved) == ["app/user.ts", "lib/base.ts"]  # app/late.ts never looks up extra
    assert graph.snapshot() == build({**state, "lib/base.ts": text}).snapshot()
    nodes = graph.g.nodes
    calls = {
        (nodes[u].get("container"), nodes[u]["name"], nodes[v]["name"])
        for u, v, k in graph.g.edges(keys=True)
        if k == "calls"
    }
    assert ("User", "go", "extra") in calls  # this.extra() now reaches Base.extra
