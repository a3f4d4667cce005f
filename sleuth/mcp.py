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
import inspect
import os
import traceback
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, cast

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.stdio import stdio_server
from mcp_types import (
    CallToolResult,
    InputRequiredResult,
    ToolAnnotations,
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
from sleuth.mcp_wire import (
    MAX_MESSAGE_BYTES,
    Wire,
    claim_stdio,
    screen_line,
    text_content,
    tool_error,
)
from sleuth.query.request import SearchRequest, check_text

if TYPE_CHECKING:
    from anyio import AsyncFile

__all__ = [
    "serve",
    "build_server",
    "EngineThread",
    "SleuthTools",
    "ToolSpec",
    "TOOLS",
    "tool_error",
    "screen_line",
    "MAX_MESSAGE_BYTES",
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


def _internal(exc: BaseException) -> Internal:
    if os.environ.get("SLEUTH_DEBUG") == "1":
        traceback.print_exception(exc)  # stderr: never the protocol stream
    return Internal(
        f"unexpected {type(exc).__name__}: {exc}", details={"exception": type(exc).__name__}
    )


Strings = Sequence[str]
Ints = Sequence[int]
EditRef = Annotated[
    str,
    Field(
        description="what to edit: SEARCH#H:n:match, SEARCH#H:n:line, "
        "SEARCH#H:all:match, a capture's RESULT#ID ..."
    ),
]
EditText = Annotated[
    str, Field(description="the new text, used exactly (line endings follow the file's)")
]
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
        return CallToolResult(content=text_content(compact(data)), structured_content=data)

    async def search(
        self,
        query: Annotated[
            str,
            Field(
                description="text; or a prefix: regex:, files:, ast:, "
                "symbols:, symbol:#ID, graph:, semantic:"
            ),
        ],
        path: Annotated[str, Field(description="folder, file or reference to search in")] = "/",
        include: Annotated[Strings, Field(description="globs a path must match")] = (),
        exclude: Annotated[Strings, Field(description="globs that drop a path")] = (),
        limit: Annotated[int, Field(description="matches per page, at most 500")] = 100,
        cursor: Annotated[str | None, Field(description="next_cursor of the previous page")] = None,
        context: Annotated[int, Field(description="context lines before and after")] = 1,
        case_sensitive: bool = True,
        lang: Annotated[str | None, Field(description="language for ast:/symbols:")] = None,
        navigation: Annotated[str | None, Field(description="'references' with symbols:")] = None,
        selector: Annotated[
            str | None, Field(description="ast: node kind to report inside a context pattern")
        ] = None,
        strictness: Annotated[
            str | None, Field(description="ast: cst|smart|ast|relaxed|signature")
        ] = None,
        depth: Annotated[int | None, Field(description="graph: dependents depth")] = None,
    ) -> CallToolResult:
        """Search the workspace: literal text (falls back to regex, then words), or a prefixed
        query. Answers the result id (SEARCH#H) and one line per match (path:line:col #n text);
        SEARCH#H:n:match and SEARCH#H:n:line reference match n."""
        return await self._answer(
            lambda: SearchRequest.build(
                query,
                path=path,
                include=include,
                exclude=exclude,
                limit=limit,
                cursor=cursor,
                context=context,
                lang=lang,
                navigation=navigation,
                case_sensitive=case_sensitive,
                selector=selector,
                strictness=strictness,
                depth=depth,
            ),
            run_search,
            render.search_compact,
        )

    async def read(
        self,
        target: Annotated[
            str,
            Field(
                description="a path, or a reference: SEARCH#H:n:match, "
                "SEARCH#H:n:line, SEARCH#H:all:line, RESULT#ID"
            ),
        ],
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
        ref: Annotated[
            str,
            Field(
                description="a result: SEARCH#H (or SEARCH#H:all:line for whole lines) or RESULT#ID"
            ),
        ],
        items: Annotated[Ints, Field(description="match numbers #n to keep")],
    ) -> CallToolResult:
        """Keep some matches (their #n) of a result as a new RESULT#, across all its pages.
        Answers the RESULT# id and one line per selected line: path:line| text."""
        return await self._answer(
            lambda: SelectRequest.build(ref, list(items)),
            run_select,
            render.read_compact,
        )

    async def _edit(
        self,
        verb: EditVerb,
        ref: str,
        *,
        text: str | None = None,
        where: str = "before",
        to: str | None = None,
    ) -> CallToolResult:
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
        ref: Annotated[
            str,
            Field(
                description="the symbol's name: a symbols: match SEARCH#H:n:match (or REF#NEW_NAME)"
            ),
        ],
        new_name: Annotated[
            str | None, Field(description="the new name (omit with REF#NEW_NAME)")
        ] = None,
        force: Annotated[
            bool,
            Field(
                description="rename even where the new name is already used (otherwise conflict)"
            ),
        ] = False,
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
        """The SDK's stdio transport reading and writing through ``_Wire``.

        ``_lowlevel_server`` is the SDK's own attribute (mcp 2.x, as its ``run_stdio_async``
        uses it); every MCP end-to-end test runs through here."""
        with claim_stdio() as (wire_in, wire_out):
            # duck-typed: the transport only iterates over lines, writes and flushes
            wire = cast("AsyncFile[str]", Wire(wire_in, wire_out))
            async with stdio_server(wire, wire) as (read_stream, write_stream):
                lowlevel = self._lowlevel_server
                await lowlevel.run(
                    read_stream, write_stream, lowlevel.create_initialization_options()
                )


def _check_call(
    name: str, arguments: Mapping[str, Any], known: Mapping[str, tuple[str, ...]]
) -> None:
    """``invalid_query`` for an unknown tool, an unknown argument or text that is not Unicode."""
    if name not in known:
        raise InvalidQuery(
            f"unknown tool {name!r}: the tools are {', '.join(known)}",
            details={"tool": name, "valid": list(known)},
        )
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
            annotations=ToolAnnotations(
                read_only_hint=spec.read_only, destructive_hint=not spec.read_only
            ),
        )
    return server


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
