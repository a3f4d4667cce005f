"""``sleuth mcp`` as a subprocess, driven by the official MCP client over stdio
(docs/faces.md#mcp-server)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio

from tests.e2e.conftest import ERROR_KEYS, MATCH_KEYS, SEARCH_KEYS, mcp_session

LINE = re.compile(r"(?P<path>\S+):(?P<line>\d+):(?P<col>\d+) #(?P<n>\d+)  (?P<text>.*)")


def _text(result: Any) -> str:
    assert len(result.content) == 1 and result.content[0].type == "text"
    return str(result.content[0].text)


def test_lists_search_tool_and_answers_structured_and_text(sample_root: Path) -> None:
    async def go() -> None:
        async with mcp_session(sample_root) as session:
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            assert "search" in tools
            schema = tools["search"].input_schema
            assert schema["required"] == ["query"]
            assert {
                "path",
                "include",
                "exclude",
                "limit",
                "cursor",
                "context",
                "case_sensitive",
                "lang",
                "navigation",
            } <= set(schema["properties"])

            result = await session.call_tool("search", {"query": "get_user", "path": "src"})
            assert result.is_error is False
            data = result.structured_content
            assert set(data) >= SEARCH_KEYS
            assert all(set(m) >= MATCH_KEYS for m in data["matches"])
            assert {m["path"] for m in data["matches"]} == {"src/app.py", "src/users.py"}

            lines = _text(result).splitlines()
            header = lines[0].split("  ")
            assert header[0] == data["result"] and header[1] == data["mode"] == "literal"
            assert f"{data['total']} matches" in header and "complete" in header
            match_lines = [line for line in lines[1:] if not line.startswith("  ")]  # context
            parsed = [LINE.fullmatch(line) for line in match_lines[: len(data["matches"])]]
            assert all(parsed)
            for found, match in zip(parsed, data["matches"], strict=True):
                assert found is not None
                assert (found["path"], int(found["line"]), int(found["col"])) == (
                    match["path"],
                    match["line"],
                    match["column"],
                )
                assert f"{header[0]}:{found['n']}:match" == match["ref"]["match"]
                assert found["text"] == match["text"].strip()
            assert "  1- def handler(uid):" in _text(result)  # context 1: numbered context lines

    anyio.run(go)


def test_errors_are_tool_errors_with_spec_codes(sample_root: Path) -> None:
    async def go() -> None:
        async with mcp_session(sample_root) as session:
            cases = [
                ({"query": "regex:foo("}, "invalid_query"),
                ({"query": ""}, "invalid_query"),
                ({"query": "x", "path": "/etc"}, "invalid_path"),
                ({"query": "x", "path": "missing.py"}, "not_found"),
                ({"query": "x", "limit": "lots"}, "invalid_query"),
            ]
            for arguments, code in cases:
                result = await session.call_tool("search", arguments)
                assert result.is_error is True, arguments
                assert _text(result).startswith(f"error[{code}]: "), _text(result)
                error = result.structured_content["error"]
                assert set(error) == ERROR_KEYS and error["code"] == code
            # The server survives its errors and still answers.
            ok = await session.call_tool("search", {"query": "list_users"})
            assert ok.is_error is False and ok.structured_content["total"] == 1

    anyio.run(go)


def test_zero_hits_and_paging_through_one_server(sample_root: Path) -> None:
    async def go() -> None:
        async with mcp_session(sample_root) as session:
            empty = await session.call_tool("search", {"query": "zq_nothing_here_xq"})
            assert empty.is_error is False
            assert empty.structured_content["matches"] == []
            assert "no matches" in _text(empty)

            fuzzy = await session.call_tool("search", {"query": "getUser"})
            group = fuzzy.structured_content["possible_names"][0]
            assert f"{group['name']} ({group['count']}, {group['result']})" in _text(fuzzy)

            first = await session.call_tool("search", {"query": "get_user", "limit": 2})
            cursor = first.structured_content["next_cursor"]
            assert cursor and _text(first).splitlines()[-1] == f"next_cursor: {cursor}"
            second = await session.call_tool(
                "search", {"query": "get_user", "limit": 2, "cursor": cursor}
            )
            assert [m["n"] for m in second.structured_content["matches"]] == [3, 4]
            assert second.structured_content["result"] == first.structured_content["result"]

    anyio.run(go)


def test_bad_root_fails_fast(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "sleuth", "mcp", "--root", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert proc.returncode in (2, 4)
    assert proc.stderr.startswith("sleuth: error[")
