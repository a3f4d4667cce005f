"""``scan_split``: a cold scan shared with a forked child answers exactly what one process
answers — the same matches in the same order, the same skip counts — and a child that fails or
is stopped early leaves the answer whole and no process behind."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from sleuth.api import Workbench
from sleuth.model import SkipCounts
from sleuth.query import scan_split
from sleuth.tuning import Tuning
from sleuth.workspace import Workspace, walk_split
from sleuth.workspace.reader import UNWANTED
from tests.conftest import MakeWorkspace

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")

REAL_CAN_FORK = walk_split.can_fork  # before the fixture below replaces it
SPLIT = Tuning(scan_split_files=1)
ALONE = Tuning(scan_split_files=10**9)


@pytest.fixture(autouse=True)
def _free_core(monkeypatch: pytest.MonkeyPatch) -> None:
    """Split whatever the machine's load and the threads earlier tests left (the child only
    reads files through the workspace and writes a pipe)."""
    monkeypatch.setattr(walk_split, "core_free", lambda: True)
    monkeypatch.setattr(walk_split, "can_fork", lambda: True)


@pytest.fixture
def children(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The pids of the children ``os.fork`` makes during the test."""
    made: list[int] = []
    real_fork = os.fork

    def fork() -> int:
        pid = real_fork()
        if pid:
            made.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", fork)
    return made


def _tree() -> dict[str, str | bytes]:
    files: dict[str, str | bytes] = {".sleuth.toml": 'deny = ["secret/**"]\nmax_filesize = 400\n'}
    for i in range(3 * scan_split.CHUNK + 7):  # chunks for both sides, the last one short
        body = f"value_{i} = {i}\n" + ("token here\n" if i % 37 == 0 else "")
        files[f"pkg/m{i:04}.py"] = body
    files["pkg/m0100.py"] = "\ufefftoken at the start, after a BOM\n"
    files["pkg/m0300.bin"] = b"token\x00binary"
    files["pkg/m0500.py"] = "token " * 100  # over max_filesize
    files["pkg/m0600.py"] = b"token \xff not utf-8\n"
    files["secret/token.py"] = "token\n"
    return files


def _answer(root: Path, query: str, tuning: Tuning, **kw: Any) -> list[dict[str, Any]]:
    pages = []
    with Workbench(root, build_index=False, tuning=tuning) as wb:
        page = wb.search(query, limit=40, context=0, **kw).to_json()
        pages.append(page)
        while page["next_cursor"]:
            page = wb.search(query, limit=40, context=0, cursor=page["next_cursor"], **kw)
            page = page.to_json()
            pages.append(page)
    for page in pages:
        page.pop("result", None)
        page.pop("next_cursor", None)
        for m in page["matches"]:
            m.pop("ref", None)
    return pages


@pytest.mark.parametrize("query", ["token", "regex:^token", "regex:(?i)TOKEN\\s+here", "nothing_x"])
def test_a_split_scan_answers_what_one_process_answers(
    make_workspace: MakeWorkspace, children: list[int], query: str
) -> None:
    root = make_workspace(_tree())
    split = _answer(root, query, SPLIT)
    assert children  # the first page's scan was split
    forked = len(children)
    alone = _answer(root, query, ALONE)
    assert len(children) == forked
    assert split == alone
    first = split[0]
    assert first["skipped"]["binary"] == 1 and first["skipped"]["too_large"] >= 1
    shown = [m["path"] for p in split for m in p["matches"]]
    assert "secret/token.py" not in shown
    if query == "regex:^token":  # the BOM does not stop ^ at the start of line 1
        assert "pkg/m0100.py" in shown


def _paths(root: Path) -> list[str]:
    return [e.path for e in Workspace(root).list_files().files]


def _wanted(data: bytes, start: int) -> bool:
    return b"token" in data[start:]


def test_reads_in_order_with_the_skips_of_one_process(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(_tree())
    paths = _paths(root)
    ws = Workspace(root)
    here, there = SkipCounts(), SkipCounts()
    alone = [(p, r) for p, r in scan_split._read_here(ws, paths, _wanted, here)]
    split = list(scan_split.split_reads(Workspace(root), paths, _wanted, there, least=1))
    assert [p for p, _ in split] == paths
    for (path, one), (_, two) in zip(alone, split, strict=True):
        assert (one is None, one == UNWANTED) == (two is None, two == UNWANTED), path
        if not isinstance(one, str) and one is not None:
            assert two is not None and not isinstance(two, str) and two.data == one.data
    assert (here.binary, here.too_large, here.unreadable) == (
        there.binary,
        there.too_large,
        there.unreadable,
    )


def _crash(*_: Any) -> int:
    os._exit(3)


def _garble(_ws: Any, _chunks: Any, _wanted: Any, fd: int) -> int:
    os.write(fd, scan_split._HEAD.pack(4) + b"\x00\x01\x02\x03")
    os.close(fd)
    return 0


@pytest.mark.parametrize("child", [_crash, _garble], ids=["crashes", "garbles its record"])
def test_a_failed_child_leaves_the_answer_whole(
    make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch, child: Any
) -> None:
    root = make_workspace(_tree())
    alone = _answer(root, "token", ALONE)
    monkeypatch.setattr(scan_split, "_serve", child)
    assert _answer(root, "token", SPLIT) == alone


def test_stopping_early_stops_and_reaps_the_child(
    make_workspace: MakeWorkspace, children: list[int]
) -> None:
    root = make_workspace(_tree())
    reads = scan_split.split_reads(Workspace(root), _paths(root), _wanted, SkipCounts(), least=1)
    next(reads)
    reads.close()  # a page that filled early
    assert len(children) == 1
    with pytest.raises(ChildProcessError):
        os.waitpid(children[0], os.WNOHANG)  # stopped and reaped: no such child any more


def test_no_split_on_a_busy_machine(
    make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch, children: list[int]
) -> None:
    root = make_workspace(_tree())
    monkeypatch.setattr(walk_split, "core_free", lambda: False)
    list(scan_split.split_reads(Workspace(root), _paths(root), _wanted, SkipCounts(), least=1))
    assert children == []


def test_no_split_while_another_thread_runs(
    make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch, children: list[int]
) -> None:
    """A lock another thread holds at fork time could hang the child: no fork then."""
    root = make_workspace(_tree())
    monkeypatch.setattr(walk_split, "can_fork", REAL_CAN_FORK)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        paths = _paths(root)
        list(scan_split.split_reads(Workspace(root), paths, _wanted, SkipCounts(), least=1))
    finally:
        stop.set()
        other.join()
    assert children == []
