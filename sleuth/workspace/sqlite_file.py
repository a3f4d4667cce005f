"""A connection to one SQLite file of the state folder, reopened when the file is replaced.

``.sleuth/`` may be deleted at any time and made again by the next query
(docs/faces.md#state-sleuth), and both SQLite files in it (the result registry,
``resources/registry.py``, and the graph cache, ``graph/store.py``) are held open across queries. A
connection whose file is gone keeps working on the unlinked inode, so whatever it writes is lost,
and SQLite would open that database's ``-wal`` and ``-shm`` files by name later, taking those of a
new database made at the same path ("disk I/O error", "locking protocol"). ``SqliteFile`` keeps the
connection together with the (device, inode) of the file it opened: ``current`` hands it out only
while the file at the path is still that one and otherwise closes it (SQLite then sees that its file
moved and removes nothing by name), and ``open`` makes the next one. What a holder does around that
(make the folder, wait for its own writers, forget what it believed the file held) stays with it.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

from sleuth.workspace.state_folder import state_file_id

__all__ = ["SqliteFile"]


class SqliteFile:
    """One SQLite file at ``path`` and the connection this holder keeps to it (or none)."""

    __slots__ = ("path", "timeout", "check_same_thread", "conn", "file", "dropped")

    def __init__(
        self, path: str | os.PathLike[str], *, timeout: float, check_same_thread: bool = True
    ) -> None:
        self.path = Path(path)
        self.timeout = timeout  # seconds a statement waits for another process's lock
        self.check_same_thread = check_same_thread
        self.conn: sqlite3.Connection | None = None
        self.file: tuple[int, int] | None = None  # (device, inode) of the file ``conn`` opened
        self.dropped = False  # the last ``current`` closed a connection whose file had gone

    def current(self) -> sqlite3.Connection | None:
        """The kept connection while the file at ``path`` is the one it opened, else None.

        A connection whose file was deleted or replaced since is closed first (``dropped``
        tells the caller that happened: what it knew about the file's contents is void).
        """
        self.dropped = False
        if self.conn is None:
            return None
        here = state_file_id(self.path)
        if here is not None and here == self.file:
            return self.conn
        self.close()
        self.dropped = True
        return None

    def open(
        self, setup: Callable[[sqlite3.Connection], None], *, create: bool = True
    ) -> sqlite3.Connection:
        """Connect (WAL, ``synchronous=NORMAL``), run ``setup`` (the schema), keep and return it.

        ``create=False`` opens an existing file only (``sqlite3.OperationalError`` if there is
        none): a background writer must never make a registry that was deleted under it. A
        failure closes the new connection and leaves none kept; the folder is the caller's.
        """
        self.close()
        if create:
            conn = sqlite3.connect(
                self.path,
                timeout=self.timeout,
                isolation_level=None,
                check_same_thread=self.check_same_thread,
            )
        else:
            conn = sqlite3.connect(
                self.path.absolute().as_uri() + "?mode=rw",
                timeout=self.timeout,
                isolation_level=None,
                check_same_thread=self.check_same_thread,
                uri=True,
            )
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            setup(conn)
        except BaseException:
            conn.close()
            raise
        self.conn = conn
        self.file = state_file_id(self.path)
        return conn

    def close(self) -> None:
        """Close the kept connection, if any (errors closing a broken one are ignored)."""
        conn, self.conn, self.file = self.conn, None, None
        if conn is not None:
            with contextlib.suppress(sqlite3.Error):
                conn.close()
