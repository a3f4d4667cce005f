"""``walk_split``: a walk shared with a forked child lists exactly what one process lists, and
a child that fails leaves the listing whole (the parent walks its folders itself)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sleuth.tuning import Tuning
from sleuth.workspace import Workspace, walk_split
from sleuth.workspace.ignore import RulesCache, base_stack
from sleuth.workspace.paths import PathGlobs
from sleuth.workspace.policy import AccessPolicy
from sleuth.workspace.walker import FileList, Row, Walker

from .conftest import write_tree

needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")


def _tree(root: Path) -> None:
    files: dict[str, str | bytes] = {".gitignore": "*.log\nbuild/\n!keep.log\n", "top.py": "x"}
    for i in range(12):
        files[f"pkg{i}/mod.py"] = "x" * i
        files[f"pkg{i}/debug.log"] = "x"
        files[f"pkg{i}/keep.log"] = "x"
        files[f"pkg{i}/build/out.py"] = "x"
        files[f"pkg{i}/sub/deeper/leaf{i}.py"] = "x"
    files["pkg3/.gitignore"] = "*.py\n!mod.py\n"
    files["pkg5/big.bin"] = "x" * 300
    write_tree(root, files)


def _walker(root: Path) -> Walker:
    real = os.path.realpath(root)
    rules = RulesCache(64)
    return Walker(
        real,
        policy=AccessPolicy(["pkg7/**"]),
        stack0=base_stack(real, rules),
        max_filesize=200,
        include=PathGlobs([]),
        exclude=PathGlobs([]),
        rules=rules,
    )


@pytest.fixture(autouse=True)
def _free_core(monkeypatch: pytest.MonkeyPatch) -> None:
    """Split whatever the machine's load and whatever threads earlier tests in this worker
    left running (the child only walks folders and writes a pipe, so no lock they hold
    matters to it)."""
    monkeypatch.setattr(walk_split, "core_free", lambda: True)
    monkeypatch.setattr(walk_split, "can_fork", lambda: hasattr(os, "fork"))


def _split(walker: Walker) -> tuple[list[Row], FileList]:
    result = FileList([])
    out: list[Row] = []
    walk_split.walk_split(walker, [("", walker.stack0, True)], result, out, spread=4)
    return sorted(out), result


@needs_fork
def test_split_walk_lists_what_one_process_lists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path)
    forks: list[int] = []
    real_fork = os.fork

    def counting_fork() -> int:
        forks.append(1)
        return real_fork()

    monkeypatch.setattr(os, "fork", counting_fork)
    whole = _walker(tmp_path).walk("")
    rows, result = _split(_walker(tmp_path))
    assert forks  # the walk really was shared
    assert [r[0] for r in rows] == whole.paths
    assert [(f.path, f.size) for f in whole.files] == [(r[0], r[1]) for r in rows]
    assert result.skipped == whole.skipped and result.skipped.too_large == 1
    assert result.ignored == whole.ignored > 0
    assert "pkg3/mod.py" in whole.paths and "pkg3/sub/deeper/leaf3.py" not in whole.paths
    assert not any(p.startswith("pkg7/") for p in whole.paths)


@needs_fork
def test_failed_child_is_walked_by_the_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path)

    def crash(*_args: object) -> int:
        raise RuntimeError("the child fails")

    monkeypatch.setattr(walk_split, "_serve", crash)
    whole = _walker(tmp_path).walk("")
    rows, result = _split(_walker(tmp_path))
    assert [r[0] for r in rows] == whole.paths
    assert result.skipped == whole.skipped and result.ignored == whole.ignored


def test_workspace_listing_with_split_tuning_is_unchanged(tmp_path: Path) -> None:
    _tree(tmp_path)
    split = Workspace(tmp_path, tuning=Tuning(walk_processes=2)).list_files()
    assert split.paths == Workspace(tmp_path).list_files().paths


def test_busy_machine_walks_in_one_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path)
    monkeypatch.setattr(walk_split, "core_free", lambda: False)
    monkeypatch.setattr(os, "fork", lambda: pytest.fail("forked on a busy machine"))
    rows, result = _split(_walker(tmp_path))
    assert [r[0] for r in rows] == _walker(tmp_path).walk("").paths
