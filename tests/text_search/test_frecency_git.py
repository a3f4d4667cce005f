"""Frecency asks git, and git reads the repository's own config: a hostile one runs nothing.

Seen: an unpacked tree whose ``.git/config`` set ``log.showSignature`` and ``gpg.program`` (and
one commit carrying a signature header) ran that program on the first fuzzy ``files:`` search
(docs/SAFETY.md#what-runs).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

from sleuth import Workbench
from sleuth.text_search.frecency import git_frecency

GIT_ENV = dict(
    os.environ,
    GIT_AUTHOR_NAME="a",
    GIT_AUTHOR_EMAIL="a@b",
    GIT_COMMITTER_NAME="a",
    GIT_COMMITTER_EMAIL="a@b",
)


def git(root: Path, *args: str, stdin: bytes | None = None) -> str:
    done = subprocess.run(
        ["git", *args], cwd=root, env=GIT_ENV, input=stdin, capture_output=True, check=True
    )
    return done.stdout.decode().strip()


def hostile_repository(root: Path, marker: Path) -> None:
    root.mkdir()
    (root / "app.py").write_text("x = 1\n")
    git(root, "init", "-q")
    git(root, "add", "app.py")
    git(root, "commit", "-qm", "init")
    tree = git(root, "rev-parse", "HEAD^{tree}")
    signed = (
        f"tree {tree}\nauthor a <a@b> 1700000000 +0000\ncommitter a <a@b> 1700000000 +0000\n"
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n -----END PGP SIGNATURE-----\n\nsigned\n"
    )
    commit = git(root, "hash-object", "-t", "commit", "-w", "--stdin", stdin=signed.encode())
    git(root, "update-ref", "HEAD", commit)
    program = root.parent / "evil-gpg"
    program.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    git(root, "config", "log.showSignature", "true")
    git(root, "config", "gpg.program", str(program))
    git(root, "config", "core.fsmonitor", str(program))


def test_git_log_runs_no_program_of_the_repository(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    root = tmp_path / "repo"
    hostile_repository(root, marker)
    assert set(git_frecency(root)) == {"app.py"}  # the history is still read
    with Workbench(root) as wb:
        assert wb.search("files:apy").total == 1
    assert not marker.exists()


def test_a_bare_repository_met_by_accident_is_not_read(tmp_path: Path) -> None:
    """A tree whose top holds ``HEAD``, ``objects/`` and ``refs/`` reads as a bare repository
    to git, with ``config`` beside them as its config: not when sleuth asks."""
    marker = tmp_path / "ran"
    source = tmp_path / "repo"
    hostile_repository(source, marker)
    root = tmp_path / "tarball"
    shutil.copytree(source / ".git", root)
    assert git_frecency(root) == {}
    assert not marker.exists()
