"""ty and jedi-language-server on a small multi-file package (real servers)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sleuth.lsp_bridge import ServerPool
from sleuth.tuning import Tuning
from sleuth.workspace import Workspace

from .conftest import apply_edits, occurrences, offset_of, require_server, texts, write_tree

PACKAGE = {
    "pkg/__init__.py": "",
    "pkg/core.py": (
        '"""Core."""\n\n\n'
        "class Engine:\n"
        '    """An engine."""\n\n'
        "    def start(self, speed: int) -> int:\n"
        "        return speed * 2\n\n\n"
        "def make_engine() -> Engine:\n"
        "    return Engine()\n"
    ),
    "pkg/use.py": (
        "# héllo wörld 😀\n"
        "from pkg.core import Engine, make_engine\n\n\n"
        "def run() -> int:\n"
        "    e = make_engine()  # 😀 𝄞\n"
        "    return e.start(3)\n\n\n"
        "def other() -> Engine:\n"
        "    s = '😀'; return make_engine()\n"
    ),
    "pkg/extra.py": "from pkg import core\n\nENGINE = core.make_engine()\n",
    "pkg/unrelated.py": "def helper() -> int:\n    make_engine = 5\n    return make_engine + 1\n",
}
RELATED = ("pkg/core.py", "pkg/use.py", "pkg/extra.py")
SERVER_NAMES = {"ty": "ty", "jedi": "jedi-language-server"}


def make_package(root: Path, server: str) -> Path:
    files = dict(PACKAGE)
    files["pyproject.toml"] = f'[tool.sleuth.servers]\npython = ["{server}"]\n'
    return write_tree(root, files)


@pytest.fixture(scope="module", params=["ty", "jedi"])
def project(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Path, ServerPool]]:
    name = SERVER_NAMES[request.param]
    require_server("python", name)
    root = make_package(tmp_path_factory.mktemp(request.param), name)
    pool = ServerPool(Workspace(root), timeout=30)
    assert pool.server_name("python") == name
    yield root, pool
    pool.close()


def test_workspace_symbols_find_the_declaration(project: tuple[Path, ServerPool]) -> None:
    root, pool = project
    hits = [s for s in pool.workspace_symbols("python", "make_engine") if s.name == "make_engine"]
    decl = [s for s in hits if s.path == "pkg/core.py"]
    assert len(decl) == 1
    sym = decl[0]
    data = (root / "pkg/core.py").read_bytes()
    assert sym.kind == "function"
    assert data[sym.name_start : sym.name_end] == b"make_engine"
    assert data[sym.start_byte : sym.end_byte].startswith(b"def make_engine")
    assert all(s.path != "pkg/unrelated.py" or s.kind == "variable" for s in hits)


def test_document_symbols_are_flattened_with_containers(project: tuple[Path, ServerPool]) -> None:
    _, pool = project
    syms = {(s.name, s.kind, s.container) for s in pool.document_symbols("pkg/core.py")}
    assert {("Engine", "class", ""), ("start", "method", "Engine")} <= syms
    assert ("make_engine", "function", "") in syms


def test_references_cross_file_without_the_unrelated_local(
    project: tuple[Path, ServerPool],
) -> None:
    root, pool = project
    at = offset_of(root, "pkg/core.py", "def make_engine", "make_engine")
    refs = pool.references("pkg/core.py", at, include_declaration=True)
    assert {(r.path, r.start_byte) for r in refs} == occurrences(root, RELATED, "make_engine")
    assert texts(root, refs) == {b"make_engine"}
    without = pool.references("pkg/core.py", at)
    assert ("pkg/core.py", at) not in {(r.path, r.start_byte) for r in without}
    # From a use site after non-ASCII text on the same line: the same set.
    use = offset_of(root, "pkg/use.py", "'😀'; return make_engine", "make_engine")
    again = pool.references("pkg/use.py", use, include_declaration=True)
    assert {(r.path, r.start_byte) for r in again} == {(r.path, r.start_byte) for r in refs}


def test_definition_from_a_use_site(project: tuple[Path, ServerPool]) -> None:
    root, pool = project
    use = offset_of(root, "pkg/use.py", "e = make_engine()", "make_engine")
    defs = pool.definition("pkg/use.py", use)
    decl = offset_of(root, "pkg/core.py", "def make_engine", "make_engine")
    assert [(d.path, d.start_byte) for d in defs] == [("pkg/core.py", decl)]


def test_rename_covers_every_file(project: tuple[Path, ServerPool]) -> None:
    root, pool = project
    at = offset_of(root, "pkg/core.py", "def make_engine", "make_engine")
    edits = pool.rename("pkg/core.py", at, "build_engine")
    new = apply_edits(root, edits)
    assert set(new) == set(RELATED)
    for rel in RELATED:
        expected = (root / rel).read_bytes().replace(b"make_engine", b"build_engine")
        assert new[rel] == expected


def test_utf16_negotiation_gives_the_same_answers(tmp_path: Path) -> None:
    require_server("python", "ty")
    root = make_package(tmp_path, "ty")
    utf16_only = Tuning(position_encodings=("utf-16",))
    with ServerPool(Workspace(root, tuning=utf16_only), timeout=30) as pool:
        use = offset_of(root, "pkg/use.py", "'😀'; return make_engine", "make_engine")
        refs = pool.references("pkg/use.py", use, include_declaration=True)
        (session,) = pool._sessions.values()
        assert session.encoding == "utf-16"
    assert {(r.path, r.start_byte) for r in refs} == occurrences(root, RELATED, "make_engine")
