"""``graph:PATH`` in a one-shot process reads only the part of a current cache it shows.

Every answer read from a part (``sleuth.graph.partial``, through ``Workbench(one_shot=True)``)
must equal the answer of a workbench that loaded the whole graph, for every file and folder of
the Python and TypeScript fixture projects; and whenever the cache is not plainly current (a
file edited, added or removed since, no cache, another format, a stored edge whose end the part
would lack), the one-shot answer comes from a full sync instead — and still equals it. A part
is never written back.
"""

from __future__ import annotations

import itertools
import json
import marshal
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from sleuth.api import Workbench
from sleuth.graph.store import DEFAULT_CACHE

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
Json = dict[str, Any]


def _aged(src: Path, dst: Path) -> Path:
    """A copy of ``src`` whose files are an hour old: their stat signatures are trusted."""
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "expected.json"))
    past = time.time() - 3600
    for path in dst.rglob("*"):
        os.utime(path, (past, past))
    return dst


def _built(root: Path) -> None:
    with Workbench(root, servers=False, build_index=False) as wb:
        wb.search("graph:", limit=5)


_ROUNDS = itertools.count(1)


def _answer(root: Path, query: str, one_shot: bool) -> tuple[Json, int]:
    """(the answer's matches, total and completeness; parts read) of a fresh workbench.

    Each call asks for another ``depth`` (no part of a ``graph:PATH`` answer, but of its
    identity), so no answer is one a previous call stored in the workspace's result registry.
    """
    with Workbench(root, servers=False, build_index=False, one_shot=one_shot) as wb:
        res = wb.search(query, limit=1000, depth=next(_ROUNDS)).to_json()
        keeper = wb._engines.graph
        parts = keeper.parts if keeper is not None else 0
    # the references name the result, and so differ between any two answers
    matches = [{k: v for k, v in m.items() if k != "ref"} for m in res["matches"]]
    return {"matches": matches, "total": res["total"], "complete": res["complete"]}, parts


def _same(root: Path, query: str) -> int:
    whole, _ = _answer(root, query, one_shot=False)
    part, parts = _answer(root, query, one_shot=True)
    assert json.dumps(part, sort_keys=True) == json.dumps(whole, sort_keys=True), query
    return parts


def _queries(root: Path) -> list[str]:
    files = sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.suffix in (".py", ".ts") and ".sleuth" not in p.parts
    )
    folders = sorted({f.rsplit("/", 1)[0] for f in files if "/" in f})
    return [f"graph:{p}" for p in [*files, *folders]]


@pytest.mark.parametrize("fixture", ["graph_py", "graph_ts"])
def test_every_file_and_folder_answers_from_a_part_as_from_the_whole_graph(
    tmp_path: Path, fixture: str
) -> None:
    root = _aged(FIXTURES / fixture, tmp_path / fixture)
    _built(root)
    queries = _queries(root)
    assert len(queries) >= 5
    used = [_same(root, q) for q in queries]
    # a part bigger than a quarter of the graph is not worth it: only the small views use one
    assert sum(used) >= len(queries) // 2, used


def test_a_part_holds_only_the_neighbours_and_nothing_is_written(tmp_path: Path) -> None:
    root = _aged(FIXTURES / "graph_py", tmp_path / "p")
    _built(root)
    db = root / DEFAULT_CACHE
    before = db.read_bytes() if not (root / (DEFAULT_CACHE + "-wal")).exists() else None
    rows = sqlite3.connect(db).execute("SELECT path, record, resolution FROM files").fetchall()
    with Workbench(root, servers=False, build_index=False, one_shot=True) as wb:
        wb.search("graph:app.py")
        part = wb._engines.graph
        assert part.parts == 1 and part._graph is None  # the part is not kept as the graph
    again = sqlite3.connect(db).execute("SELECT path, record, resolution FROM files").fetchall()
    assert again == rows
    if before is not None:
        assert db.read_bytes() == before
    assert {marshal.loads(r[1])[1] for r in again}  # stamps are there: the rows are real


@pytest.mark.parametrize("change", ["edit", "add", "remove", "no cache", "format", "racy"])
def test_a_cache_that_is_not_plainly_current_is_synced_in_full(tmp_path: Path, change: str) -> None:
    root = _aged(FIXTURES / "graph_py", tmp_path / "p")
    _built(root)
    target = "app.py"
    if change == "edit":
        path = root / "shop" / "models.py"
        past = time.time() - 3000
        path.write_text(path.read_text() + "\n\ndef added_later():\n    return 1\n")
        os.utime(path, (past, past))
        target = "shop/models.py"
    elif change == "add":
        (root / "extra.py").write_text("from app import main\n\n\ndef more():\n    return main()\n")
    elif change == "remove":
        (root / "tools" / "helpers.py").unlink()
    elif change == "no cache":
        shutil.rmtree(root / ".sleuth")
    elif change == "format":
        db = sqlite3.connect(root / DEFAULT_CACHE)
        db.execute("UPDATE meta SET value = 'old' WHERE key = 'format'")
        db.commit()
        db.close()
    else:  # stored before its stat could be trusted: no signature to compare
        db = sqlite3.connect(root / DEFAULT_CACHE)
        db.execute("UPDATE files SET size = NULL, mtime_ns = NULL WHERE path = 'app.py'")
        db.commit()
        db.close()
    part, parts = _answer(root, f"graph:{target}", one_shot=True)
    assert parts == 0
    whole, _ = _answer(root, f"graph:{target}", one_shot=False)
    assert part == whole
    if change == "edit":
        assert "added_later" in json.dumps(part)


def test_an_edge_to_a_file_the_part_would_lack_loads_the_whole_graph(tmp_path: Path) -> None:
    """The check behind the part: a wanted file's edge whose other end is not in the part
    (here its ``deps`` were emptied in the cache, so the part misses the target's file) is
    never answered from the part."""
    root = _aged(FIXTURES / "graph_py", tmp_path / "p")
    _built(root)
    whole, _ = _answer(root, "graph:app.py", one_shot=False)
    db = sqlite3.connect(root / DEFAULT_CACHE)
    (blob,) = db.execute("SELECT resolution FROM files WHERE path = 'app.py'").fetchone()
    edges, deps, keys, unresolved = marshal.loads(blob)
    assert deps and edges
    # and no file-node target either: only the emptied deps named the other files
    kept = tuple(e for e in edges if not e[1].endswith(".py"))
    db.execute(
        "UPDATE files SET resolution = ? WHERE path = 'app.py'",
        (marshal.dumps((kept, (), keys, unresolved)),),
    )
    db.commit()
    db.close()
    part, parts = _answer(root, "graph:app.py", one_shot=True)
    assert parts == 0
    assert part["total"] == whole["total"]


def test_the_cli_answers_graph_path_from_a_part(tmp_path: Path) -> None:
    """``sleuth search graph:PATH`` is one-shot: it reads the part alone. A record row the part
    does not need is made unreadable first: a full load would find it and rebuild the cache,
    the part never reads it — and the answer is still the whole graph's."""
    root = _aged(FIXTURES / "graph_py", tmp_path / "p")
    _built(root)
    whole, _ = _answer(root, "graph:tools/helpers.py", one_shot=False)
    db = sqlite3.connect(root / DEFAULT_CACHE)
    db.execute("UPDATE files SET record = ? WHERE path = 'shop/pricing.py'", (b"unreadable",))
    db.commit()
    db.close()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sleuth",
            "search",
            "graph:tools/helpers.py",
            "--limit",
            "1000",
            "--root",
            str(root),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    matches = [{k: v for k, v in m.items() if k != "ref"} for m in res["matches"]]
    assert {"matches": matches, "total": res["total"], "complete": res["complete"]} == whole
    db = sqlite3.connect(root / DEFAULT_CACHE)  # the file now there (a full load replaces it)
    row = db.execute("SELECT record FROM files WHERE path = 'shop/pricing.py'").fetchone()
    db.close()
    assert row == (b"unreadable",)  # never read, never rewritten
