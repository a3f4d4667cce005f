"""``IndexKeeper``: the trigram index of one workspace, kept warm and in step with the files.

The index is a prefilter only: it narrows the files a literal or regex must be verified in, so
it may say "maybe" but never "no" for a file that matches. To keep that promise it is synced
with the listing by (size, mtime) before every use, and files modified within the last two
seconds of being indexed (whose mtime could hide a second same-size write, git's "racy" case)
are always candidates. It lives in ``.sleuth/trigram.idx`` so a cold CLI call can load it;
long-running faces build it in a background thread after their first search, ``sleuth index``
in the foreground with ``on_progress(done_files, total_files)`` for a progress bar.

Files are read for the index with ``Workspace.read_fresh``: it bypasses the content cache (a
cold build would otherwise fill it with the whole tree) and takes no lock, so the bulk build can
read in forked workers (``text_search.trigram_build``) even beside a face's other threads.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Sequence

from sleuth.errors import SleuthError
from sleuth.prefilter import Literals
from sleuth.text_search.trigram import BuildPlan, Progress, TrigramIndex
from sleuth.workspace import FileEntry, Workspace

__all__ = ["IndexKeeper", "INDEX_FILE"]

INDEX_FILE = "trigram.idx"
_RACY_NS = 2_000_000_000


def _key(f: FileEntry) -> tuple[int, int]:
    """What the index keys a file by: its size and ctime (which moves on every write and
    ``utime``, so a rewrite that restores the mtime is re-indexed), else its mtime."""
    return (f.size, f.ctime_ns or f.mtime_ns)


class IndexKeeper:
    """Loads, builds, syncs and saves the workspace's trigram index."""

    def __init__(self, ws: Workspace, *, build: bool, plan: BuildPlan | None = None) -> None:
        self._ws = ws
        self._build = build
        self._plan = plan or BuildPlan()
        self._lock = threading.Lock()
        self._index: TrigramIndex | None = None
        self._racy: set[str] = set()
        self._thread: threading.Thread | None = None
        self._synced_at: int | None = None
        path = ws.state_dir / INDEX_FILE
        if path.exists():
            self._index = TrigramIndex.load(path)

    @property
    def ready(self) -> bool:
        return self._index is not None

    def _read(self, path: str) -> bytes | None:
        ft = self._ws.read_fresh(path)
        return None if ft is None else ft.data

    def _mark_racy(self, files: Sequence[FileEntry]) -> None:
        now = time.time_ns()
        self._racy = {f.path for f in files if f.mtime_ns >= now - _RACY_NS}

    def sync(self, files: Sequence[FileEntry], *, whole: bool) -> None:
        """Bring the index in step with ``files``; start a background build if there is none.

        ``whole`` says ``files`` is the whole workspace, so files missing from it are dropped.
        """
        generation = self._ws.generation
        if generation is not None and generation == self._synced_at:
            return  # the watcher saw no change since the last sync
        with self._lock:
            index = self._index
            if index is None:
                if self._build and self._thread is None:
                    snapshot = list(files)
                    self._thread = threading.Thread(
                        target=self._build_in_background, args=(snapshot,), daemon=True
                    )
                    self._thread.start()
                return
            if whole:
                entries = [(f.path, *_key(f)) for f in files]
                changed = index.sync(entries, self._read, plan=self._plan)
            else:
                changed = 0
                for f in files:
                    if index.known(f.path) != _key(f):
                        data = self._read(f.path)
                        if data is None:
                            index.remove(f.path)
                        else:
                            index.update(f.path, _key(f), data)
                        changed += 1
            self._mark_racy(files)
            if whole:
                self._synced_at = generation
            if changed:
                self._save(index)

    def _build_in_background(self, files: list[FileEntry]) -> None:
        index = TrigramIndex()
        index.sync([(f.path, *_key(f)) for f in files], self._read, plan=self._plan)
        with self._lock:
            self._index = index
            self._mark_racy(files)
        self._save(index)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for a background build (tests and benchmarks); True when an index is ready."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return self.ready

    def build_now(self, files: Sequence[FileEntry], on_progress: Progress | None = None) -> int:
        """Build (or bring up to date) the index in the foreground; returns files indexed.

        ``on_progress(done_files, total_files)`` is called as files are indexed (from this
        thread), the totals counting only the new and changed files."""
        with self._lock:
            index = self._index or TrigramIndex()
            entries = [(f.path, *_key(f)) for f in files]
            count = index.sync(entries, self._read, on_progress=on_progress, plan=self._plan)
            self._index = index
            self._mark_racy(files)
        self._save(index)
        return count

    def _save(self, index: TrigramIndex) -> None:
        # the index is a cache: a read-only (or refused) state folder only costs speed
        with contextlib.suppress(OSError, SleuthError):
            index.save(self._ws.state_dir / INDEX_FILE)

    def candidates(self, literals: Literals | None) -> set[str] | None:
        """Files that may contain ``literals`` (None: no narrowing possible)."""
        index = self._index
        if index is None:
            return None
        found = index.candidates(literals)
        if found is None:
            return None
        return found | self._racy
