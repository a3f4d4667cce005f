"""Per-file facts taken from bytes (receivers, aliases, signatures) and module paths."""

from __future__ import annotations

import pytest

from sleuth.graph.modules import ModuleIndex, provided_keys, python_module_of
from sleuth.graph.records import make_record, record_from_json, record_to_json
from sleuth.graph.source_facts import receiver_of, signature_of
from sleuth.model import SymbolRef
from tests.graph.fixtures import py_tags
from tests.graph.project import PY


def _ref(src: bytes, name: str, kind: str = "call") -> SymbolRef:
    at = src.index(name.encode())
    return SymbolRef(name, kind, "x", at, at + len(name), 1)


@pytest.mark.parametrize(
    ("src", "name", "kind", "expected"),
    [
        (b"m()", "m", "call", None),
        (b"self.m()", "m", "call", "self"),
        (b"this?.m()", "m", "call", "this"),
        (b"a.b.c()", "c", "call", "a.b"),
        (b"super().save()", "save", "call", "super()"),
        (b"f().g()", "g", "call", "?"),
        (b"x[0].y()", "y", "call", "?"),
        (b"obj\n    .chain()", "chain", "call", "obj"),
        (b"Foo::bar()", "bar", "call", "Foo"),
        (b"from x import y", "y", "import", None),
        (b"import pkg.mod as m", "pkg.mod", "import", "m"),
        (b"from x import y as z", "y", "import", "z"),
        (b'import { a as b } from "./m"', "a", "import", "b"),
        (b'import * as ns from "../n"', "../n", "import", "ns"),
        (b'const r = require("./r")', "./r", "import", "r"),
    ],
)
def test_receivers_and_aliases(src: bytes, name: str, kind: str, expected: str | None) -> None:
    assert receiver_of(src, _ref(src, name, kind)) == expected


def test_signature_is_the_first_line_past_decorators() -> None:
    src = b"class A:\n    @property\n    @cached\n    def name(self) -> str:\n        return 'a'\n"
    start = src.index(b"@property")
    assert signature_of(src, start, len(src)) == "def name(self) -> str:"
    assert signature_of(src, 0, len(src)) == "class A:"


def test_record_json_round_trip() -> None:
    text = PY["pkg/models.py"]
    rec = make_record(py_tags("pkg/models.py", text), text.encode(), "s1")
    assert record_from_json(record_to_json(rec)) == rec
    assert rec.signatures[0] == "class Base:"


def test_python_module_paths() -> None:
    assert python_module_of("a/b/c.py") == "a.b.c"
    assert python_module_of("a/b/__init__.py") == "a.b"
    assert python_module_of("a/my-dir/c.py") is None
    assert provided_keys("src/pkg/mod.py") == {
        "file:src/pkg/mod.py",
        "py:mod",
        "py:pkg.mod",
        "py:src.pkg.mod",
    }


def test_module_resolution_rules() -> None:
    idx = ModuleIndex()
    for p in [
        "pkg/__init__.py",
        "pkg/mod.py",
        "pkg/sub/__init__.py",
        "web/src/a.ts",
        "web/src/lib/index.ts",
        "web/src/b.js",
        "src/tool/__init__.py",
        "src/tool/x.py",
    ]:
        idx.add(p)
    notes: list[str] = []
    r = idx.resolve
    assert r("main.py", "python", "pkg.mod", notes.append) == "pkg/mod.py"
    assert r("pkg/sub/__init__.py", "python", "..mod", notes.append) == "pkg/mod.py"
    assert r("pkg/mod.py", "python", ".", notes.append) == "pkg/__init__.py"
    assert r("pkg/mod.py", "python", ".sub", notes.append) == "pkg/sub/__init__.py"
    assert r("tests/t.py", "python", "tool.x", notes.append) == "src/tool/x.py"
    assert r("main.py", "python", "os.path", notes.append) is None
    assert r("web/src/a.ts", "js", "./lib", notes.append) == "web/src/lib/index.ts"
    assert r("web/src/lib/index.ts", "js", "../b.js", notes.append) == "web/src/b.js"
    assert r("web/src/lib/index.ts", "js", "../a.js", notes.append) == "web/src/a.ts"
    assert r("web/src/a.ts", "js", "react", notes.append) is None
    assert "py:pkg.mod" in notes and "file:web/src/lib/index.ts" in notes
    idx.remove("pkg/mod.py")
    assert r("main.py", "python", "pkg.mod", notes.append) is None
