"""``graph:`` never hands out offsets of other bytes (docs/SAFETY.md): its cache notices a
rewrite that keeps the size and puts the mtime back (``cp -p``, ``rsync -t``, ``tar x``), and a
file whose bytes differ from the ones its graph record was read from has none of its matches
served (they would select other text and pass every stamp check)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from sleuth import Workbench
from sleuth.query.symbols_mode import SymbolSource
from sleuth.workspace import FileText, stamp_bytes
from tests.conftest import MakeWorkspace

A1 = "def get_user(uid):\n    return uid\n\ndef other():\n    return get_user(1)\n"
A2 = "def other():\n    return get_user(1)\n\ndef get_user(uid):\n    return uid\n"


def _swap_keeping_stat(path: Path, text: str) -> None:
    """Other text of the same size, the old atime and mtime put back (what ``cp -p`` does)."""
    st = path.stat()
    path.write_text(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


@pytest.mark.parametrize("query", ["graph:src/a.py", "graph:"])
@pytest.mark.parametrize("watch", [False, True])
def test_a_rewrite_that_keeps_size_and_mtime_is_seen(
    make_workspace: MakeWorkspace, query: str, watch: bool
) -> None:
    assert len(A1) == len(A2)
    root = make_workspace({"src/a.py": A1})
    old = time.time() - 100  # settled: the cache trusts its stat signature
    os.utime(root / "src/a.py", (old, old))
    with Workbench(root, build_index=False) as wb:
        assert wb.search(query, context=0).total == 2  # builds .sleuth/graph.db
    _swap_keeping_stat(root / "src/a.py", A2)
    with Workbench(root, build_index=False, watch=watch) as wb:
        page = wb.search(query, context=1).to_json()
        data = (root / "src/a.py").read_bytes()
        for m in page["matches"]:
            # every match selects what the file holds now at its offsets
            assert data[m["start_byte"] : m["end_byte"]].decode() == m["text"]
        # graph:PATH selects whole declarations, graph: alone their names
        target = next(m for m in page["matches"] if m["text"].split("(")[0].endswith("get_user"))
        wb.replace(target["ref"]["match"], target["text"].replace("get_user", "renamed", 1))
    assert (root / "src/a.py").read_text() == A2.replace("def get_user(", "def renamed(")


def test_a_file_read_with_other_bytes_than_its_record_gets_no_matches() -> None:
    notes: list[str] = []
    source = SymbolSource(notes=notes)
    source.by_path["a.py"] = [(4, 12, None, None)]
    source.stamps["a.py"] = stamp_bytes(A1.encode())
    fresh = FileText("a.py", A2.encode(), stamp_bytes(A2.encode()), "utf-8")
    assert source.find_in_file(fresh) == []
    assert notes and "a.py changed since the graph read it" in notes[0]
    same = FileText("a.py", A1.encode(), stamp_bytes(A1.encode()), "utf-8")
    assert source.find_in_file(same) == [(4, 12, None, None)]


def test_offsets_past_the_end_of_a_file_of_the_right_stamp_get_no_matches() -> None:
    """A graph cache row sleuth trusts by its stat signature (docs/SAFETY.md) can still carry
    offsets past the end: graph: answered internal (IndexError) on them; now the file's
    matches are left out with a note."""
    notes: list[str] = []
    source = SymbolSource(notes=notes)
    source.by_path["a.py"] = [(4, 12, None, None), (9000, 9010, None, None)]
    source.stamps["a.py"] = stamp_bytes(A1.encode())
    same = FileText("a.py", A1.encode(), stamp_bytes(A1.encode()), "utf-8")
    assert source.find_in_file(same) == []
    assert notes
