"""Crashes, hangs, missing binaries and clean shutdown — never a hang of sleuth."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from sleuth.errors import ServerUnavailable, Timeout
from sleuth.lsp_bridge import ServerPool
from sleuth.workspace import Workspace
from tests.conftest import UserServers

from .conftest import (
    LSP_STDIO,
    group_members,
    offset_of,
    pid_alive,
    require_server,
    write_tree,
)

# A minimal stdio "server": mode "hang" never answers anything; mode "slow" answers
# initialize/shutdown/workspace/symbol but never references (it touches a marker file first),
# and it starts a child process so the process-group kill is visible.
FAKE_SERVER = (
    LSP_STDIO
    + r"""
import subprocess
mode, marker = sys.argv[1], sys.argv[2]
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
with open(marker + ".child", "w") as fh:
    fh.write(str(child.pid))

while True:
    msg = read()
    method = msg.get("method")
    if mode == "hang" or "id" not in msg:
        if method == "exit":
            sys.exit(0)
        continue
    if method == "initialize":
        send(msg["id"], {"capabilities": {"referencesProvider": True,
                                          "workspaceSymbolProvider": True}})
    elif method == "textDocument/references":
        open(marker, "w").close()
        time.sleep(3600)
    else:
        send(msg["id"], [] if method == "workspace/symbol" else None)
"""
)


def fake_project(root: Path, mode: str, user_servers: UserServers) -> Path:
    script = root / "fake_server.py"
    marker = root / f"marker-{mode}"
    write_tree(root, {"a.py": "x = 1\n"})
    script.write_text(FAKE_SERVER)
    user_servers({"python": [sys.executable, str(script), mode, str(marker)]})
    return root


def child_pid(root: Path, mode: str) -> int:
    return int((root / f"marker-{mode}.child").read_text())


def test_a_server_that_never_answers_times_out_and_is_killed(
    tmp_path: Path, user_servers: UserServers
) -> None:
    root = fake_project(tmp_path, "hang", user_servers)
    with ServerPool(Workspace(root), timeout=1.5) as pool:
        # The server never answers, so only the request timeout can end the call: it must end
        # (the thread's deadline only turns a hang into a failure), with the 1.5 s timeout's
        # error rather than the pool's later ceiling.
        errors: list[BaseException] = []

        def ask() -> None:
            try:
                pool.workspace_symbols("python", "x")
            except BaseException as exc:  # noqa: BLE001 - collected for the assertion
                errors.append(exc)

        asker = threading.Thread(target=ask, daemon=True)
        asker.start()
        asker.join(60)
        assert not asker.is_alive(), "the request outlived its timeout"
        (err,) = errors
        assert isinstance(err, Timeout), err
        assert "did not answer initialize within 1.5 s" in err.message
        assert err.details["killed"] is True
        assert "restarts" in err.message
        child = child_pid(root, "hang")
        assert not pid_alive(child)  # the whole process group went


def test_server_killed_mid_request_then_restarted(
    tmp_path: Path, user_servers: UserServers
) -> None:
    root = fake_project(tmp_path, "slow", user_servers)
    marker = root / "marker-slow"
    with ServerPool(Workspace(root), timeout=20) as pool:
        assert pool.workspace_symbols("python", "x") == []
        (session,) = pool._sessions.values()
        pid = session.conn.pid if session.conn else None
        assert pid is not None
        errors: list[BaseException] = []

        def ask() -> None:
            try:
                pool.references("a.py", 0)
            except BaseException as exc:  # noqa: BLE001 - collected for the assertion
                errors.append(exc)

        worker = threading.Thread(target=ask)
        worker.start()
        deadline = time.monotonic() + 10
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(pid, signal.SIGKILL)
        worker.join(10)
        assert not worker.is_alive()
        assert len(errors) == 1 and isinstance(errors[0], ServerUnavailable)
        assert "restarts" in errors[0].message
        assert not pid_alive(child_pid(root, "slow"))  # its orphaned child was killed too
        # The next call starts a new server and works.
        assert pool.workspace_symbols("python", "x") == []
        (again,) = pool._sessions.values()
        assert again.conn is not None and again.conn.pid != pid


def test_missing_binary_names_the_install_command(
    tmp_path: Path, user_servers: UserServers
) -> None:
    write_tree(tmp_path, {"a.py": "x = 1\n"})
    user_servers({"python": ["ty-not-installed-here"]})
    pool = ServerPool(Workspace(tmp_path), timeout=5)
    try:
        assert not pool.available("python")
        with pytest.raises(ServerUnavailable, match="not installed; install it with"):
            pool.workspace_symbols("python", "x")
        # configured by the workspace, so queries must not quietly fall back to tags
        with pytest.raises(ServerUnavailable, match=r"configured for python.*install it with"):
            pool.serving("python")
        assert pool.serving("ruby") is False  # no server for the language at all: fallback
        assert pool.serving("c") == pool.available("c")  # defaults: found or not, no error
    finally:
        pool.close()


def test_close_leaves_no_server_process(tmp_path: Path) -> None:
    require_server("python", "ty")
    root = write_tree(tmp_path, {"m.py": "def f() -> int:\n    return 1\n\nf()\n"})
    pool = ServerPool(Workspace(root), timeout=20)
    refs = pool.references("m.py", offset_of(root, "m.py", "def f", "f"), include_declaration=True)
    assert len(refs) == 2
    pids = [s.conn.pid for s in pool._sessions.values() if s.conn and s.conn.pid]
    assert pids and all(pid_alive(p) for p in pids)
    pool.close()
    for pid in pids:
        assert not pid_alive(pid)
        assert group_members(pid) == []
    with pytest.raises(ServerUnavailable, match="closed"):
        pool.workspace_symbols("python", "f")


def test_a_server_that_died_while_idle_is_restarted_silently(tmp_path: Path) -> None:
    require_server("python", "ty")
    root = write_tree(tmp_path, {"m.py": "def f() -> int:\n    return 1\n\nf()\n"})
    with ServerPool(Workspace(root), timeout=20) as pool:
        at = offset_of(root, "m.py", "def f", "f")
        assert len(pool.references("m.py", at, include_declaration=True)) == 2
        (session,) = pool._sessions.values()
        assert session.conn is not None and session.conn.pid is not None
        os.killpg(session.conn.pid, signal.SIGKILL)
        time.sleep(0.2)
        assert len(pool.references("m.py", at, include_declaration=True)) == 2


def test_a_server_given_up_after_two_crashes_is_unavailable_not_a_fallback(
    tmp_path: Path, user_servers: UserServers
) -> None:
    root = fake_project(tmp_path, "slow", user_servers)
    with ServerPool(Workspace(root), timeout=5) as pool:
        assert pool.serving("python") is True
        spec = pool.spec("python")
        pool._crashes[pool._key(spec)] = 2  # what two crashes in a row leave behind
        with pytest.raises(ServerUnavailable, match="crashed twice") as excinfo:
            pool.serving("python")
        assert excinfo.value.details["reason"] == "crashed"
        assert not pool.available("python")
