"""Graph benchmark: tag a tree, build the reference graph, rank, update, save and load.

Measures, on one tree (Python or TypeScript/JavaScript files): tagging time (the extractor, for
scale), a full build, ``rank(20)``, single-file updates (unchanged content, and an edit that
renames every top-level declaration of a file — the worst case for re-resolution), and the
``.sleuth/graph.db`` round trip (a full save, a load, and the incremental write after one
edited file). Prints one JSON object; there is no external baseline.

Usage::

    python benchmarks/graph.py --tree ~/.cache/sleuth/corpora/django-5.2/django-5.2.N/django
    python benchmarks/graph.py --tree ~/.cache/sleuth/corpora/rxjs-7.8.2 --lang typescript
"""

from __future__ import annotations

import sys
from pathlib import Path

# benchmarks/ast.py would shadow the standard library's ast when run as a script from here.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import argparse  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import re  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

from sleuth.ast_search.tags import extract_tags  # noqa: E402
from sleuth.graph import Graph, GraphStore, save  # noqa: E402

EXTS = {"python": (".py",), "typescript": (".ts", ".tsx", ".js", ".mjs")}


def _lang(path: str, default: str) -> str:
    if path.endswith(".tsx"):
        return "tsx"
    if path.endswith((".js", ".mjs")):
        return "javascript"
    return default


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", required=True)
    ap.add_argument("--lang", default="python", choices=sorted(EXTS))
    ap.add_argument("--updates", type=int, default=20)
    args = ap.parse_args()
    root = Path(args.tree).expanduser()
    files = {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name.endswith(EXTS[args.lang])
    }
    out: dict[str, object] = {"tree": str(root), "files": len(files)}

    t0 = time.perf_counter()
    tags = {p: extract_tags(p, d, _lang(p, args.lang)) for p, d in files.items()}
    out["tag_s"] = round(time.perf_counter() - t0, 3)
    out["refs"] = sum(len(t.refs) for t in tags.values())

    t0 = time.perf_counter()
    graph = Graph()
    graph.update_files([(tags[p], files[p], None) for p in files])
    out["build_s"] = round(time.perf_counter() - t0, 3)
    out["nodes"], out["edges"] = graph.g.number_of_nodes(), graph.g.number_of_edges()
    out["unresolved"] = sum(graph.resolution(p).unresolved for p in files)

    t0 = time.perf_counter()
    top = graph.rank(20)
    out["rank_s"] = round(time.perf_counter() - t0, 3)
    t0 = time.perf_counter()
    graph.rank(20)
    out["rank_warm_ms"] = round((time.perf_counter() - t0) * 1000, 2)
    out["top"] = [f"{r.node.path}::{r.node.container or ''}{r.node.name}" for r in top[:5]]

    rng = random.Random(7)
    sample = rng.sample(sorted(files), min(args.updates, len(files)))
    same, renamed = [], []
    for path in sample:
        t0 = time.perf_counter()
        graph.update_file(tags[path], files[path])
        same.append(time.perf_counter() - t0)
        names = {d.name for d in tags[path].defs if not d.container}
        data = files[path]
        for name in names:
            data = re.sub(rb"\b%s\b" % re.escape(name.encode()), name.encode() + b"_x", data)
        t0 = time.perf_counter()
        graph.update_file(extract_tags(path, data, _lang(path, args.lang)), data)
        renamed.append(time.perf_counter() - t0)
        graph.update_file(tags[path], files[path])
    out["update_same_ms_median"] = round(sorted(same)[len(same) // 2] * 1000, 2)
    out["update_rename_ms_median"] = round(sorted(renamed)[len(renamed) // 2] * 1000, 2)
    out["update_rename_ms_max"] = round(max(renamed) * 1000, 2)

    with tempfile.TemporaryDirectory() as tmp:
        cache = str(Path(tmp) / "graph.db")
        t0 = time.perf_counter()
        save(graph, cache)
        out["save_s"] = round(time.perf_counter() - t0, 3)
        out["cache_mb"] = round(Path(cache).stat().st_size / 1e6, 1)
        t0 = time.perf_counter()
        store = GraphStore(cache)
        loaded, _ = store.load()
        out["load_s"] = round(time.perf_counter() - t0, 3)
        writes, rows = [], []
        for path in sample:
            data = files[path] + b"\n\ndef sleuth_bench_probe():\n    return 1\n"
            loaded.update_file(extract_tags(path, data, _lang(path, args.lang)), data)
            t0 = time.perf_counter()
            rows.append(store.write(loaded))
            writes.append(time.perf_counter() - t0)
        store.close()
        out["write_after_edit_ms_median"] = round(sorted(writes)[len(writes) // 2] * 1000, 2)
        out["rows_after_edit_median"] = sorted(rows)[len(rows) // 2]
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
