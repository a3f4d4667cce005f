"""Cloaking by real location (docs/SAFETY.md#cloaking-and-the-root): no alias uncloaks a denied
file.

Deny and ignore rules apply to a file's path as reached from the root without following
symlinked folders, and a symlinked folder is never descended — named as a scope neither — so
``ln -s config cfg`` cannot show, read or edit ``config/secret.py``. A cursor taken before a deny
rule stops serving the file's stored text; a symlinked configuration file is refused.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sleuth import Workbench
from sleuth.errors import InvalidPath, InvalidQuery, SleuthError
from tests.conftest import MakeWorkspace

MARK = "hunter2"


@pytest.fixture
def aliased(make_workspace: MakeWorkspace) -> Path:
    root = make_workspace(
        {
            ".sleuth.toml": 'deny = ["config/secret.py"]\n',
            "config/secret.py": f"PASSWORD = '{MARK}'\n\ndef hunter3():\n    return 1\n",
            "config/public.py": "NAME = 'public'\n",
            "app.py": "import config\n",
        }
    )
    os.symlink("config", root / "cfg")
    return root


QUERIES = [
    MARK,
    f"regex:{MARK}",
    "files:*",
    "files:secret",
    "ast:PASSWORD = $V",
    "hunter",
    "huntr2",
    "PASSWORD",
]


@pytest.mark.parametrize("query", QUERIES)
def test_a_symlinked_scope_never_uncloaks(aliased: Path, query: str) -> None:
    """Seen: ``search hunter2 --path cfg`` (also regex, files:*, ast:, possible_names) showed
    ``cfg/secret.py``."""
    with Workbench(aliased, build_index=False) as wb:
        for scope in ("cfg", "cfg/", "cfg/secret.py", "cfg/public.py", "cfg/missing.py"):
            with pytest.raises(InvalidPath) as info:
                wb.search(query, path=scope, lang="py" if query.startswith("ast:") else None)
            assert MARK not in info.value.message and "secret" not in info.value.message.replace(
                scope, ""
            )
        blob = repr(
            wb.search(query, limit=500, lang="py" if query.startswith("ast:") else None).to_json()[
                "matches"
            ]
        )
        assert MARK not in blob and "secret.py" not in blob


def test_the_error_is_the_same_for_a_denied_and_a_plain_file_behind_the_alias(
    aliased: Path,
) -> None:
    with Workbench(aliased, build_index=False) as wb:
        messages = []
        for scope in ("cfg/secret.py", "cfg/public.py"):
            with pytest.raises(SleuthError) as info:
                wb.search("x", path=scope)
            messages.append((info.value.code, info.value.message.replace(scope, "P")))
        assert messages[0] == messages[1]


def test_read_and_edit_through_the_alias_are_refused(aliased: Path) -> None:
    with Workbench(aliased, build_index=False) as wb:
        for call in (
            lambda: wb.read("cfg/secret.py"),
            lambda: wb.read("cfg/public.py"),
            lambda: wb.copy(wb.read("app.py").result, to="cfg/public.py:1"),
        ):
            with pytest.raises(InvalidPath):
                call()
    assert (aliased / "config/secret.py").read_text().startswith("PASSWORD")
    assert (aliased / "config/public.py").read_text() == "NAME = 'public'\n"


def test_a_cursor_taken_before_a_deny_rule_stops_serving_the_file(
    make_workspace: MakeWorkspace,
) -> None:
    """Seen: a cursor taken before a deny rule paged through the now-denied file's text."""
    files = {f"f{i:02}.py": f"token_{i} = 1\n" for i in range(12)}
    files["z_secret.py"] = f"token = '{MARK}'\n"
    root = make_workspace(files)
    with Workbench(root, build_index=False) as wb:
        first = wb.search("token", limit=5)
        cursor = first.next_cursor
        assert cursor is not None
        second = wb.search("token", limit=5, cursor=cursor)
        assert second.next_cursor is not None
    (root / ".sleuth.toml").write_text('deny = ["z_secret.py"]\n')
    with Workbench(root, build_index=False) as wb:
        with pytest.raises(InvalidQuery) as info:
            wb.search("token", limit=5, cursor=second.next_cursor)
        assert MARK not in info.value.message
        assert all(m["path"] != "z_secret.py" for m in wb.search("token", limit=50).matches)


@pytest.mark.parametrize("name", [".sleuth.toml", "pyproject.toml"])
def test_a_symlinked_config_file_is_refused_not_read(
    make_workspace: MakeWorkspace, tmp_path: Path, name: str
) -> None:
    """Seen: ``.sleuth.toml`` as a symlink to outside was read, its parse errors echoing
    positions of the outside file."""
    root = make_workspace({"a.py": "x = 1\n"})
    outside = tmp_path / "outside.toml"
    outside.write_text("[tool.sleuth]\nthis is = not = toml\n")
    os.symlink(outside, root / name)
    with pytest.raises(InvalidPath) as info:
        Workbench(root, build_index=False)
    assert "symlink" in info.value.message
    assert "line" not in info.value.message and str(tmp_path) not in info.value.message


def test_a_fifo_as_config_file_is_refused_at_once(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"a.py": "x = 1\n"})
    os.mkfifo(root / ".sleuth.toml")
    with pytest.raises(InvalidPath) as info:
        Workbench(root, build_index=False)
    assert "regular file" in info.value.message
