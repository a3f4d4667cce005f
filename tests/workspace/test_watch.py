"""The change watcher: cached listings are reused only while nothing changed."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from sleuth.api import Workbench
from tests.conftest import MakeWorkspace
from tests.workspace.conftest import SETTLED
from tests.workspace.conftest import wait_for as _wait


def test_listing_is_reused_until_a_change(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"a.txt": "needle\n"})
    with Workbench(root, watch=True, build_index=False, tuning=SETTLED) as wb:
        ws = wb.workspace
        assert _wait(lambda: ws.generation is not None)
        first = ws.list_files()
        assert ws.list_files().paths == first.paths == ["a.txt"]
        gen = ws.generation
        (root / "b.txt").write_text("needle\n")
        assert _wait(lambda: ws.generation != gen)
        assert ws.list_files().paths == ["a.txt", "b.txt"]
        assert wb.search("needle").to_json()["total"] == 2


def test_own_state_writes_do_not_count_as_changes(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"a.txt": "needle\n"})
    with Workbench(root, watch=True, build_index=False, tuning=SETTLED) as wb:
        ws = wb.workspace
        assert _wait(lambda: ws.generation is not None)
        wb.search("needle")
        gen = ws.generation
        wb.search("needle", context=0)  # writes the registry under .sleuth/
        time.sleep(0.3)
        assert ws.generation == gen


def test_deny_rules_reload_on_config_change(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"a.txt": "needle\n", "secret.txt": "needle\n"})
    with Workbench(root, watch=True, build_index=False, tuning=SETTLED) as wb:
        ws = wb.workspace
        assert _wait(lambda: ws.generation is not None)
        assert wb.search("needle").to_json()["total"] == 2
        gen = ws.generation
        (root / ".sleuth.toml").write_text('deny = ["secret.txt"]\n')
        assert _wait(lambda: ws.generation != gen and ws.is_denied("secret.txt"))
        assert [m["path"] for m in wb.search("needle", context=0).to_json()["matches"]] == ["a.txt"]


def _watched(
    make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch, files: dict[str, str]
) -> tuple[Any, Any]:
    root = make_workspace(files)
    wb = Workbench(root, watch=True, build_index=False, servers=False, tuning=SETTLED)
    assert _wait(lambda: wb.workspace.generation is not None)
    return root, wb


def _count_walks(ws: Any, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    walks: list[int] = []
    real = ws._walk

    def counting(*args: Any, **kwargs: Any) -> Any:
        walks.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(ws, "_walk", counting)
    return walks


@pytest.mark.parametrize("how", ["in place", "rename over"])
def test_an_edit_of_a_listed_file_patches_the_listing_without_a_walk(
    how: str, make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, wb = _watched(
        make_workspace,
        monkeypatch,
        {"a.txt": "needle\n", "b.txt": "x\n", ".gitignore": "skip/\n", "skip/c.txt": "needle\n"},
    )
    with wb:
        ws = wb.workspace
        before = ws.list_files()
        walks = _count_walks(ws, monkeypatch)
        gen = ws.generation
        if how == "in place":
            with open(root / "b.txt", "a") as fh:
                fh.write("needle needle\n")
        else:
            (root / "b.txt.tmp").write_text("x\nneedle needle\n")
            (root / "b.txt.tmp").replace(root / "b.txt")
        (root / "skip/c.txt").write_text("needle, still ignored\n")
        assert _wait(lambda: ws.generation != gen)
        time.sleep(0.2)  # let a second batch (if any) land
        after = ws.list_files()
        assert walks == []  # patched, not walked
        assert after.paths == before.paths == [".gitignore", "a.txt", "b.txt"]
        size = (root / "b.txt").stat().st_size
        assert [f.size for f in after.files if f.path == "b.txt"] == [size]
        assert [f.size for f in before.files if f.path == "b.txt"] == [2]  # handed out earlier
        assert wb.search("needle").to_json()["total"] == 3


@pytest.mark.parametrize("change", ["new file", "deleted file", "ignore rules"])
def test_other_changes_still_walk(
    change: str, make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, wb = _watched(
        make_workspace,
        monkeypatch,
        {"a.txt": "needle\n", "b.txt": "needle\n", "skip/c.txt": "needle\n"},
    )
    with wb:
        ws = wb.workspace
        ws.list_files()
        walks = _count_walks(ws, monkeypatch)
        gen = ws.generation
        expected = {
            "new file": [".n.txt", "a.txt", "b.txt", "skip/c.txt"],
            "deleted file": ["a.txt", "skip/c.txt"],
            "ignore rules": [".gitignore", "a.txt", "b.txt"],
        }[change]
        if change == "new file":
            (root / ".n.txt").write_text("needle\n")
        elif change == "deleted file":
            (root / "b.txt").unlink()
        else:
            (root / ".gitignore").write_text("skip/\n")
        assert _wait(lambda: ws.generation != gen)
        time.sleep(0.2)
        assert ws.list_files().paths == expected
        assert walks != []


def test_the_generation_moves_only_once_the_listing_is_patched(
    make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A query that sees the new generation must find the patched listing, not walk: the patch
    # is slowed down here so that a reader polling the generation would land inside it.
    import sleuth.workspace.workspace as workspace_mod

    root, wb = _watched(make_workspace, monkeypatch, {"a.txt": "needle\n", "b.txt": "x\n"})
    real_patch = workspace_mod.patch_listings

    def slow_patch(*args: Any, **kwargs: Any) -> bool:
        time.sleep(0.3)
        return real_patch(*args, **kwargs)

    monkeypatch.setattr(workspace_mod, "patch_listings", slow_patch)
    with wb:
        ws = wb.workspace
        ws.list_files()
        walks = _count_walks(ws, monkeypatch)
        gen = ws.generation
        with open(root / "b.txt", "a") as fh:
            fh.write("needle\n")
        assert _wait(lambda: ws.generation != gen, timeout=10.0)
        after = ws.list_files()  # at once: no sleep
        assert walks == []
        assert [f.size for f in after.files if f.path == "b.txt"] == [
            (root / "b.txt").stat().st_size
        ]


def test_replaced_entries_are_the_positions_a_patch_changed() -> None:
    from sleuth.workspace import FileEntry
    from sleuth.workspace.listing_patch import replaced_entries

    old = [FileEntry(f"f{i}.py", i, i) for i in range(5)]
    new = list(old)
    new[1] = FileEntry("f1.py", 10, 10)
    new[4] = FileEntry("f4.py", 4, 4)  # equal, but another object: re-stat'ed by the patch
    assert replaced_entries(old, new) == [1, 4]
    assert replaced_entries(old, list(old)) == []
    assert replaced_entries(old, new[:4]) is None  # not a patch of old


def test_a_binary_file_is_counted_unread_until_the_watcher_sees_it_change(
    make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sleuth.model import SkipCounts
    from sleuth.workspace import workspace as workspace_module

    root = make_workspace({"blob.bin": b"needle\x00\x01", "a.txt": "needle\n"})
    with Workbench(root, watch=True, build_index=False, tuning=SETTLED) as wb:
        ws = wb.workspace
        assert _wait(lambda: ws.generation is not None)
        first = SkipCounts()
        assert ws.read("blob.bin", first) is None and first.binary == 1
        calls: list[str] = []
        real_lstat = workspace_module.os.lstat

        def lstat(path: Any, *args: Any, **kw: Any) -> Any:
            calls.append(str(path))
            return real_lstat(path, *args, **kw)

        monkeypatch.setattr(workspace_module.os, "lstat", lstat)
        again = SkipCounts()
        assert ws.read("blob.bin", again) is None and again.binary == 1
        assert not any(c.endswith("blob.bin") for c in calls)  # counted, not read
        monkeypatch.undo()

        gen = ws.generation
        (root / "blob.bin").write_bytes(b"needle now text\n")
        assert _wait(lambda: ws.generation != gen)
        text = ws.read("blob.bin", SkipCounts())
        assert text is not None and text.data == b"needle now text\n"
        assert wb.search("needle").to_json()["total"] == 2


def _found(wb: Any) -> list[str]:
    return sorted({m["path"] for m in wb.search("needle", context=0).to_json()["matches"]})


def test_an_exclude_file_no_watch_reaches_is_seen_by_the_next_call(
    make_workspace: MakeWorkspace,
) -> None:
    # ``.git/`` is never watched: the listing kept since the last call must not outlive a
    # change of the repository's info/exclude
    root = make_workspace({"a.txt": "needle\n", "b.txt": "needle\n"})
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    exclude = root / ".git" / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    with Workbench(root, watch=True, build_index=False, servers=False, tuning=SETTLED) as wb:
        assert _wait(lambda: wb.workspace.generation is not None)
        assert _found(wb) == ["a.txt", "b.txt"]
        exclude.write_text("b.txt\n")
        assert _found(wb) == ["a.txt"]
        exclude.write_text("# nothing\n")
        assert _found(wb) == ["a.txt", "b.txt"]


def test_an_ignore_file_above_the_root_is_seen_by_the_next_call(tmp_path: Path) -> None:
    root = tmp_path / "outer" / "ws"
    root.mkdir(parents=True)
    (root / "a.txt").write_text("needle\n")
    (root / "b.txt").write_text("needle\n")
    with Workbench(root, watch=True, build_index=False, servers=False, tuning=SETTLED) as wb:
        assert _wait(lambda: wb.workspace.generation is not None)
        assert _found(wb) == ["a.txt", "b.txt"]
        (tmp_path / "outer" / ".ignore").write_text("/ws/b.txt\n")  # made where none was
        assert _found(wb) == ["a.txt"]
