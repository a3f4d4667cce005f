"""Boolean queries: detection, parsing, errors, per-file evaluation and prefilter hints."""

from __future__ import annotations

import pytest

from sleuth.errors import InvalidQuery
from sleuth.prefilter import file_may_match, fold
from sleuth.text_search.boolean import (
    And,
    BoolNode,
    Not,
    Or,
    Term,
    evaluate,
    is_boolean,
    parse_boolean,
)
from sleuth.text_search.matchers import LiteralMatcher, RegexMatcher


def t(text: str, quoted: bool = False) -> Term:
    return Term(text, quoted)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("foo AND bar", True),
        ("foo OR bar", True),
        ("foo NOT bar", True),
        ("NOT bar", True),
        ("foo || bar", True),
        ("foo||bar", True),
        ("foo | bar", True),
        ("(foo OR bar) baz", True),
        ('"a b" OR c', True),
        ("foo|bar", False),  # unspaced | is regex alternation
        ("foo and bar", False),  # lowercase words are text
        ("ANDROID ORACLE NOTE", False),
        ("(foo bar)", False),  # parentheses alone do not make a Boolean query
        ("foo(bar) baz", False),
        ('"x AND y"', False),  # operators inside quotes are text
        ("plain text", False),
    ],
)
def test_is_boolean(query: str, expected: bool) -> None:
    assert is_boolean(query) is expected


@pytest.mark.parametrize(
    ("query", "tree"),
    [
        ("foo AND bar", And((t("foo"), t("bar")))),
        ("a OR b OR c", Or((t("a"), t("b"), t("c")))),
        ("a || b | c", Or((t("a"), t("b"), t("c")))),
        ("a NOT b", And((t("a"), Not(t("b"))))),
        ("a AND NOT b", And((t("a"), Not(t("b"))))),
        ("NOT a", Not(t("a"))),
        ("foo bar OR baz", Or((And((t("foo"), t("bar"))), t("baz")))),
        ("a OR b AND c", Or((t("a"), And((t("b"), t("c")))))),
        ("(a OR b) AND c", And((Or((t("a"), t("b"))), t("c")))),
        ("((a))", t("a")),
        ('"a b" OR "c \\" d"', Or((t("a b", True), t('c " d', True)))),
        ("foo(bar) AND x", And((t("foo(bar)"), t("x")))),
        ("(foo(x) OR y)", Or((t("foo(x)"), t("y")))),
        ("a|b AND [)]", And((t("a|b"), t("[)]")))),
        ("a AND b AND c", And((t("a"), t("b"), t("c")))),
    ],
)
def test_parse(query: str, tree: BoolNode) -> None:
    assert parse_boolean(query) == tree


@pytest.mark.parametrize(
    ("query", "position"),
    [
        ("(a OR b", 0),
        ("a OR b)", 6),
        ("a AND (b OR (c)", 6),
        ("x AND", 2),
        ("AND x", 0),
        ("a OR OR b", 2),
        ("a NOT", 2),
        ("() AND a", 0),
        ("a AND ()", 6),
        ("", 0),
        ('"abc AND x', 0),
    ],
)
def test_parse_errors(query: str, position: int) -> None:
    with pytest.raises(InvalidQuery) as info:
        parse_boolean(query)
    assert info.value.details["position"] == position
    assert "^" in info.value.message


def test_term_matcher_rule() -> None:
    assert isinstance(t("foo.bar").matcher(), LiteralMatcher)  # a lone . stays literal
    assert isinstance(t("a+b?").matcher(), LiteralMatcher)
    assert isinstance(t("a|b").matcher(), RegexMatcher)
    assert isinstance(t(r"\d+").matcher(), RegexMatcher)
    assert isinstance(t("x[0]").matcher(), RegexMatcher)
    assert t("get(").is_regex  # ... so an invalid one is an error (next test), never text
    assert isinstance(t("foo.*bar").matcher(), RegexMatcher)
    assert isinstance(t("a|b", quoted=True).matcher(), LiteralMatcher)


def test_invalid_regex_term_says_to_quote_it() -> None:
    node = parse_boolean("print( AND log")
    with pytest.raises(InvalidQuery) as info:
        evaluate(node, b"print(x)\nlog\n", True)
    assert '"print("' in info.value.message
    assert info.value.details["position"] == 5


DATA = b"alpha beta\ngamma alpha\ndelta\n"


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("alpha AND beta", [(0, 5), (6, 10), (17, 22)]),
        ("alpha AND missing", None),
        ("missing OR delta", [(23, 28)]),
        ("alpha NOT missing", [(0, 5), (17, 22)]),  # a NOT b: a and not b -> spans of a
        ("alpha NOT beta", None),
        ("NOT missing", []),  # qualifies, but has no positive term to show
        ("(alpha OR nope) AND NOT zeta", [(0, 5), (17, 22)]),
        ("alph|gamm AND delta", [(0, 4), (11, 15), (17, 21), (23, 28)]),
        ('"alpha beta" OR zzz', [(0, 10)]),
        ("alpha beta", [(0, 5), (6, 10), (17, 22)]),  # adjacency is AND
        ("ALPHA || zzz", None),  # case-sensitive
        ("alpha AND pha", [(0, 5), (17, 22)]),  # overlapping spans merge
    ],
)
def test_evaluate_holds_per_file(query: str, expected: list[tuple[int, int]] | None) -> None:
    assert evaluate(parse_boolean(query), DATA, True) == expected


def test_evaluate_case_insensitive() -> None:
    assert evaluate(parse_boolean("ALPHA || zzz"), DATA, False) == [(0, 5), (17, 22)]


@pytest.mark.parametrize(
    ("query", "literals"),
    [
        ("foo AND bar", ((b"foo",), (b"bar",))),
        ("foo OR Bar", ((b"foo", b"bar"),)),
        ("foo NOT bar", ((b"foo",),)),
        ("NOT bar", None),
        ("(foo OR bar) AND baz", ((b"foo", b"bar"), (b"baz",))),
        ("foo OR NOT bar", None),
        ("foo OR (a AND b)", None),  # a branch with two groups: no single OR group
        ("foo.*bar OR x", None),
        (r"fo\w AND x", ((b"fo",), (b"x",))),
        ("fo+ AND x", ((b"fo+",), (b"x",))),  # no regex characters: a literal term
    ],
)
def test_required_literals(query: str, literals: tuple[tuple[bytes, ...], ...] | None) -> None:
    assert parse_boolean(query).required_literals() == literals


def test_required_literals_never_hide_a_qualifying_file() -> None:
    samples = [b"foo bar", b"FOO baz", b"task", b"ta\xc5\xbfK", b"nothing"]
    for query in ["foo AND bar", "foo OR baz", "TASK OR zz", "foo NOT bar", "(foo|x) AND ba"]:
        node = parse_boolean(query)
        for data in samples:
            if evaluate(node, data, False) is not None:
                assert file_may_match(node.required_literals(), fold(data)), (query, data)
