"""Start-up benchmark: a cold ``sleuth search`` against ``rg``, and MCP ``initialize``.

The issue's requirement: start-up of ``sleuth search`` and of the MCP server's ``initialize``
is no slower than before. Three measurements, on one small generated tree (``--files`` files
of Python-like text, ~2 KB each, no ignore files), each over ``--runs`` fresh processes after
one warm-up, reported as median and min:

1. **cold CLI**: ``sleuth search QUERY --root TREE`` against ``rg --no-config QUERY TREE``,
   interleaved run by run (the order alternating) so both see the same load on this shared
   machine, each with its whole output drained through a pipe; the ratio is sleuth / rg.
2. **MCP initialize**: from spawning ``sleuth mcp --root TREE`` through the official MCP SDK
   client (``mcp.client.stdio``, as ``tests/e2e/conftest.py`` starts it) to the ``initialize``
   response; the server's shutdown after it is not timed.
3. with ``--importtime``: the largest cumulative imports of one ``sleuth search`` process
   (``PYTHONPROFILEIMPORTTIME=1``, i.e. ``python -X importtime``).

Which sleuth: by default this checkout, run as ``python -m sleuth`` with this interpreter and
``PYTHONPATH`` set to the repository (every process starts in the tree, so the current folder
never shadows it); ``--repo PATH`` (with ``--python PY``) measures another
checkout the same way, and ``--sleuth PATH`` runs a ``sleuth`` executable as it is. The script
prints where that process imports ``sleuth`` from, so a stray editable install cannot pass for
the checkout meant. Compare figures from runs close in time (the load average is printed).

Usage::

    python -m benchmarks.startup                                    # this checkout
    python -m benchmarks.startup --repo /tmp/sleuth-before          # a worktree of an old commit
    python -m benchmarks.startup --sleuth /path/to/venv/bin/sleuth --runs 20 --importtime
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.tools import find_tool

REPO = Path(__file__).resolve().parents[1]
QUERY = "get_user"


@dataclass
class Series:
    """Seconds of one contender, one entry per measured run."""

    times: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def best(self) -> float:
        return min(self.times)


@dataclass(frozen=True)
class Sleuth:
    """How to start the sleuth under test: the command before its arguments, and its env."""

    argv: tuple[str, ...]
    env: dict[str, str]
    label: str

    def imported_from(self, cwd: Path) -> str:
        """``sleuth.__file__`` as that command's interpreter sees it, started in ``cwd``."""
        python = self.argv[0]
        if self.argv[1:3] != ("-m", "sleuth"):  # an executable: its interpreter is the shebang
            with open(python, "rb") as fh:
                first = fh.readline().decode("utf-8", "replace").strip()
            python = first[2:].strip().split()[0] if first.startswith("#!") else sys.executable
        code = "import sleuth; print(sleuth.__file__)"
        proc = subprocess.run(
            [python, "-c", code], env=self.env, cwd=cwd, capture_output=True, text=True, check=False
        )
        return proc.stdout.strip() or f"(failed: {proc.stderr.strip()[-200:]})"


def make_sleuth(args: argparse.Namespace) -> Sleuth:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SLEUTH_DEBUG")}
    if args.sleuth is not None:
        return Sleuth((str(Path(args.sleuth).resolve()),), env, f"executable {args.sleuth}")
    repo = Path(args.repo or REPO).resolve()
    env["PYTHONPATH"] = str(repo)
    python = args.python or sys.executable
    return Sleuth((python, "-m", "sleuth"), env, f"{python} -m sleuth, PYTHONPATH={repo}")


def make_tree(root: Path, files: int, seed: int = 7) -> None:
    """``files`` Python-like files in 12 packages; about a third of them call ``QUERY``."""
    rnd = random.Random(seed)
    words = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta"]
    for i in range(files):
        pkg = root / "src" / f"pkg{i % 12}"
        pkg.mkdir(parents=True, exist_ok=True)
        lines = [f'"""Module {i}."""', "", "import os", ""]
        for j in range(40):
            name = f"{rnd.choice(words)}_{rnd.choice(words)}_{j}"
            lines.append(f"def {name}(value):")
            body = f"get_user(value + {j})" if rnd.random() < 0.01 else f"value * {j}"
            lines.append(f"    return {body}")
        (pkg / f"mod{i}.py").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _drained(cmd: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    """Seconds from spawning ``cmd`` to its exit, its stdout read to the end."""
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, cwd=cwd, env=env, check=False)
    elapsed = time.perf_counter() - t0
    if proc.returncode not in (0, 1):  # rg: 1 = no match
        raise RuntimeError(f"{cmd[0]} exited {proc.returncode}: {proc.stderr[-500:]!r}")
    return elapsed


def bench_cli(
    sleuths: Sequence[Sleuth], rg: str, tree: Path, runs: int, log: Callable[[str], None]
) -> tuple[Series, list[Series]]:
    """rg and each sleuth once per round, in an order that rotates from round to round (so a
    change of load hits every contender alike); round 0 warms the page cache."""
    contenders: list[tuple[list[str], dict[str, str] | None]] = [
        ([rg, "--no-config", QUERY, str(tree)], None)
    ]
    contenders += [([*s.argv, "search", QUERY, "--root", str(tree)], s.env) for s in sleuths]
    series = [Series() for _ in contenders]
    for rnd in range(runs + 1):
        order = list(range(len(contenders)))
        order = order[rnd % len(order) :] + order[: rnd % len(order)]
        for i in order:
            dt = _drained(contenders[i][0], tree, contenders[i][1])
            if rnd:
                series[i].times.append(dt)
    log(f"cli: {runs} runs done")
    return series[0], series[1:]


def bench_mcp(sleuth: Sleuth, tree: Path, runs: int, log: Callable[[str], None]) -> Series:
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sleuth.argv[0],
        args=[*sleuth.argv[1:], "mcp", "--root", str(tree)],
        env=sleuth.env,
        cwd=tree,
    )
    series = Series()

    async def once() -> float:
        t0 = time.perf_counter()
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            result = await session.initialize()
            elapsed = time.perf_counter() - t0
            if not result.server_info.name:
                raise RuntimeError("initialize answered without a server name")
        return elapsed

    for rnd in range(runs + 1):
        dt = anyio.run(once)
        if rnd:
            series.times.append(dt)
    log(f"mcp: {runs} runs done")
    return series


def bench_mcp_rounds(
    sleuths: Sequence[Sleuth], tree: Path, runs: int, log: Callable[[str], None]
) -> list[Series]:
    """``bench_mcp`` of each sleuth, one run at a time in turn (interleaved like the CLI)."""
    series = [Series() for _ in sleuths]
    for rnd in range(runs):
        for i, one in enumerate(sleuths if rnd % 2 else sleuths[::-1]):
            index = i if rnd % 2 else len(sleuths) - 1 - i
            series[index].times += bench_mcp(one, tree, 1, lambda _msg: None).times
    log(f"mcp: {runs} runs done")
    return series


def import_times(sleuth: Sleuth, tree: Path, top: int) -> list[tuple[int, int, str]]:
    """(cumulative us, self us, module) of the ``top`` largest cumulative imports."""
    env = dict(sleuth.env, PYTHONPROFILEIMPORTTIME="1")
    cmd = [*sleuth.argv, "search", QUERY, "--root", str(tree)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tree, check=False)
    rows: list[tuple[int, int, str]] = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        own, cumulative, name = line[len("import time:") :].split("|", 2)
        rows.append((int(cumulative), int(own), name.rstrip()))
    rows.sort(reverse=True)
    return rows[:top]


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds >= 0.1 else f"{seconds * 1000:.1f} ms"


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--sleuth", help="a sleuth executable to run as it is")
    which.add_argument("--repo", help="a checkout to run as `PYTHON -m sleuth` (PYTHONPATH)")
    parser.add_argument("--python", help="interpreter for --repo (default: this one)")
    parser.add_argument("--runs", type=int, default=10, help="measured runs (plus 1 warm-up)")
    parser.add_argument("--files", type=int, default=200, help="files in the generated tree")
    parser.add_argument("--tree", type=Path, help="search this tree instead of generating one")
    parser.add_argument("--importtime", action="store_true", help="also list the top imports")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    parser.add_argument(
        "--against",
        metavar="REPO",
        help="also run the checkout REPO in the same rounds (interleaved) and print both",
    )
    args = parser.parse_args(argv)
    if args.python and args.sleuth:
        parser.error("--python goes with --repo, not with --sleuth")

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    sleuth = make_sleuth(args)
    baseline = []
    if args.against:
        against = argparse.Namespace(sleuth=None, repo=args.against, python=args.python)
        baseline = [make_sleuth(against)]
    rg = find_tool("rg")
    made = args.tree is None
    tree = Path(tempfile.mkdtemp(prefix="sleuth-startup-")) if made else args.tree.resolve()
    try:
        if made:
            make_tree(tree, args.files)
        load_start = _load()
        rg_s, (cli_s, *base_cli) = bench_cli([sleuth, *baseline], rg, tree, args.runs, log)
        mcp_s, *base_mcp = bench_mcp_rounds([sleuth, *baseline], tree, args.runs, log)
        load_end = _load()
        imports = import_times(sleuth, tree, 12) if args.importtime else []
        origin = sleuth.imported_from(tree)
    finally:
        if made:
            shutil.rmtree(tree, ignore_errors=True)

    rg_version = subprocess.run([rg, "--version"], capture_output=True, text=True).stdout
    size = f"{args.files} generated files" if made else str(tree)
    print(f"sleuth: {sleuth.label}")
    print(f"imports sleuth from: {origin}")
    print(
        f"tree: {size}; query {QUERY!r}; {args.runs} runs (+1 warm-up); "
        f"{rg_version.splitlines()[0]}; python {platform.python_version()}; "
        f"{os.cpu_count()} CPUs; loadavg (1/5/15 min) {load_start} at start, {load_end} at end"
    )
    rows = [
        ("`sleuth search Q --root R` (cold CLI)", cli_s),
        ("`rg Q R`", rg_s),
        ("MCP spawn -> `initialize` answered", mcp_s),
    ]
    for base, base_c, base_m in zip(baseline, base_cli, base_mcp, strict=True):
        print(f"against: {base.label}")
        rows += [
            ("against: `sleuth search Q --root R` (cold CLI)", base_c),
            ("against: MCP spawn -> `initialize` answered", base_m),
        ]
    ratio = f"{cli_s.median / rg_s.median:.1f}x (min {cli_s.best / rg_s.best:.1f}x)"
    if args.markdown:
        print()
        print("| measurement | median | min |")
        print("|---|---|---|")
        for name, series in rows:
            print(f"| {name} | {_ms(series.median)} | {_ms(series.best)} |")
        print(f"| ratio sleuth / rg (cold CLI) | {ratio} | |")
    else:
        for name, series in rows:
            print(f"{name:45} median {_ms(series.median):>8}  min {_ms(series.best):>8}")
        print(f"{'ratio sleuth / rg (cold CLI)':45} {ratio}")
    for base_c, base_m in zip(base_cli, base_mcp, strict=True):
        for what, ours, theirs in (("cold CLI", cli_s, base_c), ("MCP initialize", mcp_s, base_m)):
            paired = statistics.median(a - b for a, b in zip(ours.times, theirs.times, strict=True))
            print(f"{what}: this checkout minus --against, median of the rounds: {_ms(paired)}")
    if imports:
        print()
        print("largest cumulative imports of one `sleuth search` (us: cumulative / self):")
        for cumulative, own, name in imports:
            print(f"  {cumulative:>9} {own:>8}  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
