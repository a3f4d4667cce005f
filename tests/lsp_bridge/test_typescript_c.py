"""TypeScript 7's native server (tsconfig project) and clangd without a compile database."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sleuth.lsp_bridge import ServerPool
from sleuth.workspace import Workspace

from .conftest import apply_edits, occurrences, offset_of, require_server, texts, write_tree

TS = {
    "tsconfig.json": '{"compilerOptions": {"target": "es2020", "module": "commonjs", '
    '"strict": true}, "include": ["src"]}\n',
    "src/shapes.ts": (
        "export class Circle {\n"
        "  constructor(public radius: number) {}\n"
        "  area(): number {\n"
        "    return Math.PI * this.radius * this.radius;\n"
        "  }\n"
        "}\n\n"
        "export function makeCircle(r: number): Circle {\n"
        "  return new Circle(r);\n"
        "}\n"
    ),
    "src/main.ts": (
        "// ünïcode 😀 line\n"
        'import { makeCircle, Circle } from "./shapes";\n\n'
        "const c: Circle = makeCircle(2); /* 😀 */ const d = makeCircle(3);\n"
        "console.log(c.area() + d.area());\n"
    ),
    "src/other.ts": (
        "function local(): number {\n"
        "  const makeCircle = 4;\n"
        "  return makeCircle;\n"
        "}\n"
        "export const x = local();\n"
    ),
}

C = {
    "include/strbuf.h": (
        "#ifndef STRBUF_H\n#define STRBUF_H\n"
        "typedef struct { char *data; int len; } strbuf;\n"
        "void strbuf_append(strbuf *sb, const char *s);\n"
        "#endif\n"
    ),
    "src/strbuf.c": (
        '#include "strbuf.h"\n#include <string.h>\n'
        "void strbuf_append(strbuf *sb, const char *s) {\n"
        "  sb->len += (int)strlen(s);\n"
        "}\n"
    ),
    "src/main.c": (
        "/* ünï 😀 */\n"
        '#include "strbuf.h"\n'
        "int main(void) {\n"
        "  strbuf sb = {0, 0};\n"
        '  strbuf_append(&sb, "a"); /* 😀 */ strbuf_append(&sb, "b");\n'
        "  return sb.len;\n"
        "}\n"
    ),
    "src/util.c": (
        '#include "strbuf.h"\n'
        'void twice(strbuf *sb) { strbuf_append(sb, "x"); strbuf_append(sb, "y"); }\n'
    ),
    "src/other.c": "int other(void) {\n  int strbuf_append = 3;\n  return strbuf_append;\n}\n",
}
C_RELATED = ("include/strbuf.h", "src/strbuf.c", "src/main.c", "src/util.c")


@pytest.fixture(scope="module")
def ts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, ServerPool]]:
    require_server("typescript")
    root = write_tree(tmp_path_factory.mktemp("ts"), TS)
    pool = ServerPool(Workspace(root), timeout=30)
    yield root, pool
    pool.close()


@pytest.fixture(scope="module")
def c_project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, ServerPool]]:
    require_server("c")
    root = write_tree(tmp_path_factory.mktemp("c"), C)
    pool = ServerPool(Workspace(root), timeout=30)
    yield root, pool
    pool.close()


def test_typescript_symbols_references_rename(ts: tuple[Path, ServerPool]) -> None:
    root, pool = ts
    assert pool.server_name("typescript") == "tsc"
    assert pool.language_of("src/main.ts") == "typescript"
    hits = pool.workspace_symbols("typescript", "makeCircle")
    (decl,) = [s for s in hits if s.kind == "function"]
    data = (root / "src/shapes.ts").read_bytes()
    assert decl.path == "src/shapes.ts"
    assert data[decl.name_start : decl.name_end] == b"makeCircle"
    assert data[decl.start_byte : decl.end_byte].startswith(b"export function makeCircle")

    at = offset_of(root, "src/shapes.ts", "function makeCircle", "makeCircle")
    refs = pool.references("src/shapes.ts", at, include_declaration=True)
    related = ("src/shapes.ts", "src/main.ts")
    assert {(r.path, r.start_byte) for r in refs} == occurrences(root, related, "makeCircle")
    assert texts(root, refs) == {b"makeCircle"}

    use = offset_of(root, "src/main.ts", "/* 😀 */ const d = makeCircle", "makeCircle")
    assert [(d.path, d.start_byte) for d in pool.definition("src/main.ts", use)] == [
        ("src/shapes.ts", at)
    ]
    new = apply_edits(root, pool.rename("src/main.ts", use, "makeDisc"))
    assert set(new) == set(related)
    for rel in related:
        assert new[rel] == (root / rel).read_bytes().replace(b"makeCircle", b"makeDisc")

    syms = {(s.name, s.kind, s.container) for s in pool.document_symbols("src/shapes.ts")}
    assert {("Circle", "class", ""), ("area", "method", "Circle")} <= syms


def test_clangd_cross_file_with_generated_compile_commands(
    c_project: tuple[Path, ServerPool],
) -> None:
    root, pool = c_project
    assert pool.server_name("c") == "clangd"
    at = offset_of(root, "src/strbuf.c", "void strbuf_append", "strbuf_append")
    refs = pool.references("src/strbuf.c", at, include_declaration=True)
    assert {(r.path, r.start_byte) for r in refs} == occurrences(root, C_RELATED, "strbuf_append")
    assert texts(root, refs) == {b"strbuf_append"}

    hits = pool.workspace_symbols("c", "strbuf_append")
    assert any(
        s.path in ("src/strbuf.c", "include/strbuf.h") and s.kind == "function" for s in hits
    )

    use = offset_of(root, "src/main.c", "/* 😀 */ strbuf_append", "strbuf_append")
    new = apply_edits(root, pool.rename("src/main.c", use, "sb_append"))
    assert set(new) == set(C_RELATED)
    for rel in C_RELATED:
        assert new[rel] == (root / rel).read_bytes().replace(b"strbuf_append", b"sb_append")

    # sleuth's database and clangd's index live in .sleuth/, nothing in the workspace itself.
    assert (root / ".sleuth/clangd/compile_commands.json").is_file()
    assert not (root / "compile_commands.json").exists()
    assert not (root / ".cache").exists()
    assert sorted(p.name for p in root.iterdir()) == [".sleuth", "include", "src"]
