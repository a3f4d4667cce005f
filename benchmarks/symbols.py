"""Symbols benchmark (docs/query.md#symbols-and-symbolid-declarations): ``symbols:`` and
``--navigation references`` over real Python language servers on the Django 5.2.x sdist.

For each Python server (``ty``, the default, and ``jedi-language-server``, chosen through
``.sleuth.toml`` ``[servers]``) and each query:

* ``first answer s`` -- a new ``Workbench(root, build_index=False)`` (what one CLI call builds),
  then the query: the server starts cold, and this is the time to its first answer;
* ``warm ms`` -- one ``Workbench(root, watch=True)`` (what ``sleuth mcp`` keeps), one warm-up
  call, then the median of ``--rounds`` calls of the same query (``search`` + ``to_json()``);
* ``matches`` / ``complete`` -- the answer's ``total`` and ``complete``.

The targets are warm ``symbols:`` < 200 ms and warm references < 1 s. The queries are
``symbols:QuerySet`` and ``symbols:get_user_model`` (declarations) and ``symbols:mark_safe``
with ``navigation="references"`` (about 280 occurrences in 74 files), all with ``lang="python"``
(without it, Django's JavaScript files would also start tsc).

The tree is copied from the shared corpus cache (``tests/corpus.py``) into a temporary folder,
so the server configuration and ``.sleuth/`` state never land in the cache.

Usage (as a module from the repository root, see ``benchmarks/__init__.py``)::

    .venv/bin/python -m benchmarks.symbols
    .venv/bin/python -m benchmarks.symbols --servers ty --rounds 5 --markdown
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run from a checkout without installing
sys.path.insert(0, str(REPO / "tests"))

from corpus import django_tree  # noqa: E402

from sleuth.api import Workbench  # noqa: E402
from sleuth.lsp_bridge.servers import SERVERS, server_version, usable  # noqa: E402

SERVER_NAMES = ("ty", "jedi-language-server")


@dataclass(frozen=True)
class Query:
    """One measured query: the text, its navigation and its target (warm, milliseconds)."""

    label: str
    text: str
    navigation: str | None
    target_ms: float


QUERIES = (
    Query("symbols:QuerySet", "symbols:QuerySet", None, 200),
    Query("symbols:get_user_model", "symbols:get_user_model", None, 200),
    Query("references mark_safe", "symbols:mark_safe", "references", 1000),
)


@dataclass
class Row:
    """One server and query: cold first answer (s), warm median (ms), the answer's size."""

    server: str
    query: Query
    first_s: float
    warm_ms: float
    matches: int
    complete: bool


def _configure(root: Path, server: str) -> None:
    """Select ``server`` for Python in ``root`` (ty is the default: no configuration)."""
    config = root / ".sleuth.toml"
    if server == "ty":
        config.unlink(missing_ok=True)
    else:
        config.write_text(f'[servers]\npython = ["{server}"]\n')


def _timed(wb: Workbench, query: Query) -> tuple[float, int, bool]:
    started = time.perf_counter()
    data = wb.search(query.text, navigation=query.navigation, lang="python").to_json()
    elapsed = time.perf_counter() - started
    return elapsed, int(data.get("total") or 0), bool(data.get("complete"))


def _check_server(wb: Workbench, server: str) -> None:
    rows = {row["language"]: row for row in wb.doctor()}
    if rows["python"]["server"] != server or not rows["python"]["found"]:
        raise SystemExit(f"{server} is not the Python server here: {rows['python']}")


def measure(root: Path, server: str, rounds: int) -> list[Row]:
    """Cold first answers (a new workbench per query), then warm medians (one workbench)."""
    _configure(root, server)
    first: dict[str, float] = {}
    for query in QUERIES:
        with Workbench(root, build_index=False) as wb:
            first[query.label], _, _ = _timed(wb, query)
            _check_server(wb, server)
        print(f"# {server}: {query.label} cold {first[query.label]:.2f}s", file=sys.stderr)
    rows = []
    with Workbench(root, watch=True) as wb:
        for query in QUERIES:
            _timed(wb, query)  # warm-up: server started, files read
            runs = [_timed(wb, query) for _ in range(rounds)]
            _, matches, complete = runs[-1]
            warm = statistics.median(t for t, _, _ in runs) * 1000
            rows.append(Row(server, query, first[query.label], warm, matches, complete))
            print(f"# {server}: {query.label} warm {warm:.0f}ms", file=sys.stderr)
    return rows


def render(rows: Sequence[Row], markdown: bool) -> str:
    head = [
        "server",
        "query",
        "first answer s (cold)",
        "warm ms (median)",
        "target ms",
        "meets target",
        "matches",
        "complete",
    ]
    cells = [
        [
            r.server,
            r.query.label,
            f"{r.first_s:.2f}",
            f"{r.warm_ms:.0f}",
            f"< {r.query.target_ms:.0f}",
            "yes" if r.warm_ms < r.query.target_ms else "no",
            str(r.matches),
            "yes" if r.complete else "no",
        ]
        for r in rows
    ]
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(c) + " |" for c in cells]
        return "\n".join(lines)
    widths = [max(len(x) for x in col) for col in zip(head, *cells, strict=True)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([fmt.format(*head), *(fmt.format(*c) for c in cells)])


def _version(server: str) -> str:
    spec = next(s for s in SERVERS["python"] if s.name == server)
    if not usable(spec):
        raise SystemExit(f"{server} is not installed (pip install {server})")
    return server_version(spec) or "?"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--servers",
        nargs="+",
        default=list(SERVER_NAMES),
        choices=SERVER_NAMES,
        help="Python servers to measure",
    )
    parser.add_argument("--rounds", type=int, default=7, help="warm calls per query (median)")
    parser.add_argument(
        "--tree", type=Path, default=None, help="a Django tree to copy (default: the cached corpus)"
    )
    parser.add_argument("--markdown", action="store_true", help="a table for RESULTS.md")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copy")
    args = parser.parse_args(argv)
    versions = {server: _version(server) for server in args.servers}
    source = args.tree or django_tree()
    base = Path(tempfile.mkdtemp(prefix="sleuth-symbols-bench-"))
    root = base / "django"
    try:
        shutil.copytree(source, root, ignore=shutil.ignore_patterns(".sleuth"))
        rows: list[Row] = []
        for server in args.servers:
            rows += measure(root, server, args.rounds)
    finally:
        if args.keep:
            print(f"# tree kept in {root}", file=sys.stderr)
        else:
            shutil.rmtree(base, ignore_errors=True)
    print(render(rows, args.markdown))
    print(
        f"\n(Django tree {source.name}; servers: "
        + ", ".join(f"{k} {v}" for k, v in versions.items())
        + f"; {platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; warm = median of "
        f"{args.rounds} calls)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
