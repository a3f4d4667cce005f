"""``LineSpans`` against a plain set of (path, line): the same membership after any adds."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sleuth.render.line_spans import LineSpans

ADDS = st.lists(
    st.tuples(st.sampled_from(["a", "b"]), st.integers(-2, 40), st.integers(-2, 40)), max_size=30
)


@given(ADDS)
def test_membership_equals_a_set_of_lines(adds: list[tuple[str, int, int]]) -> None:
    spans = LineSpans()
    plain: set[tuple[str, int]] = set()
    for path, first, last in adds:
        spans.add(path, first, last)
        plain.update((path, k) for k in range(first, last + 1))
    for path in ("a", "b", "c"):
        for line in range(-4, 44):
            assert ((path, line) in spans) == ((path, line) in plain)
    assert bool(spans) == bool(plain)
    assert ("a",) not in spans and ("a", "1") not in spans
