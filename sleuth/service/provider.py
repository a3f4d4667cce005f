"""The provider API's logic (docs/faces.md#provider-api): ``manifest`` and ``search`` over the one
engine, answered as JSON objects, errors included.

``ProviderService.search`` spends a token of the workspace's rate limit
(``service.token_bucket``), reads the query union and the options (``service.provider_query``)
and runs one ``search`` page through the engine (``Workbench.search``): exact text as a quoted
literal, regex as ``regex:``, semantic as ``semantic:``. The page, its order and its cursor are
``Searches``' own, so every rule of a search holds here too: denied files are dropped before
ordering and paging (docs/faces.md#access-policy-denied-files-are-cloaked), so no match and no
cursor reveals them, and a denied ``path`` is ``not_found`` exactly as a missing one; cursors
are opaque and tied to the query and path. Each match keeps the search's references (``ref``).

The page has no text budget (``max_bytes=None``): it holds exactly ``limit`` matches while more
exist. A semantic query passes its ``threshold`` to the search, which drops lower scores
before paging; a match under it that still arrived ends the page and the result (scores
descend).

``answer`` is the provider's one mapping of failures: a ``SleuthError`` becomes its error
object, any other exception the ``internal`` one; nothing is raised for bad input.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from sleuth.errors import Internal, SleuthError
from sleuth.query.request import DEFAULT_LIMIT, MAX_LIMIT
from sleuth.service.provider_query import (
    FLAGS,
    SEMANTIC_INSTALL,
    OptsRequest,
    ProviderQuery,
    parse_opts,
    parse_query,
)
from sleuth.service.token_bucket import RateLimiter

if TYPE_CHECKING:
    from sleuth.service.requests import ProviderRequest

__all__ = [
    "ProviderService",
    "Searcher",
    "TEXT_MAX",
    "answer",
    "run_verb",
    "semantic_missing",
]

TEXT_MAX = 256
"""A match's ``text`` is at most this many characters (docs/json.md#search)."""
CONTEXT = 1
"""Context lines on each side of a match (the default of every face)."""
ORDERING = {
    "exact": ["path", "line", "column"],
    "regex": ["path", "line", "column"],
    "semantic": ["-score", "path"],
}


class _Page(Protocol):
    def to_json(self) -> dict[str, Any]: ...


class Searcher(Protocol):
    """What the provider runs on: ``Workbench.search`` (unit tests pass a fake)."""

    def search(self, *args: Any, **kwargs: Any) -> _Page: ...


def semantic_missing() -> str | None:
    """Why ``semantic:`` cannot run here (with the install line), None when it can:
    ``sleuth.semantic`` imports and its ``available()`` says its model is installed."""
    try:
        module = importlib.import_module("sleuth.semantic")
    except ImportError:
        return f"semantic search is not installed: {SEMANTIC_INSTALL}"
    available = getattr(module, "available", None)
    if callable(available) and available():
        return None
    return str(getattr(module, "MISSING", f"semantic search needs: {SEMANTIC_INSTALL}"))


def answer(call: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``call()``'s answer, or its failure as the error object (docs/errors.md): an unexpected
    exception is ``internal``, never raised."""
    try:
        return call()
    except SleuthError as exc:
        return exc.to_json()
    except Exception as exc:
        internal = Internal(
            f"unexpected {type(exc).__name__}: {exc}", details={"exception": type(exc).__name__}
        )
        return internal.to_json()


def _match(found: dict[str, Any], mode: str) -> dict[str, Any]:
    """A provider match from a search match: location, text, context, references, score."""
    text = found.get("text") or ""
    context = found.get("context") or {"before": [], "after": []}
    return {
        "path": found["path"],
        "line": found["line"],
        "end_line": found["end_line"],
        "column": found["column"],
        "end_column": found["end_column"],
        "text": text[:TEXT_MAX],
        "context": {"before": list(context["before"]), "after": list(context["after"])},
        "ref": found["ref"],
        "score": found.get("score") if mode == "semantic" else None,
    }


class ProviderService:
    """The provider API of one workspace: ``manifest`` and ``search``, raising ``SleuthError``
    (``answer`` turns that into the error object)."""

    def __init__(
        self,
        engine: Searcher,
        *,
        config: Callable[[], Mapping[str, Any]] = dict,
        clock: Callable[[], float] = time.monotonic,
        semantic: Callable[[], str | None] = semantic_missing,
    ) -> None:
        self._engine = engine
        self._limiter = RateLimiter(config, clock)
        self._semantic = semantic

    def _modes(self) -> tuple[list[str], str | None]:
        """The search modes this workspace answers (semantic only with its model installed),
        and why semantic is not one of them."""
        missing = self._semantic()
        return (["exact", "regex"] if missing else ["exact", "regex", "semantic"]), missing

    def manifest(self) -> dict[str, Any]:
        """What this provider searches: modes, regex flags, ordering per mode, limits."""
        modes, _ = self._modes()
        rate = self._limiter.rate()
        return {
            "search": {
                "modes": modes,
                "x-flags": FLAGS,
                "x-ordering": {mode: ORDERING[mode] for mode in modes},
                "limits": {
                    "default_limit": DEFAULT_LIMIT,
                    "max_limit": MAX_LIMIT,
                    "text_chars": TEXT_MAX,
                    "context_lines": CONTEXT,
                    "rate": None if rate is None else rate.to_json(),
                },
            }
        }

    def search(self, query: object, opts: object = None) -> dict[str, Any]:
        """One page: ``{"matches": [...], "next_cursor": ...}``, ``next_cursor`` only when more
        exist."""
        self._limiter.check()
        parsed = parse_query(query, *self._modes())
        options = parse_opts(opts)
        page = self._page(parsed, options)
        matches = [_match(m, parsed.mode) for m in page["matches"]]
        cursor = page.get("next_cursor")
        if parsed.threshold is not None:
            matches, cursor = _above(parsed.threshold, matches, cursor)
        out: dict[str, Any] = {"matches": matches}
        if cursor is not None:
            out["next_cursor"] = cursor
        return out

    def _page(self, query: ProviderQuery, opts: OptsRequest) -> dict[str, Any]:
        semantic = {} if query.threshold is None else {"threshold": query.threshold}
        page: dict[str, Any] = self._engine.search(
            query.search_query,
            path=opts.path,
            limit=opts.limit,
            cursor=opts.cursor,
            context=CONTEXT,
            case_sensitive=query.case_sensitive,
            max_bytes=None,
            **semantic,
        ).to_json()
        return page


def _above(
    threshold: float, matches: list[dict[str, Any]], cursor: str | None
) -> tuple[list[dict[str, Any]], str | None]:
    """The matches scoring at least ``threshold``, and the cursor while none was dropped: the
    engine drops them itself, and since scores descend, one under it ends the result."""
    kept = [m for m in matches if (m["score"] or 0.0) >= threshold]
    return kept, cursor if len(kept) == len(matches) else None


def run_verb(engine: Searcher, request: ProviderRequest) -> dict[str, Any]:
    """``sleuth provider manifest|search`` on the CLI's engine; raises ``SleuthError`` (the
    CLI maps it, exit code included, in its one function)."""
    workspace = getattr(engine, "workspace", None)  # a face's fake engine has no configuration
    config: Mapping[str, Any] = getattr(workspace, "config", None) or {}
    service = ProviderService(engine, config=lambda: config)
    if request.action == "manifest":
        return service.manifest()
    return service.search(request.query, request.opts)
