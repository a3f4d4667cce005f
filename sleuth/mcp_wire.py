"""The MCP server's wire (docs/SAFETY.md "bounded work"): every line from the client answered.

The SDK's stdio transport drops any line its JSON-RPC model rejects — broken JSON, a request
without ``params`` of the right type, and a ``"\\ud800"`` escape, which its JSON parser refuses
— with no answer at all, so the client waits forever. ``screen_line`` reads each line before the
SDK does: a line the SDK would drop is answered here (JSON-RPC ``-32700``/``-32600``/``-32602``,
or, for a ``tools/call`` whose arguments are not Unicode, the tool error ``invalid_query`` naming
the argument), and only lines the SDK accepts are passed on. ``Wire`` is that filter as the file
the SDK's transport reads and writes; answers from both are written one whole line at a time.
``tool_error`` is the face's one mapping of ``SleuthError`` to an MCP result.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any, BinaryIO, TypeVar, cast

from mcp_types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    CallToolResult,
    ContentBlock,
    JSONRPCNotification,
    TextContent,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

from sleuth import render
from sleuth.errors import SleuthError
from sleuth.mcp_boot import MAX_MESSAGE_BYTES, EarlyAnswer, claim_stdio
from sleuth.service.requests import check_text, unicode_problem

__all__ = ["screen_line", "tool_error", "text_content", "Wire", "claim_stdio", "MAX_MESSAGE_BYTES"]

T = TypeVar("T")


def text_content(text: str) -> list[ContentBlock]:
    """The MCP text content: control characters written out, never sent raw to the client's
    screen or the model (docs/faces.md#control-characters); structured content keeps them."""
    return [TextContent(type="text", text=render.visible(text))]


def tool_error(exc: SleuthError) -> CallToolResult:
    """The one SleuthError -> MCP mapping: a tool error carrying the error code (docs/errors.md)."""
    payload = render.printable(exc.to_json())  # a message may quote text that is not Unicode
    return CallToolResult(
        content=text_content(render.error_line(payload)), structured_content=payload, is_error=True
    )


def _rpc_error(rid: str | int | None, code: int, message: str) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})


def _request_id(message: Any) -> str | int | None:
    """The message's id when it is one a response can carry back (else null, per JSON-RPC)."""
    rid = message.get("id") if isinstance(message, dict) else None
    if isinstance(rid, bool) or not isinstance(rid, str | int):
        return None
    if isinstance(rid, str) and unicode_problem(rid) is not None:
        return None
    return rid


def _first_bad_text(message: Any) -> tuple[tuple[str | int, ...], str] | None:
    """(path, string) of the first key or string in ``message`` that is not Unicode."""
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), message)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            if unicode_problem(value) is not None:
                return path, value
        elif isinstance(value, dict):
            for key, item in reversed(list(value.items())):
                if unicode_problem(key) is not None:
                    return (*path, key), key
                stack.append(((*path, key), item))
        elif isinstance(value, list):
            stack.extend(((*path, i), item) for i, item in reversed(list(enumerate(value))))
    return None


def _bad_text_answer(message: Any, path: tuple[str | int, ...], text: str) -> str | None:
    """The answer to a message holding text that is not Unicode (None for a notification)."""
    rid = _request_id(message)
    is_call = isinstance(message, dict) and message.get("method") == "tools/call"
    if rid is not None and is_call and path[:2] == ("params", "arguments") and len(path) > 2:
        name = str(path[2])
        try:
            check_text(text, name)
        except SleuthError as exc:  # always: ``text`` is not Unicode
            result = tool_error(exc).model_dump(mode="json", by_alias=True, exclude_unset=True)
            return json.dumps({"jsonrpc": "2.0", "id": rid, "result": result})
    if isinstance(message, dict) and "method" in message and "id" not in message:
        return None  # a notification is never answered, not even when malformed
    where = ".".join(str(p) for p in path) or "the message"
    problem = unicode_problem(text)
    what = problem[1] if problem else "invalid text"
    code = INVALID_PARAMS if rid is not None and path[:1] == ("params",) else INVALID_REQUEST
    return _rpc_error(rid, code, f"{where} is not valid UTF-8 text ({what}): send UTF-8")


def _log(what: str) -> None:
    print(f"sleuth mcp: {what}", file=sys.stderr, flush=True)  # stderr: never the protocol


def screen_line(data: bytes) -> tuple[str | None, str | None]:
    """One line from the client -> (the line for the SDK, an answer to write now).

    A line the SDK's JSON-RPC model accepts is passed on unchanged; any other line is answered
    here, since the SDK would drop it silently (a notification is only logged)."""
    try:
        text, clean = data.decode("utf-8"), True
    except UnicodeDecodeError:  # its bad bytes become lone surrogates, named below
        text, clean = data.decode("utf-8", "surrogateescape"), False
    if not text.strip():
        return None, None
    if clean and b"\\u" not in data:  # no way to hold a lone surrogate: the common case
        try:
            parsed = jsonrpc_message_adapter.validate_json(text, by_name=False)
            if not (isinstance(parsed, JSONRPCNotification) and b'"id"' in data):
                return text, None
        except ValidationError:
            pass
    try:
        message = json.loads(text)
    except (ValueError, RecursionError) as exc:
        return None, _rpc_error(
            None, PARSE_ERROR, f"parse error: {exc}; send one JSON-RPC message per line, as UTF-8"
        )
    if isinstance(message, dict) and "id" in message and _request_id(message) is None:
        # the SDK would take it for a notification (dropping the id) and never answer it
        why = (
            "is not valid UTF-8 text"
            if isinstance(message["id"], str)
            else ("must be a string or an integer")
        )
        return None, _rpc_error(None, INVALID_REQUEST, f"invalid request: the id {why}")
    bad = _first_bad_text(message)
    if bad is not None:
        answer = _bad_text_answer(message, *bad)
        if answer is None:
            _log("dropped a notification holding text that is not UTF-8")
        return None, answer
    try:
        jsonrpc_message_adapter.validate_json(text, by_name=False)
        return text, None
    except ValidationError as exc:
        problems = _problems(message, exc)
    if (
        isinstance(message, dict)
        and "method" not in message
        and ("result" in message or "error" in message)
    ):
        _log(f"dropped a malformed response: {problems}")
        return None, None
    if isinstance(message, dict) and "method" in message and "id" not in message:
        _log(f"dropped a malformed notification: {problems}")
        return None, None
    return None, _rpc_error(_request_id(message), INVALID_REQUEST, f"invalid request: {problems}")


def _problems(message: Any, exc: ValidationError) -> str:
    """What is wrong, said of the kind of message it was meant to be (the SDK's model is a
    union, so its errors list every member)."""
    if isinstance(message, list):
        return "a batch (a JSON array) is not supported: send one JSON object per line"
    if not isinstance(message, dict):
        return "a message is one JSON object"
    if "method" not in message and "result" not in message and "error" not in message:
        return 'a request needs "jsonrpc": "2.0", an "id" and a "method"'
    meant = (
        "JSONRPCRequest"
        if "id" in message and "method" in message
        else ("JSONRPCNotification" if "method" in message else None)
    )
    found = [err for err in exc.errors() if meant is None or err["loc"][:1] == (meant,)]
    lines = [
        f"{'.'.join(str(p) for p in err['loc'][1:]) or 'message'}: {err['msg']}"
        for err in found or exc.errors()
    ]
    return "; ".join(list(dict.fromkeys(lines))[:4])


class Wire:
    """The protocol's stdin and stdout as the one async text file the SDK's stdio transport
    iterates over and writes to: only lines ``screen_line`` passes are handed on, the others
    answered here; each write is one whole line under the lock those answers take too.

    Each read and write runs on its own daemon thread (``_on_daemon_thread``)."""

    def __init__(
        self, wire_in: BinaryIO, wire_out: BinaryIO, early: EarlyAnswer | None = None
    ) -> None:
        self._in = wire_in
        self._out = wire_out
        self._lock = threading.Lock()
        self._early = early
        self._first = early.first if early is not None else None

    def _readline(self) -> str:
        while True:
            if self._first is not None:  # the line ``sleuth.mcp_boot`` read (and answered)
                data, self._first = self._first, None
            else:
                data = self._in.readline(MAX_MESSAGE_BYTES + 1)
            if not data:
                return ""
            if len(data) > MAX_MESSAGE_BYTES and not data.endswith(b"\n"):
                while data and not data.endswith(b"\n"):  # skip the rest of the line
                    data = self._in.readline(1024 * 1024)
                self._write(
                    _rpc_error(
                        None, INVALID_REQUEST, f"message over {MAX_MESSAGE_BYTES} bytes: not read"
                    )
                    + "\n"
                )
                continue
            line, answer = screen_line(data)
            if answer is not None:
                self._write(answer + "\n")
            if line is not None:
                return line

    def _write(self, text: str) -> None:
        data = text.encode("utf-8", "backslashreplace")
        with self._lock:
            self._out.write(data)
            self._out.flush()

    async def __aiter__(self) -> AsyncIterator[str]:
        while line := await _on_daemon_thread(self._readline):
            yield line

    async def write(self, text: str) -> None:
        if self._early is not None and not self._early.filter(text):
            return  # the answer to an initialize the client was given already
        await _on_daemon_thread(self._write, text)

    async def flush(self) -> None:
        """Every ``write`` flushes its line already."""


async def _on_daemon_thread(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` on a new daemon thread: the wire's reads and writes may block on the
    client forever, and the interpreter's exit joins every other thread (so Ctrl-C hung while
    ``anyio.wrap_file``'s worker waited for the client's next line)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, exc: BaseException | None) -> None:
        if future.done():  # cancelled meanwhile: nobody waits for it
            return
        if exc is not None:
            future.set_exception(exc)
        else:
            future.set_result(cast(T, result))

    def work() -> None:
        try:
            result, exc = fn(*args), None
        except BaseException as error:  # raised in the awaiting task instead
            result, exc = None, error
        with contextlib.suppress(RuntimeError):  # the loop is closed: serving ended
            loop.call_soon_threadsafe(settle, result, exc)

    threading.Thread(target=work, name="sleuth-mcp-wire", daemon=True).start()
    return await future
