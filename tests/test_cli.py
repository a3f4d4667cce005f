"""Unit tests of the faces with a fake engine: CLI parsing, output, error mapping, and the
MCP tool table (in-process, through the SDK's own ``call_tool``)."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from typing import Any

import anyio
import pytest

from sleuth import cli
from sleuth.errors import ERROR_CODES, NotFound, SleuthError, StaleReference
from sleuth.mcp import EngineThread, build_server

RESPONSE: dict[str, Any] = {
    "query": "get_user", "mode": "literal", "fallback": None, "result": "SEARCH#00ff",
    "complete": True, "incomplete_reason": None, "total": 1,
    "matches": [{
        "n": 1, "path": "src/app.py", "line": 2, "column": 5, "end_line": 2, "end_column": 13,
        "start_byte": 20, "end_byte": 28, "text": "    get_user(uid)",
        "context": {"before": ["def f(uid):"], "after": []},
        "ref": {"line": "SEARCH#00ff:1:line", "match": "SEARCH#00ff:1:match"},
        "captures": None, "score": None,
    }],
    "all": {"line": "SEARCH#00ff:all:line", "match": "SEARCH#00ff:all:match"},
    "next_cursor": None, "skipped": {"binary": 0, "too_large": 0, "undecodable": 0},
    "possible_names": None,
}


READ_RESPONSE: dict[str, Any] = {
    "result": "RESULT#0a0b0c0d", "source": "SEARCH#00ff:all:line", "refreshed": False,
    "complete": True,
    "ranges": [
        {"path": "src/app.py", "line": 2, "end_line": 2, "start_byte": 12, "end_byte": 36,
         "text": "    user = get_user(uid)"},
        {"path": "src/app.py", "line": 9, "end_line": 10, "start_byte": 90, "end_byte": 110,
         "text": "    x = get_user(\n        2)"},
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

    def read(self, target: str, *, offset: int | None = None,
             limit: int | None = None) -> _Result:
        self.calls.append(("read", {"target": target, "offset": offset, "limit": limit}))
        if target == "RESULT#deadbeef":
            raise NotFound("unknown reference RESULT#deadbeef",
                           details={"reference": target})
        if target == "stale":
            raise StaleReference("stale is stale: src/app.py changed",
                                 details={"reference": target, "files": ["src/app.py"]})
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
    inv = cli.parse_args(["search", "get_user", "--path", "src", "--include", "*.py",
                          "--include", "*.pyi", "--exclude", "t/**", "--limit", "7",
                          "--context", "2", "-i", "--lang", "python", "--cursor", "C1",
                          "--root", "/w", "--json", "--no-ignore"])
    assert (inv.verb, inv.root, inv.json, inv.no_ignore) == ("search", "/w", True, True)
    req = inv.request
    assert (req.query, req.path, req.include, req.exclude) == (
        "get_user", "src", ("*.py", "*.pyi"), ("t/**",))
    assert (req.limit, req.context, req.case_sensitive, req.lang, req.cursor) == (
        7, 2, False, "python", "C1")
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


@pytest.mark.parametrize("argv", [[], ["search"], ["search", "x", "--limit", "ten"],
                                  ["search", "x", "--bogus"], ["frobnicate"]])
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
    (query, options), = run.engines[0].calls
    assert query == "q"
    assert options["path"] == "src" and list(options["include"]) == ["*.py"]
    assert options["case_sensitive"] is False
    assert options["limit"] == 500  # SPEC §3: capped


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
    assert json.loads(run.out) == NotFound(
        "no such path: missing.py", details={"path": "missing.py"}).to_json()
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
    expected = {"invalid_query": 2, "invalid_path": 2, "unsupported": 2, "stale_reference": 3,
                "conflict": 3, "unsafe_selection": 3, "not_found": 4, "server_unavailable": 5,
                "timeout": 5, "cancelled": 5, "rate_limited": 5, "internal": 1}[code]
    out, err = io.StringIO(), io.StringIO()
    assert cli.report_error(ERROR_CODES[code]("m"), as_json=True, stdout=out, stderr=err) == expected
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
    code = cli.main(["search", "get_user"], engine_factory=FakeEngine, stdout=tty,
                    stderr=io.StringIO())
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
    assert [t.name for t in tools] == ["search", "read", "select"]
    props = set(tools[0].input_schema["properties"])
    assert props == {"query", "path", "include", "exclude", "limit", "cursor", "context",
                     "case_sensitive", "lang", "navigation", "selector", "strictness", "depth"}
    assert tools[0].input_schema["required"] == ["query"]


def test_mcp_result_is_structured_json_plus_compact_text() -> None:
    _, result = _mcp_call({"query": "get_user", "include": ["*.py"]})
    assert result.is_error is False
    assert result.structured_content == dict(RESPONSE, query="get_user")
    lines = result.content[0].text.splitlines()
    assert lines == ["SEARCH#00ff  literal  1 match  complete", "src/app.py:2:5 #1  get_user(uid)"]


@pytest.mark.parametrize(("arguments", "code"), [
    ({"query": ""}, "invalid_query"),
    ({"query": "missing"}, "not_found"),
    ({"query": "boom"}, "internal"),
    ({"query": "x", "limit": "many"}, "invalid_query"),
])
def test_mcp_errors_are_tool_errors_with_spec_code(arguments: dict[str, Any], code: str) -> None:
    _, result = _mcp_call(arguments)
    assert result.is_error is True
    assert result.structured_content["error"]["code"] == code
    assert result.content[0].text.startswith(f"error[{code}]: ")


# --- read / select / index -------------------------------------------------------------------


def test_parse_read_select_index_into_frozen_requests() -> None:
    inv = cli.parse_args(["read", "SEARCH#00ff00ff:2:line", "--offset", "3", "--limit", "4",
                          "--json", "--root", "/w"])
    assert (inv.verb, inv.root, inv.json) == ("read", "/w", True)
    assert inv.request == cli.ReadRequest("SEARCH#00ff00ff:2:line", 3, 4)
    with pytest.raises(AttributeError):
        inv.request.target = "x"
    assert cli.parse_args(["read", "a.py"]).request == cli.ReadRequest("a.py", None, None)
    inv = cli.parse_args(["select", "SEARCH#00ff00ff", "1", "3"])
    assert inv.request == cli.SelectRequest("SEARCH#00ff00ff", (1, 3))
    assert cli.parse_args(["index", "--json"]).request == cli.IndexRequest()


@pytest.mark.parametrize("argv", [["read"], ["read", ""], ["read", "a.py", "--offset", "0"],
                                  ["read", "a.py", "--limit", "-1"],
                                  ["read", "a.py", "--limit", "x"], ["select", "SEARCH#00ff00ff"],
                                  ["select", "SEARCH#00ff00ff", "0"],
                                  ["select", "SEARCH#00ff00ff", "one"], ["index", "extra"]])
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


@pytest.mark.parametrize(("target", "code", "exit_code"),
                         [("RESULT#deadbeef", "not_found", 4), ("stale", "stale_reference", 3)])
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
    assert set(schemas["read"]["properties"]) == {"target", "offset", "limit"}
    assert schemas["read"]["required"] == ["target"]
    assert set(schemas["select"]["properties"]) == {"ref", "items"}
    assert sorted(schemas["select"]["required"]) == ["items", "ref"]
    assert result.is_error is False
    assert result.structured_content == dict(READ_RESPONSE, source="src/app.py")
    assert result.content[0].text.splitlines() == [
        "RESULT#0a0b0c0d from src/app.py  2 ranges  complete",
        "src/app.py:2|     user = get_user(uid)",
        "src/app.py:9|     x = get_user(",
        "src/app.py:10|         2)",
    ]
    _, result = _mcp_call({"ref": "SEARCH#00ff00ff", "items": [1, 3]}, "select")
    assert result.is_error is False
    assert result.structured_content["source"] == "SEARCH#00ff00ff"
    assert result.content[0].text.startswith("RESULT#0a0b0c0d from SEARCH#00ff00ff")


@pytest.mark.parametrize(("tool", "arguments", "code"), [
    ("read", {"target": "RESULT#deadbeef"}, "not_found"),
    ("read", {"target": "stale"}, "stale_reference"),
    ("read", {"target": "a.py", "offset": 0}, "invalid_query"),
    ("read", {}, "invalid_query"),
    ("select", {"ref": "SEARCH#00ff00ff", "items": []}, "invalid_query"),
    ("select", {"ref": "SEARCH#00ff00ff", "items": ["x"]}, "invalid_query"),
])
def test_mcp_read_select_errors(tool: str, arguments: dict[str, Any], code: str) -> None:
    _, result = _mcp_call(arguments, tool)
    assert result.is_error is True
    assert result.structured_content["error"]["code"] == code
    assert result.content[0].text.startswith(f"error[{code}]: ")


def test_read_colour_only_on_a_tty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    tty = _Tty()
    assert cli.main(["read", "src/app.py"], engine_factory=FakeEngine, stdout=tty,
                    stderr=io.StringIO()) == 0
    assert "\x1b[" in tty.getvalue() and "get_user(uid)" in tty.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    tty = _Tty()
    cli.main(["read", "src/app.py"], engine_factory=FakeEngine, stdout=tty, stderr=io.StringIO())
    assert "\x1b[" not in tty.getvalue() and "   2 |     user = get_user(uid)" in tty.getvalue()
