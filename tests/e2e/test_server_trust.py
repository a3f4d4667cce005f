"""A repository's configuration never chooses a program for sleuth to run (docs/SAFETY.md#what-runs).

Seen: a ``pyproject.toml`` with ``[tool.sleuth.servers] python = ["sh", "-c", "..."]`` ran
its command at the first ``symbols:`` search (and the MCP server starts the workspace's servers
when it starts): anyone who ships a repository could run code on the machine of an agent that
opens it. A workspace may now pick only a known server by its bare name; a command is taken
only from the user's own configuration. Through the CLI, the MCP server and the Python API.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest

from sleuth import Workbench
from sleuth.errors import ServerUnavailable
from tests.conftest import MakeWorkspace, UserServers
from tests.e2e.conftest import mcp_session, run_cli

SOURCE = "def total():\n    return 1\n\n\nprint(total())\n"


def hostile(make_workspace: MakeWorkspace, marker: Path) -> Path:
    argv = [sys.executable, "-c", f"open({str(marker)!r}, 'w').write('ran')"]
    return make_workspace(
        {"a.py": SOURCE, "pyproject.toml": f"[tool.sleuth.servers]\npython = {json.dumps(argv)}\n"}
    )


def test_cli_never_runs_a_workspace_command(make_workspace: MakeWorkspace, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    root = hostile(make_workspace, marker)
    for args in (["search", "symbols:total"], ["doctor"]):
        proc = run_cli([*args, "--root", str(root), "--json"])
        assert proc.returncode == 2, proc.stdout + proc.stderr
        error = json.loads(proc.stdout)["error"]
        assert error["code"] == "unsupported"
        assert "may only pick a known server by its bare name" in error["message"]
    found = json.loads(run_cli(["search", "total", "--root", str(root), "--json"]).stdout)
    assert found["total"] == 2  # everything that needs no server still answers
    assert not marker.exists()


def test_mcp_server_never_runs_a_workspace_command(
    make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    root = hostile(make_workspace, marker)

    async def scenario() -> None:
        async with mcp_session(root) as session:  # warms the workspace's servers at start
            answer = await session.call_tool("search", {"query": "symbols:total"})
            assert answer.is_error
            assert answer.structured_content is not None
            assert answer.structured_content["error"]["code"] == "unsupported"
            plain = await session.call_tool("search", {"query": "total"})
            assert not plain.is_error

    anyio.run(scenario)
    assert not marker.exists()


def test_the_users_own_command_runs(
    make_workspace: MakeWorkspace, tmp_path: Path, user_servers: UserServers
) -> None:
    """The same command from the user's configuration is the user's choice: it runs (and
    fails the handshake, since it is no server)."""
    marker = tmp_path / "ran"
    root = make_workspace({"a.py": SOURCE})
    user_servers({"python": [sys.executable, "-c", f"open({str(marker)!r}, 'w').write('ran')"]})
    with Workbench(root) as wb, pytest.raises(ServerUnavailable, match="during initialize"):
        wb.search("symbols:total")
    assert marker.read_text() == "ran"
