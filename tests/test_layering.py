"""Imports point one way (docs/architecture.md#layers): base <- render <- workspace <- engines <-
query <- resources/edit <- service <- faces, with no cycles, not even behind a lazy import.

The checks are functions of a package directory, so the tests below prove each one on small
planted packages before trusting it on ``sleuth``. An import is every form Python has:
``import a.b [as c]``, ``from a import b``, relative ``from .. import b``, any of those inside
a function or an ``if`` block, and the string forms ``importlib.import_module("a.b")``,
``__import__("a.b")`` and ``sys.modules.get("a.b")`` / ``sys.modules["a.b"]`` / ``"a.b" in
sys.modules`` (a use of a module the caller expects loaded is a dependency all the same). A
name computed at run time (``import_module(name)``) cannot be read; today those load grammar
wheels and NumPy only.

Granularity is the module: ``from pkg.sub import name`` is an edge to ``pkg.sub.name`` when
that is a module, else to ``pkg.sub`` (its ``__init__``); the parent packages Python runs on
the way are not edges, or every module would sit in a cycle with its package's ``__init__``.
Imports under ``if TYPE_CHECKING:`` never run, so they make no runtime cycle (a module may name
the type of what it is handed, as ``graph.rank`` names ``graph.build.Graph``), but they must
still point down: a type named from a higher layer is a dependency on it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import networkx as nx
import pytest

import sleuth

PKG = Path(sleuth.__file__).parent

BASE = frozenset(
    {"errors", "fields", "languages", "model", "prefilter", "write_behind", "tuning", "child_env"}
)
ENGINES = frozenset({"text_search", "ast_search", "lsp_bridge", "graph", "semantic"})
# Bottom to top; every top-level name not listed is a face (api, cli, mcp, mcp_wire, the
# package's own __init__ and __main__, ...). ``listing_prefetch`` sits with the workspace: it
# lists a scope as ``Workspace.list_files`` would, importing only workspace and base modules,
# and is started early for the CLI by the service session; no face needs to name it.
LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    ("base", BASE),
    ("render", frozenset({"render"})),
    ("workspace", frozenset({"workspace", "listing_prefetch"})),
    ("engines", ENGINES),
    ("query", frozenset({"query", "find"})),
    ("resources/edit", frozenset({"resources", "edit"})),
    ("service", frozenset({"service"})),
)
FACES = "faces"
# What a face may import besides other faces (``__main__`` runs ``cli``, ``__init__`` names
# ``api``); and render, which the faces share, is pure: it reads JSON dicts, imports base only,
# and sits low so the layers that cut pages to a text budget measure with the very renderer.
FACE_MAY_IMPORT = BASE | {"service", "render"}
RENDER_MAY_IMPORT = BASE


@dataclass(frozen=True)
class Import:
    """One import statement or string form: ``source`` imports ``target`` (dotted names)."""

    source: str
    target: str
    line: int
    lazy: bool  # inside a function: runs when called, not at import
    typing_only: bool  # under ``if TYPE_CHECKING:``: never runs

    def __str__(self) -> str:
        how = " (TYPE_CHECKING)" if self.typing_only else " (lazy)" if self.lazy else ""
        return f"{self.source}:{self.line} imports {self.target}{how}"


def component(module: str) -> str:
    """The top-level part of ``pkg.part.rest`` (``__init__`` for the package itself)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def layer_of(module: str) -> tuple[int, str]:
    """(height, name) of the layer ``module`` belongs to; faces are the highest."""
    part = component(module)
    for height, (name, members) in enumerate(LAYERS):
        if part in members:
            return height, name
    return len(LAYERS), FACES


def _modules(pkg_dir: Path) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in sorted(pkg_dir.rglob("*.py")):
        parts = (pkg_dir.name, *path.relative_to(pkg_dir).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", "")
    return name == "TYPE_CHECKING"


def _is_sys_modules(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "modules"


def _text(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


class _Finder(ast.NodeVisitor):
    """Collects the imports of one module, knowing whether each is lazy or typing-only."""

    def __init__(self, module: str, is_package: bool, known: set[str]) -> None:
        self.module, self.known = module, known
        self.package = module if is_package else module.rpartition(".")[0]
        self.lazy = self.typing_only = False
        self.found: list[Import] = []

    def _add(self, target: str, node: ast.AST) -> None:
        # The longest known module the name starts with (``pkg.sub.Name`` -> ``pkg.sub``), never
        # shorter than ``pkg.part``: a module not written yet keeps its component.
        name = target
        while name not in self.known and name.count(".") > 1:
            name = name.rpartition(".")[0]
        name = name if name in self.known else target
        line = getattr(node, "lineno", 0)
        self.found.append(Import(self.module, name, line, self.lazy, self.typing_only))

    def _visit_in(self, nodes: list[ast.stmt] | list[ast.expr], lazy: bool, typing: bool) -> None:
        saved = self.lazy, self.typing_only
        self.lazy, self.typing_only = lazy, typing
        for child in nodes:
            self.visit(child)
        self.lazy, self.typing_only = saved

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        # Decorators and defaults run at definition time; the body when called.
        eager = [*node.decorator_list, *node.args.defaults, *node.args.kw_defaults]
        self._visit_in([e for e in eager if e is not None], self.lazy, self.typing_only)
        self._visit_in(node.body, True, self.typing_only)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._visit_in([node.body], True, self.typing_only)

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test):
            self._visit_in(node.body, self.lazy, True)
            self._visit_in(node.orelse, self.lazy, self.typing_only)
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = node.module or ""
        if node.level:
            anchor = self.package.split(".")[: len(self.package.split(".")) - node.level + 1]
            base = ".".join([*anchor, *([node.module] if node.module else [])])
        for alias in node.names:
            full = f"{base}.{alias.name}"  # ``from pkg import sub`` names the module pkg.sub
            self._add(full if full in self.known else base, node)

    def visit_Call(self, node: ast.Call) -> None:
        func, name = node.func, _text(node.args[0] if node.args else None)
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        by_sys_modules = isinstance(func, ast.Attribute) and _is_sys_modules(func.value)
        if name is not None and (called in ("import_module", "__import__") or by_sys_modules):
            self._add(name, node)
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        name = _text(node.slice)
        if name is not None and _is_sys_modules(node.value):
            self._add(name, node)
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        name = _text(node.left)
        if name is not None and any(_is_sys_modules(c) for c in node.comparators):
            self._add(name, node)
        self.generic_visit(node)


def collect_imports(pkg_dir: Path) -> list[Import]:
    """Every import inside ``pkg_dir`` of a module of the same package, in every form."""
    modules = _modules(pkg_dir)
    known, root = set(modules), pkg_dir.name
    found: set[Import] = set()
    for module, path in modules.items():
        finder = _Finder(module, path.name == "__init__.py", known)
        finder.visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        found.update(i for i in finder.found if i.target.split(".")[0] == root)
    return sorted(found, key=lambda i: (i.source, i.line, i.target))  # one per module named


def check_direction(pkg_dir: Path) -> list[str]:
    """Imports that point up a layer, or from one engine into another (TYPE_CHECKING too)."""
    wrong = []
    for imp in collect_imports(pkg_dir):
        src, dst = component(imp.source), component(imp.target)
        if src == dst:
            continue
        (src_height, _), (dst_height, dst_layer) = layer_of(imp.source), layer_of(imp.target)
        if src in ENGINES and dst in ENGINES:
            wrong.append(f"{imp}: an engine imports another engine")
        elif dst_height > src_height:
            wrong.append(f"{imp}: up into {dst_layer}")
    return wrong


def _only(pkg_dir: Path, layer: str, allowed: frozenset[str], rule: str) -> list[str]:
    """Imports from ``layer`` of anything outside it but the ``allowed`` components."""
    wrong = []
    for imp in collect_imports(pkg_dir):
        if layer_of(imp.source)[1] != layer or layer_of(imp.target)[1] == layer:
            continue
        if component(imp.target) not in allowed:
            wrong.append(f"{imp}: {rule}")
    return wrong


def check_faces(pkg_dir: Path) -> list[str]:
    """Face imports of anything but service, render, the base modules and other faces."""
    return _only(pkg_dir, FACES, FACE_MAY_IMPORT, "faces import only service, render and base")


def check_render(pkg_dir: Path) -> list[str]:
    """Render imports of anything but the base modules."""
    return _only(pkg_dir, "render", RENDER_MAY_IMPORT, "render imports only base modules")


def check_cycles(pkg_dir: Path) -> list[str]:
    """Each import cycle among modules (lazy imports included, TYPE_CHECKING ones not)."""
    graph: nx.DiGraph = nx.DiGraph()
    for imp in collect_imports(pkg_dir):
        if not imp.typing_only and imp.source != imp.target:
            graph.add_edge(imp.source, imp.target, imp=imp)
    out = []
    for ring in nx.strongly_connected_components(graph):
        if len(ring) > 1:
            edges = nx.find_cycle(graph.subgraph(ring), source=min(ring))
            path = "; ".join(str(graph.edges[a, b]["imp"]) for a, b in edges)
            out.append(f"cycle of {sorted(ring)}: {path}")
    return sorted(out)


# -- the real package ------------------------------------------------------------------------


def test_imports_point_one_way() -> None:
    assert check_direction(PKG) == []


def test_render_imports_only_base() -> None:
    assert check_render(PKG) == []


def test_no_import_cycles() -> None:
    assert check_cycles(PKG) == []


def test_faces_import_only_service() -> None:
    assert check_faces(PKG) == []


def test_public_api_is_pinned() -> None:
    assert sleuth.__all__ == ["Workbench", "SleuthError"]
    from sleuth.api import Workbench

    assert sleuth.Workbench is Workbench


# -- the checks catch what they are for, on planted packages ----------------------------------


def _plant(tmp_path: Path, files: dict[str, str]) -> Path:
    """A package ``sleuth`` under ``tmp_path`` holding ``files`` (every folder a package)."""
    pkg = tmp_path / "sleuth"
    pkg.mkdir()
    for rel, text in {"__init__.py": "", **files}.items():
        path = pkg / rel
        for folder in path.relative_to(pkg).parents:
            (pkg / folder).mkdir(parents=True, exist_ok=True)
            (pkg / folder / "__init__.py").touch()
        path.write_text(text)
    return pkg


CLEAN = {
    "errors.py": "",
    "workspace/reader.py": "from sleuth.errors import x\n",
    "listing_prefetch.py": "def start():\n    from sleuth.errors import x\n",
    "graph/build.py": "from sleuth.workspace import reader\nfrom . import store\n",
    "graph/store.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .build import G\n",
    "query/router.py": "import sleuth.graph.build as b\nfrom ..text_search import boolean\n",
    "text_search/boolean.py": "",
    "service/run.py": "from sleuth.query import router\n",
    "cli.py": "from sleuth import errors, service, render\nfrom sleuth.service import run\n",
    "render.py": "from sleuth.errors import x\n",
    "__main__.py": "from sleuth.cli import main\n",
}

# Each form of "the engine module ``graph.build`` imports ``query``", which points up.
UP_FORMS = [
    "import sleuth.query.router\n",
    "import sleuth.query.router as r\n",
    "from sleuth import query\n",
    "from sleuth.query import router\n",
    "from sleuth.query.router import parse\n",
    "from ..query import router\n",
    "from .. import query\n",
    "def f():\n    from sleuth.query import router\n",
    "class C:\n    def m(self):\n        import sleuth.query.router\n",
    "import sys\nif sys.platform == 'x':\n    from sleuth.query import router\n",
    "try:\n    import sleuth.query\nexcept ImportError:\n    pass\n",
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from sleuth.query.router import R\n",
    "import importlib\ndef f():\n    importlib.import_module('sleuth.query.router')\n",
    "from importlib import import_module\nm = import_module('sleuth.query')\n",
    "m = __import__('sleuth.query.router')\n",
    "import sys\ndef f():\n    return sys.modules.get('sleuth.query.router')\n",
    "import sys\nq = sys.modules['sleuth.query']\n",
    "import sys\nloaded = 'sleuth.query' in sys.modules\n",
]


def test_the_clean_plant_passes_every_check(tmp_path: Path) -> None:
    pkg = _plant(tmp_path, CLEAN)
    checks = (check_direction, check_faces, check_render, check_cycles)
    assert [check(pkg) for check in checks] == [[], [], [], []]


@pytest.mark.parametrize("form", UP_FORMS)
def test_every_import_form_pointing_up_is_caught(tmp_path: Path, form: str) -> None:
    pkg = _plant(tmp_path, {**CLEAN, "graph/build.py": form})
    (wrong,) = check_direction(pkg)
    assert wrong.startswith("sleuth.graph.build:") and " imports sleuth.query" in wrong
    assert wrong.endswith(": up into query")


def test_an_engine_importing_another_engine_is_caught(tmp_path: Path) -> None:
    pkg = _plant(tmp_path, {**CLEAN, "text_search/boolean.py": "from sleuth import graph\n"})
    assert check_direction(pkg) == [
        "sleuth.text_search.boolean:1 imports sleuth.graph: an engine imports another engine"
    ]


def test_a_base_module_importing_the_package_root_is_caught(tmp_path: Path) -> None:
    # ``import sleuth`` runs ``__init__``, a face (it names the Python API).
    pkg = _plant(tmp_path, {**CLEAN, "errors.py": "def f():\n    import sleuth\n"})
    assert check_direction(pkg) == ["sleuth.errors:2 imports sleuth (lazy): up into faces"]


def test_a_cycle_through_a_lazy_import_is_caught(tmp_path: Path) -> None:
    back = "def save():\n    from sleuth.graph.build import G\n"
    pkg = _plant(tmp_path, {**CLEAN, "graph/store.py": back})
    assert check_cycles(pkg) == [
        "cycle of ['sleuth.graph.build', 'sleuth.graph.store']: "
        "sleuth.graph.build:2 imports sleuth.graph.store; "
        "sleuth.graph.store:2 imports sleuth.graph.build (lazy)"
    ]
    assert check_direction(pkg) == []  # inside one engine: only the cycle is wrong


def test_a_cycle_within_one_layer_is_caught(tmp_path: Path) -> None:
    # workspace <-> listing_prefetch: the same layer, so only the cycle check sees it
    lazy_back = "def start():\n    import sleuth.workspace.reader\n"
    pkg = _plant(
        tmp_path,
        {
            **CLEAN,
            "workspace/reader.py": "from sleuth import listing_prefetch\n",
            "listing_prefetch.py": lazy_back,
        },
    )
    assert check_direction(pkg) == []
    (cycle,) = check_cycles(pkg)
    assert cycle.startswith("cycle of ['sleuth.listing_prefetch', 'sleuth.workspace.reader']")


def test_a_type_checking_back_edge_is_no_runtime_cycle(tmp_path: Path) -> None:
    # CLEAN's graph.store names graph.build's type under TYPE_CHECKING only.
    pkg = _plant(tmp_path, CLEAN)
    kinds = {(i.source, i.target): i.typing_only for i in collect_imports(pkg)}
    assert kinds[("sleuth.graph.store", "sleuth.graph.build")] is True
    assert check_cycles(pkg) == []


def test_a_face_importing_an_engine_or_query_is_caught(tmp_path: Path) -> None:
    face = (
        "import sys\nfrom sleuth.graph.build import G\nfrom sleuth import query\n"
        "def f():\n    sys.modules.get('sleuth.query.router')\n"
    )
    pkg = _plant(tmp_path, {**CLEAN, "mcp.py": face})
    rule = "faces import only service, render and base"
    assert check_faces(pkg) == [
        f"sleuth.mcp:2 imports sleuth.graph.build: {rule}",
        f"sleuth.mcp:3 imports sleuth.query: {rule}",
        f"sleuth.mcp:5 imports sleuth.query.router (lazy): {rule}",
    ]
    assert check_direction(pkg) == []  # downward, so only the face rule sees it


def test_render_importing_resources_is_caught(tmp_path: Path) -> None:
    pkg = _plant(tmp_path, {**CLEAN, "render.py": "from sleuth.resources.refs import parse\n"})
    assert check_render(pkg) == [
        "sleuth.render:1 imports sleuth.resources.refs: render imports only base modules"
    ]


def test_relative_imports_resolve_from_a_package_init(tmp_path: Path) -> None:
    init = "from .build import G\nfrom . import store\nfrom .. import errors\n"
    pkg = _plant(tmp_path, {**CLEAN, "graph/__init__.py": init})
    targets = {i.target for i in collect_imports(pkg) if i.source == "sleuth.graph"}
    assert targets == {"sleuth.graph.build", "sleuth.graph.store", "sleuth.errors"}
