"""References through the API (docs/references.md): read, staleness, :all refresh, scopes,
select."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from sleuth.api import Workbench
from sleuth.errors import InvalidQuery, NotFound, StaleReference, Unsupported
from sleuth.tuning import Tuning
from tests.conftest import MakeWorkspace

SRC = {
    "app.py": "def handler(uid):\n    user = get_user(uid)\n    return user\n\nget_user(1)\n",
    "lib.py": "def get_user(uid):\n    return {'id': uid}\n",
    "notes.txt": "get_user is documented here\n",
}


@pytest.fixture
def wb(make_workspace: MakeWorkspace) -> Workbench:
    return Workbench(make_workspace(SRC), build_index=False)


def _ranges(res: Any) -> list[tuple[str, int, str]]:
    return [(r["path"], r["line"], r["text"]) for r in res.to_json()["ranges"]]


def test_read_match_and_line(wb: Workbench) -> None:
    rid = wb.search("get_user").to_json()["result"]
    assert _ranges(wb.read(f"{rid}:1:match")) == [("app.py", 2, "get_user")]
    assert _ranges(wb.read(f"{rid}:1:line")) == [("app.py", 2, "    user = get_user(uid)")]
    out = wb.read(f"{rid}:1:match").to_json()
    assert out["result"].startswith("RESULT#") and out["source"] == f"{rid}:1:match"
    assert out["refreshed"] is False and out["complete"] is True
    r = out["ranges"][0]
    assert Path(wb.root, "app.py").read_bytes()[r["start_byte"] : r["end_byte"]] == b"get_user"


def test_line_of_a_multiline_match(wb: Workbench) -> None:
    rid = wb.search(r"regex:user\(uid\)\n\s+return").to_json()["result"]
    assert _ranges(wb.read(f"{rid}:1:line")) == [
        ("app.py", 2, "    user = get_user(uid)\n    return user")
    ]


def test_all_covers_every_page(wb: Workbench) -> None:
    first = wb.search("get_user", limit=1).to_json()
    assert first["next_cursor"] and len(first["matches"]) == 1
    rid = first["result"]
    got = _ranges(wb.read(f"{rid}:all:match"))
    assert got == [
        ("app.py", 2, "get_user"),
        ("app.py", 5, "get_user"),
        ("lib.py", 1, "get_user"),
        ("notes.txt", 1, "get_user"),
    ]
    lines = _ranges(wb.read(f"{rid}:all:line"))
    assert [(p, n) for p, n, _ in lines] == [
        ("app.py", 2),
        ("app.py", 5),
        ("lib.py", 1),
        ("notes.txt", 1),
    ]


def test_all_of_a_large_paged_result(make_workspace: MakeWorkspace) -> None:
    # stored page by page, nothing counted past a page: as if the tree were large
    large = Tuning(snapshot_max=0, count_budget_s=-1.0, small_tree_files=0)
    wb = Workbench(make_workspace(SRC), build_index=False, tuning=large)
    first = wb.search("get_user", limit=1).to_json()
    assert first["total"] is None
    assert len(wb.read(f"{first['result']}:all:match").to_json()["ranges"]) == 4


def test_one_byte_change_stales_only_that_file(wb: Workbench) -> None:
    rid = wb.search("get_user").to_json()["result"]
    app = Path(wb.root, "app.py")
    app.write_bytes(app.read_bytes().replace(b"return user", b"return usEr"))
    with pytest.raises(StaleReference) as err:
        wb.read(f"{rid}:1:match")
    assert "app.py" in err.value.message and "re-run" in err.value.message
    assert err.value.details["files"] == ["app.py"]
    assert err.value.exit_code == 3
    assert _ranges(wb.read(f"{rid}:3:match")) == [("lib.py", 1, "get_user")]


def test_trailing_newline_change_is_stale(wb: Workbench) -> None:
    rid = wb.search("get_user").to_json()["result"]
    lib = Path(wb.root, "lib.py")
    lib.write_bytes(lib.read_bytes().rstrip(b"\n"))
    with pytest.raises(StaleReference):
        wb.read(f"{rid}:3:line")


def test_all_refreshes_after_a_change(wb: Workbench) -> None:
    rid = wb.search("get_user").to_json()["result"]
    app = Path(wb.root, "app.py")
    # the match of line 2 moves to line 3; the one on line 5 is deleted
    app.write_text("def handler(uid):\n\n    user = get_user(uid)\n    return user\n")
    out = wb.read(f"{rid}:all:match").to_json()
    assert out["refreshed"] is True
    assert [(r["path"], r["line"]) for r in out["ranges"]] == [
        ("app.py", 3),
        ("lib.py", 1),
        ("notes.txt", 1),
    ]
    # a refreshed :all is a fresh result: reading it again needs no refresh
    assert wb.read(f"{rid}:all:match").to_json()["refreshed"] is True
    new = wb.search("get_user").to_json()["result"]
    assert wb.read(f"{new}:all:match").to_json()["refreshed"] is False


def test_search_inside_a_read_window(wb: Workbench) -> None:
    window = wb.read("app.py", offset=2, limit=2).to_json()
    assert [(r["line"], r["end_line"]) for r in window["ranges"]] == [(2, 3)]
    res = wb.search("user", path=window["result"]).to_json()
    assert {m["line"] for m in res["matches"]} == {2, 3}
    assert all(m["path"] == "app.py" for m in res["matches"])


def test_search_inside_sparse_ranges_ignores_gaps(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"a.txt": "mark one\nfiller gap\nmark two\n"})
    with Workbench(root, build_index=False) as wb:
        rid = wb.search("mark").to_json()["result"]
        scope = f"{rid}:all:line"
        assert wb.search("gap", path=scope).to_json()["total"] == 0
        assert wb.search("one", path=scope).to_json()["total"] == 1
        # a match spanning the gap exists in the file but not inside the selection
        assert wb.search(r"regex:one\nfiller gap\nmark").to_json()["total"] == 1
        assert wb.search(r"regex:one\nfiller gap\nmark", path=scope).to_json()["total"] == 0
        # matches inside one match's exact range only
        m2 = wb.search("o", path=f"{rid}:2:match").to_json()
        assert m2["total"] == 0


def test_boolean_and_globs_on_a_reference_scope_are_unsupported(wb: Workbench) -> None:
    rid = wb.search("get_user").to_json()["result"]
    with pytest.raises(Unsupported):
        wb.search("user AND uid", path=f"{rid}:all:line")
    with pytest.raises(Unsupported):
        wb.search("user", path=f"{rid}:all:line", include=["*.py"])


@pytest.mark.parametrize(
    ("ref", "error"),
    [
        ("SEARCH#zz", InvalidQuery),
        ("RESULT#", InvalidQuery),
        ("SEARCH#1'; DROP TABLE results;--", InvalidQuery),
        ("SEARCH#0123abcd:1:match", NotFound),
        ("RESULT#deadbeef", NotFound),
    ],
)
def test_forged_and_unknown_references(wb: Workbench, ref: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        wb.read(ref)
    with pytest.raises(error):
        wb.search("x", path=ref)


def test_match_number_out_of_range(wb: Workbench) -> None:
    rid = wb.search("get_user").to_json()["result"]
    with pytest.raises(NotFound, match="no match 999"):
        wb.read(f"{rid}:999:line")


def test_reference_from_another_workspace(make_workspace: MakeWorkspace) -> None:
    a = Workbench(make_workspace({"x.txt": "needle\n"}), build_index=False)
    b = Workbench(make_workspace({"y.txt": "other\n"}), build_index=False)
    rid = a.search("needle").to_json()["result"]
    with pytest.raises(NotFound):
        b.read(f"{rid}:1:match")


def test_deleted_state_folder(wb: Workbench) -> None:
    rid = wb.search("get_user").to_json()["result"]
    shutil.rmtree(Path(wb.root, ".sleuth"))
    with pytest.raises(NotFound):
        wb.read(f"{rid}:1:match")
    again = wb.search("get_user").to_json()
    assert _ranges(wb.read(f"{again['result']}:1:match")) == [("app.py", 2, "get_user")]


def test_select_registers_a_subset(wb: Workbench) -> None:
    rid = wb.search("get_user").to_json()["result"]
    sel = wb.select(rid, [1, 3]).to_json()
    assert [(r["path"], r["line"]) for r in sel["ranges"]] == [("app.py", 2), ("lib.py", 1)]
    assert _ranges(wb.read(sel["result"])) == [("app.py", 2, "get_user"), ("lib.py", 1, "get_user")]
    with pytest.raises(NotFound):
        wb.select(rid, [9])
    with pytest.raises(InvalidQuery):
        wb.select(rid, [])
    # past the largest match number a reference can name: no such match either (it answered
    # invalid_query "malformed reference SEARCH#…:1000000001:match", a reference never passed)
    for huge in (1_000_000_001, 2**63):
        with pytest.raises(NotFound) as caught:
            wb.select(rid, [1, huge])
        assert "malformed" not in caught.value.message


def test_read_path_windows(wb: Workbench) -> None:
    whole = wb.read("app.py").to_json()
    assert whole["ranges"][0]["text"] == Path(wb.root, "app.py").read_text().rstrip("\n")
    assert (whole["ranges"][0]["line"], whole["ranges"][0]["end_line"]) == (1, 5)
    part = wb.read("app.py", offset=5, limit=10).to_json()
    assert [(r["line"], r["text"]) for r in part["ranges"]] == [(5, "get_user(1)")]
    with pytest.raises(NotFound):
        wb.read("missing.py")
    with pytest.raises(InvalidQuery):
        wb.read("app.py", offset=0)


def test_broadened_results_are_marked(wb: Workbench) -> None:
    res = wb.search("handler documented").to_json()
    assert res["mode"] == "broadened"
    from sleuth.resources.registry import Registry

    row = Registry(Path(wb.root, ".sleuth")).get_result(res["result"])
    assert row is not None and row.broadened is True
    sel = wb.select(res["result"], [1]).to_json()
    sel_row = Registry(Path(wb.root, ".sleuth")).get_result(sel["result"])
    assert sel_row is not None and sel_row.broadened is True
