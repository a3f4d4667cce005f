"""Unit tests of the faces with a fake engine: CLI parsing, output, error mapping, and the
MCP tool table (in-process, through the SDK's own ``call_tool``)."""

from __future__ import annotations

import io
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest

from sleuth import cli
from sleuth.errors import (
    ERROR_CODES,
    NotFound,
    ServerUnavailable,
    SleuthError,
    StaleReference,
    Unsupported,
)
from sleuth.mcp import EngineThread, build_server
from sleuth.service import edit_requests as erq
from sleuth.service import requests as rq
from sleuth.service import verbs

RESPONSE: dict[str, Any] = {
    "query": "get_user",
    "mode": "literal",
    "fallback": None,
    "result": "SEARCH#00ff",
    "complete": True,
    "incomplete_reason": None,
    "total": 1,
    "matches": [
        {
            "n": 1,
            "path": "src/app.py",
            "line": 2,
            "column": 5,
            "end_line": 2,
            "end_column": 13,
            "start_byte": 20,
            "end_byte": 28,
            "text": "    get_user(uid)",
            "context": {"before": ["def f(uid):"], "after": []},
            "ref": {"line": "SEARCH#00ff:1:line", "match": "SEARCH#00ff:1:match"},
            "captures": None,
            "score": None,
        }
    ],
    "all": {"line": "SEARCH#00ff:all:line", "match": "SEARCH#00ff:all:match"},
    "next_cursor": None,
    "skipped": {"binary": 0, "too_large": 0, "undecodable": 0},
    "possible_names": None,
}


READ_RESPONSE: dict[str, Any] = {
    "result": "RESULT#0a0b0c0d",
    "source": "SEARCH#00ff:all:line",
    "refreshed": False,
    "complete": True,
    "ranges": [
        {
            "path": "src/app.py",
            "line": 2,
            "end_line": 2,
            "start_byte": 12,
            "end_byte": 36,
            "text": "    user = get_user(uid)",
        },
        {
            "path": "src/app.py",
            "line": 9,
            "end_line": 10,
            "start_byte": 90,
            "end_byte": 110,
            "text": "    x = get_user(\n        2)",
        },
    ],
}


class _Result:
    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def to_json(self) -> dict[str, Any]:
        return self.data


class FakeEngine:
    """Records calls; ``boom`` raises a foreign error, ``missing`` a SleuthError."""

    def __init__(self, root: str = ".", no_ignore: bool = False) -> None:
        self.root, self.no_ignore = root, no_ignore
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.closed = False

    def search(self, query: str, **options: Any) -> _Result:
        self.calls.append((query, options))
        if query == "boom":
            raise ValueError("kaboom")
        if query == "missing":
            raise NotFound("no such path: missing.py", details={"path": "missing.py"})
        return _Result(dict(RESPONSE, query=query))

    def read(
        self,
        target: str,
        *,
        offset: int | None = None,
        limit: int | None = None,
        max_bytes: int | None = None,
    ) -> _Result:
        self.calls.append(("read", {"target": target, "offset": offset, "limit": limit}))
        if target == "RESULT#deadbeef":
            raise NotFound("unknown reference RESULT#deadbeef", details={"reference": target})
        if target == "stale":
            raise StaleReference(
                "stale is stale: src/app.py changed",
                details={"reference": target, "files": ["src/app.py"]},
            )
        return _Result(dict(READ_RESPONSE, source=target))

    def select(self, ref: str, items: Sequence[int]) -> _Result:
        self.calls.append(("select", {"ref": ref, "items": list(items)}))
        return _Result(dict(READ_RESPONSE, source=ref))

    def index_now(self) -> int:
        self.calls.append(("index", {}))
        return 42

    def close(self) -> None:
        self.closed = True


class Run:
    def __init__(self, argv: Sequence[str]) -> None:
        self.engines: list[FakeEngine] = []
        out, err = io.StringIO(), io.StringIO()

        def factory(root: str, no_ignore: bool) -> FakeEngine:
            self.engines.append(FakeEngine(root, no_ignore))
            return self.engines[-1]

        self.code = cli.main(list(argv), engine_factory=factory, stdout=out, stderr=err)
        self.out, self.err = out.getvalue(), err.getvalue()


# --- parsing ---------------------------------------------------------------------------------


def test_parse_search_into_frozen_request() -> None:
    inv = cli.parse_args(
        [
            "search",
            "get_user",
            "--path",
            "src",
            "--include",
            "*.py",
            "--include",
            "*.pyi",
            "--exclude",
            "t/**",
            "--limit",
            "7",
            "--context",
            "2",
            "-i",
            "--lang",
            "python",
            "--cursor",
            "C1",
            "--root",
            "/w",
            "--json",
            "--no-ignore",
        ]
    )
    assert (inv.verb, inv.root, inv.json, inv.no_ignore) == ("search", "/w", True, True)
    req = inv.request
    assert (req.query, req.path, req.include, req.exclude) == (
        "get_user",
        "src",
        ("*.py", "*.pyi"),
        ("t/**",),
    )
    assert (req.limit, req.context, req.case_sensitive, req.lang, req.cursor) == (
        7,
        2,
        False,
        "python",
        "C1",
    )
    with pytest.raises(AttributeError):
        req.query = "other"


def test_parse_defaults() -> None:
    inv = cli.parse_args(["search", "x"])
    assert (inv.root, inv.json, inv.no_ignore) == (".", False, False)
    assert (inv.request.path, inv.request.limit, inv.request.context) == ("/", 100, 1)
    assert inv.request.case_sensitive is True


def test_workspace_options_accepted_before_the_verb_too() -> None:
    inv = cli.parse_args(["--json", "--root", "/r", "search", "x"])
    assert (inv.root, inv.json) == ("/r", True)


def test_mcp_verb_parses_root() -> None:
    inv = cli.parse_args(["mcp", "--root", "/r"])
    assert (inv.verb, inv.root, inv.request) == ("mcp", "/r", None)


@pytest.mark.parametrize(
    "argv",
    [[], ["search"], ["search", "x", "--limit", "ten"], ["search", "x", "--bogus"], ["frobnicate"]],
)
def test_usage_errors_are_invalid_query(argv: list[str]) -> None:
    with pytest.raises(SleuthError) as info:
        cli.parse_args(argv)
    assert info.value.code == "invalid_query" and info.value.exit_code == 2
    assert "usage" in info.value.details


# --- running ---------------------------------------------------------------------------------


def test_json_output_is_exactly_the_engine_json() -> None:
    run = Run(["search", "get_user", "--json", "--root", "/w"])
    assert run.code == 0 and run.err == ""
    assert json.loads(run.out) == dict(RESPONSE, query="get_user")
    assert run.out.count("\n") == 1
    engine = run.engines[0]
    assert (engine.root, engine.closed) == ("/w", True)


def test_options_reach_the_engine() -> None:
    run = Run(["search", "q", "--path", "src", "--include", "*.py", "-i", "--limit", "900"])
    ((query, options),) = run.engines[0].calls
    assert query == "q"
    assert options["path"] == "src" and list(options["include"]) == ["*.py"]
    assert options["case_sensitive"] is False
    assert options["limit"] == 500  # docs/query.md#limits: capped


def test_json_keeps_non_ascii() -> None:
    run = Run(["search", "café", "--json"])
    assert '"café"' in run.out


def test_human_output_without_colour_when_not_a_tty() -> None:
    run = Run(["search", "get_user"])
    assert run.code == 0
    assert run.out.startswith("SEARCH#00ff  literal  1 match  complete")
    assert "src/app.py" in run.out and "#1  2:5:" in run.out
    assert "\x1b[" not in run.out


def test_sleuth_error_human_goes_to_stderr_with_exit_code() -> None:
    run = Run(["search", "missing"])
    assert run.code == 4 and run.out == ""
    assert run.err == "sleuth: error[not_found]: no such path: missing.py\n"


def test_sleuth_error_json_goes_to_stdout() -> None:
    run = Run(["search", "missing", "--json"])
    assert run.code == 4
    assert (
        json.loads(run.out)
        == NotFound("no such path: missing.py", details={"path": "missing.py"}).to_json()
    )
    assert "error[not_found]" in run.err


def test_engine_validation_errors_happen_before_any_engine() -> None:
    run = Run(["search", "", "--json"])
    assert run.code == 2 and run.engines == []
    assert json.loads(run.out)["error"]["code"] == "invalid_query"


def test_usage_error_with_json_prints_error_object() -> None:
    run = Run(["search", "--json"])
    assert run.code == 2
    body = json.loads(run.out)["error"]
    assert body["code"] == "invalid_query" and "QUERY" in body["message"]


def test_unexpected_exception_is_internal_without_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("SLEUTH_DEBUG", raising=False)
    run = Run(["search", "boom"])
    assert run.code == 1
    assert run.err.startswith("sleuth: error[internal]: unexpected ValueError: kaboom")
    assert "Traceback" not in run.err + capsys.readouterr().err
    assert run.engines[0].closed


def test_debug_env_prints_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SLEUTH_DEBUG", "1")
    run = Run(["search", "boom", "--json"])
    assert run.code == 1 and json.loads(run.out)["error"]["code"] == "internal"
    assert "Traceback" in capsys.readouterr().err


@pytest.mark.parametrize("code", sorted(ERROR_CODES))
def test_report_error_exit_code_per_spec_code(code: str) -> None:
    expected = {
        "invalid_query": 2,
        "invalid_path": 2,
        "unsupported": 2,
        "stale_reference": 3,
        "conflict": 3,
        "unsafe_selection": 3,
        "not_found": 4,
        "server_unavailable": 5,
        "timeout": 5,
        "cancelled": 5,
        "rate_limited": 5,
        "internal": 1,
    }[code]
    out, err = io.StringIO(), io.StringIO()
    assert (
        cli.report_error(ERROR_CODES[code]("m"), as_json=True, stdout=out, stderr=err) == expected
    )
    assert json.loads(out.getvalue())["error"]["code"] == code


# --- colour ----------------------------------------------------------------------------------


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_use_color_only_on_tty_without_no_color() -> None:
    assert cli.use_color(_Tty(), {}) is True
    assert cli.use_color(_Tty(), {"NO_COLOR": "1"}) is False
    assert cli.use_color(io.StringIO(), {}) is False


def test_colour_written_on_a_tty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    tty = _Tty()
    code = cli.main(
        ["search", "get_user"], engine_factory=FakeEngine, stdout=tty, stderr=io.StringIO()
    )
    assert code == 0 and "\x1b[" in tty.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    tty = _Tty()
    cli.main(["search", "get_user"], engine_factory=FakeEngine, stdout=tty, stderr=io.StringIO())
    assert "\x1b[" not in tty.getvalue() and "src/app.py" in tty.getvalue()


# --- the MCP face shares the verb table ------------------------------------------------------


def _mcp_call(arguments: dict[str, Any], tool: str = "search") -> tuple[list[Any], Any]:
    async def go() -> tuple[list[Any], Any]:
        engine = EngineThread(FakeEngine, ".", False)
        try:
            server = build_server(engine)
            return await server.list_tools(), await server.call_tool(tool, arguments)
        finally:
            engine.close()

    return anyio.run(go)


def test_mcp_search_tool_schema_matches_cli_options() -> None:
    tools, _ = _mcp_call({"query": "x"})
    assert [t.name for t in tools] == [
        "search",
        "read",
        "select",
        "find",
        "replace",
        "insert",
        "delete",
        "copy",
        "move",
        "undo",
        "rename",
        "doctor",
    ]
    props = set(tools[0].input_schema["properties"])
    assert props == {
        "query",
        "path",
        "include",
        "exclude",
        "limit",
        "cursor",
        "context",
        "case_sensitive",
        "lang",
        "navigation",
        "selector",
        "strictness",
        "depth",
        "max_bytes",
        "threshold",
        "output",
    }
    assert tools[0].input_schema["required"] == ["query"]


def test_mcp_result_is_structured_json_plus_compact_text() -> None:
    _, result = _mcp_call({"query": "get_user", "include": ["*.py"]})
    assert result.is_error is False
    assert result.structured_content == dict(RESPONSE, query="get_user")
    lines = result.content[0].text.splitlines()
    assert lines == [
        "SEARCH#00ff  literal  1 match  complete",
        "  1- def f(uid):",
        "src/app.py:2:5 #1  get_user(uid)",
    ]


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({"query": ""}, "invalid_query"),
        ({"query": "missing"}, "not_found"),
        ({"query": "boom"}, "internal"),
        ({"query": "x", "limit": "many"}, "invalid_query"),
    ],
)
def test_mcp_errors_are_tool_errors_with_spec_code(arguments: dict[str, Any], code: str) -> None:
    _, result = _mcp_call(arguments)
    assert result.is_error is True
    assert result.structured_content["error"]["code"] == code
    assert result.content[0].text.startswith(f"error[{code}]: ")


# --- read / select / index -------------------------------------------------------------------


def test_parse_read_select_index_into_frozen_requests() -> None:
    inv = cli.parse_args(
        [
            "read",
            "SEARCH#00ff00ff:2:line",
            "--offset",
            "3",
            "--limit",
            "4",
            "--json",
            "--root",
            "/w",
        ]
    )
    assert (inv.verb, inv.root, inv.json) == ("read", "/w", True)
    assert inv.request == rq.ReadRequest("SEARCH#00ff00ff:2:line", 3, 4)
    with pytest.raises(AttributeError):
        inv.request.target = "x"
    assert cli.parse_args(["read", "a.py"]).request == rq.ReadRequest("a.py", None, None)
    inv = cli.parse_args(["select", "SEARCH#00ff00ff", "1", "3"])
    assert inv.request == rq.SelectRequest("SEARCH#00ff00ff", (1, 3))
    assert cli.parse_args(["index", "--json"]).request == rq.IndexRequest()


@pytest.mark.parametrize(
    "argv",
    [
        ["read"],
        ["read", ""],
        ["read", "a.py", "--offset", "0"],
        ["read", "a.py", "--limit", "-1"],
        ["read", "a.py", "--limit", "x"],
        ["select", "SEARCH#00ff00ff"],
        ["select", "SEARCH#00ff00ff", "0"],
        ["select", "SEARCH#00ff00ff", "one"],
        ["index", "extra"],
    ],
)
def test_read_select_index_usage_errors_before_any_engine(argv: list[str]) -> None:
    run = Run([*argv, "--json"])
    assert run.code == 2 and run.engines == []
    assert json.loads(run.out)["error"]["code"] == "invalid_query"


def test_read_passes_options_and_prints_exact_json() -> None:
    run = Run(["read", "src/app.py", "--offset", "2", "--limit", "9", "--json"])
    assert run.code == 0 and run.err == ""
    assert json.loads(run.out) == dict(READ_RESPONSE, source="src/app.py")
    assert run.engines[0].calls == [("read", {"target": "src/app.py", "offset": 2, "limit": 9})]
    assert run.engines[0].closed


def test_read_human_output() -> None:
    run = Run(["read", "SEARCH#00ff:all:line"])
    assert run.code == 0
    assert run.out.splitlines() == [
        "RESULT#0a0b0c0d from SEARCH#00ff:all:line  2 ranges  complete",
        "",
        "src/app.py",
        "   2 |     user = get_user(uid)",
        "   … |",
        "   9 |     x = get_user(",
        "  10 |         2)",
    ]


def test_select_passes_items_in_order() -> None:
    run = Run(["select", "SEARCH#00ff00ff", "3", "1", "--json"])
    assert run.code == 0
    assert run.engines[0].calls == [("select", {"ref": "SEARCH#00ff00ff", "items": [3, 1]})]
    assert json.loads(run.out)["source"] == "SEARCH#00ff00ff"


def test_index_json_and_human() -> None:
    run = Run(["index", "--json"])
    assert run.code == 0 and json.loads(run.out) == {"indexed": 42, "path": ".sleuth/trigram.idx"}
    run = Run(["index"])
    assert run.out == "indexed 42 files into .sleuth/trigram.idx\n"


@pytest.mark.parametrize(
    ("target", "code", "exit_code"),
    [("RESULT#deadbeef", "not_found", 4), ("stale", "stale_reference", 3)],
)
def test_read_errors_map_to_spec_codes(target: str, code: str, exit_code: int) -> None:
    run = Run(["read", target, "--json"])
    assert run.code == exit_code
    assert json.loads(run.out)["error"]["code"] == code
    run = Run(["read", target])
    assert run.code == exit_code and run.out == ""
    assert run.err.startswith(f"sleuth: error[{code}]: ")


def test_help_lists_the_new_verbs() -> None:
    text = cli.build_parser().format_help()
    for verb in ("search", "read", "select", "index", "mcp"):
        assert f"    {verb} " in text


def test_mcp_read_and_select_tools() -> None:
    tools, result = _mcp_call({"target": "src/app.py", "offset": 2, "limit": 3}, "read")
    schemas = {t.name: t.input_schema for t in tools}
    assert set(schemas["read"]["properties"]) == {"target", "offset", "limit", "max_bytes"}
    assert schemas["read"]["required"] == ["target"]
    assert set(schemas["select"]["properties"]) == {"ref", "items"}
    assert sorted(schemas["select"]["required"]) == ["items", "ref"]
    assert result.is_error is False
    assert result.structured_content == dict(READ_RESPONSE, source="src/app.py")
    assert result.content[0].text.splitlines() == [
        "RESULT#0a0b0c0d from src/app.py  2 ranges  complete",
        "src/app.py",
        "2|     user = get_user(uid)",
        "…",
        "9|     x = get_user(",
        "10|         2)",
    ]
    _, result = _mcp_call({"ref": "SEARCH#00ff00ff", "items": [1, 3]}, "select")
    assert result.is_error is False
    assert result.structured_content["source"] == "SEARCH#00ff00ff"
    assert result.content[0].text.startswith("RESULT#0a0b0c0d from SEARCH#00ff00ff")


@pytest.mark.parametrize(
    ("tool", "arguments", "code"),
    [
        ("read", {"target": "RESULT#deadbeef"}, "not_found"),
        ("read", {"target": "stale"}, "stale_reference"),
        ("read", {"target": "a.py", "offset": 0}, "invalid_query"),
        ("read", {}, "invalid_query"),
        ("select", {"ref": "SEARCH#00ff00ff", "items": []}, "invalid_query"),
        ("select", {"ref": "SEARCH#00ff00ff", "items": ["x"]}, "invalid_query"),
    ],
)
def test_mcp_read_select_errors(tool: str, arguments: dict[str, Any], code: str) -> None:
    _, result = _mcp_call(arguments, tool)
    assert result.is_error is True
    assert result.structured_content["error"]["code"] == code
    assert result.content[0].text.startswith(f"error[{code}]: ")


def test_read_colour_only_on_a_tty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    tty = _Tty()
    assert (
        cli.main(
            ["read", "src/app.py"], engine_factory=FakeEngine, stdout=tty, stderr=io.StringIO()
        )
        == 0
    )
    assert "\x1b[" in tty.getvalue() and "get_user(uid)" in tty.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    tty = _Tty()
    cli.main(["read", "src/app.py"], engine_factory=FakeEngine, stdout=tty, stderr=io.StringIO())
    assert "\x1b[" not in tty.getvalue() and "   2 |     user = get_user(uid)" in tty.getvalue()


# --- edits: replace / insert / delete / copy / move / undo -----------------------------------

EDIT_RESPONSE: dict[str, Any] = {
    "result": "RESULT#e0e0e0e0",
    "source": "SEARCH#00ff:all:match",
    "refreshed": False,
    "complete": True,
    "ranges": [
        {
            "path": "src/app.py",
            "line": 2,
            "end_line": 2,
            "start_byte": 16,
            "end_byte": 24,
            "text": "fetch(1)",
        }
    ],
    "changed": ["src/app.py"],
    "diff": "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,2 +1,2 @@\n def f():\n"
    "-    get_user(1)\n+    fetch(1)\n",
}


class EditFakeEngine(FakeEngine):
    """``FakeEngine`` plus the edit verbs; ``RESULT#stale`` is stale, ``RESULT#gone`` unknown."""

    def _edit(self, verb: str, ref: str, **args: Any) -> _Result:
        self.calls.append((verb, {"ref": ref, **args}))
        if ref == "RESULT#stale":
            raise StaleReference(
                "nothing was written: src/app.py changed since the search",
                details={"files": ["src/app.py"]},
            )
        if ref == "RESULT#gone":
            raise NotFound("RESULT#gone is not an edit that can be undone")
        return _Result(dict(EDIT_RESPONSE, source=ref))

    def replace(self, ref: str, text: str) -> _Result:
        return self._edit("replace", ref, text=text)

    def insert(self, ref: str, text: str, *, where: str = "before") -> _Result:
        return self._edit("insert", ref, text=text, where=where)

    def delete(self, ref: str) -> _Result:
        return self._edit("delete", ref)

    def copy(self, ref: str, *, to: str) -> _Result:
        return self._edit("copy", ref, to=to)

    def move(self, ref: str, *, to: str) -> _Result:
        return self._edit("move", ref, to=to)

    def undo(self, result: str) -> _Result:
        return self._edit("undo", result)


class EditRun(Run):
    """``Run`` with ``EditFakeEngine``s."""

    def __init__(self, argv: Sequence[str], stdout: io.StringIO | None = None) -> None:
        self.engines: list[FakeEngine] = []
        out, err = stdout or io.StringIO(), io.StringIO()

        def factory(root: str, no_ignore: bool) -> FakeEngine:
            self.engines.append(EditFakeEngine(root, no_ignore))
            return self.engines[-1]

        self.code = cli.main(list(argv), engine_factory=factory, stdout=out, stderr=err)
        self.out, self.err = out.getvalue(), err.getvalue()


class _Stdin:
    """A stand-in for ``sys.stdin``: bytes behind ``.buffer``, optionally a terminal."""

    def __init__(self, data: bytes, tty: bool = False) -> None:
        self.buffer = _Buffer(data, tty)

    def isatty(self) -> bool:
        return self.buffer.isatty()


class _Buffer(io.BytesIO):
    def __init__(self, data: bytes, tty: bool) -> None:
        super().__init__(data)
        self.tty = tty
        self.reads: list[int] = []

    def isatty(self) -> bool:
        return self.tty

    def read(self, size: int | None = -1) -> bytes:
        self.reads.append(-1 if size is None else size)
        return super().read(size)


def test_parse_edit_verbs_into_frozen_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", _Stdin(b"must not be read"))
    inv = cli.parse_args(
        ["replace", "SEARCH#00ff:1:match", "--text", "x", "--root", "/w", "--json"]
    )
    assert (inv.verb, inv.root, inv.json) == ("replace", "/w", True)
    assert inv.request == erq.ReplaceRequest("SEARCH#00ff:1:match", "x")
    with pytest.raises(AttributeError):
        inv.request.text = "y"
    assert cli.parse_args(["insert", "R", "--text", "t"]).request.where == "before"
    assert cli.parse_args(["insert", "R", "--text", "t", "--after"]).request == erq.InsertRequest(
        "R", "t", "after"
    )
    assert cli.parse_args(["insert", "R", "--text", "", "--before"]).request == erq.InsertRequest(
        "R", "", "before"
    )
    assert cli.parse_args(["delete", "R"]).request == erq.DeleteRequest("R")
    assert cli.parse_args(["copy", "R", "--to", "b.py:3"]).request == erq.CopyRequest(
        "R", to="b.py:3"
    )
    assert cli.parse_args(["move", "R", "--to", "RESULT#1"]).request == erq.MoveRequest(
        "R", to="RESULT#1"
    )
    assert cli.parse_args(["undo", "RESULT#1"]).request == erq.UndoRequest("RESULT#1")
    assert sys.stdin.buffer.reads == []  # --text given, delete/copy/move/undo: stdin untouched


def test_text_from_stdin_byte_for_byte(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", _Stdin("caf\u00e9\r\nnext\n".encode()))
    assert cli.parse_args(["replace", "R"]).request.text == "caf\u00e9\r\nnext\n"
    monkeypatch.setattr("sys.stdin", _Stdin(b""))
    assert cli.parse_args(["insert", "R", "--text-file", "-"]).request.text == ""


def test_text_from_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", _Stdin(b"not this"))
    source = tmp_path / "new.txt"
    source.write_bytes(b"line one\nline two")
    assert cli.parse_args(["replace", "R", "--text-file", str(source)]).request.text == (
        "line one\nline two"
    )
    assert sys.stdin.buffer.reads == []


def test_text_input_is_capped_at_the_engine_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    from sleuth.edit.operations import MAX_EDIT_TEXT

    monkeypatch.setattr("sys.stdin", _Stdin(b"x" * (MAX_EDIT_TEXT + 10)))
    with pytest.raises(SleuthError) as info:
        cli.parse_args(["replace", "R"])
    assert info.value.code == "invalid_query" and "nothing was written" in info.value.message
    assert sys.stdin.buffer.reads == [MAX_EDIT_TEXT + 1]  # never more than the cap is read
    monkeypatch.setattr("sys.stdin", _Stdin(b"x" * MAX_EDIT_TEXT))
    assert len(cli.parse_args(["replace", "R"]).request.text) == MAX_EDIT_TEXT
    with pytest.raises(SleuthError) as info:
        erq.ReplaceRequest.build("R", text="y" * (MAX_EDIT_TEXT + 1))
    assert info.value.code == "invalid_query"


@pytest.mark.parametrize(
    ("stdin", "argv", "code"),
    [
        (_Stdin(b"\xff\xfe bad"), ["replace", "R"], "invalid_query"),
        (_Stdin(b"", tty=True), ["replace", "R"], "invalid_query"),
        (_Stdin(b"", tty=True), ["insert", "R", "--after"], "invalid_query"),
        (_Stdin(b"t"), ["replace", "R", "--text-file", "/nonexistent/new.txt"], "invalid_path"),
    ],
)
def test_bad_text_input_fails_before_any_engine(
    monkeypatch: pytest.MonkeyPatch, stdin: _Stdin, argv: list[str], code: str
) -> None:
    monkeypatch.setattr("sys.stdin", stdin)
    run = EditRun([*argv, "--json"])
    assert run.code == 2 and run.engines == []
    assert json.loads(run.out)["error"]["code"] == code


@pytest.mark.parametrize(
    "argv",
    [
        ["replace"],
        ["replace", "", "--text", "x"],
        ["replace", "R", "--text", "x", "--text-file", "f"],
        ["insert", "R", "--text", "x", "--before", "--after"],
        ["delete"],
        ["delete", "R", "--text", "x"],
        ["copy", "R"],
        ["copy", "R", "--to", ""],
        ["move", "R"],
        ["undo"],
        ["undo", ""],
        ["undo", "RESULT#1", "--text", "x"],
    ],
)
def test_edit_usage_errors_before_any_engine(argv: list[str]) -> None:
    run = EditRun([*argv, "--json"])
    assert run.code == 2 and run.engines == []
    assert json.loads(run.out)["error"]["code"] == "invalid_query"


@pytest.mark.parametrize(
    ("verb", "kwargs"),
    [
        ("delete", {"text": "x"}),
        ("copy", {}),
        ("undo", {"to": "a.py:1"}),
        ("insert", {"text": "x", "where": "middle"}),
        ("rename", {}),
        ("replace", {}),
    ],
)
def test_edit_request_build_validates(verb: str, kwargs: dict[str, Any]) -> None:
    with pytest.raises(SleuthError) as info:
        verbs.VERBS[verb].request_type().build("SEARCH#00ff:1:match", **kwargs)
    assert info.value.code == "invalid_query"


@pytest.mark.parametrize(
    ("argv", "call"),
    [
        (
            ["replace", "SEARCH#00ff:all:match", "--text", "fetch"],
            ("replace", {"ref": "SEARCH#00ff:all:match", "text": "fetch"}),
        ),
        (
            ["insert", "R", "--text", "# x\n", "--after"],
            ("insert", {"ref": "R", "text": "# x\n", "where": "after"}),
        ),
        (
            ["insert", "R", "--text", "# x\n"],
            ("insert", {"ref": "R", "text": "# x\n", "where": "before"}),
        ),
        (["delete", "SEARCH#00ff:2:line"], ("delete", {"ref": "SEARCH#00ff:2:line"})),
        (["copy", "R", "--to", "b.py:7"], ("copy", {"ref": "R", "to": "b.py:7"})),
        (
            ["move", "R", "--to", "SEARCH#00ff:1:line"],
            ("move", {"ref": "R", "to": "SEARCH#00ff:1:line"}),
        ),
        (["undo", "RESULT#e0e0e0e0"], ("undo", {"ref": "RESULT#e0e0e0e0"})),
    ],
)
def test_edits_reach_the_engine_and_print_exact_json(
    argv: list[str], call: tuple[str, Any]
) -> None:
    run = EditRun([*argv, "--json", "--root", "/w"])
    assert run.code == 0 and run.err == ""
    engine = run.engines[0]
    assert engine.calls == [call] and (engine.root, engine.closed) == ("/w", True)
    assert json.loads(run.out) == dict(EDIT_RESPONSE, source=call[1]["ref"])
    assert run.out.count("\n") == 1


def test_edit_human_output_header_diff_and_undo_hint() -> None:
    run = EditRun(["replace", "SEARCH#00ff:all:match", "--text", "fetch(1)"])
    assert run.code == 0 and "\x1b[" not in run.out
    assert run.out.splitlines() == [
        "RESULT#e0e0e0e0 replace: 1 file changed",
        "--- a/src/app.py",
        "+++ b/src/app.py",
        "@@ -1,2 +1,2 @@",
        " def f():",
        "-    get_user(1)",
        "+    fetch(1)",
        "undo: sleuth undo RESULT#e0e0e0e0",
    ]
    run = EditRun(["undo", "RESULT#e0e0e0e0"])
    assert run.out.splitlines()[0] == "RESULT#e0e0e0e0 undo: 1 file changed"
    assert "sleuth undo" not in run.out


def test_edit_diff_coloured_only_on_a_tty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    tty = _Tty()
    run = EditRun(["delete", "R"], stdout=tty)
    assert run.code == 0
    green, red = "\x1b[32m", "\x1b[31m"
    added = next(line for line in run.out.splitlines() if "+    fetch(1)" in line)
    removed = next(line for line in run.out.splitlines() if "-    get_user(1)" in line)
    assert green in added and red not in added
    assert red in removed and green not in removed
    monkeypatch.setenv("NO_COLOR", "1")
    run = EditRun(["delete", "R"], stdout=_Tty())
    assert "\x1b[" not in run.out and "+    fetch(1)" in run.out


@pytest.mark.parametrize(
    ("argv", "code", "exit_code"),
    [
        (["replace", "RESULT#stale", "--text", "x"], "stale_reference", 3),
        (["undo", "RESULT#gone"], "not_found", 4),
    ],
)
def test_edit_errors_map_to_spec_codes(argv: list[str], code: str, exit_code: int) -> None:
    run = EditRun([*argv, "--json"])
    assert run.code == exit_code
    body = json.loads(run.out)["error"]
    assert body["code"] == code
    if code == "stale_reference":
        assert body["details"]["files"] == ["src/app.py"]
    run = EditRun(argv)
    assert run.code == exit_code and run.out == ""
    assert run.err.startswith(f"sleuth: error[{code}]: ")


def test_help_lists_the_edit_verbs() -> None:
    text = cli.build_parser().format_help()
    for verb in verbs.EDIT_VERBS:
        assert f"    {verb} " in text


def _mcp_edit_call(arguments: dict[str, Any], tool: str) -> tuple[list[Any], Any]:
    async def go() -> tuple[list[Any], Any]:
        engine = EngineThread(EditFakeEngine, ".", False)
        try:
            server = build_server(engine)
            return await server.list_tools(), await server.call_tool(tool, arguments)
        finally:
            engine.close()

    return anyio.run(go)


@pytest.mark.parametrize(
    ("tool", "arguments", "call"),
    [
        ("replace", {"ref": "R", "text": "fetch"}, ("replace", {"ref": "R", "text": "fetch"})),
        (
            "insert",
            {"ref": "R", "text": "t", "where": "after"},
            ("insert", {"ref": "R", "text": "t", "where": "after"}),
        ),
        (
            "insert",
            {"ref": "R", "text": "t"},
            ("insert", {"ref": "R", "text": "t", "where": "before"}),
        ),
        ("delete", {"ref": "R"}, ("delete", {"ref": "R"})),
        ("copy", {"ref": "R", "to": "b.py:2"}, ("copy", {"ref": "R", "to": "b.py:2"})),
        ("move", {"ref": "R", "to": "b.py:2"}, ("move", {"ref": "R", "to": "b.py:2"})),
        ("undo", {"result": "RESULT#e0e0e0e0"}, ("undo", {"ref": "RESULT#e0e0e0e0"})),
    ],
)
def test_mcp_edit_tools(tool: str, arguments: dict[str, Any], call: tuple[str, Any]) -> None:
    calls: list[tuple[str, Any]] = []

    class Recording(EditFakeEngine):
        def _edit(self, verb: str, ref: str, **args: Any) -> _Result:
            calls.append((verb, {"ref": ref, **args}))
            return super()._edit(verb, ref, **args)

    async def go() -> tuple[list[Any], Any]:
        engine = EngineThread(Recording, ".", False)
        try:
            server = build_server(engine)
            return await server.list_tools(), await server.call_tool(tool, arguments)
        finally:
            engine.close()

    tools, result = anyio.run(go)
    spec = {t.name: t for t in tools}[tool]
    assert set(spec.input_schema["properties"]) == set(arguments) | (
        {"where"} if tool == "insert" else set()
    )
    assert spec.annotations.read_only_hint is False
    assert result.is_error is False
    assert calls == [call]
    assert result.structured_content == dict(EDIT_RESPONSE, source=call[1]["ref"])
    lines = result.content[0].text.splitlines()
    assert lines[0] == f"RESULT#e0e0e0e0 {tool}: 1 file changed"
    assert lines[1:] == EDIT_RESPONSE["diff"].splitlines()


@pytest.mark.parametrize(
    ("tool", "arguments", "code"),
    [
        ("replace", {"ref": "RESULT#stale", "text": "x"}, "stale_reference"),
        ("undo", {"result": "RESULT#gone"}, "not_found"),
        ("replace", {"ref": "R"}, "invalid_query"),
        ("replace", {"ref": "", "text": "x"}, "invalid_query"),
        ("insert", {"ref": "R", "text": "x", "where": "inside"}, "invalid_query"),
        ("copy", {"ref": "R"}, "invalid_query"),
        ("move", {"ref": "R", "to": ""}, "invalid_query"),
    ],
)
def test_mcp_edit_errors(tool: str, arguments: dict[str, Any], code: str) -> None:
    _, result = _mcp_edit_call(arguments, tool)
    assert result.is_error is True
    assert result.structured_content["error"]["code"] == code
    assert result.content[0].text.startswith(f"error[{code}]: ")


# --- rename / doctor (docs/edits.md#rename, docs/faces.md#language-servers) ------------------

RENAME_RESPONSE: dict[str, Any] = {
    "result": "RESULT#7e7e7e7e",
    "source": "SEARCH#00ff:1:match",
    "refreshed": False,
    "complete": True,
    "ranges": [
        {
            "path": "shop/models.py",
            "line": 1,
            "end_line": 1,
            "start_byte": 4,
            "end_byte": 15,
            "text": "grand_total",
        }
    ],
    "changed": ["shop/models.py"],
    "diff": "--- a/shop/models.py\n+++ b/shop/models.py\n@@ -1 +1 @@\n-def total():\n"
    "+def grand_total():\n",
    "untouched": [{"path": "shop/report.py", "line": 5, "text": "    total = 0"}],
}
DOCTOR_ROWS: list[dict[str, Any]] = [
    {
        "language": "python",
        "server": "ty",
        "command": ["/v/bin/ty", "server"],
        "found": True,
        "version": "ty 0.0.108",
        "install": "pip install ty",
    },
    {
        "language": "go",
        "server": "gopls",
        "command": ["gopls"],
        "found": False,
        "version": None,
        "install": "apt-get install gopls golang-go",
    },
]


class SymbolFakeEngine(FakeEngine):
    """``FakeEngine`` plus ``rename`` and ``doctor``; some references fail like the engine."""

    def rename(self, ref: str, new_name: str | None = None, *, force: bool = False) -> _Result:
        self.calls.append(
            ("rename", {"ref": ref, "new_name": new_name, **({"force": True} if force else {})})
        )
        if ref == "SEARCH#5ta1e:1:match":
            raise StaleReference(
                "nothing was written: shop/models.py changed since the search",
                details={"files": ["shop/models.py"]},
            )
        if ref == "SEARCH#5e7ac:1:match":
            raise Unsupported("renaming in a.rb needs a language server (see `sleuth doctor`)")
        if ref == "SEARCH#dead:1:match":
            raise ServerUnavailable(
                "language server ty exited (code -9) during "
                "textDocument/rename; the next query restarts it"
            )
        return _Result(dict(RENAME_RESPONSE, source=ref))

    def doctor(self) -> list[dict[str, Any]]:
        self.calls.append(("doctor", {}))
        return DOCTOR_ROWS

    def recovered(self) -> list[dict[str, Any]]:
        return []


class SymbolRun(Run):
    """``Run`` with ``SymbolFakeEngine``s."""

    def __init__(self, argv: Sequence[str]) -> None:
        self.engines: list[FakeEngine] = []
        out, err = io.StringIO(), io.StringIO()

        def factory(root: str, no_ignore: bool) -> FakeEngine:
            self.engines.append(SymbolFakeEngine(root, no_ignore))
            return self.engines[-1]

        self.code = cli.main(list(argv), engine_factory=factory, stdout=out, stderr=err)
        self.out, self.err = out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    "argv",
    [
        ["rename", "SEARCH#00ff:1:match", "grand_total"],
        ["rename", "SEARCH#00ff:1:match#grand_total"],
    ],
)
def test_parse_rename_both_forms_into_one_frozen_request(argv: list[str]) -> None:
    inv = cli.parse_args([*argv, "--root", "/w", "--json"])
    assert (inv.verb, inv.root, inv.json) == ("rename", "/w", True)
    assert inv.request == rq.RenameRequest("SEARCH#00ff:1:match", "grand_total")
    with pytest.raises(AttributeError):
        inv.request.new_name = "x"


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["rename"], "the following arguments are required"),
        (["rename", "SEARCH#00ff:1:match"], "rename needs new_name"),
        (["rename", "SEARCH#00ff:1:match", "1st"], "not a valid identifier"),
        (["rename", "SEARCH#00ff:1:match", "two words"], "not a valid identifier"),
        (["rename", "SEARCH#00ff:1:match#"], "not a valid identifier"),
        (["rename", "", "x"], "rename needs a reference"),
        (["rename", "SEARCH#00ff:1:match", ""], "rename needs new_name, a non-empty name"),
        (["doctor", "extra"], "unrecognized arguments"),
    ],
)
def test_rename_doctor_usage_errors_before_any_engine(argv: list[str], says: str) -> None:
    run = SymbolRun([*argv, "--json"])
    assert run.code == 2 and run.engines == []
    body = json.loads(run.out)["error"]
    assert body["code"] == "invalid_query" and says in body["message"]


def test_rename_reaches_the_engine_and_prints_exact_json() -> None:
    run = SymbolRun(["rename", "SEARCH#00ff:1:match#grand_total", "--json", "--root", "/w"])
    assert run.code == 0 and run.err == ""
    engine = run.engines[0]
    assert engine.calls == [("rename", {"ref": "SEARCH#00ff:1:match", "new_name": "grand_total"})]
    assert (engine.root, engine.closed) == ("/w", True)
    assert json.loads(run.out) == RENAME_RESPONSE
    assert run.out.count("\n") == 1


def test_rename_human_output_lists_the_untouched_occurrences() -> None:
    run = SymbolRun(["rename", "SEARCH#00ff:1:match", "grand_total"])
    assert run.code == 0 and "\x1b[" not in run.out
    assert run.out.splitlines() == [
        "RESULT#7e7e7e7e rename: 1 occurrence in 1 file",
        "--- a/shop/models.py",
        "+++ b/shop/models.py",
        "@@ -1 +1 @@",
        "-def total():",
        "+def grand_total():",
        "not renamed (text matches, review them):",
        "  shop/report.py:5  total = 0",
    ]


@pytest.mark.parametrize(
    ("ref", "code", "exit_code"),
    [
        ("SEARCH#5ta1e:1:match", "stale_reference", 3),
        ("SEARCH#5e7ac:1:match", "unsupported", 2),
        ("SEARCH#dead:1:match", "server_unavailable", 5),
    ],
)
def test_rename_errors_map_to_spec_codes(ref: str, code: str, exit_code: int) -> None:
    run = SymbolRun(["rename", ref, "x", "--json"])
    assert run.code == exit_code
    assert json.loads(run.out)["error"]["code"] == code
    run = SymbolRun(["rename", ref, "x"])
    assert run.code == exit_code and run.out == ""
    assert run.err.startswith(f"sleuth: error[{code}]: ")


def test_doctor_json_is_the_list_and_human_is_a_table() -> None:
    run = SymbolRun(["doctor", "--json", "--root", "/w"])
    assert run.code == 0 and json.loads(run.out) == DOCTOR_ROWS
    assert run.engines[0].calls == [("doctor", {})] and run.engines[0].closed
    run = SymbolRun(["doctor"])
    lines = run.out.splitlines()
    assert lines[0].split() == ["language", "server", "found", "version", "install"]
    assert lines[1].split()[:4] == ["python", "ty", "yes", "ty"]
    assert lines[2].split()[:4] == ["go", "gopls", "no", "-"]
    assert lines[2].endswith("apt-get install gopls golang-go")
    assert (
        lines[3] == "no server for go: symbols: answers there are syntactic and rename is "
        "unsupported"
    )


def test_help_lists_rename_and_doctor() -> None:
    text = cli.build_parser().format_help()
    for verb in ("rename", "doctor"):
        assert f"    {verb} " in text


def _mcp_symbol_call(tool: str, arguments: dict[str, Any]) -> tuple[list[Any], Any, list[Any]]:
    engines: list[SymbolFakeEngine] = []

    def factory(root: str, no_ignore: bool) -> SymbolFakeEngine:
        engines.append(SymbolFakeEngine(root, no_ignore))
        return engines[-1]

    async def go() -> tuple[list[Any], Any]:
        engine = EngineThread(factory, ".", False)
        try:
            server = build_server(engine)
            return await server.list_tools(), await server.call_tool(tool, arguments)
        finally:
            engine.close()

    tools, result = anyio.run(go)
    return tools, result, engines[0].calls


@pytest.mark.parametrize(
    "arguments",
    [
        {"ref": "SEARCH#00ff:1:match", "new_name": "grand_total"},
        {"ref": "SEARCH#00ff:1:match#grand_total"},
    ],
)
def test_mcp_rename_tool(arguments: dict[str, Any]) -> None:
    tools, result, calls = _mcp_symbol_call("rename", arguments)
    spec = {t.name: t for t in tools}["rename"]
    assert set(spec.input_schema["properties"]) == {"ref", "new_name", "force"}
    assert spec.input_schema["required"] == ["ref"]
    assert spec.annotations.read_only_hint is False
    assert result.is_error is False
    assert calls == [("rename", {"ref": "SEARCH#00ff:1:match", "new_name": "grand_total"})]
    assert result.structured_content == RENAME_RESPONSE
    lines = result.content[0].text.splitlines()
    assert lines[0] == "RESULT#7e7e7e7e rename: 1 occurrence in 1 file"
    assert lines[-2:] == [
        "not renamed (text matches, review them):",
        "  shop/report.py:5  total = 0",
    ]


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({"ref": "SEARCH#00ff:1:match"}, "invalid_query"),
        ({"ref": "SEARCH#00ff:1:match", "new_name": "no way"}, "invalid_query"),
        ({"ref": "SEARCH#5e7ac:1:match", "new_name": "x"}, "unsupported"),
        ({"ref": "SEARCH#5ta1e:1:match", "new_name": "x"}, "stale_reference"),
    ],
)
def test_mcp_rename_errors(arguments: dict[str, Any], code: str) -> None:
    _, result, _ = _mcp_symbol_call("rename", arguments)
    assert result.is_error is True
    assert result.structured_content["error"]["code"] == code
    assert result.content[0].text.startswith(f"error[{code}]: ")


def test_mcp_doctor_tool_wraps_the_rows_in_an_object() -> None:
    tools, result, calls = _mcp_symbol_call("doctor", {})
    spec = {t.name: t for t in tools}["doctor"]
    assert set(spec.input_schema.get("properties") or {}) == set()
    assert spec.annotations.read_only_hint is True
    assert calls == [("doctor", {})]
    assert result.is_error is False
    assert result.structured_content == {"servers": DOCTOR_ROWS, "recovered": []}
    lines = result.content[0].text.splitlines()
    assert lines[0].split() == ["language", "server", "found", "version", "install"]
    assert len(lines) == 4


def test_an_ast_search_leaves_no_worker_process_behind(tmp_path: Path) -> None:
    """A one-shot CLI call lets go of the parse workers its ast: search started (read-ahead
    batches not yet started are dropped), and none is left once they finish."""
    import multiprocessing

    from sleuth.ast_search import workers

    for i in range(40):  # big enough that batches still queued fill the pipe to the workers
        (tmp_path / f"m{i:02}.py").write_text(f"def f{i}(a, b):\n    return g(a, {i})\n" * 6000)
    started: list[object] = []
    dropped: list[object] = []
    real, real_drop = workers.MatchPool.submit, workers.MatchPool.drop_queued

    def spy(self: workers.MatchPool, *args: object) -> object:
        started.append(self)
        return real(self, *args)  # type: ignore[arg-type]

    def drop(self: workers.MatchPool) -> None:
        dropped.append(self)
        real_drop(self)

    before = {child.pid for child in multiprocessing.active_children()}  # other tests' pools
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(workers.MatchPool, "submit", spy)
        mp.setattr(workers.MatchPool, "drop_queued", drop)
        out = io.StringIO()
        code = cli.main(
            ["search", "ast:g($A, $B)", "--root", str(tmp_path), "--json", "--limit", "5"],
            stdout=out,
        )
    assert code == 0 and len(json.loads(out.getvalue())["matches"]) == 5
    if workers._cpus() > 1:  # one CPU: no pool at all
        assert started, "the search used worker processes"
    assert {id(p) for p in started} <= {id(p) for p in dropped}  # the session let it go

    def ours() -> list[object]:
        return [c for c in multiprocessing.active_children() if c.pid not in before]

    deadline = time.monotonic() + 60  # the batches already running finish, then they exit
    while ours() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert ours() == []
