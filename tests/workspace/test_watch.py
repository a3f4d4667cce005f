"""The change watcher: cached listings are reused only while nothing changed."""

from __future__ import annotations

import time

import pytest

import sleuth.workspace.watch as watch
from sleuth.api import Workbench
from tests.conftest import MakeWorkspace


def _wait(cond: object, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False


def test_listing_is_reused_until_a_change(make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(watch, "SETTLE_S", 0.3)
    root = make_workspace({"a.txt": "needle\n"})
    with Workbench(root, watch=True, build_index=False) as wb:
        ws = wb.workspace
        assert _wait(lambda: ws.generation is not None)
        first = ws.list_files()
        assert ws.list_files().paths == first.paths == ["a.txt"]
        gen = ws.generation
        (root / "b.txt").write_text("needle\n")
        assert _wait(lambda: ws.generation != gen)
        assert ws.list_files().paths == ["a.txt", "b.txt"]
        assert wb.search("needle").to_json()["total"] == 2


def test_own_state_writes_do_not_count_as_changes(make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(watch, "SETTLE_S", 0.3)
    root = make_workspace({"a.txt": "needle\n"})
    with Workbench(root, watch=True, build_index=False) as wb:
        ws = wb.workspace
        assert _wait(lambda: ws.generation is not None)
        wb.search("needle")
        gen = ws.generation
        wb.search("needle", context=0)  # writes the registry under .sleuth/
        time.sleep(0.3)
        assert ws.generation == gen


def test_deny_rules_reload_on_config_change(make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(watch, "SETTLE_S", 0.3)
    root = make_workspace({"a.txt": "needle\n", "secret.txt": "needle\n"})
    with Workbench(root, watch=True, build_index=False) as wb:
        ws = wb.workspace
        assert _wait(lambda: ws.generation is not None)
        assert wb.search("needle").to_json()["total"] == 2
        gen = ws.generation
        (root / ".sleuth.toml").write_text('deny = ["secret.txt"]\n')
        assert _wait(lambda: ws.generation != gen and ws.is_denied("secret.txt"))
        assert [m["path"] for m in wb.search("needle", context=0).to_json()["matches"]] == ["a.txt"]
