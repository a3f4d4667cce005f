"""The graph's per-file state as plain rows, and a record table that decodes them on demand.

A loaded cache holds thousands of files of which a session touches a few: ``RecordTable`` keeps
each file's ``RecordRow`` (plain tuples, as ``marshal`` stores them) and builds the
``FileRecord`` (``SymbolDef``/``SymbolRef`` objects) only when something asks for that file —
resolving it or a file that reads it, ``Graph.record``. ``resolution_to_row``/
``resolution_from_row`` do the same for what resolving a file produced.
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping

from sleuth.graph.records import FileRecord, RecordRow, record_from_row, record_to_row
from sleuth.graph.resolve import EdgeKey, Occ, Resolution

__all__ = ["RecordTable", "ResolutionRow", "resolution_to_row", "resolution_from_row"]

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

    def put_row(self, path: str, row: RecordRow) -> None:
        """Hold ``path``'s record as a row (decoded on first access)."""
        self._done.pop(path, None)
        self._raw[path] = row

    def row(self, path: str) -> RecordRow:
        """``path``'s record as a row, without decoding it; KeyError when absent."""
        raw = self._raw.get(path)
        return raw if raw is not None else record_to_row(self._done[path])

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
            self._done[path] = rec
        return rec

    def get(self, path: str, default: FileRecord | None = None) -> FileRecord | None:  # type: ignore[override]
        rec = self._done.get(path)
        if rec is not None:
            return rec
        return self[path] if path in self._raw else default

    def __setitem__(self, path: str, rec: FileRecord) -> None:
        self._raw.pop(path, None)
        self._done[path] = rec

    def __delitem__(self, path: str) -> None:
        if self._done.pop(path, None) is None:
            del self._raw[path]

    def __contains__(self, path: object) -> bool:
        return path in self._done or path in self._raw

    def __iter__(self) -> Iterator[str]:
        return iter([*self._done, *self._raw])  # a copy: decoding moves a path between dicts

    def __len__(self) -> int:
        return len(self._done) + len(self._raw)
