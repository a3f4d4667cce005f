"""Regression tests of write-time verification (docs/SAFETY.md), each a failure seen before it.

An edit must land on exactly the bytes it was computed from or be refused: caches, stat
signatures and watcher events may decide what to re-read, never what is on disk. No edit may
write through a symlinked folder, nor make ``.sleuth`` write through a symlink, nor open a FIFO.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from sleuth import Workbench
from sleuth.edit import journal
from sleuth.errors import InvalidPath, NotFound, SleuthError, StaleReference
from sleuth.resources.response import SearchResult
from sleuth.workspace.watch import ChangeWatcher
from tests.conftest import MakeWorkspace

SOURCE = (
    "def f(params):\n"
    "    if isinstance(params, (str, bytes)):\n"
    "        params = str(params)\n"
    "    return params\n"
)


def all_ref(found: SearchResult, unit: str = "match") -> str:
    return str(found.to_json()["all"][unit])


def _age(root: Path) -> None:
    """Make every file old enough for the content cache (its racy-clean window is 2 s)."""
    past = time.time() - 3600
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, (past, past))


@pytest.fixture
def silent_watcher(monkeypatch: pytest.MonkeyPatch) -> None:
    """A watcher that is trusted but never delivers: the ~20 ms before an inotify event lands,
    held open, so listings (and the stats in them) lag behind every outside write."""
    monkeypatch.setattr(ChangeWatcher, "start", lambda self: None)
    monkeypatch.setattr(ChangeWatcher, "trustworthy", property(lambda self: True))


def _outside_insert(path: Path, line: bytes) -> bytes:
    """``sed -i '1i LINE'``: a new file renamed over the old one."""
    data = line + path.read_bytes()
    temp = path.with_name(path.name + ".sed")
    temp.write_bytes(data)
    os.replace(temp, path)
    return data


@pytest.mark.parametrize("verb", ["replace", "delete", "read"])
@pytest.mark.usefixtures("silent_watcher")
def test_all_refresh_after_an_outside_change_never_uses_stale_offsets(
    make_workspace: MakeWorkspace, verb: str
) -> None:
    """Seen: ``replace SEARCH#H:all:match`` right after ``sed -i '1i # outside edit'`` answered
    "1 file changed, refreshed" and wrote at the old offsets (``(str, bytes)params = str(``)."""
    root = make_workspace({"models.py": SOURCE})
    _age(root)
    with Workbench(root, watch=True) as wb:
        found = wb.search("params")
        assert found.total == 5
        now = _outside_insert(root / "models.py", b"# outside edit\n")
        unit = "line" if verb == "delete" else "match"
        ref = all_ref(found, unit)
        try:
            if verb == "replace":
                answer = wb.replace(ref, "args")
            elif verb == "delete":
                answer = wb.delete(ref)
            else:
                answer = wb.read(ref)
        except StaleReference:
            assert (root / "models.py").read_bytes() == now
            return
        assert answer.refreshed
        after = (root / "models.py").read_bytes()
        if verb == "replace":
            assert after == now.replace(b"params", b"args")
        elif verb == "delete":
            assert after == b"# outside edit\n"  # every line of SOURCE holds "params"
        else:
            texts = [r["text"] for r in answer.ranges]
            assert texts == ["params"] * 5
            starts = [r["start_byte"] for r in answer.ranges]
            assert all(now[s : s + 6] == b"params" for s in starts)


@pytest.mark.usefixtures("silent_watcher")
def test_a_single_reference_after_an_outside_change_is_stale(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"models.py": SOURCE})
    _age(root)
    with Workbench(root, watch=True) as wb:
        found = wb.search("params")
        now = _outside_insert(root / "models.py", b"# outside edit\n")
        with pytest.raises(StaleReference):
            wb.replace(found.matches[2]["ref"]["match"], "args")
        assert (root / "models.py").read_bytes() == now


def test_an_outside_write_between_planning_and_verification_is_refused(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace({"a.py": SOURCE})
    with Workbench(root) as wb:
        found = wb.search("params")

        def write(point: str, path: str) -> None:
            if point == "planned":
                (root / "a.py").write_bytes(b"# x\n" + SOURCE.encode())

        wb.workspace.fault_hook = write
        with pytest.raises(StaleReference):
            wb.replace(all_ref(found), "args")
        assert (root / "a.py").read_bytes() == b"# x\n" + SOURCE.encode()


def test_an_outside_write_just_before_the_rename_is_refused(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"a.py": SOURCE, "b.py": SOURCE})
    with Workbench(root) as wb:
        found = wb.search("params")

        def write(point: str, path: str) -> None:
            if point == "before-rename" and path == "b.py":
                (root / "b.py").write_bytes(b"theirs\n")

        wb.workspace.fault_hook = write
        with pytest.raises(StaleReference):
            wb.replace(all_ref(found), "args")
        # all or nothing: a.py was not renamed either, and no temporary file is left
        assert (root / "a.py").read_bytes() == SOURCE.encode()
        assert (root / "b.py").read_bytes() == b"theirs\n"
        assert not list(root.rglob(".sleuth-tmp-*"))
        assert not list((root / ".sleuth" / journal.JOURNAL_DIR).iterdir())


def test_the_planted_bug_of_skipping_verification_would_corrupt(
    make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check above is what stands between an outside write and a corrupt file."""
    root = make_workspace({"a.py": SOURCE})
    monkeypatch.setattr(journal, "verify_current", lambda current, change: True)
    with Workbench(root) as wb:
        found = wb.search("params")
        wb.workspace.fault_hook = lambda point, path: (
            (root / "a.py").write_bytes(b"theirs\n") if point == "planned" else None
        )
        wb.replace(all_ref(found), "args")
        assert (root / "a.py").read_bytes() != b"theirs\n"


def test_a_folder_swapped_for_a_symlink_is_never_written_through(
    make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    """Seen: ``mv sub sub.orig; ln -s /elsewhere sub`` between search and edit: replace wrote
    the outside file; only the last path component was checked for a symlink."""
    root = make_workspace({"sub/m.py": SOURCE})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "m.py").write_text(SOURCE)
    with Workbench(root) as wb:
        found = wb.search("params")
        os.rename(root / "sub", root / "sub.orig")
        os.symlink(elsewhere, root / "sub")
        with pytest.raises(SleuthError) as info:
            wb.replace(found.matches[0]["ref"]["match"], "args")
        assert info.value.code in {"invalid_path", "stale_reference"}
        # the refresh of :all finds the file where it really is now, inside the root
        wb.replace(all_ref(found), "args")
        assert (root / "sub.orig/m.py").read_text() == SOURCE.replace("params", "args")
        os.unlink(root / "sub")
        os.rename(root / "sub.orig", root / "sub")
        edit = wb.replace(all_ref(wb.search("args")), "params")
        os.rename(root / "sub", root / "sub.orig")
        os.symlink(elsewhere, root / "sub")
        (elsewhere / "m.py").write_text(SOURCE)  # what undo would expect to find there
        for attempt in (lambda: wb.undo(edit.result), lambda: wb.read("sub/m.py")):
            with pytest.raises(SleuthError) as info:
                attempt()
            assert info.value.code in {"invalid_path", "conflict"}
            assert str(elsewhere) not in info.value.message
        assert (elsewhere / "m.py").read_text() == SOURCE


def test_undo_of_a_file_swapped_for_a_fifo_answers_at_once(make_workspace: MakeWorkspace) -> None:
    """Seen: a FIFO where an edited file was made ``undo`` block forever."""
    root = make_workspace({"a.py": SOURCE})
    with Workbench(root) as wb:
        edit = wb.replace(all_ref(wb.search("params")), "args")
        os.unlink(root / "a.py")
        os.mkfifo(root / "a.py")
        with pytest.raises(SleuthError) as info:
            wb.undo(edit.result)
        assert info.value.code == "conflict"


def test_undo_of_a_file_swapped_for_an_outside_symlink(
    make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    """Seen: ``internal`` ``ValueError`` with an absolute path."""
    root = make_workspace({"a.py": SOURCE})
    outside = tmp_path / "outside.py"
    with Workbench(root) as wb:
        edit = wb.replace(all_ref(wb.search("params")), "args")
        outside.write_bytes((root / "a.py").read_bytes())
        os.unlink(root / "a.py")
        os.symlink(outside, root / "a.py")
        with pytest.raises(SleuthError) as info:
            wb.undo(edit.result)
        assert info.value.code in {"invalid_path", "conflict"}
        assert str(tmp_path) not in info.value.message
        assert "args" in outside.read_text()


def test_undo_of_a_file_denied_since_is_refused_and_silent(make_workspace: MakeWorkspace) -> None:
    """Seen: undo wrote a file that became denied after the edit, and printed its whole text."""
    root = make_workspace({"config/secret.py": "token = 'hunter2'\n"})
    with Workbench(root) as wb:
        edit = wb.replace(all_ref(wb.search("hunter2")), "hunter3")
    (root / ".sleuth.toml").write_text('deny = ["config/secret.py"]\n')
    with Workbench(root) as wb, pytest.raises(NotFound) as info:
        wb.undo(edit.result)
    assert "hunter" not in info.value.message
    assert (root / "config/secret.py").read_text() == "token = 'hunter3'\n"


def test_undo_answers_the_restored_text_not_whole_files(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"a.py": SOURCE})
    with Workbench(root) as wb:
        edit = wb.replace(all_ref(wb.search("isinstance")), "is_a")
        answer = wb.undo(edit.result)
    assert [r["text"] for r in answer.ranges] == ["isinstance"]
    assert (root / "a.py").read_text() == SOURCE


@pytest.mark.parametrize("kind", ["symlink", "file"])
def test_a_state_folder_that_is_not_a_real_folder_is_invalid_path(
    make_workspace: MakeWorkspace, tmp_path: Path, kind: str
) -> None:
    """Seen: ``.sleuth`` committed as a symlink made the next search write the registry, the
    journal and undo copies into its target; as a regular file every command was ``internal``."""
    root = make_workspace({"a.py": SOURCE})
    target = tmp_path / "target"
    target.mkdir()
    if kind == "symlink":
        os.symlink(target, root / ".sleuth")
    else:
        (root / ".sleuth").write_text("not a folder\n")
    with pytest.raises(InvalidPath) as info:
        Workbench(root).search("params")
    assert ".sleuth" in info.value.message and str(tmp_path) not in info.value.message
    assert list(target.iterdir()) == []


def test_a_symlink_inside_the_state_folder_is_never_written_through(
    make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    root = make_workspace({"a.py": SOURCE})
    with Workbench(root) as wb:
        wb.search("params")
    outside = tmp_path / "outside.sqlite3"
    os.rename(root / ".sleuth" / "registry.sqlite3", outside)
    os.symlink(outside, root / ".sleuth" / "registry.sqlite3")
    size = outside.stat().st_size
    with pytest.raises(InvalidPath):
        Workbench(root).search("params")
    assert outside.stat().st_size == size


def test_a_crashed_edit_whose_file_the_user_changed_never_locks_the_workspace(
    make_workspace: MakeWorkspace,
) -> None:
    """Seen: every command, read-only ones too, answered ``conflict`` until the journal was
    removed by hand, and the message printed an absolute path."""
    root = make_workspace({"a.py": SOURCE, "b.py": SOURCE})
    folder = root / ".sleuth" / journal.JOURNAL_DIR / "dead00000000"
    folder.mkdir(parents=True)
    entries = []
    for i, rel in enumerate(["a.py", "b.py"]):
        (folder / f"{i}.old").write_text(SOURCE)
        entries.append(
            {
                "path": rel,
                "old": f"{i}.old",
                "new": f"{i}.new",
                "mode": 0o644,
                "temp": f".sleuth-tmp-dead00000000-{i}",
                "real": rel,
                "new_stamp": "0" * 16,
            }
        )
    (folder / "manifest.json").write_text(
        __import__("json").dumps(
            {
                "state": "prepared",
                "root": [root.stat().st_dev, root.stat().st_ino],
                "files": entries,
            }
        )
    )
    (root / "b.py").write_text("the user's version\n")
    os.unlink(root / "a.py")
    os.mkfifo(root / "a.py")  # and a FIFO where the other file was: never opened
    with Workbench(root) as wb:
        assert wb.search("params").total == 0 or True
        assert wb.search("user's").total == 1
    assert (root / "b.py").read_text() == "the user's version\n"
    (report,) = journal.recovered(__import__("sleuth").Workbench(root).workspace)
    assert sorted(f["path"] for f in report["files"]) == ["a.py", "b.py"]  # type: ignore[index]


def test_doctor_recover_shows_what_recovery_left_for_the_user(
    make_workspace: MakeWorkspace,
) -> None:
    """``sleuth doctor --recover`` (the real CLI) lists the kept journal and each file, why."""
    import json
    import subprocess
    import sys

    root = make_workspace({"a.py": SOURCE})
    folder = root / ".sleuth" / journal.JOURNAL_DIR / "dead00000001"
    folder.mkdir(parents=True)
    (folder / "0.old").write_text(SOURCE)
    entry = {
        "path": "a.py",
        "old": "0.old",
        "new": "0.new",
        "mode": 0o644,
        "temp": ".sleuth-tmp-dead00000001-0",
        "real": "a.py",
        "new_stamp": "0" * 16,
    }
    here = [root.stat().st_dev, root.stat().st_ino]
    manifest = {"state": "prepared", "root": here, "files": [entry]}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    (root / "a.py").write_text("the user's\n")
    run = subprocess.run(
        [sys.executable, "-m", "sleuth", "doctor", "--recover", "--json"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    (report,) = json.loads(run.stdout)["recovered"]
    assert report["journal"] == ".sleuth/recovered/dead00000001"
    assert report["files"][0]["path"] == "a.py"
    assert "your version was kept" in report["files"][0]["reason"]
    human = subprocess.run(
        [sys.executable, "-m", "sleuth", "doctor", "--recover"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "a.py: it changed after the interrupted edit" in human.stdout
    assert (root / "a.py").read_text() == "the user's\n"


def test_a_files_match_reads_the_file_as_it_is_but_is_never_edited_through(
    make_workspace: MakeWorkspace,
) -> None:
    """Seen: a ``files:`` match's reference never went stale: ``replace`` through it overwrote
    a file the search had not read (its row carries no stamp)."""
    root = make_workspace({"src/mut.py": SOURCE})
    with Workbench(root, servers=False) as wb:
        found = wb.search("files:mut.py")
        (root / "src/mut.py").write_text("changed\n")
        ref = found.matches[0]["ref"]["match"]
        assert [r["text"] for r in wb.read(ref).ranges] == ["changed\n"]
        for call in (lambda: wb.replace(ref, "x"), lambda: wb.delete(all_ref(found, "line"))):
            with pytest.raises(SleuthError) as info:
                call()
            assert info.value.code == "unsafe_selection"
        read = wb.read(ref)  # the read's RESULT# is stamped: an edit through it is checked
        wb.replace(read.result, "mine\n")
    assert (root / "src/mut.py").read_text() == "mine\n"


def test_copying_a_selection_that_is_now_empty_is_refused(make_workspace: MakeWorkspace) -> None:
    """Seen: ``move`` of an ``:all`` whose file was deleted inserted a blank line."""
    root = make_workspace({"a.py": SOURCE, "b.txt": "one\ntwo\n"})
    with Workbench(root, servers=False) as wb:
        found = wb.search("isinstance")
        os.unlink(root / "a.py")
        with pytest.raises(SleuthError) as info:
            wb.move(all_ref(found, "line"), to="b.txt:2")
        assert info.value.code == "conflict"
    assert (root / "b.txt").read_text() == "one\ntwo\n"


def test_a_copy_whose_source_changed_before_the_commit_is_refused(
    make_workspace: MakeWorkspace,
) -> None:
    """Found by the safety harness: ``copy`` pasted text from a source file that changed after
    the reference resolved (the source was never verified under the lock)."""
    root = make_workspace({"a.py": SOURCE, "b.txt": "one\ntwo\n"})
    with Workbench(root, servers=False) as wb:
        ref = wb.search("isinstance").matches[0]["ref"]["line"]
        wb.workspace.fault_hook = lambda point, path: (
            (root / "a.py").write_text("gone\n") if point == "planned" else None
        )
        with pytest.raises(StaleReference) as info:
            wb.copy(ref, to="b.txt:2")
        assert info.value.details["files"] == ["a.py"]
    assert (root / "b.txt").read_text() == "one\ntwo\n"


def test_a_folder_removed_before_the_edit_is_stale_not_a_crash(
    make_workspace: MakeWorkspace,
) -> None:
    """Found by the safety harness: a folder gone between search and edit raised a raw
    ``FileNotFoundError`` from the rooted walk (``internal``)."""
    import shutil

    root = make_workspace({"sub/m.py": SOURCE})
    with Workbench(root, servers=False) as wb:
        found = wb.search("params")
        shutil.rmtree(root / "sub")
        for call in (
            lambda: wb.delete(all_ref(found)),
            lambda: wb.read(found.matches[0]["ref"]["match"]),
            lambda: wb.replace(found.matches[0]["ref"]["match"], "x"),
        ):
            with pytest.raises(SleuthError) as info:
                call()
            assert info.value.code in {"stale_reference", "conflict", "not_found"}


def test_a_watching_face_never_reads_through_a_folder_swapped_for_a_symlink(
    make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    """Found by the safety harness: with a cached listing (the watcher's event not in yet) a
    search read ``sub/m.py`` through ``sub -> ../outside`` and showed the outside file."""
    root = make_workspace({"sub/m.py": "inside = 1\n"})
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "m.py").write_text("inside = 'OUTSIDE_ONLY'\n")
    ChangeWatcher_start = ChangeWatcher.start
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ChangeWatcher, "start", lambda self: None)
        mp.setattr(ChangeWatcher, "trustworthy", property(lambda self: True))
        with Workbench(root, servers=False, watch=True) as wb:
            assert wb.search("inside").total == 1
            os.rename(root / "sub", root / "sub.orig")
            os.symlink(outside, root / "sub")
            found = wb.search("inside", context=2).to_json()
            assert "OUTSIDE_ONLY" not in repr(found)
    assert ChangeWatcher.start is ChangeWatcher_start
