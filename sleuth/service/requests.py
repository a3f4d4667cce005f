"""The frozen request of every verb but ``search`` (which ``sleuth.query.request`` declares).

Each field is declared once, with its type, default and ``Arg`` (help text, CLI spelling, MCP
description); the CLI parser, the MCP tool schemas and the checks every face shares come from
here (docs/faces.md). ``build`` validates without I/O and raises ``invalid_query`` naming what
is wrong. The edit verbs' requests are declared in ``edit_requests``, ``search``'s in
``sleuth.query.request``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from sleuth.errors import InvalidQuery
from sleuth.fields import Request, arg
from sleuth.query.request import (
    DEFAULT_MAX_BYTES,
    SearchRequest,
    check_max_bytes,
    check_text,
    non_empty,
    unicode_problem,
)
from sleuth.resources.refs import looks_like_ref

__all__ = [
    "SearchRequest",
    "ReadRequest",
    "SelectRequest",
    "IndexRequest",
    "RenameRequest",
    "DoctorRequest",
    "ProviderRequest",
    "check_text",
    "unicode_problem",
]


_IDENTIFIER = re.compile(r"[^\W\d]\w*|\$\w*", re.UNICODE)
"""What a rename's new name must be: an identifier (``$`` allowed, as JavaScript and PHP do)."""


def _positive(value: object, what: str) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise InvalidQuery(f"{what}, got {value!r}")
    return value


@dataclass(frozen=True)
class ReadRequest(Request):
    """``read TARGET [--offset N] [--limit N]``: a path or reference, and a line window."""

    ALIASES: ClassVar[Mapping[str, str]] = {"path": "target"}

    target: str = arg(
        cli="positional",
        metavar="TARGET",
        help="a path, or a reference: SEARCH#H:N:match, SEARCH#H:all:line, RESULT#ID ...",
        describe="a path or a reference",
    )
    offset: int | None = arg(
        None,
        metavar="N",
        help="first line to show (1-based)",
        describe="first line (1-based)",
    )
    limit: int | None = arg(
        None, metavar="N", help="number of lines to show", describe="number of lines"
    )
    max_bytes: int | None = arg(
        DEFAULT_MAX_BYTES,
        metavar="N",
        help="text budget: the read is cut at a line to fit (see next_offset)",
        describe="text budget (next_offset continues)",
    )

    @classmethod
    def check(cls, values: dict[str, Any]) -> dict[str, Any]:
        return {
            "max_bytes": check_max_bytes(values["max_bytes"]),
            **values,
            "target": non_empty(
                values["target"], "read needs a target: a path or a reference", "target"
            ),
            "offset": _positive(values["offset"], "offset is the first line to read (1-based)"),
            "limit": _positive(values["limit"], "limit is the number of lines to read"),
        }


@dataclass(frozen=True)
class SelectRequest(Request):
    """``select REF N [N...]``: the matches ``#N`` of result ``REF`` to keep."""

    ref: str = arg(
        cli="positional",
        metavar="REF",
        help="a result: SEARCH#H or RESULT#ID",
        describe="SEARCH#H (SEARCH#H:all:line: whole lines) or RESULT#ID",
    )
    items: tuple[int, ...] = arg(
        cli="positional",
        metavar="N",
        help="match numbers (#n) to keep",
        describe="match numbers #n",
    )

    @classmethod
    def check(cls, values: dict[str, Any]) -> dict[str, Any]:
        ref = non_empty(values["ref"], "select needs a reference, e.g. SEARCH#1a2b3c4d", "ref")
        items = values["items"]
        if isinstance(items, (str, bytes)) or not items:
            raise InvalidQuery("select needs at least one item number (as listed by #n)")
        for item in items:
            _positive(item, "item numbers are positive integers (the #n of a match)")
        return {**values, "ref": ref, "items": tuple(items)}


@dataclass(frozen=True)
class IndexRequest(Request):
    """``index``: build or refresh the trigram index in ``.sleuth/``."""


@dataclass(frozen=True)
class RenameRequest(Request):
    """``rename REF NEW`` (or ``rename REF#NEW``): one symbol and its new name."""

    ref: str = arg(
        cli="positional",
        metavar="REF",
        help="the symbol: a symbols: match (SEARCH#H:N:match); or REF#NEW",
        describe="a symbols: match (or REF#NEW_NAME)",
    )
    new_name: str | None = arg(
        None,
        cli="positional",
        metavar="NEW",
        help="the new name (or write REF#NEW)",
        describe="the new name",
    )
    force: bool = arg(
        False,
        cli="flag",
        help="rename even where the new name is already used (else conflict, exit 3)",
        describe="even if the name is taken",
    )

    @classmethod
    def check(cls, values: dict[str, Any]) -> dict[str, Any]:
        ref = non_empty(
            values["ref"],
            "rename needs a reference to a symbol's name, e.g. "
            "SEARCH#1a2b3c4d:1:match (a symbols: match), and the new name",
            "ref",
        )
        new_name = values["new_name"]
        if new_name is not None:
            new_name = non_empty(new_name, "rename needs new_name, a non-empty name", "new_name")
        force = values["force"]
        if not isinstance(force, bool):
            raise InvalidQuery(f"force is true or false, got {force!r}")
        if new_name is None:  # the REF#NEW_NAME form
            head, sep, tail = ref.rpartition("#")
            if not sep or not looks_like_ref(head):
                raise InvalidQuery(
                    f"rename needs new_name (or ref written as REF#NEW_NAME), got ref={ref!r} "
                    "and no new_name",
                    details={"argument": "new_name"},
                )
            ref, new_name = head, tail
        if not _IDENTIFIER.fullmatch(new_name):
            raise InvalidQuery(
                f"not a valid identifier for a rename: {new_name!r}",
                details={"argument": "new_name"},
            )
        return {**values, "ref": ref, "new_name": new_name, "force": force}


@dataclass(frozen=True)
class DoctorRequest(Request):
    """``doctor``: which language servers run here, and how to install the missing ones;
    with ``recover``, the interrupted edits recovery could not finish (docs/SAFETY.md)."""

    recover: bool = arg(
        False,
        cli="flag",
        mcp=False,
        help="list interrupted edits that recovery left for you "
        "(.sleuth/recovered/), with each file and why",
    )

    @classmethod
    def check(cls, values: dict[str, Any]) -> dict[str, Any]:
        return {**values, "recover": bool(values["recover"])}


def _json_argument(text: str | None, name: str) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidQuery(
            f"--{name.replace('_', '-')} is not JSON: {exc.msg} at position {exc.pos}",
            details={"argument": name, "position": exc.pos},
        ) from None


@dataclass(frozen=True)
class ProviderRequest(Request):
    """``sleuth provider manifest`` or ``sleuth provider search --query-json Q [--opts-json O]``:
    JSON texts, parsed and checked when the provider answers, so a malformed one is an answer
    (the error object on stdout) as it is from Python."""

    action: str = arg(
        cli="positional",
        metavar="ACTION",
        help="manifest: the modes and limits; search: one page of matches",
    )
    query_json: str | None = arg(
        None,
        metavar="JSON",
        help='search: the query as JSON: "text", {"regex": ..., "flags": "i"} or {"semantic": ...}',
    )
    opts_json: str | None = arg(
        None, metavar="JSON", help='search: the options as JSON: {"path", "limit", "cursor"}'
    )

    @classmethod
    def check(cls, values: dict[str, Any]) -> dict[str, Any]:
        action = values["action"]
        if action not in ("manifest", "search"):
            raise InvalidQuery(
                f"provider takes manifest or search, got {action!r}",
                details={"argument": "action", "valid": ["manifest", "search"]},
            )
        if action == "manifest" and (values["query_json"] or values["opts_json"]):
            raise InvalidQuery(
                "provider manifest takes no --query-json or --opts-json",
                details={"argument": "action"},
            )
        if action == "search" and values["query_json"] is None:
            raise InvalidQuery(
                "provider search needs --query-json, e.g. --query-json '\"get_user\"'",
                details={"argument": "query_json"},
            )
        return values

    @property
    def query(self) -> Any:
        """The query, parsed from ``--query-json``."""
        return _json_argument(self.query_json, "query_json")

    @property
    def opts(self) -> Any:
        """The options, parsed from ``--opts-json`` (None: every default)."""
        return _json_argument(self.opts_json, "opts_json")
