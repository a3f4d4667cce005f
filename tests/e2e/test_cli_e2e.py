"""The real ``sleuth`` CLI as a subprocess on temporary workspaces (docs/faces.md#command-line)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import (
    ERROR_KEYS,
    MATCH_KEYS,
    SEARCH_KEYS,
    run_cli,
    run_cli_on_tty,
)

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def search_json(root: Path, *args: str) -> dict[str, object]:
    proc = run_cli(["search", *args, "--root", str(root), "--json"])
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert isinstance(data, dict)
    return data


def test_json_has_every_spec_key(sample_root: Path) -> None:
    data = search_json(sample_root, "get_user")
    assert set(data) >= SEARCH_KEYS
    assert data["query"] == "get_user" and data["mode"] == "literal"
    assert re.fullmatch(r"SEARCH#\w+", str(data["result"]))
    matches = data["matches"]
    assert isinstance(matches, list) and matches
    for match in matches:
        assert set(match) >= MATCH_KEYS
    first = matches[0]
    assert (first["path"], first["line"], first["column"]) == ("docs/notes.md", 1, 6)
    app = next(m for m in matches if m["path"] == "src/app.py")
    assert (app["line"], app["column"], app["text"]) == (2, 12, "    user = get_user(uid)")
    assert app["ref"]["match"] == f"{data['result']}:{app['n']}:match"
    assert data["skipped"]["binary"] == 1


def test_json_is_one_line_of_stdout(sample_root: Path) -> None:
    proc = run_cli(["search", "get_user", "--root", str(sample_root), "--json"])
    assert proc.stdout.count("\n") == 1 and proc.stderr == ""


def test_zero_hits_exit_zero(sample_root: Path) -> None:
    proc = run_cli(["search", "zq_nothing_here_xq", "--root", str(sample_root), "--json"])
    assert proc.returncode == 0
    data = json.loads(proc.stdout)
    assert data["matches"] == [] and data["total"] == 0


@pytest.mark.parametrize(
    ("args", "code", "exit_code"),
    [
        (["search", ""], "invalid_query", 2),
        (["search", "regex:foo("], "invalid_query", 2),
        (["search", "get_user", "--path", "/etc"], "invalid_path", 2),
        (["search", "get_user", "--path", "../outside"], "invalid_path", 2),
        (["search", "get_user", "--path", "missing.py"], "not_found", 4),
        (["search", "get_user", "--cursor", "garbage"], "invalid_query", 2),
        (["search", "get_user", "--limit", "lots"], "invalid_query", 2),
        (["search"], "invalid_query", 2),
    ],
)
def test_error_exit_codes_and_json_error_object(
    sample_root: Path, args: list[str], code: str, exit_code: int
) -> None:
    proc = run_cli([*args, "--root", str(sample_root), "--json"])
    assert proc.returncode == exit_code, proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert set(error) == ERROR_KEYS and error["code"] == code
    assert f"error[{code}]" in proc.stderr and "Traceback" not in proc.stderr


def test_error_without_json_goes_to_stderr_with_code(sample_root: Path) -> None:
    proc = run_cli(["search", "regex:foo(", "--root", str(sample_root)])
    assert proc.returncode == 2 and proc.stdout == ""
    # The first line carries code and message; a caret diagram may follow for people.
    assert proc.stderr.startswith("sleuth: error[invalid_query]: ")
    assert "Traceback" not in proc.stderr


def test_error_with_json_has_exactly_one_stderr_line(sample_root: Path) -> None:
    proc = run_cli(["search", "regex:foo(", "--root", str(sample_root), "--json"])
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    message = json.loads(proc.stdout)["error"]["message"]
    assert lines == ["sleuth: error[invalid_query]: " + message.splitlines()[0]]


def test_missing_root_is_an_error_not_a_crash(tmp_path: Path) -> None:
    proc = run_cli(["search", "x", "--root", str(tmp_path / "nope"), "--json"])
    assert proc.returncode in (2, 4), proc.stderr
    assert json.loads(proc.stdout)["error"]["code"] in ("invalid_path", "not_found")


def test_human_output_names_paths_lines_and_result(sample_root: Path) -> None:
    rid = search_json(sample_root, "get_user")["result"]
    proc = run_cli(["search", "get_user", "--root", str(sample_root)])
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"{rid}  literal  ")
    assert "complete" in lines[0]
    assert "src/app.py" in lines
    assert any(re.fullmatch(r"#\d+ +2:12:     user = get_user\(uid\)", line) for line in lines)
    assert f"all:  {rid}:all:line  {rid}:all:match" in lines
    assert "skipped files: 1 binary" in lines
    assert not ANSI.search(proc.stdout)


def test_human_paging_hint_and_cursor_round_trip(sample_root: Path) -> None:
    proc = run_cli(["search", "get_user", "--limit", "1", "--root", str(sample_root)])
    hint = [line for line in proc.stdout.splitlines() if line.startswith("more: --cursor ")]
    assert len(hint) == 1
    cursor = hint[0].removeprefix("more: --cursor ")
    page = search_json(sample_root, "get_user", "--limit", "1", "--cursor", cursor)
    assert [m["n"] for m in page["matches"]] == [2]


def test_human_zero_hits_says_so(sample_root: Path) -> None:
    proc = run_cli(["search", "zq_nothing_here_xq", "--root", str(sample_root)])
    assert proc.returncode == 0
    assert "no matches" in proc.stdout


def test_colour_only_on_a_terminal(sample_root: Path) -> None:
    code, out = run_cli_on_tty(["search", "get_user", "--root", str(sample_root)])
    assert code == 0 and ANSI.search(out)
    assert "src/app.py" in ANSI.sub("", out)


def test_no_color_is_honoured_on_a_terminal(sample_root: Path) -> None:
    code, out = run_cli_on_tty(
        ["search", "get_user", "--root", str(sample_root)], env={"NO_COLOR": "1"}
    )
    assert code == 0 and "src/app.py" in out
    assert not ANSI.search(out)


def test_console_script_and_root_default_to_cwd(sample_root: Path) -> None:
    script = Path(sys.executable).with_name("sleuth")
    proc = subprocess.run(
        [str(script), "search", "list_users", "--json"],
        cwd=sample_root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    matches = json.loads(proc.stdout)["matches"]
    assert [(m["path"], m["line"]) for m in matches] == [("src/users.py", 5)]


def test_ignore_case_flag(sample_root: Path) -> None:
    exact = search_json(sample_root, "GET_USER")
    folded = search_json(sample_root, "GET_USER", "-i")
    assert exact["total"] != folded["total"]
    assert folded["total"] == search_json(sample_root, "get_user")["total"]


def test_human_zero_hits_lists_possible_names(sample_root: Path) -> None:
    data = search_json(sample_root, "getUser")
    groups = data["possible_names"]
    assert isinstance(groups, list) and groups
    proc = run_cli(["search", "getUser", "--root", str(sample_root)])
    assert proc.returncode == 0
    expected = ", ".join(f"{g['name']} ({g['count']})" for g in groups)
    assert f"no matches; did you mean: {expected}" in proc.stdout.splitlines()


def _processes_mentioning(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if text.encode() in cmdline:
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to list processes")
def test_worker_processes_end_with_the_call_and_the_page_equals_the_api(tmp_path: Path) -> None:
    """Enough files that ast: starts worker processes at once (``Tuning.ast_parallel_at``);
    the console script kills the ones still parsing read-ahead when it leaves, and its listing
    (prefetched in a forked child) gives the same page as the Python face's own walk."""
    from sleuth.api import Workbench
    from sleuth.tuning import Tuning

    root = tmp_path / "many-files-tree"
    for i in range(Tuning().ast_parallel_at + 40):
        (root / f"pkg{i % 7}").mkdir(parents=True, exist_ok=True)
        body = "".join(f"def f{i}_{j}(a, b):\n    return g(a, {j})\n" for j in range(300))
        (root / f"pkg{i % 7}" / f"m{i:03}.py").write_text(body)
    (root / "pkg0" / "skip.py").write_text("def skipped(): return g(1, 2)\n")
    args = [
        "search",
        "ast:g($A, $B)",
        "--root",
        str(root),
        "--json",
        "--limit",
        "7",
        "--exclude",
        "skip.py",
        "--path",
        "pkg0",
        "--no-daemon",  # the console script's own workers (a daemon keeps its pool)
    ]
    proc = run_cli(args)
    assert proc.returncode == 0, proc.stderr
    page = json.loads(proc.stdout)
    with Workbench(root, build_index=False, servers=False) as wb:
        api = wb.search("ast:g($A, $B)", path="pkg0", exclude=["skip.py"], limit=7).to_json()
    assert [(m["path"], m["line"]) for m in page["matches"]] == [
        (m["path"], m["line"]) for m in api["matches"]
    ]
    assert len(page["matches"]) == 7 and page["matches"][0]["path"] == "pkg0/m000.py"
    assert _processes_mentioning(str(root)) == []  # no worker outlived the call
