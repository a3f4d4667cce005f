"""Language servers started at a long-running face's start (docs/servers.md#warm-start): the
workspace's languages get their servers before any query asks, and the setting turns it off."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from sleuth.api import Workbench
from sleuth.lsp_bridge import ServerPool

WAIT_S = 120.0  # a bound on waiting for the background start, not a speed assertion


def _running(pool: ServerPool, want: bool) -> list[str]:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        names = pool.running()
        if bool(names) == want:
            return names
        time.sleep(0.1)
    return pool.running()


def test_the_workspace_languages_server_starts_before_any_query(
    make_workspace: Callable[[dict[str, str | bytes]], Path],
) -> None:
    root = make_workspace({"pkg/a.py": "def f():\n    return 1\n", "notes.md": "f\n"})
    with Workbench(root, build_index=False) as wb:
        wb.warm_servers()
        pool = wb._server_pool()
        assert isinstance(pool, ServerPool)
        assert _running(pool, True) == [pool.server_name("python")]
        found = wb.search("symbols:f").to_json()
        assert found["matches"][0]["symbol"]["precision"] == "semantic"
        assert pool.running() == [pool.server_name("python")]  # the same server, not another


def test_warm_servers_false_starts_nothing(
    make_workspace: Callable[[dict[str, str | bytes]], Path],
) -> None:
    root = make_workspace(
        {"a.py": "x = 1\n", "pyproject.toml": "[tool.sleuth]\nwarm_servers = false\n"}
    )
    with Workbench(root, build_index=False) as wb:
        wb.warm_servers()
        pool = wb._server_pool()
        assert isinstance(pool, ServerPool)
        time.sleep(1.0)  # room for a start that must not come
        assert pool.running() == []
