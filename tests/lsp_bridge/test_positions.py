"""Byte offsets <-> LSP positions in every encoding (``positions.py``)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sleuth.lsp_bridge.positions import LineIndex, normalize_encoding

ENCODINGS = ("utf-8", "utf-16", "utf-32")

TEXT = st.lists(
    st.sampled_from(["a", "b", " ", "é", "中", "😀", "𝄞", "\n", "\r\n", "\r", "\t"]),
    max_size=40,
).map("".join)


def boundaries(data: bytes) -> list[int]:
    """Offsets that start a character (and the end), excluding the middle of a CRLF."""
    text = data.decode("utf-8")
    out, at = [], 0
    for ch in text:
        out.append(at)
        at += len(ch.encode("utf-8"))
    out.append(at)
    return [o for o in out if not (0 < o < len(data) and data[o - 1 : o + 1] == b"\r\n")]


@given(TEXT, st.sampled_from(ENCODINGS))
def test_round_trip_on_character_boundaries(text: str, encoding: str) -> None:
    data = text.encode("utf-8")
    index = LineIndex(data)
    for offset in boundaries(data):
        line, character = index.to_position(offset, encoding)  # type: ignore[arg-type]
        assert index.to_offset(line, character, encoding) == offset  # type: ignore[arg-type]


@given(TEXT)
def test_utf16_counts_astral_characters_twice(text: str) -> None:
    data = text.encode("utf-8")
    index = LineIndex(data)
    line, character = index.to_position(len(data), "utf-16")
    last_line = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")[-1]
    assert line == text.count("\n") + text.count("\r") - text.count("\r\n")
    assert character == len(last_line.encode("utf-16-le")) // 2
    assert index.to_position(len(data), "utf-32")[1] == len(last_line)
    assert index.to_position(len(data), "utf-8")[1] == len(last_line.encode("utf-8"))


def test_known_positions() -> None:
    data = "a😀b\r\nxé\rz".encode()
    index = LineIndex(data)
    b_off = data.index(b"b")
    assert index.to_position(b_off, "utf-16") == (0, 3)
    assert index.to_position(b_off, "utf-32") == (0, 2)
    assert index.to_position(b_off, "utf-8") == (0, 5)
    assert index.to_offset(1, 1, "utf-16") == data.index("é".encode())
    assert index.to_offset(2, 0, "utf-16") == data.index(b"z")
    # Inside a surrogate pair / a multi-byte character: round down to its start.
    assert index.to_offset(0, 2, "utf-16") == 1
    assert index.to_offset(0, 3, "utf-8") == 1
    assert index.to_position(2, "utf-16") == (0, 1)
    # Past the end of a line, or of the file: clamp.
    assert index.to_offset(0, 99, "utf-16") == data.index(b"\r\n")
    assert index.to_offset(99, 0, "utf-16") == len(data)
    # Inside CRLF: the end of the line.
    assert index.to_position(data.index(b"\n"), "utf-16") == (0, 4)


def test_undecodable_bytes_count_one_unit_each() -> None:
    data = b"a\xff\xfeb"
    index = LineIndex(data)
    assert index.to_position(3, "utf-16") == (0, 3)
    assert index.to_offset(0, 3, "utf-16") == 3


def test_range_to_bytes_orders_ends() -> None:
    index = LineIndex(b"hello world")
    rng = {"start": {"line": 0, "character": 6}, "end": {"line": 0, "character": 11}}
    assert index.range_to_bytes(rng, "utf-16") == (6, 11)
    backwards = {"start": rng["end"], "end": rng["start"]}
    assert index.range_to_bytes(backwards, "utf-16") == (6, 11)


@pytest.mark.parametrize(
    ("value", "expected"),
    [("utf-8", "utf-8"), ("utf-32", "utf-32"), ("utf-16", "utf-16"), (None, "utf-16")],
)
def test_normalize_encoding(value: object, expected: str) -> None:
    assert normalize_encoding(value) == expected
