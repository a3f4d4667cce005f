"""Listing prefetch for one-shot processes: walk the workspace in a forked child meanwhile.

A CLI call spends its first ~0.15 s importing the engines and then walks the workspace
(~0.13 s on Django's 6,900 files) before it reads a byte. Both are CPU-bound Python, so a
thread would not overlap them; a child forked before the heavy imports does.
``ListingPrefetch.start`` forks a child that lists the request's scope exactly as
``Workspace.list_files`` would (it builds its own ``Workspace`` on the same root) and sends the
listing back through a pipe. The ``ListingPrefetch`` is the handle: the session that started it
owns it (``sleuth.service.session.Session``) and hands it to the workspace it builds, whose
``list_files`` calls ``take`` with its own key (the ``workspace.walker.PrefetchedListings``
protocol) and adopts the listing when every part of the key matches (root, ignore mode, size
cap, scope, globs, ``any_size``).

The layer is the workspace's: this module produces a workspace value (a ``FileList``) and
imports only the workspace; nothing in ``sleuth.workspace`` imports it (the workspace sees the
protocol only), so there is no cycle.

Choices, written down:

- Only a process with one thread forks (a lock held by another thread at fork time could
  hang the child); ``start`` returns False otherwise, and on platforms without ``fork``.
- Any failure on either side (an invalid scope, a crash, a short read, a key mismatch)
  makes ``take`` answer None, and the caller walks as before: the prefetch can only save
  time, never change an answer. The parent reaps the child in ``take``; a child nobody asks
  for is stopped and reaped by ``discard`` (the session's ``close``).
- The child's walk may split once more (``sleuth.workspace.walk_split``): it outlasts the
  imports on a large tree, and the second core is free once they are done.
- This module imports nothing from ``sleuth`` at module level; ``start`` imports the
  workspace package (which the parent needs anyway) just before it forks, so the child walks
  at once. The listing travels as ``marshal`` data, in four columns (paths, sizes,
  mtimes, ctimes) that the parent turns into entries field by field.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import signal
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sleuth.workspace.walk_split import collect_child

if TYPE_CHECKING:
    from sleuth.workspace.walker import FileList, ListingKey

__all__ = ["ListingPrefetch"]


class ListingPrefetch:
    """The children listing workspaces ahead of their first walk, by real root."""

    def __init__(self) -> None:
        self._pending: dict[str, tuple[int, int]] = {}  # real root -> (child pid, pipe's read end)

    @property
    def pending(self) -> int:
        """How many children were started and not yet taken or discarded."""
        return len(self._pending)

    def start(
        self,
        root: str,
        *,
        no_ignore: bool,
        scope: str,
        include: Sequence[str],
        exclude: Sequence[str],
        any_size: bool,
    ) -> bool:
        """Fork a child that lists ``scope`` of the workspace at ``root``; False if not started."""
        if not hasattr(os, "fork") or threading.active_count() > 1:
            return False
        real = os.path.realpath(os.path.abspath(root))
        if real in self._pending:
            return False
        # imported before the fork: the parent needs the workspace anyway, and the child then
        # starts walking at once instead of importing it on the other core
        import sleuth.workspace.workspace  # noqa: F401

        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: list, send, leave without running the parent's exit handlers
            os.close(read_end)
            code = 1
            try:
                self._pending.clear()
                payload = _list(real, no_ignore, scope, include, exclude, any_size)
                view = memoryview(payload)
                while view:
                    view = view[os.write(write_end, view) :]
                code = 0
            except BaseException:  # noqa: BLE001 - the parent walks itself when this fails
                pass
            finally:
                os._exit(code)
        os.close(write_end)
        self._pending[real] = (pid, read_end)
        return True

    def take(self, key: ListingKey, max_filesize: int) -> FileList | None:
        """The prefetched listing for ``key`` (waiting for the child), or None; the child of
        ``key``'s root is reaped either way."""
        if not self._pending:
            return None
        entry = self._pending.pop(key[0], None)
        if entry is None:
            return None
        payload = collect_child(*entry)
        if payload is None:
            return None
        try:
            got_key, got_cap, files, counts, ignored = marshal.loads(payload)
        except (EOFError, ValueError, TypeError):
            return None
        if tuple(got_key) != key or got_cap != max_filesize:
            return None
        return _listing(files, counts, ignored)

    def discard(self) -> None:
        """Stop and reap every child nobody took a listing from (their listings are dropped)."""
        while self._pending:
            _, (pid, fd) = self._pending.popitem()
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            collect_child(pid, fd)


def _list(
    real: str,
    no_ignore: bool,
    scope: str,
    include: Sequence[str],
    exclude: Sequence[str],
    any_size: bool,
) -> bytes:
    from dataclasses import replace

    from sleuth.tuning import Tuning
    from sleuth.workspace.workspace import Workspace

    # the parent is importing on one core and then waits: a large walk splits across both
    ws = Workspace(real, no_ignore=no_ignore, tuning=replace(Tuning(), walk_processes=2))
    rel = ws.validate_path(scope) if scope else ""
    # what ``list_files`` answers on a cold workspace, as rows: the entries are built once, in
    # the parent (field by field from four columns: cheaper to send and rebuild than rows)
    rows, listing = ws.walker(include, exclude, any_size).walk_rows(rel)
    sk = listing.skipped
    key: ListingKey = (real, no_ignore, rel, tuple(include), tuple(exclude), any_size)
    files = tuple(zip(*rows, strict=True)) if rows else ((), (), (), ())
    counts = (sk.binary, sk.too_large, sk.undecodable, sk.unreadable, list(sk.paths))
    return marshal.dumps((key, ws.max_filesize, files, counts, listing.ignored))


def _listing(files: Any, counts: Any, ignored: Any) -> FileList:
    from sleuth.model import SkipCounts
    from sleuth.workspace.walker import FileList, entries_of_columns

    binary, too_large, undecodable, unreadable, paths = counts
    skipped = SkipCounts(binary, too_large, undecodable, unreadable, list(paths))
    return FileList(entries_of_columns(*files), skipped, int(ignored))
