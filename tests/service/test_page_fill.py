"""A first page with a text budget stops its scan once the matches found fill the budget
(docs/faces.md#budgets), and a stored result asked for a larger page scans on to fill it."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from sleuth.api import Workbench
from sleuth.render.compact import search_compact
from sleuth.tuning import Tuning
from tests.conftest import MakeWorkspace

# as if the tree were large: no exact count, no snapshot, so a page stores only what it scans
LARGE = Tuning(count_budget_s=-1.0, small_tree_files=0, snapshot_max=10)


def _tree(files: int = 40) -> dict[str, str | bytes]:
    long = "x" * 150
    return {
        f"src/m{i:02}.py": "".join(f"v{j} = 'hit {long}'\nw{j} = 0\n" for j in range(5))
        for i in range(files)
    }


def _stored(root: Path, result: str) -> int:
    conn = sqlite3.connect(root / ".sleuth" / "registry.sqlite3")
    try:
        count: int = conn.execute(
            "SELECT count(*) FROM matches WHERE result_id = ?", (result,)
        ).fetchone()[0]
        return count
    finally:
        conn.close()


def _walk(wb: Workbench, query: str, **kw: Any) -> list[dict[str, Any]]:
    pages = [wb.search(query, **kw).to_json()]
    while pages[-1]["next_cursor"]:
        pages.append(wb.search(query, cursor=pages[-1]["next_cursor"], **kw).to_json())
    return pages


def _keys(pages: list[dict[str, Any]]) -> list[tuple[str, int, int]]:
    return [(m["path"], m["line"], m["column"]) for p in pages for m in p["matches"]]


@pytest.mark.parametrize("query", ["hit", "regex:h[i]t", "ast:$V = $S"])
@pytest.mark.parametrize("context", [0, 2])
def test_a_budgeted_first_page_scans_only_what_it_shows_and_loses_nothing(
    make_workspace: MakeWorkspace, query: str, context: int
) -> None:
    root = make_workspace(_tree())
    kw: dict[str, Any] = {"limit": 100, "context": context, "max_bytes": 2048}
    if query.startswith("ast:"):
        kw["lang"] = "python"
    with Workbench(root, build_index=False, tuning=LARGE) as wb:
        first = wb.search(query, **kw).to_json()
        shown = len(first["matches"])
        stored = _stored(root, first["result"])
        assert first["cut"] == "max_bytes" and first["next_cursor"]
        assert shown < stored < 100  # one file past the page, not a hundred matches
        assert len(search_compact(first).encode()) <= 2048
        pages = _walk(wb, query, **kw)
        whole = _walk(wb, query, **{**kw, "max_bytes": None})
    assert pages[0]["matches"] == first["matches"]
    assert _keys(pages) == _keys(whole)  # every match once, in order
    every = 400 if query.startswith("ast:") else 200  # ast: also matches `w = 0`
    assert len(_keys(pages)) == every and pages[-1]["complete"]


def test_a_stored_result_asked_for_a_larger_page_scans_on(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(_tree())
    with Workbench(root, build_index=False, tuning=LARGE) as wb:
        small = wb.search("hit", limit=3, max_bytes=None).to_json()
        large = wb.search("hit", limit=50, max_bytes=None).to_json()
        assert small["result"] == large["result"]  # the same search: the same result
        assert len(large["matches"]) == 50 and large["next_cursor"]
        walked = _walk(wb, "hit", limit=50, max_bytes=None)
    assert len(_keys(walked)) == 200 == len(set(_keys(walked)))


def test_a_larger_budget_on_a_stored_result_fills_its_page(
    make_workspace: MakeWorkspace,
) -> None:
    root, fresh = make_workspace(_tree()), make_workspace(_tree())
    with Workbench(root, build_index=False, tuning=LARGE) as wb:
        narrow = wb.search("hit", limit=100, context=1, max_bytes=1024).to_json()
        wide = wb.search("hit", limit=100, context=1, max_bytes=8192).to_json()
    with Workbench(fresh, build_index=False, tuning=LARGE) as wb:
        alone = wb.search("hit", limit=100, context=1, max_bytes=8192).to_json()
    assert len(narrow["matches"]) < len(wide["matches"]) == len(alone["matches"])
    assert [m["line"] for m in wide["matches"]] == [m["line"] for m in alone["matches"]]
