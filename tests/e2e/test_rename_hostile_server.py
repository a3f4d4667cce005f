"""A language server's WorkspaceEdit is input like any other (docs/SAFETY.md): a rename through
a hostile or buggy server writes the rename it describes, or answers a SPEC error and writes
nothing anywhere — never a file in ``.git/`` or ``.sleuth/``, never a malformed range read
some tolerant way, never text that is not UTF-8 or holds NUL.

The server is a small fake (``HOSTILE_SERVER``) configured as the user's own server: its
rename answer is the JSON in ``<state>/edit.json`` with ``ROOT`` standing for the workspace's
URI.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sleuth.api import Workbench
from sleuth.errors import SleuthError
from tests.conftest import UserServers
from tests.lsp_bridge.conftest import LSP_STDIO, write_tree

HOSTILE_SERVER = (
    LSP_STDIO
    + r"""
state = sys.argv[1]
root = None
while True:
    msg = read()
    if msg.get("method") == "exit":
        sys.exit(0)
    if "id" not in msg:
        continue
    if msg["method"] == "initialize":
        root = msg["params"]["rootUri"]
        send(msg["id"], {"capabilities": {"renameProvider": True, "positionEncoding": "utf-16"}})
    elif msg["method"] == "textDocument/rename":
        with open(os.path.join(state, "edit.json")) as fh:
            send(msg["id"], json.loads(fh.read().replace("ROOT", root)))
    else:
        send(msg["id"], None)
"""
)
SOURCE = "def total():\n    return 1\n\n\nprint(total())\n"
RENAMED = "def grand():\n    return 1\n\n\nprint(grand())\n"


def rng(line: int, start: int, end: int, end_line: int | None = None) -> dict[str, Any]:
    return {
        "start": {"line": line, "character": start},
        "end": {"line": line if end_line is None else end_line, "character": end},
    }


GOOD = [{"range": rng(0, 4, 9), "newText": "grand"}, {"range": rng(4, 6, 11), "newText": "grand"}]


def snapshot(top: Path) -> dict[str, bytes]:
    """Every regular file under ``top`` (the workspace and a folder beside it), ``.sleuth``'s
    own state left out."""
    out: dict[str, bytes] = {}
    for folder, _dirs, names in os.walk(top):
        if ".sleuth" in Path(folder).relative_to(top).parts:
            continue
        for name in names:
            path = Path(folder) / name
            if path.is_file() and not path.is_symlink():
                out[str(path.relative_to(top))] = path.read_bytes()
    return out


@pytest.fixture(autouse=True)
def hostile_server(tmp_path: Path, user_servers: UserServers) -> None:
    """``HOSTILE_SERVER`` as the user's own Python server (a workspace may not name one,
    docs/SAFETY.md#what-runs), answering from ``<tmp_path>/state/edit.json``."""
    state = tmp_path / "state"
    state.mkdir()
    script = tmp_path / "server.py"
    script.write_text(HOSTILE_SERVER)
    user_servers({"python": [sys.executable, str(script), str(state)]})


def hostile_rename(
    tmp_path: Path,
    edit: dict[str, Any],
    files: dict[str, str] | None = None,
    setup: Callable[[Path], None] | None = None,
) -> tuple[dict[str, Any] | SleuthError, dict[str, bytes], dict[str, bytes]]:
    """Rename ``total`` (its first text match) to ``grand`` through a server answering ``edit``:
    (the answer or the error, every file before, every file after)."""
    (tmp_path / "state" / "edit.json").write_text(json.dumps(edit))
    root = write_tree(tmp_path / "ws", files or {"a.py": SOURCE})
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "x.py").write_text("total = 1\n")
    if setup is not None:
        setup(root)
    before = snapshot(tmp_path)
    with Workbench(root) as wb:
        ref = wb.search("total").to_json()["matches"][0]["ref"]["match"]
        answer: dict[str, Any] | SleuthError
        try:
            answer = wb.rename(ref, "grand").to_json()
        except SleuthError as exc:
            answer = exc
    return answer, before, snapshot(tmp_path)


def refused(answer: dict[str, Any] | SleuthError, code: str) -> SleuthError:
    assert isinstance(answer, SleuthError), answer
    assert answer.code == code, answer
    return answer


def git_folder(root: Path) -> None:
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    (root / ".git" / "hooks" / "pre-commit.py").write_text("total = 1\n")


@pytest.mark.parametrize(
    "uri", ["ROOT/.git/config", "ROOT/.git/hooks/pre-commit.py", "ROOT/sub/../.git/config"]
)
def test_an_edit_of_a_git_folder_is_refused_and_nothing_is_written(
    uri: str, tmp_path: Path
) -> None:
    # seen: the server's edit of .git/config (an fsmonitor line runs a command at the next
    # git call) was written beside the rename
    evil = [{"range": rng(0, 0, 0), "newText": "[core]\n\tfsmonitor = touch pwned\n"}]
    edit = {"changes": {"ROOT/a.py": GOOD, uri: evil}}
    answer, before, after = hostile_rename(tmp_path, edit, setup=git_folder)
    refused(answer, "unsupported")
    assert after == before


def test_the_same_rename_without_the_git_edit_is_written(tmp_path: Path) -> None:
    answer, before, after = hostile_rename(tmp_path, {"changes": {"ROOT/a.py": GOOD}})
    assert isinstance(answer, dict) and answer["changed"] == ["a.py"]
    assert after == {**before, "ws/a.py": RENAMED.encode()}


def test_no_edit_writes_a_git_folder_whoever_names_it(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"a.py": "x = 1\n"})
    git_folder(root)
    (root / "cfg").symlink_to(".git/config")
    with Workbench(root) as wb:
        for path in (".git/config", "cfg"):
            with pytest.raises(SleuthError) as failed:
                wb.read(path)  # nothing to edit through (the write's own check: test_git_data)
            assert failed.value.code == "invalid_path"
    assert (root / ".git" / "config").read_text() == "[core]\n"


def pos(line: object, char: object) -> dict[str, object]:
    return {"line": line, "character": char}


MALFORMED: dict[str, list[Any]] = {
    # seen: each of these was read some tolerant way and written
    "reversed range": [{"range": {"start": pos(4, 6), "end": pos(0, 4)}, "newText": "grand"}],
    "negative character": [{"range": {"start": pos(0, -4), "end": pos(0, 9)}, "newText": "g"}],
    "string line": [{"range": {"start": pos("0", 4), "end": pos(0, 9)}, "newText": "grand"}],
    "float line": [{"range": {"start": pos(0.5, 4), "end": pos(0, 9)}, "newText": "grand"}],
    "boolean line": [{"range": {"start": pos(True, 4), "end": pos(1, 9)}, "newText": "grand"}],
    "start past the end": [*GOOD, {"range": rng(50, 0, 0), "newText": "evil()\n"}],
    "NUL in the new text": [{"range": rng(0, 4, 9), "newText": "gr\0and"}, GOOD[1]],
    "lone surrogate": [{"range": rng(0, 4, 9), "newText": "gr\ud800and"}, GOOD[1]],
    "number as new text": [{"range": rng(0, 4, 9), "newText": 12345}, GOOD[1]],
    "missing new text": [{"range": rng(0, 4, 9)}, GOOD[1]],
    "an entry that is no edit": [*GOOD, "garbage"],
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_edit_is_refused_whole(case: str, tmp_path: Path) -> None:
    answer, before, after = hostile_rename(tmp_path, {"changes": {"ROOT/a.py": MALFORMED[case]}})
    assert "malformed" in refused(answer, "unsupported").message
    assert after == before


def test_a_document_change_that_names_no_document_is_refused(tmp_path: Path) -> None:
    edit = {
        "documentChanges": [
            {"textDocument": {"uri": "ROOT/a.py", "version": None}, "edits": GOOD},
            "garbage",
        ]
    }
    answer, before, after = hostile_rename(tmp_path, edit)
    refused(answer, "unsupported")
    assert after == before


def test_an_end_past_the_last_line_is_the_end_of_the_file(tmp_path: Path) -> None:
    # a whole-file replacement (pylsp) may end anywhere past the last line
    whole = [{"range": rng(0, 0, 0, end_line=99), "newText": RENAMED}]
    answer, before, after = hostile_rename(tmp_path, {"changes": {"ROOT/a.py": whole}})
    assert isinstance(answer, dict) and answer["changed"] == ["a.py"]
    assert after == {**before, "ws/a.py": RENAMED.encode()}


@pytest.mark.parametrize("version", [999, None])
def test_an_edit_of_another_document_version_is_stale(version: int | None, tmp_path: Path) -> None:
    # seen: documentChanges naming a version sleuth never sent were applied to the bytes sent
    changes = [{"textDocument": {"uri": "ROOT/a.py", "version": version}, "edits": GOOD}]
    answer, before, after = hostile_rename(tmp_path, {"documentChanges": changes})
    if version is None:  # null: a file the server did not have open; its bytes are the disk's
        assert isinstance(answer, dict) and answer["changed"] == ["a.py"]
        assert after == {**before, "ws/a.py": RENAMED.encode()}
    else:
        assert refused(answer, "stale_reference").details == {"files": ["a.py"]}
        assert after == before
