"""The graph keeper's cheap paths: one edit, one entry looked at; big graphs frozen for the GC.

A watched workspace patches its listing by replacing the entries of the files that changed:
the keeper compares listings entry by entry and reads only those (plus files still too recent
to trust). Edits keep tags with the tree, so a re-tag redoes only the touched statements; every
answer must still be a fresh process's.
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from sleuth import Workbench
from sleuth.ast_search import TreeCache
from sleuth.query import graph_keeper
from sleuth.query.symbols_mode import TagsCache
from sleuth.tuning import Collector, Tuning
from sleuth.workspace import FileEntry
from tests.lsp_bridge.conftest import write_tree

HOUR_AGO = time.time() - 3600
FILES = {
    "pkg/__init__.py": "from .core import helper\n",
    "pkg/core.py": "def helper(x):\n    return x + 1\n\n\ndef other():\n    return helper(2)\n",
    "app.py": "from pkg.core import helper\n\n\ndef run():\n    return helper(3)\n",
    "leaf.py": "def alone():\n    return 1\n",
    "notes.md": "not code\n",
}


def make_tree(root: Path) -> Path:
    write_tree(root, FILES)
    for rel in FILES:  # old enough for their stat signatures to be trusted
        os.utime(root / rel, (HOUR_AGO, HOUR_AGO))
    return root


def answer(wb: Workbench, query: str) -> Any:
    res = wb.search(query, limit=50).to_json()
    return [(m["path"], m["line"], m["graph"]) for m in res["matches"]]


def test_a_patched_listing_is_looked_at_only_where_it_changed(tmp_path: Path) -> None:
    root = make_tree(tmp_path)
    with Workbench(root, servers=False) as wb:
        keeper = graph_keeper.GraphKeeper(wb.workspace)
        files = list(wb.workspace.list_files().files)
        keeper.graph(TagsCache(), TreeCache(), files)  # the first sync looks at everything
        assert keeper._to_check(files) == []  # the same listing: nothing to look at
        patched: Sequence[FileEntry] = [
            FileEntry(f.path, f.size + 1, f.mtime_ns) if f.path == "leaf.py" else f for f in files
        ]
        assert [f.path for f in keeper._to_check(patched) or []] == ["leaf.py"]
        walked = [FileEntry(f.path, f.size, f.mtime_ns) for f in files]  # a new walk: all new
        assert [f.path for f in keeper._to_check(walked) or []] == [f.path for f in files]
        assert keeper._to_check(files[:-1]) is None  # a file came or went: look at them all
        keeper.close()


def test_a_watched_edit_reads_only_the_edited_file_and_equals_a_fresh_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_tree(tmp_path / "live")
    with Workbench(root, servers=False, watch=True) as wb:
        for _ in range(200):  # the watcher's watches in place
            if wb.workspace.generation is not None:
                break
            time.sleep(0.01)
        answer(wb, "graph:pkg/core.py")
        reads: list[str] = []
        real_read = wb.workspace.read
        monkeypatch.setattr(
            wb.workspace, "read", lambda rel, *a: reads.append(rel) or real_read(rel, *a)
        )
        start = wb.workspace.generation
        (root / "pkg/core.py").write_text(
            "# moved\n" + FILES["pkg/core.py"] + "\n\ndef more():\n    return other()\n"
        )
        for _ in range(500):
            if wb.workspace.generation != start:
                break
            time.sleep(0.01)
        after = answer(wb, "graph:pkg/core.py")
        assert "pkg/core.py" in reads
        assert [r for r in reads if r != "pkg/core.py"] == []  # nothing else read to sync
    fresh = tmp_path / "fresh"
    make_tree(fresh)
    (fresh / "pkg/core.py").write_text((root / "pkg/core.py").read_text())
    with Workbench(fresh, servers=False) as wb:
        assert answer(wb, "graph:pkg/core.py") == after


def test_a_big_graph_is_frozen_out_of_full_collections_and_emptied_on_close(
    tmp_path: Path,
) -> None:
    root = make_tree(tmp_path)
    gc.unfreeze()
    try:
        with Workbench(root, servers=False, tuning=replace(Tuning(), gc_freeze_min_files=2)) as wb:
            answer(wb, "graph:")
            keeper = wb._engines.graph
            assert keeper is not None
            graph = keeper._graph
            assert graph is not None
            assert gc.get_freeze_count() > 0  # the build was frozen
            frozen = gc.get_freeze_count()
        assert graph.g.number_of_nodes() == 0  # close emptied it (frozen: no cycle collection)
        assert frozen > graph.file_count()
    finally:
        gc.unfreeze()


def test_a_small_graph_is_not_frozen(tmp_path: Path) -> None:
    root = make_tree(tmp_path)
    gc.unfreeze()
    with Workbench(root, servers=False) as wb:
        answer(wb, "graph:")
        assert gc.get_freeze_count() == 0


def test_a_policy_that_never_freezes_freezes_no_graph(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The collector policy is the session's: a library user who asks for no freeze (and no
    pause) gets neither, whatever the graph's size (the test above freezes this one)."""
    root = make_tree(tmp_path)
    gc.unfreeze()
    enabled: list[bool] = []
    real = graph_keeper.GraphKeeper._sync

    def sync(self: Any, *args: Any) -> Any:
        enabled.append(gc.isenabled())
        return real(self, *args)

    monkeypatch.setattr(graph_keeper.GraphKeeper, "_sync", sync)
    never = replace(Tuning(), gc_freeze_min_files=None, gc_pause=False)
    with Workbench(root, servers=False, tuning=never) as wb:
        assert wb.session.collector == Collector(pause=False, freeze_min_files=None)
        answer(wb, "graph:")
        assert gc.get_freeze_count() == 0
    assert enabled == [True]  # the sync ran with the collector on
