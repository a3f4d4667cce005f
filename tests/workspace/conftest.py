"""Fixtures for workspace tests: trees turned into git repositories, and git's own listing.

``git ls-files -o --exclude-standard`` in a repository with nothing committed is the oracle for
ignore semantics (benchmarks/RESULTS.md#measured-constraints). Git runs with no system or global
config so a developer's ``core.excludesFile`` cannot change the answer.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from sleuth.tuning import Tuning
from sleuth.workspace import Workspace

SETTLED = replace(Tuning(), watch_settle_s=0.3)
"""A watcher trusted soon after it starts (the watching tests)."""


def wait_for(cond: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Poll ``cond`` until it holds (True) or ``timeout`` seconds pass (False): a bound on
    waiting for a watcher, never a timed assertion."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.02)
    return False


GIT = shutil.which("git")
needs_git = pytest.mark.skipif(GIT is None, reason="git is not installed")


def git_env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        HOME=str(home),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        XDG_CONFIG_HOME=str(home / ".config"),
    )
    return env


def git_init(root: Path) -> None:
    """Make ``root`` a git repository (nothing committed)."""
    subprocess.run(
        ["git", "init", "-q", str(root)], check=True, env=git_env(root.parent), capture_output=True
    )


def git_listed(root: Path) -> list[str]:
    """What git lists under ``root``: untracked files honouring every standard ignore file."""
    out = subprocess.run(
        ["git", "ls-files", "-o", "--exclude-standard", "-z"],
        cwd=root,
        check=True,
        env=git_env(root.parent),
        capture_output=True,
    ).stdout.decode("utf-8", errors="surrogateescape")
    return sorted(p for p in out.split("\0") if p and not p.startswith(".sleuth/"))


def sleuth_listed(root: Path, **kwargs: object) -> list[str]:
    return sorted(f.path for f in Workspace(root, **kwargs).list_files().files)  # type: ignore[arg-type]


def write_tree(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))


@pytest.fixture
def git_tree(make_workspace: Callable[[dict[str, str | bytes]], Path]) -> Callable[..., Path]:
    """``git_tree(files, exclude="...")``: a workspace that is also a fresh git repository."""

    def build(files: dict[str, str | bytes], exclude: str | None = None) -> Path:
        root = make_workspace({})
        git_init(root)
        write_tree(root, files)
        if exclude is not None:
            (root / ".git" / "info" / "exclude").write_text(exclude, encoding="utf-8")
        return root

    return build
