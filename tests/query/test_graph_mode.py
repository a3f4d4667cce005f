"""``graph:`` through the query layer on bad and awkward input
(docs/query.md#graph-the-reference-graph, docs/errors.md).

Missing and cloaked paths are ``not_found`` alike and cloaked files never reach the graph; an
unknown id is ``not_found``; a file in a language without tags rules (Kotlin), a file with no
language at all and a generated file over the tags size cap are answered with
``complete: false`` and the reason. The ``test_regression_*`` tests guard engine bugs these
tests found (their docstrings say which).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sleuth.api import Workbench
from sleuth.ast_search import TreeCache
from sleuth.ast_search.tags import MAX_TAGS_BYTES
from sleuth.errors import InvalidPath, InvalidQuery, NotFound
from sleuth.model import symbol_id
from sleuth.query.execute import Engines, prepare
from sleuth.query.request import SearchRequest
from sleuth.workspace import Workspace
from tests.conftest import MakeWorkspace

SMALL: dict[str, str | bytes] = {
    "pyproject.toml": '[tool.sleuth]\ndeny = ["secret/**", "*.key.py"]\n',
    "lib.py": "def helper():\n    return 1\n\n\nclass Base:\n    def run(self):\n        return helper()\n",
    "user.py": "from lib import Base, helper\n\n\nclass Child(Base):\n    def go(self):\n        return helper()\n",
    "secret/spy.py": "from lib import helper\n\n\ndef spy():\n    return helper()\n",
    "api.key.py": "from lib import helper\n\n\ndef leak():\n    return helper()\n",
    "Main.kt": 'fun main() {\n    println("hi")\n}\n',
    "notes.txt": "helper is documented here\n",
    "broken.py": "from lib import helper\n\n\ndef half(:\n    return helper()\n\n\ndef whole():\n    return helper()\n",
}

Json = dict[str, Any]


def run(wb: Workbench, query: str, **kw: Any) -> Json:
    res: Json = wb.search(query, limit=500, **kw).to_json()
    return res


def ids(wb: Workbench, path: str) -> dict[str, str]:
    """{qualified name: id} of the declarations ``graph:PATH`` lists."""
    out = {}
    for m in run(wb, f"graph:{path}")["matches"]:
        g = m["graph"]
        out[f"{g['container']}.{g['name']}" if g["container"] else g["name"]] = g["id"]
    return out


@pytest.fixture
def wb(make_workspace: MakeWorkspace) -> Iterator[Workbench]:
    with Workbench(make_workspace(SMALL), servers=False, build_index=False) as bench:
        yield bench


# -- paths and ids -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["missing.py", "secret/spy.py", "api.key.py", "secret", "secret/", "nope/deeper.py"]
)
def test_missing_or_cloaked_path_is_not_found(wb: Workbench, path: str) -> None:
    with pytest.raises(NotFound) as err:
        wb.search(f"graph:{path}")
    assert err.value.code == "not_found"
    assert "secret" not in json.dumps(err.value.to_json()).replace(path.rstrip("/"), "")


def test_cloaked_and_missing_paths_answer_the_same_words(wb: Workbench) -> None:
    with pytest.raises(NotFound) as cloaked:
        wb.search("graph:secret/spy.py")
    with pytest.raises(NotFound) as missing:
        wb.search("graph:secret/xyz.py")
    assert cloaked.value.message.replace("spy", "X") == missing.value.message.replace("xyz", "X")
    with pytest.raises(NotFound):
        wb.search("graph:", path="secret")


def test_cloaked_files_never_reach_the_graph(wb: Workbench) -> None:
    helper = ids(wb, "lib.py")["helper"]
    answers = [
        run(wb, "graph:"),
        run(wb, "graph:", path="lib.py"),
        run(wb, "graph:lib.py"),
        run(wb, "graph:user.py"),
        run(wb, f"graph:#{helper}", navigation="references", depth=5),
        run(wb, "graph:#lib.py", navigation="references", depth=5),
    ]
    for res in answers:
        blob = json.dumps(res)
        assert (
            "secret" not in blob
            and "spy" not in blob
            and "leak" not in blob
            and ".key." not in blob
        )
    callers = {
        m["graph"]["node"]["name"] for m in answers[4]["matches"] if m["graph"]["direction"] == "in"
    }
    # ``half`` is whatever tree-sitter recovers of ``def half(:``; nothing else may call it
    assert callers - {"half"} == {"run", "go", "user.py", "whole", "broken.py"}
    for path, qualified in (("secret/spy.py", "spy"), ("api.key.py", "leak")):
        for node in (symbol_id(path, qualified, "function"), path):
            with pytest.raises(NotFound):
                wb.search(f"graph:#{node}")


def test_regression_existing_folder_is_not_reported_missing(wb: Workbench) -> None:
    """An existing folder answers its files' declarations (cloaked folders stay ``not_found``).

    Regression (fixed in 4c1b292): ``graph:FOLDER`` answered ``not_found`` ("path not found:
    pkg; check the spelling"), telling an agent that an existing folder did not exist.
    """
    (Path(wb.root) / "pkg" / "sub").mkdir(parents=True)
    (Path(wb.root) / "pkg" / "mod.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    (Path(wb.root) / "pkg" / "sub" / "deep.py").write_text("class C:\n    pass\n", encoding="utf-8")
    try:
        res = run(wb, "graph:pkg")
    except NotFound as err:
        pytest.fail(f"an existing folder answered not_found: {err.message}")
    assert [(m["path"], m["graph"]["name"]) for m in res["matches"]] == [
        ("pkg/mod.py", "f"),
        ("pkg/sub/deep.py", "C"),
    ]
    assert res["complete"] is True
    assert res["matches"][0]["graph"] == run(wb, "graph:pkg/mod.py")["matches"][0]["graph"]


@pytest.mark.parametrize("node", ["0000deadbeef", "lib.py::helper", "helper", "secret/spy.py"])
def test_unknown_id_is_not_found(wb: Workbench, node: str) -> None:
    with pytest.raises(NotFound):
        wb.search(f"graph:#{node}")
    with pytest.raises(NotFound):
        wb.search(f"graph:#{node}", navigation="references")


@pytest.mark.parametrize("query", ["graph:#", "graph:#  "])
def test_an_id_left_out_is_invalid_query(wb: Workbench, query: str) -> None:
    with pytest.raises(InvalidQuery) as err:
        wb.search(query)
    assert err.value.code == "invalid_query" and "graph:#ID" in err.value.message


@pytest.mark.parametrize("path", ["/etc/passwd", "../outside.py", "lib/../../x.py"])
def test_path_leaving_the_root_is_invalid_path(wb: Workbench, path: str) -> None:
    with pytest.raises(InvalidPath):
        wb.search(f"graph:{path}")


def test_bad_depth_is_invalid_query(wb: Workbench) -> None:
    helper = ids(wb, "lib.py")["helper"]
    with pytest.raises(InvalidQuery):
        wb.search(f"graph:#{helper}", navigation="references", depth=-1)
    with pytest.raises(InvalidQuery):
        wb.search(f"graph:#{helper}", navigation="references", depth=0)


# -- incomplete answers --------------------------------------------------------------------


def test_language_without_tags_is_incomplete_with_the_reason(wb: Workbench) -> None:
    res = run(wb, "graph:Main.kt")
    assert (res["complete"], res["total"], res["matches"]) == (False, 0, [])
    assert "kotlin" in res["incomplete_reason"]
    assert res["possible_names"] is None


def test_file_without_a_language_is_incomplete_with_the_reason(wb: Workbench) -> None:
    res = run(wb, "graph:notes.txt")
    assert (res["complete"], res["total"]) == (False, 0)
    assert "notes.txt" in res["incomplete_reason"] and "no declarations" in res["incomplete_reason"]


def test_syntax_error_file_is_answered_from_its_valid_parts(wb: Workbench) -> None:
    res = run(wb, "graph:broken.py")
    assert res["complete"] is True
    names = {m["graph"]["name"] for m in res["matches"]}
    assert "whole" in names
    helper = ids(wb, "lib.py")["helper"]
    whole = ids(wb, "broken.py")["whole"]
    uses = run(wb, f"graph:#{whole}")["matches"]
    assert [
        (m["graph"]["direction"], m["graph"]["edge"], m["graph"]["node"]["id"]) for m in uses
    ] == [("out", "calls", helper)]


def test_ranked_map_is_ordered_by_score_within_limit(wb: Workbench) -> None:
    res = run(wb, "graph:")
    scores = [m["score"] for m in res["matches"]]
    assert scores == sorted(scores, reverse=True) and res["total"] == len(scores) > 3
    assert res["matches"][0]["graph"]["name"] == "helper"  # every file calls it
    assert all(m["graph"]["signature"] for m in res["matches"])
    top = wb.search("graph:", limit=2).to_json()
    assert [m["graph"]["id"] for m in top["matches"]] == [
        m["graph"]["id"] for m in res["matches"][:2]
    ]


# -- a 5 MB generated file -----------------------------------------------------------------


def generated(size: int) -> str:
    """A generated module of at least ``size`` bytes, every function calling ``helper``."""
    parts = ["from lib import helper\n\n\n"]
    total, i = len(parts[0]), 0
    while total < size:
        chunk = f"def gen_{i}(x):\n    return helper() + x + {i}\n\n\n"
        parts.append(chunk)
        total += len(chunk)
        i += 1
    return "".join(parts)


BIG = {
    "lib.py": "def helper():\n    return 1\n",
    "user.py": "from lib import helper\n\n\ndef use():\n    return helper()\n",
    "gen/big.py": generated(5 * 1024 * 1024),
}


@pytest.fixture(scope="module")
def big_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("big")
    for rel, text in BIG.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    assert (root / "gen/big.py").stat().st_size > MAX_TAGS_BYTES
    return root


@pytest.fixture(scope="module")
def big_wb(big_root: Path) -> Iterator[Workbench]:
    with Workbench(big_root, servers=False, build_index=False) as bench:
        yield bench


def test_file_over_the_tags_cap_is_answered_incomplete(big_wb: Workbench) -> None:
    res = run(big_wb, "graph:gen/big.py")
    assert (res["complete"], res["total"]) == (False, 0)
    assert "too large" in res["incomplete_reason"]
    assert str(MAX_TAGS_BYTES) in res["incomplete_reason"]


def test_other_files_are_answered_beside_a_file_over_the_cap(big_wb: Workbench) -> None:
    res = run(big_wb, "graph:lib.py")
    assert res["complete"] is True and [m["graph"]["name"] for m in res["matches"]] == ["helper"]
    callers = {
        n["node"]["name"] for n in res["matches"][0]["graph"]["incoming"]["calls"]["neighbors"]
    }
    assert callers == {"use"}
    ranked = run(big_wb, "graph:")
    assert {m["path"] for m in ranked["matches"]} <= {"lib.py", "user.py"}
    with pytest.raises(NotFound):
        big_wb.search(f"graph:#{symbol_id('gen/big.py', 'gen_0', 'function')}")


def test_regression_graph_answer_is_complete_only_when_every_file_was_tagged(
    big_wb: Workbench,
) -> None:
    """docs/json.md#search: ``complete: false`` whenever anything was not searched (a cap).

    ``gen/big.py`` (over the 2 MiB tags cap) calls ``helper`` about 75,000 times; ``graph:#ID``
    and ``graph:`` cannot list or weigh those uses, so they must say so. Regression (fixed in
    4c1b292): both answered ``complete: true`` with no reason, as if the file did not exist.
    """
    helper = ids(big_wb, "lib.py")["helper"]
    for query in (f"graph:#{helper}", "graph:"):
        res = run(big_wb, query)
        assert res["complete"] is False, query
        assert "gen/big.py" in (res["incomplete_reason"] or ""), query


def test_regression_file_over_the_tags_cap_is_not_parsed(make_workspace: MakeWorkspace) -> None:
    """The tags cap exists so that generated files cost nothing: only lib.py and user.py parse.

    Regression (fixed in 4c1b292): ``TagsCache.get`` asked the ``TreeCache`` for the file's tree
    before ``extract_tags`` checked the size, so the 5 MB file was parsed by tree-sitter (about
    3.5 s here) and its tree kept, only for ``extract_tags`` to refuse it.
    """
    trees = TreeCache()
    ws = Workspace(make_workspace(dict(BIG)))  # no graph cache yet: every file is tagged
    try:
        prepared = prepare(ws, SearchRequest.build("graph:gen/big.py"), Engines(trees=trees))
    finally:
        ws.close()
    assert any("too large" in note for note in prepared.notes)
    assert trees.parses == 2


def test_graph_hash_without_an_id_is_invalid_query_before_the_graph_is_built(
    make_workspace: MakeWorkspace,
) -> None:
    """``graph:#`` names no declaration: a bad query (exit 2), answered without building the
    graph or asking a server (it used to surface as ``not_found`` from the confirmation)."""
    root = make_workspace({"a.py": "def f():\n    return 1\n"})
    with Workbench(root) as wb:  # servers allowed: the confirmation step must not run either
        for query in ("graph:#", "graph:#   "):
            with pytest.raises(InvalidQuery) as info:
                wb.search(query)
            assert "graph:# needs a declaration id" in info.value.message
        assert wb._engines.graph is None and wb._engines.servers is None  # nothing started
