"""A result registry another process holds a write lock on (an open ``BEGIN EXCLUSIVE``, a
second sleuth storing a large result) is ``timeout`` after the wait, never ``internal`` with
the advice to delete ``.sleuth/`` (docs/SAFETY.md#damaged-or-planted-state)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from sleuth import Workbench, cli
from sleuth.errors import Timeout
from sleuth.resources import registry
from tests.conftest import MakeWorkspace


def _locked(root: Path) -> sqlite3.Connection:
    with Workbench(root) as wb:
        wb.search("print")  # makes the registry
    db = sqlite3.connect(root / ".sleuth" / "registry.sqlite3", isolation_level=None)
    db.execute("BEGIN EXCLUSIVE")
    return db


def test_a_locked_registry_is_a_timeout(
    make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(registry, "LOCK_WAIT_S", 0.2)
    root = make_workspace({"a.py": "print(1)\n"})
    db = _locked(root)
    try:
        with Workbench(root) as wb, pytest.raises(Timeout) as caught:
            wb.search("print")
        assert "locked by another process" in caught.value.message
        assert "delete" not in caught.value.message
    finally:
        db.execute("ROLLBACK")
        db.close()
    with Workbench(root) as wb:  # the lock gone, it works again: nothing was damaged
        assert wb.search("print").matches


def test_the_cli_answers_timeout_with_its_exit_code(
    make_workspace: MakeWorkspace,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(registry, "LOCK_WAIT_S", 0.2)
    root = make_workspace({"a.py": "print(1)\n"})
    db = _locked(root)
    try:
        code = cli.main(["search", "print", "--json", "--root", str(root)])
    finally:
        db.execute("ROLLBACK")
        db.close()
    assert code == 5
    assert json.loads(capsys.readouterr().out)["error"]["code"] == "timeout"


def test_a_lock_on_a_state_file_met_later_is_a_timeout_in_every_face() -> None:
    from sleuth import mcp

    for internal in (cli._internal, mcp._internal):
        answer = internal(sqlite3.OperationalError("database is locked"))
        assert isinstance(answer, Timeout)
        assert internal(sqlite3.OperationalError("no such table: x")).code == "internal"
