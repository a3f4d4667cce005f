"""Answers of a long-running workspace under outside churn (docs/SAFETY.md#what-a-watching-
face-may-answer-late): what the files and their rules hold now, once the watcher caught up."""

from __future__ import annotations

import os

import pytest

from sleuth.api import Workbench
from sleuth.errors import InvalidQuery, NotFound
from tests.conftest import MakeWorkspace
from tests.workspace.conftest import SETTLED
from tests.workspace.conftest import wait_for as _wait


def _watched(wb: Workbench) -> Workbench:
    """``wb`` once its watcher is trusted (its settle time passed)."""
    assert _wait(lambda: wb.workspace.generation is not None)
    return wb


def _paths(wb: Workbench, query: str) -> list[str]:
    return sorted({m["path"] for m in wb.search(query, context=0).to_json()["matches"]})


@pytest.mark.parametrize("watch", [False, True])
def test_an_ignore_file_rewritten_to_the_same_size_and_mtime_is_read_again(
    make_workspace: MakeWorkspace, watch: bool
) -> None:
    root = make_workspace({"a.py": "needle\n", "b.py": "needle\n", ".gitignore": "a.py\n"})
    with Workbench(root, watch=watch, build_index=False, servers=False, tuning=SETTLED) as wb:
        if watch:
            _watched(wb)
        assert _paths(wb, "needle") == ["b.py"]
        ignore = root / ".gitignore"
        st = ignore.stat()
        ignore.write_text("b.py\n")  # same size, mtime put back: only the ctime moves
        os.utime(ignore, ns=(st.st_atime_ns, st.st_mtime_ns))
        if watch:
            assert wb.workspace.catch_up(5.0)
        assert _paths(wb, "needle") == ["a.py"]


@pytest.mark.parametrize("watch", [False, True])
def test_a_file_denied_while_a_workbench_runs_is_cloaked_at_once(
    make_workspace: MakeWorkspace, watch: bool
) -> None:
    """A deny glob added to ``.sleuth.toml`` cloaks in the very next call: the watcher's event
    comes later, and a workbench without a watcher read the deny list only when it opened."""
    root = make_workspace({"a.py": "needle\n", "secret.py": "needle = 'hunter2'\n"})
    with Workbench(root, watch=watch, build_index=False, servers=False, tuning=SETTLED) as wb:
        if watch:
            _watched(wb)
        assert _paths(wb, "needle") == ["a.py", "secret.py"]
        (root / ".sleuth.toml").write_text('deny = ["secret.py"]\n')
        page = wb.search("needle", context=0).to_json()
        assert [m["path"] for m in page["matches"]] == ["a.py"]
        assert "hunter2" not in str(page)
        with pytest.raises(NotFound):
            wb.read("secret.py")
        assert _paths(wb, "files:*.py") == ["a.py"]


def test_a_cursor_continuing_into_a_file_denied_since_is_refused(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace({"a.py": "needle\n", "secret.py": "needle = 'hunter2'\n"})
    with Workbench(root, build_index=False, servers=False) as wb:
        first = wb.search("needle", limit=1, context=0).to_json()
        assert [m["path"] for m in first["matches"]] == ["a.py"]
        (root / ".sleuth.toml").write_text('deny = ["secret.py"]\n')
        with pytest.raises(InvalidQuery):
            wb.search("needle", limit=1, context=0, cursor=first["next_cursor"])
