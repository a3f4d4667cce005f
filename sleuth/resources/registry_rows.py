"""The rows of the result registry and their SQL: ``ResultRow`` and ``MatchRow``, the schema
of the tables that hold them, and how a result and its matches are inserted.

Every write runs in one ``BEGIN IMMEDIATE`` transaction (``immediate``); ``registry.Registry``
opens the file, decides when and on which thread each write runs, and reads rows back.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sleuth.write_behind import courteous

__all__ = [
    "ResultRow",
    "MatchRow",
    "SCHEMA",
    "SCHEMA_VERSION",
    "TABLE_COLUMNS",
    "insert_result",
    "insert_matches",
    "immediate",
    "decode_result",
    "decode_match",
]

SCHEMA_VERSION = 1
# ``matches`` is a rowid table: its rows hold whole JSON bodies (a function's text in an
# ``ast:`` capture), and a WITHOUT ROWID table keeps them in its key's B-tree, moving them at
# every split: measured on Django's 30k ``def`` matches, inserts took twice and deletes three
# times as long. (A registry made with the older table keeps it; the columns are the same.)
_encode = json.JSONEncoder(ensure_ascii=False).encode  # json.dumps(ensure_ascii=False), made once

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS results (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    request TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    mode TEXT NOT NULL,
    fallback TEXT,
    broadened INTEGER NOT NULL DEFAULT 0,
    complete INTEGER NOT NULL,
    incomplete_reason TEXT,
    total INTEGER,
    stored INTEGER NOT NULL,
    resume_after TEXT,
    skipped TEXT NOT NULL,
    extra TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS matches (
    result_id TEXT NOT NULL,
    n INTEGER NOT NULL,
    path TEXT NOT NULL,
    start_byte INTEGER,
    end_byte INTEGER,
    line INTEGER,
    end_line INTEGER,
    stamp TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (result_id, n)
);
"""

TABLE_COLUMNS = {
    "meta": ("key", "value"),
    "results": (
        "id", "kind", "request", "fingerprint", "mode", "fallback", "broadened", "complete",
        "incomplete_reason", "total", "stored", "resume_after", "skipped", "extra", "created",
    ),
    "matches": (
        "result_id", "n", "path", "start_byte", "end_byte", "line", "end_line", "stamp", "body",
    ),
}  # fmt: skip
"""The columns of each table of ``SCHEMA``: a file whose tables have others is another
format (``CREATE TABLE IF NOT EXISTS`` keeps a table it finds, whatever its columns)."""


@dataclass
class ResultRow:
    """One registered result (the paging state of a search, or a read/select result)."""

    id: str
    kind: str
    request: str
    fingerprint: str
    mode: str
    fallback: str | None
    broadened: bool
    complete: bool
    incomplete_reason: str | None
    total: int | None
    stored: int
    resume_after: str | None
    skipped: dict[str, int]
    extra: dict[str, Any]


@dataclass(frozen=True)
class MatchRow:
    """One stored match: its number, location, stamp and JSON body."""

    n: int
    path: str
    start_byte: int | None
    end_byte: int | None
    line: int | None
    end_line: int | None
    stamp: str
    body: dict[str, Any]


def _json_dict(text: object) -> dict[str, Any] | None:
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except ValueError:  # (json.JSONDecodeError, and a recursion too deep is RecursionError)
        return None
    return value if isinstance(value, dict) else None


def _ints(*values: object, optional: bool = True) -> bool:
    return all(
        (v is None and optional) or (isinstance(v, int) and not isinstance(v, bool)) for v in values
    )


def decode_result(r: Sequence[Any]) -> ResultRow | None:
    """The ``ResultRow`` of a ``results`` row as ``insert_result`` writes it, else None.

    ``.sleuth/`` can arrive with the tree or be damaged (docs/SAFETY.md): a row of other types
    or undecodable JSON is no result of this registry, never a traceback."""
    skipped, extra, request = _json_dict(r[12]), _json_dict(r[13]), _json_dict(r[2])
    if (
        skipped is None
        or extra is None
        or request is None
        or not all(isinstance(v, str) for v in (r[0], r[1], r[3], r[4]))
        or not all(v is None or isinstance(v, str) for v in (r[5], r[8], r[11]))
        or not _ints(r[6], r[7], r[10], optional=False)
        or not _ints(r[9])
        or not all(_ints(v, optional=False) for v in skipped.values())
    ):
        return None
    return ResultRow(
        r[0], r[1], r[2], r[3], r[4], r[5], bool(r[6]), bool(r[7]), r[8], r[9], r[10], r[11],
        skipped, extra,
    )  # fmt: skip


def decode_match(r: Sequence[Any]) -> MatchRow | None:
    """The ``MatchRow`` of a ``matches`` row as ``insert_matches`` writes it, else None."""
    body = _json_dict(r[7])
    if (
        body is None
        or not _ints(r[0], optional=False)
        or not _ints(r[2], r[3], r[4], r[5])
        or not (isinstance(r[1], str) and isinstance(r[6], str))
    ):
        return None
    return MatchRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], body)


def insert_result(conn: sqlite3.Connection, row: ResultRow) -> None:
    conn.execute("DELETE FROM matches WHERE result_id = ?", (row.id,))
    conn.execute(
        "INSERT OR REPLACE INTO results VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            row.id,
            row.kind,
            row.request,
            row.fingerprint,
            row.mode,
            row.fallback,
            int(row.broadened),
            int(row.complete),
            row.incomplete_reason,
            row.total,
            row.stored,
            row.resume_after,
            json.dumps(row.skipped),
            json.dumps(row.extra, ensure_ascii=False),
            time.time(),
        ),
    )


def insert_matches(
    conn: sqlite3.Connection, result_id: str, matches: Iterable[MatchRow], behind: bool = False
) -> None:
    """Insert ``matches``; ``behind``: from a writer behind the answer, which lets the
    foreground thread run between rows (``courteous``)."""
    if behind:
        matches = courteous(matches)
    conn.executemany(
        "INSERT OR REPLACE INTO matches VALUES (?,?,?,?,?,?,?,?,?)",
        (
            (
                result_id,
                m.n,
                m.path,
                m.start_byte,
                m.end_byte,
                m.line,
                m.end_line,
                m.stamp,
                _encode(m.body),
            )
            for m in matches
        ),
    )


class immediate:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (rollback on error): one writer at a time, no deadlock."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def __enter__(self) -> None:
        self._conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self._conn.execute("COMMIT")
        else:
            self._conn.execute("ROLLBACK")
