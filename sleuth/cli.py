"""The ``sleuth`` command line (docs/faces.md): argv in, JSON or human text out.

Faces are thin (docs/architecture.md#faces-are-thin): ``sleuth.service.argv.parse_args`` turns
argv into a frozen ``Invocation`` (no I/O, no engine; its parser is generated from the verbs'
requests), then one ``Workbench`` runs the verb (``sleuth.service.verbs.VERBS``) and the answer
is printed either exactly as its JSON (``--json``) or through ``sleuth.render`` (``HUMAN``).
``rename REF NEW`` is also written ``rename REF#NEW``; ``doctor --json`` prints the list of
language-server rows.

Every failure goes through ``report_error`` (the one SleuthError -> output mapping of this
face): with ``--json`` the error object (docs/errors.md) on stdout and a line on stderr,
otherwise ``sleuth: error[CODE]: message`` on stderr; the exit code is
``SleuthError.exit_code``. Usage errors are ``invalid_query`` (exit 2), unexpected exceptions
``internal`` (exit 1, traceback only with ``SLEUTH_DEBUG=1``), Ctrl-C ``cancelled`` (exit 5).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from sleuth import render
from sleuth.errors import Cancelled, Internal, SleuthError, locked_error
from sleuth.render.busy import DELAY_S, Busy
from sleuth.service.argv import Invocation, build_parser, parse_args, read_text_input
from sleuth.service.verbs import EDIT_VERBS, VERBS, Engine, EngineFactory, JsonAnswer

if TYPE_CHECKING:
    from rich.text import Text

    from sleuth.service.session import Session

__all__ = [
    "main",
    "console",
    "parse_args",
    "build_parser",
    "report_error",
    "use_color",
    "Invocation",
    "HUMAN",
    "read_text_input",
]

HUMAN: dict[str, str] = {
    "search": "search_human",
    "read": "read_human",
    "select": "read_human",
    "find": "find_human",
    "index": "index_human",
    **dict.fromkeys(EDIT_VERBS, "edit_human"),
    "rename": "rename_human",
    "doctor": "doctor_human",
    "daemon": "daemon_human",
}
"""How each verb's JSON is shown without ``--json``: the ``sleuth.render`` function (loaded
when first used; an edit's also takes the verb)."""


def _human(verb: str) -> Callable[[Any], Text]:
    shown: Callable[..., Text] = getattr(render, HUMAN[verb])
    return partial(shown, verb=verb) if verb in EDIT_VERBS else shown


def default_engine(root: str, no_ignore: bool, session: Session | None = None) -> Engine:
    """The real ``Workbench`` for one CLI call: it loads an index from ``.sleuth/`` if there is
    one but never builds it (that is ``sleuth index``'s job, or a long-running face's), and
    answers ``graph:PATH`` from the part of the graph cache it reads (``one_shot``).
    Imported late so ``--help`` and usage errors stay instant."""
    from sleuth.api import Workbench

    return Workbench(root, no_ignore=no_ignore, build_index=False, one_shot=True, session=session)


# --- output --------------------------------------------------------------------------------


def use_color(stream: TextIO, environ: Mapping[str, str] | None = None) -> bool:
    """Colour only on a terminal and only when ``NO_COLOR`` is not set (no-color.org)."""
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def _encodes(text: str) -> bool:
    """Whether ``text`` is UTF-8 text (a stdout with surrogateescape would write bad bytes)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _write_json(data: JsonAnswer, stream: TextIO) -> None:
    text = json.dumps(data, ensure_ascii=False)
    if not _encodes(text):  # never half a line: the whole answer is made printable first
        text = json.dumps(render.printable(data), ensure_ascii=False)
    stream.write(text + "\n")
    stream.flush()


def _write_human(text: Text, stream: TextIO) -> None:
    text = render.visible_text(
        text
    )  # contents shown, never obeyed (docs/faces.md#control-characters)
    if use_color(stream):
        from rich.console import Console  # lazy: ~50 ms of start-up a piped call never needs

        console = Console(
            file=stream,
            force_terminal=True,
            highlight=False,
            soft_wrap=True,
            markup=False,
            emoji=False,
        )
        console.print(text)
    else:
        stream.write(text.plain + "\n")
    stream.flush()


def report_error(exc: SleuthError, *, as_json: bool, stdout: TextIO, stderr: TextIO) -> int:
    """The one SleuthError -> output mapping of the CLI; returns the exit code (docs/errors.md)."""
    payload = render.printable(exc.to_json())
    text = f"sleuth: {render.visible(render.error_line(payload))}"
    try:
        if as_json:
            _write_json(payload, stdout)
            text = text.splitlines()[0]  # the full message (e.g. a caret diagram) is in the JSON
        stderr.write(text + "\n")
        stderr.flush()
    except BrokenPipeError:
        pass
    return exc.exit_code


def _internal(exc: BaseException) -> SleuthError:
    locked = locked_error(exc)  # another process holds a state file: retry, not a bug
    if locked is not None:
        return locked
    if os.environ.get("SLEUTH_DEBUG") == "1":
        traceback.print_exception(exc)
    hint = "" if os.environ.get("SLEUTH_DEBUG") == "1" else " (set SLEUTH_DEBUG=1 for a traceback)"
    return Internal(
        f"unexpected {type(exc).__name__}: {exc}{hint}", details={"exception": type(exc).__name__}
    )


# --- running -------------------------------------------------------------------------------


def execute(
    invocation: Invocation, engine_factory: EngineFactory, session: Session | None = None
) -> JsonAnswer:
    """Build one engine, run the verb, close the engine, then ``session`` (the process's): its
    ast workers are let go (read-ahead batches are dropped, not parsed before the exit) and a
    listing the verb never asked for (e.g. a bad query) is discarded; returns the verb's JSON."""
    verb = VERBS[invocation.verb]
    engine = engine_factory(invocation.root, invocation.no_ignore)
    busy = Busy(
        sys.stderr,
        json_output=invocation.json or invocation.verb == "provider",
        delay_s=_progress_delay(),
    )
    report_to = getattr(engine, "report_to", None) if busy.active else None
    if report_to is not None:
        report_to(busy)
    try:
        return verb.run(engine, invocation.request)
    finally:
        busy.close()
        if report_to is not None:
            report_to(None)
        engine.close()
        if session is not None:
            session.close()


def _progress_delay() -> float:
    """Seconds a step runs before its progress shows (``SLEUTH_PROGRESS_DELAY``, default 1)."""
    try:
        return max(0.0, float(os.environ.get("SLEUTH_PROGRESS_DELAY", "")))
    except ValueError:
        return DELAY_S


def _prefetch_listing(invocation: Invocation, session: Session | None) -> None:
    """Start listing a search's scope in a child process while this one imports the engines
    (``Session.prefetch_listing``); the search adopts that listing or walks as before."""
    req = invocation.request
    if session is None or invocation.verb != "search" or "#" in req.path:
        return  # a reference scope lists nothing
    session.prefetch_listing(
        invocation.root,
        no_ignore=invocation.no_ignore,
        scope=req.path,
        include=req.include,
        exclude=req.exclude,
        any_size=req.query.startswith("files:"),
    )


def _load_mcp(root: str, no_ignore: bool) -> tuple[Any, Any]:
    from sleuth.mcp import load_server  # the SDK: loaded while the first line is read

    return load_server(root, no_ignore)


def _serve_mcp_slowly(root: str, no_ignore: bool) -> None:
    from sleuth.mcp import serve

    serve(root, no_ignore=no_ignore)


def main(
    argv: Sequence[str] | None = None,
    *,
    engine_factory: EngineFactory | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    session: Session | None = None,
) -> int:
    """Entry point of ``sleuth``; returns the process exit code. ``session``: the process's
    resources (the console script's); without one the engine makes its own."""
    args = list(sys.argv[1:] if argv is None else argv)
    out = sys.stdout if stdout is None else stdout
    err = sys.stderr if stderr is None else stderr
    as_json = "--json" in args  # decided before parsing so usage errors honour it too
    try:
        invocation = parse_args(args)
        as_json = invocation.json or invocation.verb == "provider"  # it answers JSON only
        if invocation.verb == "mcp":
            from sleuth.mcp_boot import serve  # answers initialize before the SDK has loaded

            serve(
                invocation.root,
                no_ignore=invocation.no_ignore,
                load=_load_mcp,
                serve_slowly=_serve_mcp_slowly,
            )
            return 0
        if invocation.verb == "daemon":
            from sleuth.daemon.control import act

            busy = Busy(err, json_output=invocation.json, delay_s=_progress_delay())
            try:
                data: JsonAnswer = act(invocation.action, invocation.root, main, busy)
            finally:
                busy.close()
            if invocation.action == "run":
                return 0
        else:
            data = _run_verb(invocation, argv, engine_factory, session)
    except SleuthError as exc:
        return report_error(exc, as_json=as_json, stdout=out, stderr=err)
    except KeyboardInterrupt:
        return report_error(Cancelled("interrupted"), as_json=as_json, stdout=out, stderr=err)
    except Exception as exc:
        return report_error(_internal(exc), as_json=as_json, stdout=out, stderr=err)
    try:
        if as_json:
            _write_json(data, out)
        else:
            human = _human(invocation.verb)(data)
            if not _encodes(human.plain):  # a surrogate in the answer must not crash the print
                human = _human(invocation.verb)(render.printable(data))
            _write_human(human, out)
    except BrokenPipeError:
        # `sleuth search x | head`: the reader left; quietly stop like ripgrep does.
        _silence_stdout(out)
    return 0


def _run_verb(
    invocation: Invocation,
    argv: Sequence[str] | None,
    engine_factory: EngineFactory | None,
    session: Session | None,
) -> JsonAnswer:
    if argv is None and engine_factory is None:  # the console script, not a test
        _prefetch_listing(invocation, session)
    factory = engine_factory or partial(default_engine, session=session)
    return execute(invocation, factory, session)


def console(after: Callable[[], None] | None = None) -> NoReturn:
    """The ``sleuth`` console script: ``main``, then a quick exit when worker processes live.

    The process makes one ``Session`` (its pools, prefetched listing and memos). A normal
    interpreter exit waits for the read-ahead batches ast: workers are still parsing and joins
    the pool's threads (~50 ms after the answer is out). The answer is written and the engine
    and session closed when ``main`` returns, so the script flushes, kills the workers and
    leaves with ``os._exit``; a process without live workers exits normally."""
    from sleuth.service.session import Session

    session = Session()
    code = main(session=session)
    session.close()  # already closed once the verb ran; not when it failed before the engine
    if after is not None:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(BrokenPipeError, ValueError):
                stream.flush()
        after()
    mp = sys.modules.get("multiprocessing")
    if mp is None or not mp.active_children():
        raise SystemExit(code)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BrokenPipeError, ValueError):
            stream.flush()
    session.kill_workers()
    os._exit(code)


def _silence_stdout(stream: TextIO) -> None:
    if stream is sys.stdout:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
