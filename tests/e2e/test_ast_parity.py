"""ast-grep parity on real code: sleuth's ``ast:`` finds exactly the matches ast-grep finds.

Corpora (``tests/ast_corpora.py``, fetched once from PyPI, npm and Debian, cached): Django
(Python; its stylesheets, templates and fixtures for CSS, HTML and JSON), rxjs ``src/``
(TypeScript), the tokio crate (Rust), psutil's C extension (C), ansible-core's integration
tests (YAML), OpenZeppelin Contracts (Solidity), and from Debian source packages Elixir's own
``lib/`` (Elixir), aeson (Haskell), Nix and its manual (Nix, Markdown), Scala's standard
library (Scala) and HCL's test fixtures (HCL); from npm, react-native-screens' Android code
(Kotlin).

Same files on both sides: for each corpus the test copies the corpus's source files of the
language (and nothing else) into a private workspace, so there is no ignore file, no binary
or non-UTF-8 file and no stale ``.sleuth/`` state of an earlier run (a registered result is
reused for the same query over the same listing, which would otherwise hide a change of the
engine). ast-grep is handed the copied files as an explicit list (explicit paths are searched even when hidden,
as sleuth searches hidden files), and ``test_sleuth_lists_the_copied_files`` checks that
sleuth's own walk of the workspace sees exactly that list.

Oracle: ``ast-grep run -p PATTERN -l LANG --json=stream FILES`` (ast-grep-cli 0.51.1, pinned in
pyproject), plus ``--selector`` / ``--strictness`` when the case sets them. For every case the
multiset of ``(path, start_byte, end_byte)`` over ALL of sleuth's pages (``limit=500``, following
``next_cursor``) must equal ast-grep's, and for every match both report, each named capture
must have the same text (for ``$$$`` captures: from the first captured node to the last).

Patterns are ones both engines read the same way. Patterns where sleuth differs on purpose
(docs/query.md#ast-structural-patterns: C calls such as ``free($P)`` that ast-grep reads as a macro
type, patterns that do not parse cleanly, which sleuth rejects) are covered by ``test_ast_e2e.py``,
not here.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.e2e.conftest import tool

pytestmark = pytest.mark.corpus

REPO = Path(__file__).resolve().parents[2]
PAGE = 500
MAX_PAGES = 1000  # a runaway cursor loop fails instead of hanging

Hit = tuple[str, int, int]  # (path, start_byte, end_byte)


def _load_ast_corpora() -> ModuleType:
    name = "sleuth_tests_ast_corpora"
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    spec = importlib.util.spec_from_file_location(name, REPO / "tests" / "ast_corpora.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


ast_corpora = _load_ast_corpora()


@dataclass(frozen=True)
class Case:
    """One parity pattern on one corpus, optionally narrowed to a sub-folder."""

    id: str
    corpus: str
    pattern: str
    min_matches: int  # guards against a pattern that silently stopped matching anything
    scope: str = ""  # a folder of the corpus ("" = the corpus's whole source scope)
    selector: str | None = None
    strictness: str | None = None


CASES: list[Case] = [
    # Python: Django (2,800 files; the broad patterns run on a sub-folder to keep the time down)
    Case("py_objects_filter", "django", "$X.objects.filter($$$)", 2000),
    Case("py_def", "django", "def $F($$$A): $$$B", 2500, scope="django/db"),
    Case("py_raise", "django", "raise $E($$$)", 1500, scope="django"),
    Case("py_isinstance", "django", "isinstance($A, $B)", 1000, scope="django"),
    Case("py_isinstance_cst", "django", "isinstance($A, $B)", 1000, "django", strictness="cst"),
    Case("py_same_args", "django", "self.assertEqual($A, $A)", 10, scope="tests"),
    Case("py_dict_pair", "django", "{$K: $V}", 300, scope="django/utils", selector="pair"),
    Case("py_if_else", "django", "if $C: $$$B", 3000, scope="django/db"),
    # TypeScript: rxjs src/
    Case("ts_new", "rxjs", "new $C($$$A)", 100),
    Case("ts_import", "rxjs", "import { $$$ } from '$M'", 800),
    Case("ts_arrow", "rxjs", "$X => $Y", 400),
    Case("ts_if", "rxjs", "if ($C) { $$$ }", 300),
    Case("ts_overload", "rxjs", "export function $F<$$$T>($$$A): $R;", 200),
    Case("ts_throw", "rxjs", "throw new $E($$$)", 20),
    Case("ts_interface_relaxed", "rxjs", "interface $I { $$$ }", 20, strictness="relaxed"),
    # Rust: tokio
    Case("rs_unwrap", "tokio", "$X.unwrap()", 900),
    Case("rs_impl_for", "tokio", "impl $T for $U { $$$ }", 400),
    Case("rs_println", "tokio", "println!($$$)", 3),
    Case("rs_assert_eq", "tokio", "assert_eq!($A, $B)", 200),
    Case("rs_fn_ret", "tokio", "fn $F($$$A) -> $R { $$$B }", 700, scope="src"),
    Case("rs_match", "tokio", "match $X { $$$ }", 300),
    Case("rs_try", "tokio", "$X?", 300),
    # C: psutil
    Case("c_if", "psutil", "if ($C) { $$$ }", 600),
    Case("c_return", "psutil", "return $X;", 1000),
    Case("c_sizeof", "psutil", "sizeof($T)", 300),
    Case("c_for", "psutil", "for ($I; $C; $S) { $$$ }", 50),
    Case("c_arrow_assign", "psutil", "$A->$B = $C", 15),
    Case("c_static_fn", "psutil", "static $T $F($$$A) { $$$B }", 40),
    Case("c_eq_null", "psutil", "$X == NULL", 200),
    Case("c_goto", "psutil", "goto $L;", 500),
    # CSS, HTML, JSON: the stylesheets, templates and fixtures of the Django sdist
    Case("css_declaration", "django-css", "$P: $V;", 2000),
    Case("css_class_rule", "django-css", ".$C { $$$ }", 100),
    Case("css_media", "django-css", "@media $Q { $$$ }", 5),
    Case("css_rule", "django-css", "$S { $$$ }", 1000),
    Case("html_link", "django-html", "<a $$$A>$$$C</a>", 200),
    Case("html_div_class", "django-html", '<div class="$C">$$$</div>', 150),
    Case("html_input", "django-html", "<input $$$>", 40),
    Case("html_script", "django-html", "<script $$$A>$$$B</script>", 40),
    Case("json_object", "django-json", "{ $$$ }", 300),
    Case("json_array", "django-json", "[$$$]", 150),
    Case("json_true", "django-json", "true", 10),
    # YAML: ansible-core's integration test targets
    Case("yaml_name", "ansible", "name: $N", 8000),
    Case("yaml_when", "ansible", "when: $C", 500),
    Case("yaml_register", "ansible", "register: $R", 3000),
    Case("yaml_assert_that", "ansible", "that: $$$", 2500),
    Case("yaml_when_cst", "ansible", "when: $C", 500, strictness="cst"),
    # Solidity: OpenZeppelin Contracts
    Case("sol_function", "openzeppelin", "function $F($$$A) $$$M { $$$B }", 1300),
    Case("sol_import", "openzeppelin", 'import {$$$} from "$P";', 350),
    Case("sol_error", "openzeppelin", "error $E($$$);", 150),
    Case("sol_event", "openzeppelin", "event $E($$$);", 90),
    Case("sol_abstract", "openzeppelin", "abstract contract $C is $$$B { $$$ }", 60),
    Case("sol_event_cst", "openzeppelin", "event $E($$$);", 90, strictness="cst"),
    # Elixir: Elixir's own lib/
    Case("ex_def", "elixir", "def $F($$$A) do $$$B end", 1900),
    Case("ex_ok_tuple", "elixir", "{:ok, $X}", 2000),
    Case("ex_pipe", "elixir", "$A |> $B", 2400),
    Case("ex_case", "elixir", "case $X do $$$ end", 1200),
    Case("ex_raise", "elixir", "raise $E, $M", 300),
    Case("ex_ok_tuple_cst", "elixir", "{:ok, $X}", 2000, strictness="cst"),
    Case("ex_case_ast", "elixir", "case $X do $$$ end", 1200, strictness="ast"),
    # Haskell: aeson
    Case("hs_pure", "aeson", "pure $X", 80),
    Case("hs_fmap", "aeson", "$F <$> $X", 110),
    Case("hs_if", "aeson", "if $C then $A else $B", 50),
    Case("hs_do", "aeson", "do $$$", 130),
    Case("hs_compose", "aeson", "$F . $G", 550),
    Case("hs_fmap_cst", "aeson", "$F <$> $X", 110, strictness="cst"),
    # Nix: Nix's sources
    Case("nix_with", "nix", "with $A; $B", 80),
    Case("nix_import", "nix", "import $P", 80),
    Case("nix_builtins", "nix", "builtins.$F $$$", 180),
    Case("nix_if", "nix", "if $C then $A else $B", 80),
    Case("nix_fn_set", "nix", "{ $$$A }: $B", 70),
    Case("nix_with_ast", "nix", "with $A; $B", 80, strictness="ast"),
    # Markdown: Nix's manual
    Case("md_h1", "nix-manual", "# $T", 180),
    Case("md_h2", "nix-manual", "## $T", 120),
    Case("md_quote", "nix-manual", "> $Q", 20),
    Case("md_fence", "nix-manual", "```$L\n$$$\n```", 3),
    # Scala: the standard library of Scala 2.11
    Case("scala_def", "scala", "def $F($$$A): $T = $B", 1000),
    Case("scala_if", "scala", "if ($C) $A else $B", 1300),
    Case("scala_match", "scala", "$X match { $$$ }", 350),
    Case("scala_new", "scala", "new $C($$$A)", 1400),
    Case("scala_throw", "scala", "throw new $E($$$)", 180),
    Case("scala_def_relaxed", "scala", "def $F($$$A): $T = $B", 1000, strictness="relaxed"),
    Case(
        "scala_method_selector",
        "scala",
        "class $C { def $F($$$A): $T = $B }",
        1000,
        selector="function_definition",
    ),
    # HCL: HCL's own test fixtures
    Case("hcl_attr", "hcl", "$K = $V", 60),
    Case("hcl_string", "hcl", '$K = "$S"', 15),
    Case("hcl_block", "hcl", "$B { $K = $V }", 5),
    Case("hcl_cond", "hcl", "$K = $C ? $T : $F", 2),
    # Kotlin: react-native-screens' Android code. The PyPI grammar sleuth uses (tree-sitter-kotlin
    # 1.1.0) is not ast-grep's (fwcd's, tree-sitter-kotlin-sg 0.4), so these are patterns whose
    # trees have the same shape in both; docs/query.md#languages lists the ones that differ.
    Case("kt_fun", "rn-screens", "fun $F($$$A) { $$$B }", 100),
    Case("kt_fun_ret", "rn-screens", "fun $F($$$A): $T { $$$B }", 15),
    Case("kt_when", "rn-screens", "when ($X) { $$$ }", 80),
    Case("kt_return", "rn-screens", "return $X", 250),
    Case("kt_ne_null", "rn-screens", "$A != null", 90),
    Case("kt_apply", "rn-screens", "$X.apply { $$$ }", 60),
    Case("kt_throw", "rn-screens", "throw $E($$$)", 35),
    Case("kt_and", "rn-screens", "$A && $B", 110),
    Case("kt_import", "rn-screens", "import $X", 1200),
    Case("kt_private_val", "rn-screens", "private val $A: $T = $B", 30),
    Case("kt_const_val", "rn-screens", "const val $A = $B", 100),
    Case("kt_super_call", "rn-screens", "super.$F($$$)", 120),
    Case("kt_as", "rn-screens", "$X as $T", 40),
    Case("kt_for", "rn-screens", "for ($I in $C) { $$$ }", 30),
    Case("kt_try_catch", "rn-screens", "try { $$$ } catch ($E: $T) { $$$ }", 6),
    Case("kt_when_cst", "rn-screens", "when ($X) { $$$ }", 80, strictness="cst"),
    Case("zig_import", "zig-std", "const $A = @import($B);", 900),
    Case("zig_fn", "zig-std", "fn $F($$$P) $R { $$$B }", 10_000),
    Case("zig_try", "zig-std", "try $A", 20_000),
    Case("zig_call", "zig-std", "std.debug.assert($A)", 130),
    Case("zig_if", "zig-std", "if ($C) $A else $B", 40),
]


# -- the workspaces -------------------------------------------------------------------------------

# File extensions ast-grep assigns to each language (sleuth's table agrees; checked below).
EXTENSIONS: dict[str, tuple[str, ...]] = {
    "python": (".py", ".py3", ".pyi", ".bzl", ".bazel"),
    "typescript": (".ts", ".cts", ".mts"),
    "rust": (".rs",),
    "c": (".c", ".h"),
    "css": (".css", ".scss"),
    "html": (".html", ".htm", ".xhtml"),
    "json": (".json",),
    "yaml": (".yaml", ".yml"),
    "solidity": (".sol",),
    "elixir": (".ex", ".exs"),
    "haskell": (".hs",),
    "nix": (".nix",),
    "markdown": (".markdown", ".md"),
    "scala": (".scala", ".sc", ".sbt"),
    "hcl": (".hcl", ".nomad", ".tf", ".tfvars", ".workflow"),
    "kotlin": (".kt", ".ktm", ".kts"),
    "zig": (".zig",),
}


@dataclass(frozen=True)
class Workspace:
    """A private copy of one corpus's source files of its language."""

    root: Path
    lang: str
    files: tuple[str, ...]  # workspace-relative POSIX paths, sorted


def _is_utf8(path: Path) -> bool:
    """ast-grep skips a file that is not UTF-8; sleuth searches it binary-safe on purpose
    (``tests/query/test_encoding_marker.py``), so such a file (Django's ``nonutf8.css``) is
    no parity file."""
    try:
        path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def source_files(tree: Path, scope: str, lang: str) -> list[str]:
    """Files under ``tree/scope`` with one of ``lang``'s extensions (hidden ones included)."""
    out: list[str] = []
    base = tree / scope if scope else tree
    for dirpath, dirs, names in os.walk(base):
        dirs[:] = [d for d in dirs if d not in (".git", ".sleuth")]
        for name in names:
            full = Path(dirpath, name)
            wanted = name.endswith(EXTENSIONS[lang]) and full.is_file()
            if wanted and not full.is_symlink() and _is_utf8(full):
                out.append(full.relative_to(tree).as_posix())
    return sorted(out)


def _copy_workspace(name: str, dest: Path) -> Workspace:
    entry = ast_corpora.CORPORA[name]
    tree: Path = entry.fetch()
    files = source_files(tree, entry.scope, entry.lang)
    assert len(files) >= entry.min_files, f"{name}: only {len(files)} {entry.lang} files"
    for rel in files:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(tree / rel, target)
    return Workspace(dest, entry.lang, tuple(files))


@pytest.fixture(scope="session")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Workspace]:
    """``workspace(corpus_name)`` -> the private copy of that corpus (made once per session)."""
    made: dict[str, Workspace] = {}

    def get(name: str) -> Workspace:
        if name not in made:
            made[name] = _copy_workspace(name, tmp_path_factory.mktemp(f"ast-{name}"))
        return made[name]

    return get


_WORKBENCHES: dict[Path, Any] = {}


def _workbench(root: Path) -> Any:
    from sleuth.api import Workbench

    if root not in _WORKBENCHES:
        _WORKBENCHES[root] = Workbench(root, build_index=False)
    return _WORKBENCHES[root]


def _in_scope(path: str, scope: str) -> bool:
    return not scope or path == scope or path.startswith(scope.rstrip("/") + "/")


# -- the two engines ------------------------------------------------------------------------------


@dataclass
class Found:
    """One engine's answer: the matches (a multiset) and, per match, its capture texts."""

    hits: Counter[Hit]
    captures: dict[Hit, dict[str, str]]


def run_ast_grep(ws: Workspace, case: Case) -> Found:
    """ast-grep on the explicit list of the workspace's files in the case's scope."""
    files = [f for f in ws.files if _in_scope(f, case.scope)]
    assert files, f"no {ws.lang} file under {case.scope!r}"
    cmd = [tool("ast-grep"), "run", "-p", case.pattern, "-l", ws.lang, "--json=stream"]
    if case.selector:
        cmd += ["--selector", case.selector]
    if case.strictness:
        cmd += ["--strictness", case.strictness]
    proc = subprocess.run(
        [*cmd, "--", *files], cwd=ws.root, capture_output=True, check=False, timeout=300
    )
    stderr = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode in (0, 1), f"ast-grep failed ({proc.returncode}): {stderr}"
    # A pattern ast-grep reads with an ERROR node is not a parity pattern (sleuth rejects it).
    assert "ERROR" not in stderr and "Warning" not in stderr, stderr
    hits: Counter[Hit] = Counter()
    captures: dict[Hit, dict[str, str]] = {}
    data_of: dict[str, bytes] = {}
    for line in proc.stdout.splitlines():
        item = json.loads(line)
        path = item["file"].removeprefix("./")
        span = item["range"]["byteOffset"]
        hit = (path, span["start"], span["end"])
        hits[hit] += 1
        meta = item.get("metaVariables") or {}
        caps = {name: v["text"] for name, v in (meta.get("single") or {}).items()}
        for name, nodes in (meta.get("multi") or {}).items():
            if name.startswith("_"):
                continue
            if not nodes:
                caps[name] = ""
                continue
            data = data_of.setdefault(path, (ws.root / path).read_bytes())
            first = nodes[0]["range"]["byteOffset"]["start"]
            last = nodes[-1]["range"]["byteOffset"]["end"]
            caps[name] = data[first:last].decode("utf-8")
        captures[hit] = caps
    return Found(hits, captures)


def _pages(ws: Workspace, case: Case) -> Iterator[dict[str, Any]]:
    wb = _workbench(ws.root)
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page: dict[str, Any] = wb.search(
            f"ast:{case.pattern}",
            path=case.scope or "/",
            lang=ws.lang,
            selector=case.selector,
            strictness=case.strictness,
            limit=PAGE,
            cursor=cursor,
            context=0,
        ).to_json()
        yield page
        cursor = page.get("next_cursor")
        if cursor is None:
            return
    raise AssertionError(f"more than {MAX_PAGES} pages for {case.id}")


@dataclass
class SleuthRun:
    """sleuth's answer over all pages."""

    found: Found
    matches: list[dict[str, Any]]
    pages: list[dict[str, Any]]


def run_sleuth(ws: Workspace, case: Case) -> SleuthRun:
    """sleuth's ``ast:`` search in process, every page."""
    pages = list(_pages(ws, case))
    matches = [m for page in pages for m in page["matches"]]
    hits: Counter[Hit] = Counter()
    captures: dict[Hit, dict[str, str]] = {}
    for m in matches:
        hit = (m["path"], m["start_byte"], m["end_byte"])
        hits[hit] += 1
        captures[hit] = {name: c["text"] for name, c in (m.get("captures") or {}).items()}
    return SleuthRun(Found(hits, captures), matches, pages)


def _snippet(ws: Workspace, hit: Hit) -> str:
    path, start, end = hit
    text = (ws.root / path).read_bytes()[start:end].decode("utf-8", "replace")
    return text if len(text) <= 80 else text[:77] + "..."


def _diff_report(ws: Workspace, case: Case, ours: Counter[Hit], theirs: Counter[Hit]) -> str:
    only_sleuth = sorted((ours - theirs).elements())
    only_ag = sorted((theirs - ours).elements())
    lines = [
        f"{case.id}: pattern {case.pattern!r} lang={ws.lang} scope={case.scope!r} "
        f"selector={case.selector} strictness={case.strictness}: sleuth {ours.total()} matches, "
        f"ast-grep {theirs.total()}",
        f"only sleuth ({len(only_sleuth)}), first 20:",
        *(f"  {p} [{s}:{e}] {_snippet(ws, (p, s, e))!r}" for p, s, e in only_sleuth[:20]),
        f"only ast-grep ({len(only_ag)}), first 20:",
        *(f"  {p} [{s}:{e}] {_snippet(ws, (p, s, e))!r}" for p, s, e in only_ag[:20]),
    ]
    return "\n".join(lines)


# -- the tests ------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_matches_equal_ast_grep(case: Case, workspace: Callable[[str], Workspace]) -> None:
    ws = workspace(case.corpus)
    expected = run_ast_grep(ws, case)
    count = expected.hits.total()
    assert count >= case.min_matches, f"ast-grep found only {count} matches for {case.id}"

    run = run_sleuth(ws, case)

    assert run.found.hits == expected.hits, _diff_report(ws, case, run.found.hits, expected.hits)
    # Captures: the same text for every named metavariable of every match.
    wrong = [
        (hit, run.found.captures[hit], expected.captures[hit])
        for hit in sorted(expected.hits)
        if run.found.captures[hit] != expected.captures[hit]
    ]
    assert not wrong, f"{len(wrong)} matches with other captures, first 5:\n" + "\n".join(
        f"  {h}: sleuth {s!r} ast-grep {a!r}" for h, s, a in wrong[:5]
    )
    # Pagination is sound: complete pages, all full but the last, document order per file.
    assert all(p["mode"] == "ast" and p["complete"] is True for p in run.pages), [
        p.get("incomplete_reason") for p in run.pages
    ]
    assert all(len(p["matches"]) == PAGE or p.get("cut") == "max_bytes" for p in run.pages[:-1])
    order = [(m["path"], m["line"], m["column"]) for m in run.matches]
    assert order == sorted(order), "matches are not in (path, line, column) order across pages"
    starts = [(m["path"], m["start_byte"]) for m in run.matches]
    assert starts == sorted(starts), "matches are not in document order"
    first_total = run.pages[0].get("total")
    if first_total is not None:
        assert first_total == len(run.matches)


@pytest.mark.parametrize("name", sorted(ast_corpora.CORPORA))
def test_sleuth_lists_the_copied_files(name: str, workspace: Callable[[str], Workspace]) -> None:
    """sleuth walks exactly the files ast-grep is given, and gives them the same language."""
    from sleuth.ast_search import language_for_path

    ws = workspace(name)
    wb = _workbench(ws.root)
    seen: list[str] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = wb.search("files:*", limit=PAGE, cursor=cursor).to_json()
        seen += [m["path"] for m in page["matches"]]
        cursor = page.get("next_cursor")
        if cursor is None:
            break
    assert sorted(seen) == list(ws.files), (
        f"only sleuth: {sorted(set(seen) - set(ws.files))[:20]}\n"
        f"only the copy: {sorted(set(ws.files) - set(seen))[:20]}"
    )
    assert {language_for_path(p) for p in seen} == {ws.lang}
