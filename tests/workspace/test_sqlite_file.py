"""``SqliteFile``: a kept SQLite connection is handed out only while its file is still there."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from sleuth.workspace.sqlite_file import SqliteFile


def _table(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE IF NOT EXISTS t (v TEXT)")


def test_a_connection_is_kept_while_its_file_stays(tmp_path: Path) -> None:
    held = SqliteFile(tmp_path / "x.db", timeout=1.0)
    assert held.current() is None and not held.dropped  # nothing opened yet
    conn = held.open(_table)
    assert held.current() is conn and not held.dropped
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_deleted_or_replaced_file_drops_the_connection(tmp_path: Path) -> None:
    path = tmp_path / "x.db"
    held = SqliteFile(path, timeout=1.0)
    old = held.open(_table)
    old.execute("INSERT INTO t VALUES ('old')")
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    assert held.current() is None and held.dropped
    with pytest.raises(sqlite3.ProgrammingError):
        old.execute("SELECT 1")  # closed, so nothing more goes to the unlinked file
    new = held.open(_table)
    assert new.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 0

    other = SqliteFile(path, timeout=1.0)
    other.open(_table)
    path.rename(tmp_path / "moved.db")  # a different file now takes the path
    SqliteFile(path, timeout=1.0).open(_table)
    assert other.current() is None and other.dropped


def test_open_without_create_never_makes_the_file(tmp_path: Path) -> None:
    held = SqliteFile(tmp_path / "gone.db", timeout=1.0)
    with pytest.raises(sqlite3.OperationalError):
        held.open(_table, create=False)
    assert not (tmp_path / "gone.db").exists() and held.conn is None


def test_a_failing_setup_keeps_no_connection(tmp_path: Path) -> None:
    def broken(conn: sqlite3.Connection) -> None:
        raise ValueError("wrong schema")

    held = SqliteFile(tmp_path / "x.db", timeout=1.0)
    with pytest.raises(ValueError):
        held.open(broken)
    assert held.conn is None and held.current() is None
