"""The semantic index file (``.sleuth/semantic.sqlite3``): chunks and vectors per file.

One row per indexed file: its stat signature (size, mtime_ns) and stamp as last indexed, its
chunks (``marshal``-ed tuples: range, lines, kind, title, term counts, length, text digest,
first line's terms) and its vectors (float16, ``dim`` per chunk: the index stores two of the
encoder's vectors a chunk, its text's and its name's). A sync rewrites only the rows of files whose stamp changed and
deletes the rows of files that went away, in one transaction. It is a cache: a missing,
corrupt, or other-version file (format, or the encoder's ``model_id``: vectors of two models are
never compared) loads as empty and is rebuilt; ``.sleuth/`` may
be deleted at any time (``SqliteFile`` reopens it).
"""

from __future__ import annotations

import marshal
import re
import sqlite3
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sleuth.semantic.encoder import Vectors
from sleuth.workspace.sqlite_file import SqliteFile
from sleuth.workspace.state_folder import make_state_dir
from sleuth.workspace.text import whole_chars

__all__ = ["IndexedChunk", "FileRow", "SemanticStore", "FILE_NAME", "FORMAT", "format_of"]

FILE_NAME = "semantic.sqlite3"
FORMAT = 6
"""Bumped when what a row means changes; a file of another format is rebuilt."""


def format_of(model_id: str, dim: int) -> str:
    """The ``meta`` format value of an index of vectors from ``model_id`` (``dim`` wide)."""
    return f"{FORMAT}/{model_id}/{dim}/marshal-{marshal.version}"


_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, size INTEGER NOT NULL,"
    " mtime_ns INTEGER NOT NULL, stamp TEXT NOT NULL, chunks BLOB NOT NULL,"
    " vectors BLOB NOT NULL)",
)
_BAD = (sqlite3.DatabaseError, ValueError, TypeError, EOFError, KeyError, IndexError)


@dataclass(frozen=True)
class IndexedChunk:
    """A chunk as the index keeps it: where it is and the counts BM25 needs."""

    start: int
    end: int
    line: int
    end_line: int
    kind: str
    title: str
    terms: dict[str, int]
    length: int
    digest: str = ""
    """A hash of the text the chunk's vector was made from: a re-indexed file reuses the
    vectors of its chunks whose text did not change."""
    head: frozenset[str] = frozenset()
    """The terms of its first line (a declaration's signature: its name and parameters)."""


@dataclass
class FileRow:
    """One file's part of the index, as of the bytes with ``stamp``."""

    path: str
    size: int
    mtime_ns: int
    stamp: str
    chunks: list[IndexedChunk] = field(default_factory=list)
    vectors: Vectors = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))
    confirmed: str = ""  # the stamp of bytes the chunks were found to fit (not stored)

    def fits(self, data: bytes) -> bool:
        """Whether every chunk fits ``data``, the bytes its stamp names (a stamp is a hash
        anyone can compute: docs/SAFETY.md#damaged-or-planted-state): a non-empty range inside
        the file that cuts no UTF-8 character, the lines of that range, a kind that is a word
        and a title whose name is in the range (and whose container is in the file)."""
        starts = [0, *(m.end() for m in _NEWLINE.finditer(data))]
        try:
            for c in self.chunks:
                if c.start >= c.end or not whole_chars(data, c.start, c.end):
                    return False
                if (c.line, c.end_line) != (
                    bisect_right(starts, c.start),
                    bisect_right(starts, c.end - 1),
                ):
                    return False
                if not _KIND.fullmatch(c.kind) or (c.kind == "window") != (c.title == ""):
                    return False
                *outer, name = c.title.split(".")
                if name.encode() not in data[c.start : c.end]:
                    return False
                if any(part.encode() not in data for part in outer):
                    return False
        except (TypeError, AttributeError, UnicodeError):
            return False  # values of other types tell nothing
        return True


_KIND = re.compile(r"[a-z][a-z0-9_-]{0,39}")
_NEWLINE = re.compile(b"\n")


def _pack(row: FileRow) -> tuple[bytes, bytes]:
    chunks = marshal.dumps(
        [
            (
                c.start,
                c.end,
                c.line,
                c.end_line,
                c.kind,
                c.title,
                c.terms,
                c.length,
                c.digest,
                c.head,
            )
            for c in row.chunks
        ]
    )
    return chunks, row.vectors.astype(np.float16).tobytes()


def _unpack(values: tuple[str, int, int, str, bytes, bytes], dim: int) -> FileRow:
    path, size, mtime_ns, stamp, blob, vec = values
    chunks = [IndexedChunk(*t) for t in marshal.loads(blob)]
    vectors = np.frombuffer(vec, dtype=np.float16).astype(np.float32).reshape(-1, dim)
    if len(vectors) != len(chunks):
        raise ValueError(f"{path}: {len(chunks)} chunks but {len(vectors)} vectors")
    return FileRow(path, size, mtime_ns, stamp, chunks, vectors)


class SemanticStore:
    """The index file of one workspace, kept open between syncs, for vectors of one model."""

    def __init__(self, state_dir: Path, model_id: str, dim: int) -> None:
        self.state_dir = state_dir
        self.dim = dim
        self.format = format_of(model_id, dim)
        self._sqlite = SqliteFile(state_dir / FILE_NAME, timeout=5.0, check_same_thread=False)

    def _db(self) -> sqlite3.Connection:
        db = self._sqlite.current()
        if db is not None:
            return db
        make_state_dir(self.state_dir)
        try:
            return self._sqlite.open(self._setup)
        except sqlite3.DatabaseError:  # not a database: start again
            self._sqlite.close()
            (self.state_dir / FILE_NAME).unlink(missing_ok=True)
            return self._sqlite.open(self._setup)

    def _setup(self, db: sqlite3.Connection) -> None:
        for statement in _SCHEMA:
            db.execute(statement)
        found = db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
        if found is None or found[0] != self.format:
            db.execute("DELETE FROM files")
            db.execute("INSERT OR REPLACE INTO meta VALUES ('format', ?)", (self.format,))

    def load(self) -> dict[str, FileRow]:
        """Every row of the file (an unreadable file loads as empty and is emptied)."""
        try:
            db = self._db()
            rows = db.execute(
                "SELECT path, size, mtime_ns, stamp, chunks, vectors FROM files"
            ).fetchall()
            return {r[0]: _unpack(r, self.dim) for r in rows}
        except _BAD:
            self._sqlite.close()
            (self.state_dir / FILE_NAME).unlink(missing_ok=True)
            return {}

    def write(self, rows: Iterable[FileRow], deleted: Iterable[str]) -> None:
        """Store ``rows`` (whole, replacing) and forget ``deleted``, in one transaction."""
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        try:
            db.executemany("DELETE FROM files WHERE path = ?", [(p,) for p in deleted])
            db.executemany(
                "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?)",
                [(r.path, r.size, r.mtime_ns, r.stamp, *_pack(r)) for r in rows],
            )
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def touch(self, path: str, size: int, mtime_ns: int) -> None:
        """A file whose stat changed but whose bytes did not: only its signature moves."""
        self._db().execute(
            "UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?", (size, mtime_ns, path)
        )

    def replaced(self) -> bool:
        """True when the file was deleted or replaced since it was opened: what was loaded
        from it is void (the next call reopens or makes a new one)."""
        if self._sqlite.conn is None:
            return False
        self._sqlite.current()
        return self._sqlite.dropped

    def close(self) -> None:
        self._sqlite.close()
