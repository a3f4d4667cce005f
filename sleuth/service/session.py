"""``Session``: the one owner of every process resource a workbench runs on.

docs/architecture.md#no-process-state-in-modules: no process-wide mutable state in modules. What
used to live in module globals belongs to a session: the worker pool ``ast:`` scans fork in a
one-shot process (``match_pool``), the listing a CLI call prefetches in a child process
(``prefetch_listing``), the memos the engines keep between scans (per-request ast matches,
listing digests, server versions) and the policy for Python's cyclic collector (``collector``).
All of it is tuned by one ``Tuning``.

A face makes one session per process (the CLI) or per server (the MCP server's workbench makes
its own); a ``Workbench`` built without one makes its own and closes it with itself. Engines
reach the session's resources through ``query.execute.Engines`` (the workbench wires them) and
the workspace, which is built with the session's tuning and prefetched listing.

``close`` is idempotent: it lets the ast workers go (read-ahead batches not yet started are
dropped; the running ones finish) and stops and reaps a prefetch child nobody adopted. After
it, ``match_pool`` answers None (scans stay serial) and the memos are empty.

Nothing is imported here beyond ``tuning``: the memos, the worker pool's module (tree-sitter)
and the prefetch's are imported when first used, so ``sleuth --help`` stays instant and a CLI
call pays only for what it runs.
"""

from __future__ import annotations

import sys
import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

from sleuth.tuning import Collector, Tuning

if TYPE_CHECKING:
    from collections.abc import Sequence

    from sleuth.ast_search.workers import MatchPool
    from sleuth.listing_prefetch import ListingPrefetch
    from sleuth.lsp_bridge.servers import ServerVersions
    from sleuth.query.ast_memo import AstMemos
    from sleuth.query.listing_digest import ListingDigests

__all__ = ["Session"]


class Session:
    """Process resources (pools, prefetch, memos, collector policy) under one ``Tuning``,
    and the closing of what each workbench on it opened (language servers, the file watcher,
    the registry's writer): one ``close`` lets everything go."""

    def __init__(self, tuning: Tuning | None = None) -> None:
        self.tuning = tuning if tuning is not None else Tuning()
        self.collector = Collector.of(self.tuning)
        """The cyclic collector's policy, handed to the graph code (``GraphKeeper``)."""
        self._ast_memos: AstMemos | None = None
        self._listing_digests: ListingDigests | None = None
        self.server_versions: ServerVersions = {}
        """What probed language servers answered to ``--version`` (``lsp_bridge.servers``)."""
        self.prefetched: ListingPrefetch | None = None
        """The listing children ``prefetch_listing`` started (None until the first)."""
        self._pool: MatchPool | None = None
        self._pool_opened = False
        self._lock = threading.Lock()
        self._held: dict[int, Callable[[], None]] = {}
        """What a workbench opened and closes itself, closed here if it was not (``hold``)."""
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def ast_memos(self) -> AstMemos:
        """Per-request matches of ``ast:`` scans (``query.ast_memo``)."""
        if self._ast_memos is None:
            from sleuth.query.ast_memo import AstMemos

            self._ast_memos = AstMemos(self.tuning)
        return self._ast_memos

    @property
    def listing_digests(self) -> ListingDigests:
        """Listing digests by listing object (``query.listing_digest``)."""
        if self._listing_digests is None:
            from sleuth.query.listing_digest import ListingDigests

            self._listing_digests = ListingDigests(self.tuning)
        return self._listing_digests

    def match_pool(self) -> MatchPool | None:
        """The session's ast worker pool, forked on first use; None where it cannot help
        (one CPU, no ``fork``, inside a worker) or once the session is closed."""
        with self._lock:
            if not self._pool_opened and not self._closed:
                from sleuth.ast_search.workers import open_pool

                self._pool = open_pool(self.tuning.ast_max_workers)
                self._pool_opened = True
                if self._pool is not None:  # a session dropped unclosed lets its workers go
                    weakref.finalize(self, self._pool.drop_queued)
            return self._pool

    def prefetch_listing(
        self,
        root: str,
        *,
        no_ignore: bool,
        scope: str,
        include: Sequence[str],
        exclude: Sequence[str],
        any_size: bool,
    ) -> bool:
        """Start listing ``scope`` of the workspace at ``root`` in a child process while this
        one imports the engines (``sleuth.listing_prefetch``); a workspace built with
        ``prefetched`` then adopts it. False when not started (threads, no ``fork``, closed)."""
        if self._closed:
            return False
        if self.prefetched is None:
            from sleuth.listing_prefetch import ListingPrefetch

            self.prefetched = ListingPrefetch()
        return self.prefetched.start(
            root,
            no_ignore=no_ignore,
            scope=scope,
            include=include,
            exclude=exclude,
            any_size=any_size,
        )

    def hold(self, close: Callable[[], None]) -> Callable[[], None]:
        """Close ``close`` with the session unless released first; the release is returned
        (a workbench holds its servers, watcher and registry, and releases them as it closes)."""
        key = id(close)
        with self._lock:
            self._held[key] = close

        def release() -> None:
            with self._lock:
                self._held.pop(key, None)

        return release

    def close(self) -> None:
        """Close what workbenches left open, let the workers go, discard an unadopted
        prefetch, empty the memos (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            pool, self._pool = self._pool, None
            held, self._held = list(self._held.values()), {}
        for close in reversed(held):
            close()
        if pool is not None:
            pool.drop_queued()
        if self.prefetched is not None:
            self.prefetched.discard()
        if self._ast_memos is not None:
            self._ast_memos.clear()
        if self._listing_digests is not None:
            self._listing_digests.clear()

    def kill_workers(self) -> None:
        """SIGKILL every worker process this process started: only for a process about to
        leave through ``os._exit`` (a normal exit joins the pool's threads, which a kill can
        hang). Without ``multiprocessing`` loaded there are none."""
        mp = sys.modules.get("multiprocessing")
        if mp is None:
            return
        for child in mp.active_children():
            child.kill()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
