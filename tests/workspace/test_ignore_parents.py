"""Ignore files above the workspace root, and ``foo\\/``, checked against ripgrep and git.

Outside git, ``rg --files --no-require-git`` is the oracle (sleuth honours ``.gitignore``
without git, docs/faces.md#which-files-are-searched); inside git, ``git ls-files -o
--exclude-standard`` for ``.gitignore`` and rg's default for ``.ignore``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from sleuth.workspace.ignore import IgnoreRules, find_repo, parse_lines

from .conftest import git_init, git_listed, sleuth_listed, write_tree

RG = Path(sys.executable).with_name("rg")


def rg_files(root: Path, *flags: str) -> list[str]:
    assert RG.exists(), "ripgrep is not installed in the venv (pip install -e '.[test]')"
    args = [str(RG), "--no-config", "--files", "--hidden", *flags, "-g", "!.git/"]
    out = subprocess.run([*args, "-g", "!.sleuth/"], cwd=root, capture_output=True, check=True)
    return sorted(out.stdout.decode().split())


FILES: dict[str, str | bytes] = {"b/x.txt": "x", "c/y.txt": "x", "z.txt": "x", "q.log": "x"}


def test_parent_ignore_files_apply_outside_git(tmp_path: Path) -> None:
    write_tree(tmp_path / "p", {".gitignore": "/a/b\n*.log\n", ".ignore": "!q.log\n"})
    write_tree(tmp_path / "p" / "up", {".gitignore": "/a/c/\n"})  # not above a/: no effect
    root = tmp_path / "p" / "a"
    write_tree(root, FILES)
    assert find_repo(str(root)) is None
    listed = sleuth_listed(root)
    assert listed == rg_files(root, "--no-require-git")
    assert "b/x.txt" not in listed and {"c/y.txt", "q.log"} <= set(listed)


def test_parent_gitignore_stops_at_the_repository_top(tmp_path: Path) -> None:
    write_tree(tmp_path / "p", {".gitignore": "/repo/a/c\n", ".ignore": "/repo/a/b\n"})
    repo = tmp_path / "p" / "repo"
    repo.mkdir()
    git_init(repo)
    write_tree(repo, {".gitignore": "/a/z.txt\n"})
    root = repo / "a"
    write_tree(root, FILES)
    listed = sleuth_listed(root)
    assert listed == rg_files(root)  # rg's default inside git
    in_git = [p.removeprefix("a/") for p in git_listed(repo) if p.startswith("a/")]
    assert sorted(set(in_git) - {"b/x.txt"}) == [p for p in listed if p != "b/x.txt"]
    assert "c/y.txt" in listed and "z.txt" not in listed and "b/x.txt" not in listed


def test_escaped_trailing_slash_is_a_folder_pattern() -> None:
    rules = IgnoreRules(parse_lines("foo\\/\n"))
    assert rules.decide("foo", True) is True
    assert rules.decide("deep/foo", True) is True
    assert rules.decide("foo", False) is None
    assert parse_lines("foo\\/\n") == parse_lines("foo/\n")


def test_escaped_trailing_slash_equals_rg(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    write_tree(root, {".gitignore": "foo\\/\n", "foo/a": "x", "d/foo/b": "x", "e/foo": "x"})
    listed = sleuth_listed(root)
    assert listed == rg_files(root, "--no-require-git")
    assert "e/foo" in listed and "foo/a" not in listed


def test_a_fifo_planted_as_info_exclude_is_never_opened(tmp_path: Path) -> None:
    # opening a FIFO blocks until someone writes it: a listing must not hang on one
    write_tree(tmp_path, {"a.txt": "x"})
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    exclude = tmp_path / ".git" / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    exclude.unlink(missing_ok=True)
    os.mkfifo(exclude)
    code = "import sys; from sleuth.workspace.workspace import Workspace; "
    code += "print(Workspace(sys.argv[1]).list_files().paths)"
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert out.stdout.strip() == "['a.txt']", out.stderr


def test_a_worktree_gitfile_naming_a_fifo_commondir_is_never_opened(tmp_path: Path) -> None:
    # a `.git` file arriving with the tree names its git dir, and that dir's commondir is read
    write_tree(tmp_path, {"a.txt": "x", "trap/info/exclude": "a.txt\n"})
    (tmp_path / ".git").write_text("gitdir: trap\n")
    os.mkfifo(tmp_path / "trap" / "commondir")
    found: list[object] = []
    reader = threading.Thread(target=lambda: found.append(find_repo(str(tmp_path))), daemon=True)
    reader.start()
    reader.join(60)  # a regression blocks in open(): the daemon thread is left behind
    assert found == [(str(tmp_path), str(tmp_path / "trap"))]
