"""Pattern compilation: code-context retries (better than ast-grep), errors with positions and
hints, options, and the literal prefilter hint (docs/query.md#ast-structural-patterns)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sleuth.ast_search import MAX_PATTERN_CHARS, compile_pattern
from sleuth.errors import InvalidQuery, Unsupported
from sleuth.query.request import MAX_QUERY_CHARS

AST_GREP = Path(sys.executable).parent / "ast-grep"
needs_ast_grep = pytest.mark.skipif(not AST_GREP.exists(), reason="ast-grep-cli missing")

KERNEL_C = b"""#include <linux/slab.h>
void f(void) {
  char *p = kmalloc(16, GFP_KERNEL);
  kfree(p);
  q = kmalloc(n * 2, 0);
}
"""
GO_SRC = b"""package m
import "fmt"
func f() error {
\treturn fmt.Errorf("x %d", 1)
}
func g() { e := fmt.Errorf("y"); _ = e }
"""


def _texts(pattern: str, lang: str, data: bytes) -> list[str]:
    return [
        data[m.start_byte : m.end_byte].decode() for m in compile_pattern(pattern, lang).find(data)
    ]


def _ast_grep_count(tmp_path: Path, name: str, data: bytes, pattern: str, lang: str) -> int:
    path = tmp_path / name
    path.write_bytes(data)
    proc = subprocess.run(
        [str(AST_GREP), "run", "-p", pattern, "-l", lang, "--json=compact", str(path)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    return proc.stdout.count('"range"') - proc.stdout.count('"metaVariables":{"single":{"')


@needs_ast_grep
def test_c_macro_type_pattern_is_retried_as_a_call(tmp_path: Path) -> None:
    assert _ast_grep_count(tmp_path, "k.c", KERNEL_C, "kmalloc($$$A)", "c") == 0
    assert _texts("kmalloc($$$A)", "c", KERNEL_C) == [
        "kmalloc(16, GFP_KERNEL)",
        "kmalloc(n * 2, 0)",
    ]
    assert _ast_grep_count(tmp_path, "k.c", KERNEL_C, "kfree($A)", "c") == 0
    assert _texts("kfree($A)", "c", KERNEL_C) == ["kfree(p)"]


@needs_ast_grep
def test_go_call_pattern_is_retried_in_a_function_body(tmp_path: Path) -> None:
    assert _ast_grep_count(tmp_path, "e.go", GO_SRC, "fmt.Errorf($$$A)", "go") == 0
    pattern = compile_pattern("fmt.Errorf($$$A)", "go")
    found = pattern.find(GO_SRC)
    assert [GO_SRC[m.start_byte : m.end_byte] for m in found] == [
        b'fmt.Errorf("x %d", 1)',
        b'fmt.Errorf("y")',
    ]
    args = found[0].captures["A"]
    assert GO_SRC[args.start_byte : args.end_byte] == b'"x %d", 1' and args.nodes == 2


GO_TYPES = b"""package m
func f(b *hcl.BodyContent) {
\tvar c hcl.BodyContent
\tx := cfg.BodyContent
\t_ = x
}
"""


def _ast_grep_spans(tmp_path: Path, data: bytes, pattern: str, *args: str) -> list[list[int]]:
    path = tmp_path / "t.go"
    path.write_bytes(data)
    proc = subprocess.run(
        [str(AST_GREP), "run", "-p", pattern, "-l", "go", *args, "--json=compact", str(path)],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    spans = [m["range"]["byteOffset"] for m in json.loads(proc.stdout)]
    return [[s["start"], s["end"]] for s in spans]


@needs_ast_grep
def test_ast_greps_top_level_reading_wins_and_says_how_to_ask_for_the_body_one(
    tmp_path: Path,
) -> None:
    # Go's top level reads `$A.BodyContent` as a type (ast-grep's reading), which sleuth
    # matches; inside a function body it is a selector expression, one selector away
    pattern = compile_pattern("$A.BodyContent", "go")
    spans = [[m.start_byte, m.end_byte] for m in pattern.find(GO_TYPES)]
    ast_grep = _ast_grep_spans(tmp_path, GO_TYPES, "$A.BodyContent")
    assert [GO_TYPES[s:e] for s, e in ast_grep] == [b"hcl.BodyContent"] * 2
    assert spans == ast_grep
    assert pattern.warning is not None
    assert "kind 'qualified_type'" in pattern.warning
    assert "the selector 'selector_expression'" in pattern.warning
    # the selector the warning names gives the body's reading
    body = compile_pattern("$A.BodyContent", "go", selector="selector_expression")
    assert [GO_TYPES[m.start_byte : m.end_byte] for m in body.find(GO_TYPES)] == [
        b"cfg.BodyContent"
    ]
    # a pattern that parses cleanly at the top level says nothing
    assert compile_pattern("func $F() {}", "go").warning is None


CPP_NAMES = b"""#include <string>
struct Set { static int Compile(); };
int main() {
  std::string s = "a";
  std::vector<int> v;
  auto f = &Set::Compile;
  return Set::Compile();
}
"""


RUST_NAMES = b"""use std::fmt;
impl fmt::Debug for X {}
fn f() -> std::io::Result<()> { let o = Ordering::Less; Vec::new(); Ok(()) }
fn g(h: &fmt::Debug) {}
"""
NAME_CASES = [
    ("cpp", CPP_NAMES, "std::string", [b"std::string"], True),
    ("cpp", CPP_NAMES, "std::vector<$T>", [b"std::vector<int>"], True),
    ("cpp", CPP_NAMES, "Set::Compile", [], True),  # used as a value only: no type to find
    ("rust", RUST_NAMES, "fmt::Debug", [b"fmt::Debug", b"fmt::Debug"], True),
    ("rust", RUST_NAMES, "fmt::$T", [b"fmt::Debug", b"fmt::Debug"], True),
    # parsed with a MISSING `;` rather than an ERROR: an expression path in both engines
    ("rust", RUST_NAMES, "Ordering::Less", [b"Ordering::Less"], False),
    ("rust", RUST_NAMES, "Vec::new()", [b"Vec::new()"], False),  # a call, not a name alone
    ("rust", RUST_NAMES, "&$A::Debug", [], False),  # an expression: not the `&fmt::Debug` type
]


@needs_ast_grep
@pytest.mark.parametrize(("lang", "source", "text", "found", "warned"), NAME_CASES)
def test_a_qualified_name_is_read_as_the_type_ast_grep_reads(
    tmp_path: Path, lang: str, source: bytes, text: str, found: list[bytes], warned: bool
) -> None:
    path = tmp_path / ("n.cpp" if lang == "cpp" else "n.rs")
    path.write_bytes(source)
    pattern = compile_pattern(text, lang)
    assert [source[m.start_byte : m.end_byte] for m in pattern.find(source)] == found
    assert (pattern.warning is not None and "type name" in pattern.warning) == warned
    proc = subprocess.run(
        [str(AST_GREP), "run", "-p", text, "-l", lang, "--json=compact", str(path)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode in (0, 1) and not proc.stderr  # 1: no match
    theirs = [m["range"]["byteOffset"] for m in json.loads(proc.stdout)]
    assert [(m.start_byte, m.end_byte) for m in pattern.find(source)] == [
        (r["start"], r["end"]) for r in theirs
    ]


@needs_ast_grep
def test_a_selector_picks_from_the_type_reading_of_a_qualified_name(tmp_path: Path) -> None:
    path = tmp_path / "n.cpp"
    path.write_bytes(CPP_NAMES)
    pattern = compile_pattern("std::string", "cpp", selector="qualified_identifier")
    proc = subprocess.run(
        [str(AST_GREP), "run", "-p", "std::string", "--selector", "qualified_identifier",
         "-l", "cpp", "--json=compact", str(path)],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    theirs = [m["range"]["byteOffset"] for m in json.loads(proc.stdout)]
    assert [(m.start_byte, m.end_byte) for m in pattern.find(CPP_NAMES)] == [
        (r["start"], r["end"]) for r in theirs
    ]
    assert theirs  # the premise: the type is found


def test_a_cpp_call_through_a_qualified_name_is_a_call() -> None:
    # `Set::Compile($$$A)` at the top level is the most vexing parse (a declaration of `A`):
    # it is read inside a function body, where it is the call
    calls = compile_pattern("Set::Compile($$$A)", "cpp")
    assert [CPP_NAMES[m.start_byte : m.end_byte] for m in calls.find(CPP_NAMES)] == [
        b"Set::Compile()"
    ]


@needs_ast_grep
def test_white_space_a_token_holds_is_read_as_given(tmp_path: Path) -> None:
    # a Rust doc comment's token ends with its newline: `/// doc` alone is another token
    rust = b"/// doc\nfn f() {}\n/// doc more\nfn g() {}\n"
    given = compile_pattern("/// doc\n", "rust")
    assert [(m.start_byte, m.end_byte) for m in given.find(rust)] == [(0, 8)]
    path = tmp_path / "d.rs"
    path.write_bytes(rust)
    proc = subprocess.run(
        [str(AST_GREP), "run", "-p", "/// doc\n", "-l", "rust", "--json=compact", str(path)],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert [(m["range"]["byteOffset"]["start"], m["range"]["byteOffset"]["end"])
            for m in json.loads(proc.stdout)] == [(0, 8)]  # fmt: skip
    # white space that changes nothing keeps the stripped reading (and its positions)
    assert compile_pattern("  foo($A)\n", "python").find(b"foo(1)\n")[0].start_byte == 0


def test_statement_patterns_in_body_only_languages() -> None:
    java = b"class A { void f() { int x = g(1); if (x > 0) { return; } } }"
    assert _texts("int $X = $V;", "java", java) == ["int x = g(1);"]
    assert _texts("if ($C) { $$$B }", "java", java) == ["if (x > 0) { return; }"]
    rust = b"fn f() { let a = 1; let b: u8 = 2; }"
    assert _texts("let $X = $V", "rust", rust) == ["let a = 1;"]
    cs = b"class A { void F() { Console.WriteLine(1); } }"
    assert _texts("Console.WriteLine($A)", "cs", cs) == ["Console.WriteLine(1)"]


def test_python_class_without_body_is_recovered_with_a_completion_hint() -> None:
    # read as ast-grep reads it (docs/query.md#patterns-that-do-not-parse-cleanly): every class
    compiled = compile_pattern("class $C", "python")
    assert [m.start_byte for m in compiled.find(b"class A:\n    pass\nclass B(A): pass\n")] == [
        0,
        18,
    ]
    assert compiled.warning is not None and "class $C: $$$BODY" in compiled.warning


def test_js_pair_fragment_suggests_a_context_and_selector() -> None:
    with pytest.raises(InvalidQuery) as err:
        compile_pattern('"a": $V', "javascript")
    assert err.value.details["position"] == 3
    assert "selector=pair" in err.value.message and '{"a": $V}' in err.value.message
    # ... and the suggestion works
    found = compile_pattern('({"a": $V})', "js", selector="pair").find(b'x = {"a": 1, b: 2}')
    assert [(m.start_byte, m.end_byte) for m in found] == [(5, 11)]


@pytest.mark.parametrize(
    ("pattern", "lang", "position"),
    [("a = 1\nb = 2", "python", 6), ("$a + $a", "python", 0), ("  $A $$$B", "rust", 9),
     ("a();\nb();", "c", 5), ("$A $$$B", "go", 7)],
)  # fmt: skip
def test_unparsable_patterns_report_a_position(pattern: str, lang: str, position: int) -> None:
    with pytest.raises(InvalidQuery) as err:
        compile_pattern(pattern, lang)
    assert err.value.details["position"] == position
    assert err.value.details["hint"]


def test_bad_inputs() -> None:
    with pytest.raises(Unsupported) as unsupported:
        compile_pattern("foo($A)", "klingon")
    assert "python" in unsupported.value.message and "klingon" in unsupported.value.message
    with pytest.raises(InvalidQuery, match="empty"):
        compile_pattern("  \n", "python")
    with pytest.raises(InvalidQuery, match="strictness"):
        compile_pattern("foo($A)", "python", strictness="loose")
    with pytest.raises(InvalidQuery, match="stand alone"):
        compile_pattern("$$$A", "python")
    with pytest.raises(InvalidQuery, match="no_such_kind"):
        compile_pattern("{$K: $V}", "python", selector="no_such_kind")
    with pytest.raises(InvalidQuery, match="too long|limited"):
        compile_pattern("foo(" + "a, " * 35_000 + "b)", "python")
    # one cap whichever door a pattern comes through (a query, or compile_pattern itself)
    assert MAX_PATTERN_CHARS == MAX_QUERY_CHARS
    with pytest.raises(InvalidQuery, match="limited to 16384"):
        compile_pattern("foo(" + "a, " * 5_500 + "b)", "python")


def test_a_bare_metavariable_where_a_string_goes_gets_a_quoting_hint() -> None:
    for lang in ("typescript", "javascript"):
        warning = compile_pattern("import $X from $Y", lang).warning  # recovered, as ast-grep
        assert warning is not None and 'quote it, e.g. `import $X from "$Y"`' in warning
        assert compile_pattern('import $X from "$Y"', lang).warning is None  # it parses


def test_aliases_are_accepted() -> None:
    for alias, name in [("py", "python"), ("JS", "javascript"), ("ts", "typescript"),
                        ("c++", "cpp"), ("cs", "csharp"), ("rs", "rust"), ("kt", "kotlin"),
                        ("sh", "bash"), ("golang", "go")]:  # fmt: skip
        assert compile_pattern("foo($A)", alias).lang == name


def test_literals_are_required_tokens() -> None:
    lits = compile_pattern("$OBJ.objects.filter($$$)", "python").literals
    assert lits is not None and set(lits) == {(b"objects",), (b"filter",)}
    assert compile_pattern("def $F($$$A): $$$B", "python").literals == ((b"def",),)
    assert compile_pattern("$A + $B", "python").literals is None
    # signature compares no leaf texts, but ast-grep searches only the files that hold the
    # pattern's longest one
    assert compile_pattern("foo(1)", "python", strictness="signature").literals == ((b"foo",),)
    assert compile_pattern("MyClass()", "python").literals == ((b"myclass",),)


def test_literals_never_exclude_a_matching_file() -> None:
    data = b"class A:\n    def Run(self):\n        return Helper.make(1, x=2)\n"
    folded = data.lower()
    for pattern in ["Helper.make($$$A)", "def $F(self): $$$B", "return $X", "$A.make($B, x=2)"]:
        compiled = compile_pattern(pattern, "python")
        assert compiled.find(data), pattern
        for group in compiled.literals or ():
            assert any(alt in folded for alt in group), (pattern, group)


CSS_ERRORS = b"""a { background: url(../img/x.svg); }
#doc { width:76.54em;*width:74.69em;min-width:995px; max-width:100em; padding-top:16px;}
p { width: 28px; }
"""


@needs_ast_grep
@pytest.mark.parametrize("text", ["28px", "100%", "($$$ARGS)"])
def test_an_error_rooted_pattern_finds_the_nodes_ast_grep_finds(tmp_path: Path, text: str) -> None:
    # `28px` recovers as an ERROR leaf around `px`: at the root it is a kind of its own,
    # found among the target's ERROR nodes only (not every `px`); `($$$ARGS)` is an inner
    # ERROR, which matches a node of any kind, ERROR nodes included
    path = tmp_path / "e.css"
    path.write_bytes(CSS_ERRORS)
    pattern = compile_pattern(text, "css")
    assert pattern.warning is not None
    proc = subprocess.run(
        [str(AST_GREP), "run", "-p", text, "-l", "css", "--json=compact", str(path)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    theirs = [(m["range"]["byteOffset"]["start"], m["range"]["byteOffset"]["end"])
              for m in json.loads(proc.stdout or "[]")]  # fmt: skip
    ours = [(m.start_byte, m.end_byte) for m in pattern.find(CSS_ERRORS)]
    assert ours == theirs
    if text != "100%":
        assert ours  # something to agree on


GO_CONDITIONS = b"""package m
func f() {
\tif a.T == x.A || a.T == x.B {
\t}
\tok := a.T == x.C
}
"""


@needs_ast_grep
def test_a_selector_picks_the_first_node_of_ast_greps_top_level_parse(tmp_path: Path) -> None:
    # the statement does not parse at Go's top level; ast-grep's selector takes the first
    # binary expression of that parse (`a.T == $X.$Y`), not the `||` a function body reads
    text = "a.T == $X.$Y || a.T == $X.$Z"
    pattern = compile_pattern(text, "go", selector="binary_expression")
    assert pattern.warning is not None and "first such node" in pattern.warning
    theirs = _ast_grep_spans(tmp_path, GO_CONDITIONS, text, "--selector", "binary_expression")
    ours = [[m.start_byte, m.end_byte] for m in pattern.find(GO_CONDITIONS)]
    assert ours == theirs
    assert [GO_CONDITIONS[s:e] for s, e in ours] == [b"a.T == x.A", b"a.T == x.B", b"a.T == x.C"]
