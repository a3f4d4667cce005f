"""The ``sleuth`` command line (SPEC §10): argparse in, JSON or human text out.

Faces are thin (DESIGN): ``parse_args`` turns argv into a frozen ``Invocation`` (no I/O, no
engine), then one ``Workbench`` runs the verb and the answer is printed either exactly as its
JSON (``--json``) or through ``sleuth.render``. Each verb is one entry of ``VERBS`` — a small
function to add its arguments, one to build its request, one to run it and one to render it —
so a verb (``search``, ``read``, ``select``, ``index``, the edits ``replace``, ``insert``,
``delete``, ``copy``, ``move``, ``undo``, the native ``rename`` and ``doctor``) is one table
entry. ``rename REF NEW`` is also written ``rename REF#NEW`` (SPEC §7); ``doctor --json`` prints
the list of language-server rows (language, server, found, version, install hint).

The text of ``replace``/``insert`` comes from ``--text``, ``--text-file`` or stdin; reading it
is input, not workspace I/O, so the request builder does it (capped at the engine's limit and
decoded as strict UTF-8, used byte for byte: a trailing newline on stdin is part of the text).

Every failure goes through ``report_error`` (the one SleuthError -> output mapping of this
face): with ``--json`` the SPEC §3.5 object on stdout and a line on stderr, otherwise
``sleuth: error[CODE]: message`` on stderr; the exit code is ``SleuthError.exit_code``. Usage
errors are ``invalid_query`` (exit 2), unexpected exceptions ``internal`` (exit 1, traceback
only with ``SLEUTH_DEBUG=1``), Ctrl-C ``cancelled`` (exit 5).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, BinaryIO, Literal, NoReturn, Protocol, TextIO, get_args

from sleuth import render
from sleuth.errors import Cancelled, Internal, InvalidPath, InvalidQuery, SleuthError
from sleuth.query.request import SearchRequest, check_text

if TYPE_CHECKING:
    from rich.text import Text

__all__ = [
    "main",
    "console",
    "parse_args",
    "report_error",
    "use_color",
    "Invocation",
    "Verb",
    "VERBS",
    "Engine",
    "EngineFactory",
    "run_search",
    "run_read",
    "run_select",
    "run_index",
    "run_edit",
    "ReadRequest",
    "SelectRequest",
    "IndexRequest",
    "EditRequest",
    "EditVerb",
    "EDIT_VERBS",
    "read_text_input",
    "run_rename",
    "run_doctor",
    "RenameRequest",
    "DoctorRequest",
    "JsonAnswer",
]


class Result(Protocol):
    """What every verb of the engine returns: something that serialises to SPEC JSON."""

    def to_json(self) -> dict[str, Any]: ...


class Engine(Protocol):
    """The part of ``sleuth.api.Workbench`` the faces call (unit tests pass a fake)."""

    def search(
        self,
        query: str,
        *,
        path: str = "/",
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        limit: int = 100,
        cursor: str | None = None,
        context: int = 1,
        lang: str | None = None,
        navigation: str | None = None,
        case_sensitive: bool = True,
        selector: str | None = None,
        strictness: str | None = None,
        depth: int | None = None,
    ) -> Result: ...

    def read(
        self, target: str, *, offset: int | None = None, limit: int | None = None
    ) -> Result: ...

    def select(self, ref: str, items: Sequence[int]) -> Result: ...

    def index_now(self) -> int: ...

    def replace(self, ref: str, text: str) -> Result: ...

    def insert(
        self, ref: str, text: str, *, where: Literal["before", "after"] = "before"
    ) -> Result: ...

    def delete(self, ref: str) -> Result: ...

    def copy(self, ref: str, *, to: str) -> Result: ...

    def move(self, ref: str, *, to: str) -> Result: ...

    def undo(self, result: str) -> Result: ...

    def rename(self, ref: str, new_name: str | None = None, *, force: bool = False) -> Result: ...

    def doctor(self) -> list[dict[str, Any]]: ...

    def recovered(self) -> list[dict[str, Any]]: ...

    def close(self) -> None: ...


EngineFactory = Callable[[str, bool], Engine]
"""Builds the engine for ``(root, no_ignore)``."""


def default_engine(root: str, no_ignore: bool) -> Engine:
    """The real ``Workbench`` for one CLI call: it loads an index from ``.sleuth/`` if there is
    one but never builds it (that is ``sleuth index``'s job, or a long-running face's), and
    answers ``graph:PATH`` from the part of the graph cache it reads (``one_shot``).
    Imported late so ``--help`` and usage errors stay instant."""
    from sleuth.api import Workbench

    return Workbench(root, no_ignore=no_ignore, build_index=False, one_shot=True)


@dataclass(frozen=True)
class Invocation:
    """One parsed command line: the verb, workspace options and the verb's frozen request."""

    verb: str
    root: str = "."
    json: bool = False
    no_ignore: bool = False
    request: Any = None


JsonAnswer = dict[str, Any] | list[dict[str, Any]]
"""What a verb answers: a SPEC JSON object (a list of rows for ``doctor``)."""


@dataclass(frozen=True)
class Verb:
    """One CLI verb: its arguments, its request, how to run it and how to show its JSON."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    build: Callable[[argparse.Namespace], Any]
    run: Callable[[Engine, Any], JsonAnswer]
    human: Callable[[Any], Text]


# --- search --------------------------------------------------------------------------------


def _search_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("query", metavar="QUERY", help="text, or a prefix: regex: files: ast: ...")
    parser.add_argument("--path", default="/", help="folder, file or reference to search in")
    parser.add_argument("--include", action="append", default=[], metavar="GLOB")
    parser.add_argument("--exclude", action="append", default=[], metavar="GLOB")
    parser.add_argument("--limit", type=int, default=100, help="matches per page (max 500)")
    parser.add_argument("--cursor", default=None, help="next_cursor of the previous page")
    parser.add_argument("--context", type=int, default=1, metavar="N", help="context lines")
    parser.add_argument("--lang", default=None, help="language for ast: and symbols: queries")
    parser.add_argument("--navigation", default=None, choices=["references"])
    parser.add_argument(
        "--selector",
        default=None,
        metavar="KIND",
        help="ast: the node kind to report inside a context pattern",
    )
    parser.add_argument(
        "--strictness",
        default=None,
        choices=["cst", "smart", "ast", "relaxed", "signature"],
        help="ast: how strictly the pattern must match (default smart)",
    )
    parser.add_argument(
        "--depth", type=int, default=None, metavar="N", help="graph: how far to follow dependents"
    )
    parser.add_argument("-i", "--ignore-case", action="store_true", help="case-insensitive")


def _search_request(ns: argparse.Namespace) -> SearchRequest:
    return SearchRequest.build(
        ns.query,
        path=ns.path,
        include=ns.include,
        exclude=ns.exclude,
        limit=ns.limit,
        cursor=ns.cursor,
        context=ns.context,
        lang=ns.lang,
        navigation=ns.navigation,
        case_sensitive=not ns.ignore_case,
        selector=ns.selector,
        strictness=ns.strictness,
        depth=ns.depth,
    )


def run_search(engine: Engine, request: SearchRequest) -> dict[str, Any]:
    """Run one search request; the answer is exactly SPEC §3.4 (used by the MCP face too)."""
    return engine.search(
        request.query,
        path=request.path,
        include=request.include,
        exclude=request.exclude,
        limit=request.limit,
        cursor=request.cursor,
        context=request.context,
        lang=request.lang,
        navigation=request.navigation,
        case_sensitive=request.case_sensitive,
        selector=request.selector,
        strictness=request.strictness,
        depth=request.depth,
    ).to_json()


# --- read / select / index -----------------------------------------------------------------


def _positive(value: int | None, what: str) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise InvalidQuery(f"{what}, got {value!r}")
    return value


@dataclass(frozen=True)
class ReadRequest:
    """``read TARGET [--offset N] [--limit N]``: a path or reference, and a line window."""

    target: str
    offset: int | None = None
    limit: int | None = None

    @classmethod
    def build(
        cls, target: str, *, offset: int | None = None, limit: int | None = None
    ) -> ReadRequest:
        if not isinstance(target, str) or not target:
            raise InvalidQuery("read needs a target: a path or a reference")
        check_text(target, "target")
        return cls(
            target,
            _positive(offset, "offset is the first line to read (1-based)"),
            _positive(limit, "limit is the number of lines to read"),
        )


@dataclass(frozen=True)
class SelectRequest:
    """``select REF N [N...]``: the matches ``#N`` of result ``REF`` to keep."""

    ref: str
    items: tuple[int, ...]

    @classmethod
    def build(cls, ref: str, items: Sequence[int]) -> SelectRequest:
        if not isinstance(ref, str) or not ref:
            raise InvalidQuery("select needs a reference, e.g. SEARCH#1a2b3c4d")
        check_text(ref, "ref")
        if not items:
            raise InvalidQuery("select needs at least one item number (as listed by #n)")
        for item in items:
            _positive(item, "item numbers are positive integers (the #n of a match)")
        return cls(ref, tuple(items))


@dataclass(frozen=True)
class IndexRequest:
    """``index``: build or refresh the trigram index in ``.sleuth/``."""


def _read_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "target",
        metavar="TARGET",
        help="a path, or a reference: SEARCH#H:N:match, SEARCH#H:all:line, RESULT#ID ...",
    )
    parser.add_argument(
        "--offset", type=int, default=None, metavar="N", help="first line to show (1-based)"
    )
    parser.add_argument(
        "--limit", type=int, default=None, metavar="N", help="number of lines to show"
    )


def _read_request(ns: argparse.Namespace) -> ReadRequest:
    return ReadRequest.build(ns.target, offset=ns.offset, limit=ns.limit)


def run_read(engine: Engine, request: ReadRequest) -> dict[str, Any]:
    """Read a path or reference; the answer is SPEC §5's read shape (used by MCP too)."""
    return engine.read(request.target, offset=request.offset, limit=request.limit).to_json()


def _select_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("ref", metavar="REF", help="a result: SEARCH#H or RESULT#ID")
    parser.add_argument(
        "items", metavar="N", type=int, nargs="+", help="match numbers (#n) to keep"
    )


def _select_request(ns: argparse.Namespace) -> SelectRequest:
    return SelectRequest.build(ns.ref, ns.items)


def run_select(engine: Engine, request: SelectRequest) -> dict[str, Any]:
    """Select items of a result as a new RESULT#; SPEC §5's read shape (used by MCP too)."""
    return engine.select(request.ref, request.items).to_json()


def _no_arguments(parser: argparse.ArgumentParser) -> None:
    del parser  # a verb with no arguments of its own (index, doctor)


def _index_request(ns: argparse.Namespace) -> IndexRequest:
    del ns
    return IndexRequest()


def run_index(engine: Engine, request: IndexRequest) -> dict[str, Any]:
    """Build or refresh the on-disk index; ``{"indexed": n, "path": ".sleuth/trigram.idx"}``."""
    del request
    # Lazy: keeps --help and usage errors instant (the engine imports these anyway).
    from sleuth.query.index import INDEX_FILE
    from sleuth.workspace.workspace import STATE_DIR

    return {"indexed": engine.index_now(), "path": f"{STATE_DIR}/{INDEX_FILE}"}


# --- edits: replace / insert / delete / copy / move / undo (SPEC §9) ------------------------

EditVerb = Literal["replace", "insert", "delete", "copy", "move", "undo"]
EDIT_VERBS: tuple[EditVerb, ...] = get_args(EditVerb)
Where = Literal["before", "after"]


def _text_cap() -> int:
    """The engine's cap on edit text (imported late: ``--help`` stays instant)."""
    from sleuth.edit.operations import MAX_EDIT_TEXT

    return MAX_EDIT_TEXT


def _non_empty(value: object, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidQuery(what)
    return value


@dataclass(frozen=True)
class EditRequest:
    """One edit: the verb, the reference it goes through, and its text / place / target.

    ``text`` is used by ``replace`` and ``insert`` (``where`` by ``insert``), ``to`` by ``copy``
    and ``move``; ``ref`` is the ``RESULT#`` of an earlier edit for ``undo``."""

    verb: EditVerb
    ref: str
    text: str = ""
    where: Where = "before"
    to: str = ""

    @classmethod
    def build(
        cls,
        verb: str,
        ref: str,
        *,
        text: str | None = None,
        where: str = "before",
        to: str | None = None,
    ) -> EditRequest:
        """Validate one edit's arguments (no I/O); ``invalid_query`` names what is wrong."""
        if verb not in EDIT_VERBS:
            raise InvalidQuery(f"unknown edit {verb!r}: one of {', '.join(EDIT_VERBS)}")
        if verb == "undo":
            ref = _non_empty(ref, "undo needs the RESULT# an edit answered, e.g. RESULT#1a2b3c4d")
        else:
            ref = _non_empty(ref, f"{verb} needs a reference, e.g. SEARCH#1a2b3c4d:2:match")
        check_text(ref, "result" if verb == "undo" else "ref")
        if verb in ("replace", "insert"):
            if not isinstance(text, str):
                raise InvalidQuery(f"{verb} needs the text (--text, --text-file or stdin)")
            check_text(text, "text")
            cap = _text_cap()
            if len(text) > cap:
                raise InvalidQuery(
                    f"edit text too large ({len(text)} characters, at most {cap}): "
                    "nothing was written",
                    details={"length": len(text), "max": cap},
                )
        elif text is not None:
            raise InvalidQuery(f"{verb} takes no text")
        if where not in ("before", "after"):
            raise InvalidQuery(f"where must be 'before' or 'after', got {where!r}")
        if verb in ("copy", "move"):
            to = _non_empty(to, f"{verb} needs a target: --to REF or --to PATH:LINE")
            check_text(to, "to")
        elif to is not None:
            raise InvalidQuery(f"{verb} takes no target")
        return cls(verb, ref, text or "", "after" if where == "after" else "before", to or "")


def read_text_input(text_file: str | None, stdin: BinaryIO | None = None) -> str:
    """The text of ``--text-file F`` (``-`` is stdin), or of stdin when ``text_file`` is None.

    Read byte for byte, at most the engine's cap (``invalid_query`` past it, before anything is
    written), decoded as strict UTF-8. A terminal on stdin is refused instead of waited on."""
    cap = _text_cap()
    if text_file is None or text_file == "-":
        stream = stdin if stdin is not None else getattr(sys.stdin, "buffer", None)
        if stream is None:
            raise InvalidQuery("no text: pass --text, --text-file, or pipe the text to stdin")
        isatty = getattr(stream, "isatty", None)
        if isatty is not None and isatty():
            raise InvalidQuery("no text: pass --text or --text-file, or pipe the text to stdin")
        data = stream.read(cap + 1)
        source = "stdin"
    else:
        try:
            with open(text_file, "rb") as fh:
                data = fh.read(cap + 1)
        except OSError as exc:
            raise InvalidPath(
                f"cannot read --text-file {text_file}: {exc.strerror or exc}",
                details={"path": text_file},
            ) from exc
        source = text_file
    if len(data) > cap:
        raise InvalidQuery(
            f"the text from {source} is over {cap} bytes: nothing was written", details={"max": cap}
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidQuery(
            f"the text from {source} is not UTF-8 (byte {exc.start}): nothing was written",
            details={"offset": exc.start},
        ) from exc


def _ref_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "ref",
        metavar="REF",
        help="what to edit: SEARCH#H:N:match, SEARCH#H:all:line, RESULT#ID ...",
    )


def _text_arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--text", default=None, metavar="T", help="the new text")
    source.add_argument(
        "--text-file",
        default=None,
        metavar="FILE",
        help="read the new text from FILE ('-': stdin); without --text or "
        "--text-file it is read from stdin, byte for byte",
    )


def _replace_arguments(parser: argparse.ArgumentParser) -> None:
    _ref_argument(parser)
    _text_arguments(parser)


def _insert_arguments(parser: argparse.ArgumentParser) -> None:
    _replace_arguments(parser)
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--before",
        dest="where",
        action="store_const",
        const="before",
        default="before",
        help="insert before each selected range (default)",
    )
    where.add_argument(
        "--after",
        dest="where",
        action="store_const",
        const="after",
        help="insert after each selected range",
    )


def _delete_arguments(parser: argparse.ArgumentParser) -> None:
    _ref_argument(parser)


def _copy_arguments(parser: argparse.ArgumentParser) -> None:
    _ref_argument(parser)
    parser.add_argument(
        "--to", required=True, metavar="TARGET", help="a reference, or PATH:LINE (before that line)"
    )


def _undo_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("ref", metavar="RESULT#ID", help="the RESULT# an edit answered")


def _edit_request(verb: EditVerb) -> Callable[[argparse.Namespace], EditRequest]:
    def build(ns: argparse.Namespace) -> EditRequest:
        text: str | None = None
        if verb in ("replace", "insert"):
            text = ns.text if ns.text is not None else read_text_input(ns.text_file)
        return EditRequest.build(
            verb,
            ns.ref,
            text=text,
            where=getattr(ns, "where", "before"),
            to=getattr(ns, "to", None),
        )

    return build


def run_edit(engine: Engine, request: EditRequest) -> dict[str, Any]:
    """Run one edit; the answer is SPEC §5's read shape plus ``changed`` and ``diff`` (§9)."""
    ref = request.ref
    if request.verb == "replace":
        result = engine.replace(ref, request.text)
    elif request.verb == "insert":
        result = engine.insert(ref, request.text, where=request.where)
    elif request.verb == "delete":
        result = engine.delete(ref)
    elif request.verb == "copy":
        result = engine.copy(ref, to=request.to)
    elif request.verb == "move":
        result = engine.move(ref, to=request.to)
    else:
        result = engine.undo(ref)
    return result.to_json()


def _edit_verb(
    verb: EditVerb, summary: str, add_arguments: Callable[[argparse.ArgumentParser], None]
) -> Verb:
    return Verb(
        verb,
        summary,
        add_arguments,
        _edit_request(verb),
        run_edit,
        partial(render.edit_human, verb=verb),
    )


# --- rename / doctor (SPEC §7, §10) ---------------------------------------------------------


@dataclass(frozen=True)
class RenameRequest:
    """``rename REF NEW`` (or ``rename REF#NEW``): one symbol and its new name."""

    ref: str
    new_name: str
    force: bool = False

    @classmethod
    def build(cls, ref: str, new_name: str | None = None, force: bool = False) -> RenameRequest:
        """Validate (no I/O): ``REF#NEW`` is split, the new name must be an identifier."""
        from sleuth.edit.rename import split_rename  # late: --help stays instant

        ref = _non_empty(
            ref,
            "rename needs a reference to a symbol's name, e.g. "
            "SEARCH#1a2b3c4d:1:match (a symbols: match), and the new name",
        )
        check_text(ref, "ref")
        if new_name is not None:
            new_name = check_text(
                _non_empty(new_name, "rename needs the new name: rename REF NEW"), "new_name"
            )
        if not isinstance(force, bool):
            raise InvalidQuery(f"force is true or false, got {force!r}")
        return cls(*split_rename(ref, new_name), force=force)


@dataclass(frozen=True)
class DoctorRequest:
    """``doctor``: which language servers run here, and how to install the missing ones;
    with ``recover``, the interrupted edits recovery could not finish (docs/SAFETY.md)."""

    recover: bool = False


def _rename_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "ref", metavar="REF", help="the symbol: a symbols: match (SEARCH#H:N:match); or REF#NEW"
    )
    parser.add_argument(
        "new_name", metavar="NEW", nargs="?", default=None, help="the new name (or write REF#NEW)"
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="rename even where the new name is already used (else conflict, exit 3)",
    )


def _doctor_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--recover",
        action="store_true",
        help="list interrupted edits that recovery left for you "
        "(.sleuth/recovered/), with each file and why",
    )


def _rename_request(ns: argparse.Namespace) -> RenameRequest:
    return RenameRequest.build(ns.ref, ns.new_name, ns.force)


def run_rename(engine: Engine, request: RenameRequest) -> dict[str, Any]:
    """Rename through the language server; the edit answer plus ``untouched`` (SPEC §7)."""
    return engine.rename(request.ref, request.new_name, force=request.force).to_json()


def _doctor_request(ns: argparse.Namespace) -> DoctorRequest:
    return DoctorRequest(recover=bool(ns.recover))


def run_doctor(engine: Engine, request: DoctorRequest) -> JsonAnswer:
    """One row per language: language, server, command, found, version, install; with
    ``recover``, ``{"recovered": [...]}`` (one report per journal left for the user)."""
    if request.recover:
        return {"recovered": engine.recovered()}
    return engine.doctor()


VERBS: dict[str, Verb] = {
    verb.name: verb
    for verb in (
        Verb(
            "search",
            "search the workspace",
            _search_arguments,
            _search_request,
            run_search,
            render.search_human,
        ),
        Verb(
            "read",
            "read a file or a reference (registers a RESULT#)",
            _read_arguments,
            _read_request,
            run_read,
            render.read_human,
        ),
        Verb(
            "select",
            "keep some matches of a result as a RESULT#",
            _select_arguments,
            _select_request,
            run_select,
            render.read_human,
        ),
        Verb(
            "index",
            "build or refresh the trigram index in .sleuth/",
            _no_arguments,
            _index_request,
            run_index,
            render.index_human,
        ),
        _edit_verb("replace", "replace what a reference selects with new text", _replace_arguments),
        _edit_verb(
            "insert", "insert text before (or after) what a reference selects", _insert_arguments
        ),
        _edit_verb(
            "delete", "delete what a reference selects (whole lines for :line)", _delete_arguments
        ),
        _edit_verb("copy", "copy what a reference selects to --to TARGET", _copy_arguments),
        _edit_verb("move", "move what a reference selects to --to TARGET", _copy_arguments),
        _edit_verb(
            "undo", "undo an edit by its RESULT#, if its files are unchanged since", _undo_arguments
        ),
        Verb(
            "rename",
            "rename a symbol through its language server (REF NEW or REF#NEW)",
            _rename_arguments,
            _rename_request,
            run_rename,
            render.rename_human,
        ),
        Verb(
            "doctor",
            "list the language servers: found, version, how to install",
            _doctor_arguments,
            _doctor_request,
            run_doctor,
            render.doctor_human,
        ),
    )
}


# --- parsing -------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are ``invalid_query`` instead of an exit."""

    def error(self, message: str) -> NoReturn:
        raise InvalidQuery(
            f"{self.prog}: {message} (see {self.prog} --help)",
            details={"usage": self.format_usage().strip()},
        )


def _workspace_arguments(parser: argparse.ArgumentParser) -> None:
    # SUPPRESS: accepted before or after the subcommand without one overwriting the other.
    parser.add_argument(
        "--root",
        default=argparse.SUPPRESS,
        metavar="DIR",
        help="workspace root (default: the current folder)",
    )
    parser.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print the exact JSON answer"
    )
    parser.add_argument(
        "--no-ignore",
        action="store_true",
        default=argparse.SUPPRESS,
        help="do not honour .gitignore/.ignore files",
    )


def build_parser() -> argparse.ArgumentParser:
    """The whole ``sleuth`` parser: one subparser per verb, plus ``mcp``."""
    parser = _Parser(prog="sleuth", description="Code search with hash-stamped references.")
    _workspace_arguments(parser)
    sub = parser.add_subparsers(dest="verb", metavar="COMMAND", required=True)
    for verb in VERBS.values():
        verb_parser = sub.add_parser(verb.name, help=verb.help)
        verb.add_arguments(verb_parser)
        _workspace_arguments(verb_parser)
    _workspace_arguments(sub.add_parser("mcp", help="serve the verbs as MCP tools over stdio"))
    return parser


_OS_PATHS = frozenset({"root", "text_file"})
"""Arguments naming files outside the workspace's text: their bytes are the OS's, whatever
their encoding (a ``--root`` folder whose name is not UTF-8 is still a folder)."""


def _verb_parser(parser: argparse.ArgumentParser, verb: str) -> argparse.ArgumentParser:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            sub: argparse.ArgumentParser = action.choices[verb]
            return sub
    return parser


def _shown_name(action: argparse.Action) -> str:
    """How ``--help`` names an argument: its long option, or its metavar."""
    if action.option_strings:
        return max(action.option_strings, key=len)
    return str(action.metavar or action.dest.upper())


def _check_known(parser: argparse.ArgumentParser, verb: str, extras: list[str]) -> None:
    """Arguments the verb does not take are ``invalid_query`` naming them and the valid ones."""
    if not extras:
        return
    valid = [
        _shown_name(a)
        for a in parser._actions
        if a.option_strings and not isinstance(a, argparse._HelpAction)
    ]
    raise InvalidQuery(
        f"sleuth {verb}: unrecognized arguments: {' '.join(extras)}; "
        f"valid options: {', '.join(valid)} "
        f"(see sleuth {verb} --help)",
        details={"unknown": extras, "valid": valid, "usage": parser.format_usage().strip()},
    )


def _check_texts(parser: argparse.ArgumentParser, ns: argparse.Namespace) -> None:
    """Every text argument must be UTF-8: argv bytes that are not arrive as lone surrogates
    (surrogateescape), which no engine, the registry nor the output can encode."""
    for action in parser._actions:
        if action.dest in _OS_PATHS:
            continue
        value = getattr(ns, action.dest, None)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str):
                check_text(item, _shown_name(action))


def parse_args(argv: Sequence[str]) -> Invocation:
    """argv -> ``Invocation``; raises ``InvalidQuery`` for usage errors. No workspace I/O
    happens; only the text of ``replace``/``insert`` is read (``--text-file`` or stdin)."""
    parser = build_parser()
    ns, extras = parser.parse_known_args(list(argv))
    verb_parser = _verb_parser(parser, ns.verb)
    _check_known(verb_parser, ns.verb, extras)
    _check_texts(verb_parser, ns)
    verb = VERBS.get(ns.verb)
    return Invocation(
        verb=ns.verb,
        root=getattr(ns, "root", "."),
        json=getattr(ns, "json", False),
        no_ignore=getattr(ns, "no_ignore", False),
        request=verb.build(ns) if verb else None,
    )


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
    """The one SleuthError -> output mapping of the CLI; returns the exit code (SPEC §3.5)."""
    payload = render.printable(exc.to_json())
    text = f"sleuth: {render.error_line(payload)}"
    try:
        if as_json:
            _write_json(payload, stdout)
            text = text.splitlines()[0]  # the full message (e.g. a caret diagram) is in the JSON
        stderr.write(text + "\n")
        stderr.flush()
    except BrokenPipeError:
        pass
    return exc.exit_code


def _internal(exc: BaseException) -> Internal:
    if os.environ.get("SLEUTH_DEBUG") == "1":
        traceback.print_exception(exc)
    hint = "" if os.environ.get("SLEUTH_DEBUG") == "1" else " (set SLEUTH_DEBUG=1 for a traceback)"
    return Internal(
        f"unexpected {type(exc).__name__}: {exc}{hint}", details={"exception": type(exc).__name__}
    )


# --- running -------------------------------------------------------------------------------


def execute(invocation: Invocation, engine_factory: EngineFactory) -> JsonAnswer:
    """Build one engine, run the verb, close the engine; returns the verb's JSON."""
    verb = VERBS[invocation.verb]
    engine = engine_factory(invocation.root, invocation.no_ignore)
    try:
        return verb.run(engine, invocation.request)
    finally:
        engine.close()
        workers = sys.modules.get("sleuth.ast_search.workers")
        if workers is not None:  # only when an ast: search started worker processes
            workers.stop_pool()
        prefetch = sys.modules.get("sleuth.listing_prefetch")
        if prefetch is not None:  # a listing the verb never asked for (e.g. a bad query)
            prefetch.discard()


def _prefetch_listing(invocation: Invocation) -> None:
    """Start listing a search's scope in a child process while this one imports the engines
    (``sleuth.listing_prefetch``); the search adopts that listing or walks as before."""
    req = invocation.request
    if invocation.verb != "search" or "#" in req.path:  # a reference scope lists nothing
        return
    from sleuth import listing_prefetch

    listing_prefetch.start(
        invocation.root,
        no_ignore=invocation.no_ignore,
        scope=req.path,
        include=req.include,
        exclude=req.exclude,
        any_size=req.query.startswith("files:"),
    )


def main(
    argv: Sequence[str] | None = None,
    *,
    engine_factory: EngineFactory | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Entry point of ``sleuth``; returns the process exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    out = sys.stdout if stdout is None else stdout
    err = sys.stderr if stderr is None else stderr
    as_json = "--json" in args  # decided before parsing so usage errors honour it too
    try:
        invocation = parse_args(args)
        as_json = invocation.json
        if invocation.verb == "mcp":
            from sleuth.mcp import serve

            serve(invocation.root, no_ignore=invocation.no_ignore)
            return 0
        if argv is None and engine_factory is None:  # the console script, not a test
            _prefetch_listing(invocation)
        data = execute(invocation, engine_factory or default_engine)
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
            human = VERBS[invocation.verb].human(data)
            if not _encodes(human.plain):  # a surrogate in the answer must not crash the print
                human = VERBS[invocation.verb].human(render.printable(data))
            _write_human(human, out)
    except BrokenPipeError:
        # `sleuth search x | head`: the reader left; quietly stop like ripgrep does.
        _silence_stdout(out)
    return 0


def console() -> NoReturn:
    """The ``sleuth`` console script: ``main``, then a quick exit when worker processes live.

    A normal interpreter exit waits for the read-ahead batches ast: workers are still parsing
    and joins the pool's threads (~50 ms after the answer is out). The answer is written and
    the engine closed when ``main`` returns, so the script flushes, kills the workers and
    leaves with ``os._exit``; a process without live workers exits normally."""
    code = main()
    mp = sys.modules.get("multiprocessing")
    if mp is None or not mp.active_children():
        raise SystemExit(code)
    from sleuth.ast_search import workers

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BrokenPipeError, ValueError):
            stream.flush()
    workers.kill_workers()
    os._exit(code)


def _silence_stdout(stream: TextIO) -> None:
    if stream is sys.stdout:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
