"""``sleuth.mcp_wire.screen_line``: every line the SDK would drop is answered (or, for a
notification or a response, logged), and every other line is handed on unchanged."""

from __future__ import annotations

import json

import pytest

from sleuth import render
from sleuth.mcp_wire import screen_line


def _answer(line: bytes) -> dict[str, object]:
    passed, answer = screen_line(line)
    assert passed is None and answer is not None
    message: dict[str, object] = json.loads(answer)
    answer.encode("utf-8")  # always valid UTF-8 on the wire
    return message


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}',
        b'{"jsonrpc": "2.0", "method": "notifications/initialized"}',
        b'{"jsonrpc": "2.0", "id": 2, "result": {}}',
        '{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "search", '
        '"arguments": {"query": "café \\ud83d\\ude00"}}}'.encode(),
    ],
)
def test_valid_lines_pass_unchanged(line: bytes) -> None:
    assert screen_line(line) == (line.decode(), None)


def test_blank_lines_are_skipped() -> None:
    assert screen_line(b"   \n") == (None, None)


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": "x"}',
        b'{"jsonrpc": "2.0", "method": "notifications/x", "params": {"a": "\\udcff"}}',
        b'{"jsonrpc": "2.0", "id": 5, "result": 7}',
    ],
)
def test_malformed_notifications_and_responses_get_no_answer(
    line: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    assert screen_line(line) == (None, None)
    assert capsys.readouterr().err.startswith("sleuth mcp: dropped a ")


def test_an_id_the_sdk_would_drop_is_invalid_request() -> None:
    for rid in (b"1.5", b"true", b"null", b'"\\ud800"', b"[1]"):
        line = b'{"jsonrpc": "2.0", "id": ' + rid + b', "method": "ping"}'
        message = _answer(line)
        assert message["id"] is None
        assert message["error"] == {
            "code": -32600,
            "message": "invalid request: the id "
            + (
                "is not valid UTF-8 text"
                if rid.startswith(b'"')
                else "must be a string or an integer"
            ),
        }


def test_a_bad_argument_name_is_named_in_the_tool_error() -> None:
    message = _answer(
        b'{"jsonrpc": "2.0", "id": 4, "method": "tools/call", '
        b'"params": {"name": "search", "arguments": {"query": "x", "\\ud800": 1}}}'
    )
    result = message["result"]
    assert isinstance(result, dict) and result["isError"] is True
    error = result["structuredContent"]["error"]
    assert error["code"] == "invalid_query"
    assert error["details"]["argument"] == "\\ud800"  # printable, as the client sent it
    assert render.error_line(result["structuredContent"]).startswith(
        "error[invalid_query]: \\ud800 "
    )


def test_a_bad_tool_name_is_invalid_params() -> None:
    message = _answer(
        b'{"jsonrpc": "2.0", "id": 6, "method": "tools/call", '
        b'"params": {"name": "s\\udfffx", "arguments": {}}}'
    )
    assert message["id"] == 6
    error = message["error"]
    assert isinstance(error, dict) and error["code"] == -32602
    assert str(error["message"]).startswith("params.name is not valid UTF-8 text")


def test_printable_writes_surrogates_out() -> None:
    data = {"a\udcff": ["x\ud800", ("y", "\udfff")], "n": 1}
    assert render.printable(data) == {"a\\udcff": ["x\\ud800", ["y", "\\udfff"]], "n": 1}
    json.dumps(render.printable(data), ensure_ascii=False).encode("utf-8")
