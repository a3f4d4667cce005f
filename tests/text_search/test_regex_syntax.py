"""translate(): every rewrite of ``regex_syntax``'s table, flags, the multiline rule, and error
positions."""

from __future__ import annotations

import pytest

from sleuth.errors import InvalidQuery, Unsupported
from sleuth.text_search.matchers import regex_matcher
from sleuth.text_search.regex_syntax import Translated, translate


def spans(pattern: str, data: str, case_sensitive: bool = True) -> list[str]:
    raw = data.encode()
    matcher = regex_matcher(pattern, case_sensitive=case_sensitive)
    return [raw[s:e].decode() for s, e in matcher.find_spans(raw)]


# (user pattern, RE2 body after the "(?m)" prefix, multiline)
REWRITES = [
    (r"(?<y>\d{4})-\d\d", r"(?P<y>\d{4})-\d\d", False),
    (r"(?P<y>\d{4})", r"(?P<y>\d{4})", False),
    (r"caf\u00e9", r"caf\x{e9}", False),
    (r"\u{1F600}", r"\x{1f600}", False),
    (r"\uD83D\uDE00", r"\x{1f600}", False),
    (r"a[^]b", r"a[\s\S]b", True),
    (r"\cJ", r"\x{a}", True),
    (r"\ca", r"\x{1}", False),
    (r"\p{Script=Greek}+", r"\p{Greek}+", False),
    (r"\p{sc=Latin}", r"\p{Latin}", False),
    (r"\P{General_Category=L}", r"\P{L}", False),
    (r"[\0-\x08]", r"[\x{0}-\x{8}]", False),
    (r"[\t-\r]", r"[\t-\r]", True),  # a range holding U+000A
    (r"\p{Any}", r"\p{Any}", True),
    (r"[\p{Cc}a]", r"[\p{Cc}a]", True),
    (r"\pC", r"\pC", True),
    (r"\P{L}", r"\P{L}", False),
    (r"[a-\x{10FFFF}]", r"[a-\x{10ffff}]", False),  # starts past U+000A
    (r"[\b]", r"[\x{8}]", False),
    (r"[\u0041-\u005A]", r"[\x{41}-\x{5a}]", False),
    ("a{,}", r"a\{,}", False),  # not a repetition anywhere: a literal brace
    (r"\<foo\>", r"\bfoo\b", False),  # ripgrep's word start and end beside a word: \b
    (r"\b{start}\w+\b{end}", r"\b\w+\b", False),
    ("(?U)a+", "(?U)a+", False),  # RE2 has the swap-greed flag
    ("(?u)x", "x", False),
    ("(?iu:x)y", "(?i:x)y", False),
    ("(?i)todo", "(?i)todo", False),
    ("(?s).", "(?s).", True),
    ("(?s:a.)b", "(?s:a.)b", True),
    ("(?s)x(?-s).", "(?s)x(?-s).", False),
    ("(?s:x)y.", "(?s:x)y.", False),
    ("(?m)^a$", "(?m)^a$", False),
    (r"a\nb", r"a\nb", True),
    (r"\x0a", r"\x{a}", True),
    (r"\u000A", r"\x{a}", True),
    (r"[\n]", r"[\n]", True),
    (r"[^\n]", r"[^\n]", False),
    (r"[\s\S]", r"[\t-\r\x{85}\p{Z}\S]", True),  # \s: Unicode White_Space, as rg's
    (r"[\w\W]", r"[\w\W]", True),
    (r"[^\s\S]", r"[^\t-\r\x{85}\p{Z}\S]", False),
    (r"\s+", r"[\t-\r\x{85}\p{Z}]+", False),
    (r"\S", r"[^\t-\r\x{85}\p{Z}]", False),
    (r"[^a]", r"[^a]", False),
    (".", ".", False),
    ("a\nb", r"a\nb", True),
    (r"\Q(a\E", r"\Q(a\E", False),
    (r"[^]", r"[\s\S]", True),  # no `]` after it: any character (ECMAScript)
    (r"[^]]", r"[^\]]", False),  # a `]` after it: not `]`, as in ripgrep, PCRE and Python
    (r"[^]a]", r"[^\]a]", False),
    ("[]a]", r"[\]a]", False),
]


@pytest.mark.parametrize(("pattern", "body", "multiline"), REWRITES)
def test_rewrites(pattern: str, body: str, multiline: bool) -> None:
    assert translate(pattern) == Translated("(?m)" + body, multiline, translate(pattern).names)


def test_names_and_case_insensitive_prefix() -> None:
    assert translate(r"(?<y>\d+)-(?P<m>\d+)(x)").names == ("y", "m")
    assert translate("abc", case_sensitive=False).re2 == "(?mi)abc"


@pytest.mark.parametrize(
    ("pattern", "data", "expected"),
    [  # the measured RE2 gaps (benchmarks/RESULTS.md#measured-constraints)
        (r"(?<y>\d{4})-\d\d", "on 2024-05-01", ["2024-05"]),
        (r"\u{1F600}", "ab 😀", ["😀"]),
        (r"caf\u00e9", "café", ["café"]),
        (r"\p{Script=Greek}+", "abc αβγ", ["αβγ"]),
        (r"\p{L}+", "-héllo-", ["héllo"]),
        (r"a[^]b", "a\nb", ["a\nb"]),
        (r"\cJ", "a\nb", ["\n"]),
        (r"\w", "éa", ["a"]),  # ASCII, as in ECMAScript
        (r"\bé", "aé é", ["é"]),  # \b is ASCII too: only a|é is a boundary
        ("(?i)abc", "xABC", ["ABC"]),
        ("(?i)k", "\u212a", ["\u212a"]),
        ("a.?b", "a\rb", ["a\rb"]),
        ("a|b|", "ac", ["a", ""]),  # the empty branch matches at the end
        ("a+?", "aaa", ["a", "a", "a"]),
        (r"[\d-]+", "x1-2", ["1-2"]),
        ("(?s)a.b", "a\nb", ["a\nb"]),
        ("a.b", "a\nb", []),
        ("^b", "a\nb", ["b"]),  # ^ and $ are line anchors, like ripgrep
        ("a$", "a\nb", ["a"]),
        ("(?m)^b$", "a\nb", ["b"]),
        ("(?u)é", "é", ["é"]),
        (r"[\x00-\x01]", "a\x00b\x01", ["\x00", "\x01"]),
        ("(?i:a)b", "AbAB", ["Ab"]),
    ],
)
def test_semantics(pattern: str, data: str, expected: list[str]) -> None:
    assert spans(pattern, data) == expected


def test_case_sensitive_option() -> None:
    assert spans("todo", "TODO todo", case_sensitive=False) == ["TODO", "todo"]
    assert spans("(?-i)todo", "TODO todo", case_sensitive=False) == ["todo"]


@pytest.mark.parametrize(
    ("pattern", "position"),
    [
        ("foo(", 3),
        ("(a(b)", 0),
        ("[a-", 0),
        ("a{2,1}", 1),
        ("a{1001}", 1),
        ("*a", 0),
        ("a**", 1),
        ("é**", 1),
        ("a)", 1),
        ("[z-a]", 1),
        (r"x\q", 1),
        ("abc\\", 3),
        (r"\u12", 0),
        (r"a\uD800", 1),
        (r"\xZZ", 0),
        (r"\c1", 0),
        ("(?x)a", 2),
        ("(?i-u)a", 4),
        ("(?)a", 0),
        ("(?<1a>x)", 0),
        ("(?<n>a)(?<n>b)", 7),
        (r"\C", 0),
        (r"\p{Nope}", 0),
        ("a\x00b", 1),
        ("a{,3}", 1),  # {0,3} in PCRE and Python, a literal in ECMAScript: rg refuses it
        ("(?i)+", 4),  # a flag group matches no text: nothing to repeat (as rg)
        ("b?(?m){2}", 6),
        ("[a-z&&[^aeiou]]", 4),  # ripgrep's class set operations: characters elsewhere
        ("[a--b]", 2),
        ("[a~~b]", 2),
        (r"x\B{start}", 1),
    ],
)
def test_invalid_patterns_report_position(pattern: str, position: int) -> None:
    with pytest.raises(InvalidQuery) as info:
        translate(pattern)
    assert info.value.details["position"] == position
    lines = info.value.message.splitlines()
    assert lines[2] == "  " + " " * position + "^"  # caret under the error
    assert len(lines) >= 4  # ... and a line saying what to do next


def test_raw_nul_and_a_nul_that_must_match_are_rejected() -> None:
    with pytest.raises(InvalidQuery):
        regex_matcher("a\x00")
    for pattern in [r"a\x00", r"foo\x00?", r"\0", r"x|\u0000", r"[\x00]", r"[\x00-\x00]"]:
        with pytest.raises(InvalidQuery) as info:
            translate(pattern)
        assert "NUL" in info.value.message, pattern
    assert translate(r"[\x00-\x01]").re2 == r"(?m)[\x{0}-\x{1}]"  # a class may hold a NUL
    assert translate(r"[^\x00]").re2 == r"(?m)[^\x{0}]"


@pytest.mark.parametrize(
    ("pattern", "construct", "position"),
    [
        ("foo(?=bar)", "lookahead", 3),
        ("(?!x)", "negative lookahead", 0),
        ("a(?<=b)", "lookbehind", 1),
        ("(?<!b)c", "negative lookbehind", 0),
        (r"(a)\1", "backreference", 3),
        (r"(?<n>a)\k<n>", "backreference", 7),
        ("(?P<n>a)(?P=n)", "backreference", 8),
        ("(?>a)", "atomic group", 0),
    ],
)
def test_unsupported_constructs(pattern: str, construct: str, position: int) -> None:
    with pytest.raises(Unsupported) as info:
        translate(pattern)
    assert info.value.details == {"construct": construct, "position": position}
    assert info.value.message.startswith(construct)
    assert "not supported" in info.value.message
    assert "linear-time" in info.value.message


@pytest.mark.parametrize(
    ("pattern", "position"),
    [
        ("x\\<", 1),
        ("\\>x", 0),
        ("a\\b{start-half}", 1),
        ("Σ\\>", 1),
        ("\\>a+?", 0),
    ],  # Σ: RE2's \\b is ASCII
)
def test_a_word_edge_away_from_a_word_is_unsupported(pattern: str, position: int) -> None:
    # ripgrep's word start/end equal \b only beside a word character; RE2 cannot say the rest
    with pytest.raises(Unsupported) as info:
        translate(pattern)
    assert info.value.details == {"construct": "word boundary", "position": position}
    assert "\\b" in info.value.message
