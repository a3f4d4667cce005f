"""``wire``: a frame reader takes exactly one frame, so two frames that arrive together (the
daemon's ``running`` and ``exit`` after a fast call) are both read, and descriptors ride on
the first."""

from __future__ import annotations

import os
import socket
import threading
import time

import pytest

from sleuth.daemon import wire


def test_two_frames_in_one_segment_are_read_one_by_one() -> None:
    left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with left, right:
        left.sendall(wire.encode(["running"]) + wire.encode(["exit", "2"]))
        left.close()
        assert wire.decode(wire.recv_frame(right)[0]) == ["running"]
        assert wire.decode(wire.recv_frame(right)[0]) == ["exit", "2"]
        with pytest.raises(ConnectionError):
            wire.recv_frame(right)


def test_descriptors_come_with_the_frame_and_a_big_frame_is_whole() -> None:
    left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    read_end, write_end = os.pipe()
    big = "x" * 300_000
    with left, right:
        frames = wire.encode(["call", big]) + wire.encode(["next"])
        sender = threading.Thread(target=wire.send_frame, args=(left, frames, (write_end,)))
        sender.start()  # more than the socket buffer holds: read while it is sent
        body, fds = wire.recv_frame(right, max_fds=3)
        assert wire.decode(body) == ["call", big] and len(fds) == 1
        os.write(fds[0], b"through")
        assert os.read(read_end, 16) == b"through"
        assert wire.decode(wire.recv_frame(right)[0]) == ["next"]
        sender.join()
    for fd in (read_end, write_end, *fds):
        os.close(fd)


def test_a_frame_cut_short_or_oversized_is_refused() -> None:
    left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with left, right:
        left.sendall(wire.encode(["whole"])[:-2])
        left.close()
        with pytest.raises(ConnectionError):
            wire.recv_frame(right)
    left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with left, right:
        left.sendall((wire.MAX_FRAME + 1).to_bytes(4, "big"))
        with pytest.raises(ValueError):
            wire.recv_frame(right)


def test_a_frame_not_in_by_its_deadline_is_given_up() -> None:
    """A peer sending a byte at a time is timed on the whole frame, not per byte."""
    left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    frame = wire.encode(["slow", "x" * 100])

    def drip() -> None:
        for i in range(len(frame)):
            if stop.wait(0.05):
                return
            left.send(frame[i : i + 1])

    stop = threading.Event()
    sender = threading.Thread(target=drip)
    with left, right:
        sender.start()
        with pytest.raises(TimeoutError):
            wire.recv_frame(right, deadline=time.monotonic() + 0.3)
        stop.set()
        sender.join()
