"""Language-server faults as the faces see them (docs/errors.md,
docs/servers.md#the-transport): never a hang, never a stray process, never a half-written rename.

* A server killed in the middle of a request fails that call with ``server_unavailable`` (exit 5
  on the CLI) and the next call starts a new server and answers.
* A server that never answers is ``timeout`` (exit 5) within the bound: the pool's per-request
  timeout plus the cancel grace, well under the pool's hard ceiling. The bound is
  ``ServerPool(timeout=...)`` (20 s by default); no ``[tool.sleuth]`` key sets it, so the fast
  variant sets it on the pool class the workbench builds, in a subprocess whose own timeout is
  the bound being checked.
* A missing server binary that the workspace configured (``[servers]``): ``sleuth doctor`` names
  the install command, and ``symbols:`` and ``rename`` are ``server_unavailable`` (exit 5) with
  that install command — a configured server is never silently replaced by syntactic answers.
  (A language whose *default* servers are all missing answers ``syntactic``; see
  ``test_symbols_e2e``.)
* After the CLI exits no server process is left: /proc holds nothing whose working folder or
  command line points into the workspace (ty, tsc and clangd).
* A rename through a reference whose file changed after the search is ``stale_reference``
  (exit 3) and writes nothing.

The misbehaving servers are a small fake LSP server (``FAKE_SERVER``) configured through
the user's own configuration (``user_servers``: a workspace may not name a command); it records its pid so the tests can kill it and check it is gone.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from sleuth.api import Workbench
from sleuth.errors import ServerUnavailable
from tests.conftest import UserServers
from tests.e2e.conftest import run_cli
from tests.e2e.test_symbols_e2e import PROJECTS, require_server, write_tree
from tests.lsp_bridge.conftest import LSP_STDIO, pid_alive

# A stdio LSP server. Modes: "hang" never answers anything; "crash-once" answers like a real
# server (one function ``total`` in a.py and its one use) except that its first
# textDocument/references never returns: it writes its pid to the marker file and sleeps, so the
# test can kill it mid-request. Every instance appends its pid to <state>/pids.
FAKE_SERVER = (
    LSP_STDIO
    + r"""
mode, state = sys.argv[1], sys.argv[2]
with open(os.path.join(state, "pids"), "a") as fh:
    fh.write(f"{os.getpid()}\n")
root = None

def loc(line, start, end):
    return {"uri": root + "/a.py", "range": {"start": {"line": line, "character": start},
                                             "end": {"line": line, "character": end}}}

while True:
    msg = read()
    method = msg.get("method")
    if method == "exit":
        sys.exit(0)
    if mode == "hang" or "id" not in msg:
        continue
    if method == "initialize":
        root = msg["params"]["rootUri"]
        send(msg["id"], {"capabilities": {"workspaceSymbolProvider": True,
                                          "referencesProvider": True,
                                          "definitionProvider": True}})
    elif method == "workspace/symbol":
        whole = loc(0, 0, 12)
        whole["range"]["end"] = {"line": 1, "character": 12}
        send(msg["id"], [{"name": "total", "kind": 12, "location": whole}])
    elif method == "textDocument/definition":
        send(msg["id"], [loc(0, 4, 9)])
    elif method == "textDocument/references":
        marker = os.path.join(state, "marker")
        if not os.path.exists(marker):
            with open(marker, "w") as fh:
                fh.write(str(os.getpid()))
            time.sleep(3600)
        send(msg["id"], [loc(0, 4, 9), loc(4, 6, 11)])
    else:
        send(msg["id"], None)
"""
)
SOURCE = "def total():\n    return 1\n\n\nprint(total())\n"
REFERENCES = [("a.py", 1, 5, "function"), ("a.py", 5, 7, "reference")]
BOUND_S = 60
"""Subprocess bound for a call that must fail fast (far below the pool's hard ceiling)."""


def fake_workspace(tmp_path: Path, mode: str, user_servers: UserServers) -> tuple[Path, Path]:
    """A workspace whose Python server is ``FAKE_SERVER`` in ``mode``; (root, state folder)."""
    state = tmp_path / "state"
    state.mkdir()
    script = tmp_path / "fake_server.py"
    script.write_text(FAKE_SERVER)
    root = write_tree(tmp_path / "ws", {"a.py": SOURCE})
    user_servers({"python": [sys.executable, str(script), mode, str(state)]})
    return root, state


def fake_pids(state: Path) -> list[int]:
    path = state / "pids"
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def processes_in(root: Path) -> list[str]:
    """Live processes whose working folder or command line points into ``root``."""
    needle = os.path.realpath(root)
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = (
                Path(f"/proc/{entry}/cmdline")
                .read_bytes()
                .replace(b"\0", b" ")
                .decode("utf-8", "replace")
            )
        except OSError:
            continue
        try:
            cwd = os.readlink(f"/proc/{entry}/cwd")
        except OSError:
            cwd = ""
        if (cwd == needle or cwd.startswith(needle + "/") or needle in cmdline) and pid_alive(
            int(entry)
        ):
            found.append(f"{entry} cwd={cwd} {cmdline}")
    return found


def wait_for_marker(state: Path, deadline_s: float = BOUND_S) -> int:
    """The pid the fake server wrote when it started hanging in textDocument/references."""
    marker = state / "marker"
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if marker.exists() and marker.read_text():
            return int(marker.read_text())
        time.sleep(0.02)
    raise AssertionError("the fake server never received textDocument/references")


def kill_when_hanging(state: Path) -> threading.Thread:
    """A thread that SIGKILLs the fake server as soon as it hangs in a request."""

    def run() -> None:
        os.kill(wait_for_marker(state), signal.SIGKILL)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def symbols_seen(data: dict[str, Any]) -> list[tuple[str, int, int, str]]:
    return [(m["path"], m["line"], m["column"], m["symbol"]["kind"]) for m in data["matches"]]


def test_server_killed_mid_request_fails_that_call_and_the_next_one_works(
    tmp_path: Path,
    user_servers: UserServers,
) -> None:
    root, state = fake_workspace(tmp_path, "crash-once", user_servers)
    killer = kill_when_hanging(state)
    with Workbench(root) as wb:
        with pytest.raises(ServerUnavailable) as failed:
            wb.search("symbols:total", navigation="references")
        killer.join(BOUND_S)
        assert failed.value.code == "server_unavailable"
        assert "restarts" in failed.value.message
        data = wb.search("symbols:total", navigation="references").to_json()
        assert data["complete"] is True and symbols_seen(data) == REFERENCES
        assert {m["symbol"]["precision"] for m in data["matches"]} == {"semantic"}
        pids = fake_pids(state)
        assert len(pids) == 2 and not pid_alive(pids[0]) and pid_alive(pids[1])
    assert not any(pid_alive(p) for p in fake_pids(state))


def test_cli_server_killed_mid_request_is_exit_5_then_the_next_call_works(
    tmp_path: Path,
    user_servers: UserServers,
) -> None:
    root, state = fake_workspace(tmp_path, "crash-once", user_servers)
    killer = kill_when_hanging(state)
    args = [
        sys.executable,
        "-m",
        "sleuth",
        "search",
        "symbols:total",
        "--navigation",
        "references",
        "--root",
        str(root),
        "--json",
    ]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=BOUND_S)
    killer.join(BOUND_S)
    assert proc.returncode == 5, proc.stdout + proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "server_unavailable" and error["details"]["reason"] == "exited"
    assert proc.stderr.startswith("sleuth: error[server_unavailable]: ")
    again = run_cli(
        ["search", "symbols:total", "--navigation", "references", "--root", str(root), "--json"]
    )
    assert again.returncode == 0, again.stderr
    assert symbols_seen(json.loads(again.stdout)) == REFERENCES
    assert len(fake_pids(state)) == 2
    assert not any(pid_alive(p) for p in fake_pids(state))
    assert processes_in(root) == []


TIMEOUT_SCRIPT = r"""
import functools, json, sys
import sleuth.lsp_bridge as bridge
from sleuth.api import Workbench
from sleuth.errors import SleuthError
bridge.ServerPool = functools.partial(bridge.ServerPool, timeout=float(sys.argv[2]))
with Workbench(sys.argv[1]) as wb:
    try:
        wb.search("symbols:total")
    except SleuthError as exc:
        print(json.dumps(exc.to_json()))
"""


def test_a_server_that_never_answers_times_out_within_the_pool_timeout(
    tmp_path: Path, user_servers: UserServers
) -> None:
    root, state = fake_workspace(tmp_path, "hang", user_servers)
    timeout = 3.0
    # which bound ended the call is in the answer: the pool's own timeout names the method and
    # the kill, its hard ceiling (4 * timeout + 10 s) neither; the subprocess timeout only stops
    # a hang (15 s was once exceeded on a machine loaded four times over)
    proc = subprocess.run(
        [sys.executable, "-c", TIMEOUT_SCRIPT, str(root), str(timeout)],
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert proc.returncode == 0, proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "timeout"
    assert error["details"]["method"] == "initialize" and error["details"]["killed"] is True
    assert f"within {timeout:g} s" in error["message"]
    (pid,) = fake_pids(state)
    assert not pid_alive(pid)


def test_cli_hung_server_is_exit_5_timeout_within_the_default_bound(
    tmp_path: Path, user_servers: UserServers
) -> None:
    root, state = fake_workspace(tmp_path, "hang", user_servers)
    # default ServerPool timeout 20 s + 2 s grace; the pool's own ceiling would be 90 s
    proc = subprocess.run(
        [sys.executable, "-m", "sleuth", "search", "symbols:total", "--root", str(root), "--json"],
        capture_output=True,
        text=True,
        timeout=45,
    )
    assert proc.returncode == 5, proc.stdout + proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "timeout" and error["details"]["killed"] is True
    assert not any(pid_alive(p) for p in fake_pids(state))
    assert processes_in(root) == []


def test_missing_server_binary_names_the_install_command(
    tmp_path: Path, user_servers: UserServers
) -> None:
    root = write_tree(tmp_path, {"a.py": SOURCE})
    user_servers({"python": ["/nonexistent/bin/ty"]})
    doctor = run_cli(["doctor", "--root", str(root), "--json"])
    assert doctor.returncode == 0, doctor.stderr
    row = next(r for r in json.loads(doctor.stdout) if r["language"] == "python")
    assert (row["server"], row["found"], row["version"]) == ("ty", False, None)
    assert row["install"].startswith("pip install ty")
    for navigation in ([], ["--navigation", "references"]):
        found = run_cli(["search", "symbols:total", "--root", str(root), "--json", *navigation])
        assert found.returncode == 5, found.stdout + found.stderr
        error = json.loads(found.stdout)["error"]
        assert error["code"] == "server_unavailable", error
        assert "pip install ty" in error["message"]
        assert error["details"]["install"].startswith("pip install ty")
    text = run_cli(["search", "total", "--root", str(root), "--json"])
    ref = json.loads(text.stdout)["matches"][0]["ref"]["match"]
    renamed = run_cli(["rename", f"{ref}#grand_total", "--root", str(root), "--json"])
    assert renamed.returncode == 5, renamed.stdout + renamed.stderr
    error = json.loads(renamed.stdout)["error"]
    assert error["code"] == "server_unavailable" and "pip install ty" in error["message"]
    assert (root / "a.py").read_text() == SOURCE
    # other modes do not need the server
    assert run_cli(["search", "ast:def $F(): $$$", "--root", str(root), "--json"]).returncode == 0


@pytest.mark.parametrize("name", ["ty", "typescript", "c"])
def test_no_server_process_is_left_after_the_cli_exits(name: str, tmp_path: Path) -> None:
    project = PROJECTS[name]
    require_server(project)
    root = write_tree(tmp_path, project.tree)
    proc = run_cli(
        ["search", "symbols:total", "--navigation", "references", "--root", str(root), "--json"]
    )
    assert proc.returncode == 0, proc.stderr
    assert {m["symbol"]["precision"] for m in json.loads(proc.stdout)["matches"]} == {"semantic"}
    assert processes_in(root) == []


def test_stale_rename_is_exit_3_and_writes_nothing(tmp_path: Path) -> None:
    project = PROJECTS["ty"]
    require_server(project)
    root = write_tree(tmp_path, project.tree)
    found = run_cli(["search", "symbols:total", "--root", str(root), "--json"])
    assert found.returncode == 0, found.stderr
    (match,) = json.loads(found.stdout)["matches"]
    models = root / project.declaration
    models.write_text(models.read_text() + "\n\nTAX = 0.2\n")
    before = {p: (root / p).read_bytes() for p in project.files}
    for args in (
        ["rename", match["ref"]["match"], "grand_total", "--json"],
        ["rename", f"{match['ref']['match']}#grand_total"],
    ):
        proc = run_cli([*args, "--root", str(root)])
        assert proc.returncode == 3, proc.stdout + proc.stderr
        if "--json" in args:
            error = json.loads(proc.stdout)["error"]
            assert error["code"] == "stale_reference"
            assert project.declaration in error["message"]
        else:
            assert proc.stderr.startswith("sleuth: error[stale_reference]: ")
    assert {p: (root / p).read_bytes() for p in project.files} == before
    assert not (root / ".sleuth" / "journal").exists() or not any(
        (root / ".sleuth" / "journal").iterdir()
    )
