"""``sleuth daemon start|stop|status|run`` and the automatic start after a call answered in
process (docs/faces.md#the-daemon)."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

from sleuth.daemon import wire
from sleuth.errors import InvalidPath, SleuthError, Timeout, Unsupported
from sleuth.service.daemon_settings import DaemonSettings, daemon_state_dir

if TYPE_CHECKING:
    from sleuth.daemon.server import CliMain
    from sleuth.model import OnProgress

__all__ = ["act", "ask", "autostart", "spawn"]

START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 15.0
_POLL_S = 0.05


def _root(root: str) -> str:
    real = os.path.realpath(root)
    if not os.path.isdir(real):
        raise InvalidPath(f"--root {root} is not a folder", details={"root": root})
    return real


def ask(root: str, kind: str, timeout_s: float = 5.0) -> dict[str, Any] | None:
    """The daemon's status after asking it ``kind`` (``status`` or ``stop``); None when no
    daemon of this user answers at ``root``."""
    try:
        sock = wire.connect(wire.socket_path(root), timeout_s)
    except OSError:
        return None
    try:
        if wire.peer_uid(sock) != os.getuid():
            return None
        wire.send_frame(sock, wire.encode([wire.MAGIC, kind]))
        body, _ = wire.recv_frame(sock)
    except (OSError, ValueError):
        return None
    finally:
        sock.close()
    fields = wire.decode(body)
    if len(fields) != 2 or fields[0] != "status":
        return None
    answer: dict[str, Any] = json.loads(fields[1])
    return answer


def spawn(root: str) -> None:
    """Start a daemon for ``root``, detached: its own session, no terminal, none of our
    streams (a caller reading our stdout to its end must not wait for the daemon)."""
    subprocess.Popen(
        [sys.executable, "-m", "sleuth", "daemon", "run", "--root", root],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=root,
        start_new_session=True,
        close_fds=True,
    )


def autostart(root: str) -> None:
    """After a call answered in process: start the workspace's daemon for the next calls,
    unless it is turned off, or the call left no ``.sleuth/`` (it was refused before the
    workspace opened). Never fails the call that already answered."""
    with contextlib.suppress(SleuthError, OSError):
        real = os.path.realpath(root)
        state = os.lstat(os.path.join(real, wire.STATE_DIR))
        if not stat.S_ISDIR(state.st_mode):  # none, or a symlink: no daemon writes there
            return
        if DaemonSettings.load(real).enabled:
            spawn(real)


def _lock_held(root: str) -> bool:
    try:
        fd = os.open(
            os.path.join(root, wire.STATE_DIR, wire.LOCK_NAME),
            os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC,
        )
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _wait(until: Any, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if until():
            return True
        time.sleep(_POLL_S)
    return bool(until())


def start(root: str, progress: OnProgress | None = None) -> dict[str, Any]:
    real = _root(root)
    status = ask(real, "status")
    if status is not None:
        return status
    if not DaemonSettings.load(real).enabled:
        raise Unsupported(
            "the daemon is turned off for this workspace ([tool.sleuth] daemon = false, or "
            "SLEUTH_NO_DAEMON=1); CLI calls answer in their own process",
            details={"root": real},
        )
    daemon_state_dir(real)  # a state folder it could not use: said now, not after a timeout
    if not _lock_held(real):
        spawn(real)
    if progress is not None:
        progress("starting the daemon", 0, 0)
    found: list[dict[str, Any]] = []

    def up() -> bool:
        answer = ask(real, "status")
        if answer is not None:
            found.append(answer)
        return answer is not None

    if not _wait(up, START_TIMEOUT_S):
        raise Timeout(
            f"the daemon for {real} did not answer within {START_TIMEOUT_S:.0f} s",
            details={"root": real},
        )
    return found[-1]


def stop(root: str) -> dict[str, Any]:
    real = _root(root)
    status = ask(real, "stop")
    if status is None:
        return {"running": False, "root": real}
    if not _wait(lambda: not _lock_held(real), STOP_TIMEOUT_S):
        raise Timeout(
            f"the daemon for {real} (pid {status.get('pid')}) did not stop within "
            f"{STOP_TIMEOUT_S:.0f} s; `kill {status.get('pid')}` stops it",
            details={"root": real, "pid": status.get("pid")},
        )
    return {"running": False, "root": real, "stopped_pid": status.get("pid")}


def act(
    action: str, root: str, cli_main: CliMain, progress: OnProgress | None = None
) -> dict[str, Any]:
    """The JSON answer of ``sleuth daemon ACTION`` (``run`` serves here until it ends, each
    call run by ``cli_main``; ``start`` reports its wait to ``progress``)."""
    if action == "start":
        return start(root, progress)
    if action == "stop":
        return stop(root)
    if action == "status":
        real = _root(root)
        return ask(real, "status") or {"running": False, "root": real}
    from sleuth.daemon.server import run

    run(_root(root), cli_main)
    return {"running": False, "root": os.path.realpath(root)}
