"""Parsing and matching in worker processes, for cold scans of many files.

py-tree-sitter holds the GIL while it parses (measured: two threads parsing Django's 2,823
files take as long as one), so threads cannot use a second core; processes can. A
``MatchPool`` forks a few workers once per process and sends them batches of file bytes plus
the pattern's arguments; each worker compiles the pattern once and sends back plain match
tuples (never trees), in the order the files were sent. The caller keeps the order of its
own stream, so results are identical to a serial scan.

A batch may also carry ``records``, the caller's function that makes a file's match records
(positions, line text, context, capture texts) from its matches: the workers then build them
too, on the cores the parse leaves idle while the caller stores and pages, instead of the
caller building every one in its own process.

Only one-shot processes use it (the CLI, a ``Workbench`` without a tree cache): a long-running
face keeps trees warm in its own process instead. Workers are forked (Linux) so they inherit
the loaded grammars; where ``fork`` is unavailable there is no pool and scans stay serial.
A pool belongs to the session that opened it (``open_pool``; ``service.session.Session`` keeps
one, forked on first use, and lets it go in ``close``): no pool lives in this module.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from typing import TYPE_CHECKING

from sleuth.ast_search.engine import AstPattern, compile_pattern
from sleuth.model import Found, Match

if TYPE_CHECKING:
    from tree_sitter import Tree

    from sleuth.workspace import FileText

__all__ = [
    "PatternArgs",
    "Records",
    "Answer",
    "MatchPool",
    "open_pool",
    "find_raw",
]

PatternArgs = tuple[str, str, str | None, str]
"""(pattern, lang, selector, strictness): what a worker needs to compile the pattern."""

Records = Callable[["FileText", list[Found]], list[Match]]
"""Makes the match records of a file's matches (a module-level function or a ``partial`` of
one, so that it can be sent to a worker)."""

Answer = tuple[list[Found], list[Match] | None]
"""A file's matches and, when the batch asked for them, their records (one per match)."""

_compiled: dict[PatternArgs, AstPattern] = {}  # lives in each worker process only


def find_raw(pattern: AstPattern, data: bytes, tree: Tree | None = None) -> list[Found]:
    """Every match of ``pattern`` in ``data`` (parsed as ``tree`` if given) as the plain
    tuples every engine yields (``sleuth.model.Found``; what workers send back)."""
    return [
        (
            m.start_byte,
            m.end_byte,
            {k: (c.nodes, c.start_byte, c.end_byte) for k, c in m.captures.items()},
            None,
        )
        for m in pattern.find(data, tree)
    ]


def _find_batch(args: PatternArgs, files: list[FileText], records: Records | None) -> list[Answer]:
    """Worker entry: the matches (and ``records`` of them) of each file of one batch, in the
    batch's order."""
    pattern = _compiled.get(args)
    if pattern is None:
        text, lang, selector, strictness = args
        pattern = _compiled[args] = compile_pattern(
            text, lang, selector=selector, strictness=strictness
        )
    out: list[Answer] = []
    for ft in files:
        found = find_raw(pattern, ft.data)
        out.append((found, records(ft, found) if records is not None and found else None))
    return out


class MatchPool:
    """A small pool of forked worker processes matching one batch of files per task."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._executor = ProcessPoolExecutor(
            max_workers=workers, mp_context=multiprocessing.get_context("fork")
        )

    def submit(
        self, args: PatternArgs, files: list[FileText], records: Records | None = None
    ) -> Future[list[Answer]]:
        return self._executor.submit(_find_batch, args, files, records)

    def shutdown(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)

    def drop_queued(self) -> None:
        """Stop taking work: queued batches are cancelled, the ones already running finish
        (killing workers mid-batch can leave the executor's feeder thread blocked at exit)."""
        self._executor.shutdown(wait=False, cancel_futures=True)


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def open_pool(max_workers: int) -> MatchPool | None:
    """A new pool of up to ``max_workers`` forked workers (no more than the CPUs this process
    may run on), or None where it cannot help: one CPU, no ``fork``, or inside a worker."""
    if multiprocessing.parent_process() is not None:
        return None
    workers = min(max_workers, _cpus())
    if workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return None
    return MatchPool(workers)
