"""The MCP server face (docs/faces.md#mcp-server): ``sleuth mcp`` serves the verbs as tools over
stdio.

Built on the official SDK (``mcp`` 2.x, where FastMCP became
``mcp.server.mcpserver.MCPServer``). Faces are thin (docs/architecture.md#faces-are-thin): each
tool validates its arguments into the same frozen request the CLI builds, runs the same verb
function (``sleuth.cli.VERBS``) and answers with

- ``structuredContent``: the verb's JSON, identical to ``sleuth <verb> --json``;
- text content: the compact rendering of ``sleuth.render`` (header + ``path:line:col #n  text``
  for ``search``, header + ``path:line| text`` for ``read`` and ``select``, header + unified
  diff for the edits ``replace``, ``insert``, ``delete``, ``copy``, ``move`` and ``undo``;
  header + diff + the untouched occurrences of the old name for ``rename``; the server table
  for ``doctor``).

``doctor`` is the one tool whose CLI answer is a list: MCP structured content must be an
object, so the tool answers ``{"servers": [rows]}`` with the rows of ``sleuth doctor --json``.

Failures are tool errors (``isError``) whose text is ``error[CODE]: message`` and whose
structured content is the error object of docs/errors.md; ``tool_error`` is this face's one mapping
of ``SleuthError`` to output. Arguments the SDK's schema validation rejects, an unknown tool and
an unknown argument are answered the same way, as ``invalid_query``.

Every request is answered, even a malformed one: the SDK's stdio transport would drop some
lines without an answer, so ``sleuth.mcp_wire`` screens each line before the SDK reads it.

One engine per server process keeps caches warm across calls. It lives on one dedicated worker
thread (``EngineThread``): the SDK would run a sync tool on any pool thread, while the engine's
SQLite state is bound to the thread that opened it, and a blocking search must not stall the
event loop. Tools are registered from the ``TOOLS`` table, so a new verb is one method and one
entry.
"""

from __future__ import annotations

import asyncio
import os
import traceback
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar, cast

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.stdio import stdio_server
from mcp_types import (
    CallToolResult,
    InputRequiredResult,
    ToolAnnotations,
)
from pydantic import ValidationError
from pydantic_core import PydanticSerializationError, to_json

from sleuth import render
from sleuth.errors import Internal, InvalidQuery, SleuthError, locked_error
from sleuth.fields import Request
from sleuth.mcp_boot import EarlyAnswer
from sleuth.mcp_wire import (
    MAX_MESSAGE_BYTES,
    Wire,
    claim_stdio,
    screen_line,
    text_content,
    tool_error,
)
from sleuth.service.requests import check_text
from sleuth.service.tool_schema import tool_arguments, tool_signature
from sleuth.service.verbs import EDIT_VERBS, VERBS, Engine, EngineFactory, JsonAnswer, Verb

if TYPE_CHECKING:
    from anyio import AsyncFile

__all__ = [
    "serve",
    "build_server",
    "EngineThread",
    "SleuthTools",
    "COMPACT",
    "tools",
    "tool_error",
    "screen_line",
    "MAX_MESSAGE_BYTES",
]

T = TypeVar("T")

INSTRUCTIONS = (
    "sleuth searches and edits one workspace through references. Each search answers SEARCH#H "
    "(first line) and numbers its matches #n. References: SEARCH#H:n:match (match n exactly), "
    "SEARCH#H:n:line (its whole lines), SEARCH#H:all:match / SEARCH#H:all:line (every match, "
    "all pages), RESULT#ID (what read, select or an edit answered), RESULT#H:n:NAME (capture "
    "$NAME of ast: match n, listed under it), RESULT#H:all:NAME (that capture of every match: "
    "one edit for all), REF#NEW_NAME (rename's new name). Any reference "
    "can be read, passed as a search path, or edited through; edits check that no file changed "
    "since (stale_reference: search again) and write every file or none. A page says 'more' "
    "and next_cursor when there is more (max_bytes bounds its text); 'complete' only when all "
    "is shown; zero matches of an incomplete search prove nothing. symbols: with "
    "precision 'syntactic' means no language server answered (rename is then unsupported). "
    "semantic:TEXT ranks code by meaning (score 0-1, threshold drops lower); its matches are "
    "hints: select them before editing through them."
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

    workbench = Workbench(root, no_ignore=no_ignore, watch=True)
    workbench.warm_servers()  # a first symbols: seconds later finds its server up
    return workbench


def _internal(exc: BaseException) -> SleuthError:
    locked = locked_error(exc)  # another process holds a state file: retry, not a bug
    if locked is not None:
        return locked
    if os.environ.get("SLEUTH_DEBUG") == "1":
        traceback.print_exception(exc)  # stderr: never the protocol stream
    return Internal(
        f"unexpected {type(exc).__name__}: {exc}", details={"exception": type(exc).__name__}
    )


COMPACT: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "search": render.search_compact,
    "read": render.read_compact,
    "select": render.read_compact,
    "find": render.find_compact,
    **{verb: partial(render.edit_compact, verb=verb) for verb in EDIT_VERBS},
    "rename": render.rename_compact,
    "doctor": render.doctor_compact,
}
"""Each tool's text content: the compact rendering of its structured content."""


class SleuthTools:
    """The tool functions, one per MCP verb of ``VERBS``; each one's signature (its input
    schema) is generated from the verb's request (``sleuth.service.tool_schema``)."""

    def __init__(self, engine: EngineThread) -> None:
        self._engine = engine

    async def _answer(
        self,
        build: Callable[[], T],
        run: Callable[[Engine, T], JsonAnswer],
        compact: Callable[[Mapping[str, Any]], str],
    ) -> CallToolResult:
        try:
            request = build()  # validation first, no I/O
            data = await self._engine.call(lambda engine: run(engine, request))
        except SleuthError as exc:
            return tool_error(exc)
        except Exception as exc:
            return tool_error(_internal(exc))
        if not isinstance(data, dict):  # run_object answers an object; a list is a bug
            return tool_error(Internal(f"{type(data).__name__} is not a JSON object"))
        try:
            to_json(data)  # what the SDK's writer does: it would fail there, with no answer
        except PydanticSerializationError:
            data = render.printable(data)
        return CallToolResult(content=text_content(compact(data)), structured_content=data)

    def tool(self, verb: Verb) -> Callable[..., Awaitable[CallToolResult]]:
        """The tool function of ``verb``: build its request, run it, answer both contents."""

        async def call(**arguments: Any) -> CallToolResult:
            return await self._answer(
                lambda: verb.request_type().build(**arguments), verb.run_object, COMPACT[verb.name]
            )

        call.__name__ = verb.name
        call.__doc__ = verb.description
        setattr(call, "__signature__", tool_signature(verb.request_type(), CallToolResult))  # noqa: B010
        return call


def tools() -> list[Verb]:
    """The verbs served as MCP tools, in ``VERBS`` order."""
    return [verb for verb in VERBS.values() if "mcp" in verb.faces]


class _Server(MCPServer[Any]):
    """MCPServer whose argument failures carry an error code (docs/errors.md), served through
    ``_Wire``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tool_requests: dict[str, tuple[type[Request], tuple[str, ...]]] = {}
        """Each tool's request type and argument names (filled by build_server)."""
        self.lenient_tools: dict[str, Callable[..., Awaitable[CallToolResult]]] = {}
        """The tools whose request takes unknown arguments as a warning (``find``), called
        directly: the SDK's argument model would drop those names before the request saw them."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            arguments = _check_call(name, arguments or {}, self.tool_requests)
        except SleuthError as exc:
            return tool_error(exc)
        lenient = self.lenient_tools.get(name)
        if lenient is not None:
            return await lenient(**arguments)  # its request checks every argument itself
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc, UnexpectedToolError) or not isinstance(
                exc.__cause__, ValidationError
            ):
                raise
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
                for err in exc.__cause__.errors()
            )
            return tool_error(
                InvalidQuery(f"invalid arguments for {name}: {problems}", details={"tool": name})
            )

    async def run_stdio_async(self) -> None:
        """The SDK's stdio transport reading and writing through ``Wire``."""
        with claim_stdio() as (wire_in, wire_out):
            await self._serve_wire(wire_in, wire_out, None)

    def serve_wire(self, wire_in: BinaryIO, wire_out: BinaryIO, early: EarlyAnswer) -> None:
        """Serve on the claimed stdio of ``sleuth.mcp_boot``, whose first line it read (and
        may have answered already)."""
        anyio.run(self._serve_wire, wire_in, wire_out, early)

    async def _serve_wire(
        self, wire_in: BinaryIO, wire_out: BinaryIO, early: EarlyAnswer | None
    ) -> None:
        """``_lowlevel_server`` is the SDK's own attribute (mcp 2.x, as its ``run_stdio_async``
        uses it); every MCP end-to-end test runs through here."""
        # duck-typed: the transport only iterates over lines, writes and flushes
        wire = cast("AsyncFile[str]", Wire(wire_in, wire_out, early))
        async with stdio_server(wire, wire) as (read_stream, write_stream):
            lowlevel = self._lowlevel_server
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())


def _check_call(
    name: str,
    arguments: Mapping[str, Any],
    known: Mapping[str, tuple[type[Request], tuple[str, ...]]],
) -> dict[str, Any]:
    """The arguments with aliases renamed (docs/faces.md#strict-arguments); ``invalid_query``
    for an unknown tool, an unknown argument or text that is not Unicode."""
    if name not in known:
        raise InvalidQuery(
            f"unknown tool {name!r}: the tools are {', '.join(known)}",
            details={"tool": name, "valid": list(known)},
        )
    request, valid = known[name]
    canonical = request.canonical(arguments, valid, lenient=True)  # find: a warning, not an error
    for key, value in canonical.items():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str):
                check_text(item, key)
    return canonical


def lean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The SDK's argument schema, closed and without what a model reads for nothing
    (docs/faces.md#mcp-server): ``additionalProperties: false`` (an unknown name is an error,
    never dropped), no generated titles, ``X | None`` as ``"type": [X, "null"]`` with no null
    default. Every tool's schema is read by the model on every session."""
    properties: dict[str, Any] = {}
    for name, prop in schema.get("properties", {}).items():
        lean = {k: v for k, v in prop.items() if k != "title"}
        options = lean.pop("anyOf", None)
        if options is not None:
            kinds = [o.get("type") for o in options]
            lean.update(next((o for o in options if o.get("type") != "null"), {}))
            lean["type"] = [k for k in kinds if k != "null"] + (["null"] if "null" in kinds else [])
            if len(lean["type"]) == 1:
                lean["type"] = lean["type"][0]
        if "default" in lean and lean["default"] in (None, []):
            del lean["default"]
        properties[name] = lean
    closed: dict[str, Any] = {"type": "object", "properties": properties}
    if schema.get("required"):
        closed["required"] = schema["required"]
    closed["additionalProperties"] = False
    return closed


def build_server(engine: EngineThread) -> MCPServer[Any]:
    """An MCP server with one tool per MCP verb, all sharing ``engine``."""
    server = _Server("sleuth", instructions=INSTRUCTIONS, log_level="WARNING")
    sleuth_tools = SleuthTools(engine)
    for verb in tools():
        request = verb.request_type()
        server.tool_requests[verb.name] = (request, tool_arguments(request))
        function = sleuth_tools.tool(verb)
        if request.UNKNOWN_FIELD is not None:
            server.lenient_tools[verb.name] = function
        server.add_tool(
            function,
            name=verb.name,
            description=verb.description,
            annotations=ToolAnnotations(
                read_only_hint=verb.read_only, destructive_hint=not verb.read_only
            ),
        )
        # strict: a name the schema does not list is an error, never silently dropped
        tool = server._tool_manager.get_tool(verb.name)  # the SDK's own registry (mcp 2.x)
        assert tool is not None
        tool.parameters = lean_schema(tool.parameters)
        if verb.name in server.lenient_tools:
            del tool.parameters["additionalProperties"]  # open: unknown names are a warning
    return server


def load_server(root: str, no_ignore: bool) -> tuple[EngineThread, MCPServer[Any]]:
    """The engine and the server of ``sleuth mcp`` (``sleuth.mcp_boot`` calls it while it
    reads the client's first line)."""
    engine = EngineThread(server_engine, root, no_ignore)
    return engine, build_server(engine)


def serve(
    root: str = ".", *, no_ignore: bool = False, engine_factory: EngineFactory | None = None
) -> None:
    """Serve over stdio until the client hangs up; engine errors at start-up propagate."""
    engine = EngineThread(engine_factory or server_engine, root, no_ignore)
    try:
        build_server(engine).run("stdio")
    except KeyboardInterrupt:
        pass
    finally:
        engine.close()
