"""Pagination (docs/query.md#ordering-and-pagination): every match once, in order, across pages;
cursors tied to results."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sleuth.api import Workbench
from sleuth.errors import InvalidQuery, NotFound
from sleuth.tuning import Tuning
from tests.conftest import MakeWorkspace


def _tree(n_files: int = 12, per_file: int = 7) -> dict[str, str | bytes]:
    files: dict[str, str | bytes] = {}
    for i in range(n_files):
        lines = [f"line {j} hit{'' if j % 2 else ' hit'}" for j in range(per_file)]
        files[f"d{i % 3}/f{i:02}.txt"] = "\n".join(lines) + "\n"
    return files


def _walk(wb: Workbench, query: str, limit: int, **kw: Any) -> list[dict[str, Any]]:
    pages = []
    res = wb.search(query, limit=limit, **kw).to_json()
    pages.append(res)
    while res["next_cursor"]:
        res = wb.search(query, limit=limit, cursor=res["next_cursor"], **kw).to_json()
        pages.append(res)
    return pages


def _key(m: dict[str, Any]) -> tuple[str, int, int]:
    return (m["path"], m["line"], m["column"])


@pytest.mark.parametrize("limit", [1, 3, 7, 10, 500])
def test_pages_yield_each_match_once_in_order(make_workspace: MakeWorkspace, limit: int) -> None:
    root = make_workspace(_tree())
    with Workbench(root, build_index=False) as wb:
        full = wb.search("hit", limit=500).to_json()
        pages = _walk(wb, "hit", limit)
    walked = [m for p in pages for m in p["matches"]]
    assert [_key(m) for m in walked] == [_key(m) for m in full["matches"]]
    assert len(walked) == full["total"] == 12 * (4 * 2 + 3)
    assert [m["n"] for m in walked] == list(range(1, len(walked) + 1))
    assert len({p["result"] for p in pages}) == 1
    assert all(len(p["matches"]) == limit for p in pages[:-1])
    assert pages[-1]["next_cursor"] is None


def test_next_cursor_absent_when_page_ends_exactly(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"a.txt": "x\nx\nx\n"})
    with Workbench(root, build_index=False) as wb:
        res = wb.search("x", limit=3).to_json()
        assert len(res["matches"]) == 3 and res["next_cursor"] is None
        res = wb.search("x", limit=2).to_json()
        assert res["next_cursor"] is not None


def test_file_change_between_pages(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(_tree())
    large = Tuning(snapshot_max=10)  # a "large" result: stored page by page
    with Workbench(root, build_index=False, tuning=large) as wb:
        # another identity (context=0), so the paged search below is not served from its snapshot
        before = [_key(m) for m in wb.search("hit", limit=500, context=0).to_json()["matches"]]
        first = wb.search("hit", limit=5).to_json()
        # change a file already delivered and one not yet delivered (same sizes: worst case)
        for rel in ("d0/f00.txt", "d2/f11.txt"):
            p = root / rel
            p.write_text(p.read_text().replace("line 1 hit", "line 1 hot"))
        res, walked = first, list(first["matches"])
        while res["next_cursor"]:
            res = wb.search("hit", limit=5, cursor=res["next_cursor"]).to_json()
            walked.extend(res["matches"])
    keys = [_key(m) for m in walked]
    assert keys == sorted(keys) and len(keys) == len(set(keys))
    assert [m["n"] for m in walked] == list(range(1, len(walked) + 1))
    # d0/f00 was delivered before the change: its snapshot is kept
    assert [k for k in keys if k[0] == "d0/f00.txt"] == [k for k in before if k[0] == "d0/f00.txt"]
    # d2/f11 was not yet read when the change happened: the new content is searched
    assert ("d2/f11.txt", 2, 8) not in keys
    assert ("d2/f11.txt", 2, 8) in before


def test_fully_stored_result_is_a_snapshot(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(_tree(n_files=2))
    with Workbench(root, build_index=False) as wb:
        first = wb.search("hit", limit=3).to_json()
        (root / "d1/f01.txt").write_text("nothing here\n")
        walked = list(first["matches"])
        res = first
        while res["next_cursor"]:
            res = wb.search("hit", limit=3, cursor=res["next_cursor"]).to_json()
            walked.extend(res["matches"])
    # a small result is stored whole by the first page: later pages ignore the change
    assert len(walked) == first["total"] == 22
    assert [m["n"] for m in walked] == list(range(1, 23))


def test_cursors_work_across_workbenches(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(_tree())
    with Workbench(root, build_index=False) as wb:
        first = wb.search("hit", limit=4).to_json()
    with Workbench(root, build_index=False) as wb2:
        second = wb2.search("hit", limit=4, cursor=first["next_cursor"]).to_json()
    assert [m["n"] for m in second["matches"]] == [5, 6, 7, 8]
    assert second["result"] == first["result"]


def test_result_ids_are_deterministic(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(_tree())
    with Workbench(root, build_index=False) as wb:
        a = wb.search("hit").to_json()
        b = wb.search("hit").to_json()
        c = wb.search("hit", case_sensitive=False).to_json()
        assert a == b
        assert c["result"] != a["result"]
        (root / "d0/f00.txt").write_text("changed hit\n")
        d = wb.search("hit").to_json()
        assert d["result"] != a["result"]


def test_forged_and_foreign_cursors(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(_tree())
    with Workbench(root, build_index=False) as wb:
        cur = wb.search("hit", limit=2).to_json()["next_cursor"]
        with pytest.raises(InvalidQuery, match="cursor"):
            wb.search("hit", limit=2, cursor=cur[:-3] + "AAA")
        with pytest.raises(InvalidQuery, match="another query"):
            wb.search("line", limit=2, cursor=cur)
        with pytest.raises(InvalidQuery, match="another query"):
            wb.search("hit", limit=2, cursor=cur, case_sensitive=False)


def test_registry_is_a_real_sqlite_file(make_workspace: MakeWorkspace) -> None:
    import sqlite3

    root = make_workspace(_tree())
    with Workbench(root, build_index=False) as wb:
        rid = wb.search("hit", limit=3).to_json()["result"]
    db = root / ".sleuth" / "registry.sqlite3"
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    (kind, mode, request) = conn.execute(
        "SELECT kind, mode, request FROM results WHERE id = ?", (rid,)
    ).fetchone()
    assert (kind, mode) == ("search", "literal") and '"query": "hit"' in request
    stored = conn.execute("SELECT count(*) FROM matches WHERE result_id = ?", (rid,)).fetchone()[0]
    assert stored >= 3
    assert (root / ".sleuth" / ".gitignore").read_text().strip() == "*"


def test_total_unknown_reports_at_least(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(_tree())
    large = Tuning(count_budget_s=-1.0, small_tree_files=0)  # as if the tree were large
    with Workbench(root, build_index=False, tuning=large) as wb:
        res = wb.search("hit", limit=3).to_json()
    assert res["total"] is None and res["total_at_least"] >= 3
    assert res["next_cursor"] is not None


def test_deleted_state_folder_only_loses_cursors(make_workspace: MakeWorkspace) -> None:
    import shutil

    root = make_workspace(_tree())
    with Workbench(root, build_index=False) as wb:
        cur = wb.search("hit", limit=2).to_json()["next_cursor"]
        shutil.rmtree(root / ".sleuth")
        with pytest.raises(InvalidQuery):
            wb.search("hit", limit=2, cursor=cur)
        assert wb.search("hit", limit=2).to_json()["total"] == 12 * 11


def test_state_path(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    with Workbench(tmp_path, build_index=False) as wb:
        wb.search("x")
    assert (tmp_path / ".sleuth").is_dir()


def test_registry_forgets_the_oldest_results(make_workspace: MakeWorkspace) -> None:
    from sleuth.resources.registry import Registry

    root = make_workspace(_tree(n_files=2))
    with Workbench(root, build_index=False) as wb:
        ids = [wb.search("hit", context=c).to_json()["result"] for c in range(20)]
        old, new = ids[0], ids[-1]
        registry = Registry(root / ".sleuth")
        assert registry.prune(max_results=10) > 0
        assert registry.get_result(old) is None and registry.get_result(new) is not None
        with pytest.raises(NotFound):
            wb.read(f"{old}:1:match")


def test_pages_kept_in_memory_equal_pages_read_back(make_workspace: MakeWorkspace) -> None:
    files = {
        f"m{i:02}.py": "".join(f"def f{j}(a, b):\n    return a\n" for j in range(5))
        for i in range(30)
    }
    root = make_workspace(files)
    query = "ast:def $F($$$A): $$$B"
    with Workbench(root, build_index=False) as wb:
        pages = _walk(wb, query, 7)  # the pager serves the pages it stored from memory
    with Workbench(root, build_index=False) as again:
        for before, page in zip(pages[:-1], pages[1:], strict=True):
            read_back = again.search(query, limit=7, cursor=before["next_cursor"]).to_json()
            assert read_back["matches"] == page["matches"]  # read back from the registry
        repeat = again.search(query, limit=7, cursor=pages[1]["next_cursor"]).to_json()
        ref = pages[2]["matches"][0]["captures"]["A"]["ref"]
        assert [r["text"] for r in again.read(ref).to_json()["ranges"]] == ["a, b"]
    assert repeat["matches"] == pages[2]["matches"]
    assert all("capture_spans" not in m for p in pages for m in p["matches"])
    assert sum(len(p["matches"]) for p in pages) == 150


def test_registry_forgets_the_oldest_results_past_its_byte_cap(
    make_workspace: MakeWorkspace,
) -> None:
    from sleuth.resources.registry import Registry

    root = make_workspace(_tree(n_files=2))
    with Workbench(root, build_index=False) as wb:
        ids = [wb.search("hit", context=c).to_json()["result"] for c in range(20)]
        registry = Registry(root / ".sleuth")
        assert registry.prune() == 0  # far below every default cap
        assert registry.prune(max_bytes=1) > 0  # a file of any size is over one byte
        assert registry.get_result(ids[0]) is None and registry.get_result(ids[-1]) is not None


def test_a_match_of_a_page_not_served_yet_can_be_read(make_workspace: MakeWorkspace) -> None:
    """``read SEARCH#H:N:match`` past the stored pages completes the result first (it was
    ``not_found``: "has no match N")."""
    from sleuth import Workbench

    files = {f"f{i:04}.py": "hit = 1\n" * 30 for i in range(400)}
    root = make_workspace(files)
    with Workbench(root, servers=False) as wb:
        page = wb.search("hit", limit=5)
        assert page.next_cursor is not None
        far = page.result + ":9000:match"
        answer = wb.read(far)
        assert [r["text"] for r in answer.ranges] == ["hit"]
        assert answer.ranges[0]["path"] == "f0299.py"
