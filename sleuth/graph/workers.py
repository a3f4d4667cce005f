"""Resolving many files on every core: forked workers that share the graph copy-on-write.

A cold build (or any update that re-resolves many files) spends most of its time in name
resolution, which only reads the graph's records, file indexes and module index. Once those are
in place, ``iter_resolved`` forks worker processes — each sees the graph as it is at the fork,
without it being pickled — and has them resolve contiguous chunks of the sorted paths (files of
one package read the same modules, so a worker's memo serves its next chunk too). Each worker
keeps one ``Resolver`` for all its chunks and sends back each file's ``ResolutionRow`` as the
cache stores it (``marshal``-ed), which the caller installs in path order while the workers go
on, so the graph is the one resolving in-process gives (tests/graph/test_workers.py).

Workers are only ever forked: a spawned process would re-run the caller's ``__main__`` (a script
without a main guard would recurse) and would have to be sent the whole graph. ``can_fork``
says whether that is possible; callers fall back to resolving in-process when it is not, or
when the pool fails (``OSError``, ``BrokenProcessPool``: ``POOL_ERRORS``). When a pool is worth
it and how big its chunks are is the caller's ``Tuning`` (``resolve_pool_min``, ``resolve_chunk``).
"""

from __future__ import annotations

import marshal
import multiprocessing
import os
from collections.abc import Callable, Generator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from sleuth.graph.resolve import Resolver
from sleuth.graph.table import resolution_to_row

__all__ = ["can_fork", "iter_resolved", "worker_count", "POOL_ERRORS"]

POOL_ERRORS = (OSError, BrokenProcessPool)
"""What a failed pool raises; the caller then does the work in-process."""

# How the forked workers make a resolver over the graph (set only while a pool runs), and each
# worker's resolver (made in the worker on its first chunk, kept for the next ones). They are
# for the forked workers only (the parent sets the first just for the pool's life): a fork is how
# the graph reaches them without being pickled.
_make_resolver: Callable[[], Resolver] | None = None
_resolver: Resolver | None = None


def can_fork() -> bool:
    """Whether worker processes can be forked here (and there is more than one core).

    Forking beside the caller's threads (a file watcher) is as safe as ``ProcessPoolExecutor``'s
    own default, which forks beside its management thread: the children only compute and send
    plain tuples back.
    """
    return (os.cpu_count() or 1) > 1 and "fork" in multiprocessing.get_all_start_methods()


def worker_count() -> int:
    """How many workers a pool gets: every core, up to 8."""
    return min(os.cpu_count() or 1, 8)


def iter_resolved(
    make_resolver: Callable[[], Resolver], paths: Sequence[str], chunk: int
) -> Generator[tuple[str, bytes], None, None]:
    """Resolve ``paths`` (sorted, none with a carry) in worker processes forked on the first
    ``next``, ``chunk`` paths per task (each worker makes its resolver with ``make_resolver``:
    over the graph as it is then);
    yields (path, its ``ResolutionRow`` as ``marshal`` writes it — what the cache stores, and
    quicker to send and read than pickle) in the order of ``paths``, as they come.

    Raises one of ``POOL_ERRORS`` when the pool cannot run or breaks; the paths not yielded
    yet are then the caller's to resolve. Closing the iterator early shuts the pool down.
    """
    global _make_resolver
    chunks = [list(paths[i : i + chunk]) for i in range(0, len(paths), chunk)]
    ctx = multiprocessing.get_context("fork")
    _make_resolver = make_resolver
    try:
        with ProcessPoolExecutor(max_workers=worker_count(), mp_context=ctx) as pool:
            for done in pool.map(_resolve_chunk, chunks):
                yield from done
    finally:
        _make_resolver = None


def _resolve_chunk(paths: list[str]) -> list[tuple[str, bytes]]:
    """In a worker: resolve ``paths`` against the graph as it was at the fork."""
    global _resolver
    if _resolver is None:
        if _make_resolver is None:  # not forked from ``iter_resolved``
            raise BrokenProcessPool("resolution worker without a graph")
        _resolver = _make_resolver()
    resolve = _resolver.resolve_file
    return [(path, marshal.dumps(resolution_to_row(resolve(path)))) for path in paths]
