"""The result registry: every search result and its matches in a SQLite file under ``.sleuth/``.

References survive across CLI invocations and MCP calls (docs/references.md#lifetime),
so results live in a real SQLite database (WAL mode, a schema version, ``busy_timeout`` so two
processes can search and resolve at once). This module stores and fetches rows; it knows nothing of
queries.

Tables: ``results`` (one row per registered result: the request, mode, completeness, how far the
scan got) and ``matches`` (one row per match: path, byte range, lines, the file's stamp at search
time, and the match's JSON body). ``meta`` holds the schema version and the cursor secret. The
schema, the rows and their inserts are ``registry_rows``'.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

from sleuth.errors import Internal, NotFound, locked_error
from sleuth.resources.registry_rows import (
    SCHEMA,
    SCHEMA_VERSION,
    TABLE_COLUMNS,
    MatchRow,
    ResultRow,
    decode_match,
    decode_result,
    immediate,
    insert_matches,
    insert_result,
)
from sleuth.workspace.sqlite_file import SqliteFile
from sleuth.workspace.state_folder import make_state_dir, state_file_id
from sleuth.write_behind import WriteBehind

__all__ = ["Registry"]

MAX_RESULTS = 5000  # beyond these the oldest results are forgotten (their references: not_found)
MAX_MATCH_ROWS = 2_000_000
MAX_BYTES = 512 * 1024 * 1024
"""Live size of the registry file past which the oldest half of the results is forgotten
(matches with captures and context average ~1 KiB: row counts alone let it reach GBs)."""
_PRUNE_EVERY = 200
LOCK_WAIT_S = 60.0
"""How long a statement waits for another process's write lock on the registry (a large
result being stored); past it, ``timeout`` (docs/SAFETY.md#damaged-or-planted-state)."""
WRITE_BEHIND_ROWS = 64
"""A result registered with more matches than this is written by a background thread
(``write_behind``): the caller already holds them and answers with its first page while they
are encoded and inserted. A read of that result, or of everything (pruning, a body search),
first waits for the write, so nothing reads a half-registered result."""


class Registry:
    """A connection to ``<state_dir>/registry.sqlite3`` (one per thread, opened lazily)."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / "registry.sqlite3"
        self._local = threading.local()
        self._puts = 0
        self._behind = WriteBehind("registry")

    def _conn(self) -> sqlite3.Connection:
        """This thread's connection to the registry file now at ``path``.

        ``.sleuth/`` may be deleted at any time (and made again by the next query): a
        connection whose file is no longer the one at ``path`` is closed and replaced
        (``SqliteFile``). A background writer never creates the registry: if it is gone, so is
        the result it carries (``_write_behind``). Before, a writer and the next query could
        both create it while the folder was being deleted, and one's SQLite took the other's
        shared-memory file ("disk I/O error", "locking protocol").
        """
        held: SqliteFile | None = getattr(self._local, "db", None)
        if held is None:
            held = self._local.db = SqliteFile(self.path, timeout=LOCK_WAIT_S)
        conn = held.current()
        if conn is not None:
            return conn
        writer = self._behind.in_writer()
        if not writer:
            if held.dropped or state_file_id(self.path) is None:
                # Writers still busy with a deleted registry finish first: SQLite opens a
                # database's -wal and -shm files by name when it first needs them, so a late
                # one would take those of the registry made here.
                self._behind.wait()
            make_state_dir(self.path.parent)
        try:
            return held.open(self._init_schema, create=not writer)
        except sqlite3.Error as exc:
            raise locked_error(exc, f"the result registry {self.path}") or self._unusable(
                str(exc)
            ) from exc

    def _unusable(self, why: str) -> Internal:
        """The registry file cannot be used (not SQLite, damaged, another sleuth's format):
        a clear error with the remedy, never a guess at its rows (docs/SAFETY.md)."""
        return Internal(
            f"cannot use the result registry {self.path}: {why}; delete the .sleuth/ folder "
            "(only old references are lost)"
        )

    def _init_schema(self, conn: sqlite3.Connection) -> None:
        with immediate(conn):
            for stmt in SCHEMA.split(";"):
                if stmt.strip():
                    conn.execute(stmt)
            for table, columns in TABLE_COLUMNS.items():
                have = tuple(r[1] for r in conn.execute(f"PRAGMA table_info({table})"))
                if have != columns:
                    raise self._unusable(f"its {table} table has other columns")
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            if not meta:
                conn.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
                conn.execute("INSERT INTO meta VALUES ('secret', ?)", (os.urandom(16).hex(),))
            elif meta.get("schema") != str(SCHEMA_VERSION):
                raise self._unusable(
                    f"it has schema {str(meta.get('schema'))[:20]!r}, this sleuth expects "
                    f"{SCHEMA_VERSION}"
                )
            elif _secret(meta.get("secret")) is None:
                raise self._unusable("its cursor secret is missing or damaged")

    def drain(self) -> None:
        """Wait for every pending background write; ``Internal`` if one failed."""
        self._behind.wait()

    def close(self) -> None:
        self.drain()  # (a writer thread closing its own connection does not wait)
        held: SqliteFile | None = getattr(self._local, "db", None)
        if held is not None:
            held.close()

    @property
    def secret(self) -> bytes:
        row = self._conn().execute("SELECT value FROM meta WHERE key = 'secret'").fetchone()
        secret = _secret(None if row is None else row[0])
        if secret is None:  # changed since the file was opened (checked there)
            raise self._unusable("its cursor secret is missing or damaged")
        return secret

    def prune(
        self,
        max_results: int = MAX_RESULTS,
        max_rows: int = MAX_MATCH_ROWS,
        max_bytes: int = MAX_BYTES,
    ) -> int:
        """Forget the oldest results once the registry holds too many; returns results dropped.

        The registry is a cache of answers: an old reference then answers ``not_found``, as
        after deleting ``.sleuth/`` (docs/faces.md#state-sleuth).
        """
        self.drain()
        conn = self._conn()
        count, rows = conn.execute(
            "SELECT count(*), coalesce(sum(stored), 0) FROM results WHERE kind != 'capture'"
        ).fetchone()
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        free = conn.execute("PRAGMA freelist_count").fetchone()[0]
        live = (pages - free) * conn.execute("PRAGMA page_size").fetchone()[0]
        if count <= max_results and rows <= max_rows and live <= max_bytes:
            return 0
        keep = max(1, min(max_results, count) // 2)
        with immediate(conn):
            # newest by insertion order (rowid): results written in one transaction share a
            # timestamp; capture rows (of older engines) go with the result they belong to
            old = [
                r[0]
                for r in conn.execute(
                    "SELECT id FROM results WHERE kind != 'capture' ORDER BY rowid DESC "
                    "LIMIT -1 OFFSET ?",
                    (keep,),
                )
            ]
            conn.execute("CREATE TEMP TABLE IF NOT EXISTS doomed (id TEXT PRIMARY KEY)")
            conn.execute("DELETE FROM doomed")
            conn.executemany("INSERT OR IGNORE INTO doomed VALUES (?)", ((i,) for i in old))
            conn.execute(
                "INSERT OR IGNORE INTO doomed SELECT id FROM results WHERE kind = 'capture' "
                "AND json_extract(extra, '$.from') IN (SELECT id FROM doomed)"
            )
            conn.execute("DELETE FROM matches WHERE result_id IN (SELECT id FROM doomed)")
            conn.execute("DELETE FROM results WHERE id IN (SELECT id FROM doomed)")
        return len(old)

    def find_symbol_path(self, sid: str) -> str | None:
        """The file of the declaration ``sid`` as a past symbols: answer recorded it."""
        if not sid.isalnum():
            return None
        self.drain()
        row = (
            self._conn()
            .execute(
                "SELECT path FROM matches WHERE body LIKE ? LIMIT 1",
                (f'%"id": "{sid}"%',),
            )
            .fetchone()
        )
        return None if row is None else str(row[0])

    def get_result(self, result_id: str) -> ResultRow | None:
        self._behind.wait(result_id)
        row = (
            self._conn()
            .execute(
                "SELECT id, kind, request, fingerprint, mode, fallback, broadened, complete, "
                "incomplete_reason, total, stored, resume_after, skipped, extra "
                "FROM results WHERE id = ?",
                (result_id,),
            )
            .fetchone()
        )
        # a row this sleuth did not write (docs/SAFETY.md): no such result, so a search of
        # that id stores its own over it and a reference to it is not_found
        return None if row is None else decode_result(row)

    def put_result(self, row: ResultRow, matches: Sequence[MatchRow]) -> None:
        """Register ``row`` with its first stored matches (replacing an older row of that id),
        in one transaction. Captures need no rows of their own: their references resolve from
        the spans stored in their match's body. More than ``WRITE_BEHIND_ROWS`` matches are
        written by a background thread (the caller must not change them afterwards), and so
        is any result while such writes are queued: written here, it would wait for the
        database's write lock until they all landed."""
        if len(matches) <= WRITE_BEHIND_ROWS and not self._behind.pending():
            self._behind.wait(row.id)
            self._put(row, matches)
        else:
            self._conn()  # the registry exists before its writer starts (see _write_behind)
            self._behind.submit(row.id, lambda: self._write_behind(row, matches))

    def _write_behind(self, row: ResultRow, matches: Sequence[MatchRow]) -> None:
        # .sleuth/ deleted since the answer (before this write, which then cannot open it,
        # or during it): its results are gone too, and so is this one; no failure to report.
        try:
            self._put(row, matches)
        except (sqlite3.Error, Internal):
            if self.path.exists():
                raise
        finally:
            self.close()  # this thread's own connection

    def _put(self, row: ResultRow, matches: Sequence[MatchRow]) -> None:
        conn = self._conn()
        with immediate(conn):
            insert_result(conn, row)
            insert_matches(conn, row.id, matches, self._behind.in_writer())
        if self._puts % _PRUNE_EVERY == 0:
            self.prune()
        self._puts += 1

    def extend(
        self,
        result_id: str,
        matches: Sequence[MatchRow],
        *,
        resume_after: str | None,
        total: int | None,
        skipped: dict[str, int],
    ) -> None:
        """Append matches found by a later page's scan and record how far the scan got."""
        self._behind.wait(result_id)
        conn = self._conn()
        with immediate(conn):
            insert_matches(conn, result_id, matches)
            conn.execute(
                "UPDATE results SET stored = stored + ?, resume_after = ?, total = ?, skipped = ? "
                "WHERE id = ?",
                (len(matches), resume_after, total, json.dumps(skipped), result_id),
            )

    def matches(self, result_id: str, first: int, count: int | None = None) -> list[MatchRow]:
        """Stored matches numbered ``first`` .. ``first + count - 1`` (all from ``first``)."""
        last = first + count - 1 if count is not None else 2**62
        self._behind.wait(result_id)
        rows = (
            self._conn()
            .execute(
                "SELECT n, path, start_byte, end_byte, line, end_line, stamp, body FROM matches "
                "WHERE result_id = ? AND n BETWEEN ? AND ? ORDER BY n",
                (result_id, first, last),
            )
            .fetchall()
        )
        out = []
        for r in rows:
            match = decode_match(r)
            if match is None:
                self._forget(result_id)
                raise NotFound(
                    f"{result_id} was damaged in .sleuth/registry.sqlite3 and is forgotten; "
                    "search again",
                    details={"result": result_id},
                )
            out.append(match)
        return out

    def _forget(self, result_id: str) -> None:
        """Drop a result and its matches (a damaged one: the next search stores it anew)."""
        conn = self._conn()
        with immediate(conn):
            conn.execute("DELETE FROM matches WHERE result_id = ?", (result_id,))
            conn.execute("DELETE FROM results WHERE id = ?", (result_id,))


def _secret(value: object) -> bytes | None:
    """The cursor secret as ``_init_schema`` stores it (16 random bytes in hex), else None."""
    if not isinstance(value, str) or len(value) != 32:
        return None
    try:
        return bytes.fromhex(value)
    except ValueError:
        return None
