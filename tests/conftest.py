"""Shared fixtures: ``make_workspace`` builds a file tree from a dict (docs/architecture.md#tests)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

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
