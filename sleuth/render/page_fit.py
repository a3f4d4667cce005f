"""How much of a page the compact text fits in a byte budget (docs/faces.md#budgets).

A budgeted page ends at the last match whose compact rendering (``search.search_compact``)
fits ``max_bytes``. ``compact_fit_sizes`` renders the page's matches in order until the budget
is spent and keeps each one's size; ``compact_cut_size`` then adds up the size of the page cut
there, which is exact unless the cut changes what the kept matches show — a context line that
a dropped match covered (hidden in the whole page's rendering) is printed once that match is
gone — and only then is the cut page rendered again to measure it.
"""

from __future__ import annotations

from sleuth.render.common import Json
from sleuth.render.compact import compact_header, compact_tail, match_compact, matched_lines
from sleuth.render.line_spans import LineSpans
from sleuth.render.locations import location_fit

__all__ = ["compact_fit", "compact_fit_sizes", "compact_cut_size"]

SLACK = 120
"""Bytes kept free for the lines a cut adds to the tail (the cursor, "page cut ...")."""


def compact_fit(data: Json, max_bytes: int) -> int:
    """How many of the page's matches the compact rendering shows within ``max_bytes`` of
    UTF-8 (at least one: a page always moves on), the header and the tail counted."""
    return compact_fit_sizes(data, max_bytes)[0]


def _bytes(lines: list[str]) -> int:
    """UTF-8 bytes of ``lines``, each with its newline."""
    return sum(len(line.encode()) + 1 for line in lines)


def _frame(data: Json) -> int:
    """Bytes of the page's header and tail lines, newlines counted."""
    return _bytes([compact_header(data), *compact_tail(data)])


def compact_fit_sizes(data: Json, max_bytes: int) -> tuple[int, list[int]]:
    """``compact_fit``, and the bytes (newlines counted) of each match it rendered, in order:
    what ``compact_cut_size`` adds up instead of rendering the cut page again."""
    matches = list(data.get("matches") or ())
    used = _frame(data) + SLACK
    if data.get("output") == "locations":
        return location_fit(matches, max_bytes - used), []
    shown = matched_lines(matches)
    said: dict[str, str] = {}
    sizes: list[int] = []
    for count, match in enumerate(matches):
        sizes.append(_bytes(match_compact(data, match, shown, said)))
        used += sizes[-1]
        if used > max_bytes:
            return max(count, 1), sizes
    return len(matches), sizes


def _context_hidden_by(dropped: LineSpans, kept: LineSpans, match: Json) -> bool:
    """Whether a context line of ``match`` is covered by a dropped match and no kept one."""
    path, line = str(match.get("path")), int(match["line"])
    end_line = int(match.get("end_line") or line)
    context = match.get("context") or {}
    before = len(context.get("before") or ())
    after = len(context.get("after") or ())
    around = [*range(line - before, line), *range(end_line + 1, end_line + 1 + after)]
    return any((path, k) in dropped and (path, k) not in kept for k in around)


def compact_cut_size(window: Json, cut: Json, sizes: list[int]) -> int | None:
    """The exact byte size of ``search_compact(cut)``, where ``cut`` holds the first matches
    of ``window`` and ``sizes`` are ``compact_fit_sizes(window, ...)``'s, or None when that
    cannot be added up: a locations page, or a kept match's context line covered by a dropped
    match only (the window's rendering hid it; the cut page's shows it)."""
    kept = list(cut.get("matches") or ())
    if cut.get("output") == "locations" or len(kept) > len(sizes):
        return None
    dropped = matched_lines(list(window.get("matches") or ())[len(kept) :])
    if dropped:
        covered = matched_lines(kept)
        for match in kept:
            if match.get("line") is not None and _context_hidden_by(dropped, covered, match):
                return None
    return _frame(cut) + sum(sizes[: len(kept)]) - 1  # the text has no newline at its end
