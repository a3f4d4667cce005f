"""What the thin client and the daemon share: where the socket is, and how a call is framed.

Imports the standard library's C modules only: the thin client pays for every import before
it can relay a call (``socket`` alone loads ``enum`` and ``selectors``, ~10 ms).

One connection carries one call. The client sends a frame and, with its first byte, its
stdin, stdout and stderr as file descriptors (``SCM_RIGHTS``), so the daemon writes where the
client would have: a terminal stays a terminal and a closed pipe stays closed. The daemon
answers with one frame. A frame is a 4-byte big-endian length, then fields joined by NUL bytes
(argv and the environment cannot hold NUL; text is ``os.fsencode``d, so any argv byte round
trips). Request fields: ``MAGIC``, the kind (``call``, ``status``, ``stop``), then for a call
the root the client resolved, its cwd, the encodings and error handlers of its stdout and
stderr, the count of environment entries, the entries (``K=V``) and argv. Answer fields: the
kind (``exit``, ``declined``, ``status``) and its value; a call taken is first answered
``running`` (before it does anything), so a client whose connection drops before that frame
knows the call was not run and answers it itself.
"""

from __future__ import annotations

import _socket
import os
import sys
import time

TYPE_CHECKING = False  # not typing's: the thin client does without that import
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "MAGIC",
    "SOCKET_NAME",
    "LOCK_NAME",
    "STATE_DIR",
    "socket_path",
    "connect",
    "short_address",
    "send_frame",
    "recv_frame",
    "peer_uid",
    "encode",
    "decode",
]

MAGIC = b"sleuth-daemon-1"
STATE_DIR = ".sleuth"
SOCKET_NAME = "daemon.sock"
LOCK_NAME = "daemon.lock"
MAX_FRAME = 8 * 1024 * 1024
"""argv plus the environment are bounded by the OS (ARG_MAX, 2 MiB on Linux); more is not ours."""
_SUN_PATH = 100
"""sun_path holds 108 bytes; a longer socket path is reached through /proc/self/fd."""
_INT = 4
_UCRED = 12  # struct ucred: pid, uid, gid


def socket_path(root: str) -> str:
    return os.path.join(root, STATE_DIR, SOCKET_NAME)


def short_address(path: str) -> tuple[str, int | None]:
    """``path`` itself when it fits in ``sun_path``, else the same file through an open
    descriptor of its folder (``/proc/self/fd/N/NAME``); the descriptor is the caller's to
    close."""
    if len(os.fsencode(path)) <= _SUN_PATH:
        return path, None
    folder, name = os.path.split(path)
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    return f"/proc/self/fd/{fd}/{name}", fd


def connect(path: str, timeout_s: float) -> _socket.socket:
    """A connected socket to the daemon at ``path``; raises ``OSError`` when none listens."""
    address, fd = short_address(path)
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout_s)
        sock.connect(address)
    except BaseException:
        sock.close()
        raise
    finally:
        if fd is not None:
            os.close(fd)
    return sock


def peer_uid(sock: _socket.socket) -> int:
    """The user id of the process at the other end (``SO_PEERCRED``)."""
    cred = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, _UCRED)
    return int.from_bytes(cred[_INT : 2 * _INT], sys.byteorder)


def encode(fields: Sequence[str | bytes]) -> bytes:
    body = b"\0".join(f if isinstance(f, bytes) else os.fsencode(f) for f in fields)
    return len(body).to_bytes(_INT, "big") + body


def decode(body: bytes) -> list[str]:
    return [os.fsdecode(f) for f in body.split(b"\0")]


def send_frame(sock: _socket.socket, frame: bytes, fds: Sequence[int] = ()) -> None:
    """Send ``frame``, the descriptors ``fds`` riding on its first bytes."""
    if fds:
        rights = b"".join(fd.to_bytes(_INT, sys.byteorder, signed=True) for fd in fds)
        sent = sock.sendmsg([frame], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, rights)])
        frame = frame[sent:]
    if frame:
        sock.sendall(frame)


def recv_frame(
    sock: _socket.socket, max_fds: int = 0, deadline: float | None = None
) -> tuple[bytes, list[int]]:
    """One frame's body and the descriptors that came with it; ``ConnectionError`` when the
    peer closed before a whole frame, ``ValueError`` for a frame over ``MAX_FRAME``,
    ``TimeoutError`` when the whole frame is not in by ``deadline`` (``time.monotonic``; a
    peer sending a byte a minute is not waited on per byte).

    Reads exactly one frame, never into the next: the daemon's ``running`` and ``exit``
    frames may arrive in one segment, and bytes read past a frame would be lost with it."""
    fds: list[int] = []
    space = _socket.CMSG_SPACE(max_fds * _INT) if max_fds else 0
    _wait_until(sock, deadline)
    data, ancillary, _flags, _addr = sock.recvmsg(_INT, space)
    for level, kind, payload in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            usable = len(payload) - len(payload) % _INT
            fds.extend(
                int.from_bytes(payload[i : i + _INT], sys.byteorder, signed=True)
                for i in range(0, usable, _INT)
            )
    try:
        data += _recv_exactly(sock, _INT - len(data), deadline)
        size = int.from_bytes(data, "big")
        if size > MAX_FRAME:
            raise ValueError(f"frame of {size} bytes is over {MAX_FRAME}")
        body = _recv_exactly(sock, size, deadline)
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    return body, fds


def _wait_until(sock: _socket.socket, deadline: float | None) -> None:
    if deadline is not None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the whole frame did not come in time")
        sock.settimeout(left)


def _recv_exactly(sock: _socket.socket, size: int, deadline: float | None = None) -> bytes:
    chunks: list[bytes] = []
    while size > 0:
        _wait_until(sock, deadline)
        chunk = sock.recv(min(size, 64 * 1024))
        if not chunk:
            raise ConnectionError("the other end closed the connection before a whole frame")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)
