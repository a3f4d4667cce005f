"""What ``find`` grep answers are worth to an edit and to a reader: approximate (fuzzy) matches
are location hints like a broadened search's, and a page that could not show all of one file's
matches is not complete (docs/faces.md#find)."""

from __future__ import annotations

import pytest

from sleuth import Workbench
from sleuth.errors import UnsafeSelection
from tests.conftest import MakeWorkspace


def test_fuzzy_matches_are_edited_only_once_selected(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"a.py": "def get_user(uid):\n    return get_user(uid - 1)\n"})
    with Workbench(root, build_index=False) as wb:
        found = wb.find("get_usr", mode="grep", grep_mode="fuzzy").to_json()
        assert found["matches"] and found["result"]
        for ref in (found["result"] + ":all:match", found["matches"][0]["ref"]["match"]):
            with pytest.raises(UnsafeSelection, match="fuzzy"):
                wb.replace(ref, "fetch_user")
        assert "get_user" in (root / "a.py").read_text()
        chosen = wb.select(found["result"], [1])
        wb.replace(chosen.result, "fetch_user")
    assert (root / "a.py").read_text().count("fetch_user") == 1


@pytest.mark.parametrize("grep_mode", ["plain_text", "fuzzy"])
def test_a_file_with_more_matches_than_max_results_makes_the_page_incomplete(
    make_workspace: MakeWorkspace, grep_mode: str
) -> None:
    root = make_workspace({"a.py": "hit = 1\n" * 30, "b.py": "hit = 2\n"})
    with Workbench(root, build_index=False) as wb:
        page = wb.find("hit", mode="grep", grep_mode=grep_mode, max_results=10).to_json()
        assert len(page["matches"]) == 10 and page["total_matched"] == 30
        assert page["complete"] is False
        assert "a.py alone has 30 matches" in page["incomplete_reason"]
        whole = wb.find("hit", mode="grep", grep_mode=grep_mode, max_results=100).to_json()
        assert whole["complete"] is True and len(whole["matches"]) == 31
