"""Query-level graph benchmark: ``graph:`` through ``Workbench.search`` on real trees.

``benchmarks/graph.py`` measures the engine on tags it is handed; this one measures what a
user of the Python face (and so the CLI and MCP) gets, on a private copy of each tree (edits
never touch the shared corpus):

* **baseline** -- tree-sitter parsing every file the graph covers once (``parse``), and the
  tags extractor over the same files (``tags``: parse + query), in this process;
* **cold build** -- the first ``search("graph:")`` of a new ``Workbench`` on a tree without
  ``.sleuth/graph.db``: listing, stamping, tagging, resolving, ranking and writing the cache;
  its wall time and the process's peak RSS growth (``ru_maxrss``; with ``--tracemalloc`` also
  the Python heap peak, in a separate run since tracing slows everything);
* **cache load** -- the first ``search("graph:")`` of a second new ``Workbench`` (the cache is
  there);
* **one query per process** -- ``sleuth search graph:PATH --json`` (the file of the top-ranked
  declaration) in a fresh process, as an agent calling the CLI runs it: it reads only the part
  of the current cache that file's view needs; beside it, a fresh process giving the same
  answer from the whole cache (``Workbench(one_shot=False)``), what such a call cost before;
* **warm** -- median latency of ``graph:PATH`` (the file of the top-ranked declaration),
  ``graph:#ID`` (that declaration: the most used one, so the largest answer) and ``graph:``
  (``limit=20``), for an unwatched Workbench (the library default: every query re-stamps the
  listing) and a watching one (``watch=True``, as ``sleuth mcp``: the stamp pass is skipped
  while nothing changed). Every call carries a never-seen ``depth`` (ignored by these three
  queries), which changes nothing but the request's identity, so the result registry cannot
  hand back a stored answer (an exclude glob would do that too, but would also miss the
  workspace's listing cache);
* **edit -> next query** -- edits of one file from outside (``--edits`` files: the file of the
  top-ranked declaration, a hub many files import, then the files with the most declarations),
  then the time of the next ``graph:PATH`` of that file: first a function appended (the file's
  first edit in that Workbench: no tree of it is kept yet, so it is parsed and tagged whole),
  then ``--edit-rounds`` body edits (a comment before the first line: every position moves, no
  declaration does) and as many appended functions (each the median per file). The watching
  Workbench is first given the time its watcher needs to notice the write (reported apart; an
  edit through ``Workbench.replace`` is not seen any sooner: the edit layer does not move the
  workspace generation, tests/e2e/test_graph_e2e.py has the regression test);
* **update alone** -- after ``--edit-rounds`` more body edits, noticed by the watching
  Workbench, the time its graph takes each edit in (``GraphKeeper.graph``: re-tag, re-resolve,
  the cache row) before any answer is built: the part of the next query that is the update.

Each tree runs in a child process of its own so the RSS figures do not mix. Targets (issue 7):
cold build no slower than parsing the files once, edit -> next query < 100 ms, warm queries
< 50 ms. ``--profile`` prints (to stderr) a cProfile of a cold build on a fresh copy, one warm
``graph:``, one warm ``graph:PATH`` and one edit -> next query.

Usage::

    python benchmarks/graph_query.py --markdown                      # Django, kernel drivers/net
    python benchmarks/graph_query.py --tree django --rounds 7 --tracemalloc --markdown
    python benchmarks/graph_query.py --tree ~/src/project --profile
"""

from __future__ import annotations

import sys
from pathlib import Path

# benchmarks/ast.py would shadow the standard library's ast when run as a script from here.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import argparse  # noqa: E402
import cProfile  # noqa: E402
import functools  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
import pstats  # noqa: E402
import resource  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sleuth import Workbench  # noqa: E402
from sleuth.ast_search import language_for_path  # noqa: E402
from sleuth.ast_search.tags import extract_tags, tags_supported  # noqa: E402
from sleuth.ast_search.trees import parse  # noqa: E402
from sleuth.errors import NotFound  # noqa: E402
from sleuth.graph import DEFAULT_CACHE, Graph, load  # noqa: E402
from tests.corpus import cache_dir, django_tree  # noqa: E402

KERNEL_NET = "linux-6.1/linux-source-6.1/drivers/net"
_nonce = itertools.count()

# A function appended to a file, per language family: it calls the file's first declaration.
APPEND = {
    ".py": "\n\ndef sleuth_bench_probe_{n}():\n    return {name}()\n",
    ".ts": "\nexport function sleuthBenchProbe{n}() {{\n  return {name}();\n}}\n",
    ".js": "\nfunction sleuthBenchProbe{n}() {{\n  return {name}();\n}}\n",
    ".c": "\nstatic int sleuth_bench_probe_{n}(void)\n{{\n\treturn {name}();\n}}\n",
}
APPEND[".h"] = APPEND[".c"]
# A comment put before the first line: every position moves, no declaration or import changes
# (the usual agent edit is inside a body; the graph re-resolves only the edited file then).
PREPEND = {
    ".py": "# sleuth bench {n}\n",
    ".ts": "// sleuth bench {n}\n",
    ".js": "// sleuth bench {n}\n",
    ".c": "/* sleuth bench {n} */\n",
    ".h": "/* sleuth bench {n} */\n",
}


def named_trees(names: list[str]) -> list[tuple[str, Path]]:
    """(label, path) of each ``--tree``: ``django``, ``kernel-net`` or a folder."""
    out = []
    for name in names:
        if name == "django":
            out.append(("django", django_tree()))
        elif name == "kernel-net":
            path = cache_dir() / KERNEL_NET
            if path.is_dir():
                out.append(("kernel drivers/net", path))
            else:
                print(
                    f"skipping kernel-net: {path} is not there (benchmarks/corpora.py kernel)",
                    file=sys.stderr,
                )
        else:
            path = Path(name).expanduser().resolve()
            out.append((path.name, path))
    return out


def nonce() -> int:
    """A never-seen ``depth``: a fresh request identity, the same answer and listing."""
    return 1000 + next(_nonce)


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux


def graph_files(wb: Workbench) -> list[str]:
    """The files the graph tags: a language with tags rules."""
    out = []
    for entry in wb.workspace.list_files().files:
        lang = language_for_path(entry.path)
        if lang is not None and tags_supported(lang):
            out.append(entry.path)
    return out


def baseline(wb: Workbench, files: list[str]) -> dict[str, float]:
    """Seconds to parse every file once, and to tag every file once."""
    datas = []
    for path in files:
        ft = wb.workspace.read(path)
        if ft is not None:
            datas.append((path, ft.data, language_for_path(path) or ""))
    parse_s, _ = timed(lambda: [parse(lang, data) for _, data, lang in datas])
    tags_s, _ = timed(lambda: [extract_tags(p, data, lang) for p, data, lang in datas])
    return {
        "parse_s": parse_s,
        "tags_s": tags_s,
        "bytes_mb": sum(len(d) for _, d, _ in datas) / 1e6,
    }


def median_ms(fn: Callable[[], Any], rounds: int) -> float:
    return statistics.median(timed(fn)[0] for _ in range(rounds)) * 1000


def warm(wb: Workbench, path: str, node_id: str, rounds: int) -> dict[str, float]:
    queries = {"graph:PATH": f"graph:{path}", "graph:#ID": f"graph:#{node_id}", "graph:": "graph:"}
    return {
        label: median_ms(lambda q=q: wb.search(q, limit=20, depth=nonce()).to_json(), rounds)
        for label, q in queries.items()
    }


def edit_targets(wb: Workbench, files: list[str], hub: str, count: int) -> list[tuple[str, str]]:
    """(path, first top-level declaration): ``hub``, then the files with the most declarations."""
    graph = load(str(wb.workspace.root / DEFAULT_CACHE))
    sized = []
    for path in files:
        if Path(path).suffix not in APPEND:
            continue
        try:
            rec = graph.record(path)
        except NotFound:
            continue
        tops = [d.name for d in rec.defs if not d.container and d.name.isidentifier()]
        if tops:
            sized.append((len(rec.defs), path, tops[0]))
    sized.sort(key=lambda t: (t[1] != hub, -t[0], t[1]))
    return [(p, name) for _, p, name in sized[:count]]


def wait_for_watcher(wb: Workbench, start: int | None) -> float:
    """Seconds until a watching workbench's generation moves past ``start`` (0 if unwatched)."""
    if start is None:
        return 0.0
    t0 = time.perf_counter()
    deadline = t0 + 5
    while wb.workspace.generation == start and time.perf_counter() < deadline:
        time.sleep(0.005)
    return time.perf_counter() - t0


def edit_then_query(
    wb: Workbench, root: Path, path: str, name: str, body: bool = False
) -> tuple[float, float]:
    """Append a probe function to ``path`` from outside (``body``: put a comment before its
    first line instead); seconds of the next ``graph:PATH``.

    A watching workbench is given the time its watcher needs to notice (returned second); the
    file is restored afterwards.
    """
    n = next(_nonce)
    suffix = Path(path).suffix
    original = (root / path).read_bytes()
    first = wb.search(f"graph:{path}", limit=1, depth=nonce()).to_json()
    before, line = first["total"], first["matches"][0]["line"]
    start = wb.workspace.generation
    if body:
        (root / path).write_bytes(PREPEND[suffix].format(n=n).encode() + original)
    else:
        with open(root / path, "ab") as fh:
            fh.write(APPEND[suffix].format(n=n, name=name).encode())
    noticed = wait_for_watcher(wb, start)
    seconds, res = timed(lambda: wb.search(f"graph:{path}", limit=20, depth=nonce()).to_json())
    if body:
        assert res["matches"][0]["line"] == line + 1, f"the edit of {path} was seen"
    else:
        assert res["total"] == before + 1, f"the edit of {path} was seen"
    start = wb.workspace.generation
    (root / path).write_bytes(original)
    wait_for_watcher(wb, start)
    wb.search(f"graph:{path}", depth=nonce())
    return seconds, noticed


def synced_graph(wb: Workbench) -> Graph:
    """The workbench's graph after its keeper's sync (what any graph query does first)."""
    engines = wb._engines
    graph: Graph = engines.graph.graph(engines.tags, engines.trees, wb.workspace.list_files().files)
    return graph


def edit_then_update(wb: Workbench, root: Path, path: str) -> float:
    """A body edit of ``path`` from outside, noticed by a watching workbench; seconds the graph
    takes to take it in (re-tag, re-resolve, cache row), with no answer built: what the next
    query of any kind pays before it answers. The file is restored afterwards."""
    n = next(_nonce)
    original = (root / path).read_bytes()
    wb.search(f"graph:{path}", limit=1, depth=nonce())
    update = functools.partial(synced_graph, wb)

    line = update().record(path).defs[0].line
    start = wb.workspace.generation
    (root / path).write_bytes(PREPEND[Path(path).suffix].format(n=n).encode() + original)
    wait_for_watcher(wb, start)
    seconds, graph = timed(update)
    assert graph.record(path).defs[0].line == line + 1, f"the edit of {path} was seen"
    start = wb.workspace.generation
    (root / path).write_bytes(original)
    wait_for_watcher(wb, start)
    wb.search(f"graph:{path}", depth=nonce())
    return seconds


def most_read_class(wb: Workbench) -> tuple[str, str, str] | None:
    """(path, class name, a member's name) of the Python class with the most incoming uses
    (counted over its members too) that has a method to insert before, or None."""
    graph = synced_graph(wb)
    best: tuple[int, str, str, str] | None = None
    for path in graph.files():
        if not path.endswith(".py"):
            continue
        rec = graph.record(path)
        for d in rec.defs:
            if d.kind != "class" or d.container:
                continue
            members = [m for m in rec.defs if m.container == d.name and m.kind == "method"]
            if not members:
                continue
            uses = sum(graph.g.in_degree(n.id) for n in [d, *members])
            if best is None or uses > best[0]:
                best = (uses, path, d.name, members[0].name)
    return None if best is None else best[1:]


def member_then_update(
    wb: Workbench, root: Path, target: tuple[str, str, str]
) -> tuple[float, int]:
    """A method inserted into the most-read class from outside, noticed by a watching
    workbench: (seconds the graph takes to take it in, how many files it resolved again).
    The file is restored afterwards."""
    path, cls, member = target
    n = next(_nonce)
    original = (root / path).read_bytes()
    update = functools.partial(synced_graph, wb)

    graph = update()
    before = {p: id(graph.resolution(p)) for p in graph.files()}
    text = original.decode()
    head = text.index(f"class {cls}")
    at = text.index(f"def {member}(", head)
    line_start = text.rindex("\n", 0, at) + 1
    indent = text[line_start:at]
    probe = f"{indent}def sleuth_bench_member_{n}(self):\n{indent}    return {n}\n\n"
    start = wb.workspace.generation
    (root / path).write_bytes((text[:line_start] + probe + text[line_start:]).encode())
    wait_for_watcher(wb, start)
    seconds, graph = timed(update)
    assert any(d.name == f"sleuth_bench_member_{n}" for d in graph.record(path).defs), "seen"
    again = sum(1 for p, i in before.items() if graph.has_file(p) and id(graph.resolution(p)) != i)
    start = wb.workspace.generation
    (root / path).write_bytes(original)
    wait_for_watcher(wb, start)
    update()
    return seconds, again


# A fresh process answering one graph:PATH as the CLI does, but loading the whole graph
# (``one_shot=False``): what every CLI call paid before it read only the part it needs.
_WHOLE = (
    "import json, sys\n"
    "from sleuth.api import Workbench\n"
    "with Workbench(sys.argv[1], build_index=False, one_shot=False) as wb:\n"
    "    print(json.dumps(wb.search(sys.argv[2], limit=20, depth=int(sys.argv[3])).to_json()))\n"
)


def cli_calls(root: Path, path: str, rounds: int) -> dict[str, float]:
    """Median ms of ``sleuth search graph:PATH --json`` in a fresh process (it reads the part
    of the current cache it needs), and of the same answer from a fresh process that loads
    the whole cache; both answers must agree."""

    def cli() -> str:
        cmd = [
            sys.executable,
            "-m",
            "sleuth",
            "search",
            f"graph:{path}",
            "--root",
            str(root),
            "--limit",
            "20",
            "--depth",
            str(nonce()),
            "--json",
        ]
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout

    def whole() -> str:
        cmd = [sys.executable, "-c", _WHOLE, str(root), f"graph:{path}", str(nonce())]
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout

    def total(out: str) -> int:
        return int(json.loads(out)["total"])

    part_runs = [timed(cli) for _ in range(rounds)]
    whole_runs = [timed(whole) for _ in range(rounds)]
    assert total(part_runs[0][1]) == total(whole_runs[0][1]), "the two processes disagree"
    return {
        "cli_part_ms": statistics.median(t for t, _ in part_runs) * 1000,
        "cli_whole_ms": statistics.median(t for t, _ in whole_runs) * 1000,
    }


def profile(label: str, fn: Callable[[], Any]) -> None:
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    print(f"\n--- profile: {label} ---", file=sys.stderr)
    pstats.Stats(prof, stream=sys.stderr).sort_stats("cumulative").print_stats(25)


def edit_series(
    wb: Workbench, root: Path, targets: list[tuple[str, str]], rounds: int, face: str
) -> dict[str, list[float]]:
    """Per edited file (ms): its first edit in this workbench (a function appended: no tree of
    it is kept yet, so it is parsed and tagged whole), then the median of ``rounds`` body
    edits and of ``rounds`` more appended functions (re-tagged where they touch), and the
    watcher's latency."""
    out: dict[str, list[float]] = {
        f"first_{face}_ms": [],
        f"edit_{face}_ms": [],
        f"body_{face}_ms": [],
        f"watcher_{face}_ms": [],
    }
    for p, n in targets:
        first, noticed = edit_then_query(wb, root, p, n)
        out[f"first_{face}_ms"].append(first * 1000)
        body, new, seen = [], [], [noticed]
        for _ in range(rounds):
            t, w = edit_then_query(wb, root, p, n, body=True)
            body.append(t)
            seen.append(w)
            t, w = edit_then_query(wb, root, p, n)
            new.append(t)
            seen.append(w)
        out[f"body_{face}_ms"].append(statistics.median(body) * 1000)
        out[f"edit_{face}_ms"].append(statistics.median(new) * 1000)
        out[f"watcher_{face}_ms"].append(statistics.median(seen) * 1000)
    return out


def measure(
    label: str, source: Path, rounds: int, edits: int, trace: bool, prof: bool, edit_rounds: int = 3
) -> dict[str, Any]:
    """Everything for one tree, on a private copy (run in a child process)."""
    out: dict[str, Any] = {"tree": label}
    with tempfile.TemporaryDirectory(prefix="sleuth-graph-bench-") as tmp:
        root = Path(tmp) / "tree"
        shutil.copytree(source, root, symlinks=True, ignore=shutil.ignore_patterns(".sleuth"))
        if trace:
            tracemalloc.start()
        rss0 = rss_mb()
        wb = Workbench(root, servers=False)
        out["cold_s"], ranked = timed(lambda: wb.search("graph:", limit=20).to_json())
        out["rss_mb"] = rss_mb() - rss0
        if trace:
            out["heap_peak_mb"] = tracemalloc.get_traced_memory()[1] / 1e6
            tracemalloc.stop()
            wb.close()
            return out
        wb._engines.graph.flush()  # the cold build's cache write lands behind the answer
        graph = load(str(root / DEFAULT_CACHE))
        out["nodes"], out["edges"] = graph.g.number_of_nodes(), graph.g.number_of_edges()
        out["cache_mb"] = (root / DEFAULT_CACHE).stat().st_size / 1e6
        del graph
        files = graph_files(wb)
        out["files"] = len(files)
        out.update(baseline(wb, files))
        second = Workbench(root, servers=False)
        out["cache_load_s"], _ = timed(
            lambda: second.search("graph:", limit=20, depth=nonce()).to_json()
        )
        second.close()
        top = ranked["matches"][0]
        out["top"] = f"{top['path']}::{top['graph']['name']}"
        path, node_id = top["path"], top["graph"]["id"]
        out.update(cli_calls(root, path, rounds=3))
        out["warm"] = warm(wb, path, node_id, rounds)
        targets = edit_targets(wb, files, path, edits)
        out["edit_files"] = [p for p, _ in targets]
        out.update(edit_series(wb, root, targets, edit_rounds, "unwatched"))
        watched = Workbench(root, servers=False, watch=True)
        watched.search("graph:", limit=20)
        time.sleep(1.0)  # the watcher's watches in place: its generation becomes trustworthy
        watched.search("graph:", limit=20, depth=nonce())
        out["warm_watched"] = warm(watched, path, node_id, rounds)
        out.update(edit_series(watched, root, targets, edit_rounds, "watched"))
        out["update_watched_ms"] = [
            statistics.median(edit_then_update(watched, root, p) * 1000 for _ in range(edit_rounds))
            for p, _ in targets
        ]
        cls = most_read_class(watched)
        if cls is not None:
            runs = [member_then_update(watched, root, cls) for _ in range(edit_rounds + 1)]
            out["member_class"] = f"{cls[0]}::{cls[1]}"
            out["member_first_ms"] = runs[0][0] * 1000  # the file's first edit: parsed whole
            out["member_ms"] = [t * 1000 for t, _ in runs[1:]]
            out["member_resolved"] = [k for _, k in runs]
        if prof:
            fresh = Path(tmp) / "fresh"
            shutil.copytree(root, fresh, symlinks=True, ignore=shutil.ignore_patterns(".sleuth"))
            cold = Workbench(fresh, servers=False)
            profile("cold graph: build (fresh copy)", lambda: cold.search("graph:", limit=20))
            cold.close()
            profile(
                "warm graph: (watched)", lambda: watched.search("graph:", limit=20, depth=nonce())
            )
            profile(
                "warm graph:PATH (unwatched)", lambda: wb.search(f"graph:{path}", depth=nonce())
            )
            p, n = targets[0]
            profile("edit -> next graph:PATH (unwatched)", lambda: edit_then_query(wb, root, p, n))
        watched.close()
        wb.close()
    return out


def run_child(label: str, path: Path, args: argparse.Namespace, trace: bool) -> dict[str, Any]:
    cmd = [
        sys.executable,
        __file__,
        "--one",
        str(path),
        "--label",
        label,
        "--rounds",
        str(args.rounds),
        "--edits",
        str(args.edits),
        "--edit-rounds",
        str(args.edit_rounds),
    ]
    if trace:
        cmd.append("--trace-run")
    if args.profile and not trace:
        cmd.append("--profile")
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    sys.stderr.write(proc.stderr)
    if proc.returncode != 0:
        raise SystemExit(f"{label}: child failed ({proc.returncode})")
    result: dict[str, Any] = json.loads(proc.stdout.splitlines()[-1])
    return result


def fmt_ms(values: list[float]) -> str:
    if not values:
        return "-"
    return f"{statistics.median(values):.0f} (max {max(values):.0f})"


def markdown(results: list[dict[str, Any]]) -> str:
    rows = [
        "| tree | files (MB) | nodes / edges | parse once (s) | tag once (s) | cold `graph:` build (s) | "
        "cold / parse | peak RSS growth (MB) | Python heap peak (MB) | cache load (s) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        heap = f"{r['heap_peak_mb']:.0f}" if "heap_peak_mb" in r else "-"
        rows.append(
            f"| {r['tree']} | {r['files']} ({r['bytes_mb']:.0f}) | {r['nodes']} / {r['edges']} | "
            f"{r['parse_s']:.2f} | {r['tags_s']:.2f} | {r['cold_s']:.2f} | {r['cold_s'] / r['parse_s']:.1f}x | "
            f"{r['rss_mb']:.0f} | {heap} | {r['cache_load_s']:.2f} |"
        )
    rows += [
        "",
        "| tree | face | `graph:PATH` (ms) | `graph:#ID` (ms) | `graph:` top 20 (ms) | "
        "first edit of a file -> next `graph:PATH` (ms) | new function -> next `graph:PATH` (ms) | "
        "body edit -> next `graph:PATH` (ms) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        for face, key, w in (
            ("unwatched, edit written from outside", "unwatched", r["warm"]),
            ("watching (`watch=True`), edit noticed by the watcher", "watched", r["warm_watched"]),
        ):
            rows.append(
                f"| {r['tree']} | {face} | {w['graph:PATH']:.0f} | {w['graph:#ID']:.0f} | "
                f"{w['graph:']:.0f} | {fmt_ms(r[f'first_{key}_ms'])} | "
                f"{fmt_ms(r[f'edit_{key}_ms'])} | {fmt_ms(r[f'body_{key}_ms'])} |"
            )
    rows.append("")
    rows += [
        f"Graph update alone after a body edit (watching; re-tag, re-resolve, cache row, no "
        f"answer), {r['tree']}: {fmt_ms(r['update_watched_ms'])} ms."
        for r in results
        if "update_watched_ms" in r
    ]
    rows += [
        f"A method inserted into the most-read class, {r['member_class']} (watching, "
        f"update alone): {fmt_ms(r['member_ms'])} ms, first edit of that file "
        f"{r['member_first_ms']:.0f} ms; files resolved again: "
        f"{', '.join(map(str, r['member_resolved']))}."
        for r in results
        if "member_ms" in r
    ]
    rows += [
        f"One `graph:PATH` per process, {r['tree']} ({r['top'].split('::')[0]}): the CLI, reading "
        f"only the part of the cache it shows, {r['cli_part_ms']:.0f} ms; a process loading the whole "
        f"cache {r['cli_whole_ms']:.0f} ms."
        for r in results
        if "cli_part_ms" in r
    ]
    rows += [
        f"Watcher latency (write -> generation moves), {r['tree']}: {fmt_ms(r['watcher_watched_ms'])} ms; "
        f"edited: {', '.join(r['edit_files'])}; top-ranked: {r['top']}."
        for r in results
    ]
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", action="append", help="django, kernel-net or a folder (repeatable)")
    ap.add_argument("--rounds", type=int, default=5, help="warm rounds per query (median)")
    ap.add_argument("--edits", type=int, default=3, help="files edited for the update timing")
    ap.add_argument(
        "--edit-rounds", type=int, default=3, help="edits of each kind per file (median)"
    )
    ap.add_argument("--tracemalloc", action="store_true", help="also trace the cold build's heap")
    ap.add_argument("--profile", action="store_true", help="cProfile warm and incremental queries")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--label", help=argparse.SUPPRESS)
    ap.add_argument("--trace-run", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        res = measure(
            args.label or args.one,
            Path(args.one),
            args.rounds,
            args.edits,
            args.trace_run,
            args.profile,
            args.edit_rounds,
        )
        print(json.dumps(res))
        return
    results = []
    for label, path in named_trees(args.tree or ["django", "kernel-net"]):
        print(f"{label}: {path}", file=sys.stderr)
        res = run_child(label, path, args, trace=False)
        if args.tracemalloc:
            res["heap_peak_mb"] = run_child(label, path, args, trace=True)["heap_peak_mb"]
        print(json.dumps(res), file=sys.stderr)
        results.append(res)
    print(markdown(results) if args.markdown else json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
