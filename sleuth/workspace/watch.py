"""``ChangeWatcher``: a background file watcher that tells long-running faces what changed.

The MCP server and a long-lived ``Workbench`` keep the file listing and the trigram index
warm; they must never answer from a listing that misses a change. The watcher (watchfiles,
inotify on Linux) bumps a generation counter on every change under the root, except inside
``.git/`` and ``.sleuth/`` (sleuth's own writes). A cached listing is trusted only while the
generation is unchanged *and* the watcher has been up long enough to have its watches in place;
if the watcher cannot start or dies, nothing is cached (every query walks, as a cold one does).

``barrier`` closes the gap between a change and its event: it touches a file of its own in
``.sleuth/`` and waits until the watcher has handed on every batch up to that file's event
(inotify reports one watch's events in order), so an answer started after it has seen every
change made before it (the daemon asks before each call, docs/faces.md#the-daemon).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

__all__ = ["ChangeWatcher", "BARRIER_NAME"]

BARRIER_NAME = "watch-barrier"


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
        inotify watches on a large tree take up to ~1.2 s to be in place,
        benchmarks/RESULTS.md#measured-constraints)."""
        self._root = root.rstrip("/")
        self._settle_s = settle_s
        self._skip = (self._root + "/.git/", self._root + "/.sleuth/")
        self._barrier_path = self._root + "/.sleuth/" + BARRIER_NAME
        self._barrier_seen = threading.Condition()
        self._barrier_events = 0
        self._on_change = on_change
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
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
        """True while the watcher runs and has been up for its settle time."""
        thread = self._thread
        return (
            thread is not None
            and thread.is_alive()
            and not self.failed
            and not self._stop.is_set()
            and time.monotonic() - self._started_at >= self._settle_s
        )

    def _keep(self, _change: object, path: str) -> bool:
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
        try:
            from watchfiles import watch

            for changes in watch(
                self._root,
                watch_filter=self._keep,
                debounce=50,
                step=10,
                stop_event=self._stop,
                raise_interrupt=False,
                ignore_permission_denied=True,
            ):
                batch = {(change.name, p) for change, p in changes if p != self._barrier_path}
                if batch:
                    new = self.generation + 1
                    if self._on_change is not None:
                        self._on_change(batch, new)
                    self.generation = new
                if any(p == self._barrier_path for _change, p in changes):
                    with self._barrier_seen:
                        self._barrier_events += 1
                        self._barrier_seen.notify_all()
        except Exception:  # noqa: BLE001 - any watcher failure only turns caching off
            self.failed = True
            self.generation += 1

    def stop(self) -> None:
        self._stop.set()
        self.generation += 1
        with self._barrier_seen:
            self._barrier_seen.notify_all()
