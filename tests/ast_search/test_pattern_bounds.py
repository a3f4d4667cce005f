"""Compiling an ``ast:`` pattern is bounded and linear in its size (docs/query.md#limits; issue 15).

Counted, not timed: a counting double stands in for tree-sitter's ``Parser`` inside the pattern
compiler and records the size of every parse. A pattern that does not parse cleanly (refused, or
recovered as ast-grep reads it, docs/query.md#patterns-that-do-not-parse-cleanly) must cost the
same bounded number of parses whatever its length (so the bytes parsed grow linearly), and one
too long for the languages it would be compiled for is refused before any parse.
"""

from __future__ import annotations

import pytest
from tree_sitter import Language, Parser, Tree

import sleuth.ast_search.pattern as pattern_module
from sleuth.api import Workbench
from sleuth.ast_search import MAX_PATTERN_CHARS, compile_pattern, get_lang_spec
from sleuth.ast_search.pattern import HINT_PROBE_CHARS, MAX_HINT_PARSES, MAX_PATTERN_DEPTH
from sleuth.errors import InvalidQuery
from sleuth.query.ast_mode import MAX_COMPILE_CHARS
from sleuth.query.request import MAX_QUERY_CHARS
from tests.conftest import MakeWorkspace

UNIT = "{$K: $V}*"  # the shape: parses in no language
POLYGLOT: dict[str, str | bytes] = {
    "a.js": "const a = {k: 1};\n",
    "a.ts": "let a: number = 1;\n",
    "a.py": 'x = {"k": 1}\n',
    "a.go": "package main\n\nfunc f() { g(1) }\n",
    "a.rs": "fn main() { let a = 1; }\n",
    "a.c": "int main(void) { return 0; }\n",
    "A.java": "class A { void f() {} }\n",
    "a.rb": "puts 1\n",
}


class ParseLog:
    """The byte size of every parse the pattern compiler ran."""

    def __init__(self) -> None:
        self.sizes: list[int] = []

    def parser(self, language: Language) -> _CountingParser:
        return _CountingParser(self, language)


class _CountingParser:
    def __init__(self, log: ParseLog, language: Language) -> None:
        self._log = log
        self._parser = Parser(language)

    def parse(self, data: bytes) -> Tree:
        self._log.sizes.append(len(data))
        return self._parser.parse(data)


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> ParseLog:
    log = ParseLog()
    monkeypatch.setattr(pattern_module, "Parser", log.parser)
    return log


def _hint(pattern: str, lang: str) -> str:
    """The hint a pattern that does not parse cleanly gets: in the warning of its recovered
    reading, or in the error that refuses it."""
    try:
        warning = compile_pattern(pattern, lang).warning
    except InvalidQuery as err:
        return str(err.details["hint"])
    assert warning is not None
    return warning


def _bound(lang: str) -> int:
    """Parses one failing compilation may run: the top level, each context (plus the probe of
    its statement list), and the hint's trial parses (one more per context)."""
    return 1 + 3 * len(get_lang_spec(lang).contexts) + MAX_HINT_PARSES


@pytest.mark.parametrize("lang", ["javascript", "typescript", "go", "c", "java", "python"])
def test_a_pattern_that_does_not_parse_costs_bounded_linear_parses(
    parses: ParseLog, lang: str
) -> None:
    counts: dict[int, int] = {}
    parsed: dict[int, int] = {}
    for reps in (40, 80, 160):
        parses.sizes.clear()
        assert _hint(UNIT * reps, lang)
        counts[reps], parsed[reps] = len(parses.sizes), sum(parses.sizes)
    # the same few parses at every size (fewer once the hint probes stop), never one per
    # metavariable: before the fix 40/80/160 repetitions took 89/169/329 parses in JavaScript
    assert counts[160] <= counts[80] <= counts[40] <= _bound(lang)
    # so twice the pattern is at most twice the bytes parsed (it was four times)
    assert parsed[160] <= 2 * parsed[80] and parsed[80] <= 2 * parsed[40]


def test_hint_probes_stop_at_their_size(parses: ParseLog) -> None:
    short = UNIT * (HINT_PROBE_CHARS // len(UNIT))
    _hint(short, "javascript")
    assert len(parses.sizes) > 1  # the hint was looked for by trial parses
    parses.sizes.clear()
    hint = _hint(short + UNIT, "javascript")
    assert parses.sizes == [len(short + UNIT)]  # only the pattern itself (no contexts in JS)
    assert "write a complete javascript snippet" in hint


def test_the_quoting_hint_tries_the_metavariables_nearest_the_error(parses: ParseLog) -> None:
    names = ", ".join(f"$A{i}" for i in range(40))
    pattern = f"import {{ {names} }} from $S"
    hint = _hint(pattern, "javascript")
    assert f'quote it, e.g. `import {{ {names} }} from "$S"`' in hint
    # not one trial parse per metavariable (41 before the fix)
    assert len(parses.sizes) <= _bound("javascript")


def _largest_pattern() -> str:
    """The longest pattern a query admits (``ast:`` + pattern within ``MAX_QUERY_CHARS``)."""
    reps = (MAX_QUERY_CHARS - len("ast:")) // len(UNIT)
    return UNIT * reps


def test_a_long_pattern_over_many_languages_is_refused_before_any_parse(
    parses: ParseLog, make_workspace: MakeWorkspace
) -> None:
    root = make_workspace(POLYGLOT)
    pattern = _largest_pattern()
    assert len(pattern) > 16_000
    bench = Workbench(root, build_index=False, servers=False)
    with pytest.raises(InvalidQuery) as err:
        bench.search("ast:" + pattern)
    assert err.value.code == "invalid_query"
    assert parses.sizes == []
    message = err.value.message
    assert f"{len(pattern)} characters long" in message
    assert f"budget of {MAX_COMPILE_CHARS}" in message and "set lang" in message
    assert err.value.details["languages"] and len(err.value.details["languages"]) == len(POLYGLOT)


@pytest.mark.parametrize("lang", ["javascript", "c"])
def test_the_longest_pattern_with_lang_answers_after_bounded_parses(
    parses: ParseLog, make_workspace: MakeWorkspace, lang: str
) -> None:
    root = make_workspace(POLYGLOT)
    pattern = _largest_pattern()
    with pytest.raises(InvalidQuery) as err:
        Workbench(root, build_index=False, servers=False).search("ast:" + pattern, lang=lang)
    assert "does not parse" in err.value.message
    # no hint probes at this size: the top level and each context once (C: two contexts)
    assert len(parses.sizes) <= 1 + len(get_lang_spec(lang).contexts)
    assert max(parses.sizes) < 4 * len(pattern) + 64  # expando chars are up to 4 bytes


def test_the_budget_admits_its_limit_and_refuses_one_more(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(POLYGLOT)
    most = MAX_COMPILE_CHARS // len(POLYGLOT)
    assert most < MAX_PATTERN_CHARS  # the budget, not the pattern cap, decides here
    bench = Workbench(root, build_index=False, servers=False)
    assert bench.search("ast:" + "x" * most).to_json()["matches"] == []
    with pytest.raises(InvalidQuery, match=f"at most {most} characters"):
        bench.search("ast:" + "x" * (most + 1))
    # with lang the same pattern is compiled for one language only
    assert bench.search("ast:" + "x" * (most + 1), lang="python").to_json()["matches"] == []


def test_a_deep_pattern_is_refused_with_the_limit_and_a_shallow_one_matches() -> None:
    deep = "f(" * 300 + "$A" + ")" * 300  # 600 levels: call_expression > arguments > ...
    with pytest.raises(InvalidQuery) as err:  # before the fix: RecursionError (internal)
        compile_pattern(deep, "javascript")
    assert f"more than {MAX_PATTERN_DEPTH} nodes deep" in err.value.message
    nested = "f(" * 100 + "$A" + ")" * 100
    found = compile_pattern(nested, "javascript").find(nested.replace("$A", "1").encode())
    assert [(m.start_byte, m.end_byte) for m in found] == [(0, len(nested) - 1)]
    assert found[0].captures["A"].start_byte == 200


def test_a_deep_pattern_that_does_not_parse_reports_its_error() -> None:
    broken = "f(" * 600 + "$A +" + ")" * 600  # the error 1200 levels down
    with pytest.raises(InvalidQuery) as err:  # before the fix: RecursionError (internal)
        compile_pattern(broken, "javascript")
    assert "a missing 'identifier' at character 1204" in err.value.message
    assert err.value.details["position"] == 1204
