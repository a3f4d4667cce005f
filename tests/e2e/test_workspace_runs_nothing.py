"""A workspace's files never make sleuth's programs run one of its choosing
(docs/SAFETY.md#what-runs), beyond its configuration (test_server_trust.py).

Seen, each with a marker program that records that it ran:

* a relative ``PATH`` entry (``PATH=:/usr/bin``, what ``PATH=$X:$PATH`` leaves when ``X`` is
  unset) made ``git log`` (fuzzy ``files:``) run the repository's ``./git``, and a ``.go`` file
  start its ``./gopls``: both run in the root;
* a ``rust-toolchain.toml`` with ``[toolchain] path = "/proc/self/cwd/tc"`` made the rustup proxy
  ``rust-analyzer`` run the repository's ``tc/bin/rust-analyzer``;
* TypeScript 7's automatic type acquisition ran ``npm install`` for a JavaScript workspace.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tests.conftest import MakeWorkspace
from tests.e2e.conftest import run_cli


def marker_script(path: Path, marker: Path) -> None:
    """An executable that appends its name to ``marker`` and exits 0."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\n', encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def test_relative_path_entries_find_no_program_of_the_workspace(
    make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    root = make_workspace(
        {
            "a.py": "def total():\n    return 1\n",
            "main.go": "package main\n\nfunc total() int { return 1 }\n\nfunc main() { total() }\n",
        }
    )
    for name in ("git", "gopls"):
        marker_script(root / name, marker)
    env = {"PATH": os.pathsep + os.environ.get("PATH", "")}  # an empty entry: the cwd
    for query in ("files:a", "symbols:total"):
        run_cli(["search", query, "--json"], env=env, cwd=root)
    run_cli(["doctor", "--json"], env=env, cwd=root)
    assert not marker.exists(), marker.read_text()


def test_a_rust_toolchain_file_picks_no_program(
    make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    """On a machine with rustup (its proxies read the file); elsewhere nothing reads it."""
    marker = tmp_path / "ran"
    root = make_workspace(
        {
            "Cargo.toml": '[package]\nname = "t"\nversion = "0.1.0"\nedition = "2021"\n',
            "src/main.rs": "fn total() -> i32 { 1 }\n\nfn main() { total(); }\n",
            "rust-toolchain.toml": '[toolchain]\npath = "/proc/self/cwd/tc"\n',
        }
    )
    for name in ("rust-analyzer", "cargo", "rustc"):
        marker_script(root / "tc" / "bin" / name, marker)
    run_cli(["search", "symbols:total", "--json"], cwd=root)
    run_cli(["doctor", "--json"], cwd=root)
    assert not marker.exists(), marker.read_text()


def test_typescript_acquires_no_types_with_npm(
    make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    marker_script(tmp_path / "bin" / "npm", marker)
    root = make_workspace(
        {
            "package.json": '{"name": "t", "dependencies": {"lodash": "*", "express": "*"}}\n',
            "src/a.js": "const lodash = require('lodash');\n\n"
            "function total() {\n  return lodash.sum([1]);\n}\n\ntotal();\n",
        }
    )
    env = {"PATH": os.pathsep.join([str(tmp_path / "bin"), os.environ.get("PATH", "")])}
    for extra in ([], ["--navigation", "references"]):
        proc = run_cli(["search", "symbols:total", *extra, "--root", str(root), "--json"], env=env)
        assert '"precision": "semantic"' in proc.stdout, proc.stdout + proc.stderr
    assert not marker.exists(), marker.read_text()
