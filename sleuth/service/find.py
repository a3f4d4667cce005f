"""``find``: the harness search tool, its request and its answer (docs/faces.md#find).

``FindRequest`` is the frozen request every face builds (the CLI's ``sleuth find``, the MCP
tool ``find``, ``Workbench.find``); ``FindResult`` is its answer, whose ``to_json`` is
docs/json.md#find. The run itself is ``sleuth.service.finder``.

Unlike every other verb, ``find`` takes unknown arguments: an agent's harness may send
parameters of another search tool, and refusing the whole call for one of them costs a turn.
Its ``UNKNOWN_FIELD`` is ``unrecognized``: a face's lenient ``Request.canonical`` renames the
aliases (``pattern`` for ``query``, and each field's camelCase spelling such as
``maxResults``) and collects every other name there; the answer then carries a ``warning``
naming them and the valid ones. ``FindRequest.build`` itself stays strict, as every request's
(tests/service), so a face takes the lenient path on purpose: the MCP server for the ``find``
tool, ``Workbench.find`` through ``strict``. The command line stays strict: an unknown option
there is a usage error, as for every verb.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from sleuth.errors import InvalidQuery
from sleuth.fields import Request, arg, request_fields
from sleuth.query.request import MAX_CONTEXT, MAX_QUERY_CHARS, check_text

__all__ = [
    "FindRequest",
    "FindResult",
    "FindMode",
    "GrepMode",
    "DEFAULT_MAX_RESULTS",
    "MAX_RESULTS",
    "unrecognized_warning",
]

FindMode = Literal["files", "grep"]
GrepMode = Literal["plain_text", "regex", "fuzzy"]
DEFAULT_MAX_RESULTS = 50
MAX_RESULTS = 500
_MODES = ("files", "grep")
_GREP_MODES = ("plain_text", "regex", "fuzzy")


def _count(values: dict[str, Any], name: str, default: int, low: int) -> int:
    value = values[name]
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        what = "a positive integer" if low else "a non-negative integer"
        raise InvalidQuery(f"{name} must be {what}, got {value!r}", details={"argument": name})
    return value


def _choice(values: dict[str, Any], name: str, choices: tuple[str, ...]) -> str:
    value = values[name]
    if value not in choices:
        raise InvalidQuery(
            f"{name} must be one of {', '.join(choices)}, got {value!r}",
            details={"argument": name, "valid": list(choices)},
        )
    return str(value)


@dataclass(frozen=True)
class FindRequest(Request):
    """One ``find`` call: files mode (fuzzy paths) or grep mode (file contents)."""

    ALIASES: ClassVar[Mapping[str, str]] = {"pattern": "query"}
    UNKNOWN_FIELD: ClassVar[str | None] = "unrecognized"

    query: str = arg(
        cli="positional",
        metavar="QUERY",
        help="what to find, with inline constraints: '*.rs', 'src/', '!tests/' "
        "(files mode: fuzzy path text, may be empty; grep mode: the text after the constraints)",
        describe="text, after any constraints: '*.rs', 'src/', '!tests/'",
    )
    mode: FindMode = arg(
        "files",
        choices=_MODES,
        help="files: fuzzy path search ranked with frecency (default); grep: search contents",
        describe="files (fuzzy paths) or grep (contents)",
    )
    grep_mode: GrepMode = arg(
        "plain_text",
        choices=_GREP_MODES,
        help="grep mode: plain_text (default), regex, or fuzzy (tolerates typos, ranked)",
        describe="plain_text, regex or fuzzy (typos)",
    )
    case_sensitive: bool = arg(
        False,
        cli="flag",
        help="match case exactly (default: smart case, case-sensitive only when the query "
        "has an upper-case letter)",
        describe="false: smart case",
    )
    context_lines: int = arg(
        0,
        metavar="N",
        short="-C",
        help="grep mode: lines of context before and after each match",
        describe="grep: context lines",
    )
    max_results: int = arg(
        DEFAULT_MAX_RESULTS,
        metavar="N",
        help=f"matches per page (default {DEFAULT_MAX_RESULTS}, at most {MAX_RESULTS})",
        describe=f"page size (max {MAX_RESULTS})",
    )
    offset: int = arg(
        0,
        metavar="N",
        help="files mode: the number of items to skip; grep mode: the index of the first file "
        "to search (next_file_offset of the previous page)",
        describe="files: items to skip; grep: next_file_offset",
    )
    path: str | None = arg(
        None, help="only under this folder (or in this file)", describe="folder or file"
    )
    ext: str | None = arg(
        None, help="only files with this extension: 'rs', or 'py,pyi'", describe="'rs' or 'py,pyi'"
    )
    unrecognized: tuple[str, ...] = arg(
        (),
        cli="hidden",
        mcp=False,
        help="arguments given that find does not take (answered as a warning)",
    )

    @classmethod
    def check(cls, values: dict[str, Any]) -> dict[str, Any]:
        query = values["query"]
        if not isinstance(query, str):
            raise InvalidQuery("query must be a string", details={"argument": "query"})
        check_text(query, "query")
        if "\x00" in query:
            raise InvalidQuery("the query contains a NUL byte", details={"argument": "query"})
        if len(query) > MAX_QUERY_CHARS:
            raise InvalidQuery(
                f"query too long ({len(query)} characters, at most {MAX_QUERY_CHARS})",
                details={"length": len(query), "max": MAX_QUERY_CHARS},
            )
        case_sensitive = values["case_sensitive"]
        if case_sensitive is None:
            case_sensitive = False
        if not isinstance(case_sensitive, bool):
            raise InvalidQuery(f"case_sensitive is true or false, got {case_sensitive!r}")
        path = values["path"]
        if path is not None and not isinstance(path, str):
            raise InvalidQuery(f"path must be a string, got {path!r}", details={"argument": "path"})
        ext = values["ext"]
        if isinstance(ext, (list, tuple)) and all(isinstance(e, str) for e in ext):
            ext = ",".join(ext)
        if ext is not None and not isinstance(ext, str):
            raise InvalidQuery(f"ext must be a string such as 'rs', got {ext!r}")
        for text, name in ((path, "path"), (ext, "ext")):
            if text:
                check_text(text, name)
        unrecognized = values["unrecognized"]
        if isinstance(unrecognized, str) or not all(isinstance(u, str) for u in unrecognized):
            raise InvalidQuery("unrecognized is a list of argument names")
        return {
            **values,
            "mode": _choice(values, "mode", _MODES),
            "grep_mode": _choice(values, "grep_mode", _GREP_MODES),
            "case_sensitive": case_sensitive,
            "context_lines": min(_count(values, "context_lines", 0, 0), MAX_CONTEXT),
            "max_results": min(_count(values, "max_results", DEFAULT_MAX_RESULTS, 1), MAX_RESULTS),
            "offset": _count(values, "offset", 0, 0),
            "path": path or None,
            "ext": ext or None,
            "unrecognized": tuple(dict.fromkeys(map(str, unrecognized))),
        }


def _offered() -> tuple[str, ...]:
    return tuple(f.name for f in request_fields(FindRequest) if f.arg.mcp)


def unrecognized_warning(unrecognized: tuple[str, ...]) -> str | None:
    """The warning of an answer to a call with unknown arguments, naming the valid ones."""
    if not unrecognized:
        return None
    return (
        f"Unrecognized parameter(s): {', '.join(unrecognized)} (ignored); valid: "
        f"{', '.join(_offered())}; aliases: pattern->query"
    )


@dataclass
class FindResult:
    """One page of a ``find`` answer (docs/json.md#find)."""

    query: str
    mode: str
    grep_mode: str | None
    needle: str
    case_sensitive: bool
    result: str | None
    complete: bool
    incomplete_reason: str | None
    total_matched: int
    matches: list[dict[str, Any]]
    offset: int
    max_results: int
    next_offset: int | None
    files_with_matches: int | None = None
    note: str | None = None
    warning: str | None = None
    diagnostics: dict[str, Any] | None = None
    skipped: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "query": self.query,
            "mode": self.mode,
            "grep_mode": self.grep_mode,
            "needle": self.needle,
            "case_sensitive": self.case_sensitive,
            "result": self.result,
            "complete": self.complete,
            "incomplete_reason": self.incomplete_reason,
            "total_matched": self.total_matched,
            "matches": self.matches,
            "all": None
            if self.result is None
            else {"line": f"{self.result}:all:line", "match": f"{self.result}:all:match"},
            "offset": self.offset,
            "max_results": self.max_results,
        }
        if self.mode == "grep":
            out["next_file_offset"] = self.next_offset
            out["files_with_matches"] = self.files_with_matches
        else:
            out["next_offset"] = self.next_offset
        out["skipped"] = self.skipped
        out["note"] = self.note
        out["warning"] = self.warning
        out["diagnostics"] = self.diagnostics
        return out
