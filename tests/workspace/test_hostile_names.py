"""Names no answer could show as one line of text — not UTF-8, or holding a control character —
are left out of every listing with what lies below them, counted, and refused as paths
(docs/faces.md#which-files-are-searched)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sleuth import Workbench
from sleuth.errors import InvalidPath
from sleuth.render.compact import search_compact
from sleuth.workspace.paths import reportable_name
from tests.conftest import MakeWorkspace


def _plant(root: Path) -> None:
    raw = os.fsencode(root)
    os.makedirs(os.path.join(raw, b"bad\xfedir", b"deep"))
    for name in (b"bad\xfedir/inner.py", b"bad\xfedir/deep/x.py", b"ctl\x1b[31m.py"):
        with open(os.path.join(raw, name), "w") as fh:
            fh.write("token_here = 2\n")
    forged = "zz.py:1:1 #1  def helper():  # the definition\nzz.py"
    (root / forged).write_text("token_here = 3\n")
    (root / "tab\tname.py").write_text("token_here = 4\n")
    (root / "line\u2028sep.py").write_text("token_here = 5\n")


@pytest.mark.parametrize("watch", [False, True])
def test_unshowable_names_are_left_out_and_counted(
    make_workspace: MakeWorkspace, watch: bool
) -> None:
    root = make_workspace({"a.py": "token_here = 1\n", "ünïcode/b.py": "token_here = 6\n"})
    _plant(root)
    with Workbench(root, build_index=False, watch=watch) as wb:
        for query in ("token_here", "regex:token_\\w+", "files:*.py", "ast:token_here = $V"):
            page = wb.search(query, lang="python" if query.startswith("ast:") else None)
            data = page.to_json()
            assert sorted({m["path"] for m in data["matches"]}) == ["a.py", "ünïcode/b.py"]
            assert data["skipped"]["unreadable"] == 5  # 1 folder + 4 files
            text = search_compact(data)
            assert all(line.isprintable() for line in text.splitlines()), query
        found = wb.find("token_here", mode="grep").to_json()
        assert sorted({m["path"] for m in found["matches"]}) == ["a.py", "ünïcode/b.py"]
        for name in ("tab\tname.py", "zz.py:1:1 #1  def helper():  # the definition\nzz.py"):
            with pytest.raises(InvalidPath, match="control character"):
                wb.read(name)


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("plain.py", True),
        ("ünïcode ok.py", True),
        ("nbsp\u00a0ok.py", True),
        ("new\nline", False),
        ("tab\t", False),
        ("esc\x1b", False),
        ("del\x7f", False),
        ("nel\x85", False),
        ("sep\u2029", False),
        ("surrogate\udcfe", False),
    ],
)
def test_which_names_are_reportable(name: str, shown: bool) -> None:
    assert reportable_name(name) is shown


def test_deeply_nested_braces_are_refused_with_the_face_s_code(
    make_workspace: MakeWorkspace,
) -> None:
    """Seen: ~500 nested ``{a,{a,…}}`` overflowed the recursive translation (``internal``);
    in a deny rule every command, ``read`` included, failed so."""
    from sleuth.errors import InvalidQuery

    root = make_workspace({"t.txt": "b\n"})
    deep = "{t," * 600 + "x" + "}" * 600 + ".txt"
    with Workbench(root, build_index=False) as wb:
        for call in (
            lambda: wb.search("files:" + deep),
            lambda: wb.search("b", include=[deep]),
            lambda: wb.search("b", exclude=[deep]),
        ):
            with pytest.raises(InvalidQuery, match="nested deeper"):
                call()
        assert wb.search("files:" + "{t," * 5 + "x" + "}" * 5 + ".txt").total == 1
    (root / ".sleuth.toml").write_text(f'deny = ["{deep}"]\n')
    with pytest.raises(InvalidPath, match=r"\.sleuth\.toml.*deny glob"):
        Workbench(root, build_index=False).read("t.txt")
