"""References end to end (docs/references.md): every step is a separate ``sleuth`` process (or an
MCP call), so a reference only works if it survives in ``.sleuth/`` between processes.

Covered: ``:N:match`` is exactly the match's bytes; ``:N:line`` is the whole lines of a
multi-line match; ``:all:match`` spans every page; a changed file makes its single-match
references ``stale_reference`` (exit 3) while ``:all`` refreshes; ``RESULT#`` of a line window
and a sparse ``:all:line`` selection as search scopes (gaps never searched); forged, truncated
and foreign references are clean ``invalid_query``/``not_found`` errors; a deleted state folder
forgets references but not how to search; ``select`` then ``read``; unsupported scope options;
the same references used across the CLI and one MCP session.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import MakeWorkspace
from tests.e2e.conftest import ERROR_KEYS, mcp_session, run_cli

READ_KEYS = {"result", "source", "refreshed", "complete", "ranges"}
RANGE_KEYS = {"path", "line", "end_line", "start_byte", "end_byte", "text"}

Files = dict[str, str | bytes]

FOO: Files = {
    "a.txt": "alpha\nfoo one\nbeta\nfoo two\ngamma\nfoo three\n",
    "b.txt": "foo b\n",
}
PAGED: Files = {f"src/f{i}.py": f"x = {i}\nneedle_{i} = True\ny = {i}\n" for i in range(1, 8)}
MULTI: Files = {"m.py": "a = foo(\n    bar)\nx = 1\ny = foo(\n        bar, baz)\nfoo(bar)\n"}
SPARSE: Files = {"s.py": "call(\nmid\nend)\nzzz\ncall(\nend)\n"}
LINES: Files = {"l.txt": "".join(f"l{i} foo\n" for i in range(1, 8))}


def cli(root: Path, *args: str) -> tuple[int, Any, str]:
    """``sleuth ARGS --root ROOT --json`` -> (exit code, parsed stdout, stderr)."""
    proc = run_cli([*args, "--root", str(root), "--json"])
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    assert proc.stdout.count("\n") == 1, (proc.stdout, proc.stderr)
    return proc.returncode, json.loads(proc.stdout), proc.stderr


def ok(root: Path, *args: str) -> dict[str, Any]:
    code, data, err = cli(root, *args)
    assert code == 0, err
    assert isinstance(data, dict)
    return data


def fails(root: Path, code: str, exit_code: int, *args: str) -> dict[str, Any]:
    got, data, err = cli(root, *args)
    assert got == exit_code, (data, err)
    assert set(data) == {"error"} and set(data["error"]) == ERROR_KEYS
    assert data["error"]["code"] == code, data
    assert err.startswith(f"sleuth: error[{code}]: ")
    body = data["error"]
    assert isinstance(body, dict)
    return body


def read(root: Path, target: str, *args: str) -> dict[str, Any]:
    data = ok(root, "read", target, *args)
    assert set(data) >= READ_KEYS and data["source"] == target
    assert data["result"].startswith("RESULT#")
    for rng in data["ranges"]:
        assert set(rng) == RANGE_KEYS
    return data


def spans(data: dict[str, Any]) -> list[tuple[str, int, int, str]]:
    return [(r["path"], r["line"], r["end_line"], r["text"]) for r in data["ranges"]]


def file_bytes(root: Path, rel: str) -> bytes:
    return (root / rel).read_bytes()


# --- reading references in another process ---------------------------------------------------


def test_match_ref_read_in_another_process_is_exactly_the_match(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace(FOO)
    result = ok(root, "search", "foo")
    assert result["total"] == 4
    for match in result["matches"]:
        data = read(root, match["ref"]["match"])
        (rng,) = data["ranges"]
        assert (rng["path"], rng["line"], rng["end_line"]) == (
            match["path"],
            match["line"],
            match["end_line"],
        )
        assert (rng["start_byte"], rng["end_byte"]) == (match["start_byte"], match["end_byte"])
        assert rng["text"] == "foo"
        raw = file_bytes(root, rng["path"])[rng["start_byte"] : rng["end_byte"]]
        assert raw.decode() == rng["text"]
        assert data["refreshed"] is False and data["complete"] is True
    line = read(root, f"{result['result']}:2:line")
    assert spans(line) == [("a.txt", 4, 4, "foo two")]


def test_line_ref_of_multiline_regex_is_the_whole_lines(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(MULTI)
    result = ok(root, "search", r"regex:foo\(\n\s+bar")
    assert result["mode"] == "regex" and result["total"] == 2
    rid = result["result"]
    assert spans(read(root, f"{rid}:1:line")) == [("m.py", 1, 2, "a = foo(\n    bar)")]
    assert spans(read(root, f"{rid}:1:match")) == [("m.py", 1, 2, "foo(\n    bar")]
    assert spans(read(root, f"{rid}:2:line")) == [("m.py", 4, 5, "y = foo(\n        bar, baz)")]
    assert spans(read(root, f"{rid}:all:line")) == [
        ("m.py", 1, 2, "a = foo(\n    bar)"),
        ("m.py", 4, 5, "y = foo(\n        bar, baz)"),
    ]


def test_all_match_covers_every_page(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(PAGED)
    first = ok(root, "search", "needle", "--limit", "2")
    assert len(first["matches"]) == 2 and first["next_cursor"]
    rid = first["result"]
    data = read(root, f"{rid}:all:match")
    assert spans(data) == [(f"src/f{i}.py", 2, 2, "needle") for i in range(1, 8)]
    assert data["complete"] is True
    lines = read(root, f"{rid}:all:line")
    assert [r["text"] for r in lines["ranges"]] == [f"needle_{i} = True" for i in range(1, 8)]
    # A match beyond the first page is addressable on its own too.
    assert spans(read(root, f"{rid}:6:match")) == [("src/f6.py", 2, 2, "needle")]
    # The human rendering of the same read: header, paths, numbered lines.
    proc = run_cli(["read", f"{rid}:all:line", "--root", str(root)])
    assert proc.returncode == 0 and "\x1b[" not in proc.stdout
    out = proc.stdout.splitlines()
    assert out[0].startswith("RESULT#") and f" from {rid}:all:line  7 ranges  complete" in out[0]
    assert "src/f3.py" in out and "   2 | needle_3 = True" in out


# --- staleness -------------------------------------------------------------------------------


def test_changed_file_single_refs_stale_all_refs_refresh(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(FOO)
    result = ok(root, "search", "foo")
    rid = result["result"]
    assert [(m["n"], m["path"], m["line"]) for m in result["matches"]] == [
        (1, "a.txt", 2),
        (2, "a.txt", 4),
        (3, "a.txt", 6),
        (4, "b.txt", 1),
    ]

    # One byte changes, far from any match.
    (root / "a.txt").write_bytes(file_bytes(root, "a.txt").replace(b"alpha", b"alphA"))
    for n in (1, 3):
        error = fails(root, "stale_reference", 3, "read", f"{rid}:{n}:match")
        assert error["details"]["files"] == ["a.txt"]
        assert "a.txt" in error["message"] and "re-run the search" in error["message"]
    fails(root, "stale_reference", 3, "read", f"{rid}:2:line")
    assert spans(read(root, f"{rid}:4:match")) == [("b.txt", 1, 1, "foo")]
    proc = run_cli(["read", f"{rid}:1:match", "--root", str(root)])
    assert proc.returncode == 3 and proc.stdout == ""
    assert proc.stderr.startswith("sleuth: error[stale_reference]: ")

    # "foo two" moves down a line, "foo three" is deleted.
    (root / "a.txt").write_text("alphA\nfoo one\nbeta\nnew\nfoo two\ngamma\n")
    data = read(root, f"{rid}:all:match")
    assert data["refreshed"] is True
    assert [(r["path"], r["line"], r["text"]) for r in data["ranges"]] == [
        ("a.txt", 2, "foo"),
        ("a.txt", 5, "foo"),
        ("b.txt", 1, "foo"),
    ]
    raw = file_bytes(root, "a.txt")
    assert all(
        raw[r["start_byte"] : r["end_byte"]] == b"foo"
        for r in data["ranges"]
        if r["path"] == "a.txt"
    )
    lines = read(root, f"{rid}:all:line")
    assert lines["refreshed"] is True
    assert [r["text"] for r in lines["ranges"]] == ["foo one", "foo two", "foo b"]


# --- references as search scopes -------------------------------------------------------------


def test_search_inside_a_read_window_finds_only_its_lines(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(LINES)
    window = read(root, "l.txt", "--offset", "3", "--limit", "2")
    assert spans(window) == [("l.txt", 3, 4, "l3 foo\nl4 foo")]
    assert ok(root, "search", "foo")["total"] == 7
    inside = ok(root, "search", "foo", "--path", window["result"])
    assert inside["total"] == 2
    assert [(m["path"], m["line"], m["text"]) for m in inside["matches"]] == [
        ("l.txt", 3, "l3 foo"),
        ("l.txt", 4, "l4 foo"),
    ]
    assert ok(root, "search", "regex:l[0-9]", "--path", window["result"])["total"] == 2
    assert ok(root, "search", "regex:l[15-7] ", "--path", window["result"])["total"] == 0


def test_search_inside_sparse_selection_never_searches_the_gaps(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace(SPARSE)
    result = ok(root, "search", r"regex:^(call\(|end\))$")
    assert [m["line"] for m in result["matches"]] == [1, 3, 5, 6]
    scope = f"{result['result']}:all:line"
    selected = read(root, scope)
    assert [(r["line"], r["text"]) for r in selected["ranges"]] == [
        (1, "call("),
        (3, "end)"),
        (5, "call("),
        (6, "end)"),
    ]

    def total(query: str, path: str = "/") -> int:
        found = ok(root, "search", query, "--path", path)
        assert found["complete"] is True
        if path != "/":
            assert {m["line"] for m in found["matches"]} <= {1, 3, 5, 6}
        return int(found["total"])

    assert total("regex:end", scope) == 2  # positive control: lines 3 and 6
    assert total("regex:mid", scope) == 0 and total("regex:mid") == 1
    assert total("regex:zzz", scope) == 0 and total("regex:zzz") == 1
    # Lines 1 and 3 are selected, line 2 between them is not: a match across it is not one.
    spanning = r"regex:call\(\n[a-z]+\nend"
    assert total(spanning) == 1  # lines 1-3 (lines 5-6 have nothing between)
    assert total(spanning, scope) == 0
    # The same through a RESULT# of that read.
    assert total("regex:mid", selected["result"]) == 0
    assert total("regex:end", selected["result"]) == 2


# --- bad references --------------------------------------------------------------------------


@pytest.mark.parametrize("verb", ["read", "search", "select"])
def test_forged_truncated_and_unknown_references(make_workspace: MakeWorkspace, verb: str) -> None:
    root = make_workspace(FOO)
    other = make_workspace({"o.txt": "foo in another workspace\n"})
    rid = ok(root, "search", "foo")["result"]
    foreign = ok(other, "search", "foo in another")["result"]
    assert foreign != rid
    # Sanity: the foreign reference is real where it came from.
    assert spans(read(other, f"{foreign}:1:match")) == [("o.txt", 1, 1, "foo in another")]
    cases: list[tuple[str, str, int]] = [
        ("SEARCH#zz", "invalid_query", 2),
        ("RESULT#", "invalid_query", 2),
        ("SEARCH#1'; DROP TABLE results;--", "invalid_query", 2),
        ("SEARCH#", "invalid_query", 2),
        (f"{rid}:0:match", "invalid_query", 2),
        (f"{rid}:all:word", "invalid_query", 2),
        (f"{rid}:1:match;", "invalid_query", 2),
        ("SEARCH#" + "a" * 200, "invalid_query", 2),
        ("RESULT#deadbeef", "not_found", 4),
        ("SEARCH#0badf00d:all:line", "not_found", 4),
        (f"{foreign}:all:match", "not_found", 4),
        (foreign, "not_found", 4),
    ]
    single = [
        ("SEARCH#0badf00d:1:line", "not_found", 4),
        (f"{foreign}:1:match", "not_found", 4),
        (f"{rid}:999:line", "not_found", 4),
    ]
    if verb == "select":  # select wants a whole result: any single-match form is refused first
        cases += [(ref, "invalid_query", 2) for ref, _, _ in single]
    else:
        cases += single
    for ref, code, exit_code in cases:
        if verb == "read":
            args = ["read", ref]
        elif verb == "search":
            args = ["search", "foo", "--path", ref]
        else:
            args = ["select", ref, "1"]
        error = fails(root, code, exit_code, *args)
        assert error["message"]
    if verb == "select":
        fails(root, "not_found", 4, "select", rid, "1", "999")
    # Nothing was harmed: the real reference still reads, the registry still answers.
    assert spans(read(root, f"{rid}:4:match")) == [("b.txt", 1, 1, "foo")]
    assert ok(root, "search", "foo")["result"] == rid


def test_deleted_state_folder_forgets_references_not_search(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(FOO)
    old = ok(root, "search", "foo")["result"]
    window = read(root, "a.txt", "--offset", "2", "--limit", "1")["result"]
    shutil.rmtree(root / ".sleuth")
    fails(root, "not_found", 4, "read", f"{old}:1:match")
    fails(root, "not_found", 4, "read", f"{old}:all:line")
    fails(root, "not_found", 4, "read", window)
    fails(root, "not_found", 4, "search", "foo", "--path", window)
    fresh = ok(root, "search", "foo")
    assert fresh["total"] == 4
    assert spans(read(root, f"{fresh['result']}:2:line")) == [("a.txt", 4, 4, "foo two")]
    assert (root / ".sleuth").is_dir()


# --- select, and scope options ---------------------------------------------------------------


def test_select_then_read_gives_exactly_the_selected_matches(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace(FOO)
    result = ok(root, "search", "foo")
    picked = [m for m in result["matches"] if m["n"] in (1, 3)]
    selection = ok(root, "select", result["result"], "1", "3")
    assert selection["source"] == result["result"]
    rid = selection["result"]
    assert rid.startswith("RESULT#")
    again = read(root, rid)
    assert again["ranges"] == selection["ranges"]
    assert [
        (r["path"], r["line"], r["start_byte"], r["end_byte"], r["text"]) for r in again["ranges"]
    ] == [(m["path"], m["line"], m["start_byte"], m["end_byte"], "foo") for m in picked]
    # Whole lines when selecting from the :line form, and items of a RESULT# by position.
    lines = ok(root, "select", f"{result['result']}:all:line", "2", "4")
    assert [r["text"] for r in lines["ranges"]] == ["foo two", "foo b"]
    second = ok(root, "select", rid, "2")
    assert spans(second) == [("a.txt", 6, 6, "foo")]
    # Searching inside the selection sees only those two matches.
    assert ok(root, "search", "foo", "--path", rid)["total"] == 2


@pytest.mark.parametrize(
    "args",
    [
        ["search", "foo AND one"],
        ["search", "foo OR bar"],
        ["search", "foo", "--include", "*.txt"],
        ["search", "foo", "--exclude", "b.txt"],
    ],
)
def test_boolean_or_include_exclude_on_a_reference_scope_is_unsupported(
    make_workspace: MakeWorkspace, args: list[str]
) -> None:
    root = make_workspace(FOO)
    rid = ok(root, "search", "foo")["result"]
    assert ok(root, *args)["total"] >= 1  # fine without a reference scope
    for scope in (rid, f"{rid}:all:line", f"{rid}:1:match"):
        error = fails(root, "unsupported", 2, *args, "--path", scope)
        assert "reference" in error["message"]


# --- across the CLI and one MCP session ------------------------------------------------------


def _mcp_text(result: Any) -> str:
    assert len(result.content) == 1 and result.content[0].type == "text"
    return str(result.content[0].text)


def test_references_cross_between_cli_and_mcp(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({**FOO, **MULTI})
    cli_result = ok(root, "search", "foo", "--path", "a.txt")
    cli_window = read(root, "a.txt", "--offset", "4", "--limit", "1")

    async def go() -> dict[str, Any]:
        async with mcp_session(root) as session:
            tools = {t.name for t in (await session.list_tools()).tools}
            assert {"search", "read", "select"} <= tools

            # A CLI reference read through MCP: same JSON as the CLI read.
            got = await session.call_tool("read", {"target": f"{cli_result['result']}:2:match"})
            assert got.is_error is False
            assert got.structured_content == read(root, f"{cli_result['result']}:2:match")
            lines = _mcp_text(got).splitlines()
            assert lines[0].startswith(got.structured_content["result"] + " from ")
            assert lines[1:] == ["a.txt", "4| foo"]
            window = await session.call_tool("read", {"target": cli_window["result"]})
            assert window.structured_content["ranges"] == cli_window["ranges"]

            # A window read through MCP.
            head = await session.call_tool("read", {"target": "m.py", "offset": 1, "limit": 2})
            assert _mcp_text(head).splitlines()[1:] == ["m.py", "1| a = foo(", "2|     bar)"]

            # An MCP search whose references the CLI reads afterwards.
            found = await session.call_tool("search", {"query": r"regex:foo\(\n\s+bar"})
            assert found.is_error is False
            mcp_rid = found.structured_content["result"]
            picked = await session.call_tool("select", {"ref": f"{mcp_rid}:all:line", "items": [2]})
            assert picked.is_error is False
            assert _mcp_text(picked).splitlines()[1:] == [
                "m.py",
                "4| y = foo(",
                "5|         bar, baz)",
            ]

            # Bad references are tool errors with error codes (docs/errors.md), and the server
            # carries on.
            for arguments, code in [
                ({"target": "SEARCH#zz"}, "invalid_query"),
                ({"target": "RESULT#deadbeef"}, "not_found"),
                ({"target": f"{mcp_rid}:9:line"}, "not_found"),
            ]:
                bad = await session.call_tool("read", arguments)
                assert bad.is_error is True
                assert bad.structured_content["error"]["code"] == code
                assert _mcp_text(bad).startswith(f"error[{code}]: ")
            bad = await session.call_tool("select", {"ref": mcp_rid, "items": [7]})
            assert bad.is_error is True and bad.structured_content["error"]["code"] == "not_found"

            # A change seen by the running server: the single reference goes stale.
            (root / "b.txt").write_text("foo B\n")
            stale = await session.call_tool("read", {"target": f"{cli_result['result']}:1:match"})
            assert stale.is_error is False  # a.txt did not change
            other = ok(root, "search", "foo", "--path", "b.txt")["result"]
            (root / "b.txt").write_text("foo C\n")
            stale = await session.call_tool("read", {"target": f"{other}:1:line"})
            assert stale.is_error is True
            assert stale.structured_content["error"]["code"] == "stale_reference"
            assert stale.structured_content["error"]["details"]["files"] == ["b.txt"]
            return {"search": found.structured_content, "select": picked.structured_content}

    mcp = anyio.run(go)
    rid = mcp["search"]["result"]
    assert spans(read(root, f"{rid}:1:match")) == [("m.py", 1, 2, "foo(\n    bar")]
    assert read(root, mcp["select"]["result"])["ranges"] == mcp["select"]["ranges"]
    assert spans(read(root, f"{rid}:all:line"))[1] == ("m.py", 4, 5, "y = foo(\n        bar, baz)")


def test_cli_never_prints_a_traceback_for_odd_targets(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(FOO)
    for target, code in [
        ("missing.txt", "not_found"),
        ("/etc/passwd", "invalid_path"),
        ("../x", "invalid_path"),
        (".", "invalid_path"),
    ]:
        proc: subprocess.CompletedProcess[str] = run_cli(["read", target, "--root", str(root)])
        assert proc.returncode in (2, 4)
        assert proc.stderr.startswith(f"sleuth: error[{code}]: "), proc.stderr
        assert "Traceback" not in proc.stderr
