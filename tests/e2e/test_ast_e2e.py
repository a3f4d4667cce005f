"""Structural search (``ast:``) through the real ``sleuth`` CLI, one subprocess per call.

Covers docs/json.md#search (the JSON answer), docs/errors.md (error codes and exit codes),
docs/references.md (capture references as read targets and as search scopes) and
docs/query.md#ast-structural-patterns (patterns, ``--lang``, ``--selector``,
``--strictness``, the C code context, files with syntax errors, big inputs). Where the answer
is ast-grep's by the parity rule, ``ast-grep run`` (ast-grep-cli 0.51.1) is asked on the same
file and the byte ranges are compared.

Every call runs under a subprocess timeout (``TIMEOUT``): a hang or a quadratic blow-up fails
the test instead of blocking the suite; no test asserts on elapsed time. Every call also checks
that nothing crashed (no Python traceback on stderr).
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import tool

TIMEOUT = 120  # seconds per CLI call


@dataclass
class Run:
    """One finished CLI call: exit code, parsed JSON stdout and raw stderr."""

    code: int
    data: dict[str, Any]
    stderr: str


def sleuth(root: Path, *args: str) -> Run:
    """``sleuth ARGS --root ROOT --json``; fails on a timeout, a traceback or non-JSON output."""
    cmd = [tool("sleuth"), *args, "--root", str(root), "--json"]
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, encoding="utf-8", timeout=TIMEOUT, check=False
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"sleuth did not answer within {TIMEOUT} s: {' '.join(cmd)[:300]}")
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    try:
        data = json.loads(proc.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"not JSON (exit {proc.returncode}): {proc.stdout[:500]!r} {proc.stderr[:500]}")
    assert isinstance(data, dict)
    return Run(proc.returncode, data, proc.stderr)


def search(root: Path, pattern: str, *args: str) -> dict[str, Any]:
    """A successful ``sleuth search 'ast:PATTERN' ARGS`` (exit 0), as JSON."""
    run = sleuth(root, "search", f"ast:{pattern}", *args)
    assert run.code == 0, (run.code, run.data, run.stderr)
    assert run.data["mode"] == "ast" and run.data["complete"] is True, run.data
    return run.data


def error(run: Run, code: str, exit_code: int = 2) -> dict[str, Any]:
    """The error object (docs/errors.md) of a failed call, checked for its code and exit code."""
    assert run.code == exit_code, (run.code, run.data, run.stderr)
    err = run.data.get("error")
    assert isinstance(err, dict), run.data
    assert err["code"] == code, err
    assert err["message"], err
    return err


def read_text(root: Path, ref: str) -> list[dict[str, Any]]:
    """The ranges ``sleuth read REF`` answers."""
    run = sleuth(root, "read", ref)
    assert run.code == 0, (run.data, run.stderr)
    ranges: list[dict[str, Any]] = run.data["ranges"]
    return ranges


def ast_grep(root: Path, pattern: str, lang: str, *args: str) -> set[tuple[str, int, int]]:
    """``ast-grep run`` on ``root``: the set of (path, start_byte, end_byte) it reports."""
    cmd = [tool("ast-grep"), "run", "-p", pattern, "-l", lang, "--json=stream", *args, "."]
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode in (0, 1), proc.stderr
    out: set[tuple[str, int, int]] = set()
    for line in proc.stdout.splitlines():
        item = json.loads(line)
        span = item["range"]["byteOffset"]
        out.add((item["file"].removeprefix("./"), span["start"], span["end"]))
    return out


def spans(data: dict[str, Any]) -> set[tuple[str, int, int]]:
    return {(m["path"], m["start_byte"], m["end_byte"]) for m in data["matches"]}


def make(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "ws"
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root


PY_APP = """\
def first(a, b):
    g(1, "x, y", [2, 3])
    g()
    return a


def second(c):
    return c
"""


# -- the JSON answer ------------------------------------------------------------------------------


def test_search_json_with_captures(tmp_path: Path) -> None:
    root = make(tmp_path, {"app.py": PY_APP, "web/app.js": "g(1, 2);\n"})
    data = search(root, "g($$$A)", "--lang", "python")
    assert data["query"] == "ast:g($$$A)" and data["total"] == 2
    source = (root / "app.py").read_bytes()
    first, empty = data["matches"]
    assert first["path"] == "app.py" and (first["line"], first["column"]) == (2, 5)
    assert source[first["start_byte"] : first["end_byte"]] == b'g(1, "x, y", [2, 3])'
    assert first["captures"]["A"]["text"] == '1, "x, y", [2, 3]'
    assert first["captures"]["A"]["nodes"] == 3
    assert first["captures"]["A"]["ref"].startswith("RESULT#")
    assert first["ref"]["match"].endswith(":1:match")
    assert empty["captures"]["A"] == {**empty["captures"]["A"], "text": "", "nodes": 0}
    assert spans(data) == ast_grep(root, "g($$$A)", "python")


def test_without_lang_each_language_gets_its_own_parse(tmp_path: Path) -> None:
    root = make(tmp_path, {"app.py": PY_APP, "web/app.js": "g(1, 2);\nh(g(3));\n"})
    data = search(root, "g($$$A)")
    assert [(m["path"], m["line"]) for m in data["matches"]] == [
        ("app.py", 2),
        ("app.py", 3),
        ("web/app.js", 1),
        ("web/app.js", 2),
    ]


def test_pages_through_the_cli(tmp_path: Path) -> None:
    body = "".join(f"x{i} = foo({i})\n" for i in range(7))
    root = make(tmp_path, {"a.py": body})
    seen: list[int] = []
    cursor: str | None = None
    for _ in range(10):
        extra = ["--cursor", cursor] if cursor else []
        data = search(root, "foo($N)", "--lang", "py", "--limit", "3", *extra)
        seen += [m["line"] for m in data["matches"]]
        cursor = data["next_cursor"]
        if cursor is None:
            break
    assert seen == list(range(1, 8))


# -- capture references (docs/references.md#captures) ---------------------------------------------


def test_read_capture_refs_give_the_captured_text(tmp_path: Path) -> None:
    root = make(tmp_path, {"app.py": PY_APP})
    data = search(root, "g($$$A)", "--lang", "python")
    multi, empty = (m["captures"]["A"] for m in data["matches"])

    [got] = read_text(root, multi["ref"])
    assert got["text"] == '1, "x, y", [2, 3]'  # commas, quotes and brackets kept
    assert got["path"] == "app.py" and got["line"] == 2
    source = (root / "app.py").read_bytes()
    assert source[got["start_byte"] : got["end_byte"]] == b'1, "x, y", [2, 3]'

    ranges = read_text(root, empty["ref"])
    assert [r["text"] for r in ranges] in ([], [""])  # an empty $$$ selects nothing
    for r in ranges:
        assert r["start_byte"] == r["end_byte"] == source.index(b"g()") + 2


def test_read_single_and_body_captures(tmp_path: Path) -> None:
    root = make(tmp_path, {"app.py": PY_APP})
    data = search(root, "def $F($$$A): $$$B", "--lang", "python")
    first = data["matches"][0]["captures"]
    assert [r["text"] for r in read_text(root, first["F"]["ref"])] == ["first"]
    assert [r["text"] for r in read_text(root, first["A"]["ref"])] == ["a, b"]
    body = '    g(1, "x, y", [2, 3])\n    g()\n    return a'.lstrip()
    assert [r["text"] for r in read_text(root, first["B"]["ref"])] == [body]


def test_search_inside_a_capture_ref(tmp_path: Path) -> None:
    root = make(tmp_path, {"app.py": PY_APP})
    data = search(root, "def $F($$$A): $$$B", "--lang", "python")
    assert [m["captures"]["F"]["text"] for m in data["matches"]] == ["first", "second"]
    body_ref = data["matches"][0]["captures"]["B"]["ref"]

    text = sleuth(root, "search", "return", "--path", body_ref)
    assert text.code == 0, text.data
    assert [(m["line"], m["column"]) for m in text.data["matches"]] == [(4, 5)]  # not line 8

    inner = search(root, "g($$$X)", "--lang", "python", "--path", body_ref)
    assert [m["line"] for m in inner["matches"]] == [2, 3]
    args_ref = data["matches"][0]["captures"]["A"]["ref"]
    nothing = search(root, "g($$$X)", "--lang", "python", "--path", args_ref)
    assert nothing["matches"] == [] and nothing["total"] == 0


# -- invalid patterns and languages (docs/errors.md, docs/query.md#languages) ---------------------


def test_incomplete_python_pattern_is_invalid_query_with_position(tmp_path: Path) -> None:
    # ``class $C`` is read as ast-grep reads it now (tests/e2e/test_ast_recovery.py); two nodes
    # are refused, as ast-grep refuses them
    root = make(tmp_path, {"app.py": "class Foo(Base):\n    x = 1\n"})
    err = error(sleuth(root, "search", "ast:$A $B", "--lang", "python"), "invalid_query")
    position = err["details"].get("position")
    assert isinstance(position, int) and 0 <= position <= len("$A $B"), err


def test_js_fragment_is_invalid_query_and_hints_a_selector(tmp_path: Path) -> None:
    root = make(tmp_path, {"a.js": 'const d = {"a": 1};\n'})
    err = error(sleuth(root, "search", 'ast:"a": $V', "--lang", "javascript"), "invalid_query")
    assert isinstance(err["details"].get("position"), int), err
    assert "selector" in err["message"], err


def test_unknown_language_is_unsupported(tmp_path: Path) -> None:
    root = make(tmp_path, {"app.py": PY_APP})
    err = error(sleuth(root, "search", "ast:foo($A)", "--lang", "cobol"), "unsupported")
    assert "cobol" in err["message"]


# -- C: calls that ast-grep reads as macro types ----------------------------------------------------

DRIVER_C = """\
#include <linux/slab.h>

static int probe(struct device *dev)
{
\tstruct priv *p = kmalloc(sizeof(*p), GFP_KERNEL);
\tchar *buf;

\tif (!p)
\t\treturn -ENOMEM;
\tbuf = kmalloc(64, GFP_ATOMIC);
\tkfree(buf);
\tkfree(p);
\treturn 0;
}
"""


def test_c_call_pattern_finds_calls_ast_grep_misses(tmp_path: Path) -> None:
    root = make(tmp_path, {"drv.c": DRIVER_C})
    data = search(root, "kmalloc($$$A)", "--lang", "c")
    got = [(m["line"], m["captures"]["A"]["text"]) for m in data["matches"]]
    assert got == [(5, "sizeof(*p), GFP_KERNEL"), (10, "64, GFP_ATOMIC")]
    source = (root / "drv.c").read_bytes()
    assert [source[m["start_byte"] : m["end_byte"]] for m in data["matches"]] == [
        b"kmalloc(sizeof(*p), GFP_KERNEL)",
        b"kmalloc(64, GFP_ATOMIC)",
    ]
    # ast-grep parses the top-level snippet as a macro type and finds nothing
    # (docs/query.md#ast-structural-patterns).
    assert ast_grep(root, "kmalloc($$$A)", "c") == set()
    freed = search(root, "kfree($A)", "--lang", "c")
    assert [m["captures"]["A"]["text"] for m in freed["matches"]] == ["buf", "p"]


# -- robustness ----------------------------------------------------------------------------------


def test_file_with_syntax_errors_still_matches_its_valid_parts(tmp_path: Path) -> None:
    broken = (
        "def ok1():\n    foo(1)\n\n"
        "def broken(:\n    foo(2)\n\n"
        "class C:\n    def m(self):\n        foo(3)\n"
    )
    root = make(tmp_path, {"bad.py": broken})
    data = search(root, "foo($A)", "--lang", "python")
    lines = [m["line"] for m in data["matches"]]
    assert 2 in lines and 9 in lines, data["matches"]
    assert spans(data) == ast_grep(root, "foo($A)", "python")


def test_many_matches_with_captures_in_one_file(tmp_path: Path) -> None:
    """3,000 matches with two captures each (6,000 capture references) in one file."""
    root = make(tmp_path, {"a.py": "".join(f"f(a{i}, b{i})\n" for i in range(3000))})
    data = search(root, "f($A, $B)", "--lang", "python", "--limit", "2")
    assert data["total"] in (3000, None)
    assert [m["line"] for m in data["matches"]] == [1, 2], data["matches"]
    assert data["next_cursor"] is not None
    assert [m["captures"]["B"]["text"] for m in data["matches"]] == ["b0", "b1"]
    [got] = read_text(root, data["matches"][1]["captures"]["A"]["ref"])
    assert got["text"] == "a1"


def _minified_js(target: int) -> tuple[str, int]:
    """One line of about ``target`` bytes of minified JavaScript; also the function count."""
    parts: list[str] = []
    size = count = 0
    while size < target:
        chunk = (
            f"function f{count}(a,b){{if(a>b){{return g(a,b+{count})}}"
            f"var c={{k{count}:a,v:[b,{count}]}};return c.k{count}+h(c)}};"
        )
        parts.append(chunk)
        size += len(chunk)
        count += 1
    return "".join(parts), count


@pytest.fixture(scope="module")
def minified_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace holding one 5 MB single-line minified JavaScript file."""
    root = tmp_path_factory.mktemp("minified")
    text, _ = _minified_js(5_000_000)
    (root / "app.min.js").write_text(text, encoding="utf-8")
    return root


def test_minified_5mb_rare_pattern(minified_root: Path) -> None:
    data = search(minified_root, "function f4242($A, $B) { $$$ }", "--lang", "js")
    [match] = data["matches"]
    source = (minified_root / "app.min.js").read_bytes()
    assert source[match["start_byte"] : match["end_byte"]].startswith(b"function f4242(a,b){")
    assert match["line"] == 1 and match["column"] == match["start_byte"] + 1  # ASCII
    assert len(match["text"]) <= 256


def test_minified_5mb_frequent_pattern(minified_root: Path) -> None:
    """Tens of thousands of matches on one 5 MB line: the first page comes back in bounded time."""
    _, functions = _minified_js(5_000_000)
    data = search(minified_root, "g($A, $B)", "--lang", "js", "--limit", "5")
    assert len(data["matches"]) == 5 and data["next_cursor"]
    known = data["total"] if data["total"] is not None else data["total_at_least"]
    assert 5 <= known <= functions
    if data["total"] is not None:
        assert data["total"] == functions
    assert all(len(m["text"]) <= 256 for m in data["matches"])
    assert [m["captures"]["B"]["text"] for m in data["matches"]] == [f"b+{i}" for i in range(5)]


def test_100kb_pattern_gives_a_clear_answer(tmp_path: Path) -> None:
    root = make(tmp_path, {"a.js": "foo(a0, a1);\n"})
    pattern = "foo(" + ", ".join(f"a{i}" for i in range(16_000)) + ")"
    assert len(pattern) > 100_000
    run = sleuth(root, "search", f"ast:{pattern}", "--lang", "javascript")
    err = error(run, "invalid_query")
    assert "too long" in err["message"] and "16384" in err["message"], err


def test_big_pattern_under_the_cap_is_searched(tmp_path: Path) -> None:
    args = ", ".join(f"a{i}" for i in range(2_000))
    root = make(tmp_path, {"a.js": f"foo(a0, a1);\nfoo({args});\n"})
    pattern = f"foo({args})"
    assert len(pattern) > 10_000
    data = search(root, pattern, "--lang", "javascript")
    assert [m["line"] for m in data["matches"]] == [2]
    assert spans(data) == ast_grep(root, pattern, "javascript")


# -- options pass through (docs/query.md#strictness-and-selector) ----------------------------------


@pytest.mark.parametrize("strictness", ["cst", "smart", "ast", "relaxed", "signature"])
def test_strictness_passes_through(tmp_path: Path, strictness: str) -> None:
    source = "f(a, b)\nf(a, # note\n  b)\nf(b, a)\nf(a, b, c)\nf(a, b,)\n"
    root = make(tmp_path, {"s.py": source})
    data = search(root, "f(a, b)", "--lang", "python", "--strictness", strictness)
    expected = ast_grep(root, "f(a, b)", "python", "--strictness", strictness)
    assert spans(data) == expected
    lines = [m["line"] for m in data["matches"]]
    if strictness == "cst":
        assert lines == [1]  # no comment, no trailing comma, no extra argument
    if strictness == "signature":
        assert 4 in lines  # f(b, a): only the kinds are compared


def test_selector_passes_through(tmp_path: Path) -> None:
    root = make(tmp_path, {"o.js": 'const d = {a: 1, "b": g(2)};\nfoo({x: y});\n'})
    data = search(root, "{$K: $V}", "--lang", "javascript", "--selector", "pair")
    caps = [(m["captures"]["K"]["text"], m["captures"]["V"]["text"]) for m in data["matches"]]
    assert caps == [("a", "1"), ('"b"', "g(2)"), ("x", "y")]
    assert spans(data) == ast_grep(root, "{$K: $V}", "javascript", "--selector", "pair")
    whole = search(root, "{$K: $V}", "--lang", "javascript")  # no selector: the objects
    assert spans(whole) == ast_grep(root, "{$K: $V}", "javascript")
    assert spans(whole) != spans(data)


def test_unknown_selector_is_invalid_query(tmp_path: Path) -> None:
    root = make(tmp_path, {"o.js": "const d = {a: 1};\n"})
    run = sleuth(root, "search", "ast:{$K: $V}", "--lang", "js", "--selector", "no_such_kind")
    error(run, "invalid_query")
