"""What an edit keeps in ``.sleuth/`` (its ``RESULT#`` row, its undo data) is stored before a
file is written (docs/SAFETY.md#undo): an error after the write would answer a landed edit as
one that never happened.

Seen: the result registry locked by another process (a second sleuth storing a large result)
while an edit committed. The files were written, then the ``RESULT#`` row waited for the lock
and the call answered ``timeout`` "nothing was changed; try again"; the retry inserted the
lines a second time, and the first edit had no undo data.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from sleuth import Workbench, mcp
from sleuth.errors import SleuthError, StaleReference
from sleuth.resources import registry
from tests.conftest import MakeWorkspace

SOURCE = b"print(1)\nprint(2)\n"


def _lock(root: Path) -> sqlite3.Connection:
    """Another process's write lock on the result registry."""
    db = sqlite3.connect(root / ".sleuth" / "registry.sqlite3", isolation_level=None)
    db.execute("BEGIN EXCLUSIVE")
    return db


def _lock_at(wb: Workbench, root: Path, point: str | None) -> list[sqlite3.Connection]:
    """The lock taken now (``point`` None) or when the edit reaches ``point``."""
    held: list[sqlite3.Connection] = [] if point is not None else [_lock(root)]

    def hook(at: str, path: str) -> None:
        if at == point and not held:
            held.append(_lock(root))

    wb.workspace.fault_hook = hook
    return held


def _release(wb: Workbench, held: list[sqlite3.Connection]) -> None:
    wb.workspace.fault_hook = None
    for db in held:
        db.execute("ROLLBACK")
        db.close()


def _answer(call: Callable[[], object]) -> SleuthError | None:
    """The error a face answers for ``call`` (None when it succeeds)."""
    try:
        call()
    except SleuthError as exc:
        return exc
    except Exception as exc:  # what the CLI and the MCP server turn into an answer
        return mcp._internal(exc)
    return None


@pytest.mark.parametrize("point", [None, "planned", "verified", "before-rename"])
def test_a_registry_locked_around_the_write_answers_what_happened(
    make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch, point: str | None
) -> None:
    monkeypatch.setattr(registry, "LOCK_WAIT_S", 0.2)
    root = make_workspace({"a.py": SOURCE})
    once = b"# note\nprint(1)\n# note\nprint(2)\n"
    with Workbench(root, servers=False) as wb:
        ref = str(wb.search("print").to_json()["all"]["line"])
        held = _lock_at(wb, root, point)
        try:
            error = _answer(lambda: wb.insert(ref, "# note"))
        finally:
            _release(wb, held)
        assert held, "the lock was never taken"
        if error is None:
            assert (root / "a.py").read_bytes() == once
            return
        # the answer says nothing was changed, and that is true: the retry inserts once
        assert (root / "a.py").read_bytes() == SOURCE, error.message
        done = wb.insert(ref, "# note")
        assert (root / "a.py").read_bytes() == once
        wb.undo(done.result)
        assert (root / "a.py").read_bytes() == SOURCE


def test_an_edit_refused_at_the_write_keeps_no_undo_data(make_workspace: MakeWorkspace) -> None:
    """The undo data is staged before the write and kept only for an edit that landed: a
    refused one leaves no ``RESULT#`` to undo (an undo of it would restore bytes that no edit
    replaced)."""
    root = make_workspace({"a.py": SOURCE})
    with Workbench(root, servers=False) as wb:
        ref = str(wb.search("print").to_json()["matches"][0]["ref"]["match"])

        def outside_write(at: str, path: str) -> None:
            if at == "verified":
                (root / "a.py").write_bytes(b"echo(1)\nprint(2)\n")

        wb.workspace.fault_hook = outside_write
        with pytest.raises(StaleReference):
            wb.replace(ref, "show")
        wb.workspace.fault_hook = None
        undo = root / ".sleuth" / "undo"
        assert not undo.is_dir() or not any(undo.iterdir())
        assert (root / "a.py").read_bytes() == b"echo(1)\nprint(2)\n"


@pytest.mark.parametrize("point", [None, "planned", "verified", "before-rename"])
def test_an_undo_with_the_registry_locked_answers_what_happened(
    make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch, point: str | None
) -> None:
    monkeypatch.setattr(registry, "LOCK_WAIT_S", 0.2)
    root = make_workspace({"a.py": SOURCE})
    with Workbench(root, servers=False) as wb:
        ref = str(wb.search("print").to_json()["matches"][0]["ref"]["match"])
        done = wb.replace(ref, "show")
        edited = (root / "a.py").read_bytes()
        held = _lock_at(wb, root, point)
        try:
            error = _answer(lambda: wb.undo(done.result))
        finally:
            _release(wb, held)
        assert held, "the lock was never taken"
        if error is None:
            assert (root / "a.py").read_bytes() == SOURCE
            return
        assert (root / "a.py").read_bytes() == edited, error.message
        wb.undo(done.result)  # still there to undo, once
        assert (root / "a.py").read_bytes() == SOURCE
