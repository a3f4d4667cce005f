"""A large walk split between two processes: the CLI's listing child uses both cores.

A one-shot CLI call lists the workspace in a forked child while it imports the engines
(``sleuth.listing_prefetch``); on a large tree that walk outlasts the imports, and the second
core sits idle once they are done. ``walk_split`` lists the top folders breadth-first in this
process until enough folders wait, then forks: the child walks every other waiting folder, this
process the rest, and the child's rows and counts come back through a pipe as ``marshal``
tuples. The listing is the same as a walk in one process (the caller sorts it); only
the order of the work changes.

Choices, written down:

- Only a process with one thread forks (a lock held by another thread at fork time could hang
  the child), only where ``os.fork`` exists, and only while a core looks free (the load
  average); otherwise the walk stays in this process.
- Any failure of the child (a crash, a short read) makes this process walk the child's folders
  itself: splitting can only save time, never change a listing.
- Breadth-first first, so that the folders handed out are many and small: alternating over
  them balances the two halves without knowing their sizes.
"""

from __future__ import annotations

import marshal
import os
import threading
from collections import deque
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sleuth.workspace.walker import FileList, Pending, Row, Walker

__all__ = ["walk_split", "collect_child", "can_fork", "core_free", "SPREAD"]

SPREAD = 512
"""Folders waiting before the split: enough that every other one is about half the work (on
the kernel's 5,000 folders the halves list 41k and 36k files)."""


def walk_split(
    walker: Walker, todo: list[Pending], result: FileList, out: list[Row], spread: int = SPREAD
) -> None:
    """Walk ``todo`` (and below) into ``out`` and ``result``; in two processes once ``spread``
    folders wait (a smaller tree is walked here alone)."""
    queue = deque(todo)
    todo.clear()
    spill: list[Pending] = []
    while queue and len(queue) < spread:
        walker.walk_folder(queue.popleft(), result, spill, out)
        queue.extend(spill)  # breadth-first: subfolders wait behind the folders before them
        spill.clear()
    pending = list(queue)
    if len(pending) < spread or not can_fork() or not core_free():
        walker.walk_folders(pending, result, out)
        return
    mine, theirs = pending[0::2], pending[1::2]
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: walk its half, send it, leave without the parent's exit handlers
        os.close(read_end)
        code = 1
        try:
            code = _serve(walker, theirs, write_end, result)
        finally:
            os._exit(code)
    os.close(write_end)
    walker.walk_folders(mine, result, out)
    if not _adopt(pid, read_end, result, out):
        walker.walk_folders(theirs, result, out)


def can_fork() -> bool:
    return hasattr(os, "fork") and threading.active_count() == 1


def core_free() -> bool:
    """Whether a core is likely idle: the load average is below the core count less a half.
    Split, the kernel's walk took 18% less time than whole at load 4.4 on two cores but
    10-20% more at load 8, where a second walker only competes for the same cores."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return False
    return load < (os.cpu_count() or 1) - 0.5


def _serve(walker: Walker, todo: list[Pending], fd: int, result: FileList) -> int:
    part = type(result)([])  # a FileList, without importing the walker back (no cycle)
    rows: list[Row] = []
    walker.walk_folders(todo, part, rows)
    sk = part.skipped
    payload = marshal.dumps((rows, sk.too_large, sk.unreadable, part.ignored))
    view = memoryview(payload)
    while view:
        view = view[os.write(fd, view) :]
    return 0


def collect_child(pid: int, fd: int) -> bytes | None:
    """Everything a forked child wrote to ``fd`` once it exited cleanly, else None (it failed,
    was killed or wrote nothing); ``fd`` is closed and the child reaped either way."""
    chunks: list[bytes] = []
    try:
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
    except OSError:
        chunks = []
    finally:
        os.close(fd)
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        return None
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0 or not chunks:
        return None
    return b"".join(chunks)


def _adopt(pid: int, fd: int, result: FileList, out: list[Row]) -> bool:
    """Add the child's rows and counts to ours; False (nothing added) when it failed."""
    payload = collect_child(pid, fd)
    if payload is None:
        return False
    try:
        rows, too_large, unreadable, ignored = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return False
    out.extend(rows)
    result.skipped.too_large += too_large
    result.skipped.unreadable += unreadable
    result.ignored += ignored
    return True
