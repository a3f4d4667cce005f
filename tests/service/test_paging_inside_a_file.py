"""A page that ends inside a file (one file holding far more matches than a page) continues
with the very next match of that file: nested structural matches that start where the last
shown one starts, and several matches of one span, are neither lost nor repeated
(docs/query.md#ordering-and-pagination)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from sleuth.api import Workbench
from sleuth.tuning import Tuning

# nothing stored whole by the first page: every later page scans on from a resume key
PAGED = replace(Tuning(), snapshot_max=0)

LINES = 700  # two nested matches a line: 1,400 in one file, more than a page plus its slack


def _two_trees(tmp_path: Path, name: str, text: str) -> tuple[Path, Path]:
    """The same file in two workspaces: one answers whole, one pages (no shared registry)."""
    trees = tmp_path / "whole", tmp_path / "paged"
    for tree in trees:
        tree.mkdir()
        (tree / name).write_text(text)
    return trees


def _walk(wb: Workbench, query: str, lang: str, limit: int) -> list[tuple[Any, ...]]:
    seen: list[tuple[Any, ...]] = []
    cursor = None
    while True:
        page = wb.search(query, lang=lang, limit=limit, max_bytes=None, cursor=cursor).to_json()
        seen.extend((m["path"], m["start_byte"], m["end_byte"]) for m in page["matches"])
        cursor = page.get("next_cursor")
        if cursor is None:
            return seen


@pytest.mark.parametrize("limit", [1, 2, 3, 7, 250])
def test_nested_matches_of_one_start_survive_a_cut_inside_the_file(
    tmp_path: Path, limit: int
) -> None:
    # `a.b().c()` holds two calls that start at the same byte: the outer one first
    text = "".join(f"a{i}.b().c()\n" for i in range(LINES))
    whole_tree, paged_tree = _two_trees(tmp_path, "chain.py", text)
    with Workbench(whole_tree, build_index=False) as wb:
        whole = _walk(wb, "ast:$X.$Y()", "python", 500)
        assert len(whole) == 2 * LINES
        assert len(set(whole)) == len(whole)
        with Workbench(paged_tree, build_index=False, tuning=PAGED) as paged:
            assert _walk(paged, "ast:$X.$Y()", "python", limit) == whole


@pytest.mark.parametrize("limit", [1, 2, 5])
def test_matches_of_one_span_survive_a_cut_between_them(tmp_path: Path, limit: int) -> None:
    # `$A` matches a node and its single child of the same span (`x` is an identifier inside
    # an expression statement): equal spans, each a match of its own
    text = "".join(f"x{i}\n" for i in range(LINES))
    whole_tree, paged_tree = _two_trees(tmp_path, "names.py", text)
    with Workbench(whole_tree, build_index=False) as wb:
        whole = _walk(wb, "ast:$A", "python", 500)
        assert len(whole) > 2 * LINES
        assert len(whole) != len(set(whole))  # the premise: some spans occur twice
        with Workbench(paged_tree, build_index=False, tuning=PAGED) as paged:
            assert _walk(paged, "ast:$A", "python", limit) == whole
