"""A cold build's fast paths give the graph an in-process build gives.

Tagging workers send each file's record as a ``marshal``-ed row made from plain tuples
(``extract_tag_tuples`` + ``record_row``), which the graph keeps as a row; resolution runs in
forked workers (``sleuth.graph.workers``) when many files need it. Each path is forced here on a
small project (thresholds lowered) and compared with the plain in-process build: nodes, edges,
resolutions and cache rows.
"""

from __future__ import annotations

import marshal
import os
import threading
import time
from collections.abc import Generator
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from sleuth import Workbench
from sleuth.ast_search.tags import extract_tag_tuples, extract_tags
from sleuth.graph import Graph, GraphStore, make_record, workers
from sleuth.graph.records import FileRecord, record_row, record_to_row
from sleuth.query import graph_keeper
from sleuth.tuning import Tuning
from sleuth.workspace.reader import stamp_bytes
from tests.graph.project import PY, TS
from tests.lsp_bridge.conftest import write_tree

# A few more modules, so the pool gets several chunks: a chain of imports, a class hierarchy
# across files, a star import and a relative import.
EXTRA: dict[str, str] = {
    **{
        f"chain/m{i}.py": (
            f"from chain.m{i - 1} import f{i - 1}, K{i - 1}\n\n\n"
            f"class K{i}(K{i - 1}):\n    def go(self):\n        return self.base()\n\n\n"
            f"def f{i}(x):\n    return f{i - 1}(x) + K{i}().go()\n"
        )
        for i in range(1, 9)
    },
    "chain/m0.py": "class K0:\n    def base(self):\n        return 0\n\n\ndef f0(x):\n    return x\n",
    "chain/__init__.py": "from .m3 import *\nfrom . import m1\n",
    "use.py": "import chain\nfrom chain import f3\n\n\ndef run():\n    return chain.m1.f1(f3(2))\n",
    "web/app.js": (
        'const util = require("./util");\nimport { Shape } from "./shape";\n'
        "class Circle extends Shape {\n  area() { return util.pi() * this.r; }\n}\n"
    ),
    "web/util.js": "export function pi() { return 3.14; }\n",
    "web/shape.js": "export class Shape {\n  area() { return 0; }\n}\n",
}
SOURCES = {**PY, **TS, **EXTRA}


def _lang(path: str) -> str:
    return {"py": "python", "ts": "typescript", "js": "javascript"}[path.rsplit(".", 1)[1]]


def _records() -> dict[str, FileRecord]:
    out = {}
    for path, text in sorted(SOURCES.items()):
        data = text.encode()
        out[path] = make_record(extract_tags(path, data, _lang(path)), data, stamp_bytes(data))
    return out


def _state(graph: Graph) -> Any:
    rows = {p: graph.row(p) for p in graph.files()}
    return graph.snapshot(), rows


def _built(changes: dict[str, Any], *, parallel: bool = False, **knobs: Any) -> Graph:
    graph = Graph()
    graph.apply(changes, parallel=parallel, tuning=replace(Tuning(), **knobs))
    return graph


# Tag and resolve in process (thresholds out of reach), or in pools for this small project.
HERE = replace(Tuning(), graph_pool_min_files=10**9, resolve_pool_min=10**9)
POOLED = replace(Tuning(), graph_pool_min_files=1, resolve_pool_min=1, resolve_chunk=4)


def test_tag_tuples_make_the_row_a_record_makes() -> None:
    for path, text in sorted(SOURCES.items()):
        data = text.encode()
        stamp = stamp_bytes(data)
        want = record_to_row(make_record(extract_tags(path, data, _lang(path)), data, stamp))
        lang, defs, refs, complete, reason = extract_tag_tuples(path, data, _lang(path))
        assert record_row(lang, stamp, complete, reason, defs, refs, data) == want, path


def test_rows_and_marshalled_rows_build_the_graph_records_build() -> None:
    records = _records()
    want = _state(_built(dict(records)))
    assert _state(_built({p: record_to_row(r) for p, r in records.items()})) == want
    blobs = {p: marshal.dumps(record_to_row(r)) for p, r in records.items()}
    graph = _built(dict(blobs))
    assert _state(graph) == want
    # the cache writes the very bytes it was given, and loads back the same graph
    assert graph.blobs("use.py")[0] == blobs["use.py"]


def test_a_graph_of_rows_updates_like_one_of_records() -> None:
    records = _records()
    graph = _built({p: marshal.dumps(record_to_row(r)) for p, r in records.items()})
    text = SOURCES["chain/m2.py"].replace("def go(self)", "def went(self)")
    data = text.encode()
    edited = make_record(extract_tags("chain/m2.py", data, "python"), data, stamp_bytes(data))
    graph.apply({"chain/m2.py": edited, "chain/m5.py": None})
    fresh = _built({**records, "chain/m2.py": edited})
    fresh.apply({"chain/m5.py": None})
    assert _state(graph) == _state(fresh)


needs_fork = pytest.mark.skipif(not workers.can_fork(), reason="needs fork and two cores")


@needs_fork
def test_pooled_resolution_equals_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = workers.iter_resolved

    def spy(make: Any, paths: Any, chunk: int) -> Generator[tuple[str, bytes], None, None]:
        calls.append(len(paths))
        return real(make, paths, chunk)

    monkeypatch.setattr(workers, "iter_resolved", spy)
    records = _records()
    rows = {p: marshal.dumps(record_to_row(r)) for p, r in records.items()}
    pooled = _built(rows, parallel=True, resolve_pool_min=1, resolve_chunk=3)
    assert calls == [len(records)]  # every file was resolved in the pool
    assert _state(pooled) == _state(_built(dict(records)))
    for path in pooled.files():  # the cache bytes the workers made are the rows
        rec, res = pooled.blobs(path)
        assert (marshal.loads(rec), marshal.loads(res)) == pooled.row(path)


def test_a_failed_pool_resolves_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    real, forks = workers.iter_resolved, workers.can_fork()
    monkeypatch.setattr(workers, "can_fork", lambda: True)

    def broken(make: Any, paths: Any, chunk: int) -> Generator[tuple[str, bytes], None, None]:
        if forks:
            yield from real(make, paths[:5], chunk)  # a few files resolved there, then it breaks
        raise OSError("no more processes")

    monkeypatch.setattr(workers, "iter_resolved", broken)
    records = _records()
    pooled = _built(dict(records), parallel=True, resolve_pool_min=1)
    assert _state(pooled) == _state(_built(dict(records)))


def _old_trees(tmp_path: Path, *names: str) -> None:
    """A copy of the project per name, old enough for the stat signatures to be trusted."""
    old = time.time() - 3600
    for name in names:
        write_tree(tmp_path / name, SOURCES)
        for path in SOURCES:
            os.utime(tmp_path / name / path, (old, old))


def _queries(wb: Workbench) -> list[Any]:
    out = []
    for query in ("graph:", "graph:chain/m4.py", "graph:use.py", "graph:web/app.js"):
        res = wb.search(query, limit=50).to_json()
        out.append([(m["path"], m["line"], m["graph"]) for m in res["matches"]])
    return out


def _answers(root: Path, tuning: Tuning | None = None) -> Any:
    with Workbench(root, servers=False, tuning=tuning) as wb:
        out = _queries(wb)
    graph, _ = GraphStore(str(root / ".sleuth" / "graph.db")).load()
    return out, _state(graph)


@needs_fork
def test_a_keeper_build_in_workers_equals_one_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _old_trees(tmp_path, "pooled", "here")
    here = _answers(tmp_path / "here", HERE)
    assert _answers(tmp_path / "pooled", POOLED) == here


def test_a_keeper_whose_tagging_pool_breaks_tags_the_rest_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _old_trees(tmp_path, "broken", "here")
    here = _answers(tmp_path / "here", replace(Tuning(), graph_pool_min_files=10**9))
    real = graph_keeper._tag_in_pool

    def breaking(jobs: Any, tuning: Tuning) -> Generator[tuple[str, bytes], None, None]:
        if workers.can_fork():
            yield from real(jobs[:3], tuning)  # a few files tagged there, then the pool breaks
        raise BrokenProcessPool("a worker died")

    monkeypatch.setattr(graph_keeper, "can_fork", lambda: True)
    monkeypatch.setattr(graph_keeper, "_tag_in_pool", breaking)
    assert _answers(tmp_path / "broken", replace(Tuning(), graph_pool_min_files=1)) == here


def test_a_sync_that_fails_midway_leaves_no_half_graph(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tagging error other than a broken pool (here: in-process, on the fifth file) fails the
    query; the next query of the same workbench answers as a fresh build does, with no file
    silently missing, and so does the cache it leaves."""
    _old_trees(tmp_path, "failed", "fresh")
    in_process = replace(Tuning(), graph_pool_min_files=10**9)
    fresh_answers, fresh_state = _answers(tmp_path / "fresh", in_process)
    real = graph_keeper._tags_of
    calls = []

    def failing(*args: Any) -> Any:
        calls.append(1)
        if len(calls) == 5:
            raise MemoryError("out of memory while tagging")
        return real(*args)

    root = tmp_path / "failed"
    with Workbench(root, servers=False, tuning=in_process) as wb:
        monkeypatch.setattr(graph_keeper, "_tags_of", failing)
        with pytest.raises(MemoryError):
            wb.search("graph:")
        monkeypatch.setattr(graph_keeper, "_tags_of", real)
        again = _queries(wb)
    assert len(calls) == 5 and again == fresh_answers
    graph, _ = GraphStore(str(root / ".sleuth" / "graph.db")).load()
    assert _state(graph) == fresh_state


@needs_fork
def test_a_pooled_build_loads_the_ranking_libraries_between_its_forks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The load runs on its own thread once the tag workers are forked, and is over before the
    # resolution workers are: no child is ever forked in the middle of an import.
    _old_trees(tmp_path, "pooled")
    loaded = threading.Event()
    threads: list[str] = []

    def preload() -> None:
        threads.append(threading.current_thread().name)
        time.sleep(0.2)
        loaded.set()

    real_resolved = workers.iter_resolved
    seen_at_fork: list[bool] = []

    def resolved(*args: Any, **kwargs: Any) -> Any:
        seen_at_fork.append(loaded.is_set())
        return real_resolved(*args, **kwargs)

    monkeypatch.setattr(graph_keeper, "preload_rank", preload)
    monkeypatch.setattr(workers, "iter_resolved", resolved)
    pooled = replace(Tuning(), graph_pool_min_files=1, resolve_pool_min=1)
    with Workbench(tmp_path / "pooled", servers=False, tuning=pooled) as wb:
        assert wb.search("graph:", limit=5).to_json()["matches"]
    assert threads == ["sleuth-preload"]
    assert seen_at_fork == [True]
