"""``find`` through the real faces: the CLI as a subprocess and the MCP server through the
official client (docs/faces.md#find)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio

from tests.e2e.conftest import MATCH_KEYS, mcp_session, run_cli

FIND_KEYS = {
    "query",
    "mode",
    "grep_mode",
    "needle",
    "case_sensitive",
    "result",
    "complete",
    "incomplete_reason",
    "total_matched",
    "matches",
    "all",
    "offset",
    "max_results",
    "skipped",
    "note",
    "warning",
    "diagnostics",
}
# SAMPLE's get_user occurrences outside blob.bin (binary, never searched)
GET_USER = [
    ("docs/notes.md", 1, 6),
    ("src/app.py", 2, 12),
    ("src/users.py", 1, 5),
    ("src/users.py", 6, 13),
    ("src/users.py", 6, 26),
]


def _where(data: dict[str, Any]) -> list[tuple[str, int, int]]:
    return [(m["path"], m["line"], m["column"]) for m in data["matches"]]


def _json(root: Path, *args: str) -> dict[str, Any]:
    proc = run_cli(["--root", str(root), "--json", "find", *args])
    assert proc.returncode == 0, proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def test_cli_grep_pages_by_file_with_search_references(sample_root: Path) -> None:
    first = _json(sample_root, "get_user", "--mode", "grep", "--max-results", "2")
    assert set(first) == FIND_KEYS | {"next_file_offset", "files_with_matches"}
    assert all(set(m) >= MATCH_KEYS for m in first["matches"])
    assert _where(first) == GET_USER[:2] and first["next_file_offset"] == 3
    rest = _json(sample_root, "get_user", "--mode", "grep", "--offset", "3", "-C", "1")
    assert _where(rest) == GET_USER[2:] and rest["next_file_offset"] is None
    assert rest["matches"][0]["context"]["after"] == ["    return {'id': uid}"]
    searched = json.loads(
        run_cli(["--root", str(sample_root), "--json", "search", '"get_user"']).stdout
    )
    assert _where(first) + _where(rest) == [
        (m["path"], m["line"], m["column"]) for m in searched["matches"]
    ]
    ref = rest["matches"][0]["ref"]["line"]
    read = json.loads(run_cli(["--root", str(sample_root), "--json", "read", ref]).stdout)
    assert read["ranges"][0]["text"] == "def get_user(uid):"


def test_cli_files_mode_human_output_and_strict_options(sample_root: Path) -> None:
    proc = run_cli(["--root", str(sample_root), "find", "users *.py"])
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("SEARCH#") and "files  1 match  showing #1-#1" in lines[0]
    assert lines[1].startswith("#1  src/users.py  score ")
    data = _json(sample_root, "", "--ext", "md")
    assert [m["path"] for m in data["matches"]] == ["docs/notes.md"] and data["next_offset"] is None
    empty = _json(sample_root, "zzzq", "--path", "src")
    assert empty["diagnostics"]["filtered_file_count"] == 2
    assert empty["diagnostics"]["constraints"]["path"] == "src"
    bad = run_cli(["--root", str(sample_root), "find", "x", "--bogus"])
    assert bad.returncode == 2 and "--bogus" in bad.stderr  # a shell's typo is a usage error
    look = run_cli(
        ["--root", str(sample_root), "find", "(?=a)", "--mode", "grep", "--grep-mode", "regex"]
    )
    assert look.returncode == 2 and "invalid_query" in look.stderr


def test_mcp_find_tool_warns_on_unknown_arguments_and_takes_aliases(sample_root: Path) -> None:
    async def go() -> None:
        async with mcp_session(sample_root) as session:
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            schema = tools["find"].input_schema
            assert schema["required"] == ["query"]
            assert set(schema["properties"]) == {
                "query",
                "mode",
                "grep_mode",
                "case_sensitive",
                "context_lines",
                "max_results",
                "offset",
                "path",
                "ext",
            }
            assert "additionalProperties" not in schema  # unknown names are a warning
            result = await session.call_tool(
                "find",
                {"pattern": "get_user", "mode": "grep", "maxResults": 3, "glob": "*.py"},
            )
            assert result.is_error is False
            data = result.structured_content
            assert data["query"] == "get_user" and data["max_results"] == 3
            assert data["warning"].startswith("Unrecognized parameter(s): glob (ignored); valid: ")
            assert _where(data) == GET_USER[:2] and data["next_file_offset"] == 3
            text = str(result.content[0].text).splitlines()
            assert text[0].startswith(data["result"]) and "next_file_offset: 3" in text[0]
            assert text[1] == "docs/notes.md:1:6 #1  Call get_user with an id."
            assert text[-1] == "warning: " + data["warning"]
            read = await session.call_tool("read", {"target": data["matches"][1]["ref"]["match"]})
            assert read.structured_content["ranges"][0]["text"] == "get_user"

            fuzzy = await session.call_tool(
                "find", {"query": "get_usr", "mode": "grep", "grep_mode": "fuzzy"}
            )
            assert sorted(_where(fuzzy.structured_content)) == GET_USER[:4]  # one per line

            files = await session.call_tool("find", {"query": "app"})
            assert [m["path"] for m in files.structured_content["matches"]] == ["src/app.py"]
            assert files.structured_content["warning"] is None

    anyio.run(go)


def test_mcp_find_errors_and_diagnostics(sample_root: Path) -> None:
    async def go() -> None:
        async with mcp_session(sample_root) as session:
            look = await session.call_tool(
                "find", {"query": "(?<=a)b", "mode": "grep", "grep_mode": "regex"}
            )
            assert look.is_error is True
            assert look.structured_content["error"]["code"] == "invalid_query"
            wrong = await session.call_tool("find", {"query": "x", "max_results": "many"})
            assert wrong.is_error is True and "max_results" in str(wrong.content[0].text)
            fallback = await session.call_tool(
                "find", {"query": "get_user(", "mode": "grep", "grep_mode": "regex"}
            )
            data = fallback.structured_content
            assert data["grep_mode"] == "plain_text" and "searched as plain text" in data["note"]
            assert _where(data) == [("src/app.py", 2, 12), ("src/users.py", 1, 5)] + GET_USER[3:]
            none = await session.call_tool("find", {"query": "*.md nothing", "mode": "grep"})
            diag = none.structured_content["diagnostics"]
            assert diag["filtered_file_count"] == 1 and diag["total_files_searched"] == 1
            assert diag["constraints"]["globs"] == ["*.md"]
            assert str(none.content[0].text).splitlines()[-1].startswith("diagnostics: ")

    anyio.run(go)
