"""Matchers against ripgrep 14.1 on the same files (spans and line numbers), plus unit cases.

sleuth's ``\\w \\d \\b \\s`` are ASCII (ECMAScript, RE2); ripgrep's are Unicode, so those cases
hand rg the ASCII spelling ``(?-u:\\w)``. ripgrep 14 reports empty matches inside UTF-8
sequences; sleuth never does, so those rg spans are dropped before comparing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sleuth.prefilter import file_may_match, fold
from sleuth.text_search.matchers import (
    Matcher,
    is_boundary,
    literal_matcher,
    regex_matcher,
)

RG = Path(sys.executable).parent / "rg"
needs_rg = pytest.mark.skipif(not RG.exists(), reason="ripgrep 14.1 not installed in the venv")

TEXT = (
    "def foo(bar):\n"
    "    return bar + 1;\n"
    "\n"
    "class Foo_Bar:  # TODO fix colour and color\n"
    "\tx = 'café' ; y = 'naïve'\n"
    "straße STRAẞE Strasse\n"
    "Σίσυφος σίσυφος ΣΊΣΥΦΟΣ αβγ\n"
    "emoji 😀 and 😀😀 end\n"
    "crlf line\r\n"
    "abc\r\n"
    "   \n"
    "todo: TODO Todo 42 and 2024-05-01\n"
    "begin\nmiddle foo\nbar end\n"
    "Kelvin \u212a and k and K; long ſ\n"
    "fooo foobar barfoo foo\n"
).encode() + b"bad \xff\xfe utf8 foo\nlast line no newline"

# (sleuth pattern, rg pattern or None for the same, case_sensitive)
REGEX_CASES: list[tuple[str, str | None, bool]] = [
    ("foo", None, True),
    ("^def", None, True),
    (";$", None, True),
    ("^$", None, True),
    ("^", None, True),
    ("$", None, True),
    ("x*", None, True),
    ("o*", None, True),
    (r"\bfoo\b", r"(?-u:\b)foo(?-u:\b)", True),
    (r"\w+", r"(?-u:\w)+", True),
    (r"\B", r"(?-u:\B)", True),
    (r"\d{2,}", r"(?-u:\d){2,}", True),
    (r"\s+", r"(?-u:\s)+", True),
    (r"^\s*$", r"^(?-u:\s)*$", True),
    ("[A-Z][a-z]+", None, True),
    ("foo|bar|baz", None, True),
    ("colou?r", None, True),
    ("ab|", None, True),
    ("(?i)todo", None, True),
    ("todo", None, False),
    ("é+", None, True),
    (r"caf\u00e9", r"caf\x{e9}", True),
    (r"\p{Greek}+", None, True),
    ("σίσυφος", None, False),
    ("straße", None, False),
    ("k", None, False),
    ("😀+", None, True),
    ("[^a-z ]+", None, True),
    ("a.c", None, True),
    (".", None, True),
    (r"\r$", None, True),
    (r"ne\r?$", None, True),
    (r"(?<word>fo+)bar", r"(?P<word>fo+)bar", True),
    ("[[:alpha:]]{3}", None, True),
    (r"foo\nbar", None, True),
    (r"(?s)begin.*?end", None, True),
    (r"[\s\S]end", None, True),
]

LITERAL_CASES: list[tuple[str, bool]] = [
    ("foo", True),
    ("Foo", False),
    ("straße", False),
    ("ΣΊΣΥΦΟΣ", False),
    ("😀", True),
    ("line\r\n", True),
    ("Kelvin k", False),
    ("", True),
]


def rg_spans(
    data: bytes, pattern: str, *, flags: list[str], tmp_path: Path
) -> set[tuple[int, int]]:
    """Every (start, end) ripgrep reports, as absolute byte offsets."""
    target = tmp_path / "sample.txt"
    target.write_bytes(data)
    cmd = [str(RG), "--no-config", "--json", *flags, "-e", pattern, str(target)]
    proc = subprocess.run(cmd, capture_output=True, check=False)
    assert proc.returncode in (0, 1), proc.stderr.decode()
    spans: set[tuple[int, int]] = set()
    for raw in proc.stdout.split(b"\n"):
        if not raw:
            continue
        event = json.loads(raw)
        if event["type"] != "match":
            continue
        base = event["data"]["absolute_offset"]
        for sub in event["data"]["submatches"]:
            start, end = base + sub["start"], base + sub["end"]
            if start == end and not is_boundary(data, start):
                continue  # rg 14 splits code points with empty matches; sleuth never does
            spans.add((start, end))
    return spans


def rg_lines(data: bytes, pattern: str, *, flags: list[str], tmp_path: Path) -> set[int]:
    target = tmp_path / "sample.txt"
    target.write_bytes(data)
    cmd = [str(RG), "--no-config", "-n", "--column", *flags, "-e", pattern, str(target)]
    proc = subprocess.run(cmd, capture_output=True, check=False)
    assert proc.returncode in (0, 1), proc.stderr.decode()
    return {int(line.split(b":", 1)[0]) for line in proc.stdout.split(b"\n") if line}


def lines_of(data: bytes, spans: list[tuple[int, int]]) -> set[int]:
    lines: set[int] = set()
    for start, end in spans:
        first = data.count(b"\n", 0, start) + 1
        last = data.count(b"\n", 0, max(start, end - 1)) + 1
        lines.update(range(first, last + 1))
    return lines


def check_parity(
    matcher: Matcher, data: bytes, rg_pattern: str, flags: list[str], tmp_path: Path
) -> None:
    flags = [*flags, "-U"] if matcher.multiline else flags
    ours = list(matcher.find_spans(data))
    assert ours == sorted(set(ours)), "spans must be ascending and unique"
    # rg's printer drops an empty match at the very end of a file without a final newline
    # (though `rg -n` lists that line); sleuth reports it.
    at_eof = (len(data), len(data))
    comparable = [s for s in ours if s != at_eof or data.endswith(b"\n")]
    assert comparable == sorted(rg_spans(data, rg_pattern, flags=flags, tmp_path=tmp_path))
    assert lines_of(data, ours) == rg_lines(data, rg_pattern, flags=flags, tmp_path=tmp_path)
    hint = matcher.required_literals()
    if ours:
        assert file_may_match(hint, fold(data)), "the prefilter hint would hide a matching file"


@needs_rg
@pytest.mark.parametrize(("pattern", "rg_pattern", "case_sensitive"), REGEX_CASES)
def test_regex_parity_with_ripgrep(
    pattern: str, rg_pattern: str | None, case_sensitive: bool, tmp_path: Path
) -> None:
    matcher = regex_matcher(pattern, case_sensitive=case_sensitive)
    flags = [] if case_sensitive else ["-i"]
    check_parity(matcher, TEXT, rg_pattern or pattern, flags, tmp_path)


@needs_rg
@pytest.mark.parametrize(("text", "case_sensitive"), LITERAL_CASES)
def test_literal_parity_with_ripgrep(text: str, case_sensitive: bool, tmp_path: Path) -> None:
    matcher = literal_matcher(text, case_sensitive=case_sensitive)
    flags = ["-F"] if case_sensitive else ["-F", "-i"]
    check_parity(matcher, TEXT, text, flags, tmp_path)


def test_multiline_flag_follows_the_pattern() -> None:
    assert regex_matcher(r"foo\nbar").multiline
    assert regex_matcher(r"(?s)a.b").multiline
    assert not regex_matcher(r"a\s+b").multiline
    assert not regex_matcher(r"[^a]+").multiline
    assert regex_matcher(r"a\p{Any}b").multiline  # a class holding U+000A, like [\s\S]
    assert regex_matcher(r"[\x00-\x{10FFFF}]+").multiline
    assert literal_matcher("a\nb").multiline
    assert not literal_matcher("ab").multiline


def test_line_oriented_matches_never_contain_a_newline() -> None:
    data = b"a b\n\nc d\r\ne\xc2\xa0f\n"
    for pattern in [r"\s+", "[^x]+", r"\D+", r"\W+", r"\P{L}+", r"[\x0b-\x{10FFFF}]+"]:
        spans = list(regex_matcher(pattern).find_spans(data))
        assert spans, pattern
        assert all(b"\n" not in data[s:e] for s, e in spans), pattern


def test_empty_matches_step_by_code_point_and_skip_after_previous_match() -> None:
    data = "baaab\né\n".encode()
    assert list(regex_matcher("a*").find_spans(data)) == [
        (0, 0), (1, 4), (5, 5), (6, 6), (8, 8),
    ]  # fmt: skip
    assert list(literal_matcher("").find_spans(b"ab")) == [(0, 0), (1, 1), (2, 2)]
    assert list(regex_matcher("^").find_spans(b"")) == []  # an empty file has no line


def test_start_offset_and_invalid_utf8() -> None:
    data = b"foo \xff\xfe foo \xc3 foo"
    assert list(literal_matcher("foo").find_spans(data, 1)) == [(7, 10), (13, 16)]
    assert list(regex_matcher("fo+").find_spans(data, 5)) == [(7, 10), (13, 16)]
    assert list(regex_matcher(r"\xff").find_spans(data)) == []  # U+00FF, not the byte
    assert list(regex_matcher("o ").find_spans(data)) == [(2, 4), (9, 11)]
    assert list(regex_matcher(r"^foo").find_spans(data, 1)) == []  # context before start


def test_literal_required_literals() -> None:
    assert literal_matcher("Foo").required_literals() == ((b"foo",),)
    assert literal_matcher("").required_literals() is None
    # k and s have non-ASCII case variants (K, ſ): the caseless hint avoids them.
    hint = literal_matcher("task list", case_sensitive=False).required_literals()
    assert hint == ((b"ta",), (b" li",))
    hint = literal_matcher("taſK", case_sensitive=False).required_literals()
    assert file_may_match(hint, fold(b"TASK"))


def test_regex_required_literals() -> None:
    assert regex_matcher("foo.*bar").required_literals() == ((b"foo",), (b"bar",))
    assert regex_matcher("foo|Bar").required_literals() == ((b"foo", b"bar"),)
    assert regex_matcher("ab+c").required_literals() == ((b"ab",),)
    assert regex_matcher("ab*c").required_literals() == ((b"a",),)
    assert regex_matcher("(foo)|bar").required_literals() is None
    assert regex_matcher(r"\w+").required_literals() is None
    assert regex_matcher("(?i)risk").required_literals() == ((b"ri",),)


def test_large_buffer_with_rare_literal_is_whole_buffer() -> None:
    data = b"hello world foo bar\n" * 1_000_000 + b"needle_xyz\n"
    expected = [(20_000_000, 20_000_010)]
    assert list(literal_matcher("needle_xyz").find_spans(data)) == expected
    assert list(regex_matcher(r"needle_\w+").find_spans(data)) == expected
    assert list(literal_matcher("NEEDLE_xyz", case_sensitive=False).find_spans(data)) == expected


ATOMS = ["a", "b", "é", "X", ".", "[ab]", "[^a]", r"\d", "(a|b)", "(?:ab)", "^", "$", " "]
QUANTIFIERS = ["", "", "", "*", "+", "?", "{1,2}", "*?"]


@st.composite
def regexish(draw: st.DrawFn) -> str:
    parts = draw(
        st.lists(
            st.tuples(st.sampled_from(ATOMS), st.sampled_from(QUANTIFIERS)), min_size=1, max_size=4
        )
    )
    return "".join(atom + ("" if atom in "^$" else q) for atom, q in parts)


@needs_rg
@settings(max_examples=50, deadline=None)
@given(
    pattern=regexish(),
    text=st.text(alphabet="abé X1\n\r", max_size=40),
    case_sensitive=st.booleans(),
)
def test_random_patterns_match_ripgrep(
    pattern: str, text: str, case_sensitive: bool, tmp_path_factory: pytest.TempPathFactory
) -> None:
    tmp_path = tmp_path_factory.mktemp("hyp")
    matcher = regex_matcher(pattern, case_sensitive=case_sensitive)
    flags = [] if case_sensitive else ["-i"]
    check_parity(matcher, text.encode(), pattern, flags, tmp_path)
