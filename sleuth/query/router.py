"""The prefix router of docs/query.md: which engine answers a query.

Only this package names the engines (docs/architecture.md#only-query-names-the-engines). A
prefix is recognised only at the very start of the query; an unknown ``word:`` prefix is plain
text. Prefixes whose engine is not built yet answer ``unsupported`` naming the prefix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sleuth.errors import InvalidQuery, Unsupported

__all__ = ["Route", "route", "Mode"]

Mode = Literal["text", "regex", "files", "ast", "symbols", "symbol", "graph", "semantic"]

# Longest first so that `symbols:` is not read as `symbol:`.
_PREFIXES: tuple[tuple[str, Mode], ...] = (
    ("symbols:", "symbols"),
    ("symbol:#", "symbol"),
    ("semantic:", "semantic"),
    ("regex:", "regex"),
    ("files:", "files"),
    ("graph:", "graph"),
    ("ast:", "ast"),
)

_NOT_BUILT: dict[Mode, str] = {}


@dataclass(frozen=True)
class Route:
    """A routed query: the engine's mode and the text after the prefix."""

    mode: Mode
    body: str
    prefix: str = ""


def route(query: str) -> Route:
    """Split ``query`` into (mode, body); raise for prefixes with no engine or no body."""
    for prefix, mode in _PREFIXES:
        if query.startswith(prefix):
            body = query[len(prefix) :]
            if mode in _NOT_BUILT:
                raise Unsupported(_NOT_BUILT[mode], details={"prefix": prefix, "mode": mode})
            if body == "" and mode != "graph":  # `graph:` alone is the ranked workspace map
                raise InvalidQuery(
                    f"nothing after the {prefix} prefix: give a pattern, e.g. {prefix}foo",
                    details={"position": len(prefix), "prefix": prefix},
                )
            return Route(mode=mode, body=body, prefix=prefix)
    return Route(mode="text", body=query)
