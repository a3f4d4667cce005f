"""The ``output="locations"`` text of a search (docs/faces.md#locations)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from sleuth.render.compact import search_compact
from sleuth.render.locations import location_fit, location_lines
from sleuth.render.page_fit import compact_fit
from sleuth.render.search import search_human


def _m(n: int, path: str, line: int | None, column: int | None = 1) -> dict[str, Any]:
    return {"n": n, "path": path, "line": line, "column": column if line else None}


def _data(matches: list[dict[str, Any]], **more: Any) -> dict[str, Any]:
    return {
        "query": "x",
        "mode": "literal",
        "result": "SEARCH#0123abcd",
        "complete": True,
        "total": len(matches),
        "matches": matches,
        "output": "locations",
        **more,
    }


def test_a_run_of_one_file_is_one_line_numbered_by_its_first_match() -> None:
    matches = [_m(1, "a.py", 3, 5), _m(2, "a.py", 9, 1), _m(3, "b/c.py", 1, 30), _m(4, "a.py", 2)]
    assert location_lines(matches) == ["#1 a.py: 3:5 9:1", "#3 b/c.py: 1:30", "#4 a.py: 2:1"]


def test_a_match_without_a_line_is_its_path_alone() -> None:
    matches = [_m(1, "a.py", None), _m(2, "a.py", None), _m(3, "a.py", 4)]
    assert location_lines(matches) == ["#1 a.py", "#2 a.py", "#3 a.py: 4:1"]


def test_the_text_is_the_header_the_positions_and_the_tail() -> None:
    data = _data([_m(1, "a.py", 3), _m(2, "a.py", 4)], next_cursor="CUR", total=9)
    text = search_compact(data)
    assert text.splitlines() == [
        "SEARCH#0123abcd  literal  9 matches  showing #1-#2  more",
        "#1 a.py: 3:1 4:1",
        "next_cursor: CUR",
    ]
    assert search_human(data).plain == text


def test_without_output_the_match_lines_are_shown() -> None:
    data = _data([dict(_m(1, "a.py", 3), text="x = 1")])
    del data["output"]
    assert search_compact(data).splitlines()[1] == "a.py:3:1 #1  x = 1"


_paths = st.sampled_from(["a.py", "src/b.py", "deep/folder/c.py"])


@given(
    st.lists(st.tuples(_paths, st.integers(1, 99999), st.integers(1, 500)), min_size=1),
    st.integers(1, 4000),
)
def test_the_fit_is_the_longest_prefix_whose_lines_fit(
    spots: list[tuple[str, int, int]], budget: int
) -> None:
    matches = [_m(n, path, line, col) for n, (path, line, col) in enumerate(spots, start=1)]
    keep = location_fit(matches, budget)
    assert 1 <= keep <= len(matches)

    def size(k: int) -> int:
        return sum(len(line.encode()) + 1 for line in location_lines(matches[:k]))

    assert keep == 1 or size(keep) <= budget
    assert keep == len(matches) or size(keep + 1) > budget


def test_the_page_fit_counts_the_location_text() -> None:
    matches = [_m(n, f"pkg/m{n // 50}.py", n, 1) for n in range(1, 401)]
    data = _data(matches)
    keep = compact_fit(data, 2048)
    cut = _data(matches[:keep], next_cursor="C" * 40, cut="max_bytes")
    assert len(search_compact(cut).encode()) <= 2048
    lines = dict(data)
    del lines["output"]
    for m in matches:
        m["text"] = "    value = compute(value)"
    assert keep > 3 * compact_fit(lines, 2048)  # many more matches to the page
