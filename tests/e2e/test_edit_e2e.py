"""Edits end to end through the real CLI (and one MCP session), docs/edits.md.

Every step is its own ``sleuth`` process, so references and undo information must survive in
``.sleuth/`` between processes. The scenario is the capture-scoped refactor an agent does:
``search 'ast:def $F($$$A): $$$B'``, ``replace`` the ``F`` capture's ``RESULT#``, search the
old name again and ``replace SEARCH#H:all:match`` over several files — every file's bytes are
compared with the exact expected text. A stale reference is exit 3 with the error JSON
(docs/errors.md) naming the files and nothing written; ``undo`` restores the bytes; the human output
is a header, a unified diff (coloured only on a terminal) and the undo hint; text comes from
``--text``, ``--text-file`` or stdin.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio

from sleuth import Workbench
from sleuth.edit.diff import MAX_DIFF_LINES
from tests.conftest import MakeWorkspace
from tests.e2e.conftest import ERROR_KEYS, mcp_session, run_cli, run_cli_on_tty

ANSI = re.compile(r"\x1b\[[0-9;]*m")
GREEN, RED = "\x1b[32m", "\x1b[31m"
EDIT_KEYS = {
    "result",
    "source",
    "refreshed",
    "complete",
    "ranges",
    "changed",
    "diff",
    "diff_truncated",
}

PROJECT: dict[str, str | bytes] = {
    "app/users.py": "def fetch_user(uid):\n    return db.get(uid)\n\n\n"
    "def fetch_users(ids):\n    return [fetch_user(i) for i in ids]\n",
    "app/views.py": "from app.users import fetch_user\n\n\ndef show(uid):\n"
    "    user = fetch_user(uid)\n    return render(user)\n",
    "app/admin.py": "import app.users\r\n\r\nADMIN = app.users.fetch_user(0)\r\n",
    "README.md": "Call `fetch_user(uid)` to load one user.",
}


def sleuth(root: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    """``sleuth ARGS --root ROOT`` (stdin given, or empty), stdout/stderr captured."""
    if stdin is None:
        proc = run_cli([*args, "--root", str(root)])
    else:
        proc = subprocess.run(
            [sys.executable, "-m", "sleuth", *args, "--root", str(root)],
            input=stdin,
            capture_output=True,
            timeout=120,
        )
        proc = subprocess.CompletedProcess(
            proc.args, proc.returncode, proc.stdout.decode(), proc.stderr.decode()
        )
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


def ok(root: Path, *args: str, stdin: bytes | None = None) -> dict[str, Any]:
    proc = sleuth(root, *args, "--json", stdin=stdin)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("\n") == 1
    data = json.loads(proc.stdout)
    assert isinstance(data, dict)
    return data


def fails(root: Path, code: str, exit_code: int, *args: str) -> dict[str, Any]:
    proc = sleuth(root, *args, "--json")
    assert proc.returncode == exit_code, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)
    assert set(data) == {"error"} and set(data["error"]) == ERROR_KEYS
    assert data["error"]["code"] == code
    assert proc.stderr.startswith(f"sleuth: error[{code}]: ")
    body = data["error"]
    assert isinstance(body, dict)
    return body


def edited(root: Path, *args: str, stdin: bytes | None = None) -> dict[str, Any]:
    data = ok(root, *args, stdin=stdin)
    assert set(data) == EDIT_KEYS and data["result"].startswith("RESULT#")
    return data


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".sleuth" not in p.relative_to(root).parts
    }


def test_capture_scoped_refactor_through_the_cli(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(PROJECT)
    original = tree(root)

    # 1. rename the definition through the F capture of a structural match
    functions = ok(root, "search", "ast:def $F($$$A): $$$B", "--path", "app/users.py")
    capture = functions["matches"][0]["captures"]["F"]
    assert capture["text"] == "fetch_user"
    renamed = edited(root, "replace", capture["ref"], "--text", "load_user")
    assert renamed["changed"] == ["app/users.py"]
    assert [(r["path"], r["line"], r["text"]) for r in renamed["ranges"]] == [
        ("app/users.py", 1, "load_user")
    ]
    assert (root / "app/users.py").read_bytes() == (
        b"def load_user(uid):\n    return db.get(uid)\n\n\n"
        b"def fetch_users(ids):\n    return [fetch_user(i) for i in ids]\n"
    )

    # 2. every remaining use, over several files, through one :all:match
    uses = ok(root, "search", "regex:\\bfetch_user\\b", "--include", "*.py")
    assert uses["total"] == 4 and uses["complete"] is True
    everywhere = edited(root, "replace", uses["all"]["match"], "--text", "load_user")
    assert everywhere["changed"] == ["app/admin.py", "app/users.py", "app/views.py"]
    assert [r["text"] for r in everywhere["ranges"]] == ["load_user"] * 4
    assert tree(root) == {
        **original,
        "app/users.py": b"def load_user(uid):\n    return db.get(uid)\n\n\n"
        b"def fetch_users(ids):\n    return [load_user(i) for i in ids]\n",
        "app/views.py": b"from app.users import load_user\n\n\ndef show(uid):\n"
        b"    user = load_user(uid)\n    return render(user)\n",
        "app/admin.py": b"import app.users\r\n\r\nADMIN = app.users.load_user(0)\r\n",
    }
    assert "-    user = fetch_user(uid)\n+    user = load_user(uid)\n" in everywhere["diff"]

    # 3. the edit's RESULT# is a reference in later processes: read it, search inside it
    assert [r["text"] for r in ok(root, "read", everywhere["result"])["ranges"]] == [
        "load_user"
    ] * 4
    inside = ok(root, "search", "user", "--path", everywhere["result"])
    assert inside["total"] == 4

    # 4. undo the second step, then the first: the original bytes are back
    edited(root, "undo", everywhere["result"])
    assert (root / "app/views.py").read_bytes() == original["app/views.py"]
    assert (root / "app/users.py").read_bytes().startswith(b"def load_user(uid):")
    edited(root, "undo", renamed["result"])
    assert tree(root) == original
    fails(root, "not_found", 4, "undo", renamed["result"])


def test_stale_references_are_exit_3_with_the_files_and_write_nothing(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace(PROJECT)
    uses = ok(root, "search", "fetch_user(", "--include", "*.py")
    everything = ok(root, "select", uses["result"], *(str(m["n"]) for m in uses["matches"]))
    (root / "app/views.py").write_bytes((root / "app/views.py").read_bytes() + b"\n")
    before = tree(root)
    body = fails(root, "stale_reference", 3, "replace", everything["result"], "--text", "x(")
    assert body["details"]["files"] == ["app/views.py"]
    views_match = next(m for m in uses["matches"] if m["path"] == "app/views.py")
    body = fails(root, "stale_reference", 3, "delete", views_match["ref"]["line"])
    assert body["details"]["files"] == ["app/views.py"]
    assert tree(root) == before
    # without --json: the one-line message on stderr, nothing on stdout, exit 3
    proc = sleuth(root, "replace", views_match["ref"]["match"], "--text", "x(")
    assert proc.returncode == 3 and proc.stdout == ""
    assert proc.stderr.startswith("sleuth: error[stale_reference]: ")
    assert "app/views.py" in proc.stderr
    assert tree(root) == before


def test_human_output_is_header_diff_and_undo_hint(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(PROJECT)
    uses = ok(root, "search", "fetch_user(uid)", "--include", "*.py")
    proc = sleuth(root, "replace", uses["all"]["match"], "--text", "load_user(uid)")
    assert proc.returncode == 0 and not ANSI.search(proc.stdout)
    lines = proc.stdout.splitlines()
    header = re.fullmatch(r"(RESULT#[0-9a-f]+) replace: 2 files changed", lines[0])
    assert header, lines[0]
    assert lines[1:4] == ["--- a/app/users.py", "+++ b/app/users.py", "@@ -1,2 +1,2 @@"]
    assert "-def fetch_user(uid):" in lines and "+def load_user(uid):" in lines
    assert "-    user = fetch_user(uid)" in lines and "+    user = load_user(uid)" in lines
    assert lines[-1] == f"undo: sleuth undo {header[1]}"
    # the hint works as printed
    undo = sleuth(root, *lines[-1].removeprefix("undo: sleuth ").split())
    assert undo.returncode == 0
    assert undo.stdout.splitlines()[0].endswith(" undo: 2 files changed")
    assert (root / "app/users.py").read_bytes() == PROJECT["app/users.py"].encode()


def test_diff_is_coloured_on_a_terminal_only(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(PROJECT)
    target = ok(root, "search", "return render(user)")["matches"][0]["ref"]["match"]
    code, out = run_cli_on_tty(
        ["replace", target, "--text", "return html(user)", "--root", str(root)]
    )
    assert code == 0
    added = next(line for line in out.splitlines() if "+    return html(user)" in line)
    removed = next(line for line in out.splitlines() if "-    return render(user)" in line)
    assert GREEN in added and RED not in added
    assert RED in removed and GREEN not in removed
    assert b"return html(user)" in (root / "app/views.py").read_bytes()


def test_text_from_stdin_and_from_a_file(make_workspace: MakeWorkspace, tmp_path: Path) -> None:
    root = make_workspace(PROJECT)
    body = ok(root, "search", "return db.get(uid)")["matches"][0]["ref"]["line"]
    # stdin is used byte for byte: two lines, the file's line endings apply
    edited(root, "replace", body, stdin=b"    row = db.get(uid)\n    return row")
    assert (
        (root / "app/users.py")
        .read_bytes()
        .startswith(b"def fetch_user(uid):\n    row = db.get(uid)\n    return row\n\n\n")
    )
    # CRLF file: the inserted line takes CRLF
    admin = ok(root, "search", "ADMIN")["matches"][0]["ref"]["line"]
    edited(root, "insert", admin, "--after", stdin=b"GUEST = None")
    assert (root / "app/admin.py").read_bytes() == (
        b"import app.users\r\n\r\nADMIN = app.users.fetch_user(0)\r\nGUEST = None\r\n"
    )
    source = tmp_path / "doc.txt"
    source.write_bytes("Call `load_user(uid)` (caf\u00e9).".encode())
    readme = ok(root, "search", "Call", "--path", "README.md")["matches"][0]["ref"]["line"]
    edited(root, "replace", readme, "--text-file", str(source))
    assert (root / "README.md").read_bytes() == "Call `load_user(uid)` (caf\u00e9).".encode()
    before = tree(root)
    proc = sleuth(root, "replace", readme, "--json", stdin=b"\xff\xfe")
    assert proc.returncode == 2 and json.loads(proc.stdout)["error"]["code"] == "invalid_query"
    assert tree(root) == before


def test_insert_delete_copy_move_through_the_cli(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"a.py": "import os\nimport sys\n\nx = 1\n", "b.py": "y = 2\n"})
    line = ok(root, "search", "import sys")["matches"][0]["ref"]["line"]
    edited(root, "insert", line, "--text", "import re\n", "--before")
    assert (root / "a.py").read_bytes() == b"import os\nimport re\nimport sys\n\nx = 1\n"
    gone = edited(root, "delete", ok(root, "search", "import os")["matches"][0]["ref"]["line"])
    assert gone["ranges"][0]["text"] == "" and gone["ranges"][0]["start_byte"] == 0
    assert (root / "a.py").read_bytes() == b"import re\nimport sys\n\nx = 1\n"
    copied = edited(
        root, "copy", ok(root, "search", "x = 1")["matches"][0]["ref"]["line"], "--to", "b.py:1"
    )
    assert copied["changed"] == ["b.py"] and (root / "b.py").read_bytes() == b"x = 1\ny = 2\n"
    moved = edited(
        root, "move", ok(root, "search", "import re")["matches"][0]["ref"]["line"], "--to", "b.py:2"
    )
    assert moved["changed"] == ["a.py", "b.py"]
    assert (root / "a.py").read_bytes() == b"import sys\n\nx = 1\n"
    assert (root / "b.py").read_bytes() == b"x = 1\nimport re\ny = 2\n"
    fails(root, "invalid_path", 2, "copy", moved["result"], "--to", "../outside.py:1")
    fails(root, "invalid_query", 2, "copy", moved["result"])  # --to is required
    assert (root / "b.py").read_bytes() == b"x = 1\nimport re\ny = 2\n"


def test_mcp_edit_tools_answer_the_cli_json(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(PROJECT)
    uses = ok(root, "search", "fetch_user(", "--include", "*.py")

    async def go() -> tuple[dict[str, Any], str, dict[str, Any], Any]:
        async with mcp_session(root) as session:
            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert {"replace", "insert", "delete", "copy", "move", "undo"} <= set(tools)
            assert tools["replace"].annotations.read_only_hint is False
            result = await session.call_tool(
                "replace", {"ref": uses["all"]["match"], "text": "load_user("}
            )
            assert result.is_error is False
            text = result.content[0].text
            undone = await session.call_tool(
                "undo", {"result": result.structured_content["result"]}
            )
            assert undone.is_error is False
            again = await session.call_tool("undo", {"result": result.structured_content["result"]})
            return result.structured_content, text, undone.structured_content, again

    data, text, undone, again = anyio.run(go)
    assert set(data) == EDIT_KEYS and len(data["ranges"]) == 4
    assert text.splitlines()[0] == f"{data['result']} replace: 3 files changed"
    # the CRLF file's diff lines are shown without their carriage returns
    assert text.splitlines()[1:] == data["diff"].replace("\r\n", "\n").splitlines()
    assert undone["changed"] == data["changed"] == ["app/admin.py", "app/users.py", "app/views.py"]
    assert again.is_error is True and again.structured_content["error"]["code"] == "not_found"
    assert tree(root) == {k: v.encode() if isinstance(v, str) else v for k, v in PROJECT.items()}
    # the MCP edit's RESULT# is readable from the CLI, as every reference is
    fails(root, "stale_reference", 3, "read", data["result"])


# --- whole lines through :line, bounded answers (issue 20) ----------------------------------

LINES = {
    "a.py": "a = 1\nb = 2\nc = 3\n",
    "crlf.py": "a = 1\r\nb = 2\r\n",
    "tail.py": "a = 1\nb = 2",
}
INSERTED = {
    "a.py": b"a = 1\nb = 2\nnew = 0\nc = 3\n",
    "crlf.py": b"a = 1\r\nb = 2\r\nnew = 0\r\n",
    "tail.py": b"a = 1\nb = 2\nnew = 0",
}
"""``insert --after`` of ``new = 0`` through the ``:line`` of ``b = 2``: a new line after it, in
the file's line endings; after a last line without a line break the file still ends without."""


def _line_ref(ref_of: dict[str, Any]) -> str:
    return str(ref_of["matches"][0]["ref"]["line"])


def test_insert_after_a_line_adds_a_new_line_through_the_cli(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(dict(LINES))
    for path, expected in INSERTED.items():
        line = _line_ref(ok(root, "search", "b = 2", "--path", path))
        answer = edited(root, "insert", line, "--after", "--text", "new = 0")
        assert (root / path).read_bytes() == expected
        assert [(r["path"], r["text"]) for r in answer["ranges"]] == [(path, "new = 0")]
        assert "+new = 0" in answer["diff"].replace("\r", "").splitlines()
        # the RESULT# selects the new line: deleting it gives the file back
        edited(root, "delete", answer["result"])
        assert (root / path).read_bytes() == LINES[path].encode()
    # for people: the diff shows one added line and no changed one
    line = _line_ref(ok(root, "search", "b = 2", "--path", "a.py"))
    proc = sleuth(root, "insert", line, "--after", "--text", "new = 0")
    assert proc.returncode == 0
    changed = [x for x in proc.stdout.splitlines()[3:] if x[:1] in "+-"]
    assert changed == ["+new = 0"]


def test_insert_through_a_line_is_the_same_in_the_api_and_over_mcp(
    make_workspace: MakeWorkspace,
) -> None:
    api_root, mcp_root = make_workspace(dict(LINES)), make_workspace(dict(LINES))
    api: dict[str, Any] = {}
    with Workbench(api_root) as wb:
        for path in LINES:
            line = _line_ref(wb.search("b = 2", path=path).to_json())
            api[path] = wb.insert(line, "new = 0", where="after").to_json()
    assert {p: (api_root / p).read_bytes() for p in LINES} == INSERTED
    refs = {path: _line_ref(ok(mcp_root, "search", "b = 2", "--path", path)) for path in LINES}

    async def go() -> dict[str, tuple[dict[str, Any], str]]:
        out = {}
        async with mcp_session(mcp_root) as session:
            for path, line in refs.items():
                result = await session.call_tool(
                    "insert", {"ref": line, "text": "new = 0", "where": "after"}
                )
                assert result.is_error is False
                out[path] = (result.structured_content, result.content[0].text)
        return out

    over_mcp = anyio.run(go)
    assert {p: (mcp_root / p).read_bytes() for p in LINES} == INSERTED
    for path, (data, text) in over_mcp.items():
        assert set(data) == EDIT_KEYS
        strip = ("result", "source")
        assert {k: v for k, v in data.items() if k not in strip} == {
            k: v for k, v in api[path].items() if k not in strip
        }
        assert text.splitlines()[0] == f"{data['result']} insert: 1 file changed"
        assert "+new = 0" in text.splitlines()


def test_a_huge_edit_answers_a_bounded_diff_in_every_face(make_workspace: MakeWorkspace) -> None:
    big = "".join(f"row_{i} = OLD\n" for i in range(5000))
    root = make_workspace({"big.py": big})
    uses = ok(root, "search", "OLD")
    answer = edited(root, "replace", uses["all"]["match"], "--text", "NEW")
    assert answer["diff_truncated"] is True and len(answer["ranges"]) == 5000
    lines = answer["diff"].splitlines()
    assert len(lines) <= MAX_DIFF_LINES + 1
    assert re.fullmatch(
        rf"\u2026 \d+ more lines \(diff truncated; read {re.escape(answer['result'])} to see "
        r"the text\)",
        lines[-1],
    )
    # the CLI for people ends with the marker and the undo hint
    proc = sleuth(root, "undo", answer["result"])
    assert proc.returncode == 0 and (root / "big.py").read_bytes() == big.encode()
    out = proc.stdout.splitlines()
    assert "(diff truncated; read RESULT#" in out[-1] and len(out) <= MAX_DIFF_LINES + 2
    uses = ok(root, "search", "OLD")

    async def go() -> tuple[dict[str, Any], str]:
        async with mcp_session(root) as session:
            result = await session.call_tool("replace", {"ref": uses["all"]["match"], "text": "X"})
            assert result.is_error is False
            return result.structured_content, result.content[0].text

    data, text = anyio.run(go)
    assert data["diff_truncated"] is True
    assert text.splitlines()[-1] == data["diff"].splitlines()[-1]
    assert len(text.encode()) < 40 * 1024 < len(big)
