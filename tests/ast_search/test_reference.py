"""Parity with ast-grep: every case is run through the real `ast-grep run` CLI (the oracle) and
through sleuth, and the match ranges and captures must agree
(docs/query.md#ast-structural-patterns).

Multi captures are compared by span: ast-grep lists the captured nodes with their punctuation
(``['1', ',', '2']``); sleuth reports the range from the first to the last node, so the oracle's
first start and last end must equal sleuth's range, and an empty list must be an empty capture.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sleuth.ast_search import compile_pattern

EXT = {
    "python": "py", "javascript": "js", "typescript": "ts", "tsx": "tsx", "go": "go",
    "rust": "rs", "java": "java", "c": "c", "cpp": "cpp", "csharp": "cs", "ruby": "rb",
    "php": "php", "kotlin": "kt", "swift": "swift", "bash": "sh", "lua": "lua",
}  # fmt: skip


def _ast_grep() -> str | None:
    local = Path(sys.executable).parent / "ast-grep"
    return str(local) if local.exists() else shutil.which("ast-grep")


AST_GREP = _ast_grep()
pytestmark = pytest.mark.skipif(AST_GREP is None, reason="ast-grep-cli (test extra) missing")

CALLS = "foo(1)\nfoo(a + b)\nfoo(1, 2)\nfoo(1, 2, 3)\nfoo()\nfoo(1,)\nfoo(foo(x))\nbar.foo(1)\n"
SUMS = "x + x\nx + y\nf(a) + f(a)\nf(a) + f( a )\nf(a) + f(b)\n"
DEFS = (
    "def a(x):\n    return x\n\ndef b(x) -> int:\n    return x\n\nasync def c(x):\n"
    "    return x\n\n@deco\ndef d(x):\n    return x\n\ndef e(x):  # comment\n    return x\n\n"
    "def f(x, /, *, y=1, **kw):\n    pass\n"
)
COMMENTED = "f(a, b)\nf(a, # note\n  b)\nf(b, a)\nf(a, b, c)\nf(a, b,)\n"
JS_COMMENTS = "f(/*c*/ a, b);\nf(a /*c*/, b);\nf(a, b /*c*/);\nf(g(x) /*d*/);\nf(/*c*/ g(x));\n"
JS_CLASS = "class A {\n  a = 123\n  m() { x = 1 }\n}\nz = 3\n"

# (id, lang, pattern, source, extra CLI flags / compile options)
CASES: list[tuple[str, str, str, str, dict[str, str]]] = [
    ("py-single", "python", "foo($A)", CALLS, {}),
    ("py-multi-punct", "python", "foo($$$ARGS)", CALLS, {}),
    ("py-lazy-no-backtrack", "python", "foo($$$A, $B, 3)", CALLS, {}),
    ("py-multi-drops-comma", "python", "foo($$$A, 3)", CALLS, {}),
    ("py-repeated", "python", "$A + $A", SUMS, {}),
    ("py-anonymous", "python", "$_ + $_", SUMS, {}),
    ("py-def-trailing-comment", "python", "def $F($$$A): $$$B", DEFS, {}),
    ("py-trailing-children", "python", "$X: int", 'a: int = 5\nb: int\nc: str = ""\n', {}),
    ("py-comment-in-call", "python", "f(a, b)", COMMENTED, {}),
    ("py-cst", "python", "f(a, b)", COMMENTED, {"strictness": "cst"}),
    ("py-ast", "python", "f(a, b)", COMMENTED, {"strictness": "ast"}),
    ("py-relaxed", "python", "f(a, b)", COMMENTED, {"strictness": "relaxed"}),
    (
        "py-signature",
        "python",
        "foo(1)",
        "foo(1)\nfoo(2)\nfoo(1,)\nfoo(1, 2)\n",
        {"strictness": "signature"},
    ),
    ("py-selector-pair", "python", "{$K: $V}", 'd = {"a": 1, "b": g(2)}\n', {"selector": "pair"}),
    ("py-if-swallows-else", "python", "if $C: $$$B", "if x:\n    pass\nelse:\n    y = 2\n", {}),
    ("py-keyword-leaf", "python", "return", "def f():\n    return 1\n", {}),
    ("py-string-content", "python", '"$A"', "d = {\"k\": 1}\ns = '$A'\n", {}),
    (
        "py-attribute-chain",
        "python",
        "$OBJ.objects.filter($$$)",
        "qs = User.objects.filter(a=1).exclude(b=2)\nx = objects.filter(1)\n",
        {},
    ),
    ("py-nested", "python", "foo($A)", "foo(foo(foo(1)))\n", {}),
    (
        "py-multi-middle",
        "python",
        "print($$$A, end=$E)",
        "print(1, 2, end='')\nprint(end='')\nprint(x, sep=1)\n",
        {},
    ),
    (
        "js-selector-field",
        "javascript",
        "class $C { $F = $V }",
        JS_CLASS,
        {"selector": "field_definition"},
    ),
    ("js-assignment", "javascript", "$F = $V", JS_CLASS, {}),
    ("js-comments-smart", "javascript", "f($A, $B)", JS_COMMENTS, {}),
    ("js-comments-nested-call", "javascript", "f(g(x))", JS_COMMENTS, {}),
    ("js-comments-ast", "javascript", "f(a, b)", JS_COMMENTS, {"strictness": "ast"}),
    ("js-comments-relaxed", "javascript", "f($A, $B)", JS_COMMENTS, {"strictness": "relaxed"}),
    (
        "js-multi-args",
        "javascript",
        "console.log($$$ARGS)",
        "console.log();\nconsole.log(a, 'b', ...c);\nconsole.log(console.log(1));\n",
        {},
    ),
    ("js-repeated-unequal", "javascript", "$A === $A", "a === a;\na === b;\nx.y === x.y;\n", {}),
    (
        "ts-function",
        "typescript",
        "function $F($$$P): $T { $$$B }",
        "function f(a: number): string { return '' }\nfunction g() { }\nfunction h(): void {}\n",
        {},
    ),
    ("tsx-element", "tsx", "<$T $$$A />", "const x = <Foo a={1} b />;\nconst y = <br />;\n", {}),
    (
        "go-func",
        "go",
        "func $F($$$P) $R { $$$B }",
        "package m\nfunc a(x int) int { return x }\nfunc b() { }\nfunc c() error { return nil }\n",
        {},
    ),
    (
        "rust-unwrap",
        "rust",
        "$A.unwrap()",
        "fn f() { let x = a.unwrap(); b.c().unwrap(); d.unwrap_or(1); }\n",
        {},
    ),
    (
        "rust-fn",
        "rust",
        "fn $F($$$P) -> $R { $$$B }",
        "fn f(a: i32) -> i32 { a }\nfn g() {}\nfn h() -> () { }\n",
        {},
    ),
    (
        "java-call",
        "java",
        "System.out.println($A)",
        "class A { void f() { System.out.println(1); System.out.println(); "
        "System.err.println(2); } }\n",
        {},
    ),
    ("c-field", "c", "$A->$B", "int f(struct s *p) { return p->x + p->y->z; }\n", {}),
    (
        "cpp-method",
        "cpp",
        "$A.push_back($B)",
        "void f() { v.push_back(1); w->push_back(2); v.push_back(g(3)); }\n",
        {},
    ),
    (
        "cpp-new",
        "cpp",
        "new $T($$$A)",
        "void f() { auto p = new Foo(1, 2); auto q = new Bar(); }\n",
        {},
    ),
    (
        "csharp-call",
        "csharp",
        "Console.WriteLine($$$A)",
        "class A { void F() { Console.WriteLine(1, 2); Console.WriteLine(); } }\n",
        {},
    ),
    ("ruby-call", "ruby", "puts $A", "puts 1\nputs foo(2)\nprint 3\n", {}),
    ("kotlin-call", "kotlin", "println($A)", "fun main() { println(1); println(a + b) }\n", {}),
    ("lua-call", "lua", "print($A)", "print(1)\nprint(a, b)\nlocal x = print(f(2))\n", {}),
    ("php-call", "php", "foo($A)", "<?php\nfoo(1);\nfoo($x);\nbar(2);\n", {}),
]


def _oracle(tmp_path: Path, lang: str, pattern: str, source: str, opts: dict[str, str]) -> Any:
    path = tmp_path / f"case.{EXT[lang]}"
    path.write_text(source)
    cmd = [str(AST_GREP), "run", "-p", pattern, "-l", lang, "--json=compact"]
    for key, value in opts.items():
        cmd += [f"--{key}", value]
    proc = subprocess.run(cmd + [str(path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout or "[]")


def _expected(found: Any) -> list[tuple[int, int, dict[str, tuple[int, int, int]]]]:
    out = []
    for m in found:
        caps: dict[str, tuple[int, int, int]] = {}
        meta = m.get("metaVariables", {})
        for name, cap in meta.get("single", {}).items():
            off = cap["range"]["byteOffset"]
            caps[name] = (1, off["start"], off["end"])
        for name, nodes in meta.get("multi", {}).items():
            if nodes:
                caps[name] = (-1, nodes[0]["range"]["byteOffset"]["start"],
                              nodes[-1]["range"]["byteOffset"]["end"])  # fmt: skip
            else:
                caps[name] = (0, -1, -1)
        off = m["range"]["byteOffset"]
        out.append((off["start"], off["end"], caps))
    return out


@pytest.mark.parametrize(("lang", "pattern", "source", "opts"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])  # fmt: skip
def test_matches_ast_grep(
    tmp_path: Path, lang: str, pattern: str, source: str, opts: dict[str, str]
) -> None:
    expected = _expected(_oracle(tmp_path, lang, pattern, source, opts))
    compiled = compile_pattern(pattern, lang, **opts)  # type: ignore[arg-type]
    got = []
    for m in compiled.find(source.encode()):
        caps: dict[str, tuple[int, int, int]] = {}
        for name, cap in m.captures.items():
            if cap.nodes == 0:
                caps[name] = (0, -1, -1)
            else:
                kind = 1 if name in _single_names(expected) else -1
                caps[name] = (kind, cap.start_byte, cap.end_byte)
        got.append((m.start_byte, m.end_byte, caps))
    assert got == expected


def _single_names(expected: list[tuple[int, int, dict[str, tuple[int, int, int]]]]) -> set[str]:
    return {name for _, _, caps in expected for name, cap in caps.items() if cap[0] == 1}


def test_suite_is_broad() -> None:
    assert len(CASES) >= 25
    assert len({c[1] for c in CASES}) >= 6
    flags = {v for c in CASES for v in c[4].values()}
    assert {"cst", "ast", "relaxed", "signature"} <= flags
    assert any("selector" in c[4] for c in CASES)
