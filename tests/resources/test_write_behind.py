"""Background registry writes: ordered, waited for by the readers that need them, errors kept."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from sleuth import Workbench
from sleuth.errors import Internal
from sleuth.resources.registry import WRITE_BEHIND_ROWS, Registry
from sleuth.resources.registry_rows import MatchRow, ResultRow
from sleuth.write_behind import WriteBehind
from tests.conftest import MakeWorkspace


def _result(rid: str, n: int) -> tuple[ResultRow, list[MatchRow]]:
    row = ResultRow(
        rid, "search", "{}", "fp", "literal", None, False, True, None, n, n, None, {}, {}
    )
    rows = [
        MatchRow(i, "a.py", i, i + 1, i, i, "st", {"text": "x" * 100, "i": i})
        for i in range(1, n + 1)
    ]
    return row, rows


def test_writes_run_in_submission_order_and_wait_blocks_only_for_its_key() -> None:
    behind = WriteBehind("test")
    gate = threading.Event()
    order: list[str] = []
    behind.submit("a", lambda: (gate.wait(5), order.append("a")))
    behind.submit("b", lambda: order.append("b"))
    assert behind.pending("a") and behind.pending("b")
    behind.wait("c")  # nothing pending for c: returns at once although a and b are not done
    assert order == []
    gate.set()
    behind.wait("b")
    assert order == ["a", "b"]  # b waited for a
    assert not behind.pending("a") and not behind.pending("b")


def test_a_failed_write_is_reported_by_the_next_wait_once() -> None:
    behind = WriteBehind("test")

    def fail() -> None:
        raise OSError("disk full")

    behind.submit("a", fail)
    with pytest.raises(Internal, match="disk full"):
        behind.wait()
    behind.wait()  # reported once


def test_a_large_result_is_written_behind_and_read_back_whole(tmp_path: Path) -> None:
    registry = Registry(tmp_path)
    row, rows = _result("SEARCH#big", WRITE_BEHIND_ROWS + 50)
    registry.put_result(row, rows)
    # the same registry waits for the write before reading the result
    got = registry.matches("SEARCH#big", 1)
    assert [m.n for m in got] == [m.n for m in rows] and got[-1].body == rows[-1].body
    assert registry.get_result("SEARCH#big") is not None
    registry.close()
    # another connection (another process would do the same) sees all of it
    other = Registry(tmp_path)
    assert len(other.matches("SEARCH#big", 1)) == len(rows)


def test_close_waits_for_pending_writes(tmp_path: Path) -> None:
    registry = Registry(tmp_path)
    for i in range(3):
        registry.put_result(*_result(f"SEARCH#r{i}", WRITE_BEHIND_ROWS + 1))
    registry.close()
    other = Registry(tmp_path)
    assert all(other.get_result(f"SEARCH#r{i}") is not None for i in range(3))


def test_a_failed_background_write_leaves_the_result_unregistered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = Registry(tmp_path)
    row, rows = _result("SEARCH#bad", WRITE_BEHIND_ROWS + 1)
    rows[-1] = MatchRow(rows[-1].n, "a.py", 0, 1, 1, 1, "st", {"bad": object()})  # not JSON
    registry.put_result(row, rows)
    with pytest.raises(Internal, match="background registry write failed"):
        registry.get_result("SEARCH#bad")
    assert registry.get_result("SEARCH#bad") is None  # the transaction was rolled back whole
    assert registry.matches("SEARCH#bad", 1) == []


def test_graph_answer_references_resolve_right_after_the_answer(
    make_workspace: MakeWorkspace,
) -> None:
    body = "".join(
        f"def f{i}():\n    return f{i - 1}()\n\n" if i else "def f0():\n    return 0\n\n"
        for i in range(120)
    )
    root = make_workspace({"m.py": body})
    with Workbench(root, servers=False) as wb:
        res = wb.search("graph:m.py", limit=5).to_json()
        assert res["total"] == 120 > WRITE_BEHIND_ROWS
        last = wb.read(f"{res['result']}:120:line")  # stored by the background write
        assert "def f119" in last.to_json()["ranges"][0]["text"]


def test_courteous_yields_every_item_in_order_and_offers_the_lock_every_n(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sleuth.write_behind as wbmod

    offers: list[float] = []
    monkeypatch.setattr(wbmod.time, "sleep", lambda s: offers.append(s))
    assert list(wbmod.courteous(range(50), every=16)) == list(range(50))
    assert offers == [0, 0, 0]  # after items 16, 32 and 48
    offers.clear()
    assert list(wbmod.courteous([], every=16)) == [] and offers == []


def test_only_writes_behind_the_answer_are_courteous(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sleuth.resources.registry_rows as regmod

    seen: list[tuple[bool, int]] = []
    real = regmod.courteous

    def counting(items: object, every: int = 16) -> object:
        rows = list(items)  # type: ignore[call-overload]
        seen.append((threading.current_thread() is threading.main_thread(), len(rows)))
        return real(rows, every)

    monkeypatch.setattr(regmod, "courteous", counting)
    reg = Registry(tmp_path)
    small, small_rows = _result("SEARCH#small", 3)
    reg.put_result(small, small_rows)  # written here, at once: nothing to be courteous to
    big, big_rows = _result("SEARCH#big", WRITE_BEHIND_ROWS + 10)
    reg.put_result(big, big_rows)
    assert [m.n for m in reg.matches("SEARCH#big", 1)] == list(range(1, WRITE_BEHIND_ROWS + 11))
    assert seen == [(False, WRITE_BEHIND_ROWS + 10)]  # only the writer thread's rows
    reg.close()


def test_a_small_result_queues_behind_pending_writes_instead_of_waiting_for_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Written in the foreground, it would wait for the database's write lock until every
    # queued write landed (what a `graph:` right after a few large answers paid).
    reg = Registry(tmp_path)
    gate = threading.Event()
    real = reg._write_behind

    def held(row: ResultRow, matches: list[MatchRow]) -> None:
        gate.wait(10)
        real(row, matches)

    monkeypatch.setattr(reg, "_write_behind", held)
    big, big_rows = _result("SEARCH#big", WRITE_BEHIND_ROWS + 1)
    reg.put_result(big, big_rows)
    small, small_rows = _result("SEARCH#small", 2)
    reg.put_result(small, small_rows)  # returns although the big write is held
    assert reg._behind.pending("SEARCH#small") and not gate.is_set()
    gate.set()
    assert [m.n for m in reg.matches("SEARCH#small", 1)] == [1, 2]
    assert len(reg.matches("SEARCH#big", 1)) == WRITE_BEHIND_ROWS + 1
    assert not reg._behind.pending()
    later, later_rows = _result("SEARCH#later", 2)
    reg.put_result(later, later_rows)  # nothing queued: written here, at once
    assert not reg._behind.pending() and reg.get_result("SEARCH#later") is not None
    reg.close()


def test_a_write_behind_whose_state_folder_goes_meanwhile_is_no_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # .sleuth/ deleted while the write runs (a user clearing the state): the result is gone
    # with the rest, and the next registry call must not report it as a failure.
    import shutil
    import sqlite3

    state = tmp_path / "state"
    registry = Registry(state)
    small, small_rows = _result("SEARCH#first", 2)
    registry.put_result(small, small_rows)  # the registry exists

    def deleting_midway(row: ResultRow, matches: list[MatchRow]) -> None:
        shutil.rmtree(registry.path.parent)
        raise sqlite3.OperationalError("disk I/O error")  # what SQLite says then (seen in CI)

    monkeypatch.setattr(registry, "_put", deleting_midway)
    row, rows = _result("SEARCH#gone", WRITE_BEHIND_ROWS + 1)
    registry.put_result(row, rows)
    registry._behind.wait()  # no Internal
    assert not registry.path.exists()


def test_a_connection_to_a_deleted_registry_is_not_reused_once_another_takes_its_place(
    tmp_path: Path,
) -> None:
    """``.sleuth/`` deleted and made again by another process: this registry's open
    connection still reads the deleted file; it must be replaced by one to the file now there
    (checked by device and inode, not by the path merely existing)."""
    first = Registry(tmp_path / ".sleuth")
    row, rows = _result("SEARCH#old", 3)
    first.put_result(row, rows)
    assert first.get_result("SEARCH#old") is not None
    import shutil

    shutil.rmtree(tmp_path / ".sleuth")
    other = Registry(tmp_path / ".sleuth")
    row, rows = _result("SEARCH#new", 3)
    other.put_result(row, rows)
    other.close()
    assert first.get_result("SEARCH#new") is not None
    assert first.get_result("SEARCH#old") is None
    first.close()


def test_a_background_writer_never_creates_the_registry(tmp_path: Path) -> None:
    reg = Registry(tmp_path / ".sleuth")
    assert reg.secret
    import shutil

    shutil.rmtree(tmp_path / ".sleuth")
    reg._behind.submit("k", reg._conn)  # a writer opening it: gone, so it fails
    with pytest.raises(Internal):
        reg._behind.wait()
    assert not (tmp_path / ".sleuth").exists()


def test_the_registry_is_made_again_only_after_writers_on_the_deleted_one_finish(
    tmp_path: Path,
) -> None:
    """SQLite opens a database's -wal/-shm files by name when it first needs them: a writer
    still busy with a deleted registry must be done before a new one exists at that path."""
    import shutil
    import time

    reg = Registry(tmp_path / ".sleuth")
    assert reg.secret
    order: list[str] = []
    reg._behind.submit("k", lambda: (time.sleep(0.3), order.append("writer")))
    shutil.rmtree(tmp_path / ".sleuth")
    reg._conn()
    order.append("made again")
    assert order == ["writer", "made again"]
    assert (tmp_path / ".sleuth" / "registry.sqlite3").exists()
    reg.close()
