"""The graph's per-file state as plain rows, and a record table that decodes them on demand.

A loaded cache holds thousands of files of which a session touches a few: ``RecordTable`` keeps
each file's ``RecordRow`` (plain tuples, as ``marshal`` stores them) and builds the
``FileRecord`` (``SymbolDef``/``SymbolRef`` objects) only when something asks for that file —
resolving it or a file that reads it, ``Graph.record``. ``resolution_to_row``/
``resolution_from_row`` do the same for what resolving a file produced.
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from typing import NamedTuple

from sleuth.graph.records import (
    DefRow,
    FileRecord,
    RecordRow,
    RefRow,
    def_rows,
    record_from_row,
    record_to_row,
    ref_rows,
)
from sleuth.graph.resolve import EdgeKey, Occ, Resolution

__all__ = [
    "RecordTable",
    "NewVersion",
    "ResolutionRow",
    "resolution_to_row",
    "resolution_from_row",
]

ResolutionRow = tuple[
    tuple[tuple[str, str, str, tuple[Occ, ...]], ...], tuple[str, ...], tuple[str, ...], int
]
"""(edges as (source, target, kind, occurrences), deps, keys, unresolved)."""


def resolution_to_row(res: Resolution) -> ResolutionRow:
    """``res`` as plain tuples (deps and keys sorted, so equal resolutions give equal rows)."""
    edges = tuple((u, v, k, tuple(occs)) for (u, v, k), occs in res.edges.items())
    return (edges, tuple(sorted(res.deps)), tuple(sorted(res.keys)), res.unresolved)


def resolution_from_row(row: ResolutionRow) -> Resolution:
    """The inverse of ``resolution_to_row``; raises ValueError/TypeError on a malformed row."""
    edges_row, deps, keys, unresolved = row
    edges: dict[EdgeKey, list[Occ]] = {(u, v, k): list(occs) for u, v, k, occs in edges_row}
    return Resolution(edges, frozenset(deps), frozenset(keys), int(unresolved))


class RecordTable(MutableMapping[str, FileRecord]):
    """path -> ``FileRecord``, holding rows from the cache until a record is first asked for."""

    def __init__(self) -> None:
        self._done: dict[str, FileRecord] = {}
        self._raw: dict[str, RecordRow] = {}
        self._blobs: dict[str, bytes] = {}  # path -> its row ``marshal``-ed, until written

    def put_row(self, path: str, row: RecordRow, blob: bytes | None = None) -> None:
        """Hold ``path``'s record as a row (decoded on first access); ``blob``: the row as
        ``marshal`` wrote it, kept for the cache's next write (``take_blob``)."""
        self._done.pop(path, None)
        self._raw[path] = row
        if blob is None:
            self._blobs.pop(path, None)
        else:
            self._blobs[path] = blob

    def take_blob(self, path: str) -> bytes | None:
        """``path``'s row as ``marshal``-ed when it was put, if still that row (given once)."""
        return self._blobs.pop(path, None)

    def row(self, path: str) -> RecordRow:
        """``path``'s record as a row, without decoding it; KeyError when absent."""
        raw = self._raw.get(path)
        return raw if raw is not None else record_to_row(self._done[path])

    def source(self, path: str) -> RecordRow | FileRecord:
        """``path``'s record as held: its row if not decoded yet, else the ``FileRecord``
        (both never changed in place); KeyError when absent."""
        raw = self._raw.get(path)
        return raw if raw is not None else self._done[path]

    def uses(self, path: str) -> tuple[RefRow, ...]:
        """``path``'s uses as ``RefRow`` tuples, without decoding a row; KeyError when absent."""
        raw = self._raw.get(path)
        return raw[5] if raw is not None else ref_rows(self._done[path])

    def raw(self, path: str) -> RecordRow | None:
        """``path``'s record as the row it was loaded as, if not decoded yet (else None)."""
        return self._raw.get(path)

    def stamp(self, path: str) -> str:
        """``path``'s stamp, without decoding the record; KeyError when absent."""
        raw = self._raw.get(path)
        return raw[1] if raw is not None else self._done[path].stamp

    def __getitem__(self, path: str) -> FileRecord:
        rec = self._done.get(path)
        if rec is None:
            rec = record_from_row(path, self._raw[path])
            del self._raw[path]
            self._blobs.pop(path, None)
            self._done[path] = rec
        return rec

    def get(self, path: str, default: FileRecord | None = None) -> FileRecord | None:  # type: ignore[override]
        rec = self._done.get(path)
        if rec is not None:
            return rec
        return self[path] if path in self._raw else default

    def __setitem__(self, path: str, rec: FileRecord) -> None:
        self._raw.pop(path, None)
        self._blobs.pop(path, None)
        self._done[path] = rec

    def __delitem__(self, path: str) -> None:
        self._blobs.pop(path, None)
        if self._done.pop(path, None) is None:
            del self._raw[path]

    def __contains__(self, path: object) -> bool:
        return path in self._done or path in self._raw

    def __iter__(self) -> Iterator[str]:
        return iter([*self._done, *self._raw])  # a copy: decoding moves a path between dicts

    def __len__(self) -> int:
        return len(self._done) + len(self._raw)


class NewVersion(NamedTuple):
    """What an update reads of a file's new version, from a record or from a record row
    alike (its declarations as rows)."""

    lang: str
    stamp: str
    complete: bool
    reason: str | None
    defs: tuple[DefRow, ...]
    refs: object

    @classmethod
    def record(cls, rec: FileRecord) -> NewVersion:
        """The new version ``rec``."""
        return cls(rec.lang, rec.stamp, rec.complete, rec.reason, def_rows(rec), None)

    def def_ids(self) -> set[str]:
        """The ids of its declarations."""
        return {d[0] for d in self.defs}
