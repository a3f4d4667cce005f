"""Two processes searching and resolving references in one workspace at the same time
(docs/references.md#lifetime: the registry is one SQLite file in ``.sleuth/`` shared by every CLI
call and server).

What runs: 2 x 200 real CLI calls took ~140 s on this shared 2-core VM (measured: 2 x 40 calls in
~28 s), over the ~90 s budget, so this test runs, all four at once,

* two worker processes doing 200 **in-process** ``Workbench`` calls each (one ``Workbench`` per
  process, alternating ``search`` of distinct queries and ``read`` of references from that
  worker's own earlier searches), and
* two worker processes doing 40 **real CLI calls** each (``python -m sleuth search|read
  --json``, the same alternation, with their own distinct queries).

Every search uses ``limit=1`` over a token found in two files, so the result is paged and every
other ``read`` is an ``:all:line`` that completes the result first: reads write to the registry
too, which is where two processes contend. Afterwards: every call succeeded with the expected
text, nothing mentioned "database is locked", every result id registered during the run reads
back, and the ``results`` table holds at least as many rows as there were distinct searches.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from sleuth.api import Workbench
from tests.conftest import MakeWorkspace
from tests.e2e.conftest import run_cli

IN_PROCESS_CALLS = 200
CLI_CALLS = 40

WORKER = textwrap.dedent('''
    """One worker: alternate search of distinct queries and read of its own references."""
    import json, random, subprocess, sys, traceback

    root, prefix, calls, kind = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    rng = random.Random(prefix)
    log = []

    if kind == "api":
        from sleuth.api import Workbench
        from sleuth.errors import SleuthError
        wb = Workbench(root)

        def call(args):
            try:
                if args[0] == "search":
                    data = wb.search(args[1], limit=1).to_json()
                else:
                    data = wb.read(args[1]).to_json()
                return 0, data, ""
            except SleuthError as exc:
                return exc.exit_code, exc.to_json(), str(exc)
            except Exception:
                return 99, None, traceback.format_exc()
    else:
        def call(args):
            extra = ["--limit", "1"] if args[0] == "search" else []
            proc = subprocess.run([sys.executable, "-m", "sleuth", *args, *extra, "--root", root,
                                   "--json"], capture_output=True, text=True)
            try:
                data = json.loads(proc.stdout)
            except ValueError:
                data = None
            return proc.returncode, data, proc.stdout + proc.stderr

    searches = []  # (query, result id)
    for i in range(calls):
        if i % 2 == 0:
            query = f"{prefix}_q{i // 2:03d}"
            args = ["search", query]
        else:
            query, rid = rng.choice(searches)
            unit = rng.choice(["1:match", "all:line"])
            args = ["read", f"{rid}:{unit}"]
        code, data, text = call(args)
        entry = {"args": args, "query": query, "code": code, "text": text[-2000:],
                 "data": data}
        if code == 0 and args[0] == "search":
            searches.append((query, data["result"]))
        log.append(entry)
    if kind == "api":
        wb.close()
    print(json.dumps(log))
''')


def _workspace(make_workspace: MakeWorkspace, prefixes: list[str], per: int) -> Path:
    """Each token ``P_qKKK`` is in exactly two files (so ``limit=1`` pages), on line 2."""
    files: dict[str, str | bytes] = {}
    for prefix in prefixes:
        for k in range(per):
            for copy in (1, 2):
                files[f"{prefix}/m{k}_{copy}.py"] = f"# {copy}\nv = {prefix}_q{k:03d}  # {k}\n"
    return make_workspace(files)


def _check_entry(entry: dict[str, Any]) -> None:
    where = json.dumps(entry["args"])
    assert entry["code"] == 0, (where, entry["text"])
    assert "database is locked" not in entry["text"].lower(), where
    assert "database is locked" not in json.dumps(entry["data"]).lower(), where
    data = entry["data"]
    query = entry["query"]
    if entry["args"][0] == "search":
        assert data["total"] == 2 and len(data["matches"]) == 1, where
        assert data["matches"][0]["text"] == f"v = {query}  # {int(query[-3:])}", where
    elif entry["args"][1].endswith(":1:match"):
        assert [r["text"] for r in data["ranges"]] == [query], where
    else:
        texts = [r["text"] for r in data["ranges"]]
        assert len(texts) == 2 and all(t.startswith(f"v = {query}  # ") for t in texts), where


def test_two_processes_search_and_read_at_once(make_workspace: MakeWorkspace) -> None:
    api_prefixes, cli_prefixes = ["api0", "api1"], ["cli0", "cli1"]
    root = _workspace(make_workspace, api_prefixes + cli_prefixes, IN_PROCESS_CALLS // 2)
    worker = root.parent / "worker.py"
    worker.write_text(WORKER)
    jobs = [(p, IN_PROCESS_CALLS, "api") for p in api_prefixes]
    jobs += [(p, CLI_CALLS, "cli") for p in cli_prefixes]
    procs = [
        subprocess.Popen(
            [sys.executable, str(worker), str(root), prefix, str(calls), kind],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for prefix, calls, kind in jobs
    ]
    outputs = [proc.communicate(timeout=600) for proc in procs]  # a hang guard, not a speed target

    logs: list[list[dict[str, Any]]] = []
    for proc, (out, err), (prefix, calls, _) in zip(procs, outputs, jobs, strict=True):
        assert proc.returncode == 0, (prefix, err[-3000:])
        assert "database is locked" not in err.lower() and "Traceback" not in err, err[-3000:]
        log = json.loads(out)
        assert len(log) == calls
        logs.append(log)
    for log in logs:
        for entry in log:
            _check_entry(entry)

    searches = {
        e["data"]["result"]: e["query"] for log in logs for e in log if e["args"][0] == "search"
    }
    reads = [e["data"]["result"] for log in logs for e in log if e["args"][0] == "read"]
    distinct = IN_PROCESS_CALLS // 2 * 2 + CLI_CALLS // 2 * 2
    assert len(searches) == distinct  # distinct queries gave distinct result ids
    assert len(reads) == distinct

    # Every registered result reads back (in one process: cheap), a sample through the CLI too.
    with Workbench(root, build_index=False) as wb:
        for rid, query in searches.items():
            assert [r["text"] for r in wb.read(f"{rid}:1:match").to_json()["ranges"]] == [query]
            assert len(wb.read(f"{rid}:all:match").to_json()["ranges"]) == 2
        for rid in set(reads):
            assert wb.read(rid).to_json()["ranges"], rid
    for rid, query in list(searches.items())[:: distinct // 4]:
        done = run_cli(["read", f"{rid}:all:match", "--root", str(root), "--json"])
        assert done.returncode == 0, done.stderr
        assert [r["text"] for r in json.loads(done.stdout)["ranges"]] == [query, query]

    db = sqlite3.connect(f"file:{root / '.sleuth' / 'registry.sqlite3'}?mode=ro", uri=True)
    try:
        (rows,) = db.execute("SELECT COUNT(*) FROM results").fetchone()
        (search_rows,) = db.execute(
            "SELECT COUNT(*) FROM results WHERE id LIKE 'SEARCH#%'"
        ).fetchone()
    finally:
        db.close()
    assert search_rows >= distinct and rows >= distinct + len(set(reads))
