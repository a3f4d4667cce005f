"""``ChangeWatcher``: a background file watcher that tells long-running faces what changed.

The MCP server and a long-lived ``Workbench`` keep the file listing and the trigram index
warm; they must never answer from a listing that misses a change. The watcher bumps a
generation counter on every change under the root, except inside ``.git/`` and ``.sleuth/``
(sleuth's own writes). A cached listing is trusted only while the generation is unchanged *and*
the watcher has its watches in place and has been up for its settle time; if the watcher cannot
start or dies, nothing is cached (every query walks, as a cold one does).

On Linux the watches are inotify's, one per real folder (``folder_watches``): never through a
symlinked folder, as the walker (SPEC section 1, docs/SAFETY.md#what-a-watching-face-may-answer-
late). Where there is no inotify, watchfiles watches the root recursively, as before (not
measured there whether its backend follows a symlinked folder). The root's own watch ending
(the root deleted or moved away) fails the watcher, as does the user's inotify limit (its
watches are released at once).

``barrier`` closes the gap between a change and its event: it touches a file of its own in
``.sleuth/`` and waits until the watcher has handed on every batch up to that file's event
(one inotify instance reports its events in order), so an answer started after it has seen
every change made before it (the daemon asks before each call, docs/faces.md#the-daemon).
"""

from __future__ import annotations

import os
import select
import threading
import time
from collections.abc import Callable, Iterable, Iterator

from sleuth.workspace.folder_watches import FolderWatches

__all__ = ["ChangeWatcher", "BARRIER_NAME"]

BARRIER_NAME = "watch-barrier"
_DEBOUNCE_S = 0.05  # a batch groups events for at most this long
_STEP_S = 0.01  # ... and ends when none came for this long
_IDLE_MS = 100  # how often an idle watcher looks at its stop event


class ChangeWatcher:
    """Watches ``root`` in a daemon thread; ``generation`` increases on every change."""

    def __init__(
        self,
        root: str,
        on_change: Callable[[set[tuple[str, str]], int], None] | None = None,
        *,
        settle_s: float,
    ) -> None:
        """``on_change`` gets each batch as ``{(kind, absolute path)}``, kind ``added``,
        ``modified`` or ``deleted``, and the generation it brings; ``generation`` moves to it
        once ``on_change`` returns, so that a reader who sees the new generation also sees what
        ``on_change`` did (patched listings: without this, a query in between would walk).

        ``settle_s``: how long the watcher runs before it is trusted (``Tuning.watch_settle_s``:
        watchfiles' watches on a large tree took up to ~1.2 s to be in place,
        benchmarks/RESULTS.md#measured-constraints); with inotify, trust also waits until
        every watch is placed."""
        self._root = root.rstrip("/")
        self._settle_s = settle_s
        self._skip = (self._root + "/.git/", self._root + "/.sleuth/")
        self._barrier_path = self._root + "/.sleuth/" + BARRIER_NAME
        self._barrier_seen = threading.Condition()
        self._barrier_events = 0
        self._on_change = on_change
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._armed = threading.Event()  # every watch placed (inotify) or asked for
        self._started_at = 0.0
        self.generation = 0
        self.failed = False

    def start(self) -> None:
        if self._thread is not None:
            return
        self._started_at = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="sleuth-watch", daemon=True)
        self._thread.start()

    @property
    def trustworthy(self) -> bool:
        """True while the watcher runs, has its watches in place and has been up for its
        settle time."""
        thread = self._thread
        return (
            thread is not None
            and thread.is_alive()
            and self._armed.is_set()
            and not self.failed
            and not self._stop.is_set()
            and time.monotonic() - self._started_at >= self._settle_s
        )

    def _keep(self, _kind: str, path: str) -> bool:
        return path == self._barrier_path or not (path + "/").startswith(self._skip)

    def barrier(self, timeout_s: float) -> bool:
        """Touch the barrier file and wait until its event has come through (every batch
        before it handed on); False when the watcher is not trusted or the event is late."""
        if not self.trustworthy:
            return False
        with self._barrier_seen:
            seen = self._barrier_events
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(self._barrier_path, flags, 0o600)
            try:
                os.write(fd, b"x")
            finally:
                os.close(fd)
        except OSError:
            return False
        deadline = time.monotonic() + timeout_s
        with self._barrier_seen:
            while self._barrier_events == seen:
                left = deadline - time.monotonic()
                if left <= 0 or not self.trustworthy:
                    return False
                self._barrier_seen.wait(left)
        return True

    def _run(self) -> None:
        watches: FolderWatches | None = None
        try:
            watches = FolderWatches.open(self._root)
            batches = self._watchfiles() if watches is None else self._inotify(watches)
            for changes in batches:
                self._hand_on(changes)
        except Exception:  # noqa: BLE001 - any watcher failure only turns caching off
            self.failed = True
            self.generation += 1
        finally:
            if watches is not None:
                watches.close()  # the user's inotify watches, back at once

    def _hand_on(self, changes: Iterable[tuple[str, str]]) -> None:
        """One batch to ``on_change`` and the generation, then the barrier's waiters."""
        kept = {(kind, p) for kind, p in changes if self._keep(kind, p)}
        batch = {(kind, p) for kind, p in kept if p != self._barrier_path}
        if batch:
            new = self.generation + 1
            if self._on_change is not None:
                self._on_change(batch, new)
            self.generation = new
        if len(batch) < len(kept):
            with self._barrier_seen:
                self._barrier_events += 1
                self._barrier_seen.notify_all()

    def _inotify(self, watches: FolderWatches) -> Iterator[set[tuple[str, str]]]:
        """Batches from inotify: every event until none came for ``_STEP_S`` or for at most
        ``_DEBOUNCE_S`` (watchfiles' grouping), each read placing its new folders' watches."""
        watches.arm()
        self._armed.set()
        poller = select.poll()
        poller.register(watches.fileno(), select.POLLIN)
        while not self._stop.is_set():
            if not poller.poll(_IDLE_MS):
                continue
            changes = watches.read()
            deadline = time.monotonic() + _DEBOUNCE_S
            while (left := deadline - time.monotonic()) > 0 and poller.poll(
                min(_STEP_S, left) * 1000
            ):
                changes |= watches.read()
            if changes:
                yield changes

    def _watchfiles(self) -> Iterator[set[tuple[str, str]]]:
        """Batches from watchfiles, recursive (no inotify here); trusted after the settle
        time only (when its watches are in place is not known)."""
        from watchfiles import watch

        self._armed.set()
        for changes in watch(
            self._root,
            debounce=int(_DEBOUNCE_S * 1000),
            step=int(_STEP_S * 1000),
            stop_event=self._stop,
            raise_interrupt=False,
            ignore_permission_denied=True,
        ):
            yield {(change.name, p) for change, p in changes}

    def stop(self) -> None:
        self._stop.set()
        self.generation += 1
        with self._barrier_seen:
            self._barrier_seen.notify_all()
