"""Building trigram postings for many files at once: numpy batches on forked workers.

A cold build of a large tree (the kernel: 78k files, 1.3 GB) is CPU-bound: fold, cut into
windows, deduplicate per file, invert. Each file's distinct trigrams (``GramExtractor``) become
``trigram << 32 | fid`` pairs, buffered up to ``batch_pairs`` and then grouped, sorted and
appended to the postings, so memory holds the finished postings plus one batch — never a Python
object per trigram or per pair.

With more than one core the files go to forked worker processes in chunks handed out on demand
(a worker that gets less CPU on a shared machine simply takes fewer chunks). Each worker reads
its files itself through the ``read`` callable it inherits — the caller's workspace door, so
ignore rules and the access policy still apply (docs/architecture.md#engines-never-touch-the-disk)
— and builds postings for all its chunks; at the end it sends them back one partition at a
time, dropping each as it goes, and the parent unions them in. The parent only hands out chunks
and reports progress. Workers are forked, never spawned (a spawned process would re-run the
caller's ``__main__`` and need the workspace pickled); forking beside the caller's threads is
safe for them because ``read`` must take no lock a thread of the parent could hold
(``Workspace.read_fresh`` takes none). When a pool cannot start or a worker dies
(``POOL_ERRORS``) the build runs in-process, where any real error surfaces as it would.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import TYPE_CHECKING

from sleuth.text_search.trigram_postings import GramExtractor, Postings

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["Built", "BuildPlan", "build_postings", "MAX_INDEXED_BYTES", "POOL_ERRORS"]

MAX_INDEXED_BYTES = 8 * 1024 * 1024
"""Files larger than this are not indexed (the size cap, docs/faces.md#which-files-are-searched) and
are always candidates."""

POOL_ERRORS = (OSError, EOFError, ValueError)
"""What a failed worker pool raises; the build then runs in-process."""

Read = Callable[[str], "bytes | None"]
Progress = Callable[[int, int], None]
"""``on_progress(done_files, total_files)``, called from the building thread."""


@dataclass(frozen=True)
class BuildPlan:
    """How a bulk build runs (the defaults were measured on the kernel tree, 2 cores)."""

    workers: int = 0
    """Worker processes; 0 means one per core, up to 4 (each holds ~150 MB of scratch)."""
    min_bulk_files: int = 64
    """Fewer new files than this are indexed one by one in pure Python (no numpy import: a
    cold search that syncs a few changed files stays quick)."""
    min_parallel_files: int = 2048
    """Fewer files than this are indexed in-process (a pool costs tens of milliseconds)."""
    chunk_files: int = 256
    """Files per chunk handed to a worker (also the progress step)."""
    batch_pairs: int = 2 << 20
    """(trigram, file) pairs buffered before a sort-and-append: 16 MB of ``uint64``."""

    def worker_count(self) -> int:
        """Processes to use: 1 means in-process."""
        if self.workers:
            return self.workers
        return min(os.cpu_count() or 1, 4)


@dataclass
class Built:
    """What a build found: the postings, and the fids not indexed (declined, oversize)."""

    postings: Postings
    declined: list[int] = field(default_factory=list)
    oversize: list[int] = field(default_factory=list)


class _Batcher:
    """Turns files into sorted pair batches appended to ``built.postings``."""

    def __init__(self, built: Built, batch_pairs: int) -> None:
        import numpy as np

        self._np = np
        self.built = built
        self._extract = GramExtractor()
        self._batch_pairs = batch_pairs
        self._pending: list[npt.NDArray[np.uint64]] = []
        self._count = 0

    def index(self, jobs: Sequence[tuple[int, str]], read: Read) -> None:
        np, built = self._np, self.built
        for fid, path in jobs:
            data = read(path)
            if data is None:
                built.declined.append(fid)
                continue
            if len(data) > MAX_INDEXED_BYTES:
                built.oversize.append(fid)
                continue
            pairs = self._extract.grams(data).astype(np.uint64)
            pairs <<= np.uint64(32)
            pairs |= np.uint64(fid)
            self._pending.append(pairs)
            self._count += len(pairs)
            if self._count >= self._batch_pairs:
                self.flush()

    def flush(self) -> None:
        if not self._pending:
            return
        pairs = self._np.concatenate(self._pending)
        self._pending, self._count = [], 0
        self.built.postings.add_pairs(pairs)


def build_postings(
    jobs: Sequence[tuple[int, str]],
    read: Read,
    fid_bits: int,
    *,
    plan: BuildPlan | None = None,
    on_progress: Progress | None = None,
) -> Built:
    """Postings for ``jobs`` (fid, path), read through ``read`` (None: declined)."""
    plan = plan or BuildPlan()
    total = len(jobs)
    chunks = [jobs[i : i + plan.chunk_files] for i in range(0, total, plan.chunk_files)]
    workers = min(plan.worker_count(), len(chunks))
    # a daemonic process (a multiprocessing child itself) may not start children
    can_fork = "fork" in multiprocessing.get_all_start_methods()
    can_fork = can_fork and not multiprocessing.current_process().daemon
    if workers > 1 and total >= plan.min_parallel_files and can_fork:
        try:
            return _in_workers(chunks, read, fid_bits, workers, plan, on_progress, total)
        except POOL_ERRORS:
            pass  # in-process below; a real error (a read that raises) surfaces there
    built = Built(Postings(fid_bits))
    batcher = _Batcher(built, plan.batch_pairs)
    done = 0
    for chunk in chunks:
        batcher.index(chunk, read)
        done += len(chunk)
        if on_progress is not None:
            on_progress(done, total)
    batcher.flush()
    return built


def _worker(conn: Connection, read: Read, fid_bits: int, batch_pairs: int) -> None:
    """A forked worker: index each chunk it is sent, then send its postings back once."""
    # Ctrl-C reaches the whole process group: the parent stops the workers, which should
    # not each print a traceback first
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    built = Built(Postings(fid_bits))
    batcher = _Batcher(built, batch_pairs)
    conn.send(0)
    while (chunk := conn.recv()) is not None:
        batcher.index(chunk, read)
        conn.send(len(chunk))
    batcher.flush()
    conn.send((built.declined, built.oversize))
    for blob in built.postings.drain():  # one partition at a time: no second copy of them all
        conn.send_bytes(blob)
    conn.send_bytes(b"")
    conn.close()


def _in_workers(
    chunks: list[Sequence[tuple[int, str]]],
    read: Read,
    fid_bits: int,
    workers: int,
    plan: BuildPlan,
    on_progress: Progress | None,
    total: int,
) -> Built:
    import numpy  # noqa: F401  (imported once here, the workers inherit it: ~0.15 s each)

    ctx = multiprocessing.get_context("fork")
    built = Built(Postings(fid_bits))
    procs: list[multiprocessing.process.BaseProcess] = []
    conns: list[Connection] = []
    try:
        for _ in range(workers):
            mine, theirs = ctx.Pipe()
            proc = ctx.Process(
                target=_worker, args=(theirs, read, fid_bits, plan.batch_pairs), daemon=True
            )
            proc.start()
            theirs.close()
            procs.append(proc)
            conns.append(mine)
        pending = iter(chunks)
        done = 0
        live = list(conns)
        while live:
            for conn in wait(live):
                assert isinstance(conn, Connection)
                finished = conn.recv()
                done += finished
                if finished and on_progress is not None:
                    on_progress(done, total)
                chunk = next(pending, None)
                conn.send(chunk)
                if chunk is None:
                    declined, oversize = conn.recv()
                    built.declined += declined
                    built.oversize += oversize
                    while blob := conn.recv_bytes():
                        built.postings.merge_blob(memoryview(blob))
                    live.remove(conn)
        for worker in procs:
            worker.join()
            if worker.exitcode != 0:
                raise OSError(f"index worker exited with {worker.exitcode}")
        return built
    finally:
        for conn in conns:
            conn.close()
        for worker in procs:
            if worker.is_alive():
                worker.terminate()
                worker.join()
