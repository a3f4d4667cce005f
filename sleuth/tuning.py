"""``Tuning``, the one typed value every performance knob lives in, and the ``Collector`` policy.

docs/architecture.md#no-process-state-in-modules: no process-wide mutable state in modules —
pools, memos, caches and the collector policy belong to the session
(``sleuth.service.session.Session``), and what they do is tuned by one frozen value rather than
by module constants. A ``Workspace`` is built with the ``Tuning`` of the session it serves
(``ws.tuning``) and every engine reads its knobs through it, or takes it as a parameter where no
workspace is at hand (the graph's ``apply``). A test or a library user changes a knob with
``dataclasses.replace(Tuning(), field=value)``; nothing is monkeypatched.

Limits that are part of the contract (``MAX_LIMIT``, ``MAX_PATTERN_CHARS``, ``MAX_EDIT_TEXT``)
are not tuning and stay beside the code they bound: changing them changes answers, changing a
field here only changes how fast an answer comes.

``Collector`` is how the cyclic garbage collector is handled around large graph work: paused
while a graph loads, builds or syncs, and (``freeze``) the graph just loaded or built taken out
of full collections. The session makes one from its tuning and hands it to the graph code; a
graph used without a session pauses and never freezes (``Collector()``).

A base module: it imports nothing from ``sleuth``.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["Tuning", "Collector"]


@dataclass(frozen=True)
class Tuning:
    """Every performance knob, with the measured default (see each field)."""

    # -- ast: scans in a one-shot process (query.ast_mode, ast_search.workers) ---------------
    ast_serial_files: int = 2
    """Files parsed in process before worker processes are worth their start-up ..."""
    ast_parallel_at: int = 64
    """... unless the plan holds this many files: then the first file already goes to them."""
    ast_batch_files: int = 8
    """Files per worker batch: small enough that a page stopping early wastes little work."""
    ast_batch_bytes: int = 128 * 1024
    """Bytes per worker batch, so one batch of big files does not hold up the stream."""
    ast_max_pending_files: int = 256
    """Files read ahead of the consumer at most (bounds the work lost when a page is full) ..."""
    ast_max_pending_bytes: int = 32 * 1024 * 1024
    """... and bytes read ahead at most (bounds the memory held for unanswered batches)."""
    ast_max_workers: int = 4
    """Worker processes of the session's ast pool at most (fewer where there are fewer CPUs)."""
    ast_memo_found: int = 200_000
    """Matches (plus one per file) memoised per request, so a page, its count and the next page
    never parse a file twice."""
    ast_memo_records: int = 20_000
    """Match records built by workers, kept per request until a scan takes them: the ones a
    count ran past, and the batches ahead of the scan (each record holds its matched texts:
    Django's 30k ``def`` records took 96 MB)."""
    ast_memo_requests: int = 4
    """Requests whose per-file matches are memoised (least recently used dropped)."""

    # -- graph: cold builds on every core (query.graph_keeper, graph.workers) ----------------
    graph_pool_min_files: int = 256
    """Tag in worker processes when at least this many files need tagging (a cold build)."""
    graph_tag_chunk: int = 48
    """Files per tagging task at most ..."""
    graph_tag_min_chunk: int = 4
    """... and at least, as the chunks shrink towards the end so no worker has a long tail."""
    resolve_pool_min: int = 384
    """Resolve in worker processes when at least this many files need resolving without a carry
    (about half a second on one core; a pool costs some tens of milliseconds)."""
    resolve_chunk: int = 64
    """Paths per resolution task (files of one package read the same modules: one worker's memo
    serves its next chunk too)."""

    # -- the cyclic garbage collector (Collector) ---------------------------------------------
    gc_pause: bool = True
    """Switch the cyclic collector off while a graph loads, builds or syncs: those allocate
    millions of small acyclic objects it would only rescan (0.2-0.4 s on Django)."""
    gc_freeze_min_files: int | None = 256
    """Freeze (``gc.freeze``) what is alive after a graph of at least this many files was loaded
    or built, so full collections stop walking it (0.4-0.7 s each on Django); None: never. It
    is process-wide (the host's objects alive then are exempt too), so a small graph is not."""
    graph_rank_depth: int = 200
    """``graph:`` alone keeps this many top-ranked declarations, paged like any result; each is
    read for its match, so the whole ranking of a large tree is not (the answer says so)."""

    # -- result paging (resources.results) ------------------------------------------------------
    snapshot_max: int = 2000
    """Results of up to this many matches are stored whole by the first page."""
    small_tree_files: int = 1000
    """Files past the page always counted exactly (a text scan of them is cheap)."""
    count_budget_s: float = 0.025
    """Seconds counting past a full page may take beyond those files (no more than the page)."""

    scan_split_files: int = 2000
    """Files of a cold text scan (an unwatched workspace, no index) from which a forked child
    reads every other chunk of them (``query.scan_split``)."""

    # -- the workspace ------------------------------------------------------------------------
    watch_settle_s: float = 1.5
    """Seconds a file watcher runs before its listings are trusted: watchfiles (the watcher
    where there is no inotify) does not say when its watches are in place, which took up to
    ~1.2 s on a large tree. On Linux trust also waits until every watch is placed."""
    ignore_cache_max: int = 4096
    """Compiled ignore files a workspace keeps between walks (dropped whole past it)."""
    walk_processes: int = 1
    """Above 1, a large walk splits into two processes (``workspace.walk_split``): so in the
    CLI's listing child, whose walk of a large tree outlasts the engine imports; 1 elsewhere."""
    listing_digest_memo: int = 16
    """Listings whose digest is memoised by identity (a watched workspace hands out the same
    list until something changes)."""

    # -- language servers (lsp_bridge.session) ----------------------------------------------------
    position_encodings: tuple[str, ...] = ("utf-8", "utf-16")
    """Offered in ``general.positionEncodings``, preferred first (utf-16 is implied anyway):
    utf-8 offsets need no conversion of the file's bytes."""


@dataclass(frozen=True)
class Collector:
    """The policy for Python's cyclic collector around graph loads, builds and syncs."""

    pause: bool = True
    """Whether ``paused`` switches the collector off."""
    freeze_min_files: int | None = None
    """The smallest graph (in files) ``freeze`` freezes; None: never freeze."""

    @classmethod
    def of(cls, tuning: Tuning) -> Collector:
        """The policy ``tuning`` asks for (``gc_pause``, ``gc_freeze_min_files``)."""
        return cls(pause=tuning.gc_pause, freeze_min_files=tuning.gc_freeze_min_files)

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """The collector off for the block (as it was before, after), when the policy pauses."""
        if not self.pause:
            yield
            return
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            yield
        finally:
            if was_enabled:
                gc.enable()

    def freeze(self, files: int) -> bool:
        """Take what is alive now out of full collections (``gc.freeze``) when a graph of
        ``files`` files was just loaded or built and the policy freezes graphs that big."""
        if self.freeze_min_files is None or files < self.freeze_min_files:
            return False
        gc.freeze()
        return True
