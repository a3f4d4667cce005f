"""Graph test fixtures: tags records for small Python and TypeScript projects.

The real extractor (``sleuth.ast_search.tags``) is written in parallel, so these records are
made here the way tree-sitter tags would give them:

* ``py_tags`` mirrors Python's tags for one source using the standard library's ``ast``:
  classes and functions (``method`` inside a class) as declarations; calls (the called name,
  ranged on the name itself as a tags ``@name`` capture), base classes (``inherit``) and import
  statements (``import`` with ``module`` as written) as uses, each with its innermost enclosing
  declaration.
* ``Hand`` writes records by hand for languages without a stdlib parser (TypeScript), placing
  each name by a unique snippet of the source.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from sleuth.model import SymbolDef, SymbolRef, symbol_id


@dataclass
class Tags:
    """A ``FileTags`` look-alike."""

    path: str
    lang: str | None
    defs: list[SymbolDef] = field(default_factory=list)
    refs: list[SymbolRef] = field(default_factory=list)
    complete: bool = True
    reason: str | None = None


def _offsets(text: str) -> list[int]:
    """Byte offset of the start of every line (index 0 = line 1)."""
    out, pos = [], 0
    for line in text.encode().split(b"\n"):
        out.append(pos)
        pos += len(line) + 1
    return out


def py_tags(path: str, text: str) -> Tags:
    """Tags of one Python source (see the module docstring)."""
    tree = ast.parse(text)
    lines = _offsets(text)
    tags = Tags(path, "python")

    def byte(lineno: int, col: int) -> int:
        return lines[lineno - 1] + col

    def walk(node: ast.AST, container: str, enclosing: str | None, in_class: bool) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            is_class = isinstance(node, ast.ClassDef)
            kind = "class" if is_class else ("method" if in_class else "function")
            qualified = f"{container}.{node.name}" if container else node.name
            start = byte(node.lineno, node.col_offset)
            name_at = start + text.encode()[start:].index(node.name.encode())
            assert node.end_lineno is not None and node.end_col_offset is not None
            d = SymbolDef(
                symbol_id(path, qualified, kind),
                node.name,
                kind,
                container,
                path,
                start,
                byte(node.end_lineno, node.end_col_offset),
                node.lineno,
                node.end_lineno,
                name_at,
                name_at + len(node.name),
            )
            tags.defs.append(d)
            if isinstance(node, ast.ClassDef):
                for base in node.bases:
                    use(base, "inherit", d.id)
            for stmt in node.body:
                walk(stmt, qualified, d.id, is_class)
            return
        if isinstance(node, ast.Call):
            use(node.func, "call", enclosing)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            # As the extractor does: name = the imported name (an alias is not the name),
            # ranged on that name; module as written.
            data = text.encode()
            cursor = data.index(b"import", byte(node.lineno, node.col_offset)) + 6
            for alias in node.names:
                start = data.index(alias.name.encode(), cursor)
                cursor = start + len(alias.name)
                if isinstance(node, ast.Import):
                    module = alias.name
                else:
                    module = "." * node.level + (node.module or "")
                line = data.count(b"\n", 0, start) + 1
                tags.refs.append(
                    SymbolRef(
                        alias.name, "import", path, start, cursor, line, enclosing, module=module
                    )
                )
        for child in ast.iter_child_nodes(node):
            walk(child, container, enclosing, in_class)

    def use(expr: ast.expr, kind: str, enclosing: str | None) -> None:
        assert expr.end_lineno is not None and expr.end_col_offset is not None
        if isinstance(expr, ast.Name):
            start = byte(expr.lineno, expr.col_offset)
            tags.refs.append(
                SymbolRef(expr.id, kind, path, start, start + len(expr.id), expr.lineno, enclosing)
            )
        elif isinstance(expr, ast.Attribute):
            end = byte(expr.end_lineno, expr.end_col_offset)
            tags.refs.append(
                SymbolRef(
                    expr.attr, kind, path, end - len(expr.attr), end, expr.end_lineno, enclosing
                )
            )

    walk(tree, "", None, False)
    tags.refs.sort(key=lambda r: (r.start_byte, r.name))
    return tags


class Hand:
    """Hand-written records for one source: ``d(...)`` declares, ``r(...)`` uses."""

    def __init__(self, path: str, lang: str, text: str) -> None:
        self.path, self.text, self.data = path, text, text.encode()
        self.tags = Tags(path, lang)
        self._by_qualified: dict[str, str] = {}

    def _at(self, snippet: str, name: str) -> int:
        assert self.data.count(snippet.encode()) == 1, f"{snippet!r} must be unique in {self.path}"
        return self.data.index(snippet.encode()) + snippet.encode().index(name.encode())

    def _line(self, pos: int) -> int:
        return self.data.count(b"\n", 0, pos) + 1

    def d(self, name: str, kind: str, snippet: str, container: str = "") -> Hand:
        """Declare ``name`` found inside ``snippet``; its range is ``snippet``'s line(s)."""
        at = self._at(snippet, name)
        start = self.data.rfind(b"\n", 0, at) + 1
        end = self.data.index(snippet.encode()) + len(snippet.encode())
        qualified = f"{container}.{name}" if container else name
        sid = symbol_id(self.path, qualified, kind)
        self._by_qualified[qualified] = sid
        self.tags.defs.append(
            SymbolDef(
                sid,
                name,
                kind,
                container,
                self.path,
                start,
                end,
                self._line(start),
                self._line(end),
                at,
                at + len(name),
            )
        )
        return self

    def r(
        self,
        name: str,
        kind: str,
        snippet: str,
        enclosing: str | None = None,
        module: str | None = None,
    ) -> Hand:
        """A use of ``name`` found inside ``snippet``, in declaration ``enclosing`` (qualified)."""
        at = self._at(snippet, name)
        encl = self._by_qualified[enclosing] if enclosing else None
        self.tags.refs.append(
            SymbolRef(
                name, kind, self.path, at, at + len(name), self._line(at), encl, module=module
            )
        )
        return self


def label(graph_nodes: dict[str, dict[str, object]], node_id: str) -> str:
    """``path`` for a file node, ``path::Qualified.name`` for a declaration."""
    attrs = graph_nodes[node_id]
    if attrs["type"] == "file":
        return node_id
    container = attrs["container"]
    qualified = f"{container}.{attrs['name']}" if container else attrs["name"]
    return f"{attrs['path']}::{qualified}"
