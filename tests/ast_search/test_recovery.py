"""Patterns that do not parse cleanly, and the ``template`` strictness, against ast-grep
(docs/query.md#patterns-that-do-not-parse-cleanly, docs/query.md#strictness-and-selector).

A pattern whose parse keeps an ERROR or MISSING node in every code context is read as
ast-grep reads it: each case is run through the real ``ast-grep run`` (the oracle) and through
``compile_pattern`` on a source holding matching and near-miss code, and the match ranges and
the capture ranges must agree, and the compiled pattern must carry a warning naming the
recovered part. A recovered pattern that would match anything is still refused, with its
position and a hint; one that parses cleanly has no warning.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sleuth.ast_search import compile_pattern
from sleuth.errors import InvalidQuery

AST_GREP = Path(sys.executable).parent / "ast-grep"
pytestmark = pytest.mark.skipif(not AST_GREP.exists(), reason="ast-grep-cli (test extra) missing")

EXT = {"python": "py", "typescript": "ts", "javascript": "js", "go": "go", "rust": "rs",
       "cpp": "cpp", "c": "c", "java": "java", "kotlin": "kt"}  # fmt: skip

CPP = """template <typename T>
T id(T x) { return x; }

template <typename U, typename V>
struct Pair { U u; V v; };

template <class W>
W other(W w) { return w; }

struct Base {};
struct Derived: Base { int x; };
struct Plain { int y; };
struct Two: Base, Plain {};
class Klass: public Base {};

void f(int a, int b) {
  if (a | b) abc;
  if (a) { g(); }
  if (a && b) ;
  while (a) abc;
}
"""
RUST = """fn main() {
    let add = |a, b| a + b;
    let one = |x| x + 1;
    let three = |a, b, c| a;
    let typed = |a: i32, b: i32| a * b;
    let mv = move |p, q| p;
    match x { a | b => 1, _ => 2 }
}
"""
TS_IMPORTS = """import { a, b } from 'mod';
import { c } from "other";
import d from 'def';
import * as e from 'star';
import { f as g } from './rel';
export { h } from 'reexp';
"""
JAVA = "class A { int f(int a) { if (a) b(); if (a) { c(); } while (a) ; return a; } }\n"
C_IFS = "int f(int a) {\n  if (a | b) abc;\n  if (a) { g(); }\n  while (a) x++;\n}\n"
PY_DEFS = "class A(B):\n    def run(self, x):\n        return x\n\ndef f():\n    pass\n\nf(1, 2)\n"
TS_DECLS = """a = b;
var a = b;
let a = b;
const a = b, c = d;
class A { a = b; x = y }
foo(a, /* c */ b);
foo(a, b,);
obj.foo(a, b);
function f(a, b) { return a + b; }
"""

# (id, lang, pattern, source, the recovered text the warning quotes)
RECOVERED: list[tuple[str, str, str, str, str]] = [
    ("cpp-template-head", "cpp", "template <typename $T>", CPP, "`template <typename $T>`"),
    ("cpp-struct-base", "cpp", "struct $A: $B", CPP, "`struct $A: $B`"),
    ("cpp-if-no-body", "cpp", "if ($A)", CPP, "the missing ';' at character 7"),
    ("c-if-no-body", "c", "if ($A)", C_IFS, "the missing ';' at character 7"),
    # not the initializer context's reading, a call of a method named `if`
    ("java-if-no-body", "java", "if ($A)", JAVA, "the missing ';' at character 7"),
    ("java-while-no-body", "java", "while ($A)", JAVA, "the missing ';' at character 10"),
    ("rust-closure-head", "rust", "|$A, $B|", RUST, "`|$A, $B|`"),
    ("go-rune-string", "go", "print('123')", "package main\n\nprint('123')\n", "`print('123')`"),
    ("go-rune-near-miss", "go", "print('123')", "package main\n\nprint('124')\n", "ERROR"),
    ("ts-import-bare-source", "typescript", "import { $$$A } from $S", TS_IMPORTS, "from $S`"),
    ("ts-import-default", "typescript", "import $X from $Y", TS_IMPORTS, "from $Y`"),
    ("py-class-head", "python", "class $C", PY_DEFS, "`class $C`"),
    ("py-def-head", "python", "def $F($$$A)", PY_DEFS, "`def $F($$$A)`"),
    ("py-unclosed-call", "python", "f(1, 2", PY_DEFS, "`f(1, 2`"),
]

# (id, lang, pattern, source): ast-grep's fifth level, which compares texts and no kinds
TEMPLATE: list[tuple[str, str, str, str]] = [
    ("ts-assign-any-declaration", "typescript", "$A = $B", TS_DECLS),
    ("ts-call", "typescript", "foo($A, $B)", TS_DECLS),
    ("ts-any-callee", "typescript", "$F($$$)", TS_DECLS),
    ("ts-function", "typescript", "function $F($$$A) { $$$B }", TS_DECLS),
    ("py-assign", "python", "$A = $B", "a = b\na: int = b\nx += 1\nf(a=b)\n"),
    ("py-call-comment", "python", "foo($A, $B)", "foo(a, b)\nfoo(a, # c\n  b)\nfoo(a, b,)\n"),
    ("cpp-recovered-template", "cpp", "template <typename $T>", CPP),
    ("py-keyword-as-text", "python", "if", 'if a: pass\nx = "if"\n'),  # the string's content
    ("py-leaf-every-wrapper", "python", "pass", "if a: pass\n"),  # the block, statement, token
]


def _oracle(tmp_path: Path, lang: str, pattern: str, source: str, *flags: str) -> list[Any]:
    path = tmp_path / f"case.{EXT[lang]}"
    path.write_text(source)
    cmd = [str(AST_GREP), "run", "-p", pattern, "-l", lang, "--json=compact", *flags, str(path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    # ast-grep exits 1 (no match) or with an error when a pattern with an ERROR finds nothing
    assert proc.returncode in (0, 1) or "ERROR node" in proc.stderr, proc.stderr
    found: list[Any] = json.loads(proc.stdout or "[]")
    return found


Spans = list[tuple[int, int, dict[str, tuple[int, int]]]]


def _ast_grep_spans(found: list[Any]) -> Spans:
    out: Spans = []
    for m in found:
        meta = m.get("metaVariables") or {}
        caps = {
            name: (cap["range"]["byteOffset"]["start"], cap["range"]["byteOffset"]["end"])
            for name, cap in (meta.get("single") or {}).items()
        }
        for name, nodes in (meta.get("multi") or {}).items():
            if nodes:
                first, last = nodes[0]["range"]["byteOffset"], nodes[-1]["range"]["byteOffset"]
                caps[name] = (first["start"], last["end"])
        off = m["range"]["byteOffset"]
        out.append((off["start"], off["end"], caps))
    return sorted(out)


def _sleuth_spans(lang: str, pattern: str, source: str, strictness: str = "smart") -> Spans:
    compiled = compile_pattern(pattern, lang, strictness=strictness)
    return sorted(
        (
            m.start_byte,
            m.end_byte,
            {n: (c.start_byte, c.end_byte) for n, c in m.captures.items() if c.nodes},
        )
        for m in compiled.find(source.encode())
    )


@pytest.mark.parametrize(("lang", "pattern", "source", "quoted"),
                         [c[1:] for c in RECOVERED], ids=[c[0] for c in RECOVERED])  # fmt: skip
def test_a_recovered_pattern_matches_what_ast_grep_matches_with_a_warning(
    tmp_path: Path, lang: str, pattern: str, source: str, quoted: str
) -> None:
    expected = _ast_grep_spans(_oracle(tmp_path, lang, pattern, source))
    assert _sleuth_spans(lang, pattern, source) == expected
    warning = compile_pattern(pattern, lang).warning
    assert warning is not None and quoted in warning, warning
    assert warning.startswith(f"the ast: pattern does not parse cleanly as {lang}")


def test_the_recovered_cases_match_something_and_miss_the_near_misses(tmp_path: Path) -> None:
    """The oracle cases are not vacuous: the spans they agree on (issue examples)."""
    starts = {
        c[0]: [s for s, _, _ in _sleuth_spans(c[1], c[2], c[3])] for c in RECOVERED
    }  # fmt: skip
    assert len(starts["cpp-template-head"]) == 1  # not the two-parameter nor the `class W` one
    assert len(starts["cpp-struct-base"]) == 2  # Derived and Two, not Plain nor Klass
    assert [CPP[s : s + 10] for s in starts["cpp-if-no-body"]] == ["if (a | b)", "if (a && b"]
    assert len(starts["java-if-no-body"]) == 2  # both ifs: the consequence is left out
    assert len(starts["rust-closure-head"]) == 3  # two parameters, typed or not, moved or not
    assert len(starts["go-rune-string"]) == 1 and starts["go-rune-near-miss"] == []
    assert len(starts["ts-import-bare-source"]) == 3  # the braced imports only
    # $S binds the whole string, quotes included
    spans = _sleuth_spans("typescript", "import { $$$A } from $S", TS_IMPORTS)
    assert [TS_IMPORTS[s:e] for _, _, caps in spans for s, e in [caps["S"]]] == [
        "'mod'",
        '"other"',
        "'./rel'",
    ]


@pytest.mark.parametrize(
    ("pattern", "lang", "position"),
    [("$A $$$B", "rust", 7), ("$$$A $$$B", "go", 9), ("$$$A $B", "go", 7), ("$A $$$B", "lua", 7)],
)
def test_a_recovered_pattern_that_would_match_anything_is_refused(
    pattern: str, lang: str, position: int
) -> None:
    with pytest.raises(InvalidQuery) as err:
        compile_pattern(pattern, lang)
    assert err.value.details["position"] == position
    assert err.value.details["hint"] and err.value.details["hint"] in err.value.message
    assert "it would match any node" in err.value.message


def test_a_pattern_ast_grep_refuses_is_still_refused() -> None:
    for pattern, lang in [('"a": $V', "javascript"), ("a = 1\nb = 2", "python")]:
        with pytest.raises(InvalidQuery, match="does not parse as one"):
            compile_pattern(pattern, lang)


def test_a_clean_pattern_has_no_warning() -> None:
    for pattern, lang in [("foo($A)", "python"), ("if ($A) { $$$ }", "cpp"), ("$A", "rust")]:
        assert compile_pattern(pattern, lang).warning is None
    # read in a code context (docs/query.md#languages): the warning says ast-grep reads it
    # otherwise, and names the selector for that reading
    warning = compile_pattern("fmt.Errorf($$$A)", "go").warning
    assert warning is not None and "the selector 'type_conversion_expression'" in warning


def test_the_warning_names_each_recovered_part_in_pattern_positions() -> None:
    warning = compile_pattern("  if ($A)", "cpp").warning
    assert warning is not None
    assert "the missing ';' at character 9 is left out" in warning  # the lead counts
    assert "e.g. `if ($A) {}`" in warning  # how to write it so that it parses
    quoting = compile_pattern("import { $$$A } from $S", "typescript").warning
    assert quoting is not None and 'quote it, e.g. `import { $$$A } from "$S"`' in quoting


@pytest.mark.parametrize(("lang", "pattern", "source"),
                         [c[1:] for c in TEMPLATE], ids=[c[0] for c in TEMPLATE])  # fmt: skip
def test_template_strictness_matches_ast_grep(
    tmp_path: Path, lang: str, pattern: str, source: str
) -> None:
    found = _oracle(tmp_path, lang, pattern, source, "--strictness", "template")
    expected = _ast_grep_spans(found)
    assert _sleuth_spans(lang, pattern, source, "template") == expected


def test_template_ignores_kinds_that_smart_compares() -> None:
    smart = _sleuth_spans("typescript", "$A = $B", TS_DECLS)
    template = _sleuth_spans("typescript", "$A = $B", TS_DECLS, "template")
    assert len(smart) == 1 < len(template)  # declarators and class fields too
    texts = {TS_DECLS[s:e] for s, e, _ in template}
    assert {"a = b", "c = d", "x = y"} <= texts


@pytest.mark.parametrize(
    ("lang", "pattern", "selector", "source"),
    [
        ("typescript", "import { $A } from $S", "import_specifier", TS_IMPORTS),
        ("javascript", '{"a": $V', "pair", 'x = {"a": 1, b: 2};\ny = {"a": f(3)};\n'),
    ],
)
def test_a_selector_in_a_recovered_context_matches_ast_grep(
    tmp_path: Path, lang: str, pattern: str, selector: str, source: str
) -> None:
    found = _oracle(tmp_path, lang, pattern, source, "--selector", selector)
    compiled = compile_pattern(pattern, lang, selector=selector)
    got = sorted((m.start_byte, m.end_byte) for m in compiled.find(source.encode()))
    assert got == [(s, e) for s, e, _ in _ast_grep_spans(found)] and got
    # the selector's kind pins the node: the errors of its context change nothing it matches
    assert compiled.warning is not None and "outside the selected node" in compiled.warning
