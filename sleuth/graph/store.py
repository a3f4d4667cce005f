"""The graph cache (``.sleuth/graph.db``, SQLite): a graph restored without re-tagging.

One row per file: its record and the result of resolving it (edges with occurrences, the files
and module keys it depended on), each a ``marshal``-ed tuple of plain values, with the stat
signature (size, mtime) the caller last saw — enough to restore the graph without tagging or
resolving anything. A second table holds the edges a language server confirmed.

Writes are incremental: ``GraphStore.write`` stores only the rows of files whose record or
resolution changed since the last write (``Graph.take_changes``), in one transaction, so an edit
costs a few rows rather than the whole cache. SQLite's journal (WAL) keeps a torn write from
corrupting it. Each write moves an ``epoch``; a store that finds another process moved it since
it loaded rewrites every row, so the file always holds one process's consistent state.

It is a cache: a missing, unreadable, corrupt or older-version file loads as an empty graph (and
is recreated), and ``sync`` (``build``: only changed files re-tagged) then rebuilds everything.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import sqlite3
import sys
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from sleuth.graph.build import BlobSources, Graph, encode_blobs
from sleuth.graph.partial import load_part
from sleuth.tuning import Collector
from sleuth.workspace.sqlite_file import SqliteFile
from sleuth.workspace.state_folder import STATE_DIR, make_state_dir
from sleuth.write_behind import WriteBehind, courteous

__all__ = [
    "GraphStore",
    "save",
    "load",
    "CACHE_VERSION",
    "DEFAULT_CACHE",
    "Stat",
]

CACHE_VERSION = 7
"""Bumped whenever what a stored row means changes (5: ``member:`` keys in resolutions: a
resolution stored before them misses the member reads an update needs), so older caches are
rebuilt rather than misread."""
DEFAULT_CACHE = ".sleuth/graph.db"
_FORMAT = f"{CACHE_VERSION}/marshal-{marshal.version}/py{sys.version_info[0]}.{sys.version_info[1]}"

Stat = tuple[int, int, int]
"""(size, mtime_ns, ctime_ns) of a file as last seen: a file still showing it need not be
re-read (ctime moves on every write and ``utime``, so ``cp -p`` of other text of the same size
is seen, docs/SAFETY.md)."""

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER,"
    " ctime_ns INTEGER, record BLOB NOT NULL, resolution BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS semantic (u TEXT NOT NULL, v TEXT NOT NULL, k TEXT NOT NULL,"
    " owner TEXT NOT NULL, PRIMARY KEY (u, v, k))",
)
_BAD = (sqlite3.DatabaseError, ValueError, TypeError, EOFError, KeyError, IndexError)


def _create_tables(db: sqlite3.Connection) -> None:
    for statement in _SCHEMA:
        db.execute(statement)


class GraphStore:
    """One cache file, kept open: ``load`` once, then ``write`` after every change."""

    def __init__(self, path: str, *, collector: Collector | None = None) -> None:
        """``collector``: the session's policy for the cyclic collector, paused while a load
        restores millions of small acyclic objects (default: paused)."""
        self.path = path
        self._collector = collector if collector is not None else Collector()
        # One keeper uses it at a time, from whichever thread serves the query.
        self._sqlite = SqliteFile(path, timeout=5.0, check_same_thread=False)
        self._epoch: str | None = None  # the epoch this process's state matches; None: unknown
        # ``write(behind=True)``: rows taken from the graph at once, stored by a background
        # thread; every other use of the connection waits for it
        self._behind = WriteBehind("graph cache")

    # -- connection ---------------------------------------------------------------------------

    @property
    def _db(self) -> sqlite3.Connection | None:
        return self._sqlite.conn

    def _connect(self) -> sqlite3.Connection:
        db = self._sqlite.current()
        if db is not None:
            return db
        if self._sqlite.dropped:
            # .sleuth/ deleted (and maybe made again): the file now there holds none of this
            # process's rows, so the next write rewrites them all
            self._epoch = None
        folder = Path(self.path).absolute().parent
        if folder.name == STATE_DIR:  # a workspace's .sleuth/ (deleted since?) with its marker
            make_state_dir(folder)
        else:
            folder.mkdir(parents=True, exist_ok=True)
        return self._sqlite.open(_create_tables)

    def wait(self) -> None:
        """Wait for a write made behind (``write(behind=True)``) to be stored."""
        self._behind.wait()

    def close(self) -> None:
        """Wait for a pending write, close the connection (a later call reopens it)."""
        self._behind.wait()
        self._sqlite.close()

    def _discard(self) -> None:
        """Delete an unusable cache file (and its journal) so the next use starts afresh."""
        self.close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(OSError):
                os.unlink(self.path + suffix)
        self._epoch = None

    def _meta(self, db: sqlite3.Connection, key: str) -> str | None:
        row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    # -- reading ------------------------------------------------------------------------------

    def load(self) -> tuple[Graph, dict[str, Stat]]:
        """The cached graph and each file's stat signature; empty when nothing usable is there."""
        self._behind.wait()
        if not os.path.exists(self.path):
            return Graph(), {}
        with self._collector.paused():
            try:
                return self._load()
            except _BAD:
                self._discard()
                return Graph(), {}

    def _load(self) -> tuple[Graph, dict[str, Stat]]:
        db = self._connect()
        db.execute("BEGIN")
        try:
            if self._meta(db, "format") != _FORMAT:
                return Graph(), {}  # another version's rows: the next write replaces them all
            epoch = self._meta(db, "epoch")
            semantic = _semantic(db)
            rows = db.execute(
                "SELECT path, size, mtime_ns, ctime_ns, record, resolution FROM files "
                "ORDER BY rowid"
            )
            stats: dict[str, Stat] = {}
            decoded = []
            for path, size, mtime, ctime, rec, res in rows:
                decoded.append((str(path), marshal.loads(rec), marshal.loads(res)))
                if size is not None and mtime is not None and ctime is not None:
                    stats[path] = (int(size), int(mtime), int(ctime))
        finally:
            db.execute("COMMIT")
        graph = Graph()
        graph.restore_rows(decoded, semantic)
        self._epoch = epoch
        return graph, stats

    def load_part(
        self, stats: Mapping[str, Stat], wanted: Callable[[list[str]], list[str]]
    ) -> Graph | None:
        """Only the part of the cached graph that the views of the files ``wanted`` read
        (``partial.load_part``), when the cache holds exactly the files of ``stats`` with
        those signatures; None when it does not or the part would not pay (load in full)."""
        self._behind.wait()
        if not os.path.exists(self.path):
            return None
        with self._collector.paused():
            try:
                db = self._connect()
                db.execute("BEGIN")
                try:
                    if self._meta(db, "format") != _FORMAT:
                        return None
                    return load_part(db, stats, wanted, _semantic(db))
                finally:
                    db.execute("COMMIT")
            except _BAD:
                return None  # a full load decides what to do with a bad cache

    # -- writing ------------------------------------------------------------------------------

    def write(
        self,
        graph: Graph,
        stats: Mapping[str, Stat] | None = None,
        touched: Iterable[str] = (),
        *,
        full: bool = False,
        behind: bool = False,
    ) -> int:
        """Store what changed in ``graph`` since the last write; returns the rows written.

        ``stats`` gives the stat signature stored with each written row; ``touched`` files
        only have their signature updated. Every row is rewritten when ``full``, when the file
        holds another process's (or version's) state, or after a failed write. Errors are
        swallowed (a cache write is only lost speed) and the next write is then a full one.

        ``behind``: the rows are taken from the graph now and stored by a background thread
        (an edit's few rows, or a cold build's every row, while the query goes on answering);
        a write of some rows that finds another writer's epoch is left to the next write,
        made here, which rewrites every row.
        """
        self._behind.wait()
        stats = stats or {}
        changed, gone, semantic = graph.take_changes()
        touched = [p for p in touched if p not in changed]
        full = full or self._epoch is None  # this store never wrote or read a consistent state
        if not (changed or gone or semantic is not None or touched or full):
            return 0

        def every() -> _Rows:  # every row, replacing whatever the file holds
            return _Rows.of(
                graph, stats, set(graph.files()), set(), graph.semantic_edges(), touched, whole=True
            )

        if behind:
            rows = every() if full else _Rows.of(graph, stats, changed, gone, semantic, touched)

            def unless_moved(db: sqlite3.Connection) -> _Rows | None:
                # another process (or a failed write) moved the file on since: these rows
                # alone would mix two states, so the next write (made here) rewrites them all
                same = self._epoch is not None and self._meta(db, "epoch") == self._epoch
                return rows if rows.whole or same else None

            self._behind.submit(self.path, lambda: self._store(unless_moved))
            return len(rows.files)

        def rows_of(db: sqlite3.Connection) -> _Rows:
            if full or self._epoch is None or self._meta(db, "epoch") != self._epoch:
                return every()
            return _Rows.of(graph, stats, changed, gone, semantic, touched)

        return self._store(rows_of)

    def _store(self, rows_of: Callable[[sqlite3.Connection], _Rows | None]) -> int:
        """One transaction: the rows ``rows_of`` gives (None: nothing, rolled back)."""
        try:
            return self._transaction(rows_of)
        except sqlite3.Error:
            with contextlib.suppress(sqlite3.Error):
                if self._db is not None and self._db.in_transaction:
                    self._db.execute("ROLLBACK")
            self._epoch = None
            return 0

    def _transaction(self, rows_of: Callable[[sqlite3.Connection], _Rows | None]) -> int:
        try:
            db = self._connect()
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.DatabaseError:
            self._discard()  # not a database (or a broken one): start a new file
            db = self._connect()
            db.execute("BEGIN IMMEDIATE")
        rows = rows_of(db)
        if rows is None:
            db.execute("ROLLBACK")
            self._epoch = None
            return 0
        rows.insert(db, behind=self._behind.in_writer())
        epoch = uuid.uuid4().hex
        db.executemany(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)", (("format", _FORMAT), ("epoch", epoch))
        )
        db.execute("COMMIT")
        self._epoch = epoch
        return len(rows.files)


_FileRow = tuple[str, int | None, int | None, int | None, BlobSources]
"""(path, size, mtime, ctime, what its record and resolution rows are encoded from)."""


@dataclass
class _Rows:
    """What one write stores, taken from the graph: whole file rows, the paths of files gone,
    the signatures of files only touched, and the confirmed edges (None: unchanged)."""

    files: list[_FileRow]  # encoded when stored (``insert``: by the writer when behind)
    gone: list[str]
    touched: list[tuple[int | None, int | None, int | None, str]]
    semantic: list[tuple[str, str, str, str]] | None
    whole: bool = False  # every file's row: whatever the file holds is replaced

    @classmethod
    def of(
        cls,
        graph: Graph,
        stats: Mapping[str, Stat],
        changed: set[str],
        gone: set[str],
        semantic: dict[tuple[str, str, str], str] | None,
        touched: list[str],
        *,
        whole: bool = False,
    ) -> _Rows:
        return cls(
            [_file_row(graph, p, stats.get(p)) for p in sorted(changed)],
            sorted(gone),
            [(*stats[p], p) if p in stats else (None, None, None, p) for p in touched],
            None
            if semantic is None
            else [(u, v, k, o) for (u, v, k), o in sorted(semantic.items())],
            whole,
        )

    def insert(self, db: sqlite3.Connection, behind: bool = False) -> None:
        """Store the rows; ``behind``: from a writer behind the answer (``courteous``)."""
        if self.whole:
            # made again, not emptied: a file of an older format holds a table of other columns
            db.execute("DROP TABLE IF EXISTS files")
            db.execute(_SCHEMA[1])
        db.executemany("DELETE FROM files WHERE path = ?", ((p,) for p in self.gone))
        files = courteous(self.files) if behind else self.files
        db.executemany(
            "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?)",
            (
                (p, size, mtime, ctime, *encode_blobs(*sources))
                for p, size, mtime, ctime, sources in files
            ),
        )
        db.executemany(
            "UPDATE files SET size = ?, mtime_ns = ?, ctime_ns = ? WHERE path = ?", self.touched
        )
        if self.semantic is not None:
            db.execute("DELETE FROM semantic")
            db.executemany("INSERT INTO semantic VALUES (?, ?, ?, ?)", self.semantic)


def _semantic(db: sqlite3.Connection) -> dict[tuple[str, str, str], str]:
    """The confirmed edges as stored: (source, target, kind) -> the file that owns each."""
    return {
        (str(u), str(v), str(k)): str(o)
        for u, v, k, o in db.execute("SELECT u, v, k, owner FROM semantic")
    }


def _file_row(graph: Graph, path: str, stat: Stat | None) -> _FileRow:
    size, mtime, ctime = stat if stat is not None else (None, None, None)
    return (path, size, mtime, ctime, graph.blob_sources(path))


def save(graph: Graph, path: str) -> None:
    """Write the whole graph to the cache at ``path`` (parent folders created)."""
    store = GraphStore(path)
    try:
        store.write(graph, full=True)
    finally:
        store.close()


def load(path: str) -> Graph:
    """The graph cached at ``path``; an empty graph when there is no usable cache."""
    store = GraphStore(path)
    try:
        return store.load()[0]
    finally:
        store.close()
