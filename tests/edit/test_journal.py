"""The journal that makes a multi-file edit all-or-nothing (docs/edits.md#how-files-are-written),
tested on real files.

``commit`` checks every stamp first (one stale file: nothing written, every stale file listed),
writes atomically per file and keeps modes. A process killed at each crash point of the commit
(``SLEUTH_CRASH_AT``, a real SIGKILL in a child process) leaves a journal that the next start
(``Workbench(root)`` -> ``recover``) rolls back — or, once committed, just removes — so every
file ends entirely old or entirely new, and no temporary file stays behind. Recovery is
idempotent and never overwrites a file that changed after the crash.

``test_regression_*`` exposes an engine bug reported to the lead; it fails until fixed.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from sleuth import Workbench
from sleuth.edit import journal, recovery
from sleuth.edit.journal import FileChange, commit, recover
from sleuth.errors import StaleReference
from sleuth.workspace import Workspace, stamp_bytes
from sleuth.workspace.rooted import Located
from tests.conftest import MakeWorkspace

OLD = {f"d{i}/f{i}.py": f"value_{i} = 'old'\n".encode() for i in range(3)}
NEW = {path: data.replace(b"old", b"new") for path, data in OLD.items()}
POINTS = [
    "before-manifest",
    "after-manifest",
    "after-file-0",
    "after-file-1",
    "after-file-2",
    "after-commit",
]

CHILD = """
import sys
from sleuth.edit.journal import FileChange, commit
from sleuth.workspace import Workspace, stamp_bytes
from sleuth.workspace.rooted import Located
ws = Workspace(sys.argv[1])
changes = []
for rel in sys.argv[2:]:
    old = (ws.root / rel).read_bytes()
    changes.append(FileChange(rel, stamp_bytes(old), old, old.replace(b"old", b"new")))
commit(ws, changes)
"""


def contents(root: Path) -> dict[str, bytes]:
    return {path: (root / path).read_bytes() for path in OLD}


def leftovers(root: Path) -> list[str]:
    """Temporary files in the workspace and journal folders in ``.sleuth/journal``."""
    temps = [p.name for p in root.rglob(".sleuth-tmp-*")]
    folder = root / ".sleuth" / journal.JOURNAL_DIR
    return temps + ([p.name for p in folder.iterdir()] if folder.is_dir() else [])


def changes_for(ws: Workspace, paths: list[str]) -> list[FileChange]:
    out = []
    for rel in paths:
        old = (ws.root / rel).read_bytes()
        out.append(FileChange(rel, stamp_bytes(old), old, old.replace(b"old", b"new")))
    return out


def crash_at(root: Path, point: str) -> None:
    """Run a three-file commit in a child process killed (SIGKILL) at ``point``."""
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), *OLD],
        capture_output=True,
        env={**os.environ, "SLEUTH_CRASH_AT": point},
        timeout=120,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()


def test_commit_writes_every_file_and_keeps_modes(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(dict(OLD))
    os.chmod(root / "d1/f1.py", 0o700)
    ws = Workspace(root)
    commit(ws, changes_for(ws, list(OLD)))
    assert contents(root) == NEW
    assert stat.S_IMODE((root / "d1/f1.py").stat().st_mode) == 0o700
    assert stat.S_IMODE((root / "d0/f0.py").stat().st_mode) == 0o644
    assert leftovers(root) == []


def test_commit_lists_every_stale_file_and_writes_nothing(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(dict(OLD))
    ws = Workspace(root)
    changes = changes_for(ws, list(OLD))
    (root / "d0/f0.py").write_bytes(OLD["d0/f0.py"] + b"\n")
    (root / "d2/f2.py").unlink()
    with pytest.raises(StaleReference) as info:
        commit(ws, changes)
    assert info.value.details["files"] == ["d0/f0.py", "d2/f2.py"]
    assert (root / "d1/f1.py").read_bytes() == OLD["d1/f1.py"]
    assert (root / "d0/f0.py").read_bytes() == OLD["d0/f0.py"] + b"\n"
    assert not (root / "d2/f2.py").exists()
    assert leftovers(root) == []


@pytest.mark.parametrize("point", POINTS)
def test_a_crash_at_each_point_ends_all_old_or_all_new(
    make_workspace: MakeWorkspace, point: str
) -> None:
    root = make_workspace(dict(OLD))
    os.chmod(root / "d2/f2.py", 0o755)
    crash_at(root, point)
    if point.startswith("after-file-"):  # the crash really landed mid-edit: a torn state
        written = int(point.rsplit("-", 1)[1]) + 1
        assert [contents(root)[p] == NEW[p] for p in OLD] == [i < written for i in range(3)]
    Workbench(root).close()  # start-up recovers
    assert contents(root) == (NEW if point == "after-commit" else OLD)
    assert stat.S_IMODE((root / "d2/f2.py").stat().st_mode) == 0o755
    assert leftovers(root) == []


def test_recovery_removes_a_temporary_file_left_mid_write(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(dict(OLD))
    crash_at(root, "after-file-0")
    (folder,) = (root / ".sleuth" / journal.JOURNAL_DIR).iterdir()
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["state"] == "prepared"
    # as if the kill had landed while file 1's temporary file was being written
    entry = manifest["files"][1]
    temp = root / Path(entry["path"]).parent / entry["temp"]
    temp.write_bytes(NEW[entry["path"]][:5])
    assert recover(Workspace(root)) == ["d0/f0.py"]
    assert contents(root) == OLD
    assert leftovers(root) == []


def test_recovery_is_idempotent_even_when_it_is_interrupted(
    make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_workspace(dict(OLD))
    crash_at(root, "after-file-2")
    assert contents(root) == NEW
    real_restore = recovery._restore
    calls: list[str] = []

    def dies_after_one(loc: Located, temp_name: str, data: bytes, mode: int) -> None:
        if calls:
            raise KeyboardInterrupt  # stands in for a crash during recovery
        calls.append(loc.real)
        real_restore(loc, temp_name, data, mode)

    monkeypatch.setattr(recovery, "_restore", dies_after_one)
    with pytest.raises(KeyboardInterrupt):
        recover(Workspace(root))
    monkeypatch.setattr(recovery, "_restore", real_restore)
    assert sum(contents(root)[p] == OLD[p] for p in OLD) == 1
    assert sorted(recover(Workspace(root))) == ["d1/f1.py", "d2/f2.py"]
    assert contents(root) == OLD
    assert recover(Workspace(root)) == []
    assert contents(root) == OLD and leftovers(root) == []


def test_recovery_never_overwrites_a_file_changed_after_the_crash(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace(dict(OLD))
    crash_at(root, "after-file-1")
    (root / "d1/f1.py").write_bytes(b"someone else's work\n")
    ws = Workspace(root)
    assert recover(ws) == ["d0/f0.py"]  # rolled back where it could be, never a lock
    assert (root / "d1/f1.py").read_bytes() == b"someone else's work\n"
    assert contents(root)["d0/f0.py"] == OLD["d0/f0.py"]
    (report,) = journal.recovered(ws)
    assert [f["path"] for f in report["files"]] == ["d1/f1.py"]  # type: ignore[index]
    assert "your version was kept" in str(report["files"])
    folder = root / str(report["journal"])
    assert not Path(str(report["journal"])).is_absolute()
    assert (folder / "manifest.json").exists()  # kept: the old content is in it
    assert not (root / ".sleuth" / journal.JOURNAL_DIR / folder.name).exists()
    Workbench(root).search("value_")  # read-only commands run


def test_a_commit_recovers_an_interrupted_one_first(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(dict(OLD))
    crash_at(root, "after-file-1")
    ws = Workspace(root)
    # stamps taken from the torn state would be refused; this commit was computed from OLD
    change = FileChange("d2/f2.py", stamp_bytes(OLD["d2/f2.py"]), OLD["d2/f2.py"], b"other\n")
    commit(ws, [change])
    assert contents(root) == {**OLD, "d2/f2.py": b"other\n"}
    assert leftovers(root) == []


def test_regression_recovery_elsewhere_must_not_tear_a_live_commit(
    make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Engine bug (reported): ``recover`` rolls back every ``prepared`` journal, including one
    whose commit is still running in another process (an MCP server mid-edit while a CLI call
    starts: ``Workbench()`` runs ``recover``). Here the second start-up happens after file 0
    of three was written: it restores file 0 and deletes the journal; the live commit then
    writes files 1 and 2 and dies on the missing manifest folder (``FileNotFoundError`` ->
    ``internal``) — the edit is torn: f0 old, f1 and f2 new. A live journal needs a lock (e.g.
    ``flock`` held for the commit) that ``recover`` respects."""
    root = make_workspace(dict(OLD))
    ws = Workspace(root)
    real_rename = journal.rename_into
    written: list[str] = []

    def another_process_starts(loc: Located, temp_name: str) -> None:
        real_rename(loc, temp_name)
        written.append(loc.real)
        if len(written) == 1:
            Workbench(root).close()

    monkeypatch.setattr(journal, "rename_into", another_process_starts)
    try:
        commit(ws, changes_for(ws, list(OLD)))
    except Exception:
        pass
    finally:
        state = contents(root)
    assert state in (OLD, NEW), state
