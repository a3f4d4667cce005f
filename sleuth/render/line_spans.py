"""``LineSpans``: a set of (path, line) kept as merged line intervals per path.

The compact rendering asks, for each context line, whether a match of the page or an earlier
context line already shows it. A match of ``def $F($$$A): $$$B`` spans a whole function, and a
set of every (path, line) it covers cost more than the rendering itself (2.2 million tuples for
the pages of Django's 30k functions); intervals cost one entry a span.
"""

from __future__ import annotations

from bisect import bisect_right

__all__ = ["LineSpans"]


class LineSpans:
    """Lines of paths, added as closed ranges ``[first, last]``; ``(path, line) in spans``."""

    def __init__(self) -> None:
        # per path: starts and ends of disjoint, non-adjacent ranges, sorted
        self._starts: dict[str, list[int]] = {}
        self._ends: dict[str, list[int]] = {}

    def add(self, path: str, first: int, last: int) -> None:
        """Add lines ``first`` .. ``last`` of ``path`` (nothing when ``last < first``)."""
        if last < first:
            return
        starts = self._starts.setdefault(path, [])
        ends = self._ends.setdefault(path, [])
        # every range touching [first - 1, last + 1] merges into the new one
        lo = bisect_right(ends, first - 2)  # first range ending at or after first - 1
        hi = bisect_right(starts, last + 1)  # ranges from lo to hi - 1 start before last + 2
        if lo < hi:
            first = min(first, starts[lo])
            last = max(last, ends[hi - 1])
        starts[lo:hi] = [first]
        ends[lo:hi] = [last]

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, tuple) or len(key) != 2:
            return False
        path, line = key
        starts = self._starts.get(path)
        if not starts or not isinstance(line, int):
            return False
        at = bisect_right(starts, line) - 1
        return at >= 0 and line <= self._ends[path][at]

    def __bool__(self) -> bool:
        return any(self._starts.values())
