"""Writes that finish after the answer: background threads, run one after another.

The result registry registers a large answer while the caller already shows its first page
(``Registry.put_result``); the graph cache stores an edit's rows while the query that noticed
the edit goes on answering (``GraphStore.write(behind=True)``). Each write runs on a thread of its own that first waits for the
write before it, so writes land in the order they were submitted; a reader that needs a
pending write's rows waits for it (``wait(key)``), one that needs everything waits for all
(``wait()``). A failed write is reported by the next wait, in the waiter's thread, as
``Internal``: its result is then not registered (its references answer ``not_found``).

The threads are not daemons: an interpreter that exits normally lets them finish.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from sleuth.errors import Internal

__all__ = ["WriteBehind", "courteous"]

_T = TypeVar("_T")

COURTESY_EVERY = 16
"""How many items a writer handles between two offers of the interpreter lock."""


def courteous(items: Iterable[_T], every: int = COURTESY_EVERY) -> Iterator[_T]:
    """``items``, offering the interpreter lock to the other threads every ``every`` items.

    A writer behind an answer runs beside the next query; without this it holds the lock for
    the interpreter's whole switch interval (5 ms) each time it gets it, taking about half of
    the query's time. ``time.sleep(0)`` hands the lock to a waiting thread at once and costs
    nothing when no thread waits, so the writer gets the time the foreground leaves.
    """
    for i, item in enumerate(items, 1):
        yield item
        if i % every == 0:
            time.sleep(0)


class WriteBehind:
    """Background writes keyed by what they write (e.g. a result id)."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._lock = threading.Lock()
        self._last: threading.Thread | None = None
        self._pending: dict[str, int] = {}
        self._errors: list[BaseException] = []
        self._local = threading.local()

    def in_writer(self) -> bool:
        """Whether the calling thread is one of these writers."""
        return bool(getattr(self._local, "writer", False))

    def pending(self, key: str | None = None) -> bool:
        """Whether a write of ``key`` (of any key when None) is still to land."""
        with self._lock:
            return bool(self._pending) if key is None else key in self._pending

    def submit(self, key: str, write: Callable[[], object]) -> None:
        """Run ``write`` on a new thread once every earlier write is done."""
        with self._lock:
            before = self._last
            self._pending[key] = self._pending.get(key, 0) + 1
            thread = threading.Thread(
                target=self._run, args=(before, key, write), name=f"sleuth-{self._name}-write"
            )
            self._last = thread
        thread.start()

    def _run(self, before: threading.Thread | None, key: str, write: Callable[[], object]) -> None:
        self._local.writer = True
        try:
            if before is not None:
                before.join()
            write()
        except BaseException as exc:  # reported by the next wait, in the caller's thread
            with self._lock:
                self._errors.append(exc)
        finally:
            with self._lock:
                left = self._pending[key] - 1
                if left:
                    self._pending[key] = left
                else:
                    del self._pending[key]

    def wait(self, key: str | None = None) -> None:
        """Wait for the pending writes of ``key`` (all pending writes when None); a writer
        thread never waits. ``Internal`` if a write failed."""
        if self.in_writer():
            return
        with self._lock:
            last = self._last if key is None or key in self._pending else None
        if last is not None:
            last.join()
        with self._lock:
            if self._last is not None and not self._last.is_alive():
                self._last = None
            errors, self._errors = self._errors, []
        if errors:
            raise Internal(f"a background {self._name} write failed: {errors[0]}") from errors[0]
