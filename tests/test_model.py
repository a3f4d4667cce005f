"""Shared records: a moved declaration or use is the one its constructor makes."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sleuth.model import SymbolDef, SymbolRef

ints = st.integers(0, 10**6)
names = st.text(min_size=1, max_size=8)
opt = st.none() | names


@given(
    names, names, ints, ints, ints, opt, opt, opt, st.integers(-1000, 1000), st.integers(-50, 50)
)
def test_a_moved_use_equals_the_constructed_one(
    name: str,
    kind: str,
    start: int,
    length: int,
    line: int,
    enclosing: str | None,
    target: str | None,
    module: str | None,
    delta: int,
    lines: int,
) -> None:
    ref = SymbolRef(name, kind, "a.py", start, start + length, line, enclosing, target, module)
    moved = ref.moved(delta, lines)
    expected = SymbolRef(
        name,
        kind,
        "a.py",
        start + delta,
        start + length + delta,
        line + lines,
        enclosing,
        target,
        module,
    )
    assert moved == expected and hash(moved) == hash(expected) and repr(moved) == repr(expected)
    assert ref.start_byte == start and ref.line == line  # the original is untouched


@given(names, names, ints, ints, ints, ints, st.integers(-1000, 1000), st.integers(-50, 50))
def test_a_moved_declaration_equals_the_constructed_one(
    name: str,
    container: str,
    start: int,
    length: int,
    line: int,
    span: int,
    delta: int,
    lines: int,
) -> None:
    d = SymbolDef(
        "id",
        name,
        "function",
        container,
        "a.py",
        start,
        start + length,
        line,
        line + span,
        start + 1,
        start + 2,
    )
    moved = d.moved(delta, lines)
    expected = SymbolDef(
        "id",
        name,
        "function",
        container,
        "a.py",
        start + delta,
        start + length + delta,
        line + lines,
        line + span + lines,
        start + 1 + delta,
        start + 2 + delta,
    )
    assert moved == expected and hash(moved) == hash(expected)
    assert moved.qualified == expected.qualified
    assert dataclasses.asdict(moved) == dataclasses.asdict(expected)


def test_a_moved_record_stays_frozen() -> None:
    ref = SymbolRef("f", "call", "a.py", 1, 2, 1).moved(3, 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        ref.start_byte = 0  # type: ignore[misc]
