"""An edit keeps a file's encoding (SPEC §9; docs/edits.md#what-an-edit-refuses): a file that is
not UTF-8 (Latin-1, Shift-JIS: sleuth does not know which) takes only ASCII text, or bytes
copied from a file that is not UTF-8 either, as they are.

Seen: ``replace`` with ``sméagol`` in a Latin-1 file wrote the UTF-8 bytes ``sm\\xc3\\xa9agol``
next to its Latin-1 ``caf\\xe9`` (the editor then shows ``smÃ©agol``), and a ``copy`` of a
UTF-8 line with ``naïve`` into it did the same.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from sleuth import Workbench
from sleuth.edit.rename import Renamer
from sleuth.errors import UnsafeSelection
from tests.conftest import MakeWorkspace
from tests.edit.test_rename_conflict import Pool

LATIN = b"name = 'caf\xe9'\nother = 1\n"
FILES: dict[str, str | bytes] = {
    "latin.py": LATIN,
    "latin2.py": b"label = '\xe0 la'\n",
    "u.py": "word = 'naïve'\nplain = 2\n",
}


def _ref(wb: Workbench, query: str, path: str, unit: str = "match") -> str:
    return str(wb.search(query, path=path).to_json()["matches"][0]["ref"][unit])


EditCall = Callable[[Workbench], object]
REFUSED: dict[str, EditCall] = {
    "replace": lambda wb: wb.replace(_ref(wb, "other", "latin.py"), "sméagol"),
    "insert": lambda wb: wb.insert(_ref(wb, "other", "latin.py", "line"), "# é"),
    "copy": lambda wb: wb.copy(_ref(wb, "naïve", "u.py", "line"), to="latin.py:1"),
    "move": lambda wb: wb.move(_ref(wb, "naïve", "u.py", "line"), to="latin.py:2"),
}


@pytest.mark.parametrize("verb", sorted(REFUSED))
def test_text_that_is_not_ascii_is_never_written_into_a_file_that_is_not_utf8(
    make_workspace: MakeWorkspace, verb: str
) -> None:
    root = make_workspace(FILES)
    with Workbench(root, servers=False) as wb:
        with pytest.raises(UnsafeSelection) as caught:
            REFUSED[verb](wb)
        assert caught.value.details["path"] == "latin.py"
    assert (root / "latin.py").read_bytes() == LATIN
    assert (root / "u.py").read_text() == "word = 'naïve'\nplain = 2\n"


def test_ascii_text_and_bytes_of_files_that_are_not_utf8_go_as_they_are(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace(FILES)
    with Workbench(root, servers=False) as wb:
        done = wb.replace(_ref(wb, "other", "latin.py"), "smeagol")
        assert (root / "latin.py").read_bytes() == b"name = 'caf\xe9'\nsmeagol = 1\n"
        wb.undo(done.result)
        assert (root / "latin.py").read_bytes() == LATIN
        wb.copy(_ref(wb, "label", "latin2.py", "line"), to="latin.py:3")
        assert (root / "latin.py").read_bytes() == LATIN + b"label = '\xe0 la'\n"
        wb.copy(_ref(wb, "plain", "u.py", "line"), to="latin.py:1")  # ASCII from a UTF-8 file
        assert (root / "latin.py").read_bytes().startswith(b"plain = 2\nname = 'caf\xe9'\n")


def test_a_rename_to_a_name_that_is_not_ascii_skips_no_file_that_is_not_utf8(
    make_workspace: MakeWorkspace,
) -> None:
    files: dict[str, str | bytes] = {
        "pkg/core.py": "def old(x):\n    return x\n",
        "pkg/use.py": b"old('caf\xe9')\n",
    }
    root = make_workspace(files)
    with Workbench(root, servers=False) as wb:
        ref = _ref(wb, "old", "pkg/core.py")
        pool: Any = Pool(root, "old", ["pkg/core.py", "pkg/use.py"])  # a stand-in server
        renamer = Renamer(wb.workspace, wb._resolver, wb._views, wb._editor)
        with pytest.raises(UnsafeSelection) as caught:
            renamer.rename(ref, "älter", pool)
        assert caught.value.details["path"] == "pkg/use.py"
        assert (root / "pkg/use.py").read_bytes() == b"old('caf\xe9')\n"
        assert (root / "pkg/core.py").read_text() == "def old(x):\n    return x\n"
        renamer.rename(ref, "older", pool)
        assert (root / "pkg/use.py").read_bytes() == b"older('caf\xe9')\n"
