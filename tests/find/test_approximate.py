"""Approximate line matching for fuzzy grep (sleuth/find/approximate.py)."""

from __future__ import annotations

import pytest

from sleuth.find.approximate import BOUNDARY_BONUS, approximate_spans, max_edits

TEXT = (
    b"def get_user(uid):\n"  # 1
    b"    return USERS.get(uid)\n"  # 2
    b"    retrun None\n"  # 3 (a typo in the file)
    b"    getuser_cache = {}\n"  # 4
    b"unrelated line\n"  # 5
)


def found(needle: str, data: bytes = TEXT, **kw: bool) -> list[tuple[bytes, int]]:
    hits = approximate_spans(data, needle, case_sensitive=kw.get("cs", False))
    return [(data[s:e], edits) for s, e, edits, _ in hits]


@pytest.mark.parametrize(
    ("length", "edits"), [(1, 0), (3, 0), (4, 1), (7, 1), (8, 2), (11, 2), (12, 3), (40, 3)]
)
def test_tolerated_edits_grow_with_the_needle(length: int, edits: int) -> None:
    assert max_edits(length) == edits


def test_each_kind_of_typo_is_tolerated() -> None:
    assert found("get_usr") == [(b"get_user", 1)]  # a deletion (getuser is two away)
    assert found("get_usser") == [(b"get_user", 1), (b"getuser", 2)]  # an insertion (9: 2 edits)
    assert found("get_uxer") == [(b"get_user", 1), (b"getuser", 2)]  # a substitution
    assert (b"return", 1) in found("retrun") and (b"retrun", 0) in found("retrun")  # a swap


def test_one_match_per_line_and_nothing_past_the_tolerance() -> None:
    hits = found("return")
    assert [text for text, _ in hits] == [b"return", b"retrun"]
    assert found("zzzzzz") == []
    assert found("get") == [(b"get", 0), (b"get", 0), (b"get", 0)]  # short: exact only


def test_exact_whole_words_score_highest() -> None:
    hits = approximate_spans(TEXT, "return", case_sensitive=False)
    exact, swapped = hits[0][3], hits[1][3]
    assert exact == 100.0 + BOUNDARY_BONUS * 1.5
    assert swapped < exact
    inner = approximate_spans(b"xreturnx\n", "return", case_sensitive=False)
    assert inner[0][3] == 100.0  # no boundary bonus inside a word


def test_smart_case_is_the_callers_and_offsets_are_exact_bytes() -> None:
    assert found("USERS", cs=True) == [(b"USERS", 0)]
    assert found("users", cs=True) == [(b"user", 1), (b"user_", 1)]
    assert found("users") == [(b"user", 1), (b"USERS", 0), (b"user_", 1)]
    data = "é = get_user\n".encode()
    ((start, end, edits, _),) = approximate_spans(data, "get_usr", case_sensitive=False)
    assert (start, end, edits) == (5, 13, 1) and data[start:end] == b"get_user"
    # a byte edit never cuts a character: the run grows to whole UTF-8 characters
    ((start, end, _, _),) = approximate_spans("caféx\n".encode(), "cafe", case_sensitive=False)
    assert "caféx\n".encode()[start:end].decode() == "café"
