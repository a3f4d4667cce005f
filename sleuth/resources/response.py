"""``SearchResult``: the typed answer of ``search``; ``to_json`` is exactly docs/json.md#search.

Match bodies are stored in the registry in their JSON form; a page adds each match's number
and references. Nothing here knows which engine produced a match.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sleuth.model import Match

__all__ = ["SearchResult", "match_body", "numbered", "all_refs"]


def match_body(m: Match) -> dict[str, Any]:
    """The stored JSON body of a match (without its number and references)."""
    return {
        "path": m.path,
        "line": m.line,
        "column": m.column,
        "end_line": m.end_line,
        "end_column": m.end_column,
        "start_byte": m.start_byte,
        "end_byte": m.end_byte,
        "text": m.text,
        "context": {"before": list(m.before), "after": list(m.after)}
        if m.line is not None
        else None,
        "captures": m.captures,
        "score": m.score,
        **(m.extra or {}),
    }


def numbered(result: str, n: int, body: dict[str, Any]) -> dict[str, Any]:
    """A match as it appears in a page: ``n`` first, references before captures
    (docs/json.md#a-match)."""
    out: dict[str, Any] = {"n": n}
    for key in (
        "path",
        "line",
        "column",
        "end_line",
        "end_column",
        "start_byte",
        "end_byte",
        "text",
        "context",
    ):
        out[key] = body.get(key)
    out["ref"] = {"line": f"{result}:{n}:line", "match": f"{result}:{n}:match"}
    out["captures"] = body.get("captures")
    out["score"] = body.get("score")
    for key, value in body.items():
        if key not in out:
            out[key] = value  # mode-specific fields (symbols: "symbol")
    return out


def all_refs(result: str) -> dict[str, str]:
    return {"line": f"{result}:all:line", "match": f"{result}:all:match"}


@dataclass
class SearchResult:
    """One page of a search result."""

    query: str
    mode: str
    fallback: str | None
    result: str
    complete: bool
    incomplete_reason: str | None
    total: int | None
    total_at_least: int | None
    matches: list[dict[str, Any]]
    next_cursor: str | None
    skipped: dict[str, int]
    possible_names: list[dict[str, Any]] | None = None
    possible_names_skipped: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "query": self.query,
            "mode": self.mode,
            "fallback": self.fallback,
            "result": self.result,
            "complete": self.complete,
            "incomplete_reason": self.incomplete_reason,
            "total": self.total,
        }
        if self.total is None:
            out["total_at_least"] = self.total_at_least
        out["matches"] = self.matches
        out["all"] = all_refs(self.result)
        out["next_cursor"] = self.next_cursor
        out["skipped"] = self.skipped
        out["possible_names"] = self.possible_names
        if self.possible_names_skipped:
            out["possible_names_skipped"] = self.possible_names_skipped
        out.update(self.extra)
        return out
