"""The search run, in one place: from a request to a page of matches (docs/query.md).

``Searches.search`` prepares a request (``query.execute.prepare``: route, scope, files,
stages), runs its stages in fallback order until one finds something, counts the rest within
a budget, stores the result (``resources.results.SearchPager``) and cuts the page; when a
complete text search finds nothing at all it suggests existing names. A cursor's page scans
further only when the stored matches do not reach it.

- a page always ends at a file boundary in the registry: the file holding the last match of a
  page is finished and stored whole, and the scan resumes strictly after it, so walking the
  pages yields each match once and in order, also when files change between pages;
- after a full page the rest is *counted*, within a time budget (``Tuning.count_budget_s``):
  ``total`` is exact when the count finished, else null with ``total_at_least``; a result of
  at most ``Tuning.snapshot_max`` matches is then stored whole (a true snapshot), a larger one
  is stored page by page, files not yet delivered being read when their page is asked for.

``Searches`` is also the ``Rerun`` reference resolution (``resources.selection``) asks to
finish a paged result or re-run an ``:all`` refresh, and it owns the warm engine state
(``Engines``: index, parse trees, tags, language servers, graph) a workbench keeps.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from sleuth.languages import language_for_path
from sleuth.query.collect import chunks, collect, count_policy, count_within
from sleuth.query.execute import Engines, Prepared, prepare
from sleuth.query.request import SearchRequest
from sleuth.query.scan import Stage
from sleuth.resources.refs import looks_like_ref
from sleuth.resources.registry import Registry
from sleuth.resources.registry_rows import ResultRow
from sleuth.resources.response import SearchResult, all_refs
from sleuth.resources.results import PageFill, SearchPager
from sleuth.resources.selection import Resolver, request_of
from sleuth.tuning import Collector
from sleuth.workspace import Workspace

if TYPE_CHECKING:
    from sleuth.query.index import IndexKeeper

__all__ = ["Searches", "SUGGEST_BUDGET_S"]

SUGGEST_BUDGET_S = 0.5
MAX_SUGGESTIONS = 5
EXTEND_AHEAD_MAX = 30_000  # a later page stores up to this many matches beyond the ones it shows
STORE_CHUNK = 2000  # a later page's scan stores its matches this many at a time (``_extend``)
_FILLED_IN_ORDER = frozenset({"literal", "regex", "boolean", "broadened", "ast"})
"""Modes whose matches come in path order, so a first page may stop once they fill it."""


class Searches:
    """Runs, registers and pages the searches of one workspace."""

    def __init__(
        self, ws: Workspace, registry: Registry, engines: Engines, *, build_index: bool
    ) -> None:
        self._ws = ws
        self._registry = registry
        self.engines = engines
        self.pager = SearchPager(registry, ws.is_denied)
        self.resolver = Resolver(ws, registry, self)
        self._build_index = build_index
        self._index: IndexKeeper | None = None
        # the session's policy when it lent one to the engines, else the workspace's
        self._collector = engines.collector or Collector.of(ws.tuning)

    @property
    def index(self) -> IndexKeeper:
        """The trigram index keeper (loaded from ``.sleuth/`` lazily)."""
        if self._index is None:
            from sleuth.query.index import IndexKeeper

            self._index = IndexKeeper(self._ws, build=self._build_index)
        return self._index

    # -- preparing --------------------------------------------------------------------------

    def _prepare(self, req: SearchRequest) -> Prepared:
        """Prepare a search; a reference as ``path`` is resolved to its exact ranges first."""
        engines = self.engines
        if self._build_index and engines.index is None:
            # made once, kept warm: a long-running face's parse trees and index. A one-shot
            # process (the CLI) neither loads nor builds the index, nor keeps trees: loading
            # it costs more than the scan it would save (benchmarks/RESULTS.md)
            from sleuth.ast_search import TreeCache

            engines.trees = TreeCache()
            engines.index = self.index
        if req.query.startswith("symbol:#"):
            sid = req.query.removeprefix("symbol:#").strip()
            path = self._registry.find_symbol_path(sid)
            if path is not None:
                engines.symbol_paths[sid] = path
        if looks_like_ref(req.path):
            sel = self.resolver.resolve(req.path)
            ranges = [(r.path, r.start_byte, r.end_byte, r.stamp) for r in sel.ranges]
            return prepare(self._ws, req, engines, ranges)
        return prepare(self._ws, req, engines)

    # -- pages ------------------------------------------------------------------------------

    def search(self, req: SearchRequest) -> SearchResult:
        """One page of ``req``: the first, or the one its cursor points at.

        The cyclic collector is paused through it (``Tuning.gc_pause``): a page of a large
        result allocates tens of thousands of acyclic records (their positions, texts, stored
        bodies, the page's JSON), which it would only rescan; measured on every page of
        Django's 30k ``def`` matches, 3-4 s of collections under load, 9 of them full."""
        with self._collector.paused():
            return self._search(req)

    def _search(self, req: SearchRequest) -> SearchResult:
        if req.cursor is None:
            prepared = self._prepare(req)
            existing, result_id = self.pager.existing(prepared)
            if existing is None:
                row = self._new(prepared, result_id)
            else:
                row = existing
                self._top_up(row, prepared)
            result = self.pager.page(
                row, req.query, 1, req.page_limit, max_bytes=req.max_bytes, output=req.output
            )
            _warn(result, row)
            if prepared.suggest and result.total == 0 and result.complete:
                result.possible_names, skipped = self._possible_names(prepared)
                result.possible_names_skipped = "budget" if skipped else None
            return result
        row, offset = self.pager.resolve_cursor(req)
        need = offset + req.page_limit  # one more than the page, to know whether more exist
        if self.pager.needs_scan(row, offset, req.page_limit):
            # store ahead (fourfold, bounded): paging through a large result then scans and
            # lists the workspace a logarithmic number of times, not once per page (each scan
            # lists and prepares again: Django's 30k def matches took 7 of them doubling, 3 now)
            ahead = min(3 * row.stored, EXTEND_AHEAD_MAX)
            self._extend(
                row, self._prepare(replace(req, cursor=None)), max(need, row.stored + ahead)
            )
        result = self.pager.page(
            row,
            req.query,
            offset,
            req.page_limit,
            cursor=True,
            max_bytes=req.max_bytes,
            output=req.output,
        )
        _warn(result, row)
        return result

    # -- Rerun (resources.selection) --------------------------------------------------------

    def complete(self, row: ResultRow) -> ResultRow:
        """Scan the rest of a paged result so every match of every page is stored."""
        if row.resume_after is not None:
            self._extend(row, self._prepare(request_of(row)), 2**62)
        return row

    def rerun(self, req: SearchRequest) -> ResultRow:
        """Register ``req`` over the current files with all of its matches stored."""
        prepared = self._prepare(req)
        row = self._run(prepared)
        if row.resume_after is not None:
            self._extend(row, prepared, 2**62)
        return row

    # -- running ----------------------------------------------------------------------------

    def _run(self, prepared: Prepared) -> ResultRow:
        """The result of ``prepared``: the stored one when the same search ran over the same
        files, else a new one (``_new``)."""
        existing, result_id = self.pager.existing(prepared)
        return existing if existing is not None else self._new(prepared, result_id)

    def _top_up(self, row: ResultRow, prepared: Prepared) -> None:
        """A stored result answering a first page with fewer matches than the page holds (the
        same search with a larger limit, or one whose first page stopped at a smaller text
        budget) scans on until they fill it."""
        limit = prepared.request.page_limit
        if not self.pager.needs_scan(row, 1, limit):
            return
        fill = self._fill_test(prepared, row.id, prepared.stage_named(row.mode, row.fallback))
        if fill is not None and fill.add_rows(self.pager.stored_rows(row)):
            return
        self._extend(row, prepared, limit + 1, fill)

    def _new(self, prepared: Prepared, result_id: str) -> ResultRow:
        """Run ``prepared``'s stages in fallback order and store the first page (and maybe all
        of it) as result ``result_id``."""
        req = prepared.request
        if prepared.path_matches is not None:
            matches = prepared.path_matches
            row = self.pager.new_row(
                prepared,
                result_id,
                prepared.route.mode,
                None,
                prepared.location_hints,
                matches,
                None,
                len(matches),
            )
            self.pager.store(row, 1, matches, extend=False)
            return row
        stage = prepared.stages[0]
        for stage in prepared.stages:
            scanner = prepared.scanner(stage)
            enough = self._fill_test(prepared, result_id, stage)
            stored, resume_after = collect(scanner, req.page_limit + 1, None, enough)
            if stored or stage is prepared.stages[-1]:
                break
        total: int | None = len(stored)
        counted = len(stored)
        if resume_after is not None:
            always, budget = count_policy(prepared)
            counted, exact = count_within(scanner, resume_after, len(stored), always, budget)
            total = counted if exact else None
            if total is not None and total <= prepared.ws.tuning.snapshot_max:
                # small enough to keep whole: later pages then never depend on the disk
                rest, _ = collect(scanner, total + 1, resume_after)
                stored.extend(rest)
                resume_after = None
        row = self.pager.new_row(
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
        if prepared.pattern_warnings:
            row.extra["pattern_warnings"] = prepared.pattern_warnings
            row.extra["pattern_languages"] = prepared.pattern_languages
        self.pager.store(row, 1, stored, extend=False)
        return row

    def _fill_test(self, prepared: Prepared, result_id: str, stage: Stage) -> PageFill | None:
        """When the first page has a text budget and its matches come in path order: the test
        that stops the scan once the matches found fill the page (``SearchPager.fill_test``)."""
        req = prepared.request
        if (
            req.max_bytes is None
            or req.output != "lines"
            or prepared.ordered_by_score
            or stage.mode not in _FILLED_IN_ORDER
        ):
            return None
        return self.pager.page_fill(result_id, req.query, stage.mode, req.max_bytes)

    def _extend(
        self, row: ResultRow, prepared: Prepared, need: int, fill: PageFill | None = None
    ) -> None:
        """Store matches of ``row`` until it holds ``need`` (or all there are, or ``fill``
        says they fill the first page)."""
        stage: Stage = prepared.stage_named(row.mode, row.fallback)
        scanner = prepared.scanner(stage)
        # Without a fill test the matches are stored as the scan goes, STORE_CHUNK at a time:
        # a one-shot process's parse workers then work ahead while this process stores
        # (they idled through one store of the whole extension before), and each store
        # leaves the result whole (its resume key after the last file stored).
        chunk = STORE_CHUNK if fill is None else None
        for more, resume_after in chunks(scanner, need - row.stored, row.resume_after, fill, chunk):
            row.resume_after = resume_after
            if resume_after is None:
                row.total = row.stored + len(more)
            self.pager.store(row, row.stored + 1, more, extend=True)
            row.stored += len(more)

    def _possible_names(self, prepared: Prepared) -> tuple[list[dict[str, Any]] | None, bool]:
        """Existing identifiers close to a query that found nothing, each with its own result
        (docs/query.md#plain-text); whether the budget ran out before every file was read."""
        names, exhausted = prepared.suggestions(SUGGEST_BUDGET_S)
        groups: list[dict[str, Any]] = []
        for name in names[:MAX_SUGGESTIONS]:
            sub_row = self._run(prepared.for_literal(name))
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

    def close(self) -> None:
        """Close the language servers and the graph this search run started."""
        engines = self.engines
        if engines.servers is not None:
            engines.servers.close()
            engines.servers = None
        if engines.graph is not None:
            engines.graph.close()
            engines.graph = None
        if engines.semantic is not None:
            engines.semantic.close()
            engines.semantic = None


def _warn(result: SearchResult, row: ResultRow) -> None:
    """A page of an ``ast:`` result whose pattern was recovered from a parse error says so
    (``pattern_warning``, docs/json.md#search): the one language's reading always; of a
    pattern read in several languages, the readings of the languages its matches are in (a
    JSON reading of a Python call, matching nothing, is no news to the reader)."""
    warnings = row.extra.get("pattern_warnings")
    if not isinstance(warnings, dict) or not warnings:
        return
    if int(row.extra.get("pattern_languages") or 0) > 1:
        shown = {language_for_path(str(m.get("path"))) for m in result.matches}
        warnings = {lang: w for lang, w in warnings.items() if lang in shown}
    said = "\n".join(str(w) for _, w in sorted(warnings.items()))
    if said:
        result.extra["pattern_warning"] = said
