"""Structural-search benchmark: sleuth's ``ast:`` against ``ast-grep run`` on the same files.

One run, interleaved round by round (every contender of a query runs in each round, the order
alternating between rounds, so all see the same load on this shared machine; round 0 is a
warm-up and is not counted). Cells are medians; ratios are sleuth / ast-grep (lower is better).

Phases:

* ``cold`` -- a new process per query. ``ast-grep run -p P -l L --json=stream SCOPE`` with its
  whole output drained through a pipe, against

  - ``sleuth search 'ast:P' --lang L --path SCOPE --json --limit 100 --no-daemon`` (the CLI's
    first page in a new process, with its ``total``/``total_at_least``), and
  - ``sleuth all``: every match, in this process, through a new ``Workbench(build_index=False)``
    (no tree cache, no index) paging with ``limit=500`` until ``next_cursor`` is null -- the
    same work ast-grep does. Pages keep the default text budget (``max_bytes`` 16 KiB, so a
    page of long matches holds a few dozen); ``--unbudgeted`` adds a row paging with
    ``max_bytes=None`` (500 a page).

* ``warm`` -- one ``Workbench(root, build_index=True, watch=True)`` kept across the run, as
  ``sleuth mcp`` keeps one (tree cache, trigram index and file listing warm; ``index_now()``
  first), ``search('ast:P', limit=100)`` + ``to_json()`` in
  process, against the same ``ast-grep`` process per query. Two sleuth rows: a *new* search each
  time, and a *repeat* of one identical request.

Fresh searches: sleuth's result registry (``.sleuth/``) hands back the stored result of an
identical earlier request over an unchanged listing. Every sleuth call that should do the work
again therefore carries a never-seen exclude glob (``--exclude sleuth-bench-nonce-N``), which
matches no file and changes nothing but the request's identity. The *repeat* row shows what
the reuse is worth.

Same files: sleuth honours ``.gitignore`` everywhere, searches hidden files and skips files
over 8 MiB; ``ast-grep`` outside a git repository ignores ``.gitignore`` and skips hidden files.
So ``ast-grep`` gets ``--no-ignore hidden`` plus one ``--globs '!PATH'`` for every file of the
language that sleuth does not search (ignored or over the size cap); the header prints both
sides' file counts, and the match counts sit in the tables.

Usage::

    python -m benchmarks.corpora django kernel     # once (from the repository root)
    python -m benchmarks.ast --corpus django --rounds 5 --markdown
    python -m benchmarks.ast --corpus kernel --rounds 1 --markdown     # drivers/, minutes
    python -m benchmarks.ast --corpus kernel --scope drivers/net --phase cold --rounds 1 --markdown
    python -m benchmarks.ast --corpus django --profile def_nolit       # cProfile of sleuth all

Targets (the issues): the CLI's first page with a literal <= 0.5x ast-grep cold, without one
<= 1.2x; warm <= 0.2x; every page (``sleuth all``) <= 1.5x ast-grep's whole run.
"""

from __future__ import annotations

import os
import sys

# This file is named like the standard library's ``ast``, and a script's folder comes first on
# sys.path: drop it before anything imports ``ast`` (dataclasses -> inspect -> ast).
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import argparse  # noqa: E402
import cProfile  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import pstats  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from benchmarks.tools import find_tool  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
LIMIT = 100
PAGE = 500
SIZE_CAP = 8 * 1024 * 1024  # sleuth's default (docs/faces.md#which-files-are-searched)
TARGETS = {"cold_literal": 0.5, "cold_nolit": 1.2, "warm": 0.2, "all_pages": 1.5}

if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


@dataclass(frozen=True)
class Query:
    """One benchmark pattern."""

    id: str
    pattern: str
    lang: str
    literal: bool  # has an identifier literal the prefilter can use


QUERY_SETS: dict[str, list[Query]] = {
    "django": [
        Query("filter_lit", "$X.objects.filter($$$)", "python", True),
        Query("def_nolit", "def $F($$$A): $$$B", "python", False),
    ],
    "kernel": [
        Query("kmalloc_lit", "kmalloc($A, $B)", "c", True),
        Query("if_nolit", "if ($C) { $$$ }", "c", False),
    ],
}
DEFAULT_SCOPE = {"django": "", "kernel": "drivers"}
EXTENSIONS = {"python": (".py", ".py3", ".pyi", ".bzl"), "c": (".c", ".h")}

_nonce = itertools.count()


def _fresh() -> str:
    """An exclude glob that matches nothing and makes the request new (see the docstring)."""
    return f"sleuth-bench-nonce-{os.getpid()}-{next(_nonce)}"


@dataclass
class Series:
    """Timings (seconds) of one contender on one query, plus what it answered last."""

    times: list[float] = field(default_factory=list)
    answer: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.times) if self.times else float("nan")


# -- same files on both sides ----------------------------------------------------------------------


@dataclass
class FileSet:
    """The files of one language in the scope, as sleuth walks them, and ast-grep's excludes."""

    sleuth_files: int
    walked_files: int
    ag_excludes: list[str]


def _walk(tree: Path, scope: str, lang: str) -> set[str]:
    out: set[str] = set()
    for dirpath, dirs, names in os.walk(tree / scope if scope else tree):
        dirs[:] = [d for d in dirs if d not in (".git", ".sleuth")]
        for name in names:
            full = os.path.join(dirpath, name)
            if name.endswith(EXTENSIONS[lang]) and not os.path.islink(full):
                out.add(Path(full).relative_to(tree).as_posix())
    return out


def file_set(tree: Path, scope: str, lang: str) -> FileSet:
    """sleuth's listing (``files:*``) vs a plain walk; the difference becomes ast-grep globs."""
    from sleuth.api import Workbench
    from sleuth.ast_search import language_for_path

    wb = Workbench(tree, build_index=False)
    listed: set[str] = set()
    cursor: str | None = None
    while True:
        page = wb.search("files:*", path=scope or "/", limit=PAGE, cursor=cursor).to_json()
        listed.update(m["path"] for m in page["matches"] if language_for_path(m["path"]) == lang)
        cursor = page.get("next_cursor")
        if cursor is None:
            break
    searched = {p for p in listed if (tree / p).stat().st_size <= SIZE_CAP}
    walked = _walk(tree, scope, lang)
    return FileSet(len(searched), len(walked), sorted(walked - searched))


# -- the contenders --------------------------------------------------------------------------------


def _describe(page: dict[str, Any]) -> str:
    total = page.get("total")
    total_s = str(total) if total is not None else f">={page.get('total_at_least')}"
    more = "+" if page.get("next_cursor") else ""
    done = "" if page.get("complete") else " (incomplete)"
    return f"{len(page['matches'])}{more} of {total_s}{done}"


class Runner:
    """Builds the ast-grep and sleuth invocations for one tree and scope."""

    def __init__(self, tree: Path, scope: str, files: dict[str, FileSet]) -> None:
        self.tree = tree
        self.scope = scope
        self.files = files
        self.ast_grep = find_tool("ast-grep")
        self.sleuth = find_tool("sleuth")
        self._wb: Any = None

    def run_ast_grep(self, q: Query) -> str:
        cmd = [self.ast_grep, "run", "-p", q.pattern, "-l", q.lang, "--json=stream"]
        cmd += ["--no-ignore", "hidden"]
        for path in self.files[q.lang].ag_excludes:
            cmd += ["--globs", f"!{path}"]
        cmd.append(self.scope or ".")
        proc = subprocess.run(cmd, cwd=self.tree, capture_output=True, check=False)
        if proc.returncode not in (0, 1):
            raise RuntimeError(f"ast-grep exited {proc.returncode} on {q.id}: {proc.stderr!r}")
        lines = proc.stdout.count(b"\n")
        return f"{lines} matches"

    def sleuth_cli(self, q: Query) -> str:
        cmd = [
            self.sleuth,
            "search",
            f"ast:{q.pattern}",
            "--lang",
            q.lang,
            "--root",
            str(self.tree),
        ]
        # --no-daemon: a new process answers (a daemon would keep the trees and listing warm)
        cmd += ["--json", "--limit", str(LIMIT), "--exclude", _fresh(), "--no-daemon"]
        if self.scope:
            cmd += ["--path", self.scope]
        proc = subprocess.run(cmd, capture_output=True, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"sleuth exited {proc.returncode} on {q.id}: {proc.stderr!r}")
        return _describe(json.loads(proc.stdout))

    def sleuth_all(self, q: Query, *, budget: bool = True) -> str:
        """Every match, in process, from a Workbench without caches (``budget``: pages keep
        the default ``max_bytes``, else ``max_bytes=None``)."""
        from sleuth.api import Workbench

        budgeted: dict[str, Any] = {} if budget else {"max_bytes": None}
        wb = Workbench(self.tree, build_index=False)
        nonce = [_fresh()]
        cursor: str | None = None
        count = pages = 0
        complete = True
        while True:
            page = wb.search(
                f"ast:{q.pattern}",
                lang=q.lang,
                path=self.scope or "/",
                exclude=nonce,
                limit=PAGE,
                cursor=cursor,
                **budgeted,
            ).to_json()
            json.dumps(page)
            pages += 1
            count += len(page["matches"])
            complete = complete and page["complete"]
            cursor = page.get("next_cursor")
            if cursor is None:
                break
        wb.close()
        return f"{count} matches, {pages} pages" + ("" if complete else " (incomplete)")

    def workbench(self) -> Any:
        if self._wb is None:
            from sleuth.api import Workbench

            # the long-running shape of `sleuth mcp`: a file watcher keeps the listing warm
            self._wb = Workbench(self.tree, build_index=True, watch=True)
            time.sleep(2.0)  # let the watcher settle before the first timed query
        return self._wb

    def sleuth_warm(self, q: Query, *, repeat: bool) -> str:
        exclude = [f"sleuth-bench-repeat-{os.getpid()}"] if repeat else [_fresh()]
        page = (
            self.workbench()
            .search(
                f"ast:{q.pattern}",
                lang=q.lang,
                path=self.scope or "/",
                exclude=exclude,
                limit=LIMIT,
            )
            .to_json()
        )
        json.dumps(page)
        return _describe(page)


@dataclass
class Row:
    """One query's series in one phase: ast-grep and the sleuth variants, by label."""

    query: Query
    ast_grep: Series = field(default_factory=Series)
    sleuth: dict[str, Series] = field(default_factory=dict)


def _timed(fn: Callable[[], str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    answer = fn()
    return time.perf_counter() - t0, answer


def run_phase(
    runner: Runner,
    queries: list[Query],
    rounds: int,
    warmup: int,
    phase: str,
    log: Callable[[str], None],
    skip_all: frozenset[str] = frozenset(),
    unbudgeted: bool = False,
) -> list[Row]:
    """Time every contender of every query, round by round; ``skip_all``: no "all pages" row;
    ``unbudgeted``: one more "all pages" row, with ``max_bytes=None``."""
    variants: dict[str, Callable[[Query], str]]
    if phase == "cold":
        variants = {
            "CLI first page": runner.sleuth_cli,
            "all pages (in process)": runner.sleuth_all,
        }
        if unbudgeted:
            variants["all pages (in process, max_bytes=None)"] = lambda q: runner.sleuth_all(
                q, budget=False
            )
    else:
        variants = {
            "new search": lambda q: runner.sleuth_warm(q, repeat=False),
            "repeat (registered result)": lambda q: runner.sleuth_warm(q, repeat=True),
        }
    rows = [
        Row(
            q,
            sleuth={
                label: Series()
                for label in variants
                if not (label.startswith("all pages") and q.id in skip_all)
            },
        )
        for q in queries
    ]
    for rnd in range(warmup + rounds):
        for row in rows:
            contenders: list[tuple[Series, Callable[[Query], str]]] = [
                (row.ast_grep, runner.run_ast_grep)
            ]
            contenders += [(row.sleuth[label], variants[label]) for label in row.sleuth]
            if rnd % 2:  # alternate who goes first
                contenders.reverse()
            for series, fn in contenders:
                dt, answer = _timed(lambda fn=fn, q=row.query: fn(q))
                if rnd >= warmup:
                    series.times.append(dt)
                series.answer = answer
            log(
                f"{phase} round {rnd + 1}/{warmup + rounds} {row.query.id}: ag "
                f"{row.ast_grep.answer}, sleuth " + "; ".join(s.answer for s in row.sleuth.values())
            )
    return rows


# -- output ----------------------------------------------------------------------------------------


def _s(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    return f"{seconds * 1000:.0f} ms" if seconds >= 0.1 else f"{seconds * 1000:.1f} ms"


def _target(q: Query, phase: str) -> float:
    if phase == "warm":
        return TARGETS["warm"]
    return TARGETS["cold_literal"] if q.literal else TARGETS["cold_nolit"]


def _verdict(label: str, phase: str, ratio: float, target: float) -> str:
    """The cold first-page targets are for the CLI (a new process, its first page); every page
    through the Python face is held to ``TARGETS["all_pages"]``."""
    if phase == "cold" and label.startswith("all pages"):
        target = TARGETS["all_pages"]
    return f"<={target}x " + ("ok" if ratio <= target else "MISS")


def table(rows: list[Row], phase: str, markdown: bool) -> str:
    head = [
        "query",
        "pattern",
        "sleuth",
        "ast-grep",
        "sleuth time",
        "ratio sleuth/ast-grep",
        "target",
        "ast-grep output",
        "sleuth answer",
    ]
    body: list[list[str]] = []
    for row in rows:
        q = row.query
        target = _target(q, phase)
        for label, series in row.sleuth.items():
            ratio = series.median / row.ast_grep.median
            body.append(
                [
                    q.id,
                    f"`{q.pattern}`" if markdown else q.pattern,
                    label,
                    _s(row.ast_grep.median),
                    _s(series.median),
                    f"{ratio:.2f}x",
                    _verdict(label, phase, ratio, target),
                    row.ast_grep.answer,
                    series.answer,
                ]
            )
    if markdown:
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in body]
        return "\n".join(out)
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in [head, *body]
    )


def _default_tree(corpus: str) -> Path:
    """The cached corpus tree (``benchmarks/corpora.py``, loaded by path: see the top)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("sleuth_bench_corpora", _HERE + "/corpora.py")
    assert spec is not None and spec.loader is not None
    corpora = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(corpora)
    tree: Path = corpora.django_tree() if corpus == "django" else corpora.kernel_tree()
    return tree


def profile(runner: Runner, q: Query, top: int) -> None:
    """cProfile of one ``sleuth all`` run: where the time goes."""
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    answer = prof.runcall(runner.sleuth_all, q)
    print(f"sleuth all for {q.id} ({q.pattern}): {answer} in {time.perf_counter() - t0:.2f} s")
    stats = pstats.Stats(prof)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", choices=sorted(QUERY_SETS), default="django")
    parser.add_argument("--tree", type=Path, help="tree to search (default: the cached corpus)")
    parser.add_argument("--scope", help="folder of the tree to search (kernel: drivers)")
    parser.add_argument("--rounds", type=int, default=3, help="measured rounds")
    parser.add_argument("--warmup", type=int, default=1, help="uncounted rounds first")
    parser.add_argument("--phase", choices=["cold", "warm", "both"], default="both")
    parser.add_argument("--only", action="append", default=[], metavar="ID", help="query ids")
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    parser.add_argument(
        "--skip-all-pages",
        action="append",
        default=[],
        metavar="ID",
        help="leave out the cold 'all pages' row of query ID (it can take long on the kernel)",
    )
    parser.add_argument(
        "--unbudgeted",
        action="store_true",
        help="add a cold 'all pages' row paging with max_bytes=None (500 a page)",
    )
    parser.add_argument("--profile", metavar="ID", help="only cProfile sleuth all for query ID")
    parser.add_argument("--top", type=int, default=30, help="rows of the profile")
    args = parser.parse_args(argv)

    tree = (args.tree or _default_tree(args.corpus)).expanduser().resolve()
    scope = (args.scope if args.scope is not None else DEFAULT_SCOPE[args.corpus]).strip("/")
    queries = [q for q in QUERY_SETS[args.corpus] if not args.only or q.id in args.only]

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    langs = sorted({q.lang for q in queries})
    files = {lang: file_set(tree, scope, lang) for lang in langs}
    runner = Runner(tree, scope, files)
    if args.profile:
        [q] = [q for q in QUERY_SETS[args.corpus] if q.id == args.profile]
        profile(runner, q, args.top)
        return 0

    ag_version = subprocess.run([runner.ast_grep, "--version"], capture_output=True, text=True)
    header = [
        f"tree: {tree}, scope: {scope or '(whole tree)'}; rounds: {args.rounds} "
        f"(+{args.warmup} warm-up); first page limit {LIMIT}",
        f"{ag_version.stdout.strip()} (default threads); python {platform.python_version()}; "
        f"{os.cpu_count()} CPUs; loadavg at start {os.getloadavg()[0]:.2f}",
    ]
    for lang, fs in files.items():
        header.append(
            f"{lang} files: sleuth searches {fs.sleuth_files}, a plain walk finds "
            f"{fs.walked_files}; ast-grep is told to skip the {len(fs.ag_excludes)} others "
            "(ignored or over 8 MiB)"
        )
    results: dict[str, list[Row]] = {}
    phases = ["cold", "warm"] if args.phase == "both" else [args.phase]
    for phase in phases:
        if phase == "warm":
            t0 = time.perf_counter()
            indexed = runner.workbench().index_now()
            header.append(f"warm: index_now() -> {indexed} in {time.perf_counter() - t0:.1f} s")
        skip = frozenset(args.skip_all_pages)
        results[phase] = run_phase(
            runner, queries, args.rounds, args.warmup, phase, log, skip, args.unbudgeted
        )
    header.append(f"loadavg at end {os.getloadavg()[0]:.2f}")

    print("\n".join(("- " + h) if args.markdown else h for h in header))
    for phase in phases:
        title = (
            "cold (one process per query; sleuth all = every match, in process, no caches)"
            if phase == "cold"
            else "warm (one Workbench(build_index=True, watch=True), in process)"
        )
        print()
        print(f"### {args.corpus}: {title}" if args.markdown else f"== {args.corpus}: {title} ==")
        print()
        print(table(results[phase], phase, args.markdown))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
