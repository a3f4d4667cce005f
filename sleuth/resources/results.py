"""Registering and paging search results (docs/query.md#ordering-and-pagination).

``SearchPager`` stores what the search run (``sleuth.service.search``) found and cuts pages from
the registry:

- result ids are deterministic (the request plus a fingerprint of the listed files), so the
  same search over unchanged files answers the same ``SEARCH#`` id through every face;
- each match is stored as a row holding its location, stamp and JSON body; a capture's
  reference is derived from its match's row (``RESULT#H:N:NAME``), so no row is written per
  capture;
- the rows a pager stored last stay in memory (bounded), so the pages cut from them are not
  read back and decoded from the registry, which holds the same rows;
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
from sleuth.resources.registry import MatchRow, Registry, ResultRow
from sleuth.resources.response import SearchResult, match_body, numbered

__all__ = ["SearchPager"]

RECENT_MAX = 20_000  # the last rows stored are kept in memory up to this many


def _capture_fields(
    result_id: str, n: int, m: Match
) -> tuple[dict[str, Any] | None, dict[str, list[int]]]:
    """The captures of docs/json.md#captures, ``{"NAME": {"text", "ref", "nodes"}}``, and the
    spans their refs select.

    A capture reference is derived from the match's own row (``RESULT#H:N:NAME``) and
    resolved from the spans stored in the match body, so no row is written per capture.
    """
    if m.captures is None:
        return None, {}
    shown: dict[str, Any] = {}
    spans: dict[str, list[int]] = {}
    ref = capture_ref(result_id, n, "")  # + the capture's name
    for name, cap in m.captures.items():
        shown[name] = {"text": cap["text"], "ref": ref + name, "nodes": cap["nodes"]}
        spans[name] = [cap["start_byte"], cap["end_byte"], cap["line"], cap["end_line"]]
    return shown, spans


def _rows(result_id: str, start_n: int, matches: list[Match]) -> list[MatchRow]:
    rows: list[MatchRow] = []
    for i, m in enumerate(matches):
        body = match_body(m)
        shown, spans = _capture_fields(result_id, start_n + i, m)
        if shown is not None:
            body["captures"] = shown
            body[CAPTURE_SPANS] = spans
        rows.append(
            MatchRow(
                n=start_n + i,
                path=m.path,
                start_byte=m.start_byte,
                end_byte=m.end_byte,
                line=m.line,
                end_line=m.end_line,
                stamp=m.stamp,
                body=body,
            )
        )
    return rows


def _shown(body: dict[str, Any]) -> dict[str, Any]:
    """A stored body as a page shows it (without the capture spans kept for references);
    ``body`` itself is left as it is (it may be a row kept in memory)."""
    if CAPTURE_SPANS in body:
        body = dict(body)
        del body[CAPTURE_SPANS]
    return body


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
    ) -> SearchResult:
        """Matches ``first`` .. ``first + limit - 1`` of ``row`` as a page, from what is stored:
        the search run stores at least one match past the page when there are more. With
        ``max_bytes`` the page ends at the last match whose compact rendering fits
        (docs/faces.md#budgets), and its cursor continues right after it."""
        result = self._page(row, query, first, limit, cursor=cursor)
        if max_bytes is None or not result.matches:
            return result
        from sleuth.render.search import compact_fit, search_compact

        matches = result.matches
        keep = compact_fit(result.to_json(), max_bytes)
        while keep < len(matches):
            result.matches = matches[:keep]
            result.next_cursor = encode_cursor(self._registry.secret, row.id, first + keep)
            result.extra["cut"] = "max_bytes"
            # the estimate is checked against the rendering itself (its last lines included)
            if keep == 1 or len(search_compact(result.to_json()).encode()) <= max_bytes:
                break
            keep -= 1
        return result

    def _page(
        self, row: ResultRow, query: str, first: int, limit: int, *, cursor: bool
    ) -> SearchResult:
        rows = self._stored_rows(row, first, limit)
        denied = self._is_denied
        if cursor and denied is not None and any(denied(r.path) for r in rows):
            # stored text of a file cloaked since the search must not be served (docs/faces.md)
            raise InvalidQuery(
                "this result was made under other access rules (the deny list changed since "
                "the search): search again",
            )
        more = row.stored >= first + limit  # one more than the page is stored when more exist
        matches = [numbered(row.id, r.n, _shown(r.body)) for r in rows]
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
