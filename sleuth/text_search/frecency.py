"""Frecency from git history: how recently and how often each path changed, on a 0..1 scale.

Fuzzy ``files:`` queries (docs/query.md#files-paths) add a bounded bonus from this map
so that, among near-equal matches, the files someone is working on come first. The signal is
the last ``max_commits`` commits of ``git log``: each commit touching a path adds
``0.5 ** (age / 14 days)``, and the sums are divided by the largest one.

It is a hint, never a requirement: outside a git repository, without git, or when git is slow
(``timeout``), the answer is ``{}`` and ranking falls back to the match score alone. Paths are
relative to ``root`` (``git log --relative``), so a workspace inside a larger repository works.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

from sleuth.child_env import child_env

__all__ = ["git_frecency", "HALF_LIFE_S", "parse_git_log"]

HALF_LIFE_S = 14 * 24 * 3600.0
"""Half-life of a commit's contribution: two weeks."""

_COMMIT_MARK = "\x00"


def git_frecency(root: Path, *, max_commits: int = 500, timeout: float = 2.0) -> dict[str, float]:
    """Map workspace-relative paths to a 0..1 frecency; ``{}`` when git cannot answer in time."""
    if max_commits <= 0:
        return {}
    # The repository's own config is the workspace's, and an unpacked tree can carry one:
    # ``log.showSignature`` with ``gpg.program`` ran a program of its choice on a fuzzy
    # ``files:`` search. Command-line settings outrank it; nothing here verifies a signature,
    # watches files or reads a bare repository found by accident (docs/SAFETY.md#what-runs).
    # git runs in the root, where a relative PATH entry found the repository's own ./git: the
    # lookup and git's own see absolute entries only (sleuth/child_env.py).
    env = child_env({"GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"})
    git = shutil.which("git", path=env["PATH"])
    if git is None:
        return {}  # no git: no frecency, plain ranking
    cmd = [
        git,
        "-c",
        "core.quotePath=false",
        "-c",
        "core.fsmonitor=false",
        "-c",
        "safe.bareRepository=explicit",
        "-c",
        "log.showSignature=false",
        "log",
        "--no-show-signature",
        "--relative",
        "--name-only",
        "--no-renames",
        "--format=%x00%ct",  # git writes the NUL: argv cannot hold one
        "-n",
        str(max_commits),
    ]
    try:
        proc = subprocess.run(
            cmd,
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return {}  # git missing, root missing, or too slow: no frecency, plain ranking
    if proc.returncode != 0:
        return {}  # not a repository, or one without commits
    try:
        text = proc.stdout.decode("utf-8", errors="surrogateescape")
        return parse_git_log(text, now=time.time())
    except Exception:  # a strange log must never break a search
        return {}


def parse_git_log(text: str, *, now: float) -> dict[str, float]:
    """Turn ``git log --name-only --format=\\0%ct`` output into normalised frecency scores."""
    weights: dict[str, float] = {}
    weight = 0.0
    for line in text.splitlines():
        if line.startswith(_COMMIT_MARK):
            stamp = line[len(_COMMIT_MARK) :].strip()
            try:
                age = max(0.0, now - float(stamp))
            except ValueError:
                weight = 0.0
                continue
            weight = 0.5 ** (age / HALF_LIFE_S)
        elif line and weight:
            weights[line] = weights.get(line, 0.0) + weight
    if not weights:
        return {}
    top = max(weights.values())
    if top <= 0.0:
        return {}
    return {path: value / top for path, value in weights.items()}
