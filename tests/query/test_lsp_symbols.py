"""``LspFinder`` with a pool double: which server call answers which question, and the
precision each file's answers get (the real servers are exercised in ``tests/e2e``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sleuth.lsp_bridge.servers import language_of
from sleuth.model import SymbolDef, symbol_id
from sleuth.query.lsp_symbols import LspFinder
from sleuth.query.symbols_mode import TagsCache, TagsFinder
from sleuth.workspace import Workspace

FILES = {
    "a.py": "def total():\n    return 1\n",
    "b.py": "def other():\n    return total\n",
    "c.py": "x = 'total is only a word here'\n",
    "lib/cart.rb": "class Cart\n  def total\n    1\n  end\nend\n",
}


@dataclass
class Spec:
    workspace_symbols: bool


@dataclass
class Pool:
    """Answers like a server that knows ``total`` in a.py; records every call."""

    trusted: bool
    calls: list[tuple[str, str]] = field(default_factory=list)

    def spec(self, lang: str) -> Spec:
        return Spec(self.trusted)

    def language_of(self, path: str) -> str | None:
        return language_of(path)

    def _total(self) -> SymbolDef:
        sid = symbol_id("a.py", "total", "function")
        return SymbolDef(sid, "total", "function", "", "a.py", 0, 26, 1, 2, 4, 9)

    def workspace_symbols(self, lang: str, query: str, *, fuzzy: bool = True) -> list[SymbolDef]:
        self.calls.append(("workspace", query))
        return [self._total()]

    def document_symbols(self, path: str) -> list[SymbolDef]:
        self.calls.append(("document", path))
        return [self._total()] if path == "a.py" else []

    def references(self, path: str, offset: int, include_declaration: bool = False) -> Any:
        self.calls.append(("references", path))
        return []


def finder(tmp_path: Path, pool: Pool) -> tuple[LspFinder, list[Any]]:
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    ws = Workspace(tmp_path)
    files = list(ws.list_files().files)
    return LspFinder(ws, pool, ["python"], TagsFinder(ws, TagsCache(), None)), files


EXACT = [("a.py", "total", "semantic"), ("lib/cart.rb", "total", "syntactic")]


def exact_totals(f: LspFinder, files: list[Any]) -> list[tuple[str, str, str]]:
    """Declarations named exactly ``total`` with their file and precision."""
    return [
        (d.path, d.name, f.precision_of(d.path))
        for d in f.defs(files, "total", False)
        if d.name == "total"
    ]


def test_a_trusted_server_answers_exact_names_through_workspace_symbol(tmp_path: Path) -> None:
    pool = Pool(trusted=True)
    f, files = finder(tmp_path, pool)
    assert exact_totals(f, files) == EXACT
    assert pool.calls == [("workspace", "total")]


def test_a_capped_server_is_asked_only_about_files_whose_tags_declare_the_name(
    tmp_path: Path,
) -> None:
    pool = Pool(trusted=False)
    f, files = finder(tmp_path, pool)
    assert exact_totals(f, files) == EXACT
    # b.py uses the name and c.py mentions it, but neither declares it: no server call for them
    assert pool.calls == [("document", "a.py")]
    # the fuzzy tier still asks workspace/symbol
    pool.calls.clear()
    list(f.defs(files, "tot", True))
    assert ("workspace", "tot") in pool.calls


def test_references_of_an_unserved_language_come_from_tags_of_that_family(tmp_path: Path) -> None:
    pool = Pool(trusted=True)
    f, files = finder(tmp_path, pool)
    ruby = next(d for d in f.defs(files, "total", False) if d.path.endswith(".rb"))
    pool.calls.clear()
    assert [r.path for r in f.refs(ruby, files)] == []  # b.py's `total` is Python: not a use
    assert pool.calls == []
