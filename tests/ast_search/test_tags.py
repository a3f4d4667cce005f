"""The syntactic symbol extractor: tags.scm definitions, references, imports, base classes.

Each fixture carries its expected definitions ``(name, kind, container, line)`` and references
``(name, kind, line, enclosing qualified name[, module])`` beside it, compared exactly.
"""

from __future__ import annotations

import pytest

from sleuth.ast_search.tags import MAX_TAGS_BYTES, FileTags, extract_tags, tags_supported
from sleuth.ast_search.trees import parse
from sleuth.model import symbol_id

DefRow = tuple[str, str, str, int]
RefRow = tuple[object, ...]

PY_SOURCE = """\
import os.path
from pkg.mod import f, g as h
from . import sibling

LIMIT = 10


class Base:
    pass


class Child(Base, mixins.Loggable):
    def run(self, cb=f):
        def inner():
            return helper(cb)

        register(inner)
        return self.done()

    @property
    def done(self):
        return os.path.join("a")


class Other:
    def run(self):
        pass


def main():
    Child().run()
"""
PY_DEFS: list[DefRow] = [
    ("LIMIT", "constant", "", 5),
    ("Base", "class", "", 8),
    ("Child", "class", "", 12),
    ("run", "method", "Child", 13),
    ("inner", "function", "Child.run", 14),
    ("done", "method", "Child", 21),
    ("Other", "class", "", 25),
    ("run", "method", "Other", 26),
    ("main", "function", "", 30),
]
PY_REFS: list[RefRow] = [
    ("os.path", "import", 1, None, "os.path"),
    ("f", "import", 2, None, "pkg.mod"),
    ("g", "import", 2, None, "pkg.mod"),
    ("sibling", "import", 3, None, "."),
    ("Base", "inherit", 12, "Child"),
    ("Loggable", "inherit", 12, "Child"),
    ("f", "reference", 13, "Child.run"),
    ("helper", "call", 15, "Child.run.inner"),
    ("cb", "reference", 15, "Child.run.inner"),
    ("register", "call", 17, "Child.run"),
    ("inner", "reference", 17, "Child.run"),
    ("done", "call", 18, "Child.run"),
    ("property", "reference", 20, "Child"),
    ("join", "call", 22, "Child.done"),
    ("Child", "call", 31, "main"),
    ("run", "call", 31, "main"),
]

TS_SOURCE = """\
import { f, g as h } from "./mod";
import * as ns from "lib";

interface Shape extends Named {
  area(): number;
}

export class Square extends Base implements Shape, ns.Printable {
  area(): number {
    return f(this.side);
  }
}

function build(): Square {
  const make = () => new Square();
  return make();
}
"""
TS_DEFS: list[DefRow] = [
    ("Shape", "interface", "", 4),
    ("area", "method", "Shape", 5),
    ("Square", "class", "", 8),
    ("area", "method", "Square", 9),
    ("build", "function", "", 14),
    ("make", "function", "build", 15),
]
TS_REFS: list[RefRow] = [
    ("f", "import", 1, None, "./mod"),
    ("g", "import", 1, None, "./mod"),
    ("lib", "import", 2, None, "lib"),
    ("Named", "inherit", 4, "Shape"),
    ("Base", "inherit", 8, "Square"),
    ("Shape", "inherit", 8, "Square"),
    ("Printable", "inherit", 8, "Square"),
    ("f", "call", 10, "Square.area"),
    ("Square", "reference", 14, "build"),
    ("Square", "reference", 15, "build.make"),
    ("make", "call", 16, "build"),
]

JS_SOURCE = """\
const fs = require("fs");
import { parse } from "./parser.js";

class Reader extends Base {
  read(path) {
    return parse(fs.readFileSync(path), onError);
  }
}

function onError(err) {
  console.log(err);
}
"""
JS_DEFS: list[DefRow] = [
    ("Reader", "class", "", 4),
    ("read", "method", "Reader", 5),
    ("onError", "function", "", 10),
]
JS_REFS: list[RefRow] = [
    ("fs", "import", 1, None, "fs"),
    ("parse", "import", 2, None, "./parser.js"),
    ("Base", "inherit", 4, "Reader"),
    ("parse", "call", 6, "Reader.read"),
    ("readFileSync", "call", 6, "Reader.read"),
    ("path", "reference", 6, "Reader.read"),
    ("onError", "reference", 6, "Reader.read"),
    ("log", "call", 11, "onError"),
    ("err", "reference", 11, "onError"),
]

GO_SOURCE = """\
package shapes

import "fmt"

type Square struct {
	side int
}

func (s *Square) Area() int {
	return s.side * s.side
}

func Describe(s *Square) string {
	return fmt.Sprintf("%d", s.Area())
}
"""
GO_DEFS: list[DefRow] = [
    ("Square", "type", "", 5),
    ("Area", "method", "Square", 9),
    ("Describe", "function", "", 13),
]
GO_REFS: list[RefRow] = [
    ("fmt", "import", 3, None, "fmt"),
    ("int", "reference", 6, "Square"),
    ("Square", "reference", 9, "Square.Area"),
    ("int", "reference", 9, "Square.Area"),
    ("Square", "reference", 13, "Describe"),
    ("string", "reference", 13, "Describe"),
    ("Sprintf", "call", 14, "Describe"),
    ("Area", "call", 14, "Describe"),
]

RUST_SOURCE = """\
use std::fmt::Display;

struct Point {
    x: i32,
}

impl Point {
    fn new(x: i32) -> Point {
        Point { x }
    }
}

fn main() {
    let p = Point::new(1);
    println!("{}", p.x);
}
"""
RUST_DEFS: list[DefRow] = [
    ("Point", "class", "", 3),
    ("new", "method", "Point", 8),
    ("main", "function", "", 13),
]
RUST_REFS: list[RefRow] = [
    ("Display", "import", 1, None, "std::fmt"),
    ("Point", "reference", 7, None),
    ("new", "call", 14, "main"),
    ("println", "call", 15, "main"),
]

JAVA_SOURCE = """\
import java.util.List;

public class Greeter extends Base implements Runnable {
    public void run() {
        greet("world");
    }

    private void greet(String who) {
        System.out.println(who);
    }
}
"""
JAVA_DEFS: list[DefRow] = [
    ("Greeter", "class", "", 3),
    ("run", "method", "Greeter", 4),
    ("greet", "method", "Greeter", 8),
]
JAVA_REFS: list[RefRow] = [
    ("List", "import", 1, None, "java.util"),
    ("Base", "inherit", 3, "Greeter"),
    ("Runnable", "inherit", 3, "Greeter"),
    ("greet", "call", 5, "Greeter.run"),
    ("println", "call", 9, "Greeter.greet"),
]

C_SOURCE = """\
#include <stdio.h>

struct point {
    int x;
};

static int square(int v) {
    return v * v;
}

int main(void) {
    printf("%d", square(3));
    return 0;
}
"""
C_DEFS: list[DefRow] = [
    ("point", "class", "", 3),
    ("square", "function", "", 7),
    ("main", "function", "", 11),
]
C_REFS: list[RefRow] = [
    ("stdio.h", "import", 1, None, "stdio.h"),
    ("printf", "call", 12, "main"),
    ("square", "call", 12, "main"),
]

CASES = [
    ("python", "src/x.py", PY_SOURCE, PY_DEFS, PY_REFS),
    ("typescript", "src/x.ts", TS_SOURCE, TS_DEFS, TS_REFS),
    ("javascript", "src/x.js", JS_SOURCE, JS_DEFS, JS_REFS),
    ("go", "src/x.go", GO_SOURCE, GO_DEFS, GO_REFS),
    ("rust", "src/x.rs", RUST_SOURCE, RUST_DEFS, RUST_REFS),
    ("java", "src/x.java", JAVA_SOURCE, JAVA_DEFS, JAVA_REFS),
    ("c", "src/x.c", C_SOURCE, C_DEFS, C_REFS),
]


def _rows(tags: FileTags) -> tuple[list[DefRow], list[RefRow]]:
    qualified = {d.id: d.qualified for d in tags.defs}
    defs = [(d.name, d.kind, d.container, d.line) for d in tags.defs]
    refs: list[RefRow] = []
    for r in tags.refs:
        enclosing = qualified[r.enclosing] if r.enclosing is not None else None
        row: RefRow = (r.name, r.kind, r.line, enclosing)
        refs.append((*row, r.module) if r.module is not None else row)
    return defs, refs


@pytest.mark.parametrize(
    ("lang", "path", "source", "defs", "refs"), CASES, ids=[c[0] for c in CASES]
)
def test_fixture_tags_exactly(
    lang: str, path: str, source: str, defs: list[DefRow], refs: list[RefRow]
) -> None:
    tags = extract_tags(path, source.encode(), lang)
    assert (tags.complete, tags.reason, tags.lang, tags.path) == (True, None, lang, path)
    got_defs, got_refs = _rows(tags)
    assert got_defs == defs
    assert got_refs == refs


@pytest.mark.parametrize(
    ("lang", "path", "source", "defs", "refs"), CASES, ids=[c[0] for c in CASES]
)
def test_ranges_ids_and_enclosing_are_consistent(
    lang: str, path: str, source: str, defs: list[DefRow], refs: list[RefRow]
) -> None:
    data = source.encode()
    tags = extract_tags(path, data, lang)
    ids = {d.id for d in tags.defs}
    for d in tags.defs:
        assert data[d.name_start : d.name_end].decode() == d.name
        assert d.start_byte <= d.name_start < d.name_end <= d.end_byte
        assert d.line == data.count(b"\n", 0, d.start_byte) + 1
        assert d.end_line == data.count(b"\n", 0, d.end_byte) + 1
        assert d.id == symbol_id(path, d.qualified, d.kind)
        assert d.path == path
    for r in tags.refs:
        assert r.enclosing is None or r.enclosing in ids
        assert r.line == data.count(b"\n", 0, r.start_byte) + 1
        assert r.path == path
    assert [r.start_byte for r in tags.refs] == sorted(r.start_byte for r in tags.refs)
    assert [d.start_byte for d in tags.defs] == sorted(d.start_byte for d in tags.defs)


def test_definition_range_is_the_whole_declaration() -> None:
    data = PY_SOURCE.encode()
    done = next(d for d in extract_tags("a.py", data, "python").defs if d.name == "done")
    assert data[done.start_byte : done.end_byte].startswith(b"def done(self):")
    assert data[done.start_byte : done.end_byte].endswith(b'return os.path.join("a")')
    assert (done.line, done.end_line) == (21, 22)
    # C: tags.scm tags the declarator; the range is widened to the whole definition
    c_data = C_SOURCE.encode()
    square = next(d for d in extract_tags("a.c", c_data, "c").defs if d.name == "square")
    text = c_data[square.start_byte : square.end_byte]
    assert text.startswith(b"static int square(int v) {") and text.endswith(b"}")


def test_ids_survive_edits_elsewhere_and_differ_per_class() -> None:
    before = extract_tags("pkg/a.py", PY_SOURCE.encode(), "python")
    edited = (
        "# a new comment\n\nimport sys\n" + PY_SOURCE + "\n\ndef later():\n    pass\n"
    ).encode()
    after = extract_tags("pkg/a.py", edited, "python")
    ids_before = {d.qualified: d.id for d in before.defs}
    ids_after = {d.qualified: d.id for d in after.defs}
    assert all(ids_after[q] == i for q, i in ids_before.items())
    assert [d.line + 3 for d in before.defs] == [d.line for d in after.defs][: len(before.defs)]
    runs = [d for d in before.defs if d.name == "run"]
    assert [(d.container, d.kind) for d in runs] == [("Child", "method"), ("Other", "method")]
    assert runs[0].id != runs[1].id
    # the id depends on the path
    assert extract_tags("pkg/b.py", PY_SOURCE.encode(), "python").defs[0].id != before.defs[0].id


def test_nested_functions_classes_and_methods() -> None:
    src = b"""\
def outer():
    def helper():
        pass
    class Local:
        def meth(self):
            def deep():
                pass
    return helper
"""
    defs = [(d.name, d.kind, d.container) for d in extract_tags("n.py", src, "python").defs]
    assert defs == [
        ("outer", "function", ""),
        ("helper", "function", "outer"),
        ("Local", "class", "outer"),
        ("meth", "method", "outer.Local"),
        ("deep", "function", "outer.Local.meth"),
    ]


def test_python_import_forms() -> None:
    src = b"import a.b as ab, c\nfrom ..rel.mod import x as y\nfrom z import *\n"
    refs = [(r.name, r.kind, r.module) for r in extract_tags("i.py", src, "python").refs]
    assert refs == [
        ("a.b", "import", "a.b"),
        ("c", "import", "c"),
        ("x", "import", "..rel.mod"),
        ("*", "import", "z"),
    ]


def test_typescript_import_and_heritage_forms() -> None:
    src = b"""\
import D from "d";
import "./side-effect";
import type { T } from "./types";
export { reexported } from "./re";
import legacy = require("legacy");
class A extends mod.Base<T> implements I<T> {}
"""
    refs = [(r.name, r.kind, r.module) for r in extract_tags("i.ts", src, "typescript").refs]
    assert refs == [
        ("D", "import", "d"),
        ("./side-effect", "import", "./side-effect"),
        ("T", "import", "./types"),
        ("reexported", "import", "./re"),
        ("legacy", "import", "legacy"),
        ("Base", "inherit", None),
        ("I", "inherit", None),
    ]


def test_language_without_rules_is_incomplete_with_a_reason() -> None:
    assert not tags_supported("bash") and not tags_supported("kotlin")
    assert not tags_supported("cobol")
    tags = extract_tags("run.sh", b"f() { echo hi; }\nf\n", "bash")
    assert (tags.complete, tags.reason, tags.defs, tags.refs) == (
        False,
        "no tags rules for bash",
        [],
        [],
    )
    assert extract_tags("x.cob", b"", "cobol").reason == "no tags rules for cobol"


@pytest.mark.parametrize(
    ("lang", "source", "expected"),
    [
        ("py", b"def f(): pass\n", ("f", "function", "")),
        ("tsx", b"function App() { return <div/>; }\n", ("App", "function", "")),
        ("cpp", b"class B { int k() { return 1; } };\n", ("k", "method", "B")),
        ("csharp", b"class A { void M() {} }\n", ("M", "method", "A")),
        ("ruby", b"class A\n  def m; end\nend\n", ("m", "method", "A")),
        ("php", b"<?php\nclass A { function m() {} }\n", ("m", "method", "A")),
        ("lua", b"function M.f() end\n", ("f", "function", "")),
        ("swift", b"class A { func m() {} }\n", ("m", "method", "A")),
    ],
)
def test_other_languages_have_rules(lang: str, source: bytes, expected: tuple[str, ...]) -> None:
    assert tags_supported(lang)
    tags = extract_tags("f", source, lang)
    assert tags.complete
    assert expected in [(d.name, d.kind, d.container) for d in tags.defs]


def test_syntax_errors_still_yield_the_valid_definitions() -> None:
    src = b"""\
def good():
    return 1

def broken():
    x = = 2

class Fine:
    def ok(self):
        call()
"""
    tags = extract_tags("e.py", src, "python")
    assert parse("python", src).root_node.has_error
    assert tags.complete and tags.reason is None
    defs = [(d.name, d.kind, d.container) for d in tags.defs]
    assert ("good", "function", "") in defs
    assert ("Fine", "class", "") in defs and ("ok", "method", "Fine") in defs
    assert ("call", "call") in [(r.name, r.kind) for r in tags.refs]


def test_a_given_tree_is_used_and_gives_the_same_tags() -> None:
    data = TS_SOURCE.encode()
    tree = parse("typescript", data)
    assert extract_tags("a.ts", data, "ts", tree) == extract_tags("a.ts", data, "typescript")


def test_large_files_are_refused_without_parsing() -> None:
    big = b"x = f(1)\n" * (MAX_TAGS_BYTES // 9 + 10)
    tags = extract_tags("gen.py", big, "python")
    assert not tags.complete and tags.defs == [] and tags.refs == []
    assert tags.reason is not None and tags.reason.startswith("too large for tags")
    small = extract_tags("s.py", b"def f(): pass\n", "python", max_bytes=4)
    assert not small.complete
