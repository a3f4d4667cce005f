"""The daemon: one workspace's resident engine, answering CLI calls over a Unix socket
(docs/faces.md#the-daemon).

It holds what a long-running face holds (a ``Workbench`` with the watched listing, the trigram
index, parse trees, the graph and the language servers; one per ``--no-ignore`` value) and runs
each call through the very ``sleuth.cli.main`` a one-shot call runs, with the client's stdin,
stdout, stderr, environment and working folder, so the output, the exit code and ``--json`` are
the same bytes. Calls run one at a time: a call swaps the process's standard streams, its
environment and its folder, and the workbench has one writer.

One daemon per root: it holds an exclusive ``flock`` on ``.sleuth/daemon.lock`` for its life
(the kernel drops it when the process dies, so a socket left by a killed daemon is replaced by
the next). The socket is created with mode 0600 and every connection's peer uid is checked. A
call names the root its client resolved; any other root is declined. Before each call the
watcher is caught up (``Workbench.catch_up``), so an outside edit made before the call is seen.
It exits after ``idle_s`` without calls, on ``stop`` or SIGTERM, and as soon as its socket is no
longer the file it bound (``.sleuth/`` deleted or another daemon took over), never re-creating
what was deleted.
"""

from __future__ import annotations

import codecs
import contextlib
import fcntl
import json
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TextIO

from sleuth.daemon import wire
from sleuth.daemon.streams import Streams
from sleuth.service.daemon_settings import DaemonSettings, daemon_state_dir

__all__ = ["Daemon", "run", "CliMain"]

CliMain = Callable[..., int]
"""``sleuth.cli.main``: handed in by the CLI that starts the daemon (a face above this one)."""

_Codec = tuple[str, str]
_TICK_S = 0.5
"""How often the accept loop looks at the idle time and at its socket."""
REQUEST_S = 10.0
"""How long a connection has to send its whole request: one that connects and sends nothing,
or a byte a minute, is closed then, never kept (and waited on when the daemon stops) for
ever (docs/SAFETY.md#the-daemon). The thin client sends its frame at once."""
MAX_WAITING = 32
"""Connections at most waiting for their request at once; one more is closed at once (its
client answers in its own process), so idle connections cannot take threads and descriptors
without bound."""


class _Kept:
    """A held workbench as a call's engine: ``cli.execute`` closes its engine after the verb;
    this one stays for the next call."""

    def __init__(self, bench: Any) -> None:
        self._bench = bench

    def __getattr__(self, name: str) -> Any:
        return getattr(self._bench, name)

    def close(self) -> None:
        """Kept open: the daemon closes its workbenches when it exits."""


class Daemon:
    """Serves one root until idle, stopped, or displaced."""

    def __init__(self, root: str, settings: DaemonSettings, cli_main: CliMain) -> None:
        self.root = os.path.realpath(root)
        self.settings = settings
        self._cli_main = cli_main
        self._call_lock = threading.Lock()
        self._count_lock = threading.Lock()
        self._stop = threading.Event()
        self._benches: dict[bool, Any] = {}
        self._last_call = time.monotonic()
        self._started = time.time()
        self._calls = 0
        self._busy = 0
        self._ino: tuple[int, int] | None = None
        self._sock_path = wire.socket_path(self.root)
        self._handlers: list[threading.Thread] = []
        self._waiting = threading.BoundedSemaphore(MAX_WAITING)

    # -- life ------------------------------------------------------------------------------

    def serve(self) -> int:
        """Hold the lock, bind, answer until told to go; 0 also when another daemon runs."""
        state = daemon_state_dir(self.root)  # never through a symlink (docs/SAFETY.md)
        lock_fd = os.open(
            os.path.join(state, wire.LOCK_NAME),
            os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
        )
        try:
            try:
                fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return 0  # one daemon per root: the other one answers
            os.ftruncate(lock_fd, 0)
            os.write(lock_fd, f"{os.getpid()}\n".encode())
            listener = self._bind()
            try:
                self._warm()
                self._accept_loop(listener)
            finally:
                listener.close()  # a caller not accepted yet is refused, and answers itself
                for handler in self._handlers:
                    handler.join()  # a call under way finishes and says so before we go
                if self._still_ours():
                    with contextlib.suppress(OSError):
                        os.unlink(self._sock_path)
                self._close_benches()
        finally:
            os.close(lock_fd)
        return 0

    def stop(self) -> None:
        self._stop.set()

    def _bind(self) -> socket.socket:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._sock_path)  # a killed daemon's: we hold the lock, so it is stale
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        address, fd = wire.short_address(self._sock_path)
        old = os.umask(0o177)  # born 0600: no moment where another user could connect
        try:
            listener.bind(address)
        finally:
            os.umask(old)
            if fd is not None:
                os.close(fd)
        listener.listen(64)
        listener.settimeout(_TICK_S)
        st = os.stat(self._sock_path)
        self._ino = (st.st_dev, st.st_ino)
        return listener

    def _still_ours(self) -> bool:
        try:
            st = os.stat(self._sock_path)
        except OSError:
            return False
        return (st.st_dev, st.st_ino) == self._ino

    def _warm(self) -> None:
        """Start the default workbench now (listing, watcher, index) in the background, so the
        first relayed call finds it warm. Not its language servers: any CLI call starts a
        daemon, and clangd or tsc indexing a tree (tsc even installing type packages) for
        minutes beside a user who only greps is CPU taken from them (docs/faces.md#the-daemon);
        the first call that needs a server starts it, and it stays up for the next ones."""

        def warm() -> None:
            with self._call_lock, contextlib.suppress(Exception):
                self._bench(False)

        threading.Thread(target=warm, name="sleuth-daemon-warm", daemon=True).start()

    def _accept_loop(self, listener: socket.socket) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                conn = None
            except OSError:
                return
            if conn is not None and not self._waiting.acquire(blocking=False):
                conn.close()  # too many waiting: that client answers the call itself
                conn = None
            if conn is not None:
                handler = threading.Thread(
                    target=self._handle,
                    args=(conn, self._waiting.release),
                    name="sleuth-daemon-call",
                    daemon=True,
                )
                self._handlers = [t for t in self._handlers if t.is_alive()] + [handler]
                handler.start()
            if not self._still_ours() or not os.path.isdir(self.root):
                return  # .sleuth/ deleted, or displaced: go without touching anything
            idle = time.monotonic() - self._last_call
            if self._busy == 0 and idle >= self.settings.idle_s:
                return

    def _close_benches(self) -> None:
        if not os.path.isdir(os.path.join(self.root, wire.STATE_DIR)):
            return  # closing saves state; what was deleted stays deleted (the OS reaps the rest)
        for bench in self._benches.values():
            with contextlib.suppress(Exception):
                bench.close()

    def _bench(self, no_ignore: bool) -> Any:
        bench = self._benches.get(no_ignore)
        if bench is None:
            from sleuth.api import Workbench

            bench = Workbench(self.root, no_ignore=no_ignore, watch=True)
            self._benches[no_ignore] = bench
        return bench

    # -- one connection -------------------------------------------------------------------

    def _handle(self, conn: socket.socket, received: Callable[[], None] = lambda: None) -> None:
        """Answer one connection; ``received`` is called once, when it no longer waits for
        its request (it came, or will not)."""
        fds: list[int] = []
        waiting = True
        try:
            if wire.peer_uid(conn) != os.getuid():
                return  # another user's process: nothing for it here
            deadline = time.monotonic() + REQUEST_S
            body, fds = wire.recv_frame(conn, max_fds=3, deadline=deadline)
            conn.settimeout(None)  # the request is in: the call takes as long as it takes
            waiting = False
            received()
            fields = wire.decode(body)
            if fields[:1] != [os.fsdecode(wire.MAGIC)] or len(fields) < 2:
                conn.sendall(wire.encode(["declined", "unknown protocol"]))
                return
            kind = fields[1]
            if kind == "status":
                conn.sendall(wire.encode(["status", json.dumps(self.status())]))
            elif kind == "stop":
                self.stop()
                conn.sendall(wire.encode(["status", json.dumps(self.status())]))
            elif kind == "call" and len(fds) == 3:
                call, fds = fds, []  # the call owns them now and closes them
                answer = self._call(
                    fields[2:], call, lambda: conn.sendall(wire.encode(["running"]))
                )
                conn.sendall(wire.encode(answer))
            else:
                conn.sendall(wire.encode(["declined", f"unknown request {kind!r}"]))
        except (OSError, ValueError, ConnectionError):
            pass  # the client went away; nothing it could still read
        finally:
            if waiting:
                received()
            for fd in fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
            conn.close()

    def status(self) -> dict[str, Any]:
        return {
            "running": True,
            "root": self.root,
            "pid": os.getpid(),
            "uptime_s": round(time.time() - self._started, 1),
            "calls": self._calls,
            "idle_exit_s": self.settings.idle_s,
        }

    def _call(self, fields: list[str], fds: list[int], running: Callable[[], None]) -> list[str]:
        """Run one call; ``running`` tells the client, before anything is done, that it is
        taken (until then a lost connection means the call was not run at all)."""
        request = _request(fields)
        if isinstance(request, str):
            for fd in fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
            return ["declined", request]
        root, cwd, out, err, env, argv = request
        streams = Streams(fds, out, err)
        with self._count_lock:
            self._busy += 1
        try:
            with self._call_lock:
                if os.path.realpath(root) != self.root:
                    return ["declined", f"this daemon serves {self.root}"]
                if not os.path.isdir(cwd):
                    return ["declined", "the caller's folder is gone"]
                if not self.settings.reload(self.root).enabled:
                    self.stop()
                    return ["declined", "[tool.sleuth] daemon = false"]
                running()
                with _as_client(cwd, env, streams):
                    code = self._run_cli(argv)
                self._calls += 1
            streams.replay()  # outside the lock: a caller slow to read holds up only itself
            return ["exit", str(code)]
        finally:
            streams.close()
            with self._count_lock:
                self._busy -= 1
                self._last_call = time.monotonic()

    def _run_cli(self, argv: Sequence[str]) -> int:
        def engine(root: str, no_ignore: bool) -> Any:
            if os.path.realpath(root) != self.root:
                # argv named another root than the client saw (``--root`` twice): answer it
                # as a one-shot call would, never from this root's engine
                from sleuth.api import Workbench

                return Workbench(root, no_ignore=no_ignore, build_index=False, one_shot=True)
            bench = self._bench(no_ignore)
            bench.catch_up()
            return _Kept(bench)

        try:
            return self._cli_main(argv, engine_factory=engine)
        except SystemExit as exc:  # argparse's --help
            return exc.code if isinstance(exc.code, int) else 0


def _request(fields: list[str]) -> tuple[str, str, _Codec, _Codec, dict[str, str], list[str]] | str:
    """A call's fields (root, cwd, stdout's and stderr's codecs, environment, argv), or why
    they are not a call this daemon can run as its client would: the client then answers
    it in its own process (docs/SAFETY.md#the-daemon)."""
    if len(fields) < 7 or not fields[6].isdigit() or 7 + int(fields[6]) > len(fields):
        return "malformed call"
    root, cwd, out_enc, out_errors, err_enc, err_errors, count = fields[:7]
    try:
        for enc, errors in ((out_enc, out_errors), (err_enc, err_errors)):
            codecs.lookup(enc)
            codecs.lookup_error(errors)
    except LookupError as exc:
        return f"unknown stream encoding: {exc}"
    env_end = 7 + int(count)
    env = dict(e.split("=", 1) for e in fields[7:env_end] if "=" in e)
    return root, cwd, (out_enc, out_errors), (err_enc, err_errors), env, fields[env_end:]


@contextlib.contextmanager
def _as_client(cwd: str, env: dict[str, str], streams: Streams) -> Iterator[None]:
    """Run as the client would: its folder, environment and standard streams, put back after."""
    saved_env = dict(os.environ)
    saved: tuple[TextIO, TextIO, TextIO] = (sys.stdin, sys.stdout, sys.stderr)
    here = os.getcwd()
    os.chdir(cwd)
    _replace_env(env)
    sys.stdin, sys.stdout, sys.stderr = streams.stdin, streams.out, streams.err
    try:
        yield
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
        _replace_env(saved_env)
        os.chdir(here)


def _replace_env(env: dict[str, str]) -> None:
    # Key by key: a language server started by another thread meanwhile sees one whole value.
    for key in [k for k in os.environ if k not in env]:
        del os.environ[key]
    for key, value in env.items():
        if os.environ.get(key) != value:
            os.environ[key] = value


def run(root: str, cli_main: CliMain) -> int:
    """``sleuth daemon run``: serve ``root`` in this process until idle or stopped, each call
    run by ``cli_main``."""
    settings = DaemonSettings.load(root)
    if not settings.enabled:
        return 0
    daemon = Daemon(root, settings, cli_main)
    signal.signal(signal.SIGTERM, lambda *_: daemon.stop())
    try:
        return daemon.serve()
    except KeyboardInterrupt:
        return 0
