"""A file whose mode changes between the verification and the rename is not written
(docs/SAFETY.md#what-an-edit-checks-and-when): the rename would give it the mode the temporary
file was made with, the one verified.

Seen: ``chmod 0444 b.py`` (or ``chmod +x``) landing after an edit's verification, before its
renames: the edit was written and the file was ``0644`` again, writable, the user's ``chmod``
silently undone — though the re-read just before the rename, which checks the bytes, saw it.
"""

from __future__ import annotations

import os
import stat

import pytest

from sleuth import Workbench
from sleuth.errors import SleuthError
from tests.conftest import MakeWorkspace


@pytest.mark.parametrize("mode", [0o444, 0o755])
@pytest.mark.parametrize("point", ["verified", "before-rename"])
def test_a_mode_changed_before_the_rename_is_kept_and_nothing_written(
    make_workspace: MakeWorkspace, mode: int, point: str
) -> None:
    root = make_workspace({"a.py": "alpha = 1\n", "b.py": "gamma = 3\n"})
    os.chmod(root / "b.py", 0o644)
    with Workbench(root, servers=False) as wb:
        ref = str(wb.search("alpha").to_json()["matches"][0]["ref"]["line"])
        fired: list[str] = []

        def chmod(at: str, path: str) -> None:
            if at == point and path == "b.py" and not fired:  # after b.py's verification
                fired.append(path)
                os.chmod(root / "b.py", mode)

        wb.workspace.fault_hook = chmod
        with pytest.raises(SleuthError):
            wb.move(ref, to="b.py:1")
        assert fired
    assert stat.S_IMODE(os.stat(root / "b.py").st_mode) == mode
    assert (root / "b.py").read_text() == "gamma = 3\n"
    assert (root / "a.py").read_text() == "alpha = 1\n"
