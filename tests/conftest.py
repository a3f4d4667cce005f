"""Shared fixtures: ``make_workspace`` builds a file tree from a dict (docs/architecture.md#tests)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

# Every CLI subprocess of the suite answers in its own process and starts no daemon (one per
# temporary workspace would outlive the test); tests/e2e/test_daemon.py asks for daemons
# explicitly, and SLEUTH_TEST_VIA_DAEMON=1 runs the CLI tests through one (see tests/e2e/conftest.py).
if os.environ.get("SLEUTH_TEST_VIA_DAEMON") == "1":
    os.environ.pop("SLEUTH_NO_DAEMON", None)
else:
    os.environ["SLEUTH_NO_DAEMON"] = "1"

MakeWorkspace = Callable[[dict[str, str | bytes]], Path]


@pytest.fixture
def make_workspace(tmp_path: Path) -> MakeWorkspace:
    """``make_workspace({"src/a.py": "text", "bin.dat": b"\\0"})`` -> the root folder."""
    counter = iter(range(1_000_000))

    def build(files: dict[str, str | bytes]) -> Path:
        root = tmp_path / f"ws{next(counter)}"
        root.mkdir()
        for rel, content in files.items():
            target = root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_bytes(content.encode("utf-8"))
        return root

    return build
