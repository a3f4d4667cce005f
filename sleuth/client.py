"""The ``sleuth`` console script: hand the call to the workspace's daemon, else answer it here
and start one for the next calls (docs/faces.md#the-daemon).

It imports ``sleuth.daemon.wire`` only (the standard library's C modules) until it knows no
daemon will answer, so a relayed call costs the interpreter's start and one round trip. The
daemon gets this process's stdin, stdout and stderr, environment and folder and runs the very
``sleuth.cli.main``; the exit code comes back. Not relayed: ``mcp`` and ``daemon`` (they are
processes of their own), ``--no-daemon``, and ``SLEUTH_NO_DAEMON=1``. A daemon that is not
this user's is never handed the streams.
"""

from __future__ import annotations

import os
import sys

from sleuth.daemon import wire

TYPE_CHECKING = False  # not typing's: the thin client does without that import
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["console", "relay", "plan"]

_LOCAL_VERBS = ("mcp", "daemon")
_NO_DAEMON = "--no-daemon"
_CONNECT_S = 2.0


def plan(argv: Sequence[str]) -> tuple[str, str]:
    """(verb, root) as argv names them, without the parser: the verb is the first word that
    is not an option (``--root DIR`` may come before or after it), the root defaults to ``.``."""
    verb, root, take_root = "", ".", False
    for word in argv:
        if take_root:
            root, take_root = word, False
        elif word == "--":
            break
        elif word == "--root":
            take_root = True
        elif word.startswith("--root="):
            root = word[len("--root=") :]
        elif not verb and not word.startswith("-"):
            verb = word
    return verb, root


def _relayable(argv: Sequence[str], verb: str) -> bool:
    if verb in _LOCAL_VERBS or _NO_DAEMON in argv:
        return False
    return os.environ.get("SLEUTH_NO_DAEMON", "") in ("", "0")


def _environment() -> list[str]:
    env = dict(os.environ)
    if "COLUMNS" not in env:
        try:  # argparse and rich size to the terminal; the daemon has none
            size = os.get_terminal_size(sys.stdout.fileno())
        except (OSError, ValueError):
            size = os.terminal_size((0, 0))
        if size.columns > 0 and size.lines > 0:  # a 0x0 terminal means "unknown", as here
            env["COLUMNS"], env["LINES"] = str(size.columns), str(size.lines)
    return [f"{k}={v}" for k, v in env.items()]


def relay(argv: Sequence[str], root: str) -> int | None:
    """The exit code of the call as the daemon ran it; None when no daemon took it (none
    runs, it is another user's, or it declined), and the call is to be answered here."""
    try:
        sock = wire.connect(wire.socket_path(root), _CONNECT_S)
    except OSError:
        return None
    try:
        if wire.peer_uid(sock) != os.getuid():
            return None
        env = _environment()
        fields = [
            wire.MAGIC,
            b"call",
            os.path.realpath(root),
            os.getcwd(),
            sys.stdout.encoding or "utf-8",
            sys.stdout.errors or "strict",
            sys.stderr.encoding or "utf-8",
            sys.stderr.errors or "strict",
            str(len(env)),
            *env,
            *argv,
        ]
        sock.settimeout(None)  # a call may take as long as it takes, as it would here
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        wire.send_frame(sock, wire.encode(fields), (0, 1, 2))
        try:
            answer = wire.decode(wire.recv_frame(sock)[0])
        except (OSError, ValueError):
            return None  # not taken (a daemon on its way out): nothing was run, answer here
        if answer == ["running"]:
            try:
                answer = wire.decode(wire.recv_frame(sock)[0])
            except (OSError, ValueError):
                return _lost(argv)
    except OSError:
        return None  # nothing was handed over: answer here
    finally:
        sock.close()
    if len(answer) == 2 and answer[0] == "exit" and answer[1].lstrip("-").isdigit():
        return int(answer[1])
    return None


def _lost(argv: Sequence[str]) -> int:
    """The daemon went away in the middle of the call (killed): say so rather than answer
    again, since an edit may have been made (whole or not at all, docs/SAFETY.md)."""
    from sleuth.cli import report_error
    from sleuth.errors import Internal

    error = Internal(
        "the sleuth daemon stopped before it answered; an edit it was making is either "
        "whole or not made (the next call finishes or undoes it): check, then run the "
        "command again",
        details={"daemon": "lost"},
    )
    return report_error(error, as_json="--json" in argv, stdout=sys.stdout, stderr=sys.stderr)


def console() -> None:
    argv = sys.argv[1:]
    verb, root = plan(argv)
    relayable = _relayable(argv, verb)
    if relayable:
        code = relay(argv, root)
        if code is not None:
            for stream in (sys.stdout, sys.stderr):
                try:  # noqa: SIM105 - contextlib is an import the thin client does without
                    stream.flush()
                except (BrokenPipeError, ValueError):
                    pass
            raise SystemExit(code)
    from sleuth import cli

    if not relayable:
        cli.console()
    from sleuth.daemon.control import autostart

    cli.console(after=lambda: autostart(root))
