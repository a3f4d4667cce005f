"""Strict arguments through the official MCP client (docs/faces.md#strict-arguments): every
tool's schema is closed, an unknown argument is ``invalid_query`` naming it and the valid ones,
and the documented aliases are accepted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio

from tests.e2e.conftest import mcp_session


def _text(result: Any) -> str:
    return str(result.content[0].text)


def test_every_schema_is_closed_and_every_unknown_argument_is_named(sample_root: Path) -> None:
    async def go() -> None:
        async with mcp_session(sample_root) as session:
            tools = (await session.list_tools()).tools
            assert len(tools) >= 10
            for tool in tools:
                schema = tool.input_schema
                if tool.name == "find":  # its contract: unknown names are a warning
                    found = await session.call_tool("find", {"query": "x", "bogus_arg": 1})
                    assert found.is_error is False
                    assert "bogus_arg" in str(found.structured_content)
                    continue
                assert schema.get("additionalProperties") is False, tool.name
                result = await session.call_tool(tool.name, {"bogus_arg": 1})
                assert result.is_error is True, tool.name
                error = result.structured_content["error"]
                assert error["code"] == "invalid_query", tool.name
                assert "'bogus_arg'" in error["message"], tool.name
                assert error["details"]["unknown"] == ["bogus_arg"]
                assert set(error["details"]["valid"]) == set(schema["properties"]), tool.name
                for name in schema["properties"]:
                    assert name in error["message"], (tool.name, name)

    anyio.run(go)


def test_a_misspelt_argument_is_refused_with_the_closest_name(sample_root: Path) -> None:
    async def go() -> None:
        async with mcp_session(sample_root) as session:
            result = await session.call_tool("search", {"query": "get_user", "paht": "src"})
            assert result.is_error is True
            assert "did you mean 'path'?" in _text(result)
            assert "aliases: pattern->query" in _text(result)

    anyio.run(go)


def test_aliases_are_the_fields_they_name(sample_root: Path) -> None:
    async def go() -> None:
        async with mcp_session(sample_root) as session:
            by_query = await session.call_tool("search", {"query": "get_user"})
            by_pattern = await session.call_tool("search", {"pattern": "get_user"})
            assert by_pattern.is_error is False
            assert by_pattern.structured_content["result"] == by_query.structured_content["result"]
            twice = await session.call_tool("search", {"pattern": "a", "query": "b"})
            assert twice.is_error is True and "twice" in _text(twice)

            line = by_query.structured_content["matches"][0]["ref"]["line"]
            inserted = await session.call_tool(
                "insert", {"ref": line, "text": "# note\n", "position": "after"}
            )
            assert inserted.is_error is False, _text(inserted)
            path = by_query.structured_content["matches"][0]["path"]
            number = by_query.structured_content["matches"][0]["line"]
            lines = (sample_root / path).read_text().splitlines()
            assert lines[number] == "# note"  # after the line, as position='after' asked

            read = await session.call_tool("read", {"path": path})
            assert read.is_error is False and read.structured_content["source"] == path

    anyio.run(go)


def test_a_missing_argument_names_the_tool_parameter(sample_root: Path) -> None:
    async def go() -> None:
        async with mcp_session(sample_root) as session:
            found = await session.call_tool("search", {"query": "get_user"})
            ref = found.structured_content["matches"][0]["ref"]["match"]
            result = await session.call_tool("rename", {"ref": ref})
            assert result.is_error is True
            message = result.structured_content["error"]["message"]
            assert "new_name" in message and "rename REF NEW" not in message

    anyio.run(go)


def test_the_tool_list_a_model_reads_stays_under_6_kb(sample_root: Path) -> None:
    async def go() -> None:
        async with mcp_session(sample_root) as session:
            tools = (await session.list_tools()).tools
            listed = [
                {"name": t.name, "description": t.description, "inputSchema": t.input_schema}
                for t in tools
            ]
            size = len(json.dumps(listed, separators=(",", ":")).encode())
            assert size <= 6 * 1024, size
            assert all(t.description and len(t.description) <= 300 for t in tools)

    anyio.run(go)


def test_a_flag_or_a_float_is_no_integer(sample_root: Path) -> None:
    """Seen: ``limit: true`` was read as 1 (and ``1.0`` as 1) by the SDK's argument model,
    while the Python API and the provider refuse them."""

    async def go() -> None:
        async with mcp_session(sample_root) as session:
            for tool, args in (
                ("search", {"query": "def", "limit": True}),
                ("search", {"query": "def", "context": 1.0}),
                ("search", {"query": "def", "max_bytes": False}),
                ("read", {"target": "src/app.py", "limit": True}),
                ("search", {"query": 7}),
            ):
                result = await session.call_tool(tool, args)
                assert result.is_error, (tool, args)
                assert "invalid_query" in result.content[0].text
            fine = await session.call_tool("search", {"query": "def", "threshold": 1})
            assert "invalid arguments" not in fine.content[0].text

    anyio.run(go)
