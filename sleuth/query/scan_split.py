"""A cold text scan shared with a forked child: the first call on a large tree reads on two cores.

A one-shot process (the CLI without a daemon) scans every file of a cold tree, and reading and
testing them one after the other left the second core idle: 78k kernel files cost 2 s of
Python and system time in one process. ``split_reads`` cuts the files (in path order) into
chunks of ``CHUNK`` and forks once: the child reads and tests every other chunk with the same
``Workspace.read_if`` and sends, per chunk, one outcome letter per file and the skip counts;
this process does the other chunks and takes the child's answers in order, reading again only
the files the child wanted (they hold a match). What comes out is what reading every file
here would give, in the same order.

Choices, written down:

- Only where a fork is safe and useful (``_can_split``): one thread in this process, ``os.fork``
  present, a core free by the load average (``workspace.walk_split``'s rules), and at least
  ``Tuning.scan_split_files`` files.
- The child sends a chunk as soon as it is done and may run ahead by what the pipe holds: a
  page that fills early stops it (``SIGKILL``) and reaps it when the iteration ends.
- Any failure of the child (a crash, a short or garbled record) makes this process read the
  child's chunks itself: splitting can only save time, never change an answer.
- The child reaches files only through the workspace, as this process would (cloaking, the
  size cap and the symlink rules apply there), and sends paths' outcomes, never bytes.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import signal
import struct
from collections.abc import Iterator, Sequence
from typing import BinaryIO

from sleuth.model import SkipCounts
from sleuth.workspace import FileText, Workspace, walk_split
from sleuth.workspace.reader import UNWANTED, Wanted

__all__ = ["split_reads", "CHUNK", "Read"]

CHUNK = 256
"""Files per chunk: small enough that a page stopping early wastes little of the child's work,
large enough that a record per chunk costs nothing beside the reads."""

Read = tuple[str, FileText | str | None]
"""(path, its ``FileText``, ``UNWANTED`` when read and turned down, or None when skipped)."""

_HEAD = struct.Struct("<I")
_WANTED, _UNWANTED, _SKIPPED = ord("w"), ord("u"), ord("s")


def _can_split(count: int, least: int) -> bool:
    return count >= least and walk_split.can_fork() and walk_split.core_free()


def _read_here(
    ws: Workspace, paths: Sequence[str], wanted: Wanted, skipped: SkipCounts
) -> Iterator[Read]:
    for path in paths:
        yield path, ws.read_if(path, skipped, wanted)


def split_reads(
    ws: Workspace, paths: Sequence[str], wanted: Wanted, skipped: SkipCounts, least: int
) -> Iterator[Read]:
    """``ws.read_if(path, skipped, wanted)`` of every path in order, on two cores when
    ``least`` files or more make it worth a fork (``skipped`` counts what both read)."""
    if not _can_split(len(paths), least):
        yield from _read_here(ws, paths, wanted, skipped)
        return
    chunks = [paths[at : at + CHUNK] for at in range(0, len(paths), CHUNK)]
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the odd chunks, then leave without the parent's exit handlers
        os.close(read_end)
        code = 1
        try:
            code = _serve(ws, chunks[1::2], wanted, write_end)
        finally:
            os._exit(code)
    os.close(write_end)
    stream = os.fdopen(read_end, "rb")
    alive = True
    try:
        for index, chunk in enumerate(chunks):
            if index % 2 == 0:
                yield from _read_here(ws, chunk, wanted, skipped)
                continue
            answer = _take(stream, len(chunk)) if alive else None
            if answer is None:
                alive = False
                yield from _read_here(ws, chunk, wanted, skipped)
                continue
            outcomes, counts = answer
            skipped.add(counts)
            for path, outcome in zip(chunk, outcomes, strict=True):
                if outcome == _WANTED:
                    yield path, ws.read(path, skipped)
                elif outcome == _UNWANTED:
                    yield path, UNWANTED
                else:
                    yield path, None
    finally:
        stream.close()
        _stop(pid)


def _serve(ws: Workspace, chunks: list[Sequence[str]], wanted: Wanted, fd: int) -> int:
    for chunk in chunks:
        counts = SkipCounts()
        outcomes = bytearray()
        for path in chunk:
            got = ws.read_if(path, counts, wanted)
            outcomes.append(_SKIPPED if got is None else _UNWANTED if got == UNWANTED else _WANTED)
        record = (
            bytes(outcomes),
            counts.binary,
            counts.too_large,
            counts.undecodable,
            counts.unreadable,
        )
        payload = marshal.dumps(record)
        view = memoryview(_HEAD.pack(len(payload)) + payload)
        while view:
            view = view[os.write(fd, view) :]
    os.close(fd)
    return 0


def _take(stream: BinaryIO, files: int) -> tuple[bytes, SkipCounts] | None:
    """The child's next record for a chunk of ``files`` files, or None if it failed."""
    try:
        head = stream.read(_HEAD.size)
        if len(head) != _HEAD.size:
            return None
        (size,) = _HEAD.unpack(head)
        payload = stream.read(size)
        if len(payload) != size:
            return None
        outcomes, binary, too_large, undecodable, unreadable = marshal.loads(payload)
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not isinstance(outcomes, bytes) or len(outcomes) != files:
        return None
    return outcomes, SkipCounts(binary, too_large, undecodable, unreadable)


def _stop(pid: int) -> None:
    """Stop the child if it still runs (a page ended early) and reap it."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
