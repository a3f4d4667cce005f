"""Bad input through every face gets an error (docs/errors.md), never a crash or silence
(issue 15).

- Text that is not Unicode (argv bytes that are not UTF-8, a JSON ``\\ud800`` escape) is
  ``invalid_query`` naming the argument, on the CLI and the MCP server.
- The MCP server answers every request it is sent, malformed or not: raw JSON-RPC lines are
  written to ``sleuth mcp`` (the official client cannot send a lone surrogate or broken JSON),
  the other cases go through the official client.
- Unknown CLI flags and MCP arguments are ``invalid_query`` naming them and the valid ones.
- A ``read`` of an ``:all`` too large to answer is refused up front, and matches in files that
  are not UTF-8 carry ``"encoding": "binary-safe"`` in ``--json`` and structured content.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.e2e.conftest import ERROR_KEYS, MATCH_KEYS, mcp_session, run_cli

# A strict UTF-8 stdout, as under an ordinary en_US.UTF-8 locale (a C locale would let
# surrogates out as raw bytes instead of failing).
STRICT = {"PYTHONIOENCODING": "utf-8:strict"}
UTF8_OF_D800 = os.fsdecode(b"\xed\xa0\x80")  # the 3 bytes a lone U+D800 would encode to
NOT_UTF8 = os.fsdecode(b"caf\xff")


def _error(proc: subprocess.CompletedProcess[str], code: str = "invalid_query") -> dict[str, Any]:
    assert proc.returncode == (2 if code == "invalid_query" else proc.returncode), proc.stderr
    error: dict[str, Any] = json.loads(proc.stdout)["error"]
    assert set(error) == ERROR_KEYS and error["code"] == code, error
    return error


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["search", UTF8_OF_D800], "QUERY"),
        (["search", NOT_UTF8], "QUERY"),
        (["search", "get_user", "--path", NOT_UTF8], "--path"),
        (["search", "get_user", f"--path={NOT_UTF8}"], "--path"),
        (["search", "get_user", "--include", "*.py", "--include", NOT_UTF8], "--include"),
        (["search", "get_user", "--exclude", NOT_UTF8], "--exclude"),
        (["search", "get_user", "--cursor", NOT_UTF8], "--cursor"),
        (["read", NOT_UTF8], "TARGET"),
        (["read", f"SEARCH#{NOT_UTF8}:1:match"], "TARGET"),
        (["select", NOT_UTF8, "1"], "REF"),
        (["replace", "SEARCH#00000000:1:match", "--text", NOT_UTF8], "--text"),
        (["replace", NOT_UTF8, "--text", "x"], "REF"),
        (["copy", "SEARCH#00000000:1:match", "--to", NOT_UTF8], "--to"),
        (["undo", NOT_UTF8], "RESULT#ID"),
        (["rename", "SEARCH#00000000:1:match", NOT_UTF8], "NEW"),
    ],
)
def test_cli_argument_that_is_not_utf8_is_invalid_query_naming_it(
    sample_root: Path, args: list[str], named: str
) -> None:
    proc = run_cli([*args, "--root", str(sample_root), "--json"], env=STRICT)
    error = _error(proc)
    assert error["message"].startswith(f"{named} is not valid UTF-8"), error
    assert error["details"]["argument"] == named
    assert proc.stderr.startswith("sleuth: error[invalid_query]: ")
    # without --json: one line on stderr, nothing on stdout
    plain = run_cli([*args, "--root", str(sample_root)], env=STRICT)
    assert plain.returncode == 2 and plain.stdout == ""
    assert plain.stderr.startswith(f"sleuth: error[invalid_query]: {named} is not valid UTF-8")


def test_cli_usage_error_echoing_bytes_is_still_printable(sample_root: Path) -> None:
    # argparse quotes the bad verb back; the message must still be written as UTF-8.
    proc = run_cli([NOT_UTF8, "--root", str(sample_root), "--json"], env=STRICT)
    error = _error(proc)
    assert "invalid choice" in error["message"] and "search" in error["message"]


def test_cli_unknown_flag_names_it_and_the_valid_ones(sample_root: Path) -> None:
    proc = run_cli(["search", "get_user", "--bogus", "1", "--root", str(sample_root), "--json"])
    error = _error(proc)
    assert "--bogus" in error["message"] and "--path" in error["message"]
    assert error["details"]["unknown"] == ["--bogus", "1"]
    assert "--include" in error["details"]["valid"] and "--root" in error["details"]["valid"]
    read = run_cli(["read", "src/app.py", "--line", "3", "--root", str(sample_root), "--json"])
    assert "--offset" in _error(read)["details"]["valid"]


def test_cli_read_of_a_huge_all_is_refused_before_any_work(
    make_workspace: Callable[[dict[str, str | bytes]], Path],
) -> None:
    root = make_workspace({f"src/f{i}.py": "x = hit(1) + hit(2)\n" * 3000 for i in range(2)})
    found = json.loads(
        run_cli(["search", "hit", "--limit", "1", "--root", str(root), "--json"]).stdout
    )
    assert found["total"] == 12_000
    proc = run_cli(["read", f"{found['result']}:all:match", "--root", str(root), "--json"])
    error = _error(proc)
    assert "12000" in error["message"] and "10000" in error["message"]
    assert ":1:match" in error["message"] and "select" in error["message"]
    assert error["details"] == {
        "ranges": 12_000,
        "max_ranges": 10_000,
        "reference": f"{found['result']}:all:match",
    }
    one = run_cli(["read", f"{found['result']}:1:match", "--root", str(root), "--json"])
    assert json.loads(one.stdout)["ranges"][0]["text"] == "hit"


BYTES_FILES: dict[str, str | bytes] = {
    "src/latin.py": b"caf\xe9 = get_user()\n",
    "src/app.py": "user = get_user()\n",
}


def test_binary_safe_marker_in_cli_json_and_human(
    make_workspace: Callable[[dict[str, str | bytes]], Path],
) -> None:
    root = make_workspace(BYTES_FILES)
    proc = run_cli(["search", "get_user", "--root", str(root), "--json"], env=STRICT)
    matches = {m["path"]: m for m in json.loads(proc.stdout)["matches"]}
    assert set(matches["src/app.py"]) == MATCH_KEYS
    assert set(matches["src/latin.py"]) == MATCH_KEYS | {"encoding"}
    assert matches["src/latin.py"]["encoding"] == "binary-safe"
    assert matches["src/latin.py"]["start_byte"] == 7  # byte offsets, not characters
    human = run_cli(["search", "get_user", "--root", str(root)], env=STRICT).stdout
    assert "src/latin.py  [binary-safe: not UTF-8, searched as bytes]" in human
    assert "src/app.py\n" in human


# --- MCP ---------------------------------------------------------------------------------


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class RawServer:
    """``sleuth mcp`` driven by hand-written JSON-RPC lines (bytes), answers read by id."""

    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "sleuth", "mcp", "--root", str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            # Ctrl-C as a terminal delivers it: a suite started in the background of a shell
            # inherits SIGINT ignored, and the server would rightly keep ignoring it
            preexec_fn=_default_sigint,
        )
        self.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "raw", "version": "1"},
                    },
                }
            ).encode()
        )
        assert self.answer()["id"] == 0
        self.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def answer(self, timeout: float = 60.0) -> dict[str, Any]:
        """The next line the server writes, as JSON; fails if none comes (a dropped request)."""
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        assert ready, "the server did not answer"
        line = self.proc.stdout.readline()
        assert line.endswith(b"\n")
        message: dict[str, Any] = json.loads(line.decode("utf-8"))  # strict: valid UTF-8 only
        return message

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)
        assert self.proc.returncode == 0


def _call(rid: int, name: str, arguments: str) -> bytes:
    return (
        f'{{"jsonrpc": "2.0", "id": {rid}, "method": "tools/call", '
        f'"params": {{"name": "{name}", "arguments": {arguments}}}}}'
    ).encode()


def test_mcp_answers_lone_surrogates_and_bytes_as_invalid_query(sample_root: Path) -> None:
    server = RawServer(sample_root)
    try:
        cases = [
            (_call(1, "search", '{"query": "\\ud800"}'), "query"),
            (_call(2, "search", '{"query": "get_user", "path": "src/\\udcff"}'), "path"),
            (_call(3, "search", '{"query": "x", "include": ["*.py", "\\udfff"]}'), "include"),
            (_call(4, "read", '{"target": "caf\\ud83d"}'), "target"),
            (_call(5, "replace", '{"ref": "SEARCH#0:1:match", "text": "\\udc00"}'), "text"),
            # a raw byte that is not UTF-8, inside the JSON string
            (_call(6, "search", '{"query": "caf?"}').replace(b"?", b"\xff"), "query"),
        ]
        for rid, (line, named) in enumerate(cases, start=1):
            server.send(line)
            message = server.answer()
            assert message["id"] == rid
            result = message["result"]
            assert result["isError"] is True
            error = result["structuredContent"]["error"]
            assert set(error) == ERROR_KEYS and error["code"] == "invalid_query"
            assert (
                error["message"].startswith(f"{named} ") and error["details"]["argument"] == named
            )
            assert result["content"][0]["text"].startswith("error[invalid_query]: ")
        # a surrogate pair is one real character, not an error
        server.send(_call(7, "search", '{"query": "get_user \\ud83d\\ude00"}'))
        assert server.answer()["result"]["isError"] is False
        # and the server still answers ordinary calls
        server.send(_call(8, "search", '{"query": "list_users"}'))
        assert server.answer()["result"]["structuredContent"]["total"] == 1
    finally:
        server.close()


def test_mcp_answers_malformed_json_rpc(sample_root: Path) -> None:
    server = RawServer(sample_root)
    try:
        for line, rid, code in [
            (b"not json", None, -32700),
            (b'{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": "zzz"}', 9, -32600),
            (b'{"jsonrpc": "2.0", "id": 10}', 10, -32600),
            (b"[1, 2]", None, -32600),
            (
                b'{"jsonrpc": "2.0", "id": 11, "method": "tools/list", "params": {"x": "\\ud800"}}',
                11,
                -32602,
            ),
            (b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "ping"}', None, -32600),
        ]:
            server.send(line)
            message = server.answer()
            assert message["id"] == rid and message["error"]["code"] == code, message
            assert message["error"]["message"]
        server.send(b'{"jsonrpc": "2.0", "id": 12, "method": "nosuch"}')
        assert server.answer()["error"]["code"] == -32601  # the SDK's own answer, untouched
        server.send(b'{"jsonrpc": "2.0", "id": 13, "method": "ping"}')
        assert server.answer() == {"jsonrpc": "2.0", "id": 13, "result": {}}
    finally:
        server.close()


def test_mcp_unknown_tool_unknown_argument_and_wrong_type(sample_root: Path) -> None:
    async def go() -> None:
        async with mcp_session(sample_root) as session:
            unknown = await session.call_tool("nosuch", {"query": "x"})
            assert unknown.is_error is True
            error = unknown.structured_content["error"]
            assert error["code"] == "invalid_query" and "nosuch" in error["message"]
            assert "search" in error["details"]["valid"]

            extra = await session.call_tool("search", {"query": "get_user", "bogus": 1})
            assert extra.is_error is True
            error = extra.structured_content["error"]
            assert error["code"] == "invalid_query"
            assert "bogus" in error["message"] and "path" in error["message"]
            assert error["details"]["unknown"] == ["bogus"]
            assert "cursor" in error["details"]["valid"]

            wrong = await session.call_tool("read", {"target": 5})
            assert wrong.structured_content["error"]["code"] == "invalid_query"
            assert "target" in wrong.structured_content["error"]["message"]

            ok = await session.call_tool("search", {"query": "list_users"})
            assert ok.is_error is False

    anyio.run(go)


def test_mcp_structured_content_carries_binary_safe(
    make_workspace: Callable[[dict[str, str | bytes]], Path],
) -> None:
    root = make_workspace(BYTES_FILES)

    async def go() -> None:
        async with mcp_session(root) as session:
            result = await session.call_tool("search", {"query": "get_user"})
            matches = {m["path"]: m for m in result.structured_content["matches"]}
            assert set(matches["src/app.py"]) == MATCH_KEYS
            assert matches["src/latin.py"]["encoding"] == "binary-safe"
            text = result.content[0].text
            assert "binary-safe (not UTF-8, searched as bytes): src/latin.py" in text

    anyio.run(go)


def test_mcp_server_stops_on_ctrl_c_while_it_waits_for_a_line(sample_root: Path) -> None:
    # The reader blocked on stdin must not keep the process alive: before, the interpreter's
    # exit joined the SDK's worker thread and waited for the client's next line forever.
    server = RawServer(sample_root)
    server.send(_call(1, "search", '{"query": "list_users"}'))
    assert server.answer()["result"]["isError"] is False
    server.proc.send_signal(signal.SIGINT)
    try:
        code = server.proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        server.proc.send_signal(signal.SIGUSR1)  # the server prints where each thread waits
        time.sleep(2)
        server.proc.kill()
        _, stderr = server.proc.communicate(timeout=30)
        raise AssertionError(
            "the server did not stop on Ctrl-C; its threads:\n" + stderr.decode(errors="replace")
        ) from None
    assert code == 0
    assert server.proc.stdin is not None
    server.proc.stdin.close()
