"""How recently and how often files were used through sleuth: a SQLite table in ``.sleuth/``.

``find`` in files mode ranks paths by fuzzy score boosted by this frecency
(docs/faces.md#find-files), as fff and VS Code's quick-open rank the files you work on first.
A file is *used* when sleuth registers a selection of it: a ``read`` (of a path, or of a
reference, such as a ``find`` match the agent chose) weighs ``WEIGHTS["read"]``, a ``select``
``WEIGHTS["select"]`` and an edit (``replace``, ``insert``, ``delete``, ``copy``, ``move``,
``undo``, ``rename``) ``WEIGHTS["edit"]``. Weights decay with a half-life of ``HALF_LIFE_S``:
each row keeps the decayed sum at the time of its last use, so an update is one read and one
write of the row. ``scores`` answers ``w / (w + 1)`` per path (0..1: one read is 0.5, a handful
of recent edits nears 1), an absolute scale, so one file's use never lowers another's score.

The table lives in ``.sleuth/frecency.sqlite3`` and is opened on first use through
``SqliteFile`` (reopened when ``.sleuth/`` was deleted). It is a hint, never a requirement: a
failure to read or write it (a locked or broken file) is ignored and ranking falls back to the
fuzzy score. At most ``MAX_PATHS`` rows are kept (the least used are dropped), and one use of
more than ``MAX_PATHS_PER_USE`` files (an ``:all`` over a whole tree) is not a choice of files
and is not recorded.
"""

from __future__ import annotations

import math
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from sleuth.workspace.sqlite_file import SqliteFile

__all__ = ["FrecencyStore", "HALF_LIFE_S", "WEIGHTS", "MAX_PATHS", "MAX_PATHS_PER_USE"]

HALF_LIFE_S = 3 * 24 * 3600.0
"""Half-life of one use: three days (a working session's files stay ahead for a while)."""
WEIGHTS = {"read": 1.0, "select": 1.5, "edit": 2.0}
MAX_PATHS = 10_000
MAX_PATHS_PER_USE = 50
FILE_NAME = "frecency.sqlite3"
_PRUNE_EVERY = 100

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS frecency ("
    "path TEXT PRIMARY KEY, weight REAL NOT NULL, used_at REAL NOT NULL, uses INTEGER NOT NULL)"
)


def _decayed(weight: float, since: float, now: float) -> float:
    return weight * math.pow(0.5, max(0.0, now - since) / HALF_LIFE_S)


def _schema(conn: sqlite3.Connection) -> None:
    conn.execute(_SCHEMA)


class FrecencyStore:
    """The frecency table of one workspace (``state_dir`` makes ``.sleuth/`` when called)."""

    def __init__(self, state_dir: Callable[[], Path]) -> None:
        self._state_dir = state_dir
        self._db: SqliteFile | None = None
        self._lock = threading.Lock()
        self._writes = 0

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            self._db = SqliteFile(
                self._state_dir() / FILE_NAME, timeout=5.0, check_same_thread=False
            )
        conn = self._db.current()
        if conn is None:
            self._state_dir()  # made again if it was deleted
            conn = self._db.open(_schema)
        return conn

    def record(self, paths: Iterable[str], kind: str, *, now: float | None = None) -> None:
        """Note one use of each of ``paths`` (``kind``: read, select, or an edit verb)."""
        chosen = sorted(set(paths))
        if not chosen or len(chosen) > MAX_PATHS_PER_USE:
            return
        weight = WEIGHTS.get(kind, WEIGHTS["edit"])
        at = time.time() if now is None else now
        with self._lock:
            try:
                conn = self._conn()
                conn.execute("BEGIN IMMEDIATE")
                try:
                    for path in chosen:
                        row = conn.execute(
                            "SELECT weight, used_at, uses FROM frecency WHERE path = ?", (path,)
                        ).fetchone()
                        total, uses = weight, 1
                        if row is not None:
                            total += _decayed(row[0], row[1], at)
                            uses += row[2]
                        conn.execute(
                            "INSERT OR REPLACE INTO frecency VALUES (?, ?, ?, ?)",
                            (path, total, at, uses),
                        )
                    self._writes += 1
                    if self._writes % _PRUNE_EVERY == 0:
                        conn.execute(
                            "DELETE FROM frecency WHERE path NOT IN (SELECT path FROM frecency "
                            "ORDER BY weight DESC LIMIT ?)",
                            (MAX_PATHS,),
                        )
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
            except (sqlite3.Error, OSError):
                return  # a hint only (module docstring)

    def scores(self, *, now: float | None = None) -> dict[str, float]:
        """Each recorded path's frecency now, ``w / (w + 1)`` of its decayed weight (0..1)."""
        at = time.time() if now is None else now
        with self._lock:
            try:
                if self._db is None and not (self._state_dir() / FILE_NAME).exists():
                    return {}  # nothing was ever recorded here: no file is made for a read
                rows = self._conn().execute("SELECT path, weight, used_at FROM frecency").fetchall()
            except (sqlite3.Error, OSError):
                return {}
        out: dict[str, float] = {}
        for path, weight, used_at in rows:
            w = _decayed(weight, used_at, at)
            out[path] = w / (w + 1.0)
        return out

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
