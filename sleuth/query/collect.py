"""A page's matches from a scan, and the count of the rest (``service.search`` runs them).

A page ends with a whole file, unless that file alone holds far more matches than the page
needs (a minified bundle): then it ends inside the file and its resume key says where. Past a
full page the rest is counted within a time budget (docs/json.md#search).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from sleuth.query.scan import Scanner, resume_key

if TYPE_CHECKING:
    from sleuth.model import Match
    from sleuth.query.execute import Prepared

__all__ = ["FILE_SLACK", "collect", "chunks", "count_policy", "count_within"]

FILE_SLACK = 1000  # a file with more matches than the page needs + this is paged inside itself


def collect(
    scanner: Scanner,
    want: int,
    after: str | None,
    enough: Callable[[list[Match]], bool] | None = None,
) -> tuple[list[Match], str | None]:
    """At least ``want`` matches in order, or fewer once ``enough`` says they fill the page;
    (matches, resume key or None when the scan ended).

    A page ends with a whole file, unless that file alone holds far more matches than the page
    needs (a minified bundle): then it ends inside the file and the key says where.
    """
    ((out, resume_after),) = list(chunks(scanner, want, after, enough))
    return out, resume_after


def chunks(
    scanner: Scanner,
    want: int,
    after: str | None,
    enough: Callable[[list[Match]], bool] | None = None,
    chunk: int | None = None,
) -> Iterator[tuple[list[Match], str | None]]:
    """``collect``'s matches in pieces of whole files, each of at least ``chunk`` matches
    (one piece when None) but the last, with the resume key after each piece (None after the
    last when the scan ended). ``enough`` is given the matches of the piece so far."""
    out: list[Match] = []
    got = 0  # the matches of the pieces handed out
    for hits in scanner.iter_hits(after):
        need = want - got - len(out)
        if len(hits.found) > need + FILE_SLACK:
            out.extend(hits.build(need))
            yield out, resume_key(hits.path, hits.found[need - 1], hits.first + need - 1)
            return
        out.extend(hits.build())
        if got + len(out) >= want or (enough is not None and enough(out)):
            yield out, resume_key(hits.path)
            return
        if chunk is not None and len(out) >= chunk:
            got += len(out)
            yield out, resume_key(hits.path)
            out = []
    yield out, None


def count_policy(prepared: Prepared) -> tuple[int, float]:
    """(files past the page always counted, time budget for the rest) of a first page.

    A small tree is always counted exactly (docs/json.md#search). In a larger one the count
    gets only ``Tuning.count_budget_s``: a structural count parses and matches every file
    (measured: a budget equal to the page's own time doubled the cold CLI's
    `$X.objects.filter($$$)` on Django, 0.8 of 1.6 s), and even a text count of a thousand
    files more was 130 ms of a warm 150 ms kernel page whose matches took 20 (the page is what
    the caller waits for; ``total_at_least`` says the count is a floor).
    """
    tuning = prepared.ws.tuning
    if len(prepared.files) > tuning.small_tree_files:
        return 0, tuning.count_budget_s
    return tuning.small_tree_files, tuning.count_budget_s


def count_within(
    scanner: Scanner, after: str, so_far: int, always: int, budget: float
) -> tuple[int, bool]:
    """(count, exact): the rest counted; the first ``always`` files whatever it costs, the
    others within ``budget`` seconds."""
    deadline = time.monotonic() + budget
    total = so_far
    for files, n in enumerate(scanner.count_rest(after), start=1):
        total += n
        if files > always and time.monotonic() > deadline:
            return total, False
    return total, True
