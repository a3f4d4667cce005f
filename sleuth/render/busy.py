"""What a CLI call is busy with, on a terminal, once it has taken a second
(docs/faces.md#progress).

``Busy`` is the ``OnProgress`` sink a face hands the engines for one call
(``Workspace.progress``): each report names the step and, when known, how far it is
(``building the reference graph ━━━━╸━━ 1,024/6,918``). Nothing is drawn for a call that ends
within ``delay_s``, on a stream that is not a terminal, or for a ``--json`` answer; rich is
imported only when a bar is drawn. The bar is transient: once the call ends only its answer
remains.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

__all__ = ["Busy", "DELAY_S"]

DELAY_S = 1.0


class Busy:
    """Thread-safe: engines report from worker threads and the language servers' loop."""

    def __init__(self, stream: TextIO, *, json_output: bool, delay_s: float = DELAY_S) -> None:
        isatty = getattr(stream, "isatty", None)
        self.active = not json_output and bool(isatty and isatty())
        self._stream = stream
        self._delay_s = delay_s
        self._lock = threading.Lock()
        self._state: tuple[str, int, int] = ("", 0, 0)
        self._since = time.monotonic()
        self._timer: threading.Timer | None = None
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._closed = False

    def __call__(self, what: str, done: int, total: int) -> None:
        if not self.active:
            return
        with self._lock:
            if self._closed:
                return
            self._state = (what, done, total)
            if self._progress is not None:
                self._show()
            elif what and self._timer is None:
                wait = self._delay_s - (time.monotonic() - self._since)
                if wait <= 0:
                    self._draw()
                    return
                self._timer = threading.Timer(wait, self._appear)
                self._timer.daemon = True
                self._timer.start()

    def _appear(self) -> None:
        with self._lock:
            self._timer = None
            if self._closed or not self._state[0]:
                return  # the step ended before its second was up
            self._draw()

    def _draw(self) -> None:
        """Start the bar (the lock held)."""
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        console = Console(file=self._stream, highlight=False, markup=False, emoji=False)
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        )
        self._progress.start()
        self._task = self._progress.add_task(self._state[0], total=None)
        self._show()

    def _show(self) -> None:
        progress, task = self._progress, self._task
        if progress is None or task is None:
            return
        what, done, total = self._state
        progress.update(
            task,
            description=what or "working",
            completed=done,
            total=total if total > 0 else None,
        )

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            progress, self._progress = self._progress, None
        if progress is not None:
            progress.stop()
