"""``SearchRequest``: the validated, frozen form of a ``search`` call (docs/query.md#options).

Faces parse their arguments into this dataclass before any engine is built
(docs/architecture.md#faces-are-thin: "Faces parse their input into a frozen request dataclass
first, with no I/O"). Validation here covers everything that needs no disk: query length, NUL
bytes, text that is not Unicode (a lone surrogate), limit and context bounds. ``check_text`` is
that Unicode check on its own, for the other verbs' arguments in every face.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from sleuth.errors import InvalidQuery
from sleuth.fields import Request, arg

__all__ = [
    "SearchRequest",
    "DEFAULT_LIMIT",
    "DEFAULT_MAX_BYTES",
    "GRAPH_LIMIT",
    "check_max_bytes",
    "MAX_LIMIT",
    "MAX_QUERY_CHARS",
    "MAX_CONTEXT",
    "check_text",
    "non_empty",
    "unicode_problem",
]

DEFAULT_LIMIT = 100
GRAPH_LIMIT = 20  # graph: answers carry edges: a smaller page (docs/query.md#limits)
MAX_LIMIT = 500  # docs/query.md#limits: limit is capped at 500
DEFAULT_MAX_BYTES = 16 * 1024
"""The default text budget of a search or read answer (docs/faces.md#budgets)."""
MIN_MAX_BYTES = 256
MAX_QUERY_CHARS = 16 * 1024
MAX_CONTEXT = 20


def unicode_problem(value: str) -> tuple[int, str] | None:
    """(1-based character, what is wrong) when ``value`` holds a lone surrogate, else None.

    Such a string cannot be encoded as UTF-8, so it would fail deep inside an engine, the
    registry or the output writer. It comes from bytes that are not UTF-8 (argv, decoded with
    surrogateescape to U+DC80..U+DCFF) or from a JSON ``\\ud800`` escape that is not half of a pair.
    """
    if value.isascii():
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        point = ord(value[exc.start])
        if 0xDC80 <= point <= 0xDCFF:
            return exc.start + 1, f"byte 0x{point - 0xDC00:02x} (U+{point:04X})"
        return exc.start + 1, f"a lone surrogate U+{point:04X}"
    return None


def check_text(value: str, name: str) -> str:
    """``value`` unchanged, or ``InvalidQuery`` naming argument ``name`` when it is not Unicode
    text (``unicode_problem``); one call per string argument of a verb, before any I/O."""
    problem = unicode_problem(value)
    if problem is not None:
        where, what = problem
        raise InvalidQuery(
            f"{name} is not valid UTF-8 text: {what} at character {where}; pass it as UTF-8",
            details={"argument": name, "character": where},
        )
    return value


def non_empty(value: object, what: str, name: str) -> str:
    """``value`` as a non-empty string fit to be a field's text (else ``what`` as the error)."""
    if not isinstance(value, str) or not value:
        raise InvalidQuery(what, details={"argument": name})
    return check_text(value, name)


def check_max_bytes(value: object) -> int | None:
    """A text budget: a whole number of bytes, at least ``MIN_MAX_BYTES`` (None: no budget)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < MIN_MAX_BYTES:
        raise InvalidQuery(
            f"max_bytes is a number of bytes, at least {MIN_MAX_BYTES}; got {value!r}",
            details={"argument": "max_bytes"},
        )
    return value


OUTPUTS = ("lines", "locations")
"""What a search's text shows (docs/faces.md#locations); no part of the result's identity."""


@dataclass(frozen=True)
class SearchRequest(Request):
    """One search, exactly as the caller asked for it (after bounds are applied)."""

    ALIASES: ClassVar[Mapping[str, str]] = {"pattern": "query"}

    query: str = arg(
        cli="positional",
        metavar="QUERY",
        help="text, or a prefix: regex: files: ast: ...",
        describe="text or a prefixed query",
    )
    path: str = arg(
        "/", help="folder, file or reference to search in", describe="folder, file or reference"
    )
    include: tuple[str, ...] = arg(
        (), metavar="GLOB", help="globs a path must match", describe="globs to keep"
    )
    exclude: tuple[str, ...] = arg(
        (), metavar="GLOB", help="globs that drop a path", describe="globs to drop"
    )
    limit: int | None = arg(
        None,
        help="matches per page (default 100, 20 for graph:; max 500)",
        describe="page size (max 500)",
    )
    cursor: str | None = arg(None, help="next_cursor of the previous page", describe="next_cursor")
    context: int = arg(
        1,
        metavar="N",
        help="context lines",
        describe="context lines",
    )
    lang: str | None = arg(None, help="language for ast: and symbols: queries", describe="language")
    navigation: str | None = arg(
        None,
        choices=("references",),
        help="'references' with symbols:",
        describe="'references': uses",
    )
    case_sensitive: bool = arg(
        True,
        cli="off_flag",
        flag="--ignore-case",
        short="-i",
        help="case-insensitive",
        describe="false: ignore case",
    )
    selector: str | None = arg(
        None,
        metavar="KIND",
        help="ast: the node kind to report inside a context pattern",
        describe="ast: node kind",
    )
    strictness: str | None = arg(
        None,
        choices=("cst", "smart", "ast", "relaxed", "signature", "template"),
        help="ast: how strictly the pattern must match (default smart)",
        describe="ast: match level",
    )
    depth: int | None = arg(
        None,
        metavar="N",
        help="graph: how far to follow dependents",
        describe="graph: depth",
    )
    threshold: float | None = arg(
        None,
        metavar="X",
        help="semantic: lowest score kept, 0 to 1",
        describe="min score",
    )
    max_bytes: int | None = arg(
        DEFAULT_MAX_BYTES,
        metavar="N",
        help="text budget: the page is cut at a match to fit (see next_cursor)",
        describe="text budget",
    )
    output: str = arg(
        "lines",
        choices=OUTPUTS,
        help="text shown: each match's line, or 'locations' (path once, then line:col)",
        describe="'locations': line:col, no text",
    )

    @classmethod
    def check(cls, values: dict[str, Any]) -> dict[str, Any]:
        """Validate raw arguments; raises ``InvalidQuery`` for anything malformed."""
        query = values["query"]
        if not isinstance(query, str):
            raise InvalidQuery("the query must be a string")
        if query == "" or query.strip() == "":
            raise InvalidQuery("empty query: give text to search for, or a prefix such as regex:")
        check_text(query, "query")
        if "\x00" in query:
            raise InvalidQuery(
                "the query contains a NUL byte, which no match can hold (ripgrep refuses it "
                "too: a file holding one is binary): drop it from the query",
                details={"position": query.index("\x00")},
            )
        if len(query) > MAX_QUERY_CHARS:
            raise InvalidQuery(
                f"query too long ({len(query)} characters, at most {MAX_QUERY_CHARS}): "
                "search for a distinctive part of it",
                details={"length": len(query), "max": MAX_QUERY_CHARS},
            )
        limit = values["limit"]
        if limit is None:
            limit = GRAPH_LIMIT if query.startswith("graph:") else DEFAULT_LIMIT
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidQuery(f"limit must be a positive integer, got {limit!r}")
        context = 1 if values["context"] is None else values["context"]
        if isinstance(context, bool) or not isinstance(context, int) or context < 0:
            raise InvalidQuery(f"context must be a non-negative integer, got {context!r}")
        globs_of: dict[str, tuple[Any, ...]] = {}
        for name in ("include", "exclude"):
            globs = () if values[name] is None else values[name]
            if isinstance(globs, str):
                raise InvalidQuery(f"{name} is a list of globs, got the string {globs!r}")
            if not isinstance(globs, (list, tuple)):
                raise InvalidQuery(f"{name} is a list of globs, got {globs!r}")
            globs_of[name] = tuple(globs)
            for glob in globs:
                if not isinstance(glob, str) or glob == "" or "\x00" in glob:
                    raise InvalidQuery(f"{name} globs must be non-empty strings, got {glob!r}")
                check_text(glob, name)
        path = values["path"]
        path = "/" if path in (None, "") else check_text(str(path), "path")
        navigation = values["navigation"]
        if navigation not in (None, "references"):
            raise InvalidQuery(f"navigation must be 'references' or absent, got {navigation!r}")
        output = "lines" if values["output"] is None else values["output"]
        if output not in OUTPUTS:
            raise InvalidQuery(
                f"output must be 'lines' or 'locations', got {output!r}",
                details={"argument": "output"},
            )
        for name in ("lang", "selector", "strictness"):
            value = values[name]
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise InvalidQuery(f"{name} must be a non-empty string, got {value!r}")
            if value is not None:
                check_text(value, name)
        depth = values["depth"]
        if depth is not None and (
            isinstance(depth, bool) or not isinstance(depth, int) or depth < 0
        ):
            raise InvalidQuery(f"depth must be a non-negative integer, got {depth!r}")
        threshold = values["threshold"]
        if threshold is not None:
            if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
                raise InvalidQuery(f"threshold is a number from 0 to 1, got {threshold!r}")
            if not 0.0 <= threshold <= 1.0:  # NaN fails this too
                raise InvalidQuery(
                    f"threshold is a score from 0 to 1, got {threshold!r}",
                    details={"argument": "threshold"},
                )
            values = {**values, "threshold": float(threshold)}
        cursor = values["cursor"]
        if cursor is not None and (not isinstance(cursor, str) or not cursor):
            raise InvalidQuery("cursor must be the next_cursor string of a previous page")
        if cursor is not None:
            check_text(cursor, "cursor")
        return {
            **values,
            "path": path,
            "include": globs_of["include"],
            "exclude": globs_of["exclude"],
            "limit": min(limit, MAX_LIMIT),
            "context": min(context, MAX_CONTEXT),
            "case_sensitive": bool(values["case_sensitive"]),
            "max_bytes": check_max_bytes(values["max_bytes"]),
            "output": output,
        }

    @property
    def page_limit(self) -> int:
        """The page size: ``limit`` as ``check`` resolved it (a built request always has one)."""
        return DEFAULT_LIMIT if self.limit is None else self.limit

    def identity(self) -> dict[str, Any]:
        """What makes two requests the same search: every field but paging and showing
        (``limit``, ``cursor``, ``max_bytes``, ``output``), so a field added to the request is part of every result's identity."""
        found = {}
        for field in dataclasses.fields(self):
            if field.name not in ("limit", "cursor", "max_bytes", "output"):
                value = getattr(self, field.name)
                found[field.name] = list(value) if isinstance(value, tuple) else value
        return found

    def identity_json(self) -> str:
        return json.dumps(self.identity(), sort_keys=True, ensure_ascii=False)
