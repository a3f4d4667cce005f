"""Prefix routing (docs/query.md): known prefixes, unknown `word:` prefixes as text, unbuilt
engines."""

from __future__ import annotations

import pytest

from sleuth.errors import InvalidQuery
from sleuth.query.router import route


@pytest.mark.parametrize(
    ("query", "mode", "body"),
    [
        ("regex:fo+", "regex", "fo+"),
        ("files:*.py", "files", "*.py"),
        ("ast:foo($A)", "ast", "foo($A)"),
        ("get_user", "text", "get_user"),
        ("TODO: fix", "text", "TODO: fix"),
        ("http://example.com", "text", "http://example.com"),
        ("note:regex:x", "text", "note:regex:x"),
        (" regex:x", "text", " regex:x"),
        ("Regex:x", "text", "Regex:x"),
    ],
)
def test_route_modes(query: str, mode: str, body: str) -> None:
    rt = route(query)
    assert (rt.mode, rt.body) == (mode, body)


def test_semantic_routes_to_its_engine() -> None:
    rt = route("semantic:load the users")
    assert (rt.mode, rt.body, rt.prefix) == ("semantic", "load the users", "semantic:")


@pytest.mark.parametrize(
    ("query", "mode", "body"),
    [
        ("symbols:User", "symbols", "User"),
        ("symbol:#abc", "symbol", "abc"),
        ("graph:src/a.py", "graph", "src/a.py"),
        ("graph:", "graph", ""),
    ],
)
def test_engine_prefixes(query: str, mode: str, body: str) -> None:
    rt = route(query)
    assert (rt.mode, rt.body) == (mode, body)


@pytest.mark.parametrize("query", ["regex:", "files:"])
def test_prefix_without_body_is_invalid(query: str) -> None:
    with pytest.raises(InvalidQuery) as err:
        route(query)
    assert err.value.details["position"] == len(query)
