"""A file lists at most ``FILE_MATCHES_MAX`` matches (text and regex): the positions of the
millions a minified bundle holds took gigabytes for a one-match page; past the cap the answer
is incomplete and names the file (docs/query.md#ordering-and-pagination)."""

from __future__ import annotations

import pytest

from sleuth import Workbench
from sleuth.query.scan import FILE_MATCHES_MAX
from tests.conftest import MakeWorkspace


@pytest.mark.parametrize("query", ["x", "regex:x", "regex:^$"])
def test_a_file_with_more_matches_than_the_cap_is_cut_and_said(
    make_workspace: MakeWorkspace, query: str
) -> None:
    many = FILE_MATCHES_MAX + 500
    body = "\n" * many if query == "regex:^$" else "x" * many + "\n"
    root = make_workspace({"a/bundle.js": body, "b/small.js": "x\n\n"})
    with Workbench(root, build_index=False) as wb:
        page = wb.search(query, limit=1, context=0).to_json()
        assert len(page["matches"]) == 1 and page["next_cursor"]
        assert page["complete"] is False
        assert (
            f"a/bundle.js holds more than {FILE_MATCHES_MAX} matches" in page["incomplete_reason"]
        )
        small = wb.search(query, path="b", limit=10, context=0).to_json()
        assert small["complete"] is True and small["total"] >= 1
