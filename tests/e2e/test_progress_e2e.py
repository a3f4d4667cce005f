"""A CLI call's progress on a terminal, and none on a pipe (docs/faces.md#progress)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.e2e.conftest import run_cli

MakeWorkspace = Callable[[dict[str, str | bytes]], Path]


def _many_files() -> dict[str, str | bytes]:
    # Enough files that the graph is tagged in worker processes (Tuning.graph_pool_min_files).
    return {
        f"pkg/m{i:03}.py": f"def f{i}(x):\n    return g{(i + 1) % 300}(x)\n\n\ndef g{i}(y):\n    return y\n"
        for i in range(300)
    }


def _on_terminal(args: list[str]) -> tuple[int, str]:
    master, slave = pty.openpty()
    env = {**os.environ, "SLEUTH_PROGRESS_DELAY": "0", "TERM": "xterm-256color"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sleuth", *args], stdout=slave, stderr=slave, env=env
    )
    os.close(slave)
    chunks: list[bytes] = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=120), b"".join(chunks).decode("utf-8", "replace")


def test_a_graph_build_shows_progress_on_a_terminal_only(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(_many_files())
    code, shown = _on_terminal(["search", "graph:pkg/m001.py", "--root", str(root)])
    assert code == 0, shown
    assert "building the reference graph" in shown
    fresh = make_workspace(_many_files())  # a cold build again, now on a pipe
    piped = run_cli(
        ["search", "graph:pkg/m002.py", "--root", str(fresh)], env={"SLEUTH_PROGRESS_DELAY": "0"}
    )
    assert piped.returncode == 0, piped.stderr
    assert "building" not in piped.stderr and "building" not in piped.stdout


def test_sleuth_index_shows_its_progress_on_a_terminal(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(_many_files())
    code, shown = _on_terminal(["index", "--root", str(root)])
    assert code == 0, shown
    assert "building the trigram index" in shown
    assert "300 files" in shown


def test_a_first_semantic_index_shows_progress_but_not_with_json(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace(_many_files())
    code, shown = _on_terminal(["search", "semantic:return the value", "--root", str(root)])
    assert code == 0, shown
    assert "building the semantic index" in shown
    fresh = make_workspace(_many_files())
    code, shown = _on_terminal(["search", "semantic:return", "--root", str(fresh), "--json"])
    assert code == 0, shown
    assert "building" not in shown and shown.lstrip().startswith("{")
