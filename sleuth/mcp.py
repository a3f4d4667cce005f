"""The MCP server face (SPEC §10): ``sleuth mcp`` serves the verbs as tools over stdio.

Built on the official SDK (``mcp`` 2.x, where FastMCP became
``mcp.server.mcpserver.MCPServer``). Faces are thin (DESIGN): each tool validates its arguments
into the same frozen request the CLI builds, runs the same verb function (``sleuth.cli.VERBS``)
and answers with

- ``structuredContent``: the verb's JSON, identical to ``sleuth <verb> --json``;
- text content: the compact rendering of ``sleuth.render`` (header + ``path:line:col #n  text``
  for ``search``, header + ``path:line| text`` for ``read`` and ``select``, header + unified
  diff for the edits ``replace``, ``insert``, ``delete``, ``copy``, ``move`` and ``undo``;
  header + diff + the untouched occurrences of the old name for ``rename``; the server table
  for ``doctor``).

``doctor`` is the one tool whose CLI answer is a list: MCP structured content must be an
object, so the tool answers ``{"servers": [rows]}`` with the rows of ``sleuth doctor --json``.

Failures are tool errors (``isError``) whose text is ``error[CODE]: message`` and whose
structured content is the SPEC §3.5 object; ``tool_error`` is this face's one mapping of
``SleuthError`` to output. Arguments the SDK's schema validation rejects, an unknown tool and
an unknown argument are answered the same way, as ``invalid_query``.

Every request is answered, even a malformed one. The SDK's stdio transport drops any line its
JSON-RPC model rejects — broken JSON, a request without ``params`` of the right type, and a
``"\\ud800"`` escape, which its JSON parser refuses — with no answer at all, so the client waits
forever. ``screen_line`` therefore reads each line before the SDK does: a line the SDK would
drop is answered here (JSON-RPC ``-32700``/``-32600``/``-32602``, or, for a ``tools/call``
whose arguments are not Unicode, the tool error ``invalid_query`` naming the argument), and
only lines the SDK accepts are passed on. ``_Wire`` is that filter as the file the SDK's
transport reads and writes; answers from both are written one whole line at a time.

One engine per server process keeps caches warm across calls. It lives on one dedicated worker
thread (``EngineThread``): the SDK would run a sync tool on any pool thread, while the engine's
SQLite state is bound to the thread that opened it, and a blocking search must not stall the
event loop. Tools are registered from the ``TOOLS`` table, so a new verb is one method and one
entry.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import os
import sys
import threading
import traceback
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Annotated, Any, BinaryIO, TypeVar, cast

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.stdio import stdio_server
from mcp_types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    CallToolResult,
    ContentBlock,
    InputRequiredResult,
    JSONRPCNotification,
    TextContent,
    ToolAnnotations,
    jsonrpc_message_adapter,
)
from pydantic import Field, ValidationError
from pydantic_core import PydanticSerializationError, to_json

from sleuth import render
from sleuth.cli import (
    DoctorRequest,
    EditRequest,
    EditVerb,
    Engine,
    EngineFactory,
    ReadRequest,
    RenameRequest,
    SelectRequest,
    run_doctor,
    run_edit,
    run_read,
    run_rename,
    run_search,
    run_select,
)
from sleuth.errors import Internal, InvalidQuery, SleuthError
from sleuth.query.request import SearchRequest, check_text, unicode_problem

if TYPE_CHECKING:
    from anyio import AsyncFile

__all__ = [
    "serve", "build_server", "EngineThread", "SleuthTools", "ToolSpec", "TOOLS", "tool_error",
    "screen_line", "MAX_MESSAGE_BYTES",
]

T = TypeVar("T")

INSTRUCTIONS = (
    "sleuth searches one workspace. Every match has references: SEARCH#H:n:match (the match) "
    "and SEARCH#H:n:line (its lines), where SEARCH#H is the result id in the first line and #n "
    "the match number. Query prefixes: regex:, files:, ast:, symbols:, graph:; plain text is a "
    "literal with regex and word fallbacks. Zero matches with an incomplete search prove nothing. "
    "read shows a path or a reference's text (SEARCH#H:all:line for every match's lines); read "
    "and select answer a RESULT# that is itself a reference, e.g. a search path. Edits (replace, "
    "insert, delete, copy, move) go through a reference, write every file or none, refuse a "
    "reference whose file changed (stale_reference: search again), and answer a RESULT# of the "
    "resulting text plus a unified diff; undo takes that RESULT#. symbols:NAME lists declarations "
    "(with navigation='references' their references too), each with an id for symbol:#ID; "
    "rename(ref, new_name) renames a symbols: match through the language server (doctor lists "
    "the servers); precision 'syntactic' means no server ran and rename is unsupported."
)


class EngineThread:
    """The server's one engine, created, used and closed on one dedicated thread."""

    def __init__(self, factory: EngineFactory, root: str, no_ignore: bool = False) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sleuth-engine")
        try:
            # Built eagerly so a bad --root fails before the handshake, with its exit code.
            self._engine: Engine = self._pool.submit(factory, root, no_ignore).result()
        except BaseException:
            self._pool.shutdown(wait=False)
            raise

    async def call(self, fn: Callable[[Engine], T]) -> T:
        """Run ``fn(engine)`` on the engine thread without blocking the event loop."""
        return await asyncio.wrap_future(self._pool.submit(fn, self._engine))

    def close(self) -> None:
        try:
            self._pool.submit(self._engine.close).result()
        finally:
            self._pool.shutdown(wait=True)


def server_engine(root: str, no_ignore: bool) -> Engine:
    """The server's long-lived ``Workbench``, which may build its index in the background."""
    from sleuth.api import Workbench

    return Workbench(root, no_ignore=no_ignore, watch=True)


def _text(text: str) -> list[ContentBlock]:
    return [TextContent(type="text", text=text)]


def tool_error(exc: SleuthError) -> CallToolResult:
    """The one SleuthError -> MCP mapping: a tool error carrying the SPEC code (§3.5)."""
    payload = render.printable(exc.to_json())  # a message may quote text that is not Unicode
    return CallToolResult(content=_text(render.error_line(payload)), structured_content=payload,
                          is_error=True)


def _internal(exc: BaseException) -> Internal:
    if os.environ.get("SLEUTH_DEBUG") == "1":
        traceback.print_exception(exc)  # stderr: never the protocol stream
    return Internal(f"unexpected {type(exc).__name__}: {exc}",
                    details={"exception": type(exc).__name__})


Strings = Sequence[str]
Ints = Sequence[int]
EditRef = Annotated[str, Field(description="what to edit: SEARCH#H:n:match, SEARCH#H:n:line, "
                                           "SEARCH#H:all:match, a capture's RESULT#ID ...")]
EditText = Annotated[str, Field(description="the new text, used exactly (line endings follow "
                                            "the file's)")]
Target = Annotated[str, Field(description="a reference, or PATH:LINE (before that line)")]


class SleuthTools:
    """The tool functions; their signatures are the tools' input schemas."""

    def __init__(self, engine: EngineThread) -> None:
        self._engine = engine

    async def _answer(
        self,
        build: Callable[[], T],
        run: Callable[[Engine, T], dict[str, Any]],
        compact: Callable[[Mapping[str, Any]], str],
    ) -> CallToolResult:
        try:
            request = build()  # validation first, no I/O (DESIGN)
            data = await self._engine.call(lambda engine: run(engine, request))
        except SleuthError as exc:
            return tool_error(exc)
        except Exception as exc:
            return tool_error(_internal(exc))
        try:
            to_json(data)  # what the SDK's writer does: it would fail there, with no answer
        except PydanticSerializationError:
            data = render.printable(data)
        return CallToolResult(content=_text(compact(data)), structured_content=data)

    async def search(
        self,
        query: Annotated[str, Field(description="text; or a prefix: regex:, files:, ast:, "
                                                "symbols:, symbol:#ID, graph:, semantic:")],
        path: Annotated[str, Field(description="folder, file or reference to search in")] = "/",
        include: Annotated[Strings, Field(description="globs a path must match")] = (),
        exclude: Annotated[Strings, Field(description="globs that drop a path")] = (),
        limit: Annotated[int, Field(description="matches per page, at most 500")] = 100,
        cursor: Annotated[str | None, Field(description="next_cursor of the previous page")] = None,
        context: Annotated[int, Field(description="context lines before and after")] = 1,
        case_sensitive: bool = True,
        lang: Annotated[str | None, Field(description="language for ast:/symbols:")] = None,
        navigation: Annotated[str | None, Field(description="'references' with symbols:")] = None,
        selector: Annotated[str | None, Field(description="ast: node kind to report inside a "
                                                          "context pattern")] = None,
        strictness: Annotated[str | None, Field(description="ast: cst|smart|ast|relaxed|"
                                                            "signature")] = None,
        depth: Annotated[int | None, Field(description="graph: dependents depth")] = None,
    ) -> CallToolResult:
        """Search the workspace: literal text (falls back to regex, then words), or a prefixed
        query. Answers the result id (SEARCH#H) and one line per match (path:line:col #n text);
        SEARCH#H:n:match and SEARCH#H:n:line reference match n."""
        return await self._answer(
            lambda: SearchRequest.build(
                query, path=path, include=include, exclude=exclude, limit=limit, cursor=cursor,
                context=context, lang=lang, navigation=navigation, case_sensitive=case_sensitive,
                selector=selector, strictness=strictness, depth=depth,
            ),
            run_search,
            render.search_compact,
        )

    async def read(
        self,
        target: Annotated[str, Field(description="a path, or a reference: SEARCH#H:n:match, "
                                                 "SEARCH#H:n:line, SEARCH#H:all:line, RESULT#ID")],
        offset: Annotated[int | None, Field(description="first line to read (1-based)")] = None,
        limit: Annotated[int | None, Field(description="number of lines to read")] = None,
    ) -> CallToolResult:
        """Read a file (optionally a window of lines) or the exact text a reference selects.
        Answers a RESULT# id for what was shown (usable as a reference, e.g. as a search path)
        and one line per selected line: path:line| text."""
        return await self._answer(
            lambda: ReadRequest.build(target, offset=offset, limit=limit),
            run_read,
            render.read_compact,
        )

    async def select(
        self,
        ref: Annotated[str, Field(description="a result: SEARCH#H (or SEARCH#H:all:line for "
                                              "whole lines) or RESULT#ID")],
        items: Annotated[Ints, Field(description="match numbers #n to keep")],
    ) -> CallToolResult:
        """Keep some matches (their #n) of a result as a new RESULT#, across all its pages.
        Answers the RESULT# id and one line per selected line: path:line| text."""
        return await self._answer(
            lambda: SelectRequest.build(ref, list(items)),
            run_select,
            render.read_compact,
        )

    async def _edit(self, verb: EditVerb, ref: str, *, text: str | None = None,
                    where: str = "before", to: str | None = None) -> CallToolResult:
        return await self._answer(
            lambda: EditRequest.build(verb, ref, text=text, where=where, to=to),
            run_edit,
            partial(render.edit_compact, verb=verb),
        )

    async def replace(self, ref: EditRef, text: EditText) -> CallToolResult:
        """Replace every range a reference selects with text, in every file or none (a changed
        file is stale_reference: search again). Answers a RESULT# selecting the new text, then
        a unified diff; undo(result) reverts it."""
        return await self._edit("replace", ref, text=text)

    async def insert(
        self,
        ref: EditRef,
        text: EditText,
        where: Annotated[str, Field(description="'before' or 'after' each range")] = "before",
    ) -> CallToolResult:
        """Insert text before (or after) every range a reference selects. Answers a RESULT#
        selecting the inserted text, then a unified diff."""
        return await self._edit("insert", ref, text=text, where=where)

    async def delete(self, ref: EditRef) -> CallToolResult:
        """Delete every range a reference selects (a :line reference takes its line breaks
        too). Answers a RESULT# selecting the empty positions, then a unified diff."""
        return await self._edit("delete", ref)

    async def copy(self, ref: EditRef, to: Target) -> CallToolResult:
        """Copy the text a reference selects to a target (a reference, or PATH:LINE to insert
        before that line). Answers a RESULT# selecting the copy, then a unified diff."""
        return await self._edit("copy", ref, to=to)

    async def move(self, ref: EditRef, to: Target) -> CallToolResult:
        """Move the text a reference selects to a target (a reference, or PATH:LINE), in one
        all-or-nothing edit. Answers a RESULT# selecting the moved text, then a unified diff."""
        return await self._edit("move", ref, to=to)

    async def undo(
        self,
        result: Annotated[str, Field(description="the RESULT# an edit answered")],
    ) -> CallToolResult:
        """Undo an edit: restore the exact bytes it replaced, if its files still hold what it
        wrote (otherwise conflict, nothing written). Answers a RESULT# and a unified diff."""
        return await self._edit("undo", result)

    async def rename(
        self,
        ref: Annotated[str, Field(description="the symbol's name: a symbols: match "
                                              "SEARCH#H:n:match (or REF#NEW_NAME)")],
        new_name: Annotated[str | None, Field(description="the new name (omit with "
                                                          "REF#NEW_NAME)")] = None,
        force: Annotated[bool, Field(description="rename even where the new name is already "
                                                 "used (otherwise conflict)")] = False,
    ) -> CallToolResult:
        """Rename a symbol through its language server (native rename, every file or none;
        unsupported without a server). Answers a RESULT# selecting every new name, a unified
        diff, and the text occurrences of the old name it did not change, for review."""
        return await self._answer(
            lambda: RenameRequest.build(ref, new_name, force),
            run_rename,
            render.rename_compact,
        )

    async def doctor(self) -> CallToolResult:
        """The language servers per language: found or not, version, how to install. Without
        a server symbols: answers are syntactic and rename is unsupported."""
        return await self._answer(
            DoctorRequest,
            lambda engine, request: {
                "servers": run_doctor(engine, request),
                "recovered": engine.recovered(),
            },
            render.doctor_compact,
        )


@dataclass(frozen=True)
class ToolSpec:
    """One MCP tool: its name, the ``SleuthTools`` method and whether it only reads."""

    name: str
    method: str
    read_only: bool = True


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec("search", "search"),
    ToolSpec("read", "read"),
    ToolSpec("select", "select"),
    ToolSpec("replace", "replace", read_only=False),
    ToolSpec("insert", "insert", read_only=False),
    ToolSpec("delete", "delete", read_only=False),
    ToolSpec("copy", "copy", read_only=False),
    ToolSpec("move", "move", read_only=False),
    ToolSpec("undo", "undo", read_only=False),
    ToolSpec("rename", "rename", read_only=False),
    ToolSpec("doctor", "doctor"),
)


class _Server(MCPServer[Any]):
    """MCPServer whose argument failures carry a SPEC code, served through ``_Wire``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tool_arguments: dict[str, tuple[str, ...]] = {}
        """Each tool's argument names, from its method's signature (filled by build_server)."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            _check_call(name, arguments or {}, self.tool_arguments)
        except SleuthError as exc:
            return tool_error(exc)
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc, UnexpectedToolError) or not isinstance(exc.__cause__, ValidationError):
                raise
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
                for err in exc.__cause__.errors()
            )
            return tool_error(InvalidQuery(f"invalid arguments for {name}: {problems}",
                                           details={"tool": name}))

    async def run_stdio_async(self) -> None:
        """The SDK's stdio transport reading and writing through ``_Wire``.

        ``_lowlevel_server`` is the SDK's own attribute (mcp 2.x, as its ``run_stdio_async``
        uses it); every MCP end-to-end test runs through here."""
        with _claim_stdio() as (wire_in, wire_out):
            # duck-typed: the transport only iterates over lines, writes and flushes
            wire = cast("AsyncFile[str]", _Wire(wire_in, wire_out))
            async with stdio_server(wire, wire) as (read_stream, write_stream):
                lowlevel = self._lowlevel_server
                await lowlevel.run(read_stream, write_stream,
                                   lowlevel.create_initialization_options())


def _check_call(name: str, arguments: Mapping[str, Any],
                known: Mapping[str, tuple[str, ...]]) -> None:
    """``invalid_query`` for an unknown tool, an unknown argument or text that is not Unicode."""
    if name not in known:
        raise InvalidQuery(f"unknown tool {name!r}: the tools are {', '.join(known)}",
                           details={"tool": name, "valid": list(known)})
    valid = known[name]
    unknown = [key for key in arguments if key not in valid]
    if unknown:
        raise InvalidQuery(
            f"{name} has no argument {', '.join(map(repr, unknown))}: its arguments are "
            f"{', '.join(valid) or '(none)'}",
            details={"tool": name, "unknown": unknown, "valid": list(valid)},
        )
    for key, value in arguments.items():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str):
                check_text(item, key)


# --- the wire: every line answered (see the module docstring) ---------------------------------

MAX_MESSAGE_BYTES = 128 * 1024 * 1024
"""Longest JSON-RPC line read: room for the largest edit text (16 Mi characters) escaped."""


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
        return None, _rpc_error(None, PARSE_ERROR, f"parse error: {exc}; send one JSON-RPC "
                                                   "message per line, as UTF-8")
    if isinstance(message, dict) and "id" in message and _request_id(message) is None:
        # the SDK would take it for a notification (dropping the id) and never answer it
        why = "is not valid UTF-8 text" if isinstance(message["id"], str) else (
            "must be a string or an integer")
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
    if isinstance(message, dict) and "method" not in message and (
        "result" in message or "error" in message
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
    meant = "JSONRPCRequest" if "id" in message and "method" in message else (
        "JSONRPCNotification" if "method" in message else None)
    found = [err for err in exc.errors() if meant is None or err["loc"][:1] == (meant,)]
    lines = [f"{'.'.join(str(p) for p in err['loc'][1:]) or 'message'}: {err['msg']}"
             for err in found or exc.errors()]
    return "; ".join(list(dict.fromkeys(lines))[:4])


class _Wire:
    """The protocol's stdin and stdout as the one async text file the SDK's stdio transport
    iterates over and writes to: only lines ``screen_line`` passes are handed on, the others
    answered here; each write is one whole line under the lock those answers take too.

    Each read and write runs on its own daemon thread (``_on_daemon_thread``)."""

    def __init__(self, wire_in: BinaryIO, wire_out: BinaryIO) -> None:
        self._in = wire_in
        self._out = wire_out
        self._lock = threading.Lock()

    def _readline(self) -> str:
        while True:
            data = self._in.readline(MAX_MESSAGE_BYTES + 1)
            if not data:
                return ""
            if len(data) > MAX_MESSAGE_BYTES and not data.endswith(b"\n"):
                while data and not data.endswith(b"\n"):  # skip the rest of the line
                    data = self._in.readline(1024 * 1024)
                self._write(_rpc_error(None, INVALID_REQUEST,
                                       f"message over {MAX_MESSAGE_BYTES} bytes: not read") + "\n")
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


@contextlib.contextmanager
def _claim_stdio() -> Iterator[tuple[BinaryIO, BinaryIO]]:
    """The protocol's own copies of fd 0 and 1; while serving, fd 0 reads the null device and
    fd 1 goes to stderr, so a stray print or child process never corrupts the stream (as the
    SDK's own stdio transport does). Both are put back on exit."""
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    # closefd=False: a worker thread may still be blocked reading the copy when serving ends
    fin = os.fdopen(wire_in, "rb", closefd=False)
    fout = os.fdopen(wire_out, "wb", closefd=False)
    try:
        yield fin, fout
    finally:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)


def build_server(engine: EngineThread) -> MCPServer[Any]:
    """An MCP server with one tool per ``TOOLS`` entry, all sharing ``engine``."""
    server = _Server("sleuth", instructions=INSTRUCTIONS, log_level="WARNING")
    tools = SleuthTools(engine)
    for spec in TOOLS:
        method = getattr(tools, spec.method)
        server.tool_arguments[spec.name] = tuple(inspect.signature(method).parameters)
        server.add_tool(
            method,
            name=spec.name,
            description=inspect.getdoc(method),
            annotations=ToolAnnotations(read_only_hint=spec.read_only,
                                        destructive_hint=not spec.read_only),
        )
    return server


def serve(root: str = ".", *, no_ignore: bool = False,
          engine_factory: EngineFactory | None = None) -> None:
    """Serve over stdio until the client hangs up; engine errors at start-up propagate."""
    engine = EngineThread(engine_factory or server_engine, root, no_ignore)
    try:
        build_server(engine).run("stdio")
    except KeyboardInterrupt:
        pass
    finally:
        engine.close()
