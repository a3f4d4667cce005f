"""Reference-resolution benchmark: reading a single-match reference costs one stat + hash of its
file, not a re-scan of the workspace (docs/references.md, benchmarks/README.md).

For each size (default 100, 1 000, 10 000 and 50 000 small files) a synthetic workspace is built
in a temporary folder: ``pkgNNN/modNNNNN.py`` files of a few lines each, one of which holds a
rare literal. One search for that literal registers ``SEARCH#H``; then

* ``resolve ms`` -- ``Workbench.read("SEARCH#H:1:match")`` in process (one ``Workbench`` kept
  warm, median of ``--reads`` calls; each call also registers its ``RESULT#``),
* ``CLI ms`` -- a cold ``sleuth read SEARCH#H:1:match --root T --json`` process (median of
  ``--cli`` runs after one warm-up),
* ``file lookups`` / ``walks`` -- per in-process read, the calls of ``Workspace.read`` (each a
  stat of the one file, plus read + hash when its content cache has no entry for that stat) and
  of ``Workspace.list_files`` (a walk), counted by wrapping them: 2 (the resolver's stamp check,
  then the text of the registered ``RESULT#``) and 0 -- never a walk, whatever the tree size,
* ``scan ms`` -- for contrast, the same search re-run in process without an index (a full scan
  of every file; median of 3), which is what resolving would cost if it re-searched.

The resolve and CLI columns should stay flat as the tree grows while the scan column grows
with it; the script prints the largest/smallest ratio of each column.

Usage::

    .venv/bin/python benchmarks/refs.py                  # 100, 1000, 10000, 50000 files
    .venv/bin/python benchmarks/refs.py --sizes 100 1000 10000 --markdown
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RARE = "zq_rare_reference_token_xq"
DEFAULT_SIZES = (100, 1_000, 10_000, 50_000)
FILES_PER_DIR = 500

sys.path.insert(0, str(REPO))  # run from a checkout without installing

from sleuth.api import Workbench  # noqa: E402


@dataclass
class Row:
    """One workspace size and its timings (milliseconds)."""

    files: int
    resolve_ms: float
    cli_ms: float
    scan_ms: float
    files_read: float
    walks: float


def build_tree(root: Path, files: int) -> Path:
    """``files`` small Python files under ``root``; the middle one holds ``RARE``."""
    rare_at = files // 2
    for i in range(files):
        folder = root / f"pkg{i // FILES_PER_DIR:03d}"
        if i % FILES_PER_DIR == 0:
            folder.mkdir(parents=True)
        body = f"def f{i}(x):\n    y = x + {i}\n    return y * 2\n"
        if i == rare_at:
            body += f"\nVALUE = '{RARE}'\n"
        (folder / f"mod{i:05d}.py").write_text(body)
    return root


def _median_ms(fn: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def _sleuth() -> list[str]:
    local = Path(sys.executable).with_name("sleuth")
    if local.exists():
        return [str(local)]
    found = shutil.which("sleuth")
    return [found] if found else [sys.executable, "-m", "sleuth"]


class _Counter:
    """Wraps one method of an object and counts its calls."""

    def __init__(self, obj: Any, name: str) -> None:
        self.calls = 0
        inner = getattr(obj, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return inner(*args, **kwargs)

        setattr(obj, name, counted)


def measure(root: Path, files: int, reads: int, cli_runs: int) -> Row:
    with Workbench(root, build_index=False) as wb:
        found = wb.search(RARE).to_json()
        assert found["total"] == 1, found
        ref = f"{found['result']}:1:match"
        assert wb.read(ref).to_json()["ranges"][0]["text"] == RARE
        opened = _Counter(wb.workspace, "read")
        walked = _Counter(wb.workspace, "list_files")
        resolve_ms = _median_ms(lambda: wb.read(ref), reads)
        files_read, walks = opened.calls / reads, walked.calls / reads
        scan_ms = _median_ms(lambda: wb.search(RARE, context=0), 3)
    cmd = [*_sleuth(), "read", ref, "--root", str(root), "--json"]

    def cold() -> None:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0 or RARE not in proc.stdout:
            raise SystemExit(f"sleuth read failed: {proc.stderr or proc.stdout}")

    cold()  # warm-up: page cache, .pyc files
    cli_ms = _median_ms(cold, cli_runs)
    return Row(files, resolve_ms, cli_ms, scan_ms, files_read, walks)


def _ratio(rows: Sequence[Row], key: Callable[[Row], float]) -> float:
    return key(rows[-1]) / key(rows[0]) if key(rows[0]) else float("nan")


def render(rows: Sequence[Row], markdown: bool) -> str:
    head = [
        "files",
        "resolve ms (in-process)",
        "CLI ms (cold `sleuth read`)",
        "file lookups",
        "walks",
        "scan ms (re-search, no index)",
    ]
    cells = [
        [
            f"{r.files:,}",
            f"{r.resolve_ms:.2f}",
            f"{r.cli_ms:.0f}",
            f"{r.files_read:g}",
            f"{r.walks:g}",
            f"{r.scan_ms:.0f}",
        ]
        for r in rows
    ]
    ratio = [
        f"{rows[-1].files // rows[0].files}x files",
        f"{_ratio(rows, lambda r: r.resolve_ms):.2f}x",
        f"{_ratio(rows, lambda r: r.cli_ms):.2f}x",
        "",
        "",
        f"{_ratio(rows, lambda r: r.scan_ms):.1f}x",
    ]
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(c) + " |" for c in cells]
        lines.append("| " + " | ".join(f"**{c}**" if c else "" for c in ratio) + " |")
        return "\n".join(lines)
    widths = [max(len(x) for x in col) for col in zip(head, *cells, ratio, strict=True)]
    fmt = "  ".join(f"{{:>{w}}}" for w in widths)
    lines = [fmt.format(*head)] + [fmt.format(*c) for c in cells]
    lines.append(fmt.format(*ratio))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES))
    parser.add_argument("--reads", type=int, default=50, help="in-process reads per size")
    parser.add_argument("--cli", type=int, default=5, help="cold CLI reads per size")
    parser.add_argument("--markdown", action="store_true", help="a table for RESULTS.md")
    parser.add_argument("--keep", action="store_true", help="keep the temporary trees")
    args = parser.parse_args(argv)
    sizes = sorted(args.sizes)
    rows: list[Row] = []
    base = Path(tempfile.mkdtemp(prefix="sleuth-refs-bench-"))
    try:
        for files in sizes:
            t0 = time.perf_counter()
            root = build_tree(base / f"tree{files}", files)
            built = time.perf_counter() - t0
            rows.append(measure(root, files, args.reads, args.cli))
            print(f"# {files:,} files: built in {built:.1f}s, measured", file=sys.stderr)
    finally:
        if args.keep:
            print(f"# trees kept in {base}", file=sys.stderr)
        else:
            shutil.rmtree(base, ignore_errors=True)
    print(render(rows, args.markdown))
    last, first = rows[-1], rows[0]
    print(
        f"\nlargest/smallest ({last.files:,} / {first.files:,} files): resolve "
        f"{_ratio(rows, lambda r: r.resolve_ms):.2f}x, CLI {_ratio(rows, lambda r: r.cli_ms):.2f}x, "
        f"scan {_ratio(rows, lambda r: r.scan_ms):.1f}x"
    )
    print(
        f"({platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} CPUs; medians of {args.reads} in-process and {args.cli} CLI reads)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
