"""How much one ``read`` or ``select`` answers: the caps past which it is refused, and the
line window and text budget a read is cut to.

Every answer is bounded: at most ``MAX_READ_RANGES`` ranges and ``MAX_READ_BYTES`` of text.
Past either the read is refused with ``invalid_query`` saying how to narrow it, never cut (a cut
``:all`` would look like every match). The range count of an ``:all`` or ``RESULT#`` is decided
from its stored total before the result is completed, read or registered (``check_count``), so
refusing a million-match ``:all`` costs one registry lookup. What a read is cut to, it says: a
path's first ``DEFAULT_READ_LINES`` lines by default (``window``), or what fits ``max_bytes``
(``fit``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from sleuth.errors import InvalidQuery
from sleuth.resources.refs import Ref
from sleuth.resources.selection import Range, Resolver, Selection
from sleuth.workspace import FileText

__all__ = [
    "DEFAULT_READ_LINES",
    "MAX_READ_RANGES",
    "MAX_READ_BYTES",
    "check_count",
    "check_size",
    "narrow_hint",
    "window",
    "fit",
]

DEFAULT_READ_LINES = 2000
MAX_READ_RANGES = 10_000
"""Ranges one ``read`` or ``select`` answers at most (each is also a registry row)."""
MAX_READ_BYTES = 8 * 1024 * 1024
"""Bytes of selected text one answer holds at most: the default file size cap, so the default
window of any file the workspace reads fits."""

Current = Callable[[Range], FileText]
"""The current text of a range's file (``NotFound`` if it changed since it was selected)."""


def check_count(resolver: Resolver, ref: Ref) -> None:
    """Refuse a whole result (``:all``, ``RESULT#``) of more than ``MAX_READ_RANGES`` ranges
    from its stored count, before any of it is completed or read."""
    if not (ref.is_all or ref.kind == "result"):
        return
    row = resolver.get_row(ref)
    # an unfinished count is a lower bound; the exact count is checked again after resolving
    count = (
        row.total if row.total is not None else int(row.extra.get("counted_at_least", row.stored))
    )
    if count > MAX_READ_RANGES:
        raise _too_many(ref.text, count, narrow_hint(ref), "matches" if ref.is_all else "ranges")


def check_size(sel: Selection, hint: str) -> None:
    """Refuse an answer of more than ``MAX_READ_RANGES`` ranges or ``MAX_READ_BYTES`` of
    text, before any text is decoded or a row registered."""
    if len(sel.ranges) > MAX_READ_RANGES:
        raise _too_many(sel.source, len(sel.ranges), hint, "ranges")
    size = sum(r.end_byte - r.start_byte for r in sel.ranges)
    if size > MAX_READ_BYTES:
        raise InvalidQuery(
            f"{sel.source} selects {size} bytes of text, more than one answer holds (at "
            f"most {MAX_READ_BYTES} bytes): {hint}",
            details={"bytes": size, "max_bytes": MAX_READ_BYTES, "source": sel.source},
        )


def window(
    sel: Selection, first: int, limit: int | None, current: Current
) -> tuple[Selection, bool]:
    """Clip every range to lines ``first`` .. ``first + limit - 1`` (default cap on size)."""
    cap = limit if limit is not None else DEFAULT_READ_LINES
    out: list[Range] = []
    truncated = False
    for r in sel.ranges:
        lo = max(first, r.line)
        hi = min(r.end_line, first + cap - 1)
        if limit is None and r.end_line > first + cap - 1:
            truncated = True
        if lo > hi:
            continue
        if (lo, hi) == (r.line, r.end_line):
            out.append(r)
            continue
        ft = sel.texts.get(r.path) or current(r)
        s = r.start_byte if lo == r.line else ft.line_span(lo)[0]
        e = r.end_byte if hi == r.end_line else ft.line_span(hi)[1]
        out.append(Range(r.path, s, e, lo, hi, r.stamp, r.lines))
    sel.ranges = out
    return sel, truncated


def fit(
    sel: Selection, max_bytes: int, current: Current, *, whole_ranges: bool
) -> tuple[Selection, int | None, int]:
    """The selection cut to what the compact rendering shows within ``max_bytes``
    (docs/faces.md#budgets): whole ranges of a reference (at least one), whole lines of a
    path's window, which continues at the returned line; and how many ranges were dropped."""
    from sleuth.render.read import numbered_line

    used = len(sel.source.encode()) + 200  # the header, and the note of a cut
    path = None
    for i, r in enumerate(sel.ranges):
        ft = sel.texts.get(r.path) or current(r)
        if r.path != path:
            path = r.path
            used += len(r.path.encode()) + 1
        lines = ft.data[r.start_byte : r.end_byte].decode("utf-8", "replace").split("\n")
        if len(lines) > r.end_line - r.line + 1 and lines[-1] == "":
            lines.pop()
        for k, text in enumerate(lines):
            used += len(numbered_line(r.line + k, text).encode()) + 1
            if used <= max_bytes:
                continue
            if whole_ranges:
                keep = max(i, 1)
                dropped = len(sel.ranges) - keep
                sel.ranges = sel.ranges[:keep]
                return sel, None, dropped
            if k == 0 and i == 0:
                k = 1  # a read always moves on by at least one line
                if len(lines) == 1 and len(sel.ranges) == 1:
                    return sel, None, 0
            if k == 0:
                sel.ranges = sel.ranges[:i]
                return sel, r.line, 0
            clipped, _ = window(replace(sel, ranges=[r]), r.line, k, current)
            sel.ranges = [*sel.ranges[:i], *clipped.ranges]
            return sel, r.line + k, 0
    return sel, None, 0


def narrow_hint(ref: Ref) -> str:
    """How to read less of what ``ref`` selects (the end of a too-large message)."""
    if ref.kind == "search":
        return (
            f"read one match ({ref.result_id}:1:{ref.unit}), keep some with select "
            f"{ref.result_id} 1 2 3, or search again within a path to narrow it"
        )
    return f"keep some of its ranges with select {ref.result_id} 1 2 3, or read them one by one"


def _too_many(source: str, count: int, hint: str, what: str) -> InvalidQuery:
    return InvalidQuery(
        f"{source} selects {count} {what}, more than one answer holds (at most "
        f"{MAX_READ_RANGES} ranges): {hint}",
        details={"ranges": count, "max_ranges": MAX_READ_RANGES, "reference": source},
    )
