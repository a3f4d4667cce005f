"""The change watcher places no watch through a symlinked folder (SPEC section 1,
docs/SAFETY.md#what-a-watching-face-may-answer-late), and still sees every change in the
root's real folders: ones made after it started, moved, or put where a symlink was.

Watches are counted from the kernel's side: every inotify instance of this process lists its
watches (inode and device) in ``/proc/self/fdinfo``, whoever placed them.
"""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from sleuth.api import Workbench
from sleuth.workspace.folder_watches import FolderWatches
from sleuth.workspace.watch import ChangeWatcher
from tests.conftest import MakeWorkspace
from tests.workspace.conftest import SETTLED
from tests.workspace.conftest import wait_for as _wait

Inode = tuple[int, int]


def _watched() -> set[Inode]:
    """(device, inode) of every folder an inotify instance of this process watches."""
    found: set[Inode] = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") != "anon_inode:inotify":
                continue
            with open(f"/proc/self/fdinfo/{fd}") as fh:
                rows = [line.split() for line in fh if line.startswith("inotify wd:")]
        except OSError:
            continue  # closed meanwhile
        for row in rows:
            fields = dict(f.split(":", 1) for f in row[1:] if ":" in f)
            dev = int(fields["sdev"], 16)  # the kernel's dev_t: major << 20 | minor
            found.add((os.makedev(dev >> 20, dev & 0xFFFFF), int(fields["ino"], 16)))
    return found


def _inode(path: Path) -> Inode:
    st = path.lstat()
    return st.st_dev, st.st_ino


def _folders(top: Path) -> set[Inode]:
    """``top`` and every real folder below it (no symlink followed)."""
    found = {_inode(top)}
    for here, dirs, _files in os.walk(top):
        found |= {_inode(Path(here, d)) for d in dirs if not Path(here, d).is_symlink()}
    return found


@pytest.fixture
def outside(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder outside every workspace with 40 subfolders of 3 folders each."""
    top = tmp_path_factory.mktemp("outside")
    for i in range(40):
        for j in range(3):
            (top / f"s{i}" / f"t{j}").mkdir(parents=True)
    (top / "s0" / "t0" / "hit.py").write_text("needle = 'outside'\n")
    return top


class Recorder:
    """A ``ChangeWatcher`` over ``root`` that keeps every path it handed on."""

    def __init__(self, root: Path) -> None:
        (root / ".sleuth").mkdir(exist_ok=True)  # the barrier file's folder
        self.root = root
        self.paths: set[str] = set()
        self._lock = threading.Lock()
        self.watcher = ChangeWatcher(str(root), self._seen, settle_s=0.0)
        self.watcher.start()
        assert _wait(lambda: self.watcher.trustworthy)

    def _seen(self, batch: set[tuple[str, str]], _generation: int) -> None:
        with self._lock:
            self.paths |= {p for _, p in batch}

    def settled(self) -> set[str]:
        """Every path handed on for changes made so far (the watcher's barrier)."""
        assert self.watcher.barrier(10.0)
        with self._lock:
            return set(self.paths)


@pytest.fixture
def recorder(make_workspace: MakeWorkspace, outside: Path) -> Iterator[Recorder]:
    root = make_workspace({"a.py": "needle\n", "src/b.py": "needle\n", "src/deep/c.py": "x\n"})
    (root / "link").symlink_to(outside, target_is_directory=True)
    rec = Recorder(root)
    yield rec
    rec.watcher.stop()


def test_no_watch_is_placed_through_a_symlinked_folder(recorder: Recorder, outside: Path) -> None:
    watched = _watched()
    assert not watched & _folders(outside)
    assert _folders(recorder.root) <= watched  # the root's own folders are all watched
    (outside / "s3" / "t1" / "new.py").write_text("needle\n")
    (outside / "s4" / "made").mkdir()
    gen = recorder.watcher.generation
    assert recorder.settled() == set()  # nothing reached the watcher's listeners
    assert recorder.watcher.generation == gen


def test_a_symlinked_folder_made_after_start_is_not_watched_through(
    recorder: Recorder, outside: Path
) -> None:
    (recorder.root / "src" / "late").symlink_to(outside, target_is_directory=True)
    assert recorder.settled() == {f"{recorder.root}/src/late"}  # the link itself, as a file
    assert not _watched() & _folders(outside)
    (outside / "s5" / "x.py").write_text("needle\n")
    assert recorder.settled() == {f"{recorder.root}/src/late"}


def test_a_folder_made_after_start_is_watched_at_every_depth(recorder: Recorder) -> None:
    root = recorder.root
    (root / "new" / "deeper").mkdir(parents=True)
    (root / "new" / "deeper" / "early.py").write_text("x\n")  # maybe before its watch
    assert f"{root}/new" in recorder.settled()
    assert _folders(root) <= _watched()
    (root / "new" / "deeper" / "late.py").write_text("x\n")
    assert f"{root}/new/deeper/late.py" in recorder.settled()


def test_a_folder_that_replaced_a_symlink_is_watched(recorder: Recorder, outside: Path) -> None:
    root = recorder.root
    (root / "link").unlink()
    (root / "link" / "sub").mkdir(parents=True)
    assert f"{root}/link" in recorder.settled()
    (root / "link" / "sub" / "f.py").write_text("needle\n")
    assert f"{root}/link/sub/f.py" in recorder.settled()
    assert not _watched() & _folders(outside)


def test_a_moved_folder_reports_its_new_paths(recorder: Recorder) -> None:
    root = recorder.root
    (root / "src").rename(root / "lib")
    assert {f"{root}/src", f"{root}/lib"} <= recorder.settled()
    (root / "lib" / "deep" / "c.py").write_text("changed\n")
    seen = recorder.settled()
    assert f"{root}/lib/deep/c.py" in seen
    assert f"{root}/src/deep/c.py" not in seen
    assert _folders(root) <= _watched()


def test_a_face_never_hears_of_a_change_through_a_symlinked_folder(
    make_workspace: MakeWorkspace, outside: Path
) -> None:
    root = make_workspace({"a.py": "needle\n", "src/b.py": "needle\n"})
    (root / "link").symlink_to(outside, target_is_directory=True)
    with Workbench(root, watch=True, build_index=False, servers=False, tuning=SETTLED) as wb:
        ws = wb.workspace
        assert _wait(lambda: ws.generation is not None)
        assert not _watched() & _folders(outside)
        assert wb.search("needle").to_json()["total"] == 2
        gen = ws.generation
        (outside / "s1" / "t2" / "more.py").write_text("needle\n")
        assert ws.catch_up(10.0)
        assert ws.generation == gen
        (root / "src" / "new").mkdir()
        assert ws.catch_up(10.0)
        (root / "src" / "new" / "c.py").write_text("needle\n")
        assert ws.catch_up(10.0)
        assert ws.generation != gen
        assert wb.search("needle").to_json()["total"] == 3


def test_a_root_moved_away_turns_the_watcher_off(
    make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    root = make_workspace({"a.py": "needle\n"})
    with Workbench(root, watch=True, build_index=False, servers=False, tuning=SETTLED) as wb:
        ws = wb.workspace
        assert _wait(lambda: ws.generation is not None)
        assert wb.search("needle").to_json()["total"] == 1
        root.rename(tmp_path / "moved")
        (root / "sub").mkdir(parents=True)
        (root / "sub" / "a.py").write_text("needle needle\n")
        assert _wait(lambda: ws.generation is None)  # untrusted: every query walks
        assert not ws.catch_up(1.0)
        page = wb.search("needle", context=0).to_json()
        assert [m["path"] for m in page["matches"]] == ["sub/a.py", "sub/a.py"]


def test_the_watch_limit_fails_the_watcher_and_releases_its_watches(
    make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_workspace({"a.py": "x\n", "b/c.py": "x\n", "d/e/f.py": "x\n"})
    real_add = FolderWatches._add
    placed: list[str] = []

    def add(self: FolderWatches, path: str) -> bool:
        if len(placed) == 2:
            raise OSError(errno.ENOSPC, "inotify_add_watch: No space left on device")
        placed.append(path)
        return real_add(self, path)

    monkeypatch.setattr(FolderWatches, "_add", add)
    watcher = ChangeWatcher(str(root), settle_s=0.0)
    watcher.start()
    assert _wait(lambda: watcher.failed)
    assert not watcher.trustworthy
    assert len(placed) == 2
    assert _wait(lambda: not _watched() & _folders(root))
    watcher.stop()


def test_an_overflowed_queue_watches_again_what_is_there_and_reports_the_root(
    make_workspace: MakeWorkspace,
) -> None:
    from sleuth.workspace import folder_watches as fw

    root = make_workspace({"src/deep/a.py": "x\n", "old/b.py": "x\n"})
    watches = FolderWatches.open(str(root))
    assert watches is not None
    try:
        watches.arm()
        (root / "src").rename(root / "lib")
        (root / "old" / "b.py").unlink()
        (root / "old").rmdir()
        (root / "new" / "two").mkdir(parents=True)
        changes: set[tuple[str, str]] = set()
        watches._take(fw._HEADER.pack(-1, fw.IN_Q_OVERFLOW, 0, 0), changes)  # events lost
        assert changes == {("modified", str(root))}  # every kept listing dropped
        want = {str(root)} | {str(root / p) for p in ("lib", "lib/deep", "new", "new/two")}
        assert set(watches.folders) == want
        watches.read()  # the events queued before the overflow change nothing
        assert set(watches.folders) == want
        assert _folders(root) <= _watched()
    finally:
        watches.close()


def test_without_inotify_watchfiles_still_watches(
    make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(FolderWatches, "open", classmethod(lambda cls, root: None))
    root = make_workspace({"a.py": "needle\n"})
    with Workbench(root, watch=True, build_index=False, servers=False, tuning=SETTLED) as wb:
        ws = wb.workspace
        assert _wait(lambda: ws.generation is not None)
        assert wb.search("needle").to_json()["total"] == 1
        gen = ws.generation
        (root / "b.py").write_text("needle\n")
        assert _wait(lambda: ws.generation != gen)
        assert ws.catch_up(10.0)
        assert wb.search("needle").to_json()["total"] == 2


def test_a_root_that_cannot_be_watched_fails_the_watcher(
    make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_workspace({"a.py": "x\n"})
    real_add = FolderWatches._add
    monkeypatch.setattr(
        FolderWatches, "_add", lambda self, path: path != str(root) and real_add(self, path)
    )
    watcher = ChangeWatcher(str(root), settle_s=0.0)
    watcher.start()
    assert _wait(lambda: watcher.failed)  # not trusted while blind
    assert not watcher.trustworthy
    watcher.stop()
