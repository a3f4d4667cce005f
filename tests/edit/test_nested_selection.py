"""An edit through a reference to nested matches changes the enclosing range once
(docs/references.md#references-to-several-matches): a structural match inside another one, or
a capture inside another capture, is part of the enclosing range, so no text is ever written
inside a text the same edit writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from sleuth.api import Workbench


def _search(wb: Workbench, pattern: str) -> dict[str, object]:
    return wb.search(f"ast:{pattern}", lang="python", context=0).to_json()


def test_replace_through_all_matches_changes_the_enclosing_match(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("x = a.b().c()\ny = d.e()\n")
    with Workbench(tmp_path, build_index=False) as wb:
        page = _search(wb, "$X.$Y()")
        spans = [(m["start_byte"], m["end_byte"]) for m in page["matches"]]  # type: ignore[index]
        assert spans == [(4, 13), (4, 9), (18, 23)]  # the premise: (4, 9) lies inside (4, 13)
        wb.replace(f"{page['result']}:all:match", "Z")
    assert (tmp_path / "m.py").read_text() == "x = Z\ny = Z\n"


@pytest.mark.parametrize(
    ("name", "text", "after"),
    [
        # X is `a.b()` in the outer call and `a` in the inner one, inside it: the outer changes
        ("X", "W", "x = W.c()\n"),
        # Y is `c` in the outer call and `b` in the inner one: apart, both change
        ("Y", "q", "x = a.q().q()\n"),
    ],
)
def test_replace_through_the_captures_of_nested_matches(
    tmp_path: Path, name: str, text: str, after: str
) -> None:
    (tmp_path / "m.py").write_text("x = a.b().c()\n")
    with Workbench(tmp_path, build_index=False) as wb:
        page = _search(wb, "$X.$Y()")
        result = str(page["result"]).removeprefix("SEARCH#")
        wb.replace(f"RESULT#{result}:all:{name}", text)
    assert (tmp_path / "m.py").read_text() == after
