"""A relayed call's standard streams in the daemon (docs/faces.md#the-daemon).

The daemon runs one call at a time, holding its call lock. Whatever the call writes is kept
here, encoded as the client's stream would encode it, and written to the client's descriptors
only after the lock is let go: a caller that does not read its stdout (a pager left open, a
stopped pipeline, a hostile tool) then blocks only its own answer, never every other call on
the root (docs/SAFETY.md#the-daemon). A terminal's stderr stays live, for the progress lines.
"""

from __future__ import annotations

import contextlib
import io
import os

__all__ = ["Streams"]


class _Tape(io.TextIOBase):
    """A text stream that encodes each write as ``real`` would (the same exceptions, raised
    inside the call) and keeps the bytes, in order with its sibling's, for ``Streams.replay``."""

    def __init__(self, real: io.TextIOWrapper, tape: list[tuple[io.TextIOWrapper, bytes]]) -> None:
        super().__init__()
        self._real = real
        self._tape = tape

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._real.encoding

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return self._real.errors

    def isatty(self) -> bool:
        return self._real.isatty()

    def fileno(self) -> int:
        return self._real.fileno()

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self._tape.append((self._real, text.encode(self.encoding, self.errors or "strict")))
        return len(text)


class Streams:
    """The client's stdin, stdout and stderr (its descriptors, taken over: closed by
    ``close``), and the text streams a call writes to (``out``, ``err``)."""

    def __init__(self, fds: list[int], out: tuple[str, str], err: tuple[str, str]) -> None:
        self._tape: list[tuple[io.TextIOWrapper, bytes]] = []
        opened: list[io.IOBase] = []
        raw: io.FileIO
        try:  # each descriptor is owned by one open stream at once, and closed once
            raw = io.FileIO(fds[0], "r")
            opened.append(raw)
            self.stdin = io.TextIOWrapper(io.BufferedReader(raw))
            opened[-1] = self.stdin
            self._out = _wrap(fds[1], out, opened)
            self._err = _wrap(fds[2], err, opened, line_buffering=True)
        except BaseException:
            for stream in opened:
                with contextlib.suppress(Exception):
                    stream.close()
            for fd in fds[len(opened) :]:
                with contextlib.suppress(OSError):
                    os.close(fd)
            raise
        self.out = _Tape(self._out, self._tape)
        self.err: io.TextIOBase = self._err if self._err.isatty() else _Tape(self._err, self._tape)

    def replay(self) -> None:
        """Write what the call wrote, in order, to the client's descriptors (blocking as long
        as the client does not read: outside the call lock). A reader gone is not an error, as
        it is not for a one-shot call (``sleuth search x | head``)."""
        tape, self._tape[:] = list(self._tape), []
        with contextlib.suppress(OSError, ValueError):
            for stream in (self._out, self._err):
                stream.flush()  # a terminal's stderr lines written live come first
            for stream, data in tape:
                stream.buffer.write(data)
                stream.buffer.flush()

    def close(self) -> None:
        for stream in (self.stdin, self._out, self._err):
            with contextlib.suppress(Exception):
                stream.close()


def _wrap(
    fd: int, codec: tuple[str, str], opened: list[io.IOBase], *, line_buffering: bool = False
) -> io.TextIOWrapper:
    raw = io.FileIO(fd, "w")
    opened.append(raw)
    stream = io.TextIOWrapper(
        io.BufferedWriter(raw), encoding=codec[0], errors=codec[1], line_buffering=line_buffering
    )
    opened[-1] = stream
    return stream
