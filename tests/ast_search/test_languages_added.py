"""The languages added after the first 19: Elixir, Haskell, HCL, Markdown, Nix, Scala, Solidity,
YAML and Zig (ast-grep 0.51.1 supports each; Dart is left out, docs/query.md#languages).

- the table has ast-grep's names, aliases and extensions for each (``AST_GREP`` below is
  ast-grep-cli 0.51.1's, checked by running it on files of every extension);
- each grammar wheel loads (Solidity's int entry point wrapped in a capsule, without the
  deprecated int call), parses a real snippet without error, and uses ast-grep's expando;
- a small snippet per language gives the same (start, end) matches as ``ast-grep run`` (the
  corpus parity tests, ``tests/e2e/test_ast_parity.py``, do this on a real project each);
- Scala, Elixir and Solidity have tags rules (their wheels' tags.scm plus imports and base
  types), exactly checked on a fixture; Haskell and Nix have none (no tags.scm shipped), and
  HCL, Markdown and YAML declare no symbols; Zig's wheel ships no tags.scm either.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from sleuth import languages as table
from sleuth.ast_search import compile_pattern
from sleuth.ast_search.languages import LANGUAGES, get_lang_spec, get_ts_language
from sleuth.ast_search.tags import extract_tags, tags_supported
from sleuth.ast_search.trees import parse

# ast-grep 0.51.1: language -> (aliases --lang accepts, extensions it searches), expando.
AST_GREP: dict[str, tuple[tuple[str, ...], tuple[str, ...], str]] = {
    "elixir": (("elixir", "ex"), ("ex", "exs"), "µ"),
    "haskell": (("haskell", "hs"), ("hs",), "µ"),
    "hcl": (("hcl",), ("hcl", "nomad", "tf", "tfvars", "workflow"), "µ"),
    "markdown": (("markdown", "md"), ("markdown", "md"), "$"),
    "nix": (("nix",), ("nix",), "_"),
    "scala": (("scala",), ("scala", "sc", "sbt"), "$"),
    "solidity": (("solidity", "sol"), ("sol",), "$"),
    "yaml": (("yaml", "yml"), ("yaml", "yml"), "$"),
    "zig": (("zig",), ("zig",), "_"),
}

# One real-looking snippet per language, a pattern, and the matched texts.
SNIPPETS: dict[str, tuple[str, str, str, list[str]]] = {
    "elixir": (
        "a.ex",
        "defmodule A do\n  def f(x), do: x |> g()\n  def h({:ok, v}), do: {:ok, v + 1}\nend\n",
        "{:ok, $X}",
        ["{:ok, v}", "{:ok, v + 1}"],
    ),
    "haskell": (
        "A.hs",
        "module A where\n\nf :: Int -> IO Int\nf x = do\n  y <- pure x\n  pure (y + 1)\n",
        "pure $X",
        ["pure x", "pure (y + 1)"],
    ),
    "hcl": (
        "main.tf",
        'variable "region" {\n  default = "eu-west-1"\n}\nname = "web"\ncount = 2\n',
        '$K = "$S"',
        ['default = "eu-west-1"', 'name = "web"'],
    ),
    "markdown": (
        "README.md",
        "# Title\n\nSome text.\n\n## Usage\n\n> quoted\n",
        "## $T",
        ["## Usage\n"],
    ),
    "nix": (
        "default.nix",
        "{ pkgs ? import <nixpkgs> { } }:\nwith pkgs; if stdenv.isLinux then hello else null\n",
        "if $C then $A else $B",
        ["if stdenv.isLinux then hello else null"],
    ),
    "scala": (
        "A.scala",
        "object A {\n  def f(x: Int): Int = if (x > 0) x else -x\n}\n",
        "if ($C) $A else $B",
        ["if (x > 0) x else -x"],
    ),
    "solidity": (
        "A.sol",
        "pragma solidity ^0.8.20;\n\ncontract A {\n  error Bad(uint256 x);\n"
        "  event Done(address who);\n  function f() public { emit Done(msg.sender); }\n}\n",
        "error $E($$$);",
        ["error Bad(uint256 x);"],
    ),
    "yaml": (
        "play.yml",
        "- hosts: all\n  tasks:\n    - name: ping\n      ping:\n      when: x\n",
        "name: $N",
        ["name: ping"],
    ),
    "zig": (
        "main.zig",
        'const std = @import("std");\nfn add(a: i32, b: i32) i32 {\n    return a + b;\n}\n'
        "pub fn main() void {\n    const x = add(1, 2);\n    _ = x;\n}\n",
        "const $X = $Y;",
        ['const std = @import("std");', "const x = add(1, 2);"],
    ),
}


def _ast_grep() -> str | None:
    local = Path(sys.executable).with_name("ast-grep")
    return str(local) if local.exists() else shutil.which("ast-grep")


@pytest.mark.parametrize("name", sorted(AST_GREP))
def test_the_table_has_ast_greps_names_and_extensions(name: str) -> None:
    aliases, extensions, expando = AST_GREP[name]
    lang = table.BY_NAME[name]
    assert sorted(lang.extensions) == sorted(extensions)
    for alias in aliases:
        assert table.canonical_name(alias.upper()) == name
        assert get_lang_spec(alias).name == name
    for ext in extensions:
        assert table.language_for_path(f"src/file.{ext}") == name
    assert LANGUAGES[name].expando == expando


def test_python_has_ast_greps_bazel_extension() -> None:
    assert table.language_for_path("BUILD.bazel") == "python"


def test_dart_toml_and_sql_are_not_languages() -> None:
    for path in ("main.dart", "pyproject.toml", "schema.sql"):
        assert table.language_for_path(path) is None


def test_data_and_markup_declare_nothing() -> None:
    assert {n for n in AST_GREP if not table.BY_NAME[n].declares} == {"hcl", "markdown", "yaml"}


@pytest.mark.parametrize("name", sorted(AST_GREP))
def test_the_grammar_loads_without_deprecated_calls_and_parses(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        language = get_ts_language(name)
    assert language.abi_version >= 14
    path, source, _pattern, _texts = SNIPPETS[name]
    tree = parse(name, source.encode())
    assert not tree.root_node.has_error, str(tree.root_node)


def test_markdown_is_read_with_the_block_grammar() -> None:
    root = parse("markdown", b"# Hello *world*\n").root_node
    heading = root.named_children[0].named_children[0]
    assert heading.type == "atx_heading"
    assert [c.type for c in heading.named_children] == ["atx_h1_marker", "inline"]


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_a_snippet_matches_as_in_ast_grep(name: str, tmp_path: Path) -> None:
    path, source, pattern, texts = SNIPPETS[name]
    data = source.encode()
    found = compile_pattern(pattern, name).find(data)
    assert [data[m.start_byte : m.end_byte].decode() for m in found] == texts
    binary = _ast_grep()
    if binary is None:
        pytest.skip("ast-grep is not installed")
    (tmp_path / path).write_bytes(data)
    proc = subprocess.run(
        [binary, "run", "-p", pattern, "-l", name, "--json=stream", path],
        cwd=tmp_path,
        capture_output=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode in (0, 1), proc.stderr
    spans = [json.loads(line)["range"]["byteOffset"] for line in proc.stdout.splitlines()]
    assert [(s["start"], s["end"]) for s in spans] == [(m.start_byte, m.end_byte) for m in found]


SCALA_SOURCE = """\
package demo

import scala.collection.{mutable, immutable => im}
import scala.util.Try

trait Shape { def area: Double }

class Circle(r: Double) extends Base[Double] with Shape {
  def area: Double = math.Pi * r * r
  def grow(k: Double): Circle = new Circle(r * k)
}

object Circle {
  val Unit = new Circle(1)
  def parse(s: String) = Try(s.toDouble).map(apply)
}
"""
SCALA_DEFS = [
    ("demo", "module", "", 1),
    ("Shape", "interface", "", 6),
    ("area", "method", "Shape", 6),
    ("Circle", "class", "", 8),
    ("r", "property", "Circle", 8),
    ("area", "method", "Circle", 9),
    ("grow", "method", "Circle", 10),
    ("Circle", "object", "", 13),
    ("Unit", "variable", "Circle", 14),
    ("parse", "method", "Circle", 15),
]
SCALA_REFS = [
    ("mutable", "import", 3, None, "mutable"),
    ("immutable", "import", 3, None, "immutable"),
    ("Try", "import", 4, None, "Try"),
    ("Base", "inherit", 8, "Circle"),
    ("Shape", "inherit", 8, "Circle"),
    ("Circle", "reference", 10, "Circle.grow"),
    ("Circle", "reference", 14, "Circle.Unit"),
    ("map", "call", 15, "Circle.parse"),
    ("Try", "call", 15, "Circle.parse"),
]

ELIXIR_SOURCE = """\
defmodule Shop.Cart do
  alias Shop.Item
  import Enum, only: [map: 2]
  use GenServer

  @doc "Totals the cart."
  def total(items) do
    items |> map(&Item.price/1) |> Enum.sum()
  end

  defp check(x) when x > 0, do: validate(x)
end
"""
ELIXIR_DEFS = [
    ("Shop.Cart", "module", "", 1),
    ("total", "function", "Shop.Cart", 7),
    ("check", "function", "Shop.Cart", 11),
]
ELIXIR_REFS = [
    ("Shop.Item", "import", 2, "Shop.Cart", "Shop.Item"),
    ("Enum", "import", 3, "Shop.Cart", "Enum"),
    ("GenServer", "import", 4, "Shop.Cart", "GenServer"),
    ("map", "call", 8, "Shop.Cart.total"),
    ("Item", "reference", 8, "Shop.Cart.total"),
    ("price", "call", 8, "Shop.Cart.total"),
    ("Enum", "reference", 8, "Shop.Cart.total"),
    ("sum", "call", 8, "Shop.Cart.total"),
    ("validate", "call", 11, "Shop.Cart.check"),
]

SOLIDITY_SOURCE = """\
pragma solidity ^0.8.20;

import "./Base.sol";
import {IERC20, SafeMath as M} from "./Lib.sol";

contract Vault is Base, Ownable {
    event Paid(address to);
    modifier live() { _; }
    function pay(address to) public live {
        token.transfer(to, 1);
        emit Paid(to);
        check();
    }
}

function helper() pure {}
"""
SOLIDITY_DEFS = [
    ("Vault", "class", "", 6),
    ("Paid", "class", "Vault", 7),
    ("live", "method", "Vault", 8),
    ("pay", "method", "Vault", 9),
    ("helper", "function", "", 16),
]
SOLIDITY_REFS = [
    ("./Base.sol", "import", 3, None, "./Base.sol"),
    ("IERC20", "import", 4, None, "./Lib.sol"),
    ("SafeMath", "import", 4, None, "./Lib.sol"),
    ("Base", "inherit", 6, "Vault"),
    ("Ownable", "inherit", 6, "Vault"),
    ("transfer", "call", 10, "Vault.pay"),
    ("Paid", "reference", 11, "Vault.pay"),
    ("check", "call", 12, "Vault.pay"),
]


def _rows(path: str, source: str, lang: str) -> tuple[list[tuple[object, ...]], ...]:
    tags = extract_tags(path, source.encode(), lang)
    assert (tags.complete, tags.reason) == (True, None)
    qualified = {d.id: d.qualified for d in tags.defs}
    defs: list[tuple[object, ...]] = [(d.name, d.kind, d.container, d.line) for d in tags.defs]
    refs: list[tuple[object, ...]] = []
    for r in tags.refs:
        row = (r.name, r.kind, r.line, qualified[r.enclosing] if r.enclosing else None)
        refs.append((*row, r.module) if r.module is not None else row)
    return defs, refs


@pytest.mark.parametrize(
    ("lang", "path", "source", "defs", "refs"),
    [
        ("scala", "src/Circle.scala", SCALA_SOURCE, SCALA_DEFS, SCALA_REFS),
        ("elixir", "lib/cart.ex", ELIXIR_SOURCE, ELIXIR_DEFS, ELIXIR_REFS),
        ("solidity", "contracts/Vault.sol", SOLIDITY_SOURCE, SOLIDITY_DEFS, SOLIDITY_REFS),
    ],
    ids=["scala", "elixir", "solidity"],
)
def test_tags_of_the_new_languages(
    lang: str,
    path: str,
    source: str,
    defs: list[tuple[object, ...]],
    refs: list[tuple[object, ...]],
) -> None:
    assert tags_supported(lang)
    got_defs, got_refs = _rows(path, source, lang)
    assert got_defs == defs
    assert sorted(got_refs, key=str) == sorted(refs, key=str)


@pytest.mark.parametrize("lang", ["haskell", "nix", "zig"])
def test_languages_without_tags_say_so(lang: str) -> None:
    assert not tags_supported(lang)
    path, source, _pattern, _texts = SNIPPETS[lang]
    tags = extract_tags(path, source.encode(), lang)
    assert (tags.complete, tags.reason) == (False, f"no tags rules for {lang}")


@pytest.mark.parametrize("lang", ["hcl", "markdown", "yaml"])
def test_languages_that_declare_nothing_are_complete_without_tags(lang: str) -> None:
    """Data and markup declare no symbols (docs/query.md#languages): their files are no gap
    in a graph or a symbols: answer (five README.md files made requests' graph: incomplete)."""
    assert not tags_supported(lang)
    path, source, _pattern, _texts = SNIPPETS[lang]
    tags = extract_tags(path, source.encode(), lang)
    assert (tags.complete, tags.reason) == (True, None)
