"""A match's snippet: the matched line(s) cut to SNIPPET_MAX characters around the hit."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sleuth.workspace.text import SNIPPET_MAX, FileText

_chars = st.sampled_from(["a", " ", "\n", "é", "€", "𝄞", "}", "\t"])


@settings(max_examples=200, deadline=None)
@given(
    before=st.lists(_chars, max_size=40).map("".join),
    hit=st.lists(_chars, min_size=1, max_size=2000).map("".join),
    after=st.lists(_chars, max_size=40).map("".join),
)
def test_a_hit_longer_than_a_snippet_shows_its_head(before: str, hit: str, after: str) -> None:
    """A whole declaration as the hit: its first characters, then an ellipsis, whatever
    surrounds it (only its head is decoded when it is longer than 4 * SNIPPET_MAX bytes)."""
    data = (before + hit + after).encode()
    start = len(before.encode())
    end = start + len(hit.encode())
    snippet = FileText("f.txt", data, "s").snippet(start, end)
    if len(hit) >= SNIPPET_MAX + 1 and not hit.endswith("\n"):
        assert snippet == hit[: SNIPPET_MAX - 1] + "…"
    assert len(snippet) <= SNIPPET_MAX
    if len(snippet) < SNIPPET_MAX and not snippet.endswith("…"):
        assert hit.rstrip("\n") in snippet  # a short hit is shown whole


def test_a_broken_byte_in_a_long_hit_is_replaced_not_fatal() -> None:
    hit = b"x" * 100 + b"\xff" + b"y" * 2000
    snippet = FileText("f.txt", b"a = " + hit + b";\n", "s").snippet(4, 4 + len(hit))
    assert snippet == "x" * 100 + "\ufffd" + "y" * (SNIPPET_MAX - 102) + "…"
