"""The verbs every face serves: one ``Verb`` per verb, with its request and how it runs.

A face looks a verb up here, builds its request (from argv, from MCP arguments or from Python
keywords, all generated from the request's fields), runs it on an ``Engine`` — the part of
``Workbench`` the faces call — and renders the JSON it answers (docs/json.md). Adding a verb is
a request type, a ``Workbench`` method and one entry of ``VERBS``; its CLI parser and MCP tool
follow from them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from sleuth.query.request import SearchRequest
from sleuth.service.find import FindRequest

__all__ = [
    "Engine",
    "EngineFactory",
    "Result",
    "JsonAnswer",
    "Verb",
    "VERBS",
    "EDIT_VERBS",
    "values_of",
]

JsonAnswer = dict[str, Any] | list[dict[str, Any]]
"""What a verb answers: a JSON object (a list of rows for the CLI's ``doctor``)."""


class Result(Protocol):
    """What a verb method of the engine returns: something that serialises to JSON."""

    def to_json(self) -> dict[str, Any]: ...


class Engine(Protocol):
    """The part of ``Workbench`` the faces call; each verb method takes its request's fields
    as keywords (unit tests of a face pass a fake)."""

    def search(self, *args: Any, **kwargs: Any) -> Result: ...

    def read(self, *args: Any, **kwargs: Any) -> Result: ...

    def select(self, *args: Any, **kwargs: Any) -> Result: ...

    def find(self, *args: Any, **kwargs: Any) -> Result: ...

    def index_now(self) -> int: ...

    def replace(self, *args: Any, **kwargs: Any) -> Result: ...

    def insert(self, *args: Any, **kwargs: Any) -> Result: ...

    def delete(self, *args: Any, **kwargs: Any) -> Result: ...

    def copy(self, *args: Any, **kwargs: Any) -> Result: ...

    def move(self, *args: Any, **kwargs: Any) -> Result: ...

    def undo(self, *args: Any, **kwargs: Any) -> Result: ...

    def rename(self, *args: Any, **kwargs: Any) -> Result: ...

    def doctor(self) -> list[dict[str, Any]]: ...

    def recovered(self) -> list[dict[str, Any]]: ...

    def close(self) -> None: ...


EngineFactory = Callable[[str, bool], Engine]
"""Builds the engine for ``(root, no_ignore)``."""


def values_of(request: object) -> dict[str, Any]:
    """A request's fields as keywords for the engine method of the same verb."""
    return {f.name: getattr(request, f.name) for f in dataclasses.fields(request)}  # type: ignore[arg-type]


def _method(name: str) -> Callable[[Engine, Any], JsonAnswer]:
    def run(engine: Engine, request: Any) -> JsonAnswer:
        answer: JsonAnswer = getattr(engine, name)(**values_of(request)).to_json()
        return answer

    return run


def _index(engine: Engine, request: Any) -> JsonAnswer:
    del request
    from sleuth.query.index import INDEX_FILE  # late: --help and usage errors stay instant
    from sleuth.workspace.state_folder import STATE_DIR

    return {"indexed": engine.index_now(), "path": f"{STATE_DIR}/{INDEX_FILE}"}


def _doctor(engine: Engine, request: Any) -> JsonAnswer:
    if request.recover:
        return {"recovered": engine.recovered()}
    return engine.doctor()


def _doctor_object(engine: Engine, request: Any) -> JsonAnswer:
    del request
    return {"servers": engine.doctor(), "recovered": engine.recovered()}


def _provider(engine: Engine, request: Any) -> JsonAnswer:
    from sleuth.service.provider import run_verb  # late: only this verb needs it

    return run_verb(engine, request)


@dataclass(frozen=True)
class Verb:
    """One verb: its request type, its one-line summary (CLI help) and its description (the
    MCP tool's), whether it only reads, and how it runs."""

    name: str
    request: type[Any] | str
    """The request type, or its name in ``sleuth.service.requests`` or ``edit_requests``
    (imported when first needed: a ``sleuth search`` never pays for the other verbs' request
    classes)."""
    summary: str
    description: str
    run: Callable[[Engine, Any], JsonAnswer]
    read_only: bool = True
    object_run: Callable[[Engine, Any], JsonAnswer] | None = None
    """How to answer where the answer must be a JSON object (MCP structured content), when
    ``run`` may answer a list."""
    faces: tuple[str, ...] = ("cli", "mcp")

    def request_type(self) -> type[Any]:
        """The verb's request type."""
        if isinstance(self.request, str):
            from sleuth.service import edit_requests, requests

            found: type[Any] = getattr(requests, self.request, None) or getattr(
                edit_requests, self.request
            )
            return found
        return self.request

    def run_object(self, engine: Engine, request: Any) -> JsonAnswer:
        return (self.object_run or self.run)(engine, request)


def _edit(name: str, request: str, summary: str, description: str) -> Verb:
    return Verb(name, request, summary, description, _method(name), read_only=False)


VERBS: dict[str, Verb] = {
    verb.name: verb
    for verb in (
        Verb(
            "search",
            SearchRequest,
            "search the workspace",
            "Search: a literal (falls back to regex, words), or regex:, files:, ast: (code, "
            "$X/$$$X capture), symbols:NAME, symbol:#ID, graph:[PATH|#ID], semantic:. Returns "
            "SEARCH#H, path:line:col #n text per match.",
            _method("search"),
        ),
        Verb(
            "read",
            "ReadRequest",
            "read a file or a reference (registers a RESULT#)",
            "Read a path (offset/limit lines) or what a reference selects. Returns RESULT#, each "
            "path once, N| text lines.",
            _method("read"),
        ),
        Verb(
            "select",
            "SelectRequest",
            "keep some matches of a result as a RESULT#",
            "Keep matches #n of a result (any page) as a RESULT#.",
            _method("select"),
        ),
        Verb(
            "find",
            FindRequest,
            "find files (fuzzy, frecency) or grep their contents",
            "Find files (fuzzy path, frecency) or grep contents; pages by offset.",
            _method("find"),
        ),
        Verb(
            "index",
            "IndexRequest",
            "build or refresh the trigram index in .sleuth/",
            "Build or refresh the trigram index in .sleuth/.",
            _index,
            faces=("cli",),
        ),
        _edit(
            "replace",
            "ReplaceRequest",
            "replace what a reference selects with new text",
            "Replace what a reference selects with text (all files or none). Returns RESULT# + "
            "diff.",
        ),
        _edit(
            "insert",
            "InsertRequest",
            "insert text before (or after) what a reference selects",
            "Insert text before/after what a reference selects (:line: whole lines). Returns "
            "RESULT# + diff.",
        ),
        _edit(
            "delete",
            "DeleteRequest",
            "delete what a reference selects (whole lines for :line)",
            "Delete what a reference selects (:line: whole lines). Returns RESULT# + diff.",
        ),
        _edit(
            "copy",
            "CopyRequest",
            "copy what a reference selects to --to TARGET",
            "Copy what a reference selects to `to` (reference or PATH:LINE). Returns RESULT# + diff.",
        ),
        _edit(
            "move",
            "MoveRequest",
            "move what a reference selects to --to TARGET",
            "Move what a reference selects to `to` (reference or PATH:LINE). Returns RESULT# + diff.",
        ),
        _edit(
            "undo",
            "UndoRequest",
            "undo an edit by its RESULT#, if its files are unchanged since",
            "Undo an edit by its RESULT# if its files are unchanged. Returns RESULT# + diff.",
        ),
        Verb(
            "rename",
            "RenameRequest",
            "rename a symbol through its language server (REF NEW or REF#NEW)",
            "Rename a symbols: match via its language server. Returns RESULT# + diff + the "
            "old name's other occurrences.",
            _method("rename"),
            read_only=False,
        ),
        Verb(
            "doctor",
            "DoctorRequest",
            "list the language servers: found, version, how to install",
            "Language servers: found, version, install.",
            _doctor,
            object_run=_doctor_object,
        ),
        Verb(
            "provider",
            "ProviderRequest",
            "the provider API: manifest, or search --query-json JSON [--opts-json JSON]",
            "The provider API (docs/faces.md#provider-api).",
            _provider,
            faces=("cli",),  # MCP has search, which answers the same (docs/faces.md#provider-api)
        ),
    )
}

EDIT_VERBS: tuple[str, ...] = ("replace", "insert", "delete", "copy", "move", "undo")
