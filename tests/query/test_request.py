"""Request validation (docs/query.md#options, docs/errors.md): bounds and malformed input, before
any I/O."""

from __future__ import annotations

import pytest

from sleuth.errors import InvalidQuery
from sleuth.query.request import MAX_LIMIT, MAX_QUERY_CHARS, SearchRequest


def test_defaults() -> None:
    req = SearchRequest.build("x")
    assert (req.limit, req.context, req.path, req.case_sensitive) == (100, 1, "/", True)


def test_limit_is_capped() -> None:
    assert SearchRequest.build("x", limit=10_000).limit == MAX_LIMIT


@pytest.mark.parametrize("query", ["", "   ", "\t\n"])
def test_empty_query(query: str) -> None:
    with pytest.raises(InvalidQuery, match="empty query"):
        SearchRequest.build(query)


def test_nul_byte_reports_position() -> None:
    with pytest.raises(InvalidQuery) as err:
        SearchRequest.build("ab\x00c")
    assert err.value.details["position"] == 2


def test_megabyte_query() -> None:
    with pytest.raises(InvalidQuery) as err:
        SearchRequest.build("a" * 1_000_000)
    assert err.value.details["max"] == MAX_QUERY_CHARS


@pytest.mark.parametrize("limit", [0, -1, True])
def test_bad_limit(limit: int) -> None:
    with pytest.raises(InvalidQuery):
        SearchRequest.build("x", limit=limit)


def test_bad_context_and_navigation() -> None:
    with pytest.raises(InvalidQuery):
        SearchRequest.build("x", context=-1)
    with pytest.raises(InvalidQuery):
        SearchRequest.build("x", navigation="callers")


def test_identity_ignores_paging() -> None:
    a = SearchRequest.build("x", limit=5)
    b = SearchRequest.build("x", limit=50, cursor="abc")
    assert a.identity_json() == b.identity_json()
    assert a.identity_json() != SearchRequest.build("x", case_sensitive=False).identity_json()


def test_absent_globs_are_none_and_a_non_list_is_refused() -> None:
    """Seen: ``Workbench.search(q, exclude=None)`` raised a bare ``TypeError``."""
    request = SearchRequest.build(query="x", include=None, exclude=None)
    assert (request.include, request.exclude) == ((), ())
    for bad in (3, {"a": 1}, 2.5):
        with pytest.raises(InvalidQuery, match="exclude is a list of globs"):
            SearchRequest.build(query="x", exclude=bad)
