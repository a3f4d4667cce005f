"""Registering and paging search results (docs/query.md#ordering-and-pagination).

``SearchPager`` stores what the search run (``sleuth.service.search``) found and cuts pages from
the registry:

- result ids are deterministic (the request plus a fingerprint of the listed files), so the
  same search over unchanged files answers the same ``SEARCH#`` id through every face;
- each match is stored as a row holding its location, stamp and JSON body; a capture's
  reference is derived from its match's row (``RESULT#H:N:NAME``), so no row is written per
  capture;
- the rows a pager stored last stay in memory (bounded; the rows of a later page's store join
  them), so the pages cut from them are not read back and decoded from the registry, which
  holds the same rows;
- a page with a text budget estimates its fit on a window of its first matches that grows
  until the budget is spent, not on every match of the page (a 16 KiB page of function bodies
  shows a few dozen of 500);
- a page served through a cursor refuses when a file of it is denied now (the access rules
  changed since the search).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import xxhash

from sleuth.errors import InvalidQuery
from sleuth.model import Match, SkipCounts
from sleuth.query.execute import Prepared
from sleuth.query.request import SearchRequest
from sleuth.resources.cursor import decode_cursor, encode_cursor
from sleuth.resources.refs import CAPTURE_SPANS, capture_ref
from sleuth.resources.registry import Registry
from sleuth.resources.registry_rows import MatchRow, ResultRow
from sleuth.resources.response import SearchResult, match_body, numbered

__all__ = ["SearchPager", "PageFill"]

RECENT_MAX = 20_000  # the last rows stored are kept in memory up to this many
FIT_WINDOW = 64  # matches a budgeted page first estimates its fit on (then 4x, ...)


def _rows(result_id: str, start_n: int, matches: list[Match]) -> list[MatchRow]:
    """The registry rows of ``matches`` numbered from ``start_n``.

    A match's captures are stored as docs/json.md#captures shows them (``{"NAME": {"text",
    "ref", "nodes"}}``) beside the spans their references select (``CAPTURE_SPANS``): a
    capture reference (``RESULT#H:N:NAME``) is derived from its match's row, so no row is
    written per capture.
    """
    rows: list[MatchRow] = []
    prefix = capture_ref(result_id, 1, "")[: -len("1:")]  # RESULT#H: (+ n:NAME)
    for n, m in enumerate(matches, start=start_n):
        body = match_body(m)
        caps = m.captures
        if caps is not None:
            ref = f"{prefix}{n}:"
            body["captures"] = {
                name: {"text": c["text"], "ref": ref + name, "nodes": c["nodes"]}
                for name, c in caps.items()
            }
            # tuples (JSON arrays all the same): the collector stops tracking them, so the
            # rows a pager keeps cost full collections less
            body[CAPTURE_SPANS] = {
                name: (c["start_byte"], c["end_byte"], c["line"], c["end_line"])
                for name, c in caps.items()
            }
        rows.append(
            MatchRow(n, m.path, m.start_byte, m.end_byte, m.line, m.end_line, m.stamp, body)
        )
    return rows


def _shown(result_id: str, row: MatchRow) -> dict[str, Any]:
    """A stored row as a page shows it: numbered, without the capture spans kept for
    references (the row's own body is left as it is: it may be kept in memory)."""
    out = numbered(result_id, row.n, row.body)
    out.pop(CAPTURE_SPANS, None)
    return out


class PageFill:
    """Whether the matches of a first page found so far (whole files, in order) fill its text
    budget: their compact lines alone pass ``max_bytes``.

    The page then shows fewer matches than were found, so the search stops there and scans on
    only when a cursor asks (docs/faces.md#budgets). The lines are rendered as ``page`` renders
    them, each file's matched lines known before its context lines are counted; the header,
    the tail and ``page_fit.SLACK`` are left out, so the sum never exceeds what the page's fit
    adds up and the test never stops a page short.
    """

    def __init__(self, result_id: str, query: str, mode: str, max_bytes: int) -> None:
        from sleuth.render.line_spans import LineSpans

        self._id = result_id
        self._data: dict[str, Any] = {"mode": mode, "query": query}
        self._max_bytes = max_bytes
        self._shown = LineSpans()
        self._said: dict[str, str] = {}
        self._rows = 0  # rows counted (the next one is match ``_rows + 1`` of the page)
        self._seen = 0  # matches of the list ``__call__`` is given counted
        self._used = 0

    def add_rows(self, rows: list[MatchRow]) -> bool:
        """Count stored rows (matches 1, 2, ... of the page); whether they fill it."""
        from sleuth.render.compact import match_compact

        for r in rows:
            if r.line is not None:
                self._shown.add(r.path, r.line, r.end_line if r.end_line is not None else r.line)
        for r in rows:
            lines = match_compact(self._data, _shown(self._id, r), self._shown, self._said)
            self._used += sum(len(line.encode()) + 1 for line in lines)
        self._rows += len(rows)
        return self._used > self._max_bytes

    def __call__(self, matches: list[Match]) -> bool:
        """Count the matches found after the stored rows (the list grows between calls)."""
        fresh = matches[self._seen :]
        self._seen = len(matches)
        return self.add_rows(_rows(self._id, self._rows + 1, fresh))


def _more(row: ResultRow, first: int, limit: int, shown: int) -> bool:
    """Whether a cursor continues a page of ``shown`` stored rows from ``first``: one more
    than the page is stored when more exist, and a page ending where the stored rows end
    continues when the scan has not (a first page stopped at its text budget)."""
    if row.stored >= first + limit:
        return True
    return row.resume_after is not None and first + shown > row.stored


def _incomplete_reason(skipped: SkipCounts) -> str | None:
    parts = []
    if skipped.too_large:
        parts.append(f"{skipped.too_large} file(s) over the size cap were not searched")
    if skipped.unreadable:
        parts.append(f"{skipped.unreadable} file(s) could not be read")
    return "; ".join(parts) or None


class SearchPager:
    """Registers search results and cuts their pages from the registry."""

    def __init__(self, registry: Registry, is_denied: Callable[[str], bool] | None = None) -> None:
        self._registry = registry
        self._is_denied = is_denied  # the access rules at the time a page is served
        # the rows this pager stored last (result id, rows numbered from rows[0].n on): the
        # pages cut from them next need not read back and decode what was just encoded
        self._recent: tuple[str, list[MatchRow]] | None = None

    # -- storing ----------------------------------------------------------------------------

    def existing(self, prepared: Prepared) -> tuple[ResultRow | None, str]:
        """(the stored result of the same search over the same files or None, the id a new
        result of ``prepared`` gets)."""
        result_id = self._result_id(prepared)
        existing = self._registry.get_result(result_id)
        if existing is None:
            return None, result_id
        if (
            existing.fingerprint == prepared.fingerprint
            and existing.request == prepared.request.identity_json()
        ):
            return existing, result_id  # the same search over the same files: the same result
        return None, self._result_id(prepared, salt=existing.fingerprint)

    def _result_id(self, prepared: Prepared, salt: str = "") -> str:
        digest = xxhash.xxh3_64_hexdigest(f"{prepared.fingerprint}{salt}".encode())
        return f"SEARCH#{digest[:8]}"

    def new_row(
        self,
        prepared: Prepared,
        result_id: str,
        mode: str,
        fallback: str | None,
        broadened: bool,
        stored: list[Match],
        resume_after: str | None,
        total: int | None,
    ) -> ResultRow:
        """The registry row of a new result of ``prepared`` (its matches not stored yet)."""
        reason = (
            "; ".join(filter(None, [_incomplete_reason(prepared.skipped), *prepared.notes])) or None
        )
        return ResultRow(
            id=result_id,
            kind="search",
            request=prepared.request.identity_json(),
            fingerprint=prepared.fingerprint,
            mode=mode,
            fallback=fallback,
            broadened=broadened,
            complete=reason is None,
            incomplete_reason=reason,
            total=total,
            stored=len(stored),
            resume_after=resume_after,
            skipped=prepared.skipped.to_json(),
            extra={"scope": prepared.scope, "ordered_by_score": prepared.ordered_by_score},
        )

    def store(self, row: ResultRow, first_n: int, matches: list[Match], *, extend: bool) -> None:
        """Store ``matches`` as ``row``'s matches ``first_n``...: a new result, or (``extend``)
        more of a stored one (its ``resume_after`` and ``total`` as they are now)."""
        rows = _rows(row.id, first_n, matches)
        if extend:
            self._registry.extend(
                row.id, rows, resume_after=row.resume_after, total=row.total, skipped=row.skipped
            )
        else:
            self._registry.put_result(row, rows)
        recent = self._recent
        if extend and not rows:
            return  # (the rows held are still stored ones)
        if extend and recent is not None and recent[0] == row.id:
            held = recent[1]
            if held and held[-1].n + 1 == rows[0].n:
                # the pages walk forward across the seam of two stores: keep both sides
                rows = (held + rows)[-RECENT_MAX:]
        self._recent = (row.id, rows) if 0 < len(rows) <= RECENT_MAX else None

    def _stored_rows(self, row: ResultRow, first: int, limit: int) -> list[MatchRow]:
        """Matches ``first`` .. ``first + limit - 1`` of ``row``: from memory when this pager
        stored them last (the registry holds the same rows), else from the registry."""
        recent = self._recent
        if recent is not None and recent[0] == row.id:
            rows = recent[1]
            lo, hi = rows[0].n, rows[-1].n
            last = min(first + limit - 1, row.stored)
            if lo <= first and last <= hi and hi <= row.stored:
                return rows[first - lo : last - lo + 1]
        return self._registry.matches(row.id, first, limit)

    def page_fill(self, result_id: str, query: str, mode: str, max_bytes: int) -> PageFill:
        """The test that stops a first page's scan once its matches fill ``max_bytes``."""
        return PageFill(result_id, query, mode, max_bytes)

    def stored_rows(self, row: ResultRow) -> list[MatchRow]:
        """Every match ``row`` has stored, in order."""
        return self._stored_rows(row, 1, row.stored) if row.stored else []

    # -- cursors ----------------------------------------------------------------------------

    def resolve_cursor(self, req: SearchRequest) -> tuple[ResultRow, int]:
        """The stored result and offset a cursor points at; ``InvalidQuery`` if it does not fit."""
        assert req.cursor is not None
        result_id, offset = decode_cursor(self._registry.secret, req.cursor)
        row = self._registry.get_result(result_id)
        if row is None:
            raise InvalidQuery("invalid cursor: its result is no longer registered; search again")
        if row.request != req.identity_json():
            raise InvalidQuery(
                "this cursor belongs to another query or other options: pass it with the same "
                "query and options, or search again without a cursor"
            )
        return row, offset

    def needs_scan(self, row: ResultRow, offset: int, limit: int) -> bool:
        """Whether the page at ``offset`` must scan more files (else the registry answers it)."""
        return row.resume_after is not None and row.stored < offset + limit

    # -- pages ------------------------------------------------------------------------------

    def page(
        self,
        row: ResultRow,
        query: str,
        first: int,
        limit: int,
        *,
        cursor: bool = False,
        max_bytes: int | None = None,
        output: str = "lines",
    ) -> SearchResult:
        """Matches ``first`` .. ``first + limit - 1`` of ``row`` as a page, from what is stored:
        the search run stores at least one match past the page when there are more. With
        ``max_bytes`` the page ends at the last match whose compact rendering fits
        (docs/faces.md#budgets), and its cursor continues right after it. ``output`` is the
        text's shape (docs/faces.md#locations), said in the page when it is not the default."""
        shown = {} if output == "lines" else {"output": output}
        if max_bytes is None:
            answer = self._page(row, query, first, limit, cursor=cursor)
            answer.extra.update(shown)
            return answer
        from sleuth.render.compact import search_compact
        from sleuth.render.page_fit import compact_cut_size, compact_fit_sizes

        # The fit is estimated on a window of the page that grows until the budget is spent:
        # a 16 KiB page of long matches shows a few dozen of 500, and rendering all 500 to
        # keep a tenth of them cost ten times the rendering of what is shown.
        window = FIT_WINDOW
        while True:
            rows, whole = self._window(row, first, limit, window)
            more = _more(row, first, limit, len(rows)) if whole else True
            result = self._result(row, query, first, rows, more, cursor=cursor)
            result.extra.update(shown)
            if not rows:
                return result
            fitted = result.to_json()
            keep, sizes = compact_fit_sizes(fitted, max_bytes)
            if keep < len(rows) or whole:
                break
            window *= 4
        matches = result.matches
        secret = self._registry.secret if keep < len(matches) else b""
        while keep < len(matches):
            result.matches = matches[:keep]
            result.next_cursor = encode_cursor(secret, row.id, first + keep)
            result.extra["cut"] = "max_bytes"
            # the estimate is checked against the cut page's exact size (its last lines
            # included), added up from the fit's sizes unless only a rendering can tell
            cut = result.to_json()
            size = compact_cut_size(fitted, cut, sizes)
            if size is None:
                size = len(search_compact(cut).encode())
            if keep == 1 or size <= max_bytes:
                break
            keep -= 1
        return result

    def _window(
        self, row: ResultRow, first: int, limit: int, window: int
    ) -> tuple[list[MatchRow], bool]:
        """The page's first ``window`` stored rows and the rest of the last one's file (a
        match hides the context lines that other matches of its file cover, so the estimate
        never splits a file), and whether they are the whole page."""
        page_rows = max(0, min(limit, row.stored - first + 1))
        if window >= page_rows:
            return self._stored_rows(row, first, limit), True
        rows = self._stored_rows(row, first, window + 1)
        last = rows[window - 1].path if len(rows) >= window else None
        while rows and len(rows) < page_rows and rows[-1].path == last:
            more = self._stored_rows(row, first + len(rows), min(window, page_rows - len(rows)))
            if not more:
                break
            rows.extend(more)
        end = min(window, len(rows))
        while end < len(rows) and rows[end].path == last:
            end += 1
        return rows[:end], end >= page_rows

    def _page(
        self, row: ResultRow, query: str, first: int, limit: int, *, cursor: bool
    ) -> SearchResult:
        rows = self._stored_rows(row, first, limit)
        more = _more(row, first, limit, len(rows))
        return self._result(row, query, first, rows, more, cursor=cursor)

    def _result(
        self,
        row: ResultRow,
        query: str,
        first: int,
        rows: list[MatchRow],
        more: bool,
        *,
        cursor: bool,
    ) -> SearchResult:
        """``rows`` (matches ``first``...; ``more``: a cursor continues them) as a page."""
        denied = self._is_denied
        if cursor and denied is not None and any(denied(p) for p in {r.path for r in rows}):
            # stored text of a file cloaked since the search must not be served (docs/faces.md)
            raise InvalidQuery(
                "this result was made under other access rules (the deny list changed since "
                "the search): search again",
            )
        matches = [_shown(row.id, r) for r in rows]
        next_cursor = (
            encode_cursor(self._registry.secret, row.id, first + len(rows))
            if more and rows
            else None
        )
        total = row.total
        return SearchResult(
            query=query,
            mode=row.mode,
            fallback=row.fallback,
            result=row.id,
            complete=row.complete,
            incomplete_reason=row.incomplete_reason,
            total=total,
            total_at_least=None
            if total is not None
            else int(row.extra.get("counted_at_least", row.stored)),
            matches=matches,
            next_cursor=next_cursor,
            skipped={k: v for k, v in row.skipped.items()},
        )
