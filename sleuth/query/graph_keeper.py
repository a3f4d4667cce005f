"""The reference graph of one workspace, kept in step with its files for ``graph:`` queries
(docs/query.md#graph-the-reference-graph).

``GraphKeeper`` keeps one workspace's graph in step with its files: a file whose size and mtime
are those it was last read at is not read again (a file modified in the last two seconds always
is: its mtime may not move on a quick second write); a file read is re-tagged only when its
stamp changed. Tags come from the tags extractor (``ast_search``), kept with each file's tree in
the ``TreeCache`` so that an edit re-tags only the statements it touched (``tags_update``; the
shared ``TagsCache`` when there is no tree cache) — or, for a cold build of many files, from
worker processes on every core — and
the graph (``sleuth.graph``) is cached in ``.sleuth/graph.db``, where an update rewrites only the
rows of the files it changed, so a new process neither re-tags nor re-resolves anything. A
watched workspace skips the stat pass while nothing changed. What a query answers from the
graph is ``graph_mode``'s.
"""

from __future__ import annotations

import bisect
import contextlib
import marshal
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from sleuth.ast_search import TreeCache, language_for_path
from sleuth.ast_search.tags import FileTags, extract_tag_tuples, extract_tags, tags_supported
from sleuth.ast_search.tags_update import tags_of
from sleuth.graph import DEFAULT_CACHE, FileRecord, Graph, GraphStore, make_record
from sleuth.graph.rank import preload as preload_rank
from sleuth.graph.records import record_row, record_to_row
from sleuth.graph.workers import can_fork, worker_count
from sleuth.languages import BY_NAME
from sleuth.query.symbols_mode import TagsCache
from sleuth.tuning import Collector, Tuning
from sleuth.workspace import FileEntry, FileText, Workspace
from sleuth.workspace.listing_patch import replaced_entries

__all__ = ["GraphKeeper"]

_RACY_NS = 2_000_000_000
"""A file modified this recently may change again within its mtime's granularity unseen:
its stat signature is not trusted (it is re-read and re-hashed until it is older)."""

_Job = tuple[str, str, bytes, str]  # (path, language, bytes, stamp)


class GraphKeeper:
    """The graph of one workspace, synced by stat signature and stamp before each query.

    Pools and thresholds follow the workspace's ``Tuning``; the cyclic collector follows
    ``collector``, the session's policy (``Collector.of`` the tuning when none is given).
    """

    def __init__(self, ws: Workspace, collector: Collector | None = None) -> None:
        self._ws = ws
        self._tuning = ws.tuning
        self._collector = collector if collector is not None else Collector.of(ws.tuning)
        self._graph: Graph | None = None
        self._store = GraphStore(self.cache_path, collector=self._collector)
        with contextlib.suppress(OSError):  # the whole-graph JSON cache of earlier versions
            os.unlink(os.path.join(os.path.dirname(self.cache_path), "graph.json"))
        self._stats: dict[str, tuple[int, int, int]] = {}  # path -> (size, mtime, ctime) read at
        self._synced_at: int | None = None
        self._covered: dict[str, bool] = {}  # path -> has a language (graph files)
        self._listing: Sequence[FileEntry] | None = None  # the listing of the last sync
        self._racy: set[str] = set()  # files read too soon after a change to trust their stat
        self.parts = 0  # answers read from a part of the cache (``part``)

    @property
    def cache_path(self) -> str:
        return str(self._ws.root / DEFAULT_CACHE)

    def close(self) -> None:
        self._store.close()
        if self._graph is not None:
            # frozen objects are never collected as cycles: free the graph's contents by
            # reference counting (networkx's graph object and its views form a cycle)
            self._graph.g.clear()
            self._graph = None

    def _freeze(self, files: int) -> None:
        """Take what is alive now — mostly the graph just loaded or built (``files`` files; on
        Django some 600,000 dicts and lists) — out of the cyclic collector's full passes, when
        the session's policy freezes graphs that big (``Collector.freeze``).

        Otherwise every dozen edits or so a full pass walks all of it (0.4-0.7 s on Django)
        inside whatever query happens to run; frozen, a full pass walks only what was made
        since (tens of ms). Updates free what they replace by reference counting (the graph's
        dicts, tuples and records form no cycles), so nothing leaks while the keeper lives,
        and ``close`` empties the graph. It is process-wide: the host's objects alive now are
        exempt from full passes too (a cycle among them that becomes garbage stays), which is
        why a small graph, cheap to walk, is not frozen, and why a library user may ask for a
        policy that never freezes (``Tuning.gc_freeze_min_files = None``).
        """
        self._collector.freeze(files)

    def part(
        self, files: Sequence[FileEntry], wanted: Callable[[list[str]], list[str]]
    ) -> Graph | None:
        """For a one-shot process: only the part of a current cache that the views of the
        files ``wanted`` read (``graph.partial``; ``files`` is the whole workspace's listing),
        or None (load and sync in full: ``graph``). Never kept: the next ``graph`` loads
        everything, and nothing is written from a part."""
        if self._graph is not None:
            return None
        stats = {e.path: (e.size, e.mtime_ns, e.ctime_ns) for e in files if self._covers(e.path)}
        part = self._store.load_part(stats, wanted)
        if part is not None:
            self.parts += 1
        return part

    def flush(self) -> int:
        """Write what changed since the last write (e.g. edits confirmed by a language server)."""
        if self._graph is None:
            return 0
        with contextlib.suppress(OSError):
            return self._store.write(self._graph, self._stats)
        return 0

    def graph(self, tags: TagsCache, trees: TreeCache | None, files: Sequence[FileEntry]) -> Graph:
        """The graph, synced with ``files`` (the whole workspace's listing)."""
        generation = self._ws.generation
        if self._graph is not None and generation is not None and generation == self._synced_at:
            return self._graph
        # The cyclic collector stays off for the sync (the session's policy permitting): a load
        # or a build allocates millions of small acyclic objects, and whatever collection came
        # first after it (re-enabled before the graph is frozen) would walk them all once more
        # — 0.2-0.4 s on Django.
        with self._collector.paused():
            try:
                return self._sync(tags, trees, files, generation)
            except BaseException:
                # half synced (the stat signatures already say "seen"): the next query starts
                # again from the cache, which only ever holds whole updates
                self._graph = None
                raise

    def _sync(
        self,
        tags: TagsCache,
        trees: TreeCache | None,
        files: Sequence[FileEntry],
        generation: int | None,
    ) -> Graph:
        loaded = 0  # files of a graph just loaded from the cache
        if self._graph is None:
            self._graph, self._stats, self._listing = Graph(), {}, None
            with contextlib.suppress(Exception):  # a bad cache is only lost speed
                self._graph, stats = self._store.load()
                self._stats = {p: s for p, s in stats.items() if self._graph.has_file(p)}
                loaded = self._graph.file_count()
        graph = self._graph
        changes, touched, pooled = self._changes(graph, files, tags, trees)
        tuning, collector = self._tuning, self._collector
        if pooled:  # taken in as the workers tag them
            stream = _tag_stream(changes, pooled, tags, trees, tuning)
            stream = _reported(stream, self._ws, len(changes) + len(pooled))
            graph.apply(stream, parallel=True, tuning=tuning, collector=collector)
            self._ws.report("")
        elif changes:
            graph.apply(changes, parallel=True, tuning=tuning, collector=collector)
        self._freeze(max(loaded, len(changes) + len(pooled)))
        if changes or pooled or touched:
            with contextlib.suppress(OSError):
                self._ws.state_dir  # noqa: B018 - creates .sleuth/ with its .gitignore
                self._store.write(graph, self._stats, touched, behind=True)
        self._synced_at = generation
        return graph

    def _to_check(self, files: Sequence[FileEntry]) -> list[FileEntry] | None:
        """The entries that may have changed since the last sync (None: look at them all).

        A watched workspace patches its listing by replacing the entries of the files that
        changed (``listing_patch``): compared with the listing of the last sync entry by entry
        (by identity, in C), only those and the files still too recent to trust need a look
        — not every file's size and mtime. A listing of another length, or whose paths moved,
        is looked at whole.
        """
        prev = self._listing
        replaced = replaced_entries(prev, files) if prev is not None else None
        if prev is None or replaced is None:
            return None
        out = []
        for i in replaced:
            if prev[i].path != files[i].path:
                return None
            out.append(files[i])
        for path in self._racy:
            i = bisect.bisect_left(files, path, key=lambda f: f.path)
            if i < len(files) and files[i].path == path and files[i] not in out:
                out.append(files[i])
        return out

    def _covers(self, path: str) -> bool:
        """Whether ``path`` is in a language the graph covers (memoised per path)."""
        covered = self._covered.get(path)
        if covered is None:
            covered = self._covered[path] = language_for_path(path) is not None
        return covered

    def _changes(
        self, graph: Graph, files: Sequence[FileEntry], tags: TagsCache, trees: TreeCache | None
    ) -> tuple[dict[str, FileRecord | None], list[str], list[tuple[FileText, str]]]:
        """Records of the files whose content changed (None: gone), files only touched, and
        the changed files left to tag in worker processes (many: a cold build)."""
        stats = self._stats
        racy = time.time_ns() - _RACY_NS
        jobs: list[tuple[FileText, str]] = []
        touched: list[str] = []
        changes: dict[str, FileRecord | None] = {}
        unreadable: set[str] = set()
        check = self._to_check(files)
        for entry in files if check is None else check:
            path = entry.path
            if not self._covers(path):
                continue
            sig = (entry.size, entry.mtime_ns, entry.ctime_ns)
            if stats.get(path) == sig:
                continue  # same size, mtime and ctime as when its stamp was read: not re-read
            ft = self._ws.read(path)
            if ft is None:
                unreadable.add(path)  # not in the graph
                stats.pop(path, None)
                continue
            if entry.mtime_ns < racy:
                stats[path] = sig
                self._racy.discard(path)
            else:
                stats.pop(path, None)
                self._racy.add(path)
            same = graph.has_file(path) and ft.stamp and graph.stamp(path) == ft.stamp
            # a row with the right stamp is kept only if it fits the bytes: a planted or
            # copied cache can carry any names and offsets (docs/SAFETY.md#damaged-or-planted-state)
            if same and graph.fits(path, ft.data):
                touched.append(path)
            else:
                jobs.append((ft, language_for_path(path) or ""))
        self._listing = files
        if check is not None:
            changes.update((p, None) for p in unreadable if graph.has_file(p))
        else:
            seen = {e.path for e in files if self._covers(e.path)} - unreadable
            new = sum(1 for ft, _ in jobs if not graph.has_file(ft.path))
            if len(seen) - new != graph.file_count():  # some file of the graph is gone
                for path in graph.files():
                    if path not in seen:
                        changes[path] = None
                        stats.pop(path, None)
        if len(jobs) >= self._tuning.graph_pool_min_files and can_fork():
            return changes, touched, jobs
        for ft, lang in jobs:
            changes[ft.path] = _record_here(ft, lang, tags, trees)
        return changes, touched, []


def _record_here(ft: FileText, lang: str, tags: TagsCache, trees: TreeCache | None) -> FileRecord:
    """The record of one file tagged in this process (re-tagged where an edit touched it)."""
    file_tags, data = _tags_of(ft, lang, tags, trees)
    return make_record(file_tags, data, ft.stamp)


def _tags_of(
    ft: FileText, lang: str, tags: TagsCache | None, trees: TreeCache | None
) -> tuple[FileTags, bytes | None]:
    if not tags_supported(lang):
        if lang in BY_NAME and not BY_NAME[lang].declares:  # data and markup declare nothing
            return FileTags(ft.path, lang, complete=True, reason=None), ft.data
        return FileTags(ft.path, lang, complete=False, reason=f"no tags rules for {lang}"), ft.data
    if trees is not None:  # its tags are kept with its tree: an edit re-tags what it touched
        return tags_of(trees, ft.path, ft.stamp, ft.data, lang), ft.data
    if tags is None:
        return extract_tags(ft.path, ft.data, lang), ft.data
    return tags.get(ft, lang, None), ft.data


def _tag_chunk(jobs: list[_Job]) -> list[tuple[str, bytes]]:
    """Tag files in a worker process: each file's record row as the graph cache stores it
    (``marshal``-ed: quick to send back and read, and the cache writes these very bytes)."""
    out = []
    for path, lang, data, stamp in jobs:
        if tags_supported(lang):  # as tuples: no SymbolDef/SymbolRef objects on the way
            name, defs, refs, complete, reason = extract_tag_tuples(path, data, lang)
            row = record_row(name, stamp, complete, reason, defs, refs, data)
        else:
            file_tags, _ = _tags_of(FileText(path, data, stamp), lang, None, None)
            row = record_to_row(make_record(file_tags, data, stamp))
        out.append((path, marshal.dumps(row)))
    return out


_REPORT_EVERY = 64


def _reported(
    stream: Iterator[tuple[str, FileRecord | bytes | None]], ws: Workspace, total: int
) -> Iterator[tuple[str, FileRecord | bytes | None]]:
    """``stream``, reporting the build's progress to the workspace every few files: a cold
    graph build takes seconds (docs/faces.md#progress)."""
    for done, item in enumerate(stream, 1):
        if done % _REPORT_EVERY == 0:
            ws.report("building the reference graph", done, total)
        yield item


def _tag_stream(
    first: dict[str, FileRecord | None],
    jobs: list[tuple[FileText, str]],
    tags: TagsCache,
    trees: TreeCache | None,
    tuning: Tuning,
) -> Iterator[tuple[str, FileRecord | bytes | None]]:
    """``first``, then the files of ``jobs`` tagged on every core, in order, as they come;
    if the pool cannot start or breaks, the files not tagged yet are tagged here."""
    yield from first.items()
    done = 0
    with contextlib.suppress(OSError, BrokenProcessPool):
        for item in _tag_in_pool(jobs, tuning):
            yield item
            done += 1
    for ft, lang in jobs[done:]:
        yield ft.path, _record_here(ft, lang, tags, trees)


def _tag_in_pool(jobs: list[tuple[FileText, str]], tuning: Tuning) -> Iterator[tuple[str, bytes]]:
    """Tag many files in forked workers: each file's ``marshal``-ed record row, in the order
    of ``jobs`` (the graph keeps them as rows: they are never decoded into records)."""
    workers = worker_count()
    most, least = tuning.graph_tag_chunk, tuning.graph_tag_min_chunk
    # In order (the graph takes files in as they come, and its node order is the listing's),
    # in chunks that shrink towards the end so that no worker is left with a long tail.
    chunks: list[list[_Job]] = []
    i = 0
    while i < len(jobs):
        size = max(least, min(most, (len(jobs) - i) // (4 * workers)))
        chunks.append([(ft.path, lang, ft.data, ft.stamp) for ft, lang in jobs[i : i + size]])
        i += size
    ctx = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        results = pool.map(_tag_chunk, chunks)  # a fork pool forks all its workers here
        # Meanwhile the ranking's libraries load (the main process mostly waits for rows):
        # after the forks, and joined before any later one (resolution's), so that no child
        # is forked in the middle of an import.
        loader = threading.Thread(target=preload_rank, name="sleuth-preload", daemon=True)
        loader.start()
        try:
            for done in results:
                yield from done
        finally:
            loader.join()
