"""Resolving references to selections: byte ranges plus the stamps they are valid for
(docs/references.md#stamps, docs/references.md#when-a-file-changes).

``Resolver.resolve`` turns a reference string into a ``Selection``. It never scans the
workspace: a single-match reference costs one stat + one read + one hash of its file (the
stamp check). Staleness follows docs/references.md#when-a-file-changes:

- a capture reference (``RESULT#H:N:NAME``) selects the span stored in match N's body;
- a single-match reference (``SEARCH#H:N:…``, ``RESULT#…``) whose file changed is
  ``stale_reference``, naming the file and telling the user to re-run the search;
- an ``:all`` reference whose files changed re-runs its original query in its original scope
  and selects the fresh matches (``refreshed``); an ``:all`` of a result that was only paged
  part-way is completed first, so it always selects every match of every page.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from sleuth.errors import NotFound, StaleReference
from sleuth.query.request import SearchRequest
from sleuth.resources.refs import CAPTURE_SPANS, Ref, Unit, parse_ref
from sleuth.resources.registry import Registry
from sleuth.resources.registry_rows import MatchRow, ResultRow
from sleuth.workspace import FileText, Workspace
from sleuth.workspace.text import whole_chars

__all__ = [
    "Range",
    "Selection",
    "Resolver",
    "Rerun",
    "fits",
    "line_range",
    "request_of",
    "stale_files",
]


@dataclass(frozen=True, order=True)
class Range:
    """One selected byte range of one file, valid while the file hashes to ``stamp``."""

    path: str
    start_byte: int
    end_byte: int
    line: int
    end_line: int
    stamp: str
    lines: bool = False
    """Whole lines (``:line`` references, path reads): deleting them removes their line breaks."""


@dataclass
class Selection:
    """What a reference selects now."""

    source: str
    ranges: list[Range]
    result_id: str
    refreshed: bool = False
    complete: bool = True
    broadened: bool = False
    unstamped: bool = False
    """Some range comes from a match that stamped no bytes (a ``files:`` match names a file
    without reading it): readable as the file is now, never edited through (docs/SAFETY.md)."""
    texts: dict[str, FileText] = field(default_factory=dict, repr=False)
    """The file contents the stamps were checked against (so callers need not read again)."""


def line_range(ft: FileText, start: int, end: int) -> tuple[int, int, int, int]:
    """(start, end, line, end_line) of the whole lines holding [start, end), without the last EOL."""
    line = ft.line_of(start)
    end_line = ft.line_of(end - 1) if end > start else line
    s, _ = ft.line_span(line)
    _, e = ft.line_span(end_line)
    return min(s, start), max(e, end), line, end_line


class Rerun(Protocol):
    """What resolution asks of the search run (``sleuth.service.search.Searches``)."""

    def complete(self, row: ResultRow) -> ResultRow:
        """Finish the scan of a paged result: every match of every page stored."""
        ...

    def rerun(self, request: SearchRequest) -> ResultRow:
        """The same request over the current files, every match stored."""
        ...


class Resolver:
    """Resolves reference strings against the registry and the current files."""

    def __init__(self, ws: Workspace, registry: Registry, searches: Rerun) -> None:
        self._ws = ws
        self._registry = registry
        self._searches = searches

    def get_row(self, ref: Ref) -> ResultRow:
        row = self._registry.get_result(ref.result_id)
        if row is None:
            raise NotFound(
                f"unknown reference {ref.text}: no such result in this workspace "
                "(references live in .sleuth/; search again to get a new one)",
                details={"reference": ref.text},
            )
        return row

    def resolve(self, text: str) -> Selection:
        ref = parse_ref(text)
        row = self.get_row(ref)
        if ref.kind == "result":
            rows = self._registry.matches(row.id, 1)
            return self._single(ref, row, rows, "match")
        if ref.kind == "capture":
            return self._capture(ref, row)
        if ref.n is not None:
            return self._single(ref, row, [self._match(ref, row)], ref.unit)
        return self._all(ref, row)

    def _match(self, ref: Ref, row: ResultRow) -> MatchRow:
        assert ref.n is not None
        if ref.n > row.stored and row.resume_after is not None:
            row = self._searches.complete(row)  # a match of a page not served yet is still a match
        rows = self._registry.matches(row.id, ref.n, 1)
        if not rows:
            raise NotFound(
                f"{ref.text}: result {row.id} has no match {ref.n}"
                + (f" (it has {row.total})" if row.total is not None else ""),
                details={"reference": ref.text},
            )
        return rows[0]

    def _every_capture(self, ref: Ref, row: ResultRow) -> Selection:
        """``RESULT#H:all:NAME``: capture NAME of every match of H (all pages; matches without
        it add nothing). Stale when any of its files changed: a re-run could bind other
        spans, so it is never refreshed like an ``:all`` reference."""
        if row.resume_after is not None:
            row = self._searches.complete(row)
        subs = []
        for match in self._registry.matches(row.id, 1):
            span = _span(match, ref.capture or "")
            if span is not None:
                subs.append(MatchRow(1, match.path, *span, match.stamp, {}))
        if not subs:
            raise NotFound(
                f"{ref.text}: no match of {row.id} has a capture {ref.capture}",
                details={"reference": ref.text},
            )
        return self._single(ref, row, subs, "match")

    def _capture(self, ref: Ref, row: ResultRow) -> Selection:
        """Capture ``ref.capture`` of match ``ref.n``: the span stored with the match."""
        if ref.n is None:
            return self._every_capture(ref, row)
        match = self._match(ref, row)
        span = _span(match, ref.capture or "")
        if span is None:
            raise NotFound(
                f"{ref.text}: match {ref.n} of {row.id} has no capture {ref.capture} "
                "(an absent capture has no reference)",
                details={"reference": ref.text},
            )
        sub = MatchRow(1, match.path, *span, match.stamp, {})
        sel = self._single(ref, row, [sub], "match")
        sel.complete = True  # one exact range, whatever the rest of its search
        return sel

    # -- single references: stale when the file changed ------------------------------------

    def _fresh(self, path: str) -> FileText | None:
        """The file as it is on disk now (no cache, no symlinked folder), None when gone."""
        try:
            return self._ws.read_fresh(path)
        except NotFound:
            return None

    def _current(self, path: str, stamp: str | None, ref: Ref) -> FileText:
        ft = self._fresh(path)
        if ft is None or (stamp and ft.stamp != stamp):
            raise StaleReference(
                f"{ref.text} is stale: {path} changed since the search; re-run the search "
                "to get fresh references",
                details={"reference": ref.text, "files": [path]},
            )
        return ft

    def _to_range(self, ft: FileText, row: MatchRow, unit: Unit) -> Range:
        if row.stamp and row.stamp != ft.stamp:
            raise stale_files([row.path])  # offsets found in other bytes than these
        if row.start_byte is None or row.end_byte is None:  # files mode: the whole file
            end_line = max(1, len(ft.line_starts) - (1 if ft.data.endswith(b"\n") else 0))
            return Range(row.path, ft.body_offset, len(ft.data), 1, end_line, ft.stamp)
        start, end = row.start_byte, row.end_byte
        lines = unit == "line" or bool(row.body.get("lines"))
        if not fits(ft, start, end, whole_lines=lines and unit != "line"):
            raise unfit_range(row.path)
        if unit == "line":
            s, e, line, end_line = line_range(ft, start, end)
            return Range(row.path, s, e, line, end_line, ft.stamp, lines=True)
        line, end_line = ft.lines_of(start, end)  # the bytes', not the row's (docs/SAFETY.md)
        return Range(row.path, start, end, line, end_line, row.stamp, lines=lines)

    def _single(self, ref: Ref, row: ResultRow, rows: Sequence[MatchRow], unit: Unit) -> Selection:
        ranges = []
        seen: dict[str, FileText] = {}
        for mrow in rows:
            ft = seen.get(mrow.path)
            if ft is None:
                ft = seen[mrow.path] = self._current(mrow.path, mrow.stamp, ref)
            ranges.append(self._to_range(ft, mrow, unit))
        return Selection(
            source=ref.text,
            ranges=_merge(ranges),
            result_id=row.id,
            complete=row.complete,
            broadened=row.broadened,
            unstamped=any(not m.stamp for m in rows),
            texts=seen,
        )

    # -- :all references: completed, and re-run when stale ---------------------------------

    def _all(self, ref: Ref, row: ResultRow) -> Selection:
        refreshed = False
        if row.resume_after is not None:
            row = self._searches.complete(row)
        rows = self._registry.matches(row.id, 1)
        current = self._read_all(rows)
        if _inconsistent(rows, current):
            for _ in range(_REFRESH_TRIES):
                # the listing and content caches may lag behind an outside write by a watcher
                # tick: forget them so the re-run reads what is on disk now
                self._ws.note_changed()
                row = self._searches.rerun(request_of(row))
                refreshed = True
                rows = self._registry.matches(row.id, 1)
                current = self._read_all(rows)
                if not _inconsistent(rows, current):
                    break
            else:
                raise StaleReference(
                    f"{ref.text}: its files kept changing while the search was re-run; try "
                    "again once they are quiet",
                    details={"reference": ref.text, "files": _inconsistent(rows, current)},
                )
        ranges = []
        for mrow in rows:
            ft = current[mrow.path]
            if ft is not None:
                ranges.append(self._to_range(ft, mrow, ref.unit))
        return Selection(
            source=ref.text,
            ranges=_merge(ranges),
            result_id=row.id,
            refreshed=refreshed,
            complete=row.complete,
            broadened=row.broadened,
            unstamped=any(not m.stamp for m in rows),
            texts={p: ft for p, ft in current.items() if ft is not None},
        )

    def _read_all(self, rows: Sequence[MatchRow]) -> dict[str, FileText | None]:
        current: dict[str, FileText | None] = {}
        for mrow in rows:
            if mrow.path not in current:
                current[mrow.path] = self._fresh(mrow.path)
        return current


_REFRESH_TRIES = 3


def stale_files(paths: list[str]) -> StaleReference:
    """``stale_reference`` for files that changed since the search (nothing was done)."""
    return StaleReference(
        f"nothing was done: {', '.join(paths)} changed since the search; re-run the search and "
        "use the fresh references",
        details={"files": paths},
    )


def _span(match: MatchRow, name: str) -> tuple[int, int, int, int] | None:
    """The (start, end, line, end_line) stored for capture ``name`` of ``match``; None when it
    has none, or holds anything else (a damaged or forged row, docs/SAFETY.md)."""
    spans = match.body.get(CAPTURE_SPANS)
    span = spans.get(name) if isinstance(spans, dict) else None
    if (
        isinstance(span, list)
        and len(span) == 4
        and all(isinstance(v, int) and not isinstance(v, bool) for v in span)
    ):
        return span[0], span[1], span[2], span[3]
    return None


def fits(ft: FileText, start: int, end: int, *, whole_lines: bool = False) -> bool:
    """Whether [start, end) is a range a search of ``ft``'s bytes can have stored: inside the
    file, in order, not cutting a UTF-8 character, and (``whole_lines``) whole lines.

    A row of the registry is trusted only this far: ``.sleuth/`` can arrive with the tree or be
    damaged, and a forged row with the right stamp and offsets past the end, reversed or
    negative made an edit cut the file short or write parts of it twice (docs/SAFETY.md).
    """
    if ft.encoding == "binary-safe":
        if not 0 <= start <= end <= len(ft.data):
            return False
    elif not whole_chars(ft.data, start, end):
        return False
    if whole_lines:
        s, e, _, _ = line_range(ft, start, end)
        return (s, e) == (start, end)
    return True


def unfit_range(path: str) -> StaleReference:
    """``stale_reference`` for a stored range that does not fit its file's bytes."""
    return StaleReference(
        f"nothing was done: the stored range in {path} does not fit the file (the result in "
        ".sleuth/ is damaged or was not made here); re-run the search and use the fresh "
        "references",
        details={"files": [path]},
    )


def _inconsistent(rows: Sequence[MatchRow], current: dict[str, FileText | None]) -> list[str]:
    """Files whose matches were found in other bytes than the file holds now (or gone)."""
    bad: dict[str, None] = {}
    for m in rows:
        ft = current.get(m.path)
        if ft is None or (m.stamp and m.stamp != ft.stamp):
            bad[m.path] = None
    return list(bad)


def request_of(row: ResultRow) -> SearchRequest:
    """The search request a result row was registered for (its identity: no paging)."""
    identity = json.loads(row.request)
    known = {f.name for f in dataclasses.fields(SearchRequest)}
    return SearchRequest.build(**{k: v for k, v in identity.items() if k in known})


def _merge(ranges: list[Range]) -> list[Range]:
    """Sorted, with duplicate and overlapping ranges of one file merged."""
    out: list[Range] = []
    for r in sorted(ranges):
        if out and out[-1].path == r.path and r.start_byte < out[-1].end_byte:
            last = out[-1]
            out[-1] = Range(
                last.path,
                last.start_byte,
                max(last.end_byte, r.end_byte),
                last.line,
                max(last.end_line, r.end_line),
                last.stamp,
                last.lines and r.lines,
            )
        elif out and out[-1] == r:
            continue
        else:
            out.append(r)
    return out
