"""Edit verbs' arguments through the Python API: every bad one is ``invalid_query`` naming it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from sleuth import Workbench
from sleuth.errors import InvalidQuery
from tests.conftest import MakeWorkspace


def test_bad_edit_arguments_are_invalid_query_naming_them(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"a.py": "x = 1\n"})
    with Workbench(root, servers=False) as wb:
        ref = wb.search("x").matches[0]["ref"]["match"]
        calls: list[tuple[str, Callable[[], object]]] = [
            ("ref", lambda: wb.replace("SEARCH#\ud800", "y")),
            ("ref", lambda: wb.delete(5)),  # type: ignore[arg-type]
            ("to", lambda: wb.copy(ref, to=None)),  # type: ignore[arg-type]
            ("to", lambda: wb.move(ref, to="a\ud800.py:1")),
            ("result", lambda: wb.undo("RESULT#\udcff")),
            ("new_name", lambda: wb.rename(ref, "n\ud800")),
        ]
        for name, call in calls:
            with pytest.raises(InvalidQuery) as info:
                call()
            assert info.value.details.get("argument") == name, (name, info.value.message)
    assert (root / "a.py").read_text() == "x = 1\n"


def test_a_files_glob_with_a_reversed_range_is_invalid_query(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"a.py": "x = 1\n"})
    with Workbench(root, servers=False) as wb:
        for query in ("files:[z-a]", "files:src/[z-a]*.py", "files:main [z-a].py"):
            with pytest.raises(InvalidQuery) as info:
                wb.search(query)
            assert "[z-a]" in info.value.message
