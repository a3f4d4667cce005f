"""Thin-client benchmark: what a relayed CLI call costs before the daemon does any work.

The target (docs/faces.md#the-daemon): the client's own start-up <= 40 ms. Measured as the wall
time of ``sleuth search get_user --root TREE`` against a stub daemon that answers every call at
once with exit code 0 (it speaks the real wire protocol, ``sleuth.daemon.wire``, on the real
socket path), beside the interpreter's floor (``python -c pass``, same interpreter) and, for
scale, the same call relayed to a real daemon on a small tree. Medians and minimums over
``--runs`` fresh processes after one warm-up each, interleaved.

Usage::

    python -m benchmarks.daemon_client --runs 30
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.tools import find_tool

TARGET_MS = 40.0


def _stub(root: Path, stop: threading.Event) -> threading.Thread:
    from sleuth.daemon import wire

    path = wire.socket_path(str(root))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    listener.settimeout(0.2)

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                _body, fds = wire.recv_frame(conn, max_fds=3)
                for fd in fds:
                    os.close(fd)
                conn.sendall(wire.encode(["exit", "0"]))
        listener.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread


def _time(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args(argv)
    sleuth = find_tool("sleuth")
    env = {k: v for k, v in os.environ.items() if k != "SLEUTH_NO_DAEMON"}
    with tempfile.TemporaryDirectory() as tmp:
        stub_root, real_root = Path(tmp, "stub"), Path(tmp, "real")
        for root in (stub_root, real_root):
            (root / "src").mkdir(parents=True)
            (root / "src" / "a.py").write_text("def get_user(uid):\n    return uid\n")
        stop = threading.Event()
        _stub(stub_root, stop)
        subprocess.run([sleuth, "daemon", "start", "--root", str(real_root)], check=True, env=env)
        time.sleep(2.0)
        rows = {
            "python -c pass (floor)": [sys.executable, "-c", "pass"],
            "thin client, stub daemon": [sleuth, "search", "get_user", "--root", str(stub_root)],
            "relayed call, real daemon": [sleuth, "search", "get_user", "--root", str(real_root)],
        }
        times: dict[str, list[float]] = {name: [] for name in rows}
        try:
            for run in range(args.runs + 1):
                for name, cmd in rows.items():
                    if name.startswith("relayed"):
                        cmd = [*cmd, "--context", str(run % 21)]  # a fresh search each call
                    dt = _time(cmd, env)
                    if run:
                        times[name].append(dt)
        finally:
            stop.set()
            subprocess.run([sleuth, "daemon", "stop", "--root", str(real_root)], env=env)
    print(f"runs: {args.runs}; loadavg {os.getloadavg()[0]:.2f}; {os.cpu_count()} CPUs")
    print("| what | median | min | target |")
    print("|---|---|---|---|")
    for name, series in times.items():
        med, low = statistics.median(series) * 1000, min(series) * 1000
        target = ""
        if name.startswith("thin"):
            target = f"<= {TARGET_MS:.0f} ms " + ("ok" if med <= TARGET_MS else "MISS")
        print(f"| {name} | {med:.1f} ms | {low:.1f} ms | {target} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
