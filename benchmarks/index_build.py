"""Trigram index build benchmark: seconds, peak memory and index size of ``sleuth index``.

What it runs is what ``sleuth index`` runs: ``Workbench(tree, build_index=False)`` then
``index_now()``, after removing ``<tree>/.sleuth/trigram.idx`` so the build starts from nothing
(``--keep`` leaves it, measuring a refresh instead). It prints one JSON object: files indexed,
the listing and build seconds, the index file's size, and peak memory two ways:

* ``peak_rss_self_mb``: this process's high-water RSS (``getrusage``), what ``/usr/bin/time -v``
  reports as "Maximum resident set size" for a one-process build;
* ``peak_rss_tree_mb``: the largest *sum* of RSS over this process and its children, sampled
  every 50 ms from ``/proc`` -- the honest figure once worker processes take part (``time -v``
  reports only the largest single process); it counts pages a forked worker shares with the
  parent twice, which ``peak_pss_tree_mb`` (the summed proportional set size) does not.

``cpu_s`` is user + system time of this process and its finished children: on this shared
machine wall seconds follow the other tenants' load, CPU seconds much less.

Run it on a hard-linked copy of a shared corpus (``cp -al``) so that removing the index there
cannot disturb anyone else's ``.sleuth/``. Usage::

    /usr/bin/time -v .venv/bin/python -m benchmarks.index_build --tree PATH [--keep] [--check]

``--check`` then compares the index's candidates with a scan for a few literals (a candidate set
must be a superset of the files that hold the literal).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import threading
import time
from pathlib import Path
from typing import Any

from sleuth.query.index import INDEX_FILE
from sleuth.service.workbench import Workbench

CHECK_LITERALS = (b"__ext4_journal_ensure_credits", b"kmalloc", b"get_user", b"MODULE_LICENSE")


def _proc_kb(path: str, field: bytes) -> int:
    try:
        with open(path, "rb") as fh:
            for line in fh:
                if line.startswith(field):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            kids = [int(k) for k in fh.read().split()]
    except OSError:
        return []
    return kids + [g for k in kids for g in _children(k)]


class TreeRss:
    """Samples the summed RSS (and PSS) of this process and its descendants in a thread."""

    def __init__(self, interval: float = 0.05) -> None:
        self.peak_kb = 0
        self.peak_pss_kb = 0
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> TreeRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        me = os.getpid()
        while not self._stop.wait(self._interval):
            procs = [me, *_children(me)]
            rss = sum(_proc_kb(f"/proc/{p}/status", b"VmRSS:") for p in procs)
            pss = sum(_proc_kb(f"/proc/{p}/smaps_rollup", b"Pss:") for p in procs)
            self.peak_kb = max(self.peak_kb, rss)
            self.peak_pss_kb = max(self.peak_pss_kb, pss)


def _check(wb: Workbench) -> dict[str, Any]:
    """Candidates vs a scan: every file holding a literal must be a candidate."""
    files = wb.workspace.list_files().files
    out: dict[str, Any] = {}
    for lit in CHECK_LITERALS:
        holding = set()
        for f in files:
            ft = wb.workspace.read(f.path)
            if ft is not None and lit.lower() in ft.data.lower():
                holding.add(f.path)
        cands = wb.index.candidates(((lit,),))
        missing = holding - cands if cands is not None else set()
        out[lit.decode()] = {
            "holding": len(holding),
            "candidates": None if cands is None else len(cands),
            "missing": len(missing),
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", required=True, type=Path)
    ap.add_argument("--keep", action="store_true", help="keep an existing index (a refresh)")
    ap.add_argument("--check", action="store_true", help="compare candidates with a scan")
    args = ap.parse_args()
    idx = args.tree / ".sleuth" / INDEX_FILE
    if not args.keep:
        idx.unlink(missing_ok=True)
    load_start = os.getloadavg()[0]
    with TreeRss() as sampler, Workbench(args.tree, build_index=False, servers=False) as wb:
        t0 = time.perf_counter()
        listed = len(wb.workspace.list_files().files)
        t1 = time.perf_counter()
        indexed = wb.index_now()
        t2 = time.perf_counter()
        checked = _check(wb) if args.check else None
    result: dict[str, Any] = {
        "tree": str(args.tree),
        "files_listed": listed,
        "files_indexed": indexed,
        "list_s": round(t1 - t0, 2),
        "index_now_s": round(t2 - t1, 2),
        "index_mb": round(idx.stat().st_size / 1e6, 1) if idx.exists() else None,
        "peak_rss_self_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "peak_rss_tree_mb": round(sampler.peak_kb / 1024),
        "peak_pss_tree_mb": round(sampler.peak_pss_kb / 1024),
        "cpu_s": round(sum(os.times()[:4]), 1),
        "loadavg_start": load_start,
        "loadavg_end": os.getloadavg()[0],
        "cpus": os.cpu_count(),
    }
    if checked is not None:
        result["check"] = checked
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
