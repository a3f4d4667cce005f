"""``SearchRequest``: the validated, frozen form of a ``search`` call (SPEC §3).

Faces parse their arguments into this dataclass before any engine is built (DESIGN: "Faces
parse their input into a frozen request dataclass first, with no I/O"). Validation here covers
everything that needs no disk: query length, NUL bytes, limit and context bounds.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sleuth.errors import InvalidQuery

__all__ = ["SearchRequest", "DEFAULT_LIMIT", "MAX_LIMIT", "MAX_QUERY_CHARS", "MAX_CONTEXT"]

DEFAULT_LIMIT = 100
MAX_LIMIT = 500  # SPEC §3: limit is capped at 500
MAX_QUERY_CHARS = 16 * 1024
MAX_CONTEXT = 20


@dataclass(frozen=True)
class SearchRequest:
    """One search, exactly as the caller asked for it (after bounds are applied)."""

    query: str
    path: str = "/"
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    limit: int = DEFAULT_LIMIT
    cursor: str | None = None
    context: int = 1
    lang: str | None = None
    navigation: str | None = None
    case_sensitive: bool = True
    selector: str | None = None
    strictness: str | None = None
    depth: int | None = None

    @classmethod
    def build(
        cls,
        query: str,
        *,
        path: str | None = "/",
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        limit: int | None = DEFAULT_LIMIT,
        cursor: str | None = None,
        context: int | None = 1,
        lang: str | None = None,
        navigation: str | None = None,
        case_sensitive: bool = True,
        selector: str | None = None,
        strictness: str | None = None,
        depth: int | None = None,
    ) -> SearchRequest:
        """Validate raw arguments; raises ``InvalidQuery`` for anything malformed."""
        if not isinstance(query, str):
            raise InvalidQuery("the query must be a string")
        if query == "" or query.strip() == "":
            raise InvalidQuery("empty query: give text to search for, or a prefix such as regex:")
        if "\x00" in query:
            raise InvalidQuery(
                "the query contains a NUL byte; use regex:\\x00 to search for one",
                details={"position": query.index("\x00")},
            )
        if len(query) > MAX_QUERY_CHARS:
            raise InvalidQuery(
                f"query too long ({len(query)} characters, at most {MAX_QUERY_CHARS}): "
                "search for a distinctive part of it",
                details={"length": len(query), "max": MAX_QUERY_CHARS},
            )
        if limit is None:
            limit = DEFAULT_LIMIT
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidQuery(f"limit must be a positive integer, got {limit!r}")
        if context is None:
            context = 1
        if isinstance(context, bool) or not isinstance(context, int) or context < 0:
            raise InvalidQuery(f"context must be a non-negative integer, got {context!r}")
        for glob in (*include, *exclude):
            if not isinstance(glob, str) or glob == "" or "\x00" in glob:
                raise InvalidQuery(f"include/exclude globs must be non-empty strings, got {glob!r}")
        if navigation not in (None, "references"):
            raise InvalidQuery(f"navigation must be 'references' or absent, got {navigation!r}")
        for name, value in (("lang", lang), ("selector", selector), ("strictness", strictness)):
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise InvalidQuery(f"{name} must be a non-empty string, got {value!r}")
        if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 0):
            raise InvalidQuery(f"depth must be a non-negative integer, got {depth!r}")
        if cursor is not None and (not isinstance(cursor, str) or not cursor):
            raise InvalidQuery("cursor must be the next_cursor string of a previous page")
        return cls(
            query=query,
            path="/" if path in (None, "") else str(path),
            include=tuple(include),
            exclude=tuple(exclude),
            limit=min(limit, MAX_LIMIT),
            cursor=cursor,
            context=min(context, MAX_CONTEXT),
            lang=lang,
            navigation=navigation,
            case_sensitive=bool(case_sensitive),
            selector=selector,
            strictness=strictness,
            depth=depth,
        )

    def identity(self) -> dict[str, Any]:
        """What makes two requests the same search (everything but paging)."""
        return {
            "query": self.query,
            "path": self.path,
            "include": list(self.include),
            "exclude": list(self.exclude),
            "context": self.context,
            "lang": self.lang,
            "navigation": self.navigation,
            "case_sensitive": self.case_sensitive,
            "selector": self.selector,
            "strictness": self.strictness,
            "depth": self.depth,
        }

    def identity_json(self) -> str:
        return json.dumps(self.identity(), sort_keys=True, ensure_ascii=False)
