"""symbols:, references and symbol:# end to end over real language servers
(docs/query.md#symbols-and-symbolid-declarations).

Each project is a small but real package with its own tests — Python (run by pytest), TypeScript
with a tsconfig.json (compiled by tsc 7 and run by node) and C without a compile_commands.json
(compiled by gcc) — where ``total`` is a function declared in one file and used across others,
and an unrelated module has a LOCAL VARIABLE also named ``total``. Python runs twice: with the
default server (ty) and with jedi-language-server chosen by ``[tool.sleuth.servers]`` in its
pyproject.toml. For each:

* ``symbols:total`` finds the function's declaration, ``precision: "semantic"``, with its kind,
  container, id and whole range;
* ``navigation="references"`` ties exactly the occurrences of the function (every ``total`` in
  the related files, imports and header prototypes included) to the declaration's id — and
  none of the unrelated local's;
* ``symbol:#ID`` reads the exact text of the declaration.

The projects (and the word-occurrence helper) are shared with ``test_rename_e2e.py``, which
renames ``total`` through the CLI and runs each project's own tests. Without a server (Ruby, or
Python with its server forced missing) the answers are ``syntactic``. One ``Workbench`` per
project is shared by its tests (module fixture), so each server starts once per module.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from sleuth.api import Workbench
from sleuth.errors import ServerUnavailable, Unsupported
from sleuth.lsp_bridge import servers as servers_module
from sleuth.lsp_bridge.servers import SERVERS, usable
from tests.lsp_bridge.conftest import VERSIONS, write_tree

PY_FILES = {
    "shop/__init__.py": '"""A tiny shop: carts and checkout."""\n',
    "shop/models.py": '''"""Carts and their totals."""

from __future__ import annotations


class Cart:
    """Items with prices."""

    def __init__(self) -> None:
        self.items: list[tuple[str, float]] = []

    def add(self, name: str, price: float) -> None:
        self.items.append((name, price))


def total(cart: Cart) -> float:
    """Sum of the prices in ``cart``."""
    return sum(price for _, price in cart.items)
''',
    "shop/service.py": '''"""Checkout, built on the models."""

from __future__ import annotations

from shop.models import Cart, total


def checkout(cart: Cart) -> str:
    return f"pay {total(cart):.2f}"


def is_free(cart: Cart) -> bool:
    return total(cart) == 0


def with_tax(cart: Cart, rate: float) -> float:
    return total(cart) * (1 + rate)
''',
    "shop/report.py": '''"""Unrelated to carts: a local variable that happens to be called total."""


def summarize(values: list[int]) -> int:
    total = 0
    for v in values:
        total += v
    return total
''',
    "tests/test_shop.py": """from shop.models import Cart, total
from shop.report import summarize
from shop.service import checkout, is_free, with_tax


def test_total_and_checkout() -> None:
    cart = Cart()
    cart.add("tea", 2.5)
    assert total(cart) == 2.5
    assert checkout(cart) == "pay 2.50"
    assert not is_free(cart)
    assert with_tax(cart, 0.2) == 3.0
    assert is_free(Cart())


def test_unrelated_summary() -> None:
    assert summarize([1, 2, 3]) == 6
""",
}

TS_FILES = {
    "tsconfig.json": '{\n  "compilerOptions": {"target": "es2020", "module": "commonjs", '
    '"strict": true, "rootDir": "src", "types": []},\n  "include": ["src"]\n}\n',
    "src/models.ts": """export class Cart {
  items: Array<[string, number]> = [];

  add(name: string, price: number): void {
    this.items.push([name, price]);
  }
}

export function total(cart: Cart): number {
  return cart.items.reduce((sum, [, price]) => sum + price, 0);
}
""",
    "src/service.ts": """import { Cart, total } from "./models";

export function checkout(cart: Cart): string {
  return `pay ${total(cart).toFixed(2)}`;
}

export function isFree(cart: Cart): boolean {
  return total(cart) === 0;
}

export function withTax(cart: Cart, rate: number): number {
  return total(cart) * (1 + rate);
}
""",
    "src/report.ts": """export function summarize(values: number[]): number {
  let total = 0;
  for (const v of values) {
    total += v;
  }
  return total;
}
""",
    "src/shop.test.ts": """import { Cart, total } from "./models";
import { summarize } from "./report";
import { checkout, isFree, withTax } from "./service";

function check(ok: boolean, what: string): void {
  if (!ok) {
    throw new Error(`failed: ${what}`);
  }
}

const cart = new Cart();
cart.add("tea", 2.5);
check(total(cart) === 2.5, "the sum of the cart");
check(checkout(cart) === "pay 2.50", "checkout");
check(!isFree(cart), "isFree");
check(withTax(cart, 0.2) === 3, "withTax");
check(isFree(new Cart()), "an empty cart is free");
check(summarize([1, 2, 3]) === 6, "summarize");
""",
}

C_FILES = {
    "src/cart.h": """#ifndef CART_H
#define CART_H

struct cart {
    int count;
    double prices[16];
};

double total(const struct cart *c);

#endif
""",
    "src/cart.c": """#include "cart.h"

double total(const struct cart *c) {
    double sum = 0;
    for (int i = 0; i < c->count; i++) {
        sum += c->prices[i];
    }
    return sum;
}
""",
    "src/service.h": """#ifndef SERVICE_H
#define SERVICE_H

#include "cart.h"

int is_free(const struct cart *c);
double with_tax(const struct cart *c, double rate);

#endif
""",
    "src/service.c": """#include "service.h"

int is_free(const struct cart *c) {
    return total(c) == 0;
}

double with_tax(const struct cart *c, double rate) {
    return total(c) * (1 + rate);
}
""",
    "src/report.h": "int summarize(const int *values, int n);\n",
    "src/report.c": """#include "report.h"

int summarize(const int *values, int n) {
    int total = 0;
    for (int i = 0; i < n; i++) {
        total += values[i];
    }
    return total;
}
""",
    "tests/test_cart.c": """#include <assert.h>
#include <stdio.h>

#include "cart.h"
#include "report.h"
#include "service.h"

int main(void) {
    struct cart c = {0};
    c.prices[c.count++] = 2.5;
    assert(total(&c) == 2.5);
    assert(!is_free(&c));
    assert(with_tax(&c, 0.2) == 3.0);
    struct cart empty = {0};
    assert(is_free(&empty));
    int values[] = {1, 2, 3};
    assert(summarize(values, 3) == 6);
    puts("ok");
    return 0;
}
""",
}

RUBY_FILES = {
    "lib/cart.rb": "class Cart\n  def initialize\n    @prices = []\n  end\n\n"
    "  def total\n    @prices.sum\n  end\nend\n",
    "lib/service.rb": "require_relative 'cart'\n\ndef checkout(cart)\n"
    '  "pay #{cart.total}"\nend\n',
}

JEDI_CONFIG = '[tool.sleuth.servers]\npython = ["jedi-language-server"]\n'
MISSING_CONFIG = '[servers]\npython = "basedpyright"\n'
"""A known server the suite never installs: a workspace may pick one only by its bare name."""
WORD = "total"
NEW_NAME = "grand_total"


@dataclass(frozen=True)
class Project:
    """One test project: its files, its language server, and what the answers must be."""

    name: str
    language: str
    server: str
    files: dict[str, str]
    declaration: str
    """The declaring file of the function ``total``."""
    unrelated: str
    """The file whose local variable ``total`` has nothing to do with the function."""
    kind: str
    body: str
    """The exact text ``symbol:#ID`` reads: the whole declaration."""
    config: dict[str, str] = field(default_factory=dict)

    @property
    def tree(self) -> dict[str, str]:
        return {**self.files, **self.config}


PROJECTS: dict[str, Project] = {
    "ty": Project(
        "ty",
        "python",
        "ty",
        PY_FILES,
        "shop/models.py",
        "shop/report.py",
        "function",
        'def total(cart: Cart) -> float:\n    """Sum of the prices in ``cart``."""\n'
        "    return sum(price for _, price in cart.items)",
    ),
    "jedi": Project(
        "jedi",
        "python",
        "jedi-language-server",
        PY_FILES,
        "shop/models.py",
        "shop/report.py",
        "function",
        'def total(cart: Cart) -> float:\n    """Sum of the prices in ``cart``."""\n'
        "    return sum(price for _, price in cart.items)",
        config={"pyproject.toml": JEDI_CONFIG},
    ),
    "typescript": Project(
        "typescript",
        "typescript",
        "tsc",
        TS_FILES,
        "src/models.ts",
        "src/report.ts",
        "function",
        "export function total(cart: Cart): number {\n"
        "  return cart.items.reduce((sum, [, price]) => sum + price, 0);\n}",
    ),
    "c": Project(
        "c",
        "c",
        "clangd",
        C_FILES,
        "src/cart.c",
        "src/report.c",
        "function",
        "double total(const struct cart *c) {\n    double sum = 0;\n"
        "    for (int i = 0; i < c->count; i++) {\n        sum += c->prices[i];\n    }\n"
        "    return sum;\n}",
    ),
}


def occurrences(files: dict[str, str], word: str = WORD) -> set[tuple[str, int, int]]:
    """``(path, line, column)`` of every whole-word ``word`` (1-based, code points)."""
    pattern = re.compile(rf"(?<![\w$]){re.escape(word)}(?![\w$])")
    found = set()
    for path, text in files.items():
        for number, line in enumerate(text.split("\n"), start=1):
            found.update((path, number, m.start() + 1) for m in pattern.finditer(line))
    return found


def related(project: Project) -> dict[str, str]:
    """The project's files except the unrelated one."""
    return {p: t for p, t in project.files.items() if p != project.unrelated}


def require_server(project: Project) -> None:
    """Fail (never skip) when the project's server is not installed (scripts/install_tools.sh)."""
    if not any(s.name == project.server and usable(s, VERSIONS) for s in SERVERS[project.language]):
        pytest.fail(f"{project.server} is not installed: run scripts/install_tools.sh")


def stray_clangd_state(root: Path) -> list[str]:
    """compile_commands.json / .cache anywhere in the workspace outside ``.sleuth/``."""
    found = []
    for folder, dirs, files in os.walk(root):
        rel = os.path.relpath(folder, root)
        if rel.split(os.sep)[0] == ".sleuth":
            dirs[:] = []
            continue
        found += [os.path.join(rel, d) for d in dirs if d == ".cache"]
        found += [os.path.join(rel, f) for f in files if f == "compile_commands.json"]
    return sorted(found)


def workspace_files(root: Path) -> set[str]:
    """Every file of the workspace outside ``.sleuth/``, as relative POSIX paths."""
    found = set()
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".sleuth"]
        found.update(Path(folder, f).relative_to(root).as_posix() for f in files)
    return found


@pytest.fixture(scope="module", params=list(PROJECTS))
def project(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Project, Path, Workbench]]:
    """A project on disk and one Workbench over it, shared by the module's tests."""
    spec = PROJECTS[request.param]
    require_server(spec)
    root = write_tree(tmp_path_factory.mktemp(f"symbols-{spec.name}"), spec.tree)
    with Workbench(root) as wb:
        yield spec, root, wb


def declaration_of(project: Project, data: dict[str, Any]) -> dict[str, Any]:
    """The one match that declares the function ``total``."""
    found = [
        m
        for m in data["matches"]
        if m["symbol"]["kind"] != "reference" and m["path"] == project.declaration
    ]
    assert len(found) == 1, data["matches"]
    return found[0]


def test_the_configured_server_answers(project: tuple[Project, Path, Workbench]) -> None:
    spec, _, wb = project
    rows = {row["language"]: row for row in wb.doctor()}
    assert rows[spec.language]["server"] == spec.server
    assert rows[spec.language]["found"] is True and rows[spec.language]["version"]


def test_declaration_is_semantic_with_kind_container_id_and_range(
    project: tuple[Project, Path, Workbench],
) -> None:
    spec, root, wb = project
    data = wb.search("symbols:total").to_json()
    assert (data["mode"], data["complete"], data["fallback"]) == ("symbols", True, None)
    match = declaration_of(spec, data)
    symbol = match["symbol"]
    line = next(
        n
        for n, text in enumerate(spec.files[spec.declaration].split("\n"), 1)
        if spec.body.split("\n")[0] in text
    )
    assert (match["line"], match["end_line"]) == (line, line)
    assert (
        spec.files[spec.declaration]
        .split("\n")[line - 1][match["column"] - 1 :]
        .startswith("total(")
    )
    assert match["end_column"] - match["column"] == len(WORD)
    assert {k: symbol[k] for k in ("name", "kind", "container", "precision")} == {
        "name": WORD,
        "kind": spec.kind,
        "container": None,
        "precision": "semantic",
    }
    assert re.fullmatch(r"[0-9a-f]{12}", symbol["id"])
    rng = symbol["range"]
    assert (rng["path"], rng["line"], rng["end_line"]) == (
        spec.declaration,
        line,
        line + spec.body.count("\n"),
    )
    data_bytes = (root / spec.declaration).read_bytes()
    assert data_bytes[rng["start_byte"] : rng["end_byte"]].decode() == spec.body
    # every declaration listed is the function's, or one in the unrelated file with its own id
    for other in data["matches"]:
        assert other["symbol"]["precision"] == "semantic"
        if other is not match:
            assert other["path"] == spec.unrelated and other["symbol"]["id"] != symbol["id"]


def test_references_are_exactly_the_functions_across_files(
    project: tuple[Project, Path, Workbench],
) -> None:
    spec, _, wb = project
    data = wb.search("symbols:total", navigation="references").to_json()
    assert data["complete"] is True and data["next_cursor"] is None
    decl_id = declaration_of(spec, data)["symbol"]["id"]
    tied = {
        (m["path"], m["line"], m["column"])
        for m in data["matches"]
        if m["symbol"].get("id") == decl_id
        or m["symbol"].get("reference_of") == decl_id
        or decl_id in (m["symbol"].get("candidates") or ())
    }
    # every occurrence of the function's name, in every related file (imports and header
    # prototypes included), and none of the unrelated local variable
    assert tied == occurrences(related(spec))
    for match in data["matches"]:
        symbol = match["symbol"]
        assert symbol["precision"] == "semantic"
        assert match["text"].split("\n")[0]  # the line is shown
        if symbol["kind"] == "reference":
            assert symbol["name"] == WORD and "candidates" not in symbol
            assert (symbol["reference_of"] == decl_id) == (match["path"] != spec.unrelated)
    assert data["total"] == len(data["matches"])


def test_symbol_id_reads_the_exact_declaration(project: tuple[Project, Path, Workbench]) -> None:
    spec, _, wb = project
    decl = declaration_of(spec, wb.search("symbols:total").to_json())
    body = wb.search(f"symbol:#{decl['symbol']['id']}").to_json()
    assert (body["mode"], body["total"]) == ("symbol", 1)
    (match,) = body["matches"]
    assert match["text"] == spec.body
    assert match["symbol"]["id"] == decl["symbol"]["id"]
    assert (match["path"], match["line"]) == (spec.declaration, decl["line"])
    read = wb.read(match["ref"]["match"]).to_json()
    assert [r["text"] for r in read["ranges"]] == [spec.body]


def test_servers_write_nothing_into_the_workspace(
    project: tuple[Project, Path, Workbench],
) -> None:
    spec, root, wb = project
    wb.search("symbols:total", navigation="references")
    # clangd's compilation database and index live under .sleuth/clangd, never in the tree
    assert stray_clangd_state(root) == []
    assert workspace_files(root) == set(spec.tree)
    clangd_db = root / ".sleuth" / "clangd" / "compile_commands.json"
    assert clangd_db.is_file() == (spec.server == "clangd")


@pytest.mark.parametrize("case", ["ruby", "python-without-server"])
def test_without_a_server_answers_are_syntactic(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A language with no server, or whose default servers are all missing (no binary found
    anywhere), answers from tags; rename is ``unsupported`` and names the install command."""
    root = write_tree(tmp_path, dict(RUBY_FILES) if case == "ruby" else dict(PY_FILES))
    if case == "python-without-server":
        monkeypatch.setattr(servers_module, "find_binary", lambda name: None)
    with Workbench(root) as wb:
        data = wb.search("symbols:total", navigation="references").to_json()
        decl = next(m for m in data["matches"] if m["symbol"]["kind"] != "reference")
        with pytest.raises(Unsupported) as excinfo:
            wb.rename(decl["ref"]["match"], "grand_total")
        if case == "python-without-server":
            assert "ty is not installed; install it with: pip install ty" in str(excinfo.value)
        else:
            assert "sleuth doctor" in str(excinfo.value)
    decls = [m for m in data["matches"] if m["symbol"]["kind"] != "reference"]
    assert decls and {m["symbol"]["precision"] for m in data["matches"]} == {"syntactic"}
    if case == "ruby":
        assert [(m["path"], m["line"], m["symbol"]["container"]) for m in decls] == [
            ("lib/cart.rb", 6, "Cart")
        ]
        refs = [(m["path"], m["line"]) for m in data["matches"] if m not in decls]
        assert refs == [("lib/service.rb", 4)]
    else:
        assert ("shop/models.py", 16, 5) in {(m["path"], m["line"], m["column"]) for m in decls}


def test_a_configured_server_that_is_missing_is_server_unavailable(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {**PY_FILES, ".sleuth.toml": MISSING_CONFIG})
    with Workbench(root) as wb:
        with pytest.raises(ServerUnavailable) as excinfo:
            wb.search("symbols:total")
        assert excinfo.value.details["install"].startswith("pip install basedpyright")
        assert "configured for python in [tool.sleuth.servers]" in excinfo.value.message
        assert (
            wb.search("ast:def total($$$A) -> float: $$$B").to_json()["total"] == 1
        )  # no server needed


def test_a_mixed_tree_keeps_semantic_answers_for_the_served_language(tmp_path: Path) -> None:
    """Python (ty) and Ruby (no server) in one tree: the Python declaration and its references
    are semantic, the Ruby ones syntactic — one server-less language does not downgrade all."""
    require_server(PROJECTS["ty"])
    root = write_tree(tmp_path, {**PY_FILES, **RUBY_FILES})
    with Workbench(root) as wb:
        data = wb.search("symbols:total", navigation="references").to_json()
    by_file: dict[str, set[str]] = {}
    for m in data["matches"]:
        by_file.setdefault(m["path"].rsplit(".", 1)[-1], set()).add(m["symbol"]["precision"])
    assert by_file == {"py": {"semantic"}, "rb": {"syntactic"}}
    py_decls = [
        m
        for m in data["matches"]
        if m["path"].endswith(".py") and m["symbol"]["kind"] != "reference"
    ]
    assert [(m["path"], m["line"]) for m in py_decls] == [("shop/models.py", 16)]


def test_tsx_files_are_served_by_the_typescript_server(tmp_path: Path) -> None:
    """tree-sitter calls ``.tsx`` "tsx", the server table "typescript": a project with a
    component file still gets semantic answers, including the use inside the ``.tsx`` file."""
    project = PROJECTS["typescript"]
    require_server(project)
    view = (
        'import { Cart, total } from "./models";\n\n'
        "export function Total(props: { cart: Cart }) {\n"
        "  return <span>{total(props.cart)}</span>;\n}\n"
    )
    tree = dict(project.tree)
    tree["src/view.tsx"] = view
    if "tsconfig.json" in tree:
        config = json.loads(tree["tsconfig.json"])
        config.setdefault("compilerOptions", {})["jsx"] = "preserve"
        tree["tsconfig.json"] = json.dumps(config)
    root = write_tree(tmp_path, tree)
    with Workbench(root) as wb:
        data = wb.search("symbols:total", navigation="references").to_json()
    assert {m["symbol"]["precision"] for m in data["matches"]} == {"semantic"}
    assert ("src/view.tsx", 4) in {(m["path"], m["line"]) for m in data["matches"]}
