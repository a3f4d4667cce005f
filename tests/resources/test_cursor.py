"""Cursors are opaque, authenticated and tied to one result
(docs/query.md#ordering-and-pagination)."""

from __future__ import annotations

import base64

import pytest

from sleuth.errors import InvalidQuery
from sleuth.resources.cursor import decode_cursor, encode_cursor

SECRET = b"0123456789abcdef"


def test_roundtrip() -> None:
    cur = encode_cursor(SECRET, "SEARCH#7f3a9c21", 101)
    assert decode_cursor(SECRET, cur) == ("SEARCH#7f3a9c21", 101)


@pytest.mark.parametrize(
    "forged",
    [
        "",
        "abc",
        "!!!!",
        base64.urlsafe_b64encode(b"SEARCH#7f3a9c21:101.0000000000000000").decode(),
        "x" * 500,
    ],
)
def test_forged_cursor_is_invalid_query(forged: str) -> None:
    with pytest.raises(InvalidQuery, match="invalid cursor"):
        decode_cursor(SECRET, forged)


def test_tampered_offset_is_rejected() -> None:
    cur = encode_cursor(SECRET, "SEARCH#7f3a9c21", 101)
    raw = base64.urlsafe_b64decode(cur + "=" * (-len(cur) % 4)).decode()
    tampered = raw.replace(":101.", ":201.")
    enc = base64.urlsafe_b64encode(tampered.encode()).decode().rstrip("=")
    with pytest.raises(InvalidQuery):
        decode_cursor(SECRET, enc)


def test_other_workspace_secret_is_rejected() -> None:
    cur = encode_cursor(SECRET, "SEARCH#7f3a9c21", 101)
    with pytest.raises(InvalidQuery):
        decode_cursor(b"another-secret!!", cur)
