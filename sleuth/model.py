"""The records every layer shares: ``Match`` and ``SkipCounts`` (docs/architecture.md#one-match-record).

Engines yield ``Match``; registering, paging, rendering and scoping never ask which engine
produced one. Positions follow docs/faces.md#positions: lines and columns 1-based, columns in code
points, byte ranges 0-based and end-exclusive.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

__all__ = [
    "Match",
    "Found",
    "CaptureSpan",
    "SkipCounts",
    "SymbolDef",
    "SymbolRef",
    "symbol_id",
    "OnProgress",
]

OnProgress = Callable[[str, int, int], None]
"""``(what, done, total)`` of a step that can take seconds (a graph build, a language server
starting, an index build); ``total`` 0 when unknown, ``what`` empty when the step ended. A
face shows it on a terminal (``Workspace.progress``, docs/faces.md#progress)."""


_M = TypeVar("_M")


CaptureSpan = tuple[int, int, int]
"""(nodes, start_byte, end_byte) of one capture."""
Found = tuple[int, int, dict[str, CaptureSpan] | None, dict[str, Any] | None]
"""(start, end, captures, extra JSON fields) of one match as an engine finds it: plain tuples
(cheap to build by the hundred thousand and to send back from a worker process), made into a
``Match`` only for the matches a page shows."""


@dataclass(frozen=True)
class Match:
    """One hit: a byte range in a file (or a whole file in ``files`` mode)."""

    path: str
    start_byte: int | None = None
    end_byte: int | None = None
    line: int | None = None
    column: int | None = None
    end_line: int | None = None
    end_column: int | None = None
    text: str = ""
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    stamp: str = ""
    captures: dict[str, Any] | None = None
    score: float | None = None
    extra: dict[str, Any] | None = None
    """Mode-specific fields added to the match's JSON (e.g. ``symbol`` for symbols:)."""

    @property
    def sort_key(self) -> tuple[str, int, int]:
        """(path, line, column) — the order of positional matches
        (docs/query.md#ordering-and-pagination)."""
        return (self.path, self.line or 0, self.column or 0)


@dataclass
class SkipCounts:
    """Files left out of a search, counted, never silently
    (docs/faces.md#which-files-are-searched)."""

    binary: int = 0
    too_large: int = 0
    undecodable: int = 0
    unreadable: int = 0
    paths: list[str] = field(default_factory=list)

    def add(self, other: SkipCounts) -> None:
        self.binary += other.binary
        self.too_large += other.too_large
        self.undecodable += other.undecodable
        self.unreadable += other.unreadable

    def to_json(self) -> dict[str, int]:
        out = {"binary": self.binary, "too_large": self.too_large, "undecodable": self.undecodable}
        if self.unreadable:
            out["unreadable"] = self.unreadable
        return out


def symbol_id(path: str, qualified_name: str, kind: str) -> str:
    """The stable id of a declaration: the same for ``symbols:``, ``symbol:#`` and ``graph:``.

    A hash of the file, the container-qualified name (``Class.method``) and the kind, so it
    survives edits elsewhere in the file and changes when the declaration is renamed or moved.
    """
    import xxhash

    return xxhash.xxh3_64_hexdigest(f"{path}\0{qualified_name}\0{kind}".encode())[:12]


@dataclass(frozen=True)
class SymbolDef:
    """A declaration found in a file (by tags.scm or a language server).

    The one declaration record: the tags extractor and ``lsp_bridge`` both yield it, ``kind``
    in the tags vocabulary and ``id`` from ``symbol_id``, so nothing above asks which found it.
    ``start_byte``/``end_byte`` cover the whole declaration (body included); ``name_start``/
    ``name_end`` the name itself. ``container`` is the qualified name of the enclosing
    declaration (``""`` at top level); ``qualified`` = ``container.name``.
    """

    id: str
    name: str
    kind: str
    container: str
    path: str
    start_byte: int
    end_byte: int
    line: int
    end_line: int
    name_start: int
    name_end: int

    @property
    def qualified(self) -> str:
        return f"{self.container}.{self.name}" if self.container else self.name

    def moved(self, delta: int, lines: int) -> SymbolDef:
        """The same declaration ``delta`` bytes and ``lines`` lines further (``_moved``)."""
        fields = self.__dict__.copy()
        for key in ("start_byte", "end_byte", "name_start", "name_end"):
            fields[key] += delta
        fields["line"] += lines
        fields["end_line"] += lines
        return _moved(SymbolDef, fields)


def _moved(cls: type[_M], fields: dict[str, object]) -> _M:
    """An instance of frozen dataclass ``cls`` with these field values, made without its
    ``__init__``: an edit moves every declaration and use after it, thousands in a large file,
    and the frozen ``__init__`` (a guarded ``setattr`` per field) took twice as long
    (tests/test_model.py checks that it equals the constructor's instance)."""
    out = object.__new__(cls)
    object.__setattr__(out, "__dict__", fields)
    return out


@dataclass(frozen=True)
class SymbolRef:
    """A use of a name in a file: a call, a reference, an import or a base class.

    ``enclosing`` is the id of the innermost declaration holding the use (None at top level);
    ``target`` is filled once the use is resolved to a declaration id (by name and scope rules,
    or by a language server), else None.
    """

    name: str
    kind: str  # "call" | "reference" | "import" | "inherit"
    path: str
    start_byte: int
    end_byte: int
    line: int
    enclosing: str | None = None
    target: str | None = None
    module: str | None = None  # for imports: the imported module path as written ("pkg.mod")

    def moved(self, delta: int, lines: int) -> SymbolRef:
        """The same use ``delta`` bytes and ``lines`` lines further (``_moved``)."""
        fields = self.__dict__.copy()
        fields["start_byte"] += delta
        fields["end_byte"] += delta
        fields["line"] += lines
        return _moved(SymbolRef, fields)
