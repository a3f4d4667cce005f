"""``sleuth mcp`` start-up (docs/faces.md#mcp-server): ``initialize`` answered before the SDK loads.

Importing the MCP SDK takes most of a second (its protocol models are built at import), and
the engine another fifth; a client waits for all of it before its ``initialize`` is answered.
So the server's first answer is the SDK's own, remembered: the first time a client's
``initialize`` is answered (by the SDK, as always), the answer is kept in the user's cache
(``$XDG_CACHE_HOME/sleuth/mcp-initialize.json``), keyed by what shapes it: the request's
parameters but the client's name, and the size and modification time of the SDK's packages and
of ``sleuth/mcp.py`` (which holds the instructions). The next start reads the first line itself, and when it is an
``initialize`` with a kept answer, writes that answer at once (with the request's id) while the
SDK and the engine load on another thread. The SDK is then handed the same ``initialize`` line
first, so its session is initialised as with any client, and its own answer to it is dropped
(``EarlyAnswer``): the client sees exactly one answer, byte for byte the SDK's.

Anything else — another first message, a cache miss, an unreadable cache, a root that is not a
folder (whose error the engine reports, with its exit code, before serving) — takes the SDK's
path unchanged. This module imports no SDK and no engine.
"""

from __future__ import annotations

import contextlib
import faulthandler
import hashlib
import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

__all__ = [
    "serve",
    "claim_stdio",
    "EarlyAnswer",
    "initialize_key",
    "cache_file",
    "MAX_MESSAGE_BYTES",
]

MAX_MESSAGE_BYTES = 128 * 1024 * 1024
"""Longest JSON-RPC line read: room for the largest edit text (16 Mi characters) escaped."""
CACHE_NAME = "mcp-initialize.json"
MAX_KEPT = 32
"""Answers kept (one per distinct initialize a client sends); the oldest go first."""


def cache_file() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "sleuth" / CACHE_NAME


def _stamp() -> str:
    """What changes when this installation's answer to ``initialize`` may change: the server
    module (instructions, capabilities) and the SDK's packages, by size and modification time
    (``find_spec`` locates them without importing them)."""
    from importlib.util import find_spec

    parts = []
    for name in ("mcp", "mcp_types"):
        spec = find_spec(name)
        parts.append(spec.origin if spec is not None and spec.origin else name)
    parts.append(str(Path(__file__).with_name("mcp.py")))
    stamps = []
    for part in parts:
        info = os.stat(part)
        stamps.append(f"{part}:{info.st_size}:{info.st_mtime_ns}")
    return ";".join(stamps)


def initialize_key(message: Any) -> str | None:
    """The cache key of an ``initialize`` request, None for any other message."""
    if not isinstance(message, dict) or message.get("method") != "initialize":
        return None
    rid = message.get("id")
    params = message.get("params")
    if isinstance(rid, bool) or not isinstance(rid, (str, int)) or not isinstance(params, dict):
        return None
    shaping = {k: v for k, v in params.items() if k != "clientInfo"}
    try:
        stamp = _stamp()
    except OSError:
        return None
    text = json.dumps([stamp, message.get("jsonrpc"), shaping], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _read_cache() -> dict[str, Any]:
    try:
        kept = json.loads(cache_file().read_text())
    except (OSError, ValueError):
        return {}
    return kept if isinstance(kept, dict) else {}


def _write_cache(key: str, result: Any) -> None:
    """Keep ``result`` for ``key``; a cache that cannot be written is only slower next time."""
    kept = _read_cache()
    kept.pop(key, None)
    kept[key] = result
    kept = dict(list(kept.items())[-MAX_KEPT:])
    path = cache_file()
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(kept))
        os.replace(tmp, path)


@dataclass
class EarlyAnswer:
    """The first line a client sent, and what became of its ``initialize``: ``answered`` when
    it was answered from the cache (the SDK's answer is then dropped), else the SDK's answer is
    kept for next time (``seen``)."""

    first: bytes
    key: str | None = None
    request_id: str | int | None = None
    answered: bool = False

    def filter(self, line: str) -> bool:
        """Whether the SDK's outgoing ``line`` is written (False: the client has it already)."""
        if self.key is None:
            return True
        try:
            message = json.loads(line)
        except ValueError:
            return True
        if not isinstance(message, dict) or message.get("id") != self.request_id:
            return True
        if "method" in message or "result" not in message:
            return True
        key, self.key = self.key, None  # only the initialize answer, once
        if not self.answered:
            _write_cache(key, message["result"])
        return not self.answered


def _early(first: bytes, wire_out: BinaryIO) -> EarlyAnswer:
    """Answer ``first`` now when it is an ``initialize`` whose answer is kept."""
    early = EarlyAnswer(first)
    try:
        message = json.loads(first)
    except ValueError:
        return early
    key = initialize_key(message)
    if key is None:
        return early
    early.key, early.request_id = key, message["id"]
    result = _read_cache().get(key)
    if isinstance(result, dict):
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        wire_out.write(json.dumps(answer, separators=(",", ":")).encode() + b"\n")
        wire_out.flush()
        early.answered = True
    return early


@contextlib.contextmanager
def claim_stdio() -> Iterator[tuple[BinaryIO, BinaryIO]]:
    """The protocol's own copies of fd 0 and 1; while serving, fd 0 reads the null device and
    fd 1 goes to stderr, so a stray print or child process never corrupts the stream (as the
    SDK's own stdio transport does). Both are put back on exit."""
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    # closefd=False: a worker thread may still be blocked reading the copy when serving ends
    fin = os.fdopen(wire_in, "rb", closefd=False)
    fout = os.fdopen(wire_out, "wb", closefd=False)
    try:
        yield fin, fout
    finally:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)


Load = Callable[[str, bool], tuple[Any, Any]]
"""Makes ``(engine, server)`` for ``(root, no_ignore)``: ``sleuth.mcp.load_server``, which the
command line passes in (this module never imports the SDK's side)."""


class _Loading:
    """The SDK, the engine and the server, made on another thread while the first line is
    read and maybe answered."""

    def __init__(self, load: Load, root: str, no_ignore: bool) -> None:
        self._load_server, self._root, self._no_ignore = load, root, no_ignore
        self._made: tuple[Any, Any] | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._load, name="sleuth-mcp-load", daemon=True)
        self._thread.start()

    def _load(self) -> None:
        try:
            self._made = self._load_server(self._root, self._no_ignore)
        except BaseException as exc:  # re-raised on the main thread
            self._error = exc

    def wait(self) -> tuple[Any, Any]:
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._made is not None
        return self._made


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def serve(
    root: str, *, no_ignore: bool, load: Load, serve_slowly: Callable[[str, bool], None]
) -> None:
    """``sleuth mcp``: serve over stdio until the client hangs up (engine errors propagate)."""
    if not os.path.isdir(root):  # the engine says what is wrong, with its exit code
        serve_slowly(root, no_ignore)
        return
    # SIGUSR1 prints every thread's stack on stderr: a server that does not stop can say
    # where it waits (the Ctrl-C test asks for it before it gives up)
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not when ignored
        # Ctrl-C raises in the main thread, as before Python 3.11: asyncio's own handler only
        # cancels the main task, and a cancellation landing while the SDK's task group handles
        # one of its own was absorbed, the server serving on (seen in CI: stuck in select)
        signal.signal(signal.SIGINT, _interrupt)
    loading = _Loading(load, root, no_ignore)
    with claim_stdio() as (wire_in, wire_out):
        first = wire_in.readline(MAX_MESSAGE_BYTES + 1)
        early = _early(first, wire_out) if first else EarlyAnswer(first)
        engine, server = loading.wait()
        try:
            server.serve_wire(wire_in, wire_out, early)
        except KeyboardInterrupt:
            pass
        finally:
            engine.close()
