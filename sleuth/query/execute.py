"""From a ``SearchRequest`` to something that produces matches: route, scope, files, stages.

``prepare`` does everything a search needs before the first file is read: it routes the query
(docs/query.md), validates the scope through the workspace (cloaking, ``invalid_path``), lists the
files, and plans the engine stages (text fallback chain, regex, Boolean) or, for ``files:``,
computes the path matches outright. The registry in ``resources`` drives the scan and pages it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import xxhash

from sleuth.errors import InvalidQuery, Unsupported
from sleuth.model import Match, SkipCounts
from sleuth.query.listing_digest import ListingDigests, listing_digest
from sleuth.query.request import SearchRequest
from sleuth.query.router import Route, route
from sleuth.query.scan import Scanner, Stage
from sleuth.workspace import FileEntry, Workspace

if TYPE_CHECKING:
    from sleuth.ast_search import MatchPool, TreeCache
    from sleuth.query.ast_memo import AstMemos
    from sleuth.query.graph_confirm import Confirmer
    from sleuth.query.graph_keeper import GraphKeeper
    from sleuth.query.index import IndexKeeper
    from sleuth.query.servers import LanguageServers
    from sleuth.query.symbols_mode import TagsCache
    from sleuth.semantic import SemanticIndex
    from sleuth.tuning import Collector

# Engines a query does not use are imported when first needed: a one-shot CLI call pays only
# for its own mode (tree-sitter and its grammars cost more to import than a small search).

__all__ = ["Prepared", "prepare", "ScopeRange", "Engines"]

ScopeRange = tuple[str, int, int, str]
"""(path, start_byte, end_byte, stamp) of one range of a reference scope."""


@dataclass
class Prepared:
    """A search ready to run: its files, its stages (or path matches), its snapshot fingerprint."""

    ws: Workspace
    request: SearchRequest
    route: Route
    scope: str
    files: list[FileEntry]
    skipped: SkipCounts
    fingerprint: str
    stages: list[Stage] = field(default_factory=list)
    suggest: bool = False
    path_matches: list[Match] | None = None
    ordered_by_score: bool = False
    location_hints: bool = False
    """The matches are hints (``semantic:``): an edit through them is ``unsafe_selection``
    unless they are selected explicitly (docs/query.md#semantic-hybrid-retrieval)."""
    index: IndexKeeper | None = None
    notes: list[str] = field(default_factory=list)
    """Why the answer is incomplete beyond skipped files (a language without symbols, ...)."""
    ranges: dict[str, list[tuple[int, int]]] | None = None
    digests: ListingDigests | None = None  # the engines' listing digest memo
    pattern_warnings: dict[str, str] = field(default_factory=dict)
    """``ast:``: what its pattern's parse recovered from, per language (its one language's
    always said; of several, a page says those of its matches' languages)."""
    pattern_languages: int = 0

    def scanner(self, stage: Stage) -> Scanner:
        """A scanner for ``stage`` over this search's files (narrowed by the index if warm)."""
        candidates = self.index.candidates(stage.source.literals) if self.index else None
        return Scanner(
            self.ws,
            self.files,
            stage.source,
            context=self.request.context,
            candidates=candidates,
            skipped=self.skipped,
            ranges=self.ranges,
            notes=self.notes,
        )

    def stage_named(self, mode: str, fallback: str | None) -> Stage:
        for stage in self.stages:
            if stage.mode == mode and stage.fallback == fallback:
                return stage
        raise InvalidQuery("this cursor no longer fits its query: search again without a cursor")

    def iter_texts(self) -> Iterator[bytes]:
        ws = self.ws
        for entry in self.files:
            ft = ws.read(entry.path)
            if ft is not None:
                yield ft.data

    def for_literal(self, text: str) -> Prepared:
        """The same scope and files, searched for the exact literal ``text`` (no fallback)."""
        req = replace(self.request, query=f'"{text}"', cursor=None, case_sensitive=True)
        from sleuth.query.text_mode import plan_text

        stages, _ = plan_text(req.query, case_sensitive=True)
        return replace(
            self,
            request=req,
            route=Route(mode="text", body=req.query),
            fingerprint=_fingerprint(req, self.files, digests=self.digests),
            stages=stages,
            suggest=False,
            path_matches=None,
        )

    def suggestions(self, budget_s: float) -> tuple[list[str], bool]:
        """Existing identifiers close to the query (docs/query.md#name-suggestions)."""
        from sleuth.text_search.names import suggest_names

        return suggest_names(self.route.body, self.iter_texts(), budget_s=budget_s)


ENGINE_VERSION = "sleuth-0.1/results-15"
"""Part of every result's identity: answers stored by an older engine are never reused."""


def _fingerprint(
    req: SearchRequest,
    files: list[FileEntry],
    setup: str = "",
    digests: ListingDigests | None = None,
) -> str:
    h = xxhash.xxh3_64(ENGINE_VERSION.encode())
    h.update(req.identity_json().encode())
    h.update(setup.encode())
    h.update(listing_digest(files, digests).encode())
    return h.hexdigest()


@dataclass
class Engines:
    """Warm engine state a long-running face keeps between queries (all optional)."""

    index: IndexKeeper | None = None
    trees: TreeCache | None = None
    tags: TagsCache | None = None
    servers: LanguageServers | None = None  # made on first use by ``make_servers``
    make_servers: Callable[[], LanguageServers | None] | None = None
    symbol_paths: dict[str, str] = field(default_factory=dict)  # id -> path hints (symbol:#)
    graph: GraphKeeper | None = None  # made on the first graph: query
    confirmer: Confirmer | None = None  # made on the first graph:#ID
    semantic: SemanticIndex | None = None  # made on the first semantic: query
    # A process that answers once and exits (the CLI): ``graph:PATH`` reads only the part of a
    # current graph cache it needs instead of loading it whole (``GraphKeeper.part``).
    one_shot: bool = False
    # Process resources the session lends (``service.session.Session``): its ast worker pool
    # (made on first use; None: ast: scans stay serial), its per-request ast memos, its listing
    # digest memo and its collector policy (None: ``Collector.of`` the workspace's tuning).
    match_pool: Callable[[], MatchPool | None] | None = None
    ast_memos: Callable[[], AstMemos] | None = None  # the session's, made on the first ast:
    digests: ListingDigests = field(default_factory=ListingDigests)
    collector: Collector | None = None


def _setup(rt: Route, engines: Engines) -> str:
    """What besides the request and the files shapes an answer: whether language servers may
    answer (``symbols:``, ``symbol:#`` and ``graph:`` are semantic with them, syntactic
    without), so a face without servers never reuses a stored semantic answer, or the reverse."""
    if rt.mode not in ("symbols", "symbol", "graph"):
        return ""
    return "servers" if engines.servers is not None or engines.make_servers is not None else ""


def prepare(
    ws: Workspace,
    req: SearchRequest,
    engines: Engines | None = None,
    scope_ranges: Sequence[ScopeRange] | None = None,
) -> Prepared:
    """Route, validate the scope and plan the search; no file content is read yet.

    ``scope_ranges`` is a reference scope resolved by ``resources``
    (docs/references.md#references-as-a-scope): only those
    byte ranges are searched, each on its own.
    """
    engines = engines or Engines()
    index = engines.index
    rt = route(req.query)
    if scope_ranges is not None:
        return _prepare_in_ranges(ws, req, rt, scope_ranges, engines)
    scope = ws.validate_path(req.path)
    listing = ws.list_files(scope, req.include, req.exclude, any_size=rt.mode == "files")
    files = listing.files
    prepared = Prepared(
        ws=ws,
        request=req,
        route=rt,
        scope=scope,
        files=files,
        skipped=listing.skipped,
        fingerprint=_fingerprint(req, files, _setup(rt, engines), engines.digests),
        digests=engines.digests,
    )
    if rt.mode == "files":
        from sleuth.text_search.frecency import git_frecency
        from sleuth.text_search.path_query import compile_path_query, match_paths

        pq = compile_path_query(rt.body, case_sensitive=req.case_sensitive)
        frecency = git_frecency(ws.root) if pq.kind == "fuzzy" else None
        hits = match_paths(pq, [f.path for f in files], frecency)
        prepared.path_matches = [Match(path=p, text=p, score=s) for p, s in hits]
        prepared.ordered_by_score = pq.kind == "fuzzy"
        return prepared
    if rt.mode in ("symbols", "symbol"):
        _plan_symbols(prepared, engines, None)
        return prepared
    if rt.mode == "graph":
        _plan_graph(prepared, engines)
        return prepared
    if rt.mode == "semantic":
        from sleuth.query.semantic_mode import plan_semantic

        everything = _whole_listing(prepared)
        plan_semantic(prepared, engines, everything)
        # the ranking depends on every file (document frequencies), whatever the scope
        prepared.fingerprint = _fingerprint(req, everything, "semantic", engines.digests)
        return prepared
    if rt.mode == "ast":
        _plan_ast(prepared, engines)
    else:
        prepared.stages, prepared.suggest = _text_stages(rt, req)
    if index is not None:
        if prepared.ws.generation is not None:
            # Watched: the whole listing is kept, and a whole sync is skipped until the watcher
            # sees a change; a scoped or globbed listing would be checked file by file per call.
            index.sync(_whole_listing(prepared), whole=True)
        else:
            index.sync(files, whole=scope == "" and not req.include and not req.exclude)
        prepared.index = index if index.ready else None
    return prepared


def _plan_ast(prepared: Prepared, engines: Engines) -> None:
    """The one stage of an ``ast:`` query, over the files that may hold its literals."""
    from functools import partial

    from sleuth.query.ast_mode import plan_ast
    from sleuth.query.scan import make_matches

    source, prepared.files = plan_ast(
        prepared.route.body,
        prepared.request,
        prepared.files,
        engines.trees,
        tuning=prepared.ws.tuning,
        pool=engines.match_pool,
        memos=engines.ast_memos() if engines.ast_memos is not None else None,
        records=partial(make_matches, context=prepared.request.context),
    )
    prepared.stages = [Stage("ast", None, source)]
    prepared.pattern_warnings = source.pattern_warnings
    prepared.pattern_languages = len(source.languages)


def _text_stages(rt: Route, req: SearchRequest) -> tuple[list[Stage], bool]:
    """The stages of a ``regex:`` or unprefixed query, and whether names may be suggested;
    imported here so ``ast:`` and ``graph:`` calls never load the text planner (~18 ms)."""
    from sleuth.query.text_mode import plan_regex, plan_text

    if rt.mode == "regex":
        return plan_regex(rt.body, case_sensitive=req.case_sensitive), False
    return plan_text(rt.body, case_sensitive=req.case_sensitive)


def _whole_listing(prepared: Prepared) -> list[FileEntry]:
    """Every file of the workspace: the scope's own listing when the scope is the root."""
    req = prepared.request
    if prepared.scope == "" and not req.include and not req.exclude:
        return prepared.files
    return prepared.ws.list_files().files


def _plan_symbols(
    prepared: Prepared, engines: Engines, ranges: dict[str, list[tuple[int, int]]] | None
) -> None:
    from sleuth.query.lsp_symbols import pick_finder
    from sleuth.query.symbols_mode import TIERS, TagsCache, plan_symbol_id, plan_symbols

    if engines.tags is None:
        engines.tags = TagsCache()
    ws, req, rt = prepared.ws, prepared.request, prepared.route
    if engines.servers is None and engines.make_servers is not None:
        engines.servers = engines.make_servers()
    finder = pick_finder(ws, prepared.files, req.lang, engines.tags, engines.trees, engines.servers)
    if rt.mode == "symbol":
        source = plan_symbol_id(ws, rt.body, engines.symbol_paths.get(rt.body), finder)
    else:
        everything = _whole_listing(prepared) if req.navigation == "references" else None
        source = plan_symbols(ws, rt.body, prepared.files, everything, finder, ranges)
    missing = _languages_without_symbols(prepared.files, req.lang)
    if missing:
        prepared.notes.append(
            f"no symbols for {', '.join(sorted(missing))}: no language server and no tags rules"
        )
    by_path = {f.path: f for f in prepared.files}
    prepared.files = [by_path.get(p) or FileEntry(p, 0, 0) for p in source.paths]
    fallback = TIERS[source.tier] if source.tier else None
    prepared.stages = [Stage("symbol" if rt.mode == "symbol" else "symbols", fallback, source)]
    if source.reason:
        prepared.notes.append(source.reason)


def _plan_graph(prepared: Prepared, engines: Engines) -> None:
    from sleuth.query.graph_keeper import GraphKeeper
    from sleuth.query.graph_mode import graph_node_id, plan_graph_answer, synced_graph
    from sleuth.query.symbols_mode import TagsCache

    if prepared.route.body.strip().startswith("#"):
        graph_node_id(prepared.route.body)  # a missing id is a bad query, whatever the graph
    if engines.tags is None:
        engines.tags = TagsCache()
    if engines.graph is None:
        engines.graph = GraphKeeper(prepared.ws, engines.collector)
    # the answer depends on the whole workspace, whatever the scope: so do its sync and identity
    everything = _whole_listing(prepared)
    graph = synced_graph(prepared, engines, engines.graph, engines.tags, everything)
    prepared.fingerprint = _fingerprint(
        prepared.request, everything, _setup(prepared.route, engines), engines.digests
    )
    plan_graph_answer(prepared, graph)


def _languages_without_symbols(files: Sequence[FileEntry], lang: str | None) -> set[str]:
    from sleuth.ast_search import get_lang_spec, language_for_path
    from sleuth.ast_search.tags import tags_supported
    from sleuth.languages import BY_NAME

    if lang:
        present = {get_lang_spec(lang).name}
    else:
        present = {lg for f in files if (lg := language_for_path(f.path))}
    # data and markup declare nothing: no tags for them is not a gap in the answer
    return {lg for lg in present if BY_NAME[lg].declares and not tags_supported(lg)}


def _prepare_in_ranges(
    ws: Workspace,
    req: SearchRequest,
    rt: Route,
    scope_ranges: Sequence[ScopeRange],
    engines: Engines,
) -> Prepared:
    if req.include or req.exclude:
        raise Unsupported(
            "include/exclude cannot narrow a reference scope: the reference already selects "
            "exact ranges (docs/references.md#references-as-a-scope)"
        )
    if rt.mode not in ("text", "regex", "ast", "symbols"):
        raise Unsupported(f"{rt.prefix or rt.mode} queries cannot run inside a reference scope yet")
    ranges: dict[str, list[tuple[int, int]]] = {}
    for path, start, end, _stamp in scope_ranges:
        ranges.setdefault(path, []).append((start, end))
    files = [FileEntry(path, 0, 0) for path in sorted(ranges)]
    h = xxhash.xxh3_64(ENGINE_VERSION.encode())
    h.update(req.identity_json().encode())
    h.update(repr(sorted(scope_ranges)).encode())
    h.update(_setup(rt, engines).encode())
    prepared = Prepared(
        ws=ws,
        request=req,
        route=rt,
        scope=req.path,
        files=files,
        skipped=SkipCounts(),
        fingerprint=h.hexdigest(),
        ranges=ranges,
    )
    if rt.mode == "symbols":
        if req.navigation == "references":
            raise Unsupported(
                "symbols: with navigation=references lists references across the workspace: "
                "run it without a reference scope"
            )
        _plan_symbols(prepared, engines, ranges)
        prepared.ranges = None  # declarations were already kept to the ranges
    elif rt.mode == "ast":
        _plan_ast(prepared, engines)
    else:
        prepared.stages, prepared.suggest = _text_stages(rt, req)
        if prepared.stages[0].mode == "boolean":
            raise Unsupported(
                "Boolean queries cannot run inside a reference scope: search one term at a time "
                "(docs/references.md#references-as-a-scope)"
            )
    return prepared
