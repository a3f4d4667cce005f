"""The command line's parser, generated from the verbs' requests (docs/faces.md).

``build_parser`` makes one subcommand per CLI verb of ``VERBS`` and one argument per request
field, spelled as the field's ``Arg`` says; ``parse_args`` turns argv into a frozen
``Invocation`` (verb, workspace options, the verb's request) with no workspace I/O. The only
input read is the text of an edit, from ``--text-file`` or stdin (``read_text_input``): capped
at ``MAX_EDIT_TEXT`` and decoded as strict UTF-8, used byte for byte.

Usage errors are ``invalid_query`` (``_Parser.error``), and an argument the verb does not take
names the valid ones. Every text argument must be UTF-8: argv bytes that are not arrive as
lone surrogates (surrogateescape), which no engine, the registry nor the output can encode.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO, NoReturn

from sleuth.errors import InvalidPath, InvalidQuery
from sleuth.fields import Spelled, request_fields
from sleuth.query.request import check_text
from sleuth.service.verbs import VERBS

__all__ = [
    "DAEMON_ACTIONS",
    "Invocation",
    "build_parser",
    "parse_args",
    "read_text_input",
    "request_from",
]

_OS_PATHS = frozenset({"root", "text_file"})
"""Arguments naming files outside the workspace's text: their bytes are the OS's, whatever
their encoding (a ``--root`` folder whose name is not UTF-8 is still a folder)."""

_TEXT_FILE_HELP = (
    "read the new text from FILE ('-': stdin); without --text or --text-file it is read from "
    "stdin, byte for byte"
)


@dataclass(frozen=True)
class Invocation:
    """One parsed command line: the verb, workspace options and the verb's frozen request."""

    verb: str
    root: str = "."
    json: bool = False
    no_ignore: bool = False
    request: Any = None
    action: str = ""
    """``daemon``'s action (``start``, ``stop``, ``status``, ``run``)."""


DAEMON_ACTIONS = ("start", "stop", "status", "run")


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are ``invalid_query`` instead of an exit, and which
    takes options only as spelt (no ``--pat`` for ``--path``: a guess is not strict)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise InvalidQuery(
            f"{self.prog}: {message} (see {self.prog} --help)",
            details={"usage": self.format_usage().strip()},
        )


def _add_field(parser: argparse.ArgumentParser, field: Spelled) -> None:
    spec = field.arg
    name = field.name
    number: dict[str, Any] = {"type": int} if field.shape in ("int", "ints") else {}
    if field.shape == "float":
        number = {"type": float}
    if spec.cli == "positional":
        nargs = "+" if field.shape == "ints" else "?" if not field.required else None
        extra: dict[str, Any] = {} if field.required else {"default": field.default}
        parser.add_argument(
            name, metavar=spec.metavar, nargs=nargs, help=spec.help, **number, **extra
        )
    elif spec.cli == "option":
        flags = [spec.short] if spec.short else []
        if field.shape == "strs":
            extra = {"action": "append", "default": []}
        else:
            extra = {**number, "choices": spec.choices}
            extra |= {"required": True} if field.required else {"default": field.default}
        parser.add_argument(
            *flags, spec.option(name), dest=name, metavar=spec.metavar, help=spec.help, **extra
        )
    elif spec.cli in ("flag", "off_flag"):
        flags = [spec.short] if spec.short else []
        action = "store_true" if spec.cli == "flag" else "store_false"
        parser.add_argument(*flags, spec.option(name), dest=name, action=action, help=spec.help)
    elif spec.cli == "text":
        source = parser.add_mutually_exclusive_group()
        source.add_argument(
            spec.option(name), dest=name, default=None, metavar=spec.metavar, help=spec.help
        )
        source.add_argument(
            spec.option(name) + "-file", dest=name + "_file", metavar="FILE", help=_TEXT_FILE_HELP
        )
    elif spec.cli == "choice_flags":
        group = parser.add_mutually_exclusive_group()
        for choice, text in zip(spec.choices or (), spec.choice_help, strict=True):
            group.add_argument(
                "--" + choice,
                dest=name,
                action="store_const",
                const=choice,
                default=field.default,
                help=text,
            )


def request_from(ns: argparse.Namespace, request: type[Any]) -> Any:
    """The verb's request from parsed arguments (an edit's text read if not given)."""
    values: dict[str, Any] = {}
    for field in request_fields(request):
        if field.arg.cli == "hidden":
            continue
        value = getattr(ns, field.name)
        if field.arg.cli == "text" and value is None:
            value = read_text_input(getattr(ns, field.name + "_file"))
        values[field.name] = value
    return request.build(**values)


def read_text_input(text_file: str | None, stdin: BinaryIO | None = None) -> str:
    """The text of ``--text-file F`` (``-`` is stdin), or of stdin when ``text_file`` is None.

    Read byte for byte, at most the engine's cap (``invalid_query`` past it, before anything is
    written), decoded as strict UTF-8. A terminal on stdin is refused instead of waited on."""
    from sleuth.edit.operations import MAX_EDIT_TEXT  # late: a search never needs it

    cap = MAX_EDIT_TEXT
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
    parser.add_argument(
        "--no-daemon",
        action="store_true",
        default=argparse.SUPPRESS,
        help="answer in this process, not through the workspace's daemon",
    )


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``sleuth`` parser: one subparser per CLI verb, plus ``mcp``; with ``only`` (a verb
    argv names), that verb's subparser alone: making every verb's parser costs a one-shot call
    more than parsing does (argparse's set-up per parser)."""
    parser = _Parser(prog="sleuth", description="Code search with hash-stamped references.")
    _workspace_arguments(parser)
    sub = parser.add_subparsers(dest="verb", metavar="COMMAND", required=True)
    for verb in VERBS.values():
        if "cli" not in verb.faces or only not in (None, verb.name):
            continue
        verb_parser = sub.add_parser(verb.name, help=verb.summary)
        for field in request_fields(verb.request_type()):
            _add_field(verb_parser, field)
        _workspace_arguments(verb_parser)
    if only in (None, "mcp"):
        _workspace_arguments(sub.add_parser("mcp", help="serve the verbs as MCP tools over stdio"))
    if only in (None, "daemon"):
        daemon = sub.add_parser("daemon", help="start, stop or ask the workspace's resident engine")
        daemon.add_argument(
            "action",
            choices=DAEMON_ACTIONS,
            help="start it in the background, stop it, say whether it runs, or run it here",
        )
        _workspace_arguments(daemon)
    return parser


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
    """Every text argument must be UTF-8 (argv that is not arrives as lone surrogates)."""
    for action in parser._actions:
        if action.dest in _OS_PATHS:
            continue
        value = getattr(ns, action.dest, None)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str):
                check_text(item, _shown_name(action))


def _verb_named(argv: Sequence[str]) -> str:
    """The verb argv names (its first word that is one, past ``--root DIR``), or ``""``
    (then the whole parser is made, to list the verbs in its usage error or help)."""
    skip = False
    for word in argv:
        if skip:
            skip = False
        elif word == "--root":
            skip = True
        elif word in VERBS or word in ("mcp", "daemon"):
            return word
        elif word == "--":
            break
    return ""


def parse_args(argv: Sequence[str]) -> Invocation:
    """argv -> ``Invocation``; raises ``InvalidQuery`` for usage errors. No workspace I/O
    happens; only the text of ``replace``/``insert`` is read (``--text-file`` or stdin)."""
    parser = build_parser(only=_verb_named(argv) or None)
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
        request=request_from(ns, verb.request_type()) if verb else None,
        action=getattr(ns, "action", "") if ns.verb == "daemon" else "",
    )
