"""``graph:`` end to end on two fixture projects whose expected graphs are written beside them.

``tests/fixtures/graph_py`` (Python) and ``tests/fixtures/graph_ts`` (TypeScript) each have
several files, classes with inheritance and ``self``/``this``/``super`` calls, imports (a
package re-export, a namespace import, a folder ``index.ts``), a function called from three
places and a same-named unrelated function in another module. ``expected.json`` lists every
declaration and every non-``contains`` edge with the position of each use; the tests derive
from it what ``graph:PATH``, ``graph:#ID`` and ``graph:#ID`` with ``navigation="references"``
must answer, and compare exactly (docs/query.md#graph-the-reference-graph).

Edits (issue 7, item 3): after ``wb.replace(...)`` or a write from outside, only the edited
file's records and nodes change, and every answer equals a fresh ``Workbench`` on a copy of the
edited tree (a full rebuild), compared as JSON minus result ids.

The CLI is checked for the same answers and for exit code 4 (``not_found``).
"""

from __future__ import annotations

import json
import shutil
import time
from collections import Counter, deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sleuth import Workbench
from sleuth.errors import NotFound
from sleuth.graph import DEFAULT_CACHE, Graph, load
from tests.e2e.conftest import run_cli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PROJECTS = ("graph_py", "graph_ts")
USE_KINDS = ("calls", "references", "imports", "inherits")
# The function called from three places and its unrelated namesake, per project.
THRICE = {
    "graph_py": ("shop/pricing.py::total_price", "tools/helpers.py::total_price"),
    "graph_ts": ("src/pricing.ts::totalPrice", "src/tools/helpers.ts::totalPrice"),
}

Json = dict[str, Any]
UseRow = tuple[str, str, str, int, int, str]  # direction, edge, path, line, column, other end


# -- the expected graph --------------------------------------------------------------------


@dataclass(frozen=True)
class Expected:
    """``expected.json`` of one fixture project, with lookups derived from it."""

    files: list[str]
    nodes: dict[str, Json]  # key -> {"kind", "line", "end_line"}
    edges: list[Json]  # {"source", "target", "kind", "at": [[line, column], ...]}

    @classmethod
    def load(cls, name: str) -> Expected:
        doc = json.loads((FIXTURES / name / "expected.json").read_text(encoding="utf-8"))
        return cls(doc["files"], doc["nodes"], doc["edges"])

    def decls_of(self, path: str) -> list[str]:
        return [k for k in self.nodes if k.split("::")[0] == path]

    def members_of(self, key: str) -> set[str]:
        return {k for k in self.nodes if k.rpartition(".")[0] == key and "." in k.split("::")[1]}

    def groups(self, key: str, direction: str) -> dict[str, dict[str, int]]:
        """{edge kind: {neighbour key: occurrences}} as ``graph:PATH`` groups them."""
        out: dict[str, dict[str, int]] = {}
        for e in self.edges:
            mine, other = (
                (e["source"], e["target"]) if direction == "out" else (e["target"], e["source"])
            )
            if mine == key:
                out.setdefault(e["kind"], {})[other] = len(e["at"])
        return out

    def uses(self, key: str) -> list[UseRow]:
        """Every use in or out of ``key`` as ``graph:#ID`` lists it (sorted)."""
        rows: list[UseRow] = []
        for e in self.edges:
            path = e["source"].split("::")[0]  # a use is written in the source's file
            for line, column in e["at"]:
                if e["target"] == key:
                    rows.append(("in", e["kind"], path, line, column, e["source"]))
                if e["source"] == key:
                    rows.append(("out", e["kind"], path, line, column, e["target"]))
        return sorted(rows)

    def dependents(self, key: str, depth: int) -> dict[str, tuple[int, str]]:
        """Declarations using ``key`` within ``depth`` uses (files are walked, not listed)."""
        seen, found = {key}, {}
        queue: deque[tuple[str, int]] = deque([(key, 0)])
        while queue:
            current, dist = queue.popleft()
            if dist >= depth:
                continue
            for e in sorted(self.edges, key=lambda e: (e["source"], e["kind"])):
                if e["target"] == current and e["source"] not in seen:
                    seen.add(e["source"])
                    queue.append((e["source"], dist + 1))
                    if "::" in e["source"]:
                        found[e["source"]] = (dist + 1, e["kind"])
        return found


# -- reading answers -----------------------------------------------------------------------


def node_key(node: Json) -> str:
    """``path`` for a file node, ``path::Container.name`` for a declaration."""
    if node.get("is_file"):
        return str(node["path"])
    qualified = f"{node['container']}.{node['name']}" if node["container"] else node["name"]
    return f"{node['path']}::{qualified}"


def strip_ids(value: Any) -> Any:
    """A response without its result id and references (they differ between workbenches)."""
    if isinstance(value, dict):
        return {k: strip_ids(v) for k, v in value.items() if k not in ("result", "ref", "all")}
    if isinstance(value, list):
        return [strip_ids(v) for v in value]
    return value


def search(wb: Workbench, query: str, **kw: Any) -> Json:
    res: Json = wb.search(query, limit=500, **kw).to_json()
    assert res["mode"] == "graph" and res["next_cursor"] is None, query
    return res


def declarations(wb: Workbench, path: str) -> dict[str, Json]:
    """``graph:PATH`` as {key: match}."""
    res = search(wb, f"graph:{path}")
    assert res["complete"] is True and res["incomplete_reason"] is None, path
    return {node_key(m["graph"]): m for m in res["matches"]}


def all_ids(wb: Workbench, files: list[str]) -> dict[str, str]:
    """{key: id} of every declaration and file."""
    ids = {f: f for f in files}
    for f in files:
        ids.update({k: m["graph"]["id"] for k, m in declarations(wb, f).items()})
    return ids


def use_rows(res: Json) -> list[UseRow]:
    rows = []
    for m in res["matches"]:
        g = m["graph"]
        if g["edge"] == "dependent":
            continue
        rows.append(
            (g["direction"], g["edge"], m["path"], m["line"], m["column"], node_key(g["node"]))
        )
    return sorted(rows)


# -- fixtures ------------------------------------------------------------------------------


def copy_project(name: str, dest: Path) -> Path:
    """A copy of fixture project ``name`` without its expected.json."""
    shutil.copytree(
        FIXTURES / name, dest, ignore=shutil.ignore_patterns("expected.json", "__pycache__")
    )
    return dest


@dataclass
class Project:
    name: str
    root: Path
    wb: Workbench
    expected: Expected
    ids: dict[str, str]


@pytest.fixture(scope="module", params=PROJECTS)
def project(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Project]:
    """One read-only copy of a fixture project and one Workbench on it, per project."""
    name = request.param
    root = copy_project(name, tmp_path_factory.mktemp(name) / "ws")
    wb = Workbench(root, servers=False)
    expected = Expected.load(name)
    try:
        yield Project(name, root, wb, expected, all_ids(wb, expected.files))
    finally:
        wb.close()


# -- graph:PATH ----------------------------------------------------------------------------


def test_expected_files_are_the_projects_source_files(project: Project) -> None:
    on_disk = sorted(
        p.relative_to(project.root).as_posix()
        for p in project.root.rglob("*")
        if p.is_file() and p.suffix in (".py", ".ts") and ".sleuth" not in p.parts
    )
    assert on_disk == project.expected.files


def test_file_view_lists_exactly_the_expected_declarations(project: Project) -> None:
    exp = project.expected
    for path in exp.files:
        got = declarations(project.wb, path)
        assert sorted(got) == sorted(exp.decls_of(path)), path
        for key, m in got.items():
            g = m["graph"]
            want = exp.nodes[key]
            assert (g["kind"], g["line"], g["end_line"]) == (
                want["kind"],
                want["line"],
                want["end_line"],
            ), key
            # the match is the whole declaration, readable by its reference
            assert (m["line"], m["end_line"], m["start_byte"], m["end_byte"]) == (
                g["line"],
                g["end_line"],
                g["start_byte"],
                g["end_byte"],
            ), key
            members = {k for k, i in project.ids.items() if i in g["members"]}
            assert members == exp.members_of(key) and len(g["members"]) == len(members), key


def test_file_view_edges_are_exactly_the_expected_ones(project: Project) -> None:
    exp = project.expected
    for path in exp.files:
        for key, m in declarations(project.wb, path).items():
            for direction, short in (("outgoing", "out"), ("incoming", "in")):
                groups = m["graph"][direction]
                got = {
                    kind: {node_key(n["node"]): n["occurrences"] for n in group["neighbors"]}
                    for kind, group in groups.items()
                }
                assert got == exp.groups(key, short), (key, direction)
                for kind, group in groups.items():
                    assert kind in USE_KINDS and group["kind"] == kind
                    assert group["count"] == len(group["neighbors"])
                    assert group["uses"] == sum(n["occurrences"] for n in group["neighbors"])
                    assert {n["precision"] for n in group["neighbors"]} == {"syntactic"}


def test_file_without_declarations_is_answered_with_no_matches(project: Project) -> None:
    empty = [f for f in project.expected.files if not project.expected.decls_of(f)]
    assert empty, "each fixture has a re-exporting module without declarations"
    for path in empty:
        res = search(project.wb, f"graph:{path}")
        assert (res["total"], res["complete"]) == (0, True)


# -- graph:#ID -----------------------------------------------------------------------------


def test_node_view_lists_exactly_the_expected_uses(project: Project) -> None:
    for key, node_id in sorted(project.ids.items()):
        res = search(project.wb, f"graph:#{node_id}")
        assert res["complete"] is True, key
        assert use_rows(res) == project.expected.uses(key), key
        for m in res["matches"]:
            assert m["graph"]["precision"] == "syntactic"
            assert m["graph"]["kind"] == m["graph"]["node"]["kind"]


def test_same_named_function_gets_no_edge_from_the_others_callers(project: Project) -> None:
    shop, unrelated = THRICE[project.name]
    callers = {}
    for key in (shop, unrelated):
        res = search(project.wb, f"graph:#{project.ids[key]}")
        callers[key] = {
            node_key(m["graph"]["node"]) for m in res["matches"] if m["graph"]["direction"] == "in"
        }
    assert len({c for c in callers[shop] if "::" in c}) == 3, callers[shop]
    assert callers[shop].isdisjoint(callers[unrelated]), callers
    for key in callers[unrelated]:
        res = search(project.wb, f"graph:#{project.ids[key]}")
        targets = {
            node_key(m["graph"]["node"]) for m in res["matches"] if m["graph"]["direction"] == "out"
        }
        assert shop not in targets, key


def test_uses_are_references_that_read_the_used_name(project: Project) -> None:
    shop, _ = THRICE[project.name]
    name = shop.rpartition("::")[2]
    res = search(project.wb, f"graph:#{project.ids[shop]}")
    assert res["total"] == len(project.expected.uses(shop)) > 3
    used = []  # an incoming use names this declaration, an outgoing one the other end
    for m in res["matches"]:
        g = m["graph"]
        used.append(name if g["direction"] == "in" else g["node"]["name"])
        read = project.wb.read(m["ref"]["match"]).to_json()
        assert [r["text"] for r in read["ranges"]] == [used[-1]], m["ref"]
    assert used.count(name) == sum(1 for u in project.expected.uses(shop) if u[0] == "in")
    whole = project.wb.read(res["all"]["match"]).to_json()
    assert sorted(r["text"] for r in whole["ranges"]) == sorted(used)


def test_ids_are_the_symbols_ids(project: Project) -> None:
    for key, node_id in project.ids.items():
        if "::" not in key:
            continue
        path, qualified = key.split("::")
        res = project.wb.search(f"symbols:{qualified.rpartition('.')[2]}", path=path).to_json()
        assert node_id in {m["symbol"]["id"] for m in res["matches"]}, key


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_dependents_up_to_depth(project: Project, depth: int) -> None:
    shop, _ = THRICE[project.name]
    res = search(project.wb, f"graph:#{project.ids[shop]}", navigation="references", depth=depth)
    deps = {
        node_key(m["graph"]["node"]): (m["graph"]["distance"], m["graph"]["via"])
        for m in res["matches"]
        if m["graph"]["edge"] == "dependent"
    }
    assert deps == project.expected.dependents(shop, depth)
    assert use_rows(res) == project.expected.uses(shop)
    for m in res["matches"]:
        if m["graph"]["edge"] == "dependent":  # the match is the dependent's declaration
            assert (m["path"], m["line"]) == (
                m["graph"]["node"]["path"],
                m["graph"]["node"]["line"],
            )


def test_default_depth_is_two(project: Project) -> None:
    shop, _ = THRICE[project.name]
    node = f"graph:#{project.ids[shop]}"
    default = search(project.wb, node, navigation="references")
    two = search(project.wb, node, navigation="references", depth=2)
    assert strip_ids(default["matches"]) == strip_ids(two["matches"])
    assert max(m["graph"].get("distance") or 0 for m in default["matches"]) == 2


# -- the CLI -------------------------------------------------------------------------------


def test_cli_answers_as_the_api(project: Project) -> None:
    shop, _ = THRICE[project.name]
    query = f"graph:#{project.ids[shop]}"
    proc = run_cli(
        [
            "search",
            query,
            "--navigation",
            "references",
            "--depth",
            "1",
            "--limit",
            "500",
            "--root",
            str(project.root),
            "--json",
        ]
    )
    assert proc.returncode == 0, proc.stderr
    api = search(project.wb, query, navigation="references", depth=1)
    cli = json.loads(proc.stdout)
    assert strip_ids(cli) == strip_ids(api)
    path = shop.split("::")[0]
    proc = run_cli(["search", f"graph:{path}", "--root", str(project.root), "--json"])
    assert proc.returncode == 0, proc.stderr
    assert strip_ids(json.loads(proc.stdout)) == strip_ids(search(project.wb, f"graph:{path}"))


@pytest.mark.parametrize(
    "query", ["graph:#0000deadbeef", "graph:no/such/file.py", "graph:#no/such/file.py"]
)
def test_cli_not_found_exits_4(query: str, tmp_path: Path) -> None:
    root = copy_project("graph_py", tmp_path / "ws")
    proc = run_cli(["search", query, "--root", str(root), "--json"])
    assert proc.returncode == 4, (proc.stdout, proc.stderr)
    assert json.loads(proc.stdout)["error"]["code"] == "not_found"
    with Workbench(root, servers=False) as wb, pytest.raises(NotFound):
        wb.search(query)


# -- edits: incremental answers equal a full rebuild ---------------------------------------

# Per project: (file, regex, replacement) for wb.replace, and (file, new content) written from
# outside. The first renames the unrelated namesake (its importer loses those edges), the second
# rewrites the pricing module (new function in the middle of the call chain).
EDITS: dict[str, tuple[tuple[str, str, str], tuple[str, str]]] = {
    "graph_py": (
        ("tools/helpers.py", r"\btotal_price\b", "count_rows"),
        (
            "shop/pricing.py",
            '"""Prices of items."""\n\nDEFAULT_RATE = 0.2\n\n\n'
            "def total_price(items):\n    return sum(item.price for item in items)\n\n\n"
            "def net_price(items):\n    return total_price(items) - discount(items)\n\n\n"
            "def discount(items):\n    return 0\n\n\n"
            "def with_tax(items, rate=DEFAULT_RATE):\n    return net_price(items) * (1 + rate)\n",
        ),
    ),
    "graph_ts": (
        ("src/tools/helpers.ts", r"\btotalPrice\b", "countRows"),
        (
            "src/pricing.ts",
            "export interface Item {\n  price: number;\n}\n\n"
            "export function totalPrice(items: Item[]): number {\n  return items.length;\n}\n\n"
            "export function netPrice(items: Item[]): number {\n  return totalPrice(items) - discount(items);\n}\n\n"
            "function discount(items: Item[]): number {\n  return 0;\n}\n\n"
            "export function withTax(items: Item[], rate: number): number {\n"
            "  return netPrice(items) * (1 + rate);\n}\n",
        ),
    ),
}


def graph_answers(wb: Workbench, files: list[str]) -> Json:
    """Every ``graph:PATH``, every ``graph:#ID`` (declarations and files) and ``graph:``."""
    out: Json = {"files": {}, "nodes": {}}
    ids = set(files)
    for f in files:
        res = search(wb, f"graph:{f}")
        out["files"][f] = strip_ids(res)
        ids.update(m["graph"]["id"] for m in res["matches"])
    for node_id in sorted(ids):
        out["nodes"][node_id] = strip_ids(
            search(wb, f"graph:#{node_id}", navigation="references", depth=3)
        )
    ranked = strip_ids(search(wb, "graph:"))
    for m in ranked["matches"]:
        m["score"] = round(m["score"], 9)
    out["rank"] = ranked
    return out


def cached_graph(root: Path, wb: Workbench | None = None) -> Graph:
    """The graph as the workbench last saved it (``.sleuth/graph.db``; ``wb``, still open,
    first stores the rows it writes behind)."""
    if wb is not None and wb._engines.graph is not None:
        wb._engines.graph._store.wait()
    graph = load(str(root / DEFAULT_CACHE))
    assert graph.files(), "the graph cache was written"
    return graph


def nodes_outside(graph: Graph, path: str) -> dict[str, Json]:
    return {n: a for n, a in graph.snapshot()["nodes"].items() if a["path"] != path}


def edges_not_touching(graph: Graph, path: str) -> set[Any]:
    owned = {n for n, a in graph.g.nodes(data=True) if a["path"] == path}
    return {e for e in graph.snapshot()["edges"] if e[0] not in owned and e[1] not in owned}


def assert_only_file_changed(before: Graph, after: Graph, path: str) -> None:
    """Records, nodes and edges of every other file are as they were."""
    assert after.files() == before.files()
    for other in before.files():
        if other != path:
            assert after.record(other) == before.record(other), other
    assert after.record(path) != before.record(path)
    assert nodes_outside(after, path) == nodes_outside(before, path)
    assert edges_not_touching(after, path) == edges_not_touching(before, path)


@pytest.mark.parametrize("name", PROJECTS)
@pytest.mark.parametrize("how", ["replace", "outside"])
def test_edit_updates_one_file_and_equals_a_full_rebuild(
    name: str, how: str, tmp_path: Path
) -> None:
    files = Expected.load(name).files
    root = copy_project(name, tmp_path / "live")
    (path, pattern, new), (out_path, content) = EDITS[name]
    with Workbench(root, servers=False) as wb:
        before_answers = graph_answers(wb, files)
        before = cached_graph(root, wb)
        if how == "replace":
            found = wb.search(f"regex:{pattern}", path=path).to_json()
            assert found["total"] >= 2
            wb.replace(found["all"]["match"], new)
            edited = path
        else:
            (root / out_path).write_text(content, encoding="utf-8")
            edited = out_path
        after_answers = graph_answers(wb, files)
        after = cached_graph(root, wb)
    assert after_answers != before_answers, "the edit changed the graph"
    assert_only_file_changed(before, after, edited)
    fresh_root = tmp_path / "fresh"
    shutil.copytree(root, fresh_root, ignore=shutil.ignore_patterns(".sleuth"))
    with Workbench(fresh_root, servers=False) as fresh:
        assert graph_answers(fresh, files) == after_answers
    assert after.snapshot() == cached_graph(fresh_root).snapshot()


def test_edit_then_undo_restores_the_answers(tmp_path: Path) -> None:
    files = Expected.load("graph_py").files
    root = copy_project("graph_py", tmp_path / "ws")
    with Workbench(root, servers=False) as wb:
        before = graph_answers(wb, files)
        found = wb.search("regex:\\bCart\\b", path="shop/checkout.py").to_json()
        done = wb.replace(found["all"]["match"], "Basket")
        changed = graph_answers(wb, files)
        cart_uses = Counter(
            m["graph"]["edge"]
            for m in search(wb, "graph:#" + all_ids(wb, files)["shop/models.py::Cart"])["matches"]
        )
        assert cart_uses == Counter({"inherits": 1}), (
            "checkout's import and call no longer reach Cart"
        )
        wb.undo(done.result)
        assert graph_answers(wb, files) == before != changed


def wait_until_watching(wb: Workbench) -> None:
    """Wait until the watcher's generation is trustworthy (the stamp pass is then skipped)."""
    for _ in range(1000):
        if wb.workspace.generation is not None:
            return
        time.sleep(0.01)
    pytest.fail("the watcher never became trustworthy")


def test_regression_edit_through_a_watching_workbench_is_seen_at_once(tmp_path: Path) -> None:
    """docs/edits.md: an edit's result is usable at once; the next query must see the new text.

    A watching Workbench (the MCP server's) skips the stamp pass while the watcher's generation
    is unchanged. Regression (fixed in 4c1b292): ``wb.replace`` wrote the file without moving
    the generation, so until the watcher's debounce fired (about 50 ms later) ``graph:``
    answered from the graph before the edit (``app.py`` still called the renamed function).
    """
    files = Expected.load("graph_py").files
    root = copy_project("graph_py", tmp_path / "live")
    with Workbench(root, servers=False, watch=True) as wb:
        wait_until_watching(wb)
        graph_answers(wb, files)
        found = wb.search(r"regex:\btotal_price\b", path="tools/helpers.py").to_json()
        wb.replace(found["all"]["match"], "count_rows")
        after = graph_answers(wb, files)  # no waiting: the edit layer's own write
    fresh_root = tmp_path / "fresh"
    shutil.copytree(root, fresh_root, ignore=shutil.ignore_patterns(".sleuth"))
    with Workbench(fresh_root, servers=False) as fresh:
        assert graph_answers(fresh, files)["files"]["app.py"] == after["files"]["app.py"]
        assert graph_answers(fresh, files) == after


def test_write_from_outside_is_seen_once_the_watcher_noticed_it(tmp_path: Path) -> None:
    """A watching Workbench answers from the new text once its generation moved."""
    files = Expected.load("graph_py").files
    root = copy_project("graph_py", tmp_path / "live")
    _, (path, content) = EDITS["graph_py"]
    with Workbench(root, servers=False, watch=True) as wb:
        wait_until_watching(wb)
        before = graph_answers(wb, files)
        start = wb.workspace.generation
        (root / path).write_text(content, encoding="utf-8")
        for _ in range(1000):
            if wb.workspace.generation != start:
                break
            time.sleep(0.01)
        after = graph_answers(wb, files)
    assert after != before
    fresh_root = tmp_path / "fresh"
    shutil.copytree(root, fresh_root, ignore=shutil.ignore_patterns(".sleuth"))
    with Workbench(fresh_root, servers=False) as fresh:
        assert graph_answers(fresh, files) == after


def test_regression_scoped_graph_answer_follows_edits_outside_the_scope(tmp_path: Path) -> None:
    """``graph:#ID`` and ``graph:`` answer from the whole workspace, whatever ``path`` is.

    The result registry reuses a stored result when the request and its fingerprint are
    unchanged. Regression (fixed in 4c1b292): the fingerprint covered only the *scope's*
    listing, so with ``path="tools"`` a new caller written in ``app.py`` (outside the scope)
    brought the old answer back (same ``SEARCH#`` id, 3 uses instead of 6; the personalised
    ranking kept its old scores), while the same query without ``path`` saw the new uses.
    """
    root = copy_project("graph_py", tmp_path / "ws")
    with Workbench(root, servers=False) as wb:
        report = all_ids(wb, ["tools/helpers.py"])["tools/helpers.py::report"]
        before = search(wb, f"graph:#{report}", path="tools")
        ranked_before = search(wb, "graph:", path="tools")
        with (root / "app.py").open("a", encoding="utf-8") as fh:
            fh.write(
                "\n\ndef more(rows):\n    report(rows)\n    report(rows)\n    return report(rows)\n"
            )
        unscoped = search(wb, f"graph:#{report}")
        scoped = search(wb, f"graph:#{report}", path="tools")
        ranked_after = search(wb, "graph:", path="tools")
    assert unscoped["total"] == before["total"] + 3
    assert strip_ids(scoped) == strip_ids(unscoped)
    assert scoped["result"] != before["result"]
    assert ranked_after["matches"] != ranked_before["matches"]


def test_regression_a_ranked_map_answers_the_limit_asked(tmp_path: Path) -> None:
    """``graph:`` is one ranking paged like any result: a larger limit after a smaller one
    shows more of the same ranking, and the cursor of a small page continues it."""
    root = copy_project("graph_py", tmp_path / "graph_py")
    with Workbench(root, servers=False) as wb:
        small = wb.search("graph:", limit=1).to_json()
        large = wb.search("graph:", limit=5).to_json()
        default = wb.search("graph:").to_json()
        rest = wb.search("graph:", limit=4, cursor=small["next_cursor"]).to_json()
    assert len(small["matches"]) == 1 and len(large["matches"]) == 5
    assert large["result"] == small["result"] == default["result"]
    assert len(default["matches"]) == min(20, default["total"])
    ids = [m["graph"]["id"] for m in large["matches"]]
    assert [m["graph"]["id"] for m in small["matches"] + rest["matches"]] == ids
    assert small["next_cursor"] is not None
