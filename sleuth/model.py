"""The records every layer shares: ``Match`` and ``SkipCounts`` (DESIGN "One Match type").

Engines yield ``Match``; registering, paging, rendering and scoping never ask which engine
produced one. Positions follow SPEC §2: lines and columns 1-based, columns in code points, byte
ranges 0-based and end-exclusive.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Match", "SkipCounts"]


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

    @property
    def sort_key(self) -> tuple[str, int, int]:
        """(path, line, column) — the order of SPEC §3.3 for positional matches."""
        return (self.path, self.line or 0, self.column or 0)


@dataclass
class SkipCounts:
    """Files left out of a search, counted (SPEC §1: never silent)."""

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
