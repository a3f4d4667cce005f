"""The ``find`` run (docs/faces.md#find): files mode and grep mode over the one engine.

Both modes list the scope through the workspace (ignore rules, cloaking: a denied file never
appears) and keep the paths that pass the query's inline constraints (``sleuth.find``).

- files mode ranks those paths (``sleuth.find.ranking``: fuzzy score plus frecency) and
  registers the whole ranking as a result, so each match has the references a ``files:`` match
  has; ``offset`` and ``max_results`` cut an item-based page from it.
- grep mode with ``plain_text`` or ``regex`` scans the files from ``offset`` on (an index into
  the constrained listing) with ``search``'s own matchers (``"text"`` quoted, the literal path
  without the fallback chain, or ``regex:``), and takes whole files until ``max_results``
  matches; the page is then answered by ``Searches.search`` itself, restricted to exactly those
  files (an ``include`` glob per file), so its matches *are* search matches: same positions,
  same references, and a result whose ``:all`` re-runs exactly this page.
- grep mode with ``fuzzy`` matches lines approximately (``sleuth.find.approximate``), pages the
  same way, ranks the page's matches by score and registers them as a result (its refresh
  query: the matched texts, in the page's files).

Smart case: with ``case_sensitive=False`` a needle holding an upper-case letter (for a regex, an
upper-case literal: ``\\W`` does not count) matches case-sensitively, as ``rg --smart-case``.

``RecordingViews`` is the workbench's ``Views`` noting every registered selection (read,
select, edits) in the frecency store that files mode ranks with.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import xxhash

from sleuth.errors import InvalidQuery
from sleuth.find.frecency import FrecencyStore
from sleuth.model import Match, SkipCounts
from sleuth.query.execute import Prepared
from sleuth.query.request import MAX_LIMIT, SearchRequest
from sleuth.query.router import route
from sleuth.resources.views import ReadResult, Views
from sleuth.service.find import FindRequest, FindResult, unrecognized_warning
from sleuth.service.find_text import (
    cut_note,
    escape_regex,
    has_upper_literal,
    joined,
    path_glob,
    regex_source,
    skip_counts,
    skip_reason,
    text_source,
)

if TYPE_CHECKING:
    from sleuth.find.constraints import Constraints
    from sleuth.query.scan import SpanSource
    from sleuth.resources.registry import Registry
    from sleuth.resources.selection import Resolver, Selection
    from sleuth.service.search import Searches
    from sleuth.workspace import FileEntry, Workspace

__all__ = ["Finder", "RecordingViews"]

FIND_VERSION = "sleuth-find-1"
"""Part of the identity of every result ``find`` registers itself (files mode, fuzzy grep)."""


class RecordingViews(Views):
    """``Views`` that note each registered selection's files as used (``FrecencyStore``)."""

    def __init__(self, ws: Workspace, registry: Registry, resolver: Resolver) -> None:
        super().__init__(ws, registry, resolver)
        self.frecency = FrecencyStore(lambda: ws.state_dir)

    def register(
        self, sel: Selection, kind: str, options: dict[str, Any], reason: str | None
    ) -> ReadResult:
        answer = super().register(sel, kind, options, reason)
        self.frecency.record((r.path for r in sel.ranges), kind)
        return answer


class Finder:
    """Runs ``find`` requests on one workspace, through its search run and registry."""

    def __init__(self, ws: Workspace, searches: Searches, frecency: FrecencyStore) -> None:
        self._ws = ws
        self._searches = searches
        self._frecency = frecency

    def close(self) -> None:
        """Close the frecency store's connection."""
        self._frecency.close()

    def find(self, req: FindRequest) -> FindResult:
        from sleuth.find.constraints import parse_constraints

        cons = parse_constraints(req.query, grep=req.mode == "grep", path=req.path, ext=req.ext)
        scope = self._ws.validate_path(cons.path or "")
        if req.mode == "files":
            answer = self._files(req, cons, scope)
        else:
            answer = self._grep(req, cons, scope)
        answer.warning = unrecognized_warning(req.unrecognized)
        return answer

    # -- files mode ---------------------------------------------------------------------------

    def _files(self, req: FindRequest, cons: Constraints, scope: str) -> FindResult:
        from sleuth.find.ranking import combined_frecency, rank_paths
        from sleuth.text_search.frecency import git_frecency

        listing = self._ws.list_files(scope, any_size=True)
        keep = cons.matcher()
        paths = [p for p in listing.paths if keep(p)]
        frecency = combined_frecency(self._frecency.scores(), git_frecency(self._ws.root))
        ranked = rank_paths(cons.needle, paths, frecency, case_sensitive=req.case_sensitive)
        matches = [
            Match(path=p, text=p, score=score, extra={"frecency": f}) for p, score, f in ranked
        ]
        result: str | None = None
        shown: list[dict[str, Any]] = []
        if matches:
            identity = SearchRequest.build(
                "files:" + (cons.needle.strip() or "*"),
                path=scope or "/",
                include=cons.globs,
                case_sensitive=True,
            )
            salt = json.dumps([cons.to_json(), ranked])
            page = self._register(identity, scope, matches, salt, req, req.offset + 1)
            result, shown = page.result, page.matches
        more = req.offset + len(shown) < len(ranked)
        answer = FindResult(
            query=req.query,
            mode="files",
            grep_mode=None,
            needle=cons.needle,
            case_sensitive=req.case_sensitive,
            result=result,
            complete=True,
            incomplete_reason=None,
            total_matched=len(ranked),
            matches=shown,
            offset=req.offset,
            max_results=req.max_results,
            next_offset=req.offset + len(shown) if more and shown else None,
            skipped=listing.skipped.to_json(),
        )
        if not shown:
            answer.diagnostics = self._diagnostics(
                req, cons, len(paths), len(paths), len(ranked), None, any_size=True
            )
        return answer

    # -- grep mode ----------------------------------------------------------------------------

    def _grep(self, req: FindRequest, cons: Constraints, scope: str) -> FindResult:
        needle = cons.needle
        if not needle.strip():
            raise InvalidQuery(
                "find in grep mode needs text to search for after the constraints, e.g. "
                "'*.py TODO'",
                details={"argument": "query"},
            )
        grep_mode = req.grep_mode
        cs = req.case_sensitive or has_upper_literal(needle, regex=grep_mode == "regex")
        note: str | None = None
        source: SpanSource | None = None
        if grep_mode == "regex":
            source, note = regex_source(needle, cs)
            if source is None:
                grep_mode = "plain_text"
                cs = req.case_sensitive or has_upper_literal(needle, regex=False)
        listing = self._ws.list_files(scope)
        keep = cons.matcher()
        files = [f for f in listing.files if keep(f.path)]
        if grep_mode == "fuzzy":
            return self._fuzzy(req, cons, scope, files, listing.skipped, cs)
        if grep_mode == "regex":
            search_query = "regex:" + needle
        elif '"' not in needle:
            search_query = f'"{needle}"'  # the literal path: one stage, no fallback chain
        else:
            search_query = "regex:" + escape_regex(needle)
        if source is None:
            source = text_source(search_query, cs)
        page, total, next_offset, searched, skipped = self._pick_files(req, files, source)
        matches: list[dict[str, Any]] = []
        result: str | None = None
        if page:
            found = self._searches.search(
                SearchRequest.build(
                    search_query,
                    path=scope or "/",
                    include=tuple(path_glob(p) for p, _ in page),
                    limit=min(req.max_results, MAX_LIMIT),
                    context=req.context_lines,
                    case_sensitive=cs,
                    # the page is whole files within max_results: a text budget would cut it
                    # with no way on (find pages by file offset, not by cursor)
                    max_bytes=None,
                )
            )
            matches, result = found.matches, found.result
        cut = cut_note(page, len(matches)) if total > len(matches) else None
        note = joined(note, cut) if cut else note
        # a file with more matches than max_results: its rest is on no page (find pages by
        # file), so the answer is not complete, whatever was skipped
        reason = joined(skip_reason(listing.skipped, skipped), cut)
        answer = FindResult(
            query=req.query,
            mode="grep",
            grep_mode=grep_mode,
            needle=needle,
            case_sensitive=cs,
            result=result,
            complete=reason is None,
            incomplete_reason=reason,
            total_matched=total,
            matches=matches,
            offset=req.offset,
            max_results=req.max_results,
            next_offset=next_offset,
            files_with_matches=len(page),
            note=note,
            skipped=skip_counts(listing.skipped, skipped),
        )
        if not matches:
            answer.diagnostics = self._diagnostics(
                req, cons, len(files), searched, len(page), next_offset
            )
        return answer

    def _pick_files(
        self, req: FindRequest, files: list[FileEntry], source: SpanSource
    ) -> tuple[list[tuple[str, int]], int, int | None, int, SkipCounts]:
        """The files of the page from ``req.offset`` on: whole files while the matches fit in
        ``max_results`` (the first one always); (files with their match counts, matches, the
        next page's file offset or None, files read, skips)."""
        from sleuth.query.scan import Scanner

        skipped = SkipCounts()
        index = {f.path: i for i, f in enumerate(files)}
        scanner = Scanner(self._ws, files[req.offset :], source, context=0, skipped=skipped)
        page: list[tuple[str, int]] = []
        total = 0
        next_offset: int | None = None
        for hits in scanner.iter_hits():
            count = len(hits.found)
            if page and total + count > req.max_results:
                next_offset = index[hits.path]
                break
            page.append((hits.path, count))
            total += count
        return page, total, next_offset, scanner.files_scanned, skipped

    # -- fuzzy grep ---------------------------------------------------------------------------

    def _fuzzy(
        self,
        req: FindRequest,
        cons: Constraints,
        scope: str,
        files: list[FileEntry],
        listed: SkipCounts,
        cs: bool,
    ) -> FindResult:
        from sleuth.find.approximate import approximate_spans
        from sleuth.query.scan import make_match

        skipped = SkipCounts()
        chosen: list[Match] = []
        texts: dict[str, None] = {}  # the exact texts matched: the refresh query's alternatives
        counts: list[tuple[str, int]] = []
        next_offset: int | None = None
        searched = 0
        for i in range(req.offset, len(files)):
            ft = self._ws.read(files[i].path, skipped)
            if ft is None:
                continue
            searched += 1
            hits = approximate_spans(ft.data, cons.needle, case_sensitive=cs, start=ft.body_offset)
            if not hits:
                continue
            if counts and len(chosen) + len(hits) > req.max_results:
                next_offset = i
                break
            counts.append((ft.path, len(hits)))
            for start, end, _edits, score in hits:
                chosen.append(replace(make_match(ft, start, end, req.context_lines), score=score))
                texts[escape_regex(ft.data[start:end].decode("utf-8", "replace"))] = None
        total = len(chosen)
        chosen.sort(key=lambda m: (-(m.score or 0.0), m.sort_key))
        chosen = chosen[: req.max_results]
        result: str | None = None
        shown: list[dict[str, Any]] = []
        if chosen:
            identity = SearchRequest(
                query="regex:" + "|".join(texts),
                path=scope or "/",
                include=tuple(path_glob(p) for p, _ in counts),
                context=req.context_lines,
            )
            salt = json.dumps([cons.needle, cs, [(m.path, m.start_byte, m.stamp) for m in chosen]])
            page = self._register(identity, scope, chosen, salt, req, 1, mode="fuzzy")
            result, shown = page.result, page.matches
        cut = cut_note(counts, len(shown)) if total > len(shown) else None
        reason = joined(skip_reason(listed, skipped), cut)
        answer = FindResult(
            query=req.query,
            mode="grep",
            grep_mode="fuzzy",
            needle=cons.needle,
            case_sensitive=cs,
            result=result,
            complete=reason is None,
            incomplete_reason=reason,
            total_matched=total,
            matches=shown,
            offset=req.offset,
            max_results=req.max_results,
            next_offset=next_offset,
            files_with_matches=len(counts),
            note=cut,
            skipped=skip_counts(listed, skipped),
        )
        if not shown:
            answer.diagnostics = self._diagnostics(req, cons, len(files), searched, 0, next_offset)
        return answer

    # -- shared -------------------------------------------------------------------------------

    def _register(
        self,
        identity: SearchRequest,
        scope: str,
        matches: list[Match],
        salt: str,
        req: FindRequest,
        first: int,
        *,
        mode: str = "files",
    ) -> Any:
        """Register ``matches`` (in their order) as one result and cut the page from ``first``:
        the id is a hash of what identifies the answer, so the same find over the same files
        answers the same id (docs/json.md#search)."""
        fingerprint = xxhash.xxh3_64_hexdigest(
            "\0".join([FIND_VERSION, identity.identity_json(), salt]).encode()
        )
        prepared = Prepared(
            ws=self._ws,
            request=identity,
            route=route(identity.query),
            scope=scope,
            files=[],
            skipped=SkipCounts(),
            fingerprint=fingerprint,
            path_matches=matches,
            ordered_by_score=True,
        )
        pager = self._searches.pager
        row, result_id = pager.existing(prepared)
        if row is None:
            # approximate matches are location hints, as a broadened search's are: an edit
            # through them is unsafe_selection unless they are selected (docs/edits.md)
            hints = mode == "fuzzy"
            row = pager.new_row(prepared, result_id, mode, None, hints, matches, None, len(matches))
            pager.store(row, 1, matches, extend=False)
        return pager.page(row, req.query, first, req.max_results)

    def _diagnostics(
        self,
        req: FindRequest,
        cons: Constraints,
        filtered: int,
        searched: int,
        with_matches: int,
        next_offset: int | None,
        *,
        any_size: bool = False,
    ) -> dict[str, Any]:
        """Why a page is empty (docs/json.md#find-diagnostics): what was there to search."""
        return {
            "total_files": len(self._ws.list_files(any_size=any_size).files),
            "total_files_searched": searched,
            "filtered_file_count": filtered,
            "files_with_matches": with_matches,
            "constraints": cons.to_json(),
            "offset": req.offset,
            "limit": req.max_results,
            "next_file_offset": next_offset,
        }
