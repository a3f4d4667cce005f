"""Shared fixtures: ``make_workspace`` builds a file tree from a dict (docs/architecture.md#tests)."""

from __future__ import annotations

import json
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
# No user configuration (docs/SAFETY.md#what-runs) unless a test writes one with ``user_servers``.
os.environ["SLEUTH_CONFIG"] = ""

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


UserServers = Callable[[dict[str, list[str]]], Path]


@pytest.fixture
def user_servers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> UserServers:
    """``user_servers({"python": [argv...]})``: the user's own sleuth configuration naming those
    server commands (``SLEUTH_CONFIG``, inherited by every subprocess the test starts): the
    only place a command of one's own is taken from (docs/SAFETY.md#what-runs)."""

    def write(servers: dict[str, list[str]]) -> Path:
        path = tmp_path / "user-config.toml"
        lines = ["[servers]", *(f"{lang} = {json.dumps(argv)}" for lang, argv in servers.items())]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        monkeypatch.setenv("SLEUTH_CONFIG", str(path))
        return path

    return write
