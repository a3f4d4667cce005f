"""``RESULT#H:all:NAME`` of an incomplete result is refused for an edit as ``SEARCH#H:all:…`` is
(docs/edits.md#what-an-edit-refuses): every capture of a search that did not search every file
is a partial set, and an edit through it would leave the files it skipped unchanged.

Seen: ``replace RESULT#H:all:X`` of ``ast:foo($X)``, with a file over the size cap not
searched, answered "1 file changed" while ``SEARCH#H:all:match`` of the same search was
``unsafe_selection``.
"""

from __future__ import annotations

import pytest

from sleuth import Workbench
from sleuth.errors import UnsafeSelection
from tests.conftest import MakeWorkspace

FILES: dict[str, str | bytes] = {
    "pyproject.toml": "[tool.sleuth]\nmax_filesize = 300\n",
    "a.py": "foo(1)\nfoo(2)\n",
    "big.py": "foo(3)\n" + "# pad\n" * 100,
}


@pytest.mark.parametrize("verb", ["replace", "insert", "delete", "move", "read"])
def test_every_capture_of_an_incomplete_result_is_unsafe(
    make_workspace: MakeWorkspace, verb: str
) -> None:
    root = make_workspace(FILES)
    with Workbench(root, servers=False) as wb:
        found = wb.search("ast:foo($X)")
        assert not found.complete
        every = f"RESULT#{found.result.removeprefix('SEARCH#')}:all:X"
        with pytest.raises(UnsafeSelection):
            if verb == "replace":
                wb.replace(every, "9")
            elif verb == "insert":
                wb.insert(every, "9")
            elif verb == "delete":
                wb.delete(every)
            elif verb == "read":  # the RESULT# of a read of it is the same partial set
                wb.replace(wb.read(every).result, "9")
            else:
                wb.move(every, to="a.py:3")
        assert (root / "a.py").read_text() == "foo(1)\nfoo(2)\n"
        # one capture is one exact range, whatever the rest of its search: still editable
        one = f"RESULT#{found.result.removeprefix('SEARCH#')}:1:X"
        wb.replace(one, "9")
        assert (root / "a.py").read_text() == "foo(9)\nfoo(2)\n"


def test_every_capture_of_a_complete_result_is_editable(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"a.py": "foo(1)\nfoo(2)\n"})
    with Workbench(root, servers=False) as wb:
        found = wb.search("ast:foo($X)")
        assert found.complete
        wb.replace(f"RESULT#{found.result.removeprefix('SEARCH#')}:all:X", "9")
        assert (root / "a.py").read_text() == "foo(9)\nfoo(9)\n"
