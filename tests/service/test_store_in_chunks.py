"""A later page's scan stores its matches in chunks as it goes (``service.search._extend``):
the pages, the totals and the references are those of a scan stored in one piece, and the
registry's row after each chunk is a whole result (its resume key after the last file stored)."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import sleuth.service.search as search
from sleuth.api import Workbench
from sleuth.tuning import Tuning

# nothing stored whole by the first page: every later page scans on from a resume key
PAGED = replace(Tuning(), snapshot_max=0)


def _tree(root: Path) -> Path:
    root.mkdir()
    for i in range(30):
        body = "".join(f"def f{i}_{j}(a, b):\n    return g(a, {j})\n\n" for j in range(i % 5))
        (root / f"m{i:02}.py").write_text(body + "x = 1\n")
    return root


def _walk(wb: Workbench, limit: int) -> tuple[list[dict[str, Any]], list[Any]]:
    """Every page's matches and (total, total_at_least) of each page."""
    matches: list[dict[str, Any]] = []
    totals: list[Any] = []
    cursor = None
    while True:
        page = wb.search(
            "ast:def $F($$$A): $$$B", limit=limit, max_bytes=None, cursor=cursor
        ).to_json()
        matches.extend(page["matches"])
        totals.append((page["total"], page.get("total_at_least")))
        cursor = page.get("next_cursor")
        if cursor is None:
            return matches, totals


@pytest.mark.parametrize("limit", [1, 4, 9])
def test_pages_stored_in_chunks_equal_pages_stored_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    with Workbench(_tree(tmp_path / "whole"), build_index=False, tuning=PAGED) as wb:
        whole, whole_totals = _walk(wb, limit)
    assert len(whole) == sum(i % 5 for i in range(30))

    stored: list[tuple[int, str | None, int | None]] = []
    real = search.SearchPager.store

    def spy(self: Any, row: Any, first_n: int, matches: Any, *, extend: bool) -> None:
        real(self, row, first_n, matches, extend=extend)
        if extend:
            stored.append((len(matches), row.resume_after, row.total))

    monkeypatch.setattr(search, "STORE_CHUNK", 3)
    monkeypatch.setattr(search.SearchPager, "store", spy)
    with Workbench(_tree(tmp_path / "chunks"), build_index=False, tuning=PAGED) as wb:
        chunked, chunked_totals = _walk(wb, limit)
        # every reference of every page still reads its match
        for m in chunked[:: max(1, len(chunked) // 7)]:
            (read,) = wb.read(m["ref"]["match"]).to_json()["ranges"]
            assert (read["path"], read["start_byte"]) == (m["path"], m["start_byte"])
            for name, cap in (m["captures"] or {}).items():
                (got,) = wb.read(cap["ref"]).to_json()["ranges"]
                assert got["text"] == cap["text"], name
    assert _anonymous(chunked) == _anonymous(whole)
    assert chunked_totals == whole_totals
    # the later scans stored in several chunks, the last one ending the scan
    assert len(stored) > 2
    assert stored[-1][1] is None and stored[-1][2] == len(whole)


def _anonymous(matches: list[dict[str, Any]]) -> str:
    """The matches as JSON with the result id left out (two trees: two ids)."""
    return re.sub(r"(SEARCH|RESULT)#[0-9a-f]+:", r"\1#:", json.dumps(matches))
