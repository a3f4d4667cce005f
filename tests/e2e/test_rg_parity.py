"""ripgrep parity on a real tree: sleuth's text/regex search finds exactly the lines rg finds.

Corpus: the Django 5.2.x sdist (about 6,900 files, 1,384 of them binary, one UTF-8 BOM file, two
non-UTF-8 files, hidden files, no ignore files), fetched once by ``tests/corpus.py``.

Oracle: ripgrep 14.1.0 (``.venv/bin/rg``, pinned in pyproject) run with the walking rules of
docs/faces.md#which-files-are-searched spelled out, so that both sides search the same set of files:

* ``--no-config``: no user rc file changes the semantics;
* ``--hidden``: hidden files and folders are searched;
* ``--no-require-git``: ``.gitignore`` is honoured outside a git repository too;
* ``-g '!.git/' -g '!.sleuth/'``: the VCS folder and sleuth's state folder are never searched;
* ``--max-filesize 8M``: the size cap;
* rg's default binary handling (a NUL byte in what it reads first) skips the binary files that
  sleuth skips (no file in this tree has its first NUL after 8 KiB, which is checked below).

For every query the SET of ``(path, line)`` that sleuth reports over ALL pages (following
``next_cursor`` with ``limit=500``) must equal the set of lines rg prints. Most queries run in
process through ``sleuth.api.Workbench``; a few go through ``sleuth search ... --json``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.e2e.conftest import tool

pytestmark = pytest.mark.corpus

REPO = Path(__file__).resolve().parents[2]
PAGE = 500
MAX_PAGES = 1000  # a runaway cursor loop fails instead of hanging


def _load_corpus_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "sleuth_tests_corpus", REPO / "tests" / "corpus.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("sleuth_tests_corpus", module)
    spec.loader.exec_module(module)
    return module


RG_BASE = (
    "--no-config",
    "--hidden",
    "--no-require-git",
    "--max-filesize",
    "8M",
    "-g",
    "!.git/",
    "-g",
    "!.sleuth/",
    "-n",
    "--no-heading",
    "--with-filename",
    "--null",
    "--color",
    "never",
)

Hit = tuple[str, int]


@dataclass(frozen=True)
class Case:
    """One parity query: how sleuth is asked and how rg is asked."""

    id: str
    query: str  # the sleuth query string (``regex:`` prefix for regexes)
    rg: tuple[str, ...]  # rg's pattern arguments, e.g. ("-F", "-e", "return")
    case_sensitive: bool = True
    path: str = "/"
    include: tuple[str, ...] = ()
    via: str = "api"  # "api" (in process) or "cli" (sleuth search --json)
    min_lines: int = 1  # guards against a query that silently stopped matching anything
    literal: str | None = field(default=None)  # checks each match's byte range when set


def lit(
    id: str, text: str, *, i: bool = False, via: str = "api", min_lines: int = 1, **kw: Any
) -> Case:
    rg = ("-F", "-i", "-e", text) if i else ("-F", "-e", text)
    return Case(
        id, text, rg, case_sensitive=not i, via=via, min_lines=min_lines, literal=text, **kw
    )


def rx(
    id: str,
    pattern: str,
    *,
    i: bool = False,
    via: str = "api",
    min_lines: int = 1,
    rg_pattern: str | None = None,
    **kw: Any,
) -> Case:
    """A ``regex:`` case; ``rg_pattern`` is rg's spelling when it differs from sleuth's."""
    pat = pattern if rg_pattern is None else rg_pattern
    rg = ("-i", "-e", pat) if i else ("-e", pat)
    return Case(
        id, f"regex:{pattern}", rg, case_sensitive=not i, via=via, min_lines=min_lines, **kw
    )


CASES: list[Case] = [
    # literals: rare, medium, common (tens of pages), with spaces and punctuation
    lit("lit_rare", "_check_relationship_model", min_lines=2),
    lit("lit_medium", "get_user_model", min_lines=40),
    lit("lit_common_return", "return", min_lines=17000),
    lit("lit_spaces", "def __init__(self", min_lines=500),
    lit("lit_punct_call", "self.assertEqual(", min_lines=10000),
    lit("lit_dotted", "django.db.models", min_lines=100),
    lit("lit_hidden_file", "coverage", min_lines=5),
    lit("lit_ci", "content-type", i=True, min_lines=500),
    lit("lit_ci_camel", "querysetequal", i=True, min_lines=100),
    # Unicode literals that exist in the locale files
    lit("uni_e_acute", "é", min_lines=2000),
    lit("uni_u_umlaut_upper", "Ü", min_lines=30),
    lit("uni_u_umlaut_ci", "ü", i=True, min_lines=900),
    lit("uni_sharp_s", "Straße", min_lines=2),
    lit("uni_cjk", "日本", min_lines=3),
    # regexes: anchors, classes, word boundaries, alternation, Unicode
    rx("re_anchor_start", "^import ", min_lines=1000),
    rx("re_anchor_end", ";$", min_lines=10000),
    rx("re_trailing_ws", r"\s+$", min_lines=10),
    rx("re_class_upper3", "[A-Z]{3,}", path="django/db", min_lines=1000),
    rx("re_class_upper20", "[A-Z]{20,}", min_lines=10),
    rx("re_word_def", r"\bdef\b", min_lines=30000),
    # sleuth's \d \w \b \s are ASCII, as in ECMAScript (sleuth/text_search/regex_syntax.py);
    # rg's are Unicode. This scope holds Bengali, Persian, Khmer, Kannada, Burmese and Nepali
    # digits: with rg's own \d, 26 more lines match (e.g. fa/LC_MESSAGES/django.po:72 "۷ روز اخیر").
    # rg is asked for ASCII digits here; test_unicode_digits_need_a_class pins the other side.
    rx(
        "re_digits",
        r"\d+",
        rg_pattern=r"(?-u:\d)+",
        path="django/contrib/admin/locale",
        min_lines=5000,
    ),
    rx("re_digits_unicode_class", r"\p{Nd}+", path="django/contrib/admin/locale", min_lines=5000),
    rx("re_date", r"\d{4}-\d{2}-\d{2}", min_lines=3000),
    rx("re_alt_todo", "TODO|FIXME", min_lines=40),
    rx("re_alt_todo_xxx", "TODO|FIXME|XXX", min_lines=60),
    rx("re_raise_except", r"(raise|except)\s+\w+Error", min_lines=2500),
    rx("re_ci_content_type", "content[-_]?type", i=True, min_lines=3000),
    rx("re_inline_ci", "(?i)straße", min_lines=2),
    rx("re_greek", r"\p{Greek}+", min_lines=1000),
    rx("re_latin1_run", "[À-ÿ]{4,}", min_lines=20),
    rx("re_email", r"\w+@\w+\.com", path="django/contrib", min_lines=1000),
    rx("re_named_group", r"(?P<kw>class|def) Test\w+", min_lines=500),
    rx("re_nongreedy", r"\{%.*?%\}", path="django/contrib/admin/templates", min_lines=500),
    # scoping
    lit("lit_include_py", "ForeignKey", include=("*.py",), min_lines=1000),
    lit("lit_scoped_file", "def ", path="django/db/models/query.py", min_lines=100),
    # through the CLI (sleuth search ... --json), following next_cursor
    lit("cli_lit_rare", "_check_relationship_model", via="cli", min_lines=2),
    lit("cli_lit_ci", "content-type", i=True, via="cli", min_lines=500),
    rx("cli_re_alt", "TODO|FIXME|XXX", via="cli", min_lines=60),
    rx("cli_re_unicode", r"\p{Greek}+", via="cli", min_lines=1000),
]


@cache
def django_tree() -> Path:
    tree: Path = _load_corpus_module().django_tree()
    return tree


def rg_lines(tree: Path, case: Case) -> set[Hit]:
    """The (path, line) pairs ripgrep prints for ``case`` on ``tree``."""
    args = [tool("rg"), *RG_BASE]
    for glob in case.include:
        args += ["-g", glob]
    args += [*case.rg, "--", case.path.strip("/") or "."]
    proc = subprocess.run(args, cwd=tree, capture_output=True, check=False)
    assert proc.returncode in (0, 1), f"rg failed ({proc.returncode}): {proc.stderr.decode()}"
    hits: set[Hit] = set()
    for raw in proc.stdout.split(b"\n"):
        if not raw:
            continue
        name, _, rest = raw.partition(b"\0")
        line_no, _, _ = rest.partition(b":")
        path = os.fsdecode(name)
        path = path[2:] if path.startswith("./") else path
        hits.add((path, int(line_no)))
    return hits


def _api_pages(tree: Path, case: Case) -> Iterator[dict[str, Any]]:
    from sleuth.api import Workbench

    wb = _workbench(tree) if tree == django_tree() else Workbench(tree)
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        res = wb.search(
            case.query,
            path=case.path,
            include=case.include,
            limit=PAGE,
            cursor=cursor,
            context=0,
            case_sensitive=case.case_sensitive,
        )
        page: dict[str, Any] = res.to_json()
        yield page
        cursor = page.get("next_cursor")
        if cursor is None:
            return
    raise AssertionError(f"more than {MAX_PAGES} pages for {case.id}")


@cache
def _workbench(tree: Path) -> Any:
    from sleuth.api import Workbench

    return Workbench(tree)


def _cli_pages(tree: Path, case: Case) -> Iterator[dict[str, Any]]:
    base = [tool("sleuth"), "search", case.query, "--root", str(tree), "--json"]
    base += ["--limit", str(PAGE), "--context", "0"]
    if case.path != "/":
        base += ["--path", case.path]
    for glob in case.include:
        base += ["--include", glob]
    if not case.case_sensitive:
        base.append("-i")
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        cmd = base if cursor is None else [*base, "--cursor", cursor]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, f"sleuth exited {proc.returncode}: {proc.stdout}{proc.stderr}"
        page: dict[str, Any] = json.loads(proc.stdout)
        yield page
        cursor = page.get("next_cursor")
        if cursor is None:
            return
    raise AssertionError(f"more than {MAX_PAGES} pages for {case.id}")


@dataclass
class SleuthRun:
    hits: set[Hit]
    matches: list[dict[str, Any]]
    pages: list[dict[str, Any]]


def sleuth_lines(tree: Path, case: Case) -> SleuthRun:
    """All pages of sleuth's answer for ``case``; each match counts for every line it spans."""
    pages = list(_cli_pages(tree, case) if case.via == "cli" else _api_pages(tree, case))
    matches = [m for page in pages for m in page["matches"]]
    hits: set[Hit] = set()
    for m in matches:
        end = m.get("end_line") or m["line"]
        for line in range(m["line"], end + 1):
            hits.add((m["path"], line))
    return SleuthRun(hits, matches, pages)


def _diff_report(case: Case, ours: set[Hit], theirs: set[Hit]) -> str:
    only_sleuth = sorted(ours - theirs)
    only_rg = sorted(theirs - ours)
    lines = [
        f"query {case.query!r} (case_sensitive={case.case_sensitive}, path={case.path!r}, "
        f"via={case.via}): sleuth {len(ours)} lines, rg {len(theirs)} lines",
        f"only sleuth ({len(only_sleuth)}), first 20:",
        *(f"  {p}:{n}" for p, n in only_sleuth[:20]),
        f"only rg ({len(only_rg)}), first 20:",
        *(f"  {p}:{n}" for p, n in only_rg[:20]),
    ]
    return "\n".join(lines)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_line_set_matches_ripgrep(case: Case) -> None:
    tree = django_tree()
    expected = rg_lines(tree, case)
    assert len(expected) >= case.min_lines, f"rg found only {len(expected)} lines for {case.id}"

    run = sleuth_lines(tree, case)

    assert run.hits == expected, _diff_report(case, run.hits, expected)
    # Pagination is sound: every page but the last is full, all complete, no match repeated.
    assert all(p["complete"] is True for p in run.pages), [
        p.get("incomplete_reason") for p in run.pages
    ]
    assert all(len(p["matches"]) == PAGE or p.get("cut") == "max_bytes" for p in run.pages[:-1])
    keys = [(m["path"], m["line"], m["column"]) for m in run.matches]
    assert len(keys) == len(set(keys)), "a match was reported twice across pages"
    assert keys == sorted(keys), "matches are not in (path, line, column) order across pages"
    first_total = run.pages[0].get("total")
    if first_total is not None:
        assert first_total == len(run.matches)


# Literal queries: each match's byte range holds the query text (docs/faces.md#positions, byte
# ranges).
BYTE_CHECKED = [
    c for c in CASES if c.literal is not None and c.via == "api" and c.id != "lit_common_return"
]


@pytest.mark.parametrize("case", BYTE_CHECKED, ids=[c.id for c in BYTE_CHECKED])
def test_literal_byte_ranges_hold_the_query(case: Case) -> None:
    tree = django_tree()
    run = sleuth_lines(tree, case)
    assert case.literal is not None and run.matches
    needle = case.literal
    for m in run.matches[:2000]:
        data = (tree / m["path"]).read_bytes()
        found = data[m["start_byte"] : m["end_byte"]].decode("utf-8")
        if case.case_sensitive:
            assert found == needle, (m["path"], m["line"], found)
        else:
            assert found.casefold() == needle.casefold(), (m["path"], m["line"], found)


def _nul_in_head(path: Path, head: int) -> bool:
    with open(path, "rb") as fh:
        return b"\0" in fh.read(head)


def test_same_file_set_and_binary_rule() -> None:
    """``files:*`` lists exactly the files ``rg --files`` walks (same ignore rules), binary included."""
    tree = django_tree()
    listed = subprocess.run(
        [tool("rg"), *RG_BASE[:9], "--files", "--null"],
        cwd=tree,
        capture_output=True,
        check=True,
    ).stdout
    rg_files = {os.fsdecode(p) for p in listed.split(b"\0") if p}
    assert len(rg_files) > 6000

    # The binary rule is the same on both sides for this tree: every file with a NUL has it in
    # the first 8 KiB (sleuth's window), which is inside rg's first read as well, so the line
    # parity above compares the same searched files.
    with_nul = {p for p in rg_files if _nul_in_head(tree / p, 1 << 30)}
    with_nul_head = {p for p in rg_files if _nul_in_head(tree / p, 8192)}
    assert with_nul == with_nul_head
    assert len(with_nul) > 1000

    wb = _workbench(tree)
    seen: list[str] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = wb.search("files:*", limit=PAGE, cursor=cursor).to_json()
        seen += [m["path"] for m in page["matches"]]
        cursor = page.get("next_cursor")
        if cursor is None:
            break
    assert len(seen) == len(set(seen))
    only_sleuth = sorted(set(seen) - rg_files)[:20]
    only_rg = sorted(rg_files - set(seen))[:20]
    assert set(seen) == rg_files, f"only sleuth: {only_sleuth}\nonly rg: {only_rg}"


def test_binary_files_counted_as_skipped() -> None:
    """A complete search of the whole tree counts each binary file as skipped
    (docs/faces.md#which-files-are-searched), whether it ran on a fresh ``Workbench`` or after the
    trigram index was built and persisted."""
    tree = django_tree()
    rg_files = subprocess.run(
        [tool("rg"), *RG_BASE[:9], "--files", "--null"], cwd=tree, capture_output=True, check=True
    ).stdout.split(b"\0")
    with_nul = {os.fsdecode(p) for p in rg_files if p and _nul_in_head(tree / os.fsdecode(p), 8192)}
    assert len(with_nul) > 1000
    wb = _workbench(tree)
    wb.index_now()
    page = wb.search("_check_relationship_model", limit=PAGE).to_json()
    assert page["complete"] is True and page["next_cursor"] is None
    assert page["skipped"]["binary"] == len(with_nul), page["skipped"]
    assert page["skipped"]["too_large"] == 0


def test_unicode_digits_need_a_class() -> None:
    """``\\d`` is ASCII in sleuth (ECMAScript); ``\\p{Nd}`` finds the non-ASCII digits rg's
    ``\\d`` finds, so the lines they add are exactly those with a non-ASCII digit."""
    tree = django_tree()
    scope = "django/contrib/admin/locale"
    ascii_digits = sleuth_lines(tree, rx("d", r"\d+", path=scope)).hits
    any_digits = sleuth_lines(tree, rx("nd", r"\p{Nd}+", path=scope)).hits
    rg_unicode = rg_lines(tree, rx("rg", r"\d+", path=scope))
    assert any_digits == rg_unicode
    extra = any_digits - ascii_digits
    assert extra, "expected lines with non-ASCII digits in the locale files"
    for path, line in extra:
        text = (tree / path).read_text(encoding="utf-8").splitlines()[line - 1]
        assert any(ch.isdigit() and not ch.isascii() for ch in text), (path, line, text)
        assert not any(ch in "0123456789" for ch in text), (path, line, text)
