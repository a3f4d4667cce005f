"""Text-search benchmark: sleuth against ripgrep 14.1.0 on the same tree, interleaved.

Four phases, each interleaved round by round (for every round and every query rg runs, then
sleuth, so that both see the same machine load; round 0 is a warm-up and is not counted). Every
sleuth call is a fresh search (its own ``--context``/``context``, so no stored result answers):

* ``first`` -- the first CLI call on a tree with no ``.sleuth/``: the state folder is moved
  aside before each call, the call answers in its own process and starts a daemon as a real
  first call does; that daemon is stopped and the new state removed before the next call,
  outside the call's time (which is the CLI process's, from its start to its exit).
* ``daemon`` -- the CLI with the workspace's daemon running (docs/faces.md#the-daemon): one
  ``sleuth search`` process per query, relayed.
* ``cold`` -- one process per query with ``.sleuth/`` present and no daemon
  (``--no-daemon``): ``sleuth search Q --root T --json --limit 100`` against ``rg ... Q T``
  whose whole output is drained through a pipe. For the high-volume query rg is also timed as
  ``rg --sort path ... | head -n 100`` (the same first page in path order).
* ``warm`` -- one ``Workbench`` kept across calls (the MCP server's shape), ``search(Q,
  limit=100)`` plus ``to_json`` and ``json.dumps`` in process, against the same rg process.

Both sides honour the same walking rules (docs/faces.md#which-files-are-searched): hidden files
searched, ``.gitignore`` / ``.ignore`` honoured (``--no-require-git``), ``.git/`` and ``.sleuth/``
skipped, binary files and files over 8 MiB skipped. "cold" means a new process, not a cold page
cache (the machine is shared; nothing drops caches). Cells are medians; ``ratio`` is sleuth / rg
(lower is better). Targets: first and cold <= 1.5x rg, daemon <= 0.15x rg, warm <= 0.1x rg.

Usage::

    python benchmarks/corpora.py django                      # once
    python benchmarks/text.py --queries django --rounds 7 --markdown
    python benchmarks/text.py --tree ~/.cache/sleuth/corpora/linux-6.1/linux-source-6.1 \\
        --queries kernel --rounds 3 --markdown
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.tools import find_tool

REPO = Path(__file__).resolve().parents[1]
LIMIT = 100
COLD_TARGET = 1.5
WARM_TARGET = 0.1
DAEMON_TARGET = 0.15
TARGETS = {"first": COLD_TARGET, "cold": COLD_TARGET, "daemon": DAEMON_TARGET, "warm": WARM_TARGET}
TITLES = {
    "first": "first CLI call (no .sleuth/; starts a daemon)",
    "daemon": "CLI with the daemon running (one process per query, relayed)",
    "cold": "cold CLI (one process per query, .sleuth/ present, --no-daemon)",
    "warm": "warm (one Workbench, in process: the MCP server's shape)",
}

RG_FLAGS = (
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
    "--color",
    "never",
)


@dataclass(frozen=True)
class Query:
    """One benchmark query, in sleuth's and in rg's spelling."""

    id: str
    sleuth: str
    rg: tuple[str, ...]
    case_sensitive: bool = True
    head: bool = False  # also time rg --sort path | head -n LIMIT


def _lit(id: str, text: str, *, head: bool = False) -> Query:
    return Query(id, text, ("-F", "-e", text), head=head)


def _rx(id: str, pattern: str, *, i: bool = False) -> Query:
    rg = ("-i", "-e", pattern) if i else ("-e", pattern)
    return Query(id, f"regex:{pattern}", rg, case_sensitive=not i)


QUERY_SETS: dict[str, list[Query]] = {
    "django": [
        _lit("lit_rare", "_check_relationship_model"),
        _lit("lit_common", "return", head=True),
        _rx("re_ci", "content[-_]?type", i=True),
        _rx("re_alt", "TODO|FIXME|XXX"),
        _rx("re_alt2", r"(raise|except)\s+\w+Error"),
        _rx("re_nolit", "[A-Z]{20,}"),
    ],
    "kernel": [
        _lit("lit_rare", "__ext4_journal_ensure_credits"),
        _lit("lit_common", "return", head=True),
        _rx("re_ci", "dma[-_]?buf", i=True),
        _rx("re_alt", "TODO|FIXME|XXX"),
        _rx("re_alt2", r"(kmalloc|kzalloc|kcalloc)\(\w+,\s*GFP_\w+\)"),
        _rx("re_nolit", "[A-Z]{20,}"),
    ],
}


@dataclass
class Series:
    """Timings (seconds) of one contender on one query, plus what it answered."""

    times: list[float] = field(default_factory=list)
    answer: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.times) if self.times else float("nan")


@dataclass(frozen=True)
class Timed:
    """An answer with the seconds of the part of a contender that is the call itself (the
    ``first`` phase's set-up and clean-up around its CLI call are not the call's time)."""

    answer: str
    seconds: float


def _timed(fn: Callable[[], str | Timed]) -> tuple[float, str]:
    t0 = time.perf_counter()
    answer = fn()
    if isinstance(answer, Timed):
        return answer.seconds, answer.answer
    return time.perf_counter() - t0, answer


class Runner:
    """Builds the rg and sleuth invocations for one tree."""

    def __init__(self, tree: Path, *, build_index: bool = True) -> None:
        self.tree = tree
        self.build_index = build_index
        self.rg = find_tool("rg")
        self.sleuth = find_tool("sleuth")
        self._wb: Any = None
        self._calls = 0
        # per run: a result stored by an earlier run (``--index as-is`` keeps .sleuth/) must
        # not answer a call of this one
        self._run = os.urandom(4).hex()

    def _nonce(self) -> str:
        """An exclude glob no file has and no call repeats (the context wraps at 21)."""
        return f"__bench_{self._run}_{self._calls}__"

    # -- rg -------------------------------------------------------------------------------
    def rg_all(self, q: Query) -> str:
        proc = subprocess.run(
            [self.rg, *RG_FLAGS, *q.rg, "--", "."],
            cwd=self.tree,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            check=False,
        )
        if proc.returncode not in (0, 1):
            raise RuntimeError(f"rg failed with {proc.returncode} on {q.id}")
        lines = proc.stdout.count(b"\n")
        return f"{lines} lines"

    def rg_head(self, q: Query) -> str:
        """``rg --sort path ... | head -n LIMIT``: read LIMIT lines, close the pipe, wait."""
        with subprocess.Popen(
            [self.rg, *RG_FLAGS, "--sort", "path", *q.rg, "--", "."],
            cwd=self.tree,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        ) as proc:
            assert proc.stdout is not None
            got = 0
            for _ in range(LIMIT):
                if not proc.stdout.readline():
                    break
                got += 1
            proc.stdout.close()
            proc.wait()
        return f"{got} lines"

    # -- sleuth ---------------------------------------------------------------------------
    def _cli(self, q: Query, *extra: str, env: dict[str, str] | None = None) -> str:
        self._calls += 1
        cmd = [self.sleuth, "search", q.sleuth, "--root", str(self.tree), "--json"]
        cmd += ["--limit", str(LIMIT), "--context", str(self._calls % 21), *extra]
        cmd += ["--exclude", self._nonce()]
        if not q.case_sensitive:
            cmd.append("-i")
        proc = subprocess.run(cmd, capture_output=True, check=False, env=env)
        if proc.returncode != 0:
            raise RuntimeError(f"sleuth exited {proc.returncode} on {q.id}: {proc.stderr!r}")
        return _describe(json.loads(proc.stdout))

    def sleuth_cli(self, q: Query) -> str:
        return self._cli(q, "--no-daemon")

    def sleuth_daemon(self, q: Query) -> str:
        return self._cli(q)

    def daemon(self, action: str) -> None:
        cmd = [self.sleuth, "daemon", action, "--root", str(self.tree)]
        subprocess.run(cmd, capture_output=True, check=True)

    def sleuth_first(self, q: Query) -> Timed:
        state = self.tree / ".sleuth"
        aside = self.tree / ".sleuth.bench-first"
        if state.exists():
            os.replace(state, aside)
        try:
            t0 = time.perf_counter()
            answer = self._cli(q)
            return Timed(answer, time.perf_counter() - t0)  # the call alone, not what follows
        finally:
            # The call started a daemon for the next calls: stop it, drop what it made.
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not (state / "daemon.sock").exists():
                time.sleep(0.05)
            self.daemon("stop")
            shutil.rmtree(state, ignore_errors=True)
            if aside.exists():
                os.replace(aside, state)

    def workbench(self) -> Any:
        if self._wb is None:
            sys.path.insert(0, str(REPO))
            from sleuth.api import Workbench

            # the long-running shape: a file watcher keeps the listing warm (as `sleuth mcp`)
            self._wb = Workbench(self.tree, build_index=self.build_index, watch=True)
            time.sleep(2.0)  # let the watcher settle before the first timed query
        return self._wb

    def sleuth_warm(self, q: Query) -> str:
        # A new `context` each call makes every query a fresh search: an identical repeat would
        # be answered from the registry (a real, but different, cache).
        self._calls += 1
        res = self.workbench().search(
            q.sleuth,
            limit=LIMIT,
            case_sensitive=q.case_sensitive,
            context=self._calls % 21,
            exclude=[self._nonce()],
        )
        page = res.to_json()
        json.dumps(page)
        return _describe(page)


def _describe(page: dict[str, Any]) -> str:
    total = page.get("total")
    total_s = str(total) if total is not None else f">={page.get('total_at_least')}"
    more = "+" if page.get("next_cursor") else ""
    done = "" if page.get("complete") else " INCOMPLETE"
    return f"{len(page['matches'])}{more} of {total_s}{done}"


@dataclass
class Row:
    query: Query
    rg: Series = field(default_factory=Series)
    rg_head: Series | None = None
    sleuth: Series = field(default_factory=Series)


def run_phase(
    runner: Runner, queries: list[Query], rounds: int, phase: str, log: Callable[[str], None]
) -> list[Row]:
    rows = [Row(q, rg_head=Series() if q.head and phase != "warm" else None) for q in queries]
    phases: dict[str, Callable[[Query], str | Timed]] = {
        "first": runner.sleuth_first,
        "daemon": runner.sleuth_daemon,
        "cold": runner.sleuth_cli,
        "warm": runner.sleuth_warm,
    }
    sleuth_fn = phases[phase]
    for rnd in range(rounds + 1):  # round 0 warms caches (and the Workbench) up
        for row in rows:
            contenders: list[tuple[Series, Callable[[Query], str | Timed]]] = [
                (row.rg, runner.rg_all)
            ]
            if row.rg_head is not None:
                contenders.append((row.rg_head, runner.rg_head))
            contenders.append((row.sleuth, sleuth_fn))
            if rnd % 2:  # alternate who goes first
                contenders.reverse()
            for series, fn in contenders:
                dt, answer = _timed(lambda fn=fn, q=row.query: fn(q))
                if rnd > 0:
                    series.times.append(dt)
                series.answer = answer
        if rnd:
            log(f"{phase}: round {rnd}/{rounds} done")
    return rows


def _ms(seconds: float) -> str:
    ms = seconds * 1000
    return f"{ms:.0f} ms" if ms >= 100 else f"{ms:.1f} ms" if ms >= 1 else f"{ms:.2f} ms"


def table(rows: list[Row], phase: str, markdown: bool) -> str:
    target = TARGETS[phase]
    head = ["query", "sleuth query", "rg", "sleuth", "ratio sleuth/rg", f"target <={target}x"]
    head += ["rg output", "sleuth page"]
    body: list[list[str]] = []
    for row in rows:
        q = row.query
        shown = q.sleuth + ("" if q.case_sensitive else "  (-i)")
        ratio = row.sleuth.median / row.rg.median
        body.append(
            [
                q.id,
                f"`{shown}`" if markdown else shown,
                _ms(row.rg.median),
                _ms(row.sleuth.median),
                f"{ratio:.2f}x",
                "ok" if ratio <= target else "MISS",
                row.rg.answer,
                row.sleuth.answer,
            ]
        )
        if row.rg_head is not None:
            ratio_h = row.sleuth.median / row.rg_head.median
            body.append(
                [
                    f"{q.id} (rg --sort path | head -{LIMIT})",
                    "",
                    _ms(row.rg_head.median),
                    _ms(row.sleuth.median),
                    f"{ratio_h:.2f}x",
                    "ok" if ratio_h <= target else "MISS",
                    row.rg_head.answer,
                    row.sleuth.answer,
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


def _default_tree(queries: str) -> Path:
    sys.path.insert(0, str(REPO / "benchmarks"))
    import corpora

    tree: Path = corpora.django_tree() if queries == "django" else corpora.kernel_tree()
    return tree


def _index_state(tree: Path) -> str:
    state = tree / ".sleuth"
    if not state.is_dir():
        return "no .sleuth/ state"
    names = sorted(p.name for p in state.iterdir())
    return ".sleuth/ holds: " + ", ".join(names)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, help="tree to search (default: the cached corpus)")
    parser.add_argument("--queries", choices=sorted(QUERY_SETS), default="django")
    parser.add_argument("--rounds", type=int, default=5, help="measured rounds (plus 1 warm-up)")
    parser.add_argument(
        "--phase",
        action="append",
        choices=[*TITLES, "both", "all"],
        help="phases to run (repeatable; both = cold and warm; default: all)",
    )
    parser.add_argument(
        "--index",
        choices=["build", "none", "as-is"],
        default="build",
        help="build: persist sleuth's trigram index in <tree>/.sleuth first (the steady state "
        "of a workspace already searched once); none: move the persisted index aside for the "
        "run (restored after) and keep the Workbench from building one, so every query scans; "
        "as-is: leave the state folder alone",
    )
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    parser.add_argument("--only", action="append", default=[], metavar="ID", help="query ids")
    args = parser.parse_args(argv)

    tree = (args.tree or _default_tree(args.queries)).expanduser().resolve()
    queries = [q for q in QUERY_SETS[args.queries] if not args.only or q.id in args.only]
    runner = Runner(tree, build_index=args.index != "none")

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    if args.index == "build":
        t0 = time.perf_counter()
        files = runner.workbench().index_now()
        log(f"index_now() -> {files} (build or load) in {time.perf_counter() - t0:.1f} s")
    aside: tuple[Path, Path] | None = None
    if args.index == "none":
        sys.path.insert(0, str(REPO))
        from sleuth.query.index import INDEX_FILE

        idx = tree / ".sleuth" / INDEX_FILE
        if idx.exists():
            aside = (idx, idx.with_name(idx.name + ".bench-aside"))
            os.replace(*aside)
    try:
        return _run(args, tree, queries, runner, log)
    finally:
        if aside is not None:
            os.replace(aside[1], aside[0])


def _run(
    args: argparse.Namespace,
    tree: Path,
    queries: list[Query],
    runner: Runner,
    log: Callable[[str], None],
) -> int:
    rg_version = subprocess.run([runner.rg, "--version"], capture_output=True, text=True).stdout
    header = [
        f"tree: {tree} ({args.queries} queries), rounds: {args.rounds} (+1 warm-up), limit {LIMIT}",
        f"rg: {rg_version.splitlines()[0]}; python {platform.python_version()}; "
        f"{os.cpu_count()} CPUs; loadavg at start {os.getloadavg()[0]:.2f}",
        f"sleuth state (--index {args.index}): {_index_state(tree)}",
    ]
    results: dict[str, list[Row]] = {}
    phases: list[str] = []
    for asked in args.phase or ["all"]:
        named = list(TITLES) if asked == "all" else ["cold", "warm"] if asked == "both" else [asked]
        phases += [p for p in named if p not in phases]
    for phase in phases:
        if phase == "daemon":
            runner.daemon("start")
            time.sleep(2.0)  # let its watcher settle, as the warm phase does
        try:
            results[phase] = run_phase(runner, queries, args.rounds, phase, log)
        finally:
            if phase == "daemon":
                runner.daemon("stop")
    header.append(f"loadavg at end {os.getloadavg()[0]:.2f}")

    print("\n".join(("- " + h) if args.markdown else h for h in header))
    for phase in phases:
        title = TITLES[phase]
        print()
        print(f"### {title}" if args.markdown else f"== {title} ==")
        print()
        print(table(results[phase], phase, args.markdown))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
