"""One search, three faces: ``Workbench.search().to_json()``, ``sleuth search --json`` and the
MCP tool's ``structuredContent`` are the same JSON, result id included (docs/architecture.md#tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from sleuth.api import Workbench
from tests.e2e.conftest import mcp_session, run_cli

CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    ("get_user", {}, []),
    ("get_user", {"path": "src", "context": 0}, ["--path", "src", "--context", "0"]),
    ("GET_USER", {"case_sensitive": False, "limit": 2}, ["-i", "--limit", "2"]),
    ("regex:def \\w+", {"include": ["*.py"]}, ["--include", "*.py"]),
    ("files:*.py", {}, []),
    ("get_usr", {}, []),
    ("zq_nothing_here_xq", {"exclude": ["docs/**"]}, ["--exclude", "docs/**"]),
]


def _api(root: Path, query: str, options: dict[str, Any]) -> Any:
    with Workbench(root) as wb:
        data = wb.search(query, **options).to_json()
    return json.loads(json.dumps(data, ensure_ascii=False))  # tuples -> lists, as on the wire


def _cli(root: Path, query: str, args: list[str]) -> Any:
    proc = run_cli(["search", query, *args, "--root", str(root), "--json"])
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _mcp(root: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async def go() -> list[Any]:
        out = []
        async with mcp_session(root) as session:
            for query, options in calls:
                result = await session.call_tool("search", {"query": query, **options})
                assert result.is_error is False, result.content
                out.append(result.structured_content)
        return out

    return anyio.run(go)


@pytest.mark.parametrize(("query", "options", "args"), CASES, ids=[f"{q} {o}" for q, o, _ in CASES])
def test_api_cli_and_mcp_give_identical_json(
    sample_root: Path, query: str, options: dict[str, Any], args: list[str]
) -> None:
    api = _api(sample_root, query, options)
    cli = _cli(sample_root, query, args)
    (mcp,) = _mcp(sample_root, [(query, options)])
    assert cli == api
    assert mcp == api


def test_second_page_identical_across_faces(sample_root: Path) -> None:
    first = _api(sample_root, "get_user", {"limit": 2})
    cursor = first["next_cursor"]
    assert cursor
    api = _api(sample_root, "get_user", {"limit": 2, "cursor": cursor})
    cli = _cli(sample_root, "get_user", ["--limit", "2", "--cursor", cursor])
    (mcp,) = _mcp(sample_root, [("get_user", {"limit": 2, "cursor": cursor})])
    assert [m["n"] for m in api["matches"]] == [3, 4]
    assert cli == api and mcp == api
