"""The daemon behind the CLI, end to end (docs/faces.md#the-daemon): real ``sleuth`` processes
relaying to a real daemon over its Unix socket."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from sleuth.daemon import wire
from tests.e2e.conftest import SAMPLE

MakeWorkspace = Callable[[dict[str, str | bytes]], Path]
TIMEOUT_S = 60.0


def daemon_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"SLEUTH_NO_DAEMON", "SLEUTH_CRASH_AT", "NO_COLOR", "SLEUTH_DEBUG"}
    }
    env["SLEUTH_DAEMON_IDLE"] = "60"  # a daemon a test leaves behind goes by itself
    env.update(extra or {})
    return env


def sleuth(
    root: Path, *args: str, env: Mapping[str, str] | None = None, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "sleuth", *args, "--root", str(root)],
        capture_output=True,
        input=stdin,
        env=daemon_env(env),
        timeout=120,
    )


def status(root: Path) -> dict[str, object]:
    proc = sleuth(root, "daemon", "status", "--json")
    assert proc.returncode == 0, proc.stderr
    answer: dict[str, object] = json.loads(proc.stdout)
    return answer


def wait_for(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def calls(root: Path) -> int:
    value = status(root).get("calls")
    assert isinstance(value, int)
    return value


@pytest.fixture
def root(make_workspace: MakeWorkspace) -> Iterator[Path]:
    ws = make_workspace(SAMPLE)
    yield ws
    sleuth(ws, "daemon", "stop")


@pytest.fixture
def running(root: Path) -> Path:
    proc = sleuth(root, "daemon", "start", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["running"] is True
    return root


def search_paths(proc: subprocess.CompletedProcess[bytes]) -> list[tuple[str, int]]:
    assert proc.returncode == 0, proc.stderr
    return [(m["path"], m["line"]) for m in json.loads(proc.stdout)["matches"]]


def test_first_call_answers_here_and_starts_a_daemon_the_next_calls_use(root: Path) -> None:
    assert status(root)["running"] is False
    first = sleuth(root, "search", "list_users", "--json")
    assert search_paths(first) == [("src/users.py", 5)]
    wait_for(lambda: status(root)["running"] is True, "the daemon to start")
    before = calls(root)
    again = sleuth(root, "search", "list_users", "--json", "--context", "1")
    assert search_paths(again) == [("src/users.py", 5)]
    assert calls(root) == before + 1
    pid = status(root)["pid"]
    sleuth(root, "search", "get_user", "--json")
    assert status(root)["pid"] == pid  # reused, not restarted


def test_no_daemon_flag_environment_and_config_keep_calls_here(
    make_workspace: MakeWorkspace,
) -> None:
    for how in ("flag", "env", "config"):
        files: dict[str, str | bytes] = dict(SAMPLE)
        if how == "config":
            files[".sleuth.toml"] = "daemon = false\n"
        ws = make_workspace(files)
        args = ["search", "get_user", "--json"] + (["--no-daemon"] if how == "flag" else [])
        env = {"SLEUTH_NO_DAEMON": "1"} if how == "env" else None
        for _ in range(2):
            assert len(search_paths(sleuth(ws, *args, env=env))) == 5
        time.sleep(1.5)  # a daemon spawned after the first call would be up by now
        assert not (ws / ".sleuth" / "daemon.sock").exists(), how
        if how == "config":
            refused = sleuth(ws, "daemon", "start")
            assert refused.returncode == 2 and b"error[unsupported]" in refused.stderr


def test_socket_is_private_and_a_killed_daemons_socket_is_replaced(running: Path) -> None:
    sock = running / ".sleuth" / "daemon.sock"
    assert stat.S_IMODE(sock.stat().st_mode) == 0o600
    old = status(running)["pid"]
    assert isinstance(old, int)
    os.kill(old, signal.SIGKILL)
    wait_for(lambda: status(running)["running"] is False, "the killed daemon to be gone")
    assert sock.exists()  # left behind: nobody listens on it
    proc = sleuth(running, "search", "list_users", "--json")
    assert search_paths(proc) == [("src/users.py", 5)]
    wait_for(lambda: status(running)["running"] is True, "a new daemon")
    assert status(running)["pid"] != old


def test_a_daemon_never_answers_for_another_root(
    running: Path, make_workspace: MakeWorkspace
) -> None:
    # A socket planted in another workspace's state folder: refused there, never relayed.
    other = make_workspace({"b.py": "def only_in_b():\n    pass\n"})
    (other / ".sleuth").mkdir()
    (other / ".sleuth" / "daemon.sock").symlink_to(running / ".sleuth" / "daemon.sock")
    before = calls(running)
    planted = sleuth(other, "search", "only_in_b", "--json")
    assert planted.returncode == 2 and b"only_in_b" not in planted.stdout
    assert calls(running) == before
    # Asked directly, with another root, it declines.
    conn = wire.connect(str(running / ".sleuth" / "daemon.sock"), 5)
    fields = [wire.MAGIC, b"call", str(other), str(other), "utf-8", "strict", "utf-8", "strict"]
    wire.send_frame(conn, wire.encode([*fields, "0", "search", "x"]), (0, 1, 2))
    body, _ = wire.recv_frame(conn)
    conn.close()
    assert wire.decode(body)[0] == "declined"
    assert calls(running) == before
    # The served folder moved: its socket moved with it, and the call under the new name is
    # answered for the new name (declined by the old daemon, which then exits).
    pid = status(running)["pid"]
    assert isinstance(pid, int)
    moved = running.with_name(running.name + "-moved")
    running.rename(moved)
    proc = sleuth(moved, "search", "list_users", "--json", "--no-ignore")
    assert search_paths(proc) == [("src/users.py", 5)]
    wait_for(lambda: not Path(f"/proc/{pid}").exists() or _zombie(pid), "the old daemon to exit")
    sleuth(moved, "daemon", "stop")


def test_an_outside_edit_is_seen_by_the_next_call(running: Path) -> None:
    for i in range(15):
        token = f"fresh_token_{i}_zq"
        (running / "src" / f"new{i}.py").write_text(f"{token} = {i}\n")
        proc = sleuth(running, "search", token, "--json")
        assert search_paths(proc) == [(f"src/new{i}.py", 1)], i
        (running / "src" / "users.py").write_text(f"def get_user(uid):\n    return {i}\n")
        text = sleuth(running, "search", f"return {i}", "--json")
        assert search_paths(text) == [("src/users.py", 2)], i
    assert calls(running) >= 30


def test_an_edit_through_the_daemon_refuses_a_changed_file(running: Path) -> None:
    found = json.loads(sleuth(running, "search", "list_users", "--json").stdout)
    ref = found["matches"][0]["ref"]["match"]
    changed = "def get_user(uid):\n    return None\n\n\ndef list_users():\n    return []\n"
    (running / "src" / "users.py").write_text(changed)
    proc = sleuth(running, "replace", ref, "--text", "all_users", "--json")
    assert proc.returncode == 3, proc.stderr
    assert json.loads(proc.stdout)["error"]["code"] == "stale_reference"
    assert (running / "src" / "users.py").read_text() == changed


@pytest.mark.parametrize("point", ["before-manifest", "after-manifest", "after-commit"])
def test_killing_the_daemon_in_an_edit_leaves_old_or_new_and_the_next_call_recovers(
    running: Path, point: str
) -> None:
    users = running / "src" / "users.py"
    old = users.read_bytes()
    found = json.loads(sleuth(running, "search", "get_user", "--json").stdout)
    ref = found["result"] + ":all:match"
    proc = sleuth(running, "replace", ref, "--text", "fetch_user", env={"SLEUTH_CRASH_AT": point})
    assert proc.returncode == 1, proc.stderr
    assert b"the sleuth daemon stopped before it answered" in proc.stderr
    new = old.replace(b"get_user", b"fetch_user")
    assert users.read_bytes() in (old, new)
    after = sleuth(running, "search", "get_user", "--json")  # recovery runs first
    assert after.returncode == 0, after.stderr
    now = users.read_bytes()
    assert now in (old, new)
    app = (running / "src" / "app.py").read_bytes()
    assert (now == new) == (b"fetch_user" in app)  # every file old, or every file new


def test_twenty_concurrent_calls_all_answer_correctly(running: Path) -> None:
    results: dict[int, list[tuple[str, int]]] = {}

    def one(i: int) -> None:
        results[i] = search_paths(
            sleuth(running, "search", "get_user", "--json", "--context", str(i))
        )

    threads = [threading.Thread(target=one, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    expected = search_paths(sleuth(running, "search", "get_user", "--json", "--no-daemon"))
    assert len(expected) == 5
    assert results == dict.fromkeys(range(20), expected)


COMMANDS: Sequence[Sequence[str]] = (
    ("search", "get_user"),
    ("search", "get_user", "--json", "--context", "2"),
    ("search", "ast:def $F($$$A): $$$B", "--json"),
    ("search", "files:*.py"),
    ("search", "regex:get_(user|users)", "--limit", "2"),
    ("search", "regex:(unclosed", "--json"),
    ("search", "zq_nothing_zq"),
    # before any read: a read is a use, and a used file's frecency decays by the second, so
    # two find calls a moment apart after one may rank with other 4th decimals
    ("find", "user", "--json"),
    ("read", "src/users.py"),
    ("read", "src/nothing.py", "--json"),
    ("search", "--bogus-option", "x"),
    ("frobnicate",),
    ("search", "--help"),
)


def test_output_and_exit_codes_are_the_same_bytes_with_and_without_the_daemon(
    running: Path,
) -> None:
    for args in COMMANDS:
        here = sleuth(running, *args, "--no-daemon")
        before = calls(running)
        there = sleuth(running, *args)
        assert calls(running) == before + 1, args  # it did go through the daemon
        assert (there.returncode, there.stdout, there.stderr) == (
            here.returncode,
            here.stdout,
            here.stderr,
        ), args


def test_an_edit_reads_its_text_from_the_callers_stdin(running: Path) -> None:
    found = json.loads(sleuth(running, "search", "list_users", "--json").stdout)
    ref = found["matches"][0]["ref"]["match"]
    proc = sleuth(running, "replace", ref, "--json", stdin=b"all_users")
    assert proc.returncode == 0, proc.stderr
    assert "def all_users():" in (running / "src" / "users.py").read_text()


def test_a_deleted_state_folder_makes_the_daemon_exit_without_recreating_it(
    running: Path,
) -> None:
    pid = status(running)["pid"]
    assert isinstance(pid, int)
    subprocess.run(["rm", "-rf", str(running / ".sleuth")], check=True)
    wait_for(lambda: not Path(f"/proc/{pid}").exists() or _zombie(pid), "the daemon to exit")
    assert not (running / ".sleuth").exists()


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()[0] == "Z"
    except OSError:
        return True


def test_an_idle_daemon_exits(root: Path) -> None:
    proc = sleuth(root, "daemon", "start", "--json", env={"SLEUTH_DAEMON_IDLE": "1"})
    assert proc.returncode == 0, proc.stderr
    wait_for(lambda: status(root)["running"] is False, "the idle daemon to exit")


def test_the_thin_client_imports_no_engine(running: Path) -> None:
    probe = (
        "import sys, atexit\n"
        "atexit.register(lambda: print(sorted(m for m in sys.modules if m.startswith('sleuth')),"
        " file=sys.stderr))\n"
        f"sys.argv = ['sleuth', 'search', 'get_user', '--root', {str(running)!r}]\n"
        "from sleuth.client import console\n"
        "console()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, env=daemon_env(), timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert b"src/users.py" in proc.stdout
    loaded = set(eval(proc.stderr.decode().strip().splitlines()[-1]))  # noqa: S307 - our list
    assert loaded <= {
        "sleuth",
        "sleuth.errors",
        "sleuth.client",
        "sleuth.daemon",
        "sleuth.daemon.wire",
    }


def test_a_stranger_gets_nothing(running: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The daemon checks the peer's uid before reading a byte; run its handler on a socket pair
    # whose "peer" it is told is another user.
    from sleuth.cli import main
    from sleuth.daemon.server import Daemon
    from sleuth.service.daemon_settings import DaemonSettings

    daemon = Daemon(str(running), DaemonSettings(), main)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    monkeypatch.setattr(wire, "peer_uid", lambda _sock: os.getuid() + 1)
    wire.send_frame(theirs, wire.encode([wire.MAGIC, b"status"]))
    daemon._handle(ours)
    try:
        answer = theirs.recv(100)
    except ConnectionResetError:
        answer = b""
    assert answer == b""  # closed without an answer
    theirs.close()


REPO = Path(__file__).resolve().parents[2]


def test_the_cli_suites_pass_through_the_daemon(tmp_path: Path) -> None:
    """The CLI and edit end-to-end suites, every call relayed (``SLEUTH_TEST_VIA_DAEMON``);
    run here without it they answer in process, so both ways are tested."""
    base = tmp_path / "suite"
    env = daemon_env({"SLEUTH_TEST_VIA_DAEMON": "1", "SLEUTH_DAEMON_IDLE": "30"})
    suites = ["tests/e2e/test_cli_e2e.py", "tests/e2e/test_edit_e2e.py"]
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider"]
            + ["-q", f"--basetemp={base}", *suites],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
    finally:
        for sock in base.rglob("daemon.sock"):
            sleuth(sock.parent.parent, "daemon", "stop")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "[100%]" in proc.stdout and "F" not in proc.stdout.split("[100%]")[0]
    served = list(base.rglob("daemon.lock"))
    assert len(served) >= 10  # the calls went to daemons, one per workspace


def test_a_second_root_in_argv_is_answered_for_that_root(
    running: Path, make_workspace: MakeWorkspace
) -> None:
    other = make_workspace({"b.py": "def only_in_b():\n    pass\n"})
    # The last --root wins for the client and the parser alike: never the running daemon.
    proc = subprocess.run(
        [sys.executable, "-m", "sleuth", "--root", str(running), "search", "only_in_b"]
        + ["--json", "--root", str(other)],
        capture_output=True,
        env=daemon_env(),
        timeout=120,
    )
    assert search_paths(proc) == [("b.py", 1)]


def _children(pid: int) -> list[str]:
    """The command names of ``pid``'s child processes (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                found.append((entry / "comm").read_text().strip())
        except (OSError, IndexError, ValueError):
            continue
    return found


def test_the_daemon_starts_a_language_server_only_when_a_call_needs_one(running: Path) -> None:
    pid = status(running)["pid"]
    assert isinstance(pid, int)
    assert search_paths(sleuth(running, "search", "list_users", "--json")) == [("src/users.py", 5)]
    time.sleep(1.0)  # a warm-up that started servers would have spawned them by now
    assert _children(pid) == []
    found = sleuth(running, "search", "symbols:list_users", "--json")
    assert found.returncode == 0, found.stderr
    assert [m["path"] for m in json.loads(found.stdout)["matches"]] == ["src/users.py"]
    assert _children(pid) != []  # the server the call started stays up for the next one


@pytest.mark.parametrize("planted", ["daemon.lock", "daemon.sock", "watch-barrier"])
def test_a_planted_symlink_in_the_state_folder_is_never_written_through(
    make_workspace: MakeWorkspace, tmp_path: Path, planted: str
) -> None:
    """Seen: a workspace arriving with ``.sleuth/daemon.lock -> outside`` made any CLI call
    start a daemon that emptied the outside file and wrote its pid there."""
    ws = make_workspace(SAMPLE)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (ws / ".sleuth").mkdir(exist_ok=True)
    os.symlink(victim, ws / ".sleuth" / planted)
    for args in (("daemon", "run"), ("daemon", "start"), ("search", "def")):
        proc = sleuth(ws, *args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert b"invalid_path" in proc.stderr and b"symlink" in proc.stderr
    assert victim.read_text() == "precious\n"
    assert os.path.islink(ws / ".sleuth" / planted)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != ws.name) == ["victim.txt"]


def test_a_connection_that_sends_nothing_neither_keeps_the_daemon_nor_blocks_a_call(
    running: Path,
) -> None:
    """docs/SAFETY.md#the-daemon: a request has REQUEST_S to come in whole; before, one idle
    connection made ``daemon stop`` time out and the daemon live on, holding its lock."""
    pid = status(running)["pid"]
    assert isinstance(pid, int)
    idle = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(40)]
    try:
        for sock in idle:
            sock.connect(str(running / ".sleuth" / "daemon.sock"))
        assert search_paths(sleuth(running, "search", "get_user", "--json"))
        stopped = sleuth(running, "daemon", "stop", "--json")
        assert stopped.returncode == 0, stopped.stdout
        wait_for(lambda: not Path(f"/proc/{pid}").exists() or _zombie(pid), "the daemon to exit")
    finally:
        for sock in idle:
            sock.close()


def test_a_caller_that_does_not_read_its_answer_holds_up_no_other_call(
    make_workspace: MakeWorkspace,
) -> None:
    """A call's output is written to its caller outside the call lock (docs/SAFETY.md#the-
    daemon): before, a pager left open on a big answer made every other call on the root
    wait for it."""
    long_line = "token = '" + "x" * 300 + "'\n"
    ws = make_workspace({f"m{i}.py": long_line * 50 for i in range(20)})
    assert sleuth(ws, "daemon", "start").returncode == 0
    read_end, write_end = os.pipe()
    big = subprocess.Popen(
        [sys.executable, "-m", "sleuth", "search", "token", "--json", "--limit", "500"]
        + ["--max-bytes", "10000000", "--root", str(ws)],
        stdout=write_end,
        stderr=subprocess.DEVNULL,
        env=daemon_env(),
    )
    os.close(write_end)
    try:
        wait_for(lambda: calls(ws) >= 1, "the big call to be run")  # its answer is waiting
        other = subprocess.run(
            [sys.executable, "-m", "sleuth", "search", "token", "--limit", "1", "--json"]
            + ["--root", str(ws)],
            capture_output=True,
            env=daemon_env(),
            timeout=TIMEOUT_S,  # the bound of a call that must not hang, not a measure
        )
        assert other.returncode == 0 and len(json.loads(other.stdout)["matches"]) == 1
        assert big.poll() is None  # the first caller still has not read its answer
    finally:
        with os.fdopen(read_end, "rb") as reader:
            answer = reader.read()
        big.wait(timeout=TIMEOUT_S)
        sleuth(ws, "daemon", "stop")
    assert len(json.loads(answer)["matches"]) == 500


def test_a_call_frame_the_daemon_cannot_run_as_its_client_is_declined(running: Path) -> None:
    """An unknown stream encoding, a bad environment count: declined (the client answers the
    call itself); before, an unknown encoding killed the handler with a LookupError."""
    root = str(running)
    head = [wire.MAGIC, b"call", root.encode(), root.encode()]
    for codec, count in (([b"no-such-codec", b"strict"], b"0"), ([b"utf-8", b"strict"], b"-3")):
        fields = [*head, *codec, b"utf-8", b"strict", count, b"search", b"get_user"]
        read_end, write_end = os.pipe()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(wire.socket_path(root))
            wire.send_frame(sock, wire.encode(fields), (read_end, write_end, write_end))
            answer = wire.decode(wire.recv_frame(sock)[0])
        os.close(read_end)
        os.close(write_end)
        assert answer[0] == "declined", answer
    assert search_paths(sleuth(running, "search", "get_user", "--json"))
