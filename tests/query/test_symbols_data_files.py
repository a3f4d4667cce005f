"""Data and markup files declare nothing (sleuth/languages.py ``declares``): a ``symbols:``
answer over a tree holding them is as complete as one without them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from sleuth.api import Workbench


def test_json_css_html_beside_code_leave_symbols_complete(
    make_workspace: Callable[[dict[str, str | bytes]], Path],
) -> None:
    root = make_workspace(
        {
            "a.py": "def total():\n    return 1\n",
            "tsconfig.json": '{"compilerOptions": {}}\n',
            "style.css": "a { color: red; }\n",
            "page.html": "<p>total</p>\n",
            "notes.lua": "local total = 1\n",
        }
    )
    with Workbench(root, build_index=False, servers=False) as wb:
        data = wb.search("symbols:total", path="a.py").to_json()
        assert data["complete"] is True and data["total"] == 1
        mixed = wb.search("symbols:total").to_json()
    # whatever else is named as a gap, the data files never are
    reason = mixed["incomplete_reason"] or ""
    assert "json" not in reason and "css" not in reason and "html" not in reason
