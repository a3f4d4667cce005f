"""Pages cut to a text budget (docs/faces.md#budgets) over many matches: the fit is estimated
on a growing window of the page, never splitting a file, and each page is still the longest run
of matches whose compact text fits."""

from __future__ import annotations

from typing import Any

import pytest

from sleuth.api import Workbench
from sleuth.errors import StaleReference
from sleuth.render.compact import search_compact
from sleuth.render.page_fit import compact_fit
from sleuth.resources.results import FIT_WINDOW
from sleuth.tuning import Tuning
from tests.conftest import MakeWorkspace

PATTERN = "ast:def $F($$$A): $$$B"


def _tree() -> dict[str, str | bytes]:
    """Short functions (many to a page), a file of more functions than a window, long ones."""
    files: dict[str, str | bytes] = {}
    for i in range(4):
        files[f"pkg/m{i}.py"] = "".join(
            f"def f{i}_{j}(a, b):\n    return a + b * {j}\n\n" for j in range(40)
        )
    files["pkg/many.py"] = "".join(
        f"def g{j}(x):\n    y = x\n    return y\n\n" for j in range(3 * FIT_WINDOW)
    )
    body = "".join(f"    v{k} = {k}\n" for k in range(60))
    files["pkg/long.py"] = "".join(f"def h{j}(a):\n{body}    return a\n\n" for j in range(6))
    return files


def _walk(wb: Workbench, **kw: Any) -> list[dict[str, Any]]:
    pages = [wb.search(PATTERN, lang="python", limit=500, **kw).to_json()]
    while pages[-1]["next_cursor"]:
        cursor = pages[-1]["next_cursor"]
        pages.append(wb.search(PATTERN, lang="python", limit=500, cursor=cursor, **kw).to_json())
    return pages


def _key(m: dict[str, Any]) -> tuple[str, int, int]:
    return (m["path"], m["line"], m["column"])


def _whole_page_cut(page: dict[str, Any], rest: list[dict[str, Any]], max_bytes: int) -> int:
    """How many of ``rest`` (the page's matches and all after them) a page keeps when its fit
    is estimated on the whole page of 500, then checked against the rendering."""
    full = dict(page, matches=rest[:500])
    keep = compact_fit(full, max_bytes)
    while keep < len(full["matches"]):
        cut = dict(full, matches=full["matches"][:keep], cut="max_bytes")
        if keep == 1 or len(search_compact(cut).encode()) <= max_bytes:
            break
        keep -= 1
    return keep


@pytest.mark.parametrize("max_bytes", [600, 2048, 16384])
def test_budgeted_pages_cut_where_a_whole_page_estimate_cuts(
    make_workspace: MakeWorkspace, max_bytes: int
) -> None:
    root = make_workspace(_tree())
    large = Tuning(snapshot_max=10)  # stored page by page: pages cross the seams of stores
    with Workbench(root, build_index=False, tuning=large) as wb:
        pages = _walk(wb, max_bytes=max_bytes)
        whole = _walk(wb, max_bytes=None)  # the same result (max_bytes is no part of it)
        everything = [m for p in whole for m in p["matches"]]
        walked = [m for p in pages for m in p["matches"]]
        assert [_key(m) for m in walked] == [_key(m) for m in everything]
        assert [m["n"] for m in walked] == list(range(1, len(walked) + 1))
        assert len(walked) == 4 * 40 + 3 * FIT_WINDOW + 6
        for page in pages:
            text = search_compact(page)
            assert len(page["matches"]) == 1 or len(text.encode()) <= max_bytes
            if page["next_cursor"] is None:
                continue
            assert page.get("cut") == "max_bytes"
            # the window cuts where an estimate over the whole page of 500 cut (within one
            # match: the header's "showing #a-#b" and the cursor differ by a digit or two)
            first = page["matches"][0]["n"]
            expected = _whole_page_cut(page, everything[first - 1 :], max_bytes)
            assert abs(len(page["matches"]) - expected) <= 1


def test_a_budgeted_page_far_in_serves_the_stored_text_and_capture_refs(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace(_tree())
    large = Tuning(snapshot_max=10)
    with Workbench(root, build_index=False, tuning=large) as wb:
        pages = _walk(wb, max_bytes=1024)
        assert len(pages) > 5
        late = pages[-2]["matches"][-1]
        caps = late["captures"]
        assert set(caps) == {"F", "A", "B"}
        assert wb.read(caps["F"]["ref"]).to_json()["ranges"][0]["text"] == caps["F"]["text"]
        path = root / late["path"]
        path.write_text(path.read_text().replace("return", "return  "))
        with pytest.raises(StaleReference):
            wb.read(caps["B"]["ref"])
        with pytest.raises(StaleReference):
            wb.read(late["ref"]["match"])


def test_location_pages_walk_every_match_once_within_the_budget(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace(_tree())
    with Workbench(root, build_index=False, tuning=Tuning(snapshot_max=10)) as wb:
        pages = _walk(wb, max_bytes=600, output="locations")
        lines = _walk(wb, max_bytes=600)
        walked = [m for p in pages for m in p["matches"]]
        everything = [m for p in _walk(wb, max_bytes=None) for m in p["matches"]]
        assert [_key(m) for m in walked] == [_key(m) for m in everything]
        assert len(pages) < len(lines)  # the positions take fewer bytes than the lines
        assert {p["result"] for p in pages} == {p["result"] for p in lines}
        for page in pages:
            assert page["output"] == "locations"
            assert len(page["matches"]) == 1 or len(search_compact(page).encode()) <= 600
