"""How ``graph:`` keeps its graph in step with the files: stat signatures, stamps, cache rows.

A file whose size and mtime are those it was read at is not read again; a touched file (same
bytes, new mtime) is read but not re-tagged; an edit re-tags that file only, rewrites only the
cache rows it changed, and a new process answers from the cache without tagging anything.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from sleuth import Workbench
from sleuth.graph import DEFAULT_CACHE
from sleuth.query import graph_keeper

FILES = {
    "pkg/__init__.py": "from .core import helper\n",
    "pkg/core.py": "def helper(x):\n    return x + 1\n\n\ndef other():\n    return helper(2)\n",
    "app.py": "from pkg.core import helper\n\n\ndef run():\n    return helper(3)\n",
    "leaf.py": "def alone():\n    return 1\n",
}
HOUR_AGO = time.time() - 3600


def make_tree(root: Path) -> Path:
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        os.utime(path, (HOUR_AGO, HOUR_AGO))  # old enough for its stat signature to be trusted
    return root


def answer(wb: Workbench, query: str) -> Any:
    res = wb.search(query, limit=50).to_json()
    return [(m["path"], m["line"], m["graph"].get("id"), m.get("score")) for m in res["matches"]]


def rows(root: Path, wb: Workbench | None = None) -> dict[str, bytes]:
    """The cache's rows, as another process would read them (once ``wb``, still open, has
    stored the rows it writes behind)."""
    if wb is not None and wb._engines.graph is not None:
        wb._engines.graph._store.wait()
    with sqlite3.connect(root / DEFAULT_CACHE) as db:
        return {
            p: rec + res for p, rec, res in db.execute("SELECT path, record, resolution FROM files")
        }


class Tagged:
    """Counts the files the keeper tags (wraps ``graph_keeper._tags_of``)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.paths: list[str] = []
        real = graph_keeper._tags_of

        def counting(ft: Any, *args: Any) -> Any:
            self.paths.append(ft.path)
            return real(ft, *args)

        monkeypatch.setattr(graph_keeper, "_tags_of", counting)


def test_a_new_process_answers_from_the_cache_without_reading_or_tagging(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_tree(tmp_path)
    with Workbench(root, servers=False) as wb:
        first = answer(wb, "graph:pkg/core.py")
    tagged = Tagged(monkeypatch)
    with Workbench(root, servers=False) as wb:
        reads: list[str] = []
        real_read = wb.workspace.read
        monkeypatch.setattr(
            wb.workspace, "read", lambda rel, *a: reads.append(rel) or real_read(rel, *a)
        )
        assert answer(wb, "graph:pkg/core.py") == first
    assert tagged.paths == []
    assert set(reads) <= {"pkg/core.py"}  # only the answer's own file, to make its matches


def test_a_touched_file_is_read_but_not_re_tagged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_tree(tmp_path)
    with Workbench(root, servers=False) as wb:
        before = answer(wb, "graph:")
        cached = rows(root, wb)
        tagged = Tagged(monkeypatch)
        os.utime(root / "pkg/core.py", (HOUR_AGO + 60, HOUR_AGO + 60))
        assert answer(wb, "graph:") == before
        assert tagged.paths == []
        assert rows(root, wb) == cached


def test_an_outside_edit_retags_one_file_and_rewrites_only_the_rows_it_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_tree(tmp_path)
    with Workbench(root, servers=False) as wb:
        answer(wb, "graph:")
        cached = rows(root, wb)
        tagged = Tagged(monkeypatch)
        (root / "leaf.py").write_text(FILES["leaf.py"] + "\n\ndef more():\n    return alone()\n")
        edited = answer(wb, "graph:")
        assert tagged.paths == ["leaf.py"]
        now = rows(root, wb)
        assert {p for p in now if now[p] != cached[p]} == {"leaf.py"}
        # The rank after the edit is a fresh build's.
        (root / ".sleuth" / "graph.db").unlink()
        with Workbench(root, servers=False) as fresh:
            assert answer(fresh, "graph:") == edited


def test_a_removed_file_leaves_the_graph_and_the_cache(tmp_path: Path) -> None:
    root = make_tree(tmp_path)
    with Workbench(root, servers=False) as wb:
        answer(wb, "graph:")
        (root / "leaf.py").unlink()
        ids = {row[0] for row in answer(wb, "graph:")}
        assert "leaf.py" not in ids
    assert "leaf.py" not in rows(root)
    with Workbench(root, servers=False) as wb:
        assert all(row[0] != "leaf.py" for row in answer(wb, "graph:"))
