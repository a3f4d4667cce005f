"""Reference strings parse strictly (docs/references.md#the-forms): malformed is invalid_query,
never a crash."""

from __future__ import annotations

import pytest

from sleuth.errors import InvalidQuery
from sleuth.resources.refs import parse_ref


@pytest.mark.parametrize(
    ("text", "kind", "rid", "n", "unit"),
    [
        ("SEARCH#7f3a9c21:1:line", "search", "SEARCH#7f3a9c21", 1, "line"),
        ("SEARCH#7f3a9c21:12:match", "search", "SEARCH#7f3a9c21", 12, "match"),
        ("SEARCH#7f3a9c21:all:line", "search", "SEARCH#7f3a9c21", None, "line"),
        ("SEARCH#7f3a9c21:all:match", "search", "SEARCH#7f3a9c21", None, "match"),
        ("SEARCH#7f3a9c21", "search", "SEARCH#7f3a9c21", None, "match"),
        ("RESULT#0badcafe", "result", "RESULT#0badcafe", None, "match"),
    ],
)
def test_parse(text: str, kind: str, rid: str, n: int | None, unit: str) -> None:
    ref = parse_ref(text)
    assert (ref.kind, ref.result_id, ref.n, ref.unit, ref.text) == (kind, rid, n, unit, text)


@pytest.mark.parametrize(
    "text",
    [
        "SEARCH#zz",
        "SEARCH#",
        "RESULT#",
        "SEARCH#7f3a9c21:0:line",
        "SEARCH#7f3a9c21:1:word",
        "SEARCH#7f3a9c21:1",
        "SEARCH#7F3A9C21:1:line",
        "SEARCH#7f3a9c21:1:line ",
        "SEARCH#1'; DROP TABLE results;--",
        "RESULT#0badcafe:1:match",
        "x" * 5000,
    ],
)
def test_malformed(text: str) -> None:
    with pytest.raises(InvalidQuery) as err:
        parse_ref(text)
    assert "SEARCH#<8 hex>" in err.value.message
