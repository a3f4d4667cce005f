"""Every ``read`` answer is bounded (issue 15): too many ranges or too much text is refused.

The range cap is decided from the stored total before anything is completed, read or
registered; the text cap from the selected byte ranges before any text is decoded.
"""

from __future__ import annotations

import pytest

from sleuth.api import Workbench
from sleuth.errors import InvalidQuery
from sleuth.resources.read_bounds import MAX_READ_BYTES, MAX_READ_RANGES
from tests.conftest import MakeWorkspace


def _hits(n_files: int, per_file: int) -> dict[str, str | bytes]:
    return {f"src/f{i:02}.py": "hit = 1\n" * per_file for i in range(n_files)}


def test_all_over_the_range_cap_is_refused_before_any_work(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(_hits(3, (MAX_READ_RANGES // 3) + 1))
    with Workbench(root, build_index=False) as wb:
        found = wb.search("hit", limit=1).to_json()
        total = found["total"]
        assert total > MAX_READ_RANGES
        stored = wb._registry.get_result(found["result"])
        assert stored is not None
        for unit in ("match", "line"):
            with pytest.raises(InvalidQuery) as err:
                wb.read(f"{found['result']}:all:{unit}")
            message = err.value.message
            assert f"{total} matches" in message and f"at most {MAX_READ_RANGES}" in message
            assert f"{found['result']}:1:{unit}" in message and "select" in message
            assert err.value.details["ranges"] == total
        # refused before the result was completed: only the first page's file is stored
        after = wb._registry.get_result(found["result"])
        assert after is not None and after.stored == stored.stored
        assert after.resume_after == stored.resume_after
        # one match and a selection of items still read
        assert wb.read(f"{found['result']}:2:match").to_json()["ranges"][0]["text"] == "hit"
        picked = wb.select(found["result"], [1, 2]).to_json()
        assert len(picked["ranges"]) == 2


def test_all_at_the_cap_still_reads(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(_hits(2, MAX_READ_RANGES // 2))
    with Workbench(root, build_index=False) as wb:
        found = wb.search("hit", limit=1).to_json()
        assert found["total"] == MAX_READ_RANGES
        read = wb.read(f"{found['result']}:all:match", max_bytes=None).to_json()
    assert len(read["ranges"]) == MAX_READ_RANGES and read["complete"] is True


def test_selecting_more_items_than_the_cap_is_refused(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(_hits(1, 3))
    with Workbench(root, build_index=False) as wb:
        found = wb.search("hit").to_json()
        with pytest.raises(InvalidQuery, match=f"at most {MAX_READ_RANGES}"):
            wb.select(found["result"], list(range(1, MAX_READ_RANGES + 2)))


def test_text_over_the_byte_cap_is_refused(make_workspace: MakeWorkspace) -> None:
    long_line = "needle " + "x" * (MAX_READ_BYTES // 2) + "\n"
    root = make_workspace({"a.txt": long_line, "b.txt": long_line, "c.txt": "needle\n"})
    with Workbench(root, build_index=False) as wb:
        found = wb.search("needle").to_json()
        assert found["total"] == 3
        with pytest.raises(InvalidQuery) as err:
            wb.read(f"{found['result']}:all:line")
        assert f"at most {MAX_READ_BYTES}" in err.value.message
        assert err.value.details["max_bytes"] == MAX_READ_BYTES
        # the exact matches are small, and one line still reads
        assert len(wb.read(f"{found['result']}:all:match").to_json()["ranges"]) == 3
        assert wb.read(f"{found['result']}:1:line").to_json()["ranges"][0]["text"] == long_line[:-1]


def test_surrogates_in_read_and_select_are_invalid_query(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(_hits(1, 1))
    with Workbench(root, build_index=False) as wb:
        with pytest.raises(InvalidQuery) as err:
            wb.read("src/\udcff.py")
        assert err.value.details == {"argument": "target", "character": 5}
        with pytest.raises(InvalidQuery, match="^ref is not valid"):
            wb.select("SEARCH#\ud800", [1])
        with pytest.raises(InvalidQuery, match="^path is not valid"):
            wb.search("hit", path="\ud800")
        with pytest.raises(InvalidQuery, match="^exclude is not valid"):
            wb.search("hit", exclude=["ok", "b\udfffad"])


def test_a_result_over_the_cap_is_refused_but_its_ranges_can_be_selected(
    make_workspace: MakeWorkspace,
) -> None:
    from sleuth.resources.selection import Range, Selection

    root = make_workspace(_hits(1, MAX_READ_RANGES + 1))
    with Workbench(root, build_index=False) as wb:
        ft = wb.workspace.read("src/f00.py")
        assert ft is not None
        ranges = [
            Range("src/f00.py", *ft.line_span(n), n, n, ft.stamp)
            for n in range(1, MAX_READ_RANGES + 2)
        ]
        # registered as an edit registers its result: with no cap of its own
        big = wb._views.register(Selection("test", ranges, ""), "edit", {}, None).result
        with pytest.raises(InvalidQuery) as err:
            wb.read(big)
        assert f"{MAX_READ_RANGES + 1} ranges" in err.value.message
        assert f"select {big} 1 2 3" in err.value.message
        picked = wb.select(big, [2, MAX_READ_RANGES + 1]).to_json()
    assert [r["line"] for r in picked["ranges"]] == [2, MAX_READ_RANGES + 1]
