"""Running, registering and paging searches (SPEC §3.3, §3.4).

``SearchPager`` takes a prepared search, runs its stages in fallback order, registers the
result in the registry and cuts pages:

- a page always ends at a file boundary in the registry: the file holding the last match of a
  page is finished and stored whole, and the scan resumes strictly after it, so walking the
  pages yields each match once and in order, also when files change between pages;
- after a full page the rest is *counted*, within a time budget: ``total`` is exact when the
  count finished, else null with ``total_at_least``; a result of at most ``snapshot_max``
  matches (the workspace's ``Tuning``, as the counting budget) is then stored whole (a true snapshot), a larger one is stored page by page, files
  not yet delivered being read when their page is asked for;
- result ids are deterministic (the request plus a fingerprint of the listed files), so the
  same search over unchanged files answers the same ``SEARCH#`` id through every face;
- the rows a pager stored last stay in memory (bounded), so the pages cut from them are not
  read back and decoded from the registry, which holds the same rows.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import xxhash

from sleuth.errors import InvalidQuery, NotFound
from sleuth.model import Match, SkipCounts
from sleuth.query.execute import Prepared
from sleuth.query.request import SearchRequest
from sleuth.query.scan import Scanner, Stage, resume_key
from sleuth.resources.cursor import decode_cursor, encode_cursor
from sleuth.resources.refs import CAPTURE_SPANS, capture_ref
from sleuth.resources.registry import MatchRow, Registry, ResultRow
from sleuth.resources.response import SearchResult, all_refs, match_body, numbered

__all__ = ["SearchPager", "SUGGEST_BUDGET_S"]

SUGGEST_BUDGET_S = 0.5
MAX_SUGGESTIONS = 5
EXTEND_AHEAD_MAX = 10_000  # a later page stores up to this many matches beyond the ones it shows
FILE_SLACK = 1000  # a file with more matches than the page needs + this is paged inside itself
RECENT_MAX = 2 * EXTEND_AHEAD_MAX  # the last rows stored are kept in memory up to this many


def _capture_fields(
    result_id: str, n: int, m: Match
) -> tuple[dict[str, Any] | None, dict[str, list[int]]]:
    """SPEC §5 captures ``{"NAME": {"text", "ref", "nodes"}}`` and the spans their refs select.

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
    """Registers searches and serves their pages."""

    def __init__(self, registry: Registry, is_denied: Callable[[str], bool] | None = None) -> None:
        self._registry = registry
        self._is_denied = is_denied  # the access rules at the time a page is served
        # the rows this pager stored last (result id, rows numbered from rows[0].n on): the
        # pages cut from them next need not read back and decode what was just encoded
        self._recent: tuple[str, list[MatchRow]] | None = None

    def _store(self, row: ResultRow, rows: list[MatchRow], *, extend: bool) -> None:
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

    # -- first page -------------------------------------------------------------------------

    def first_page(self, prepared: Prepared) -> SearchResult:
        req = prepared.request
        row = self._run(prepared)
        result = self._page(row, prepared, 1, req.limit)
        if prepared.suggest and result.total == 0 and result.complete:
            result.possible_names, skipped = self._possible_names(prepared)
            result.possible_names_skipped = "budget" if skipped else None
        return result

    def _result_id(self, prepared: Prepared, salt: str = "") -> str:
        digest = xxhash.xxh3_64_hexdigest(f"{prepared.fingerprint}{salt}".encode())
        return f"SEARCH#{digest[:8]}"

    def _run(self, prepared: Prepared) -> ResultRow:
        req = prepared.request
        result_id = self._result_id(prepared)
        existing = self._registry.get_result(result_id)
        if existing is not None:
            if (
                existing.fingerprint == prepared.fingerprint
                and existing.request == req.identity_json()
            ):
                return existing  # the same search over the same files: the same result
            result_id = self._result_id(prepared, salt=existing.fingerprint)
        if prepared.path_matches is not None:
            matches = prepared.path_matches
            row = self._new_row(
                prepared, result_id, prepared.route.mode, None, False, matches, None, len(matches)
            )
            self._store(row, _rows(row.id, 1, matches), extend=False)
            return row
        stage = prepared.stages[0]
        for stage in prepared.stages:
            scanner = prepared.scanner(stage)
            stored, resume_after = _collect(scanner, req.limit + 1, None)
            if stored or stage is prepared.stages[-1]:
                break
        total: int | None = len(stored)
        counted = len(stored)
        if resume_after is not None:
            always, budget = _count_policy(prepared, stage)
            counted, exact = _count(scanner, resume_after, len(stored), always, budget)
            total = counted if exact else None
            if total is not None and total <= prepared.ws.tuning.snapshot_max:
                # small enough to keep whole: later pages then never depend on the disk
                rest, _ = _collect(scanner, total + 1, resume_after)
                stored.extend(rest)
                resume_after = None
        row = self._new_row(
            prepared,
            result_id,
            stage.mode,
            stage.fallback,
            stage.broadened,
            stored,
            resume_after,
            total,
        )
        row.extra["counted_at_least"] = counted
        self._store(row, _rows(row.id, 1, stored), extend=False)
        return row

    def _new_row_reason(self, prepared: Prepared) -> str | None:
        return (
            "; ".join(filter(None, [_incomplete_reason(prepared.skipped), *prepared.notes])) or None
        )

    def _new_row(
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
        reason = self._new_row_reason(prepared)
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

    # -- later pages ------------------------------------------------------------------------

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

    def next_page(
        self, row: ResultRow, offset: int, limit: int, prepared: Prepared | None
    ) -> SearchResult:
        return self._page(row, prepared, offset, limit, cursor=True)

    # -- pages ------------------------------------------------------------------------------

    def _page(
        self,
        row: ResultRow,
        prepared: Prepared | None,
        first: int,
        limit: int,
        *,
        cursor: bool = False,
    ) -> SearchResult:
        need = first + limit  # one more than the page, to know whether more exist
        if row.stored < need and row.resume_after is not None:
            if prepared is None:
                raise NotFound("the rest of this result can no longer be scanned; search again")
            # store ahead (doubling, bounded): paging through a large result then scans and
            # lists the workspace a logarithmic number of times, not once per page
            ahead = min(row.stored, EXTEND_AHEAD_MAX)
            self._extend(row, prepared, max(need, row.stored + ahead))
        rows = self._stored_rows(row, first, limit)
        denied = self._is_denied
        if cursor and denied is not None and any(denied(r.path) for r in rows):
            # stored text of a file cloaked since the search must not be served (SPEC §1)
            raise InvalidQuery(
                "this result was made under other access rules (the deny list changed since "
                "the search): search again",
            )
        more = row.stored >= need
        matches = [numbered(row.id, r.n, _shown(r.body)) for r in rows]
        next_cursor = (
            encode_cursor(self._registry.secret, row.id, first + len(rows))
            if more and rows
            else None
        )
        total = row.total
        request = prepared.request if prepared else None
        return SearchResult(
            query=request.query if request else "",
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

    def _extend(self, row: ResultRow, prepared: Prepared, need: int) -> None:
        stage: Stage = prepared.stage_named(row.mode, row.fallback)
        scanner = prepared.scanner(stage)
        more, resume_after = _collect(scanner, need - row.stored, row.resume_after)
        total = row.total if resume_after is not None else row.stored + len(more)
        rows = _rows(row.id, row.stored + 1, more)
        row.resume_after = resume_after
        row.total = total
        self._store(row, rows, extend=True)
        row.stored += len(more)

    def complete(self, row: ResultRow, prepared: Prepared) -> ResultRow:
        """Scan the rest of a paged result so every match of every page is stored."""
        if row.resume_after is not None:
            self._extend(row, prepared, 2**62)
        return row

    def run_all(self, prepared: Prepared) -> ResultRow:
        """Register ``prepared`` and store all of its matches (for ``:all`` refreshes)."""
        return self.complete(self._run(prepared), prepared)

    # -- possible names ---------------------------------------------------------------------

    def _possible_names(self, prepared: Prepared) -> tuple[list[dict[str, Any]] | None, bool]:
        names, exhausted = prepared.suggestions(SUGGEST_BUDGET_S)
        groups: list[dict[str, Any]] = []
        for name in names[:MAX_SUGGESTIONS]:
            sub = prepared.for_literal(name)
            sub_row = self._run(sub)
            if not sub_row.total and not sub_row.stored:
                continue
            groups.append(
                {
                    "name": name,
                    "count": sub_row.total,
                    "complete": sub_row.complete and sub_row.total is not None,
                    "result": sub_row.id,
                    "all": all_refs(sub_row.id),
                }
            )
        return (groups or None), exhausted


def _collect(scanner: Scanner, want: int, after: str | None) -> tuple[list[Match], str | None]:
    """At least ``want`` matches in order; (matches, resume key or None when the scan ended).

    A page ends with a whole file, unless that file alone holds far more matches than the page
    needs (a minified bundle): then it ends inside the file and the key says where.
    """
    out: list[Match] = []
    for hits in scanner.iter_hits(after):
        need = want - len(out)
        if len(hits.found) > need + FILE_SLACK:
            out.extend(hits.build(need))
            return out, resume_key(hits.path, hits.found[need - 1])
        out.extend(hits.build())
        if len(out) >= want:
            return out, resume_key(hits.path)
    return out, None


def _count_policy(prepared: Prepared, stage: Stage) -> tuple[int, float]:
    """(files past the page always counted, time budget for the rest) of a first page.

    A small tree is always counted exactly (SPEC §3.4). Past that, text counts the next
    ``Tuning.small_tree_files`` files (a text scan is cheap); a structural count parses and
    matches every file, so in a large tree it gets only ``Tuning.count_budget_s`` (measured: a
    budget equal to the page's own time doubled the cold CLI's `$X.objects.filter($$$)` on
    Django, 0.8 of 1.6 s).
    """
    tuning = prepared.ws.tuning
    if stage.mode == "ast" and len(prepared.files) > tuning.small_tree_files:
        return 0, tuning.count_budget_s
    return tuning.small_tree_files, tuning.count_budget_s


def _count(
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
