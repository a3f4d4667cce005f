"""Matching behaviour: capture positions, anonymous metavariables, document order, repeated
metavariables, broken and very large inputs (captures: docs/references.md#captures;
docs/query.md#ast-structural-patterns)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sleuth.ast_search import AstMatch, compile_pattern


def _find(pattern: str, lang: str, data: bytes, **opts: str) -> list[AstMatch]:
    return compile_pattern(pattern, lang, **opts).find(data)  # type: ignore[arg-type]


def _text(data: bytes, start: int, end: int) -> str:
    return data[start:end].decode()


def test_empty_multi_capture_sits_where_the_nodes_would_be() -> None:
    data = b"x = 1\nfoo()\n"
    (m,) = _find("foo($$$A)", "python", data)
    cap = m.captures["A"]
    assert (cap.nodes, cap.start_byte, cap.end_byte) == (0, 10, 10)  # right after "("
    assert data[: cap.start_byte].endswith(b"foo(")
    js = b"f();\nf(1);"
    found = _find("f($$$A)", "js", js)
    assert [(c.nodes, c.start_byte, c.end_byte) for c in (x.captures["A"] for x in found)] == [
        (0, 2, 2), (1, 7, 8)
    ]  # fmt: skip


def test_multi_capture_keeps_punctuation_and_counts_named_nodes() -> None:
    data = b"foo(1,  2 , x=3)"
    (m,) = _find("foo($$$A)", "python", data)
    cap = m.captures["A"]
    assert _text(data, cap.start_byte, cap.end_byte) == "1,  2 , x=3" and cap.nodes == 3


def test_anonymous_metavariables_capture_nothing() -> None:
    data = b"a + b\nf(1, 2)\n"
    assert [m.captures for m in _find("$_ + $_", "python", data)] == [{}]
    assert [m.captures for m in _find("f($$$)", "python", data)] == [{}]
    assert [m.captures for m in _find("f($_X, $$$_Y)", "python", data)] == [{}]


def test_nested_matches_come_in_document_order() -> None:
    data = b"foo(foo(1), foo(foo(2)))\nfoo(3)\n"
    found = _find("foo($A)", "python", data)
    assert [_text(data, m.start_byte, m.end_byte) for m in found] == [
        "foo(1)", "foo(foo(2))", "foo(2)", "foo(3)"
    ]  # fmt: skip
    found = _find("foo($$$A)", "python", data)
    assert [m.start_byte for m in found] == sorted(m.start_byte for m in found)
    assert len(found) == 5


def test_repeated_metavariables_must_be_structurally_equal() -> None:
    data = b"x + x\nx + y\nf(a) + f( a )\nf(a) + f(b)\n"
    found = _find("$A + $A", "python", data)
    assert [_text(data, m.start_byte, m.end_byte) for m in found] == ["x + x", "f(a) + f( a )"]
    # the capture reports the last occurrence, as ast-grep does
    last = found[1].captures["A"]
    assert _text(data, last.start_byte, last.end_byte) == "f( a )"
    data = b"g(1, 2, 1, 2)\ng(1, 2, 1, 3)\n"
    assert len(_find("g($$$A, 1, $$$A)", "python", data)) == 0  # lazy: A stops at first "1"
    assert len(_find("g($X, $Y, $X, $Y)", "python", data)) == 1


def test_selector_pins_the_root_kind() -> None:
    data = b'd = {"a": 1, "b": g(2)}\ne = {**x}\n'
    found = _find("{$K: $V}", "python", data, selector="pair")
    assert [_text(data, m.start_byte, m.end_byte) for m in found] == ['"a": 1', '"b": g(2)']


def test_file_with_syntax_errors_still_matches_its_valid_parts() -> None:
    data = b"def ok():\n    foo(1)\n\ndef broken(:\n    pass\n\nfoo(2)\n"
    found = _find("foo($A)", "python", data)
    assert [_text(data, m.start_byte, m.end_byte) for m in found] == ["foo(1)", "foo(2)"]


def test_a_lone_metavariable_matches_the_error_nodes_too() -> None:
    # ast-grep's `$A` matches every named node, the ERROR nodes of broken code included
    data = b"foo(1 +)\nbar = foo(\n"
    spans = [(m.start_byte, m.end_byte) for m in _find("$A", "python", data)]
    errors = [(6, 7), (9, 19)]  # `+` (an ERROR inside the call) and the unfinished line
    assert all(span in spans for span in errors)
    assert spans == sorted(spans, key=lambda s: (s[0], -s[1]))  # still in document order


def test_non_utf8_bytes_do_not_crash() -> None:
    data = b"foo('\xff\xfe')\nfoo(1)\n"
    assert len(_find("foo($A)", "python", data)) == 2


def test_five_megabyte_minified_javascript_finishes() -> None:
    chunk = b"function a%d(b,c){return b.map(function(d){return c(d,%d)}).filter(Boolean)}"
    data = b";".join(chunk % (i, i) for i in range(70_000))
    assert len(data) > 5_000_000 and b"\n" not in data
    pattern = compile_pattern("$X.filter($F)", "javascript")
    found = pattern.find(data)
    assert len(found) == 70_000
    assert found[-1].end_byte <= len(data)


@pytest.mark.parametrize("strictness", ["cst", "smart", "ast", "relaxed", "signature", "template"])
def test_every_strictness_matches_the_plain_case(strictness: str) -> None:
    data = b"foo(1, 2)\n"
    assert len(_find("foo(1, 2)", "python", data, strictness=strictness)) == 1


def test_strictness_differences() -> None:
    data = b"f(a, # note\n  b)\nf(a, b,)\n"
    count = {s: len(_find("f(a, b)", "python", data, strictness=s))
             for s in ("cst", "smart", "ast", "relaxed")}  # fmt: skip
    assert count == {"cst": 0, "smart": 2, "ast": 1, "relaxed": 2}
    assert len(_find("foo(1)", "python", b"foo(2)", strictness="signature")) == 1
    assert len(_find("foo(1)", "python", b"foo(2)")) == 0
    # template compares texts and no kinds: a keyword argument reads like an assignment
    assert len(_find("$A = $B", "python", b"f(a=b)\n", strictness="template")) == 1
    assert len(_find("$A = $B", "python", b"f(a=b)\n")) == 0


def test_unnamed_tokens_compare_by_kind_in_files_that_hold_the_longest_text() -> None:
    # ast-grep compares an unnamed token by its kind (tree-sitter-html reads the keyword
    # case-insensitively, as one kind), and searches only files holding the pattern's
    # longest leaf text: `doctype` here
    both = b"<!doctype html>\n<!DOCTYPE html>\n"
    lower = compile_pattern("<!doctype html>", "html")
    assert [(m.start_byte, m.end_byte) for m in lower.find(both)] == [(0, 15), (16, 31)]
    assert lower.find(b"<!DOCTYPE html>\n") == []
    # Ruby's quotes are one kind: `"X"` finds `'X'` where the file holds a `"`
    ruby = compile_pattern('"X"', "ruby")
    assert [m.start_byte for m in ruby.find(b"a = \"X\"\nb = 'X'\n")] == [4, 12]
    assert ruby.find(b"b = 'X'\n") == []
    # the white space a scanner puts into a token's span changes nothing: in tree-sitter-bash
    # a `$(` that starts a line inside a double-quoted string spans that line's indentation
    bash = b'eval "t=($(f x 10)\n\t\t   $(f y 20))"\n'
    found = compile_pattern("$($$$ARGS)", "bash").find(bash)
    assert [bash[m.start_byte : m.end_byte].strip() for m in found] == [b"$(f x 10)", b"$(f y 20)"]


def test_tree_argument_is_used() -> None:
    data = b"foo(1)\n"
    pattern = compile_pattern("foo($A)", "python")
    tree = pattern.parse(data)
    assert pattern.find(data, tree) == pattern.find(data)


def test_a_repeated_metavariable_over_a_deeply_nested_target(tmp_path: Path) -> None:
    """``$A + $A`` compares two 400-deep nestings: it raised RecursionError (``internal``)."""
    from sleuth import Workbench

    deep = "f(" * 400 + "1" + ")" * 400
    (tmp_path / "a.py").write_text(f"x = {deep} + {deep}\ny = {deep} + g(1)\n")
    with Workbench(tmp_path, servers=False) as wb:
        found = wb.search("ast:$A + $A", lang="py")
    assert [m["line"] for m in found.matches] == [1]


def test_a_digit_after_the_ellipsis_makes_no_metavariable() -> None:
    # ast-grep 0.51: `$$$1` is text, not a `$$$` list; `$$$A1` is one
    assert _find("foo($$$1)", "python", b"foo(a, b)\n") == []
    assert len(_find("foo($$$A1)", "python", b"foo(a, b)\n")) == 1
