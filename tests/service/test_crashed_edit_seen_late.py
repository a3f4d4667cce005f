"""A long-running face (a watching ``Workbench``, the MCP server, the daemon) rolls back an edit
another process left half done before it answers its next call (docs/SAFETY.md#the-journal-and-recovery),
not only at its start or its own next edit.

Seen: a CLI ``replace`` of four files killed after its second rename (``SLEUTH_CRASH_AT=after-file-1``;
as a daemon dying mid-call, or a user's Ctrl-\\\\); the watching face open meanwhile answered its
next searches from the torn state (two files new, two old), a state no edit ever made, until an
edit of its own happened to recover.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from sleuth import Workbench
from tests.conftest import MakeWorkspace

CHILD = """
import sys
from sleuth import Workbench
with Workbench(sys.argv[1], build_index=False) as wb:
    wb.replace(sys.argv[2], "new_api")
"""


@pytest.mark.parametrize("watch", [True, False])
def test_a_face_open_during_a_crashed_edit_answers_it_rolled_back(
    make_workspace: MakeWorkspace, watch: bool
) -> None:
    root = make_workspace({f"f{i}.py": f"old_api({i})\n" for i in range(4)})
    with Workbench(root, watch=watch, servers=False) as wb:
        ref = str(wb.search("old_api").to_json()["all"]["match"])
        env = {**os.environ, "SLEUTH_CRASH_AT": "after-file-1"}
        child = subprocess.run(
            [sys.executable, "-c", CHILD, str(root), ref], env=env, capture_output=True
        )
        assert child.returncode == -signal.SIGKILL, child.stderr.decode()
        assert (root / "f0.py").read_text() == "new_api(0)\n"  # torn on disk, for now
        wb.catch_up()
        found = wb.search("_api(").to_json()
        assert [m["text"] for m in found["matches"]] == [f"old_api({i})" for i in range(4)]
    assert [(root / f"f{i}.py").read_text() for i in range(4)] == [
        f"old_api({i})\n" for i in range(4)
    ]
