"""Capture references (docs/references.md#captures) are derived from their match's row: none is
stored on its own."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from sleuth.api import Workbench
from sleuth.errors import InvalidQuery, NotFound, StaleReference
from sleuth.resources.refs import CAPTURE_SPANS, capture_ref, parse_ref
from tests.conftest import MakeWorkspace

SRC = {
    "app.py": (
        "def first(a, b):\n"
        '    g(1, "x, y", [2, 3])\n'
        "    g()\n"
        "    return a\n"
        "\n"
        "def second():\n"
        "    return g(first)\n"
    ),
    "lib.py": "def third(c):\n    return g(c)\n",
}


@pytest.fixture
def wb(make_workspace: MakeWorkspace) -> Workbench:
    return Workbench(make_workspace(SRC), build_index=False)


def _texts(wb: Workbench, ref: str) -> list[str]:
    return [r["text"] for r in wb.read(ref).to_json()["ranges"]]


def _captures(data: dict[str, Any], n: int) -> dict[str, Any]:
    caps: dict[str, Any] = data["matches"][n - 1]["captures"]
    return caps


def test_capture_refs_name_their_match_and_write_no_rows(wb: Workbench) -> None:
    data = wb.search("ast:def $F($$$A): $$$B", lang="python").to_json()
    assert data["total"] == 3
    hex_id = data["result"].removeprefix("SEARCH#")
    for n, match in enumerate(data["matches"], start=1):
        assert set(match["captures"]) == {"F", "A", "B"}
        for name, cap in match["captures"].items():
            assert set(cap) == {"text", "ref", "nodes"}  # docs/json.md#captures, nothing more
            assert (
                cap["ref"] == f"RESULT#{hex_id}:{n}:{name}" == capture_ref(data["result"], n, name)
            )
        assert CAPTURE_SPANS not in match
    conn = sqlite3.connect(Path(wb.root, ".sleuth", "registry.sqlite3"))
    kinds = [k for (k,) in conn.execute("SELECT kind FROM results")]
    assert kinds == ["search"]  # one row for the search, none per capture


def test_read_returns_exactly_the_captured_text(wb: Workbench) -> None:
    data = wb.search("ast:def $F($$$A): $$$B", lang="python").to_json()
    first = _captures(data, 1)
    assert _texts(wb, first["F"]["ref"]) == ["first"]
    assert _texts(wb, first["A"]["ref"]) == ["a, b"]
    assert _texts(wb, first["B"]["ref"]) == ['g(1, "x, y", [2, 3])\n    g()\n    return a']
    answer = wb.read(first["A"]["ref"]).to_json()
    assert answer["complete"] is True and answer["source"] == first["A"]["ref"]
    [rng] = answer["ranges"]
    assert (rng["path"], rng["line"], rng["end_line"]) == ("app.py", 1, 1)
    source = Path(wb.root, "app.py").read_bytes()
    assert source[rng["start_byte"] : rng["end_byte"]] == b"a, b"


def test_an_empty_multi_capture_selects_its_position(wb: Workbench) -> None:
    data = wb.search("ast:g($$$A)", lang="python").to_json()
    empty = next(m for m in data["matches"] if m["text"].strip() == "g()")["captures"]["A"]
    assert empty["nodes"] == 0 and empty["text"] == ""
    ranges = wb.read(empty["ref"]).to_json()["ranges"]
    offset = Path(wb.root, "app.py").read_bytes().index(b"g()") + 2
    assert [(r["start_byte"], r["end_byte"], r["text"]) for r in ranges] in (
        [],
        [(offset, offset, "")],
    )


def test_a_capture_ref_scopes_a_search(wb: Workbench) -> None:
    data = wb.search("ast:def $F($$$A): $$$B", lang="python").to_json()
    body = _captures(data, 1)["B"]["ref"]
    inside = wb.search("ast:g($$$X)", lang="python", path=body).to_json()
    assert [m["text"].strip() for m in inside["matches"]] == ['g(1, "x, y", [2, 3])', "g()"]
    assert {m["path"] for m in inside["matches"]} == {"app.py"}
    words = wb.search("g", path=_captures(data, 2)["F"]["ref"]).to_json()
    assert words["total"] == 0  # "second" holds no g


def test_a_changed_file_makes_its_capture_refs_stale(wb: Workbench) -> None:
    data = wb.search("ast:def $F($$$A): $$$B", lang="python").to_json()
    app_ref = _captures(data, 1)["F"]["ref"]
    lib_ref = _captures(data, 3)["F"]["ref"]
    app = Path(wb.root, "app.py")
    app.write_text(app.read_text().replace("return a", "return b"))
    with pytest.raises(StaleReference) as err:
        wb.read(app_ref)
    assert err.value.details["files"] == ["app.py"] and "re-run" in err.value.message
    assert _texts(wb, lib_ref) == ["third"]  # other files' captures still resolve
    with pytest.raises(StaleReference):
        wb.replace(app_ref, "renamed")


def test_captures_of_later_pages_resolve(wb: Workbench) -> None:
    seen: list[str] = []
    cursor = None
    while True:
        page = wb.search("ast:def $F($$$A): $$$B", lang="python", limit=1, cursor=cursor).to_json()
        seen += [t for m in page["matches"] for t in _texts(wb, m["captures"]["F"]["ref"])]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == ["first", "second", "third"]


def test_unknown_capture_names_and_numbers(wb: Workbench) -> None:
    data = wb.search("ast:def $F($$$A): $$$B", lang="python").to_json()
    hex_id = data["result"].removeprefix("SEARCH#")
    with pytest.raises(NotFound, match="no capture Z"):
        wb.read(f"RESULT#{hex_id}:1:Z")
    with pytest.raises(NotFound, match="no match 9"):
        wb.read(f"RESULT#{hex_id}:9:F")
    with pytest.raises(NotFound, match="unknown reference"):
        wb.read("RESULT#0badcafe:1:F")
    text_hit = wb.search("return", path="lib.py").to_json()
    with pytest.raises(NotFound, match="no capture F"):  # a text match captures nothing
        wb.read(f"RESULT#{text_hit['result'].removeprefix('SEARCH#')}:1:F")


def test_capture_refs_edit_and_select_but_do_not_undo(wb: Workbench) -> None:
    data = wb.search("ast:def $F($$$A): $$$B", lang="python").to_json()
    ref = _captures(data, 3)["F"]["ref"]
    picked = wb.select(ref, [1]).to_json()
    assert [r["text"] for r in picked["ranges"]] == ["third"]
    with pytest.raises(InvalidQuery, match="undo takes"):
        wb.undo(ref)
    edited = wb.replace(ref, "fourth").to_json()
    assert edited["changed"] == ["lib.py"]
    assert Path(wb.root, "lib.py").read_text().startswith("def fourth(c):")


def test_capture_ref_shape() -> None:
    ref = parse_ref("RESULT#7f3a9c21:12:ARGS_2")
    assert (ref.kind, ref.result_id, ref.n, ref.capture, ref.unit) == (
        "capture",
        "SEARCH#7f3a9c21",
        12,
        "ARGS_2",
        "match",
    )
    assert not ref.is_all
    for bad in (
        "RESULT#7f3a9c21:0:A",
        "RESULT#7f3a9c21:1:a",
        "RESULT#7f3a9c21:1:",
        "RESULT#7f3a9c21:x:A",
    ):
        with pytest.raises(InvalidQuery, match=re.escape("RESULT#<8 hex>:<n>:<NAME>")):
            parse_ref(bad)
