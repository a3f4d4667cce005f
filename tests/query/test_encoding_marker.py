"""A match in a file that is not valid UTF-8 carries ``"encoding": "binary-safe"``.

Matches in UTF-8 files (with or without a BOM) keep exactly the keys of docs/json.md#a-match; the
marker survives paging (pages cut from stored rows) and shows in both renderings.
"""

from __future__ import annotations

from typing import Any

import pytest

from sleuth import render
from sleuth.api import Workbench
from tests.conftest import MakeWorkspace

KEYS = {
    "n",
    "path",
    "line",
    "column",
    "end_line",
    "end_column",
    "start_byte",
    "end_byte",
    "text",
    "context",
    "ref",
    "captures",
    "score",
}

FILES: dict[str, str | bytes] = {
    "a_latin1.py": b"# caf\xe9\ndef get_user(uid):\n    return uid\n",
    "b_utf8.py": "# café\ndef get_user(uid):\n    return uid\n",
    "c_bom.py": b"\xef\xbb\xbfdef get_user(uid):\n    return uid\n",
    "d_tail.txt": b"get_user\n" * 3 + b"\xff\xfe trailing bytes\n",
}


def _by_path(data: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for match in data["matches"]:
        out.setdefault(match["path"], []).append(match)
    return out


@pytest.mark.parametrize("query", ["get_user", "regex:get_\\w+", "get_user AND uid"])
def test_marker_only_on_files_that_are_not_utf8(make_workspace: MakeWorkspace, query: str) -> None:
    root = make_workspace(FILES)
    with Workbench(root, build_index=False) as wb:
        data = wb.search(query).to_json()
    found = _by_path(data)
    assert set(found) >= {"a_latin1.py", "b_utf8.py", "c_bom.py"}
    for path, matches in found.items():
        for match in matches:
            if path in ("a_latin1.py", "d_tail.txt"):
                assert set(match) == KEYS | {"encoding"}, match
                assert match["encoding"] == "binary-safe"
            else:
                assert set(match) == KEYS, match


def test_structural_matches_carry_it_too(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(FILES)
    with Workbench(root, build_index=False) as wb:
        found = _by_path(wb.search("ast:def $NAME($$$ARGS): $$$BODY", lang="python").to_json())
    assert found["a_latin1.py"][0]["encoding"] == "binary-safe"
    assert "encoding" not in found["b_utf8.py"][0]


def test_marker_survives_paging(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(FILES)
    with Workbench(root, build_index=False) as wb:
        pages = [wb.search("get_user", limit=1).to_json()]
        while pages[-1]["next_cursor"]:
            pages.append(wb.search("get_user", limit=1, cursor=pages[-1]["next_cursor"]).to_json())
    tail = [m for page in pages for m in page["matches"] if m["path"] == "d_tail.txt"]
    assert len(tail) == 3 and all(m["encoding"] == "binary-safe" for m in tail)
    utf8 = [m for page in pages for m in page["matches"] if m["path"] == "b_utf8.py"]
    assert utf8 and all("encoding" not in m for m in utf8)


def test_renderings_show_it_once_per_file(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(FILES)
    with Workbench(root, build_index=False) as wb:
        data = wb.search("get_user").to_json()
    human = render.search_human(data).plain
    assert human.count("[binary-safe: not UTF-8, searched as bytes]") == 2
    assert "a_latin1.py  [binary-safe: not UTF-8, searched as bytes]\n" in human
    assert "\nb_utf8.py\n" in human
    compact = render.search_compact(data).splitlines()
    assert "binary-safe (not UTF-8, searched as bytes): a_latin1.py, d_tail.txt" in compact
    clean = {**data, "matches": [m for m in data["matches"] if "encoding" not in m]}
    assert "binary-safe" not in render.search_compact(clean)
    assert "binary-safe" not in render.search_human(clean).plain
