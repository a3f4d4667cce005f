"""``initialize`` answered before the SDK loads (sleuth/mcp_boot.py, docs/faces.md#mcp-server):
the kept answer is the SDK's own, byte for byte, and the session after it works as any other."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from sleuth.mcp_boot import CACHE_NAME, EarlyAnswer, initialize_key
from tests.e2e.conftest import _env


async def _session_once(root: Path, cache: Path) -> tuple[Any, str]:
    """(the initialize result, the text of one search) of a fresh ``sleuth mcp``."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "sleuth", "mcp", "--root", str(root)],
        env=_env({"XDG_CACHE_HOME": str(cache)}),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        started = await session.initialize()
        found = await session.call_tool("search", {"query": "get_user", "context": 0})
        return started.model_dump(mode="json", by_alias=True), str(found.content[0].text)


def test_the_second_start_answers_the_first_starts_initialize(
    sample_root: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"

    async def go() -> None:
        first, first_text = await _session_once(sample_root, cache)
        kept = json.loads((cache / "sleuth" / CACHE_NAME).read_text())
        assert len(kept) == 1 and list(kept.values())[0]["instructions"]
        second, second_text = await _session_once(sample_root, cache)
        assert second == first
        assert second_text == first_text and "get_user" in second_text
        assert json.loads((cache / "sleuth" / CACHE_NAME).read_text()) == kept

    anyio.run(go)


def test_an_unreadable_cache_only_costs_the_early_answer(sample_root: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    (cache / "sleuth").mkdir(parents=True)
    (cache / "sleuth" / CACHE_NAME).write_text("{not json")

    async def go() -> None:
        started, text = await _session_once(sample_root, cache)
        assert started["serverInfo"]["name"] == "sleuth" and "get_user" in text
        assert len(json.loads((cache / "sleuth" / CACHE_NAME).read_text())) == 1

    anyio.run(go)


def _initialize(rid: int, version: str = "2025-06-18", client: str = "a") -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": client, "version": "1"},
        },
    }


def test_the_key_ignores_the_client_name_and_id_but_not_the_version() -> None:
    key = initialize_key(_initialize(1))
    assert key is not None
    assert initialize_key(_initialize(7, client="other")) == key
    assert initialize_key(_initialize(1, version="2024-11-05")) != key
    assert initialize_key({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}) is None
    assert initialize_key({"jsonrpc": "2.0", "method": "initialize", "params": {}}) is None


def test_only_the_answer_to_the_answered_initialize_is_dropped_and_only_once() -> None:
    early = EarlyAnswer(b"", key="k", request_id=3, answered=True)
    other = json.dumps({"jsonrpc": "2.0", "id": 4, "result": {}})
    mine = json.dumps({"jsonrpc": "2.0", "id": 3, "result": {"x": 1}})
    request = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "ping"})
    assert early.filter(other) is True
    assert early.filter(request) is True
    assert early.filter(mine) is False
    assert early.filter(mine) is True  # a later answer with a reused id is the client's
