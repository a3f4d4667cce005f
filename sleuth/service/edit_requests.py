"""The frozen requests of the edit verbs: ``replace``, ``insert``, ``delete``, ``copy``,
``move`` and ``undo``.

Declared as every request is (``requests``, which holds the other verbs' requests); the verb
table finds a request by its name in either module. The text of an edit is capped here for
every face, at the Editor's own bound (``sleuth.edit.operations.MAX_EDIT_TEXT``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from sleuth.errors import InvalidQuery
from sleuth.fields import Request, arg
from sleuth.query.request import check_text, non_empty

__all__ = [
    "ReplaceRequest",
    "InsertRequest",
    "DeleteRequest",
    "CopyRequest",
    "MoveRequest",
    "UndoRequest",
    "EditRequest",
    "Where",
]

Where = Literal["before", "after"]

_EDIT_REF = "what to edit: SEARCH#H:N:match, SEARCH#H:all:line, RESULT#ID ..."
_EDIT_REF_MCP = "a SEARCH# or RESULT# reference"
_EDIT_TEXT = "the new text"
_EDIT_TEXT_MCP = "the text, used exactly"
_TARGET = "a reference, or PATH:LINE (before that line)"


def _edit_text(verb: str, text: object) -> str:
    if not isinstance(text, str):
        raise InvalidQuery(
            f"{verb} needs text, the new text as a string (on the command line: --text, "
            "--text-file or stdin)",
            details={"argument": "text"},
        )
    check_text(text, "text")
    from sleuth.edit.operations import MAX_EDIT_TEXT  # the Editor's bound; late: edits only

    if len(text) > MAX_EDIT_TEXT:
        raise InvalidQuery(
            f"edit text too large ({len(text)} characters, at most {MAX_EDIT_TEXT}): "
            "nothing was written",
            details={"length": len(text), "max": MAX_EDIT_TEXT},
        )
    return text


def _edit_ref(verb: str, ref: object) -> str:
    return non_empty(ref, f"{verb} needs a reference, e.g. SEARCH#1a2b3c4d:2:match", "ref")


@dataclass(frozen=True)
class ReplaceRequest(Request):
    """``replace REF``: every range ``REF`` selects becomes ``text``."""

    ref: str = arg(cli="positional", metavar="REF", help=_EDIT_REF, describe=_EDIT_REF_MCP)
    text: str = arg(cli="text", metavar="T", help=_EDIT_TEXT, describe=_EDIT_TEXT_MCP)

    @classmethod
    def check(cls, values: dict[str, Any]) -> dict[str, Any]:
        return {
            **values,
            "ref": _edit_ref("replace", values["ref"]),
            "text": _edit_text("replace", values["text"]),
        }


@dataclass(frozen=True)
class InsertRequest(Request):
    """``insert REF [--before|--after]``: ``text`` beside every range ``REF`` selects."""

    ALIASES: ClassVar[Mapping[str, str]] = {"position": "where"}

    ref: str = arg(cli="positional", metavar="REF", help=_EDIT_REF, describe=_EDIT_REF_MCP)
    text: str = arg(cli="text", metavar="T", help=_EDIT_TEXT, describe=_EDIT_TEXT_MCP)
    where: Where = arg(
        "before",
        cli="choice_flags",
        choices=("before", "after"),
        choice_help=(
            "insert before each selected range (default)",
            "insert after each selected range",
        ),
        help="where to insert: before or after each selected range",
        describe="before or after",
    )

    @classmethod
    def check(cls, values: dict[str, Any]) -> dict[str, Any]:
        where = values["where"]
        if where not in ("before", "after"):
            raise InvalidQuery(f"where must be 'before' or 'after', got {where!r}")
        return {
            **values,
            "ref": _edit_ref("insert", values["ref"]),
            "text": _edit_text("insert", values["text"]),
            "where": where,
        }


@dataclass(frozen=True)
class DeleteRequest(Request):
    """``delete REF``: every range ``REF`` selects goes (whole lines for ``:line``)."""

    ref: str = arg(cli="positional", metavar="REF", help=_EDIT_REF, describe=_EDIT_REF_MCP)

    @classmethod
    def check(cls, values: dict[str, Any]) -> dict[str, Any]:
        return {**values, "ref": _edit_ref("delete", values["ref"])}


@dataclass(frozen=True)
class CopyRequest(Request):
    """``copy REF --to TARGET``: the selected text, again at ``TARGET``."""

    ref: str = arg(cli="positional", metavar="REF", help=_EDIT_REF, describe=_EDIT_REF_MCP)
    to: str = arg(metavar="TARGET", help=_TARGET)

    @classmethod
    def check(cls, values: dict[str, Any]) -> dict[str, Any]:
        verb = "move" if issubclass(cls, MoveRequest) else "copy"
        to = non_empty(values["to"], f"{verb} needs to: a reference or PATH:LINE", "to")
        return {**values, "ref": _edit_ref(verb, values["ref"]), "to": to}


@dataclass(frozen=True)
class MoveRequest(CopyRequest):
    """``move REF --to TARGET``: the selected text, moved to ``TARGET`` in one edit (the same
    fields as a copy)."""


@dataclass(frozen=True)
class UndoRequest(Request):
    """``undo RESULT#ID``: restore what that edit replaced, if its files are unchanged since."""

    result: str = arg(cli="positional", metavar="RESULT#ID", help="the RESULT# an edit answered")

    @classmethod
    def check(cls, values: dict[str, Any]) -> dict[str, Any]:
        result = non_empty(
            values["result"],
            "undo needs the RESULT# an edit answered, e.g. RESULT#1a2b3c4d",
            "result",
        )
        return {**values, "result": result}


EditRequest = (
    ReplaceRequest | InsertRequest | DeleteRequest | CopyRequest | MoveRequest | UndoRequest
)
