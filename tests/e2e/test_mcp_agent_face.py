"""The model-facing text of ``sleuth mcp`` through the official client (docs/faces.md#mcp-server):
capture references usable as given, graph edges with direction and the other end, ``read``
naming its path once, context lines when asked, and ``max_bytes`` pages that lose nothing."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.e2e.conftest import mcp_session

ZOO = {
    "zoo/animals.py": "class Dog:\n    def speak(self):\n        return bark(1, 2)\n\n\n"
    "def bark(times, loud):\n    return 'woof' * times\n",
    "zoo/run.py": "from zoo.animals import Dog, bark\n\n\ndef main():\n    Dog().speak()\n"
    "    bark(3, 4)\n    bark(5, 6)\n",
}


@pytest.fixture
def zoo(make_workspace: Callable[[dict[str, str | bytes]], Path]) -> Path:
    return make_workspace(ZOO)


def _text(result: Any) -> str:
    assert len(result.content) == 1 and result.content[0].type == "text"
    return str(result.content[0].text)


def test_capture_references_are_in_the_text_and_usable_as_given(zoo: Path) -> None:
    async def go() -> None:
        async with mcp_session(zoo) as session:
            found = await session.call_tool("search", {"query": "ast:bark($A, $B)"})
            text = _text(found)
            refs = re.findall(r"^  \$B = \"(\d)\"  -> (RESULT#\S+:B)$", text, re.M)
            assert [value for value, _ in refs] == ["2", "4", "6"]
            for value, ref in refs:
                read = await session.call_tool("read", {"target": ref})
                assert read.structured_content["ranges"][0]["text"] == value
            every = re.search(
                r"^every match's: (RESULT#\w+:all:A)  (RESULT#\w+:all:B)$", text, re.M
            )
            assert every is not None
            edited = await session.call_tool("replace", {"ref": every[2], "text": "True"})
            assert edited.is_error is False, _text(edited)
            assert edited.structured_content["changed"] == ["zoo/animals.py", "zoo/run.py"]
            assert "bark(1, True)" in (zoo / "zoo/animals.py").read_text()
            assert "bark(3, True)" in (zoo / "zoo/run.py").read_text()
            assert "bark(5, True)" in (zoo / "zoo/run.py").read_text()

    anyio.run(go)


def test_graph_text_has_direction_edge_kind_and_other_end(zoo: Path) -> None:
    async def go() -> None:
        async with mcp_session(zoo) as session:
            decls = await session.call_tool("search", {"query": "graph:zoo/animals.py"})
            text = _text(decls)
            assert "    <- calls: main" in text  # bark is called by main
            bark = next(
                m for m in decls.structured_content["matches"] if m["graph"]["name"] == "bark"
            )
            uses = await session.call_tool("search", {"query": f"graph:#{bark['graph']['id']}"})
            lines = _text(uses).splitlines()[1:]
            incoming = [line for line in lines if "<- calls main" in line]
            outgoing = [line for line in lines if "<- calls Dog.speak" in line]
            assert len(incoming) == 2 and len(outgoing) == 1
            assert all(line.startswith(("zoo/run.py:6:", "zoo/run.py:7:")) for line in incoming)

            ranked = await session.call_tool("search", {"query": "graph:"})
            data = ranked.structured_content
            assert len(data["matches"]) <= 20
            assert re.search(r" #1  rank 1 \(\d\.\d{4}\)  ", _text(ranked))

    anyio.run(go)


def test_read_names_the_path_once_and_context_shows_when_asked(zoo: Path) -> None:
    async def go() -> None:
        async with mcp_session(zoo) as session:
            read = await session.call_tool("read", {"target": "zoo/run.py"})
            lines = _text(read).splitlines()
            assert lines[1] == "zoo/run.py" and _text(read).count("zoo/run.py") == 2
            assert lines[2:] == [
                f"{n}| {text}".rstrip()
                for n, text in enumerate(ZOO["zoo/run.py"].splitlines(), start=1)
            ]
            bare = await session.call_tool("search", {"query": "Dog().speak()", "context": 0})
            framed = await session.call_tool("search", {"query": "Dog().speak()", "context": 1})
            assert len(_text(bare).splitlines()) == 2
            assert _text(framed).splitlines()[1:] == [
                "  4- def main():",
                "zoo/run.py:5:5 #1  Dog().speak()",
                "  6-     bark(3, 4)",
            ]

    anyio.run(go)


def test_symbol_id_text_holds_the_whole_declaration(
    make_workspace: Callable[[dict[str, str | bytes]], Path],
) -> None:
    body = "".join(f"    x{i} = {i} * 2  # a long line to pass 256 characters\n" for i in range(12))
    root = make_workspace({"m.py": f"def big():\n{body}    return x0\n"})

    async def go() -> None:
        async with mcp_session(root) as session:
            found = await session.call_tool("search", {"query": "symbols:big"})
            sid = found.structured_content["matches"][0]["symbol"]["id"]
            whole = await session.call_tool("search", {"query": f"symbol:#{sid}"})
            text = _text(whole)
            assert "x11 = 11 * 2" in text and "14|     return x0" in text
            assert len(whole.structured_content["matches"][0]["text"]) <= 256

    anyio.run(go)


def test_max_bytes_pages_lose_no_match_and_say_more_until_the_end(
    make_workspace: Callable[[dict[str, str | bytes]], Path],
) -> None:
    files = {f"f{i:02d}.py": "".join(f"hit_{i}_{k} = 1\n" for k in range(7)) for i in range(30)}
    files["long.py"] = "".join(f"line_{k} = {k}\n" for k in range(80))
    root = make_workspace(files)

    async def go() -> None:
        async with mcp_session(root) as session:
            seen: list[tuple[str, int]] = []
            cursor = None
            pages = 0
            while True:
                args: dict[str, Any] = {"query": "hit_", "max_bytes": 1024, "limit": 500}
                if cursor:
                    args["cursor"] = cursor
                page = await session.call_tool("search", args)
                text, data = _text(page), page.structured_content
                assert len(text.encode()) <= 1024
                header = text.splitlines()[0]
                seen += [(m["path"], m["line"]) for m in data["matches"]]
                pages += 1
                cursor = data["next_cursor"]
                if cursor is None:
                    assert header.endswith("complete")
                    break
                assert "complete" not in header.split("  ") and data.get("cut") == "max_bytes"
            assert pages > 3
            assert seen == sorted(seen) and len(seen) == len(set(seen)) == 210

            read = await session.call_tool("read", {"target": "long.py", "max_bytes": 512})
            got = read.structured_content
            assert len(_text(read).encode()) <= 512
            assert got["complete"] is False and got["next_offset"] > 1
            assert f"offset={got['next_offset']}" in _text(read)
            rest = await session.call_tool(
                "read", {"target": "long.py", "offset": got["next_offset"]}
            )
            first = got["ranges"][0]["text"].splitlines()
            shown = first + rest.structured_content["ranges"][0]["text"].splitlines()
            assert shown == files["long.py"].splitlines()  # cut at a line boundary

    anyio.run(go)


def test_locations_output_lists_every_match_position_and_its_numbers_select_it(
    zoo: Path,
) -> None:
    async def go() -> None:
        async with mcp_session(zoo) as session:
            lines = await session.call_tool("search", {"query": "bark", "context": 0})
            where = await session.call_tool(
                "search", {"query": "bark", "context": 0, "output": "locations"}
            )
            assert where.is_error is False, _text(where)
            text = _text(where)
            rid = text.split()[0]
            assert rid == _text(lines).split()[0]  # the same result: output is no part of it
            assert text.splitlines()[1:] == [
                "#1 zoo/animals.py: 3:16 6:5",
                "#3 zoo/run.py: 1:30 6:5 7:5",
            ]
            assert len(text.encode()) < len(_text(lines).encode())
            data = where.structured_content
            assert data["output"] == "locations"
            assert [m["line"] for m in data["matches"]] == [3, 6, 1, 6, 7]
            fourth = await session.call_tool("read", {"target": f"{rid}:4:match"})
            assert fourth.structured_content["ranges"][0]["path"] == "zoo/run.py"
            assert fourth.structured_content["ranges"][0]["line"] == 6

            bad = await session.call_tool("search", {"query": "bark", "output": "paths"})
            assert bad.is_error is True
            assert "output must be 'lines' or 'locations'" in _text(bad)

    anyio.run(go)
