"""An edit that cannot finish its renames, or that names one file twice, leaves every file old
(docs/SAFETY.md): a rename failing in the middle puts back what was renamed at once, and a
symlinked file edited through both of its names is refused unless both write the same."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sleuth import Workbench
from sleuth.errors import Conflict, Internal, InvalidPath, NotFound
from tests.conftest import MakeWorkspace


def _leftovers(root: Path) -> list[str]:
    """Temporary files and journals an edit left behind."""
    temps = [str(p.relative_to(root)) for p in root.rglob(".sleuth-tmp-*")]
    journal = root / ".sleuth" / "journal"
    return temps + ([p.name for p in journal.iterdir()] if journal.is_dir() else [])


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(files=st.integers(min_value=2, max_value=5), data=st.data())
def test_a_rename_failing_midway_puts_back_every_file_at_once(
    make_workspace: MakeWorkspace, files: int, data: st.DataObject
) -> None:
    names = [f"d{i % 2}/f{i}.py" for i in range(files)]
    old = {name: f"x = {i}\nfoo()\n" for i, name in enumerate(names)}
    root = make_workspace(dict(old))
    failing = data.draw(st.integers(min_value=0, max_value=files - 1), label="failing rename")
    code = data.draw(st.sampled_from([errno.EBUSY, errno.EPERM, errno.ENOSPC, errno.EXDEV]))
    calls: list[str] = []

    def hook(point: str, path: str) -> None:
        if point == "rename":
            calls.append(path)
            if len(calls) == failing + 1:
                raise OSError(code, os.strerror(code), path)

    with Workbench(root, build_index=False) as wb:
        ref = wb.search("foo()").result + ":all:match"
        wb.workspace.fault_hook = hook
        with pytest.raises(Internal) as raised:
            wb.replace(ref, "bar()")
        wb.workspace.fault_hook = None
        assert os.strerror(code) in raised.value.message
        assert {n: (root / n).read_text() for n in names} == old
        assert _leftovers(root) == []
        assert wb.search("bar()").total == 0
        # and the workspace is whole: the same edit goes through now
        assert sorted(wb.replace(ref, "bar()").changed) == sorted(names)


def test_a_symlinked_file_edited_through_both_names_differently_is_refused(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace({"a.py": "foo 1\nfoo 2\n", "b.py": "keep\nMOVE_ME\nend\n"})
    os.symlink("a.py", root / "link.py")
    os.symlink("b.py", root / "b_link.py")
    with Workbench(root, build_index=False) as wb:
        page = wb.search("foo")  # a.py:1, a.py:2, link.py:1, link.py:2
        assert [(m["path"], m["line"]) for m in page.to_json()["matches"]] == [
            ("a.py", 1),
            ("a.py", 2),
            ("link.py", 1),
            ("link.py", 2),
        ]
        with pytest.raises(Conflict, match="one file"):
            wb.replace(wb.select(page.result, [1, 4]).result, "X")
        assert (root / "a.py").read_text() == "foo 1\nfoo 2\n"
        line = wb.search("MOVE_ME", path="b.py").matches[0]["ref"]["line"]
        with pytest.raises(Conflict, match="one file"):
            wb.move(line, to="b_link.py:1")
        assert (root / "b.py").read_text() == "keep\nMOVE_ME\nend\n"
        # the same change through both names (an :all over the link and its target) is one
        done = wb.replace(page.result + ":all:match", "bar")
        assert sorted(done.changed) == ["a.py", "link.py"]
        assert (root / "a.py").read_text() == "bar 1\nbar 2\n"
        assert os.path.islink(root / "link.py")
        wb.undo(done.result)
        assert (root / "a.py").read_text() == "foo 1\nfoo 2\n"


def test_the_state_folder_is_never_read_or_edited(make_workspace: MakeWorkspace) -> None:
    """Undo data is sleuth's own: editing it would make ``undo`` write what it names."""
    root = make_workspace({"a.py": "foo = 1\n", "secrets/k.py": "key = 's3cret'\n"})
    (root / ".sleuth.toml").write_text('deny = ["secrets/**"]\n')
    os.symlink(".sleuth/registry.sqlite3", root / "reg.db")
    with Workbench(root, build_index=False) as wb:
        done = wb.replace(wb.search("foo").matches[0]["ref"]["match"], "bar")
        rid = done.result.removeprefix("RESULT#")
        for path in (f".sleuth/undo/{rid}/undo.json", ".sleuth", "reg.db"):
            with pytest.raises(InvalidPath, match="state folder"):
                wb.read(path)
        assert "reg.db" not in [m["path"] for m in wb.search("files:*").matches]
        manifest = root / ".sleuth" / "undo" / rid / "undo.json"
        text = manifest.read_text()
        for forged in ('"old": "../../../secrets/k.py"', '"path": "../outside.py"'):
            key = forged.split(":")[0]
            entry = {'"old"': '"old": "0.old"', '"path"': '"path": "a.py"'}[key]
            manifest.write_text(text.replace(entry, forged))
            with pytest.raises(NotFound, match="unreadable"):
                wb.undo(done.result)
        assert (root / "a.py").read_text() == "bar = 1\n"
        assert not (root.parent / "outside.py").exists()
        manifest.write_text(text)
        wb.undo(done.result)
        assert (root / "a.py").read_text() == "foo = 1\n"
