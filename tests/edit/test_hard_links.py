"""Two hard links of one file are two names of one file (docs/SAFETY.md#the-journal-and-recovery),
as a symlinked file and its target are: one edit changing it differently through each name is
``conflict``, nothing written.

Seen: ``move SEARCH#H:1:line --to hl.py:3`` with ``hl.py`` a hard link of ``a.py`` answered
"2 files changed": ``a.py`` lost the line, ``hl.py`` held it twice (each name was written from
the same old bytes with its own half of the move, and the renames split the file in two).
The same change through both names is written through both (each rename makes a new file, so
writing one name would leave the other with the old bytes).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sleuth import Workbench
from sleuth.errors import Conflict
from tests.conftest import MakeWorkspace

SOURCE = b"alpha = 1\nbeta = 2\n"


def _linked(make_workspace: MakeWorkspace) -> Path:
    root = make_workspace({"a.py": SOURCE})
    os.link(root / "a.py", root / "hl.py")
    return root


@pytest.mark.parametrize("verb", ["move", "copy"])
def test_a_move_between_two_hard_links_of_one_file_is_a_conflict(
    make_workspace: MakeWorkspace, verb: str
) -> None:
    root = _linked(make_workspace)
    with Workbench(root, servers=False) as wb:
        ref = str(wb.search("alpha", path="a.py").to_json()["matches"][0]["ref"]["line"])
        if verb == "copy":  # a copy writes hl.py only: one name, one change
            wb.copy(ref, to="hl.py:3")
            assert (root / "hl.py").read_bytes() == SOURCE + b"alpha = 1\n"
            assert (root / "a.py").read_bytes() == SOURCE  # the link split, as with sed -i
            return
        with pytest.raises(Conflict):
            wb.move(ref, to="hl.py:3")
    assert (root / "a.py").read_bytes() == SOURCE
    assert os.stat(root / "a.py").st_ino == os.stat(root / "hl.py").st_ino


def test_one_change_through_both_hard_links_is_made_through_both(
    make_workspace: MakeWorkspace,
) -> None:
    root = _linked(make_workspace)
    with Workbench(root, servers=False) as wb:
        found = wb.search("alpha").to_json()
        assert found["total"] == 2
        wb.replace(str(found["all"]["match"]), "omega")
    assert (root / "a.py").read_bytes() == b"omega = 1\nbeta = 2\n"
    assert (root / "hl.py").read_bytes() == b"omega = 1\nbeta = 2\n"
