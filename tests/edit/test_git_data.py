"""Git's own data is never read or edited through sleuth (docs/SAFETY.md#cloaking-and-the-root).

Seen: ``read .git/HEAD`` answered a ``RESULT#`` and ``replace`` through it wrote ``garbage``
over ``HEAD`` ("fatal: not a git repository" after); an edit of ``.git/config`` or a hook runs
code at the user's next git command. Every door is closed: the path check every verb takes,
a symlink leading into ``.git``, a copy's destination, the write itself (whatever a reference
claims) and the names a crash journal may carry.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sleuth import Workbench
from sleuth.edit import journal
from sleuth.edit.journal import FileChange
from sleuth.edit.recovery import workspace_file_path
from sleuth.errors import InvalidPath
from sleuth.workspace import Workspace, stamp_bytes
from tests.conftest import MakeWorkspace
from tests.e2e.conftest import run_cli

HEAD = b"ref: refs/heads/main\n"
FILES = {
    "a.py": "x = 1\n",
    ".git/HEAD": HEAD.decode(),
    ".git/config": "[core]\n\tbare = false\n",
    "vendor/lib/.git": "gitdir: ../../.git/modules/lib\n",
}


@pytest.mark.parametrize("path", [".git/HEAD", ".git", "vendor/lib/.git", "./.git/config"])
def test_read_and_scope_refuse_git_data(make_workspace: MakeWorkspace, path: str) -> None:
    wb = Workbench(make_workspace(FILES))
    with pytest.raises(InvalidPath, match=r"git's own data"):
        wb.read(path)
    with pytest.raises(InvalidPath, match=r"git's own data"):
        wb.search("x", path=path)


def test_symlink_into_git_is_refused(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(FILES)
    os.symlink(".git/config", root / "cfg")
    wb = Workbench(root)
    with pytest.raises(InvalidPath, match=r"cfg leads into git's own data"):
        wb.read("cfg")
    assert wb.search("bare").total == 0


def test_copy_into_git_is_refused(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(FILES)
    wb = Workbench(root)
    ref = wb.search("x = 1").to_json()["matches"][0]["ref"]["line"]
    with pytest.raises(InvalidPath, match=r"git's own data"):
        wb.copy(ref, to=".git/HEAD:1")
    assert (root / ".git" / "HEAD").read_bytes() == HEAD


def test_the_write_itself_refuses_git_data(make_workspace: MakeWorkspace) -> None:
    """A change naming ``.git/HEAD`` with the right stamp (as a forged reference would carry)
    is refused under the edit lock, and nothing is written."""
    root = make_workspace(FILES)
    ws = Workspace(root)
    change = FileChange(".git/HEAD", stamp_bytes(HEAD), HEAD, b"garbage\n")
    with pytest.raises(InvalidPath, match=r"git's own data"):
        journal.commit(ws, [change])
    assert (root / ".git" / "HEAD").read_bytes() == HEAD
    os.symlink(".git/HEAD", root / "head")
    via_link = FileChange("head", stamp_bytes(HEAD), HEAD, b"garbage\n")
    with pytest.raises(InvalidPath, match=r"head leads into git's own data"):
        journal.commit(ws, [via_link])
    assert (root / ".git" / "HEAD").read_bytes() == HEAD


@pytest.mark.parametrize("rel", [".git/HEAD", "sub/.git/config", "vendor/lib/.git"])
def test_a_journal_never_names_git_data(rel: str) -> None:
    assert not workspace_file_path(rel)
    assert workspace_file_path("a.py")


def test_cli_read_then_replace_git_head(make_workspace: MakeWorkspace) -> None:
    """The seen sequence, through the CLI: the read is refused, so there is nothing to edit."""
    root = make_workspace(FILES)
    proc = run_cli(["read", ".git/HEAD", "--json", "--no-daemon", "--root", str(root)])
    assert proc.returncode == 2
    assert '"invalid_path"' in proc.stdout
    assert Path(root / ".git" / "HEAD").read_bytes() == HEAD
