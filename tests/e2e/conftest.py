"""Helpers for the face end-to-end tests: run the real CLI and MCP server as subprocesses.

``run_cli(args, ...)`` runs ``python -m sleuth`` (stdout piped, so never a TTY) and
``run_cli_on_tty`` runs it with stdout on a pseudo-terminal. With ``SLEUTH_TEST_VIA_DAEMON=1``
both first start the daemon of the call's root, so the call goes through it
(tests/e2e/test_daemon.py runs the CLI suites that way). ``mcp_session(root)`` starts
``sleuth mcp --root ROOT`` through the official client (``mcp.client.stdio``). ``sample_root``
is a small workspace whose expected matches the tests name.
"""

from __future__ import annotations

import os
import pty
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

SAMPLE: dict[str, str | bytes] = {
    "src/app.py": "def handler(uid):\n    user = get_user(uid)\n    return user\n",
    "src/users.py": "def get_user(uid):\n    return {'id': uid}\n\n\ndef list_users():\n"
    "    return [get_user(1), get_user(2)]\n",
    "docs/notes.md": "Call get_user with an id.\n",
    "blob.bin": b"\x00\x01get_user\x00",
}

SEARCH_KEYS = {
    "query",
    "mode",
    "fallback",
    "result",
    "complete",
    "incomplete_reason",
    "total",
    "matches",
    "all",
    "next_cursor",
    "skipped",
    "possible_names",
}
MATCH_KEYS = {
    "n",
    "path",
    "line",
    "column",
    "end_line",
    "end_column",
    "start_byte",
    "end_byte",
    "text",
    "context",
    "ref",
    "captures",
    "score",
}
ERROR_KEYS = {"code", "message", "retry_after", "details"}


def _env(extra: Mapping[str, str] | None, drop: Sequence[str] = ()) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"NO_COLOR", "SLEUTH_DEBUG", *drop}}
    env.update(extra or {})
    return env


def tool(name: str) -> str:
    """A console script of the project venv (next to this interpreter), else from PATH."""
    local = Path(sys.executable).with_name(name)
    if local.exists():
        return str(local)
    found = shutil.which(name)
    assert found is not None, f"{name} is not installed (pip install -e '.[test]')"
    return found


VIA_DAEMON = os.environ.get("SLEUTH_TEST_VIA_DAEMON") == "1"


def ensure_daemon(args: Sequence[str], cwd: Path | None) -> None:
    """Under ``SLEUTH_TEST_VIA_DAEMON=1``: start the daemon of the root ``args`` name (when it
    is a folder), so the call is relayed; the daemon exits when idle or when its folder goes."""
    if not VIA_DAEMON or "--no-daemon" in args:
        return
    from sleuth.client import plan

    _verb, root = plan(args)
    folder = Path(cwd or Path.cwd(), root)
    if not folder.is_dir() or (folder / ".sleuth" / "daemon.sock").exists():
        return
    subprocess.run(
        [sys.executable, "-m", "sleuth", "daemon", "start", "--root", str(folder)],
        capture_output=True,
        env=_env(None),
        timeout=120,
        check=True,
    )


def run_cli(
    args: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m sleuth ARGS`` with stdout and stderr piped."""
    ensure_daemon(args, cwd)
    return subprocess.run(
        [sys.executable, "-m", "sleuth", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=_env(env),
        cwd=cwd,
        timeout=120,
    )


def run_cli_on_tty(args: Sequence[str], *, env: Mapping[str, str] | None = None) -> tuple[int, str]:
    """``python -m sleuth ARGS`` with stdout on a pseudo-terminal; returns (code, stdout)."""
    ensure_daemon(args, None)
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sleuth", *args],
        stdout=slave,
        stderr=subprocess.DEVNULL,
        env=_env({"TERM": "xterm-256color", **(env or {})}),
    )
    os.close(slave)
    chunks: list[bytes] = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=120), b"".join(chunks).decode("utf-8", "replace")


@asynccontextmanager
async def mcp_session(root: Path, *extra: str) -> AsyncIterator[ClientSession]:
    """An initialised client session with ``sleuth mcp --root ROOT`` over stdio."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "sleuth", "mcp", "--root", str(root), *extra],
        env=_env(None),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@pytest.fixture
def sample_root(make_workspace: Callable[[dict[str, str | bytes]], Path]) -> Path:
    """A fresh copy of ``SAMPLE``."""
    return make_workspace(SAMPLE)
