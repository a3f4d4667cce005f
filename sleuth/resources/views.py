"""``read`` and ``select`` (docs/references.md): selections registered as ``RESULT#`` references.

``read(target, offset, limit)`` answers the text a path or reference selects, with a line window
(``offset`` = first line, 1-based; ``limit`` = number of lines); ``select(ref, items)`` keeps
some matches of a result. Both register what they answer as a ``RESULT#`` whose ranges and
stamps are exactly what was shown, so it can be read again, used as a search scope, or edited.

Every answer is bounded (``read_bounds``): past ``MAX_READ_RANGES`` ranges or ``MAX_READ_BYTES``
of text it is refused with ``invalid_query`` saying how to narrow it, never cut.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import xxhash

from sleuth.errors import InvalidPath, InvalidQuery, NotFound, Unsupported
from sleuth.model import SkipCounts
from sleuth.query.request import check_text
from sleuth.resources.read_bounds import (
    DEFAULT_READ_LINES,
    MAX_READ_RANGES,
    check_count,
    check_size,
    fit,
    narrow_hint,
    window,
)
from sleuth.resources.refs import MAX_MATCH_NUMBER, looks_like_ref, parse_ref
from sleuth.resources.registry import Registry
from sleuth.resources.registry_rows import MatchRow, ResultRow
from sleuth.resources.selection import Range, Resolver, Selection
from sleuth.workspace import FileText, Workspace

__all__ = ["ReadResult", "Views"]


@dataclass
class ReadResult:
    """The answer of ``read``/``select`` (and, later, of edits)."""

    result: str
    source: str
    refreshed: bool
    complete: bool
    ranges: list[dict[str, Any]]
    incomplete_reason: str | None = None
    changed: list[str] | None = None
    diff: str | None = None
    diff_truncated: bool | None = None
    untouched: list[dict[str, Any]] | None = None
    next_offset: int | None = None
    """The line a read cut to fit ``max_bytes`` continues at (docs/json.md#read-and-select)."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "result": self.result,
            "source": self.source,
            "refreshed": self.refreshed,
            "complete": self.complete,
        }
        if self.incomplete_reason:
            out["incomplete_reason"] = self.incomplete_reason
        out["ranges"] = self.ranges
        if self.changed is not None:
            out["changed"] = self.changed
        if self.diff is not None:
            out["diff"] = self.diff
        if self.diff_truncated is not None:
            out["diff_truncated"] = self.diff_truncated
        if self.untouched is not None:
            out["untouched"] = self.untouched
        if self.next_offset is not None:
            out["next_offset"] = self.next_offset
        return out


def _text(ft: FileText, r: Range) -> str:
    return ft.data[r.start_byte : r.end_byte].decode("utf-8", errors="replace")


class Views:
    """Reads and selections over one workspace's registry."""

    def __init__(self, ws: Workspace, registry: Registry, resolver: Resolver) -> None:
        self._ws = ws
        self._registry = registry
        self._resolver = resolver

    # -- read -------------------------------------------------------------------------------

    def read(
        self,
        target: str,
        offset: int | None = None,
        limit: int | None = None,
        max_bytes: int | None = None,
    ) -> ReadResult:
        if not isinstance(target, str) or not target:
            raise InvalidQuery("read needs a target: a path or a reference")
        check_text(target, "target")
        for name, value, what in (
            ("offset", offset, "the first line to read (1-based)"),
            ("limit", limit, "the number of lines to read"),
        ):
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 1
            ):
                raise InvalidQuery(f"{name} is {what}, a positive integer; got {value!r}")
        extra: dict[str, Any] = {"offset": offset, "limit": limit}
        is_ref = looks_like_ref(target)
        if is_ref:
            ref = parse_ref(target)
            check_count(self._resolver, ref)  # before resolving, which may complete a paged :all
            sel = self._resolver.resolve(target)
            if ref.every_match and not sel.complete:
                extra["incomplete_all"] = True  # edits must refuse it, as the :all itself
        else:
            sel = self._path_selection(target)
        truncated = False
        if offset is not None or limit is not None or not is_ref:
            sel, truncated = window(sel, offset or 1, limit, self._current)
        if is_ref:
            check_size(sel, narrow_hint(ref))
        else:
            check_size(sel, "pass offset and limit to read fewer lines")
        reason = (
            f"only the first {DEFAULT_READ_LINES} lines were read: pass offset and limit for more"
            if truncated
            else None
        )
        next_offset = None
        if max_bytes is not None:
            extra["max_bytes"] = max_bytes
            sel, next_offset, cut = fit(sel, max_bytes, self._current, whole_ranges=is_ref)
            if next_offset is not None:
                reason = (
                    f"cut to fit max_bytes={max_bytes}: read with offset={next_offset} for more"
                )
            elif cut:
                reason = (
                    f"cut to fit max_bytes={max_bytes}: {cut} more range(s) not shown; read a "
                    "narrower reference or pass a larger max_bytes"
                )
        answer = self.register(sel, "read", extra, reason)
        answer.next_offset = next_offset
        return answer

    def _path_selection(self, target: str) -> Selection:
        rel = self._ws.validate_path(target)
        if rel == "" or (self._ws.root / rel).is_dir():
            raise InvalidPath(
                f"{target or '/'} is a folder: read a file, or list files with files:{rel or '*'}",
                details={"path": rel},
            )
        skipped = SkipCounts()
        ft = self._ws.read(rel, skipped)
        if ft is None:
            why = (
                "binary"
                if skipped.binary
                else "over the size cap"
                if skipped.too_large
                else "unreadable"
            )
            raise Unsupported(
                f"{rel} is {why}: sleuth reads text files only", details={"path": rel}
            )
        count = len(ft.line_starts) - (
            1 if ft.data.endswith(b"\n") and len(ft.line_starts) > 1 else 0
        )
        s, _ = ft.line_span(1)
        _, e = ft.line_span(max(1, count))
        return Selection(
            source=target,
            ranges=[Range(rel, s, e, 1, max(1, count), ft.stamp, lines=True)],
            result_id="",
            texts={rel: ft},
        )

    def _current(self, r: Range) -> FileText:
        ft = self._ws.read(r.path)
        if ft is None or ft.stamp != r.stamp:
            raise NotFound(f"{r.path} changed while it was being read; read it again")
        return ft

    # -- select -----------------------------------------------------------------------------

    def select(self, ref: str, items: Sequence[int]) -> ReadResult:
        if isinstance(ref, str):
            check_text(ref, "ref")
        if not items:
            raise InvalidQuery("select needs at least one item number (as listed by #n)")
        bad = [i for i in items if isinstance(i, bool) or not isinstance(i, int) or i < 1]
        if bad:
            raise InvalidQuery(f"item numbers are positive integers, got {bad[0]!r}")
        if len(set(items)) > MAX_READ_RANGES:
            raise InvalidQuery(
                f"select keeps at most {MAX_READ_RANGES} items, got {len(set(items))}: select "
                "fewer, or search again within a path to narrow the result",
                details={"items": len(set(items)), "max_ranges": MAX_READ_RANGES},
            )
        parsed = parse_ref(ref)
        if parsed.kind == "search" and parsed.n is not None:
            raise InvalidQuery(
                f"{ref} selects one match already: select items of the result, e.g. "
                f"select {parsed.result_id} {' '.join(map(str, items))}"
            )
        row = self._resolver.get_row(parsed)
        picked: list[str] = []
        for i in dict.fromkeys(items):
            if parsed.kind == "search":
                if i > MAX_MATCH_NUMBER:  # no reference names it: no such match
                    raise NotFound(f"{ref}: result {row.id} has no match {i}")
                picked.append(f"{row.id}:{i}:{parsed.unit}")
            else:
                picked.append(str(i))
        ranges: list[Range] = []
        if parsed.kind == "search":
            for sub in picked:
                ranges.extend(self._resolver.resolve(sub).ranges)
        else:
            # not check_count: keeping a few ranges is how a too-large RESULT# is narrowed
            sel = self._resolver.resolve(ref)
            for i in dict.fromkeys(items):
                if i > len(sel.ranges):
                    raise NotFound(f"{ref} has {len(sel.ranges)} range(s), no item {i}")
                ranges.append(sel.ranges[i - 1])
        # explicit items are an exact selection even when their result is incomplete, and
        # picking semantic: or fuzzy find hints one by one makes them a selection
        # (docs/query.md#semantic-hybrid-retrieval)
        sel = Selection(
            source=ref,
            ranges=sorted(set(ranges)),
            result_id=row.id,
            complete=True,
            broadened=row.broadened and row.mode not in ("semantic", "fuzzy"),
        )
        check_size(sel, "select fewer items, or read them one by one")
        return self.register(sel, "select", {"items": list(items)}, None)

    # -- registering ------------------------------------------------------------------------

    def register(
        self, sel: Selection, kind: str, options: dict[str, Any], reason: str | None
    ) -> ReadResult:
        key = json.dumps(
            [
                sel.source,
                kind,
                options,
                [(r.path, r.start_byte, r.end_byte, r.stamp) for r in sel.ranges],
            ]
        )
        result_id = f"RESULT#{xxhash.xxh3_64_hexdigest(key.encode())[:8]}"
        texts: list[dict[str, Any]] = []
        rows: list[MatchRow] = []
        cache = dict(sel.texts)
        for n, r in enumerate(sel.ranges, start=1):
            ft = cache.get(r.path)
            if ft is None or ft.stamp != r.stamp:
                ft = cache[r.path] = self._current(r)
            entry = {
                "path": r.path,
                "line": r.line,
                "end_line": r.end_line,
                "start_byte": r.start_byte,
                "end_byte": r.end_byte,
                "text": _text(ft, r),
            }
            texts.append(entry)
            body = {"lines": True} if r.lines else {}
            rows.append(
                MatchRow(n, r.path, r.start_byte, r.end_byte, r.line, r.end_line, r.stamp, body)
            )
        complete = sel.complete and reason is None
        flags = {k: v for k, v in options.items() if k == "incomplete_all"}
        self._registry.put_result(
            ResultRow(
                id=result_id,
                kind=kind,
                request=json.dumps({"source": sel.source, **options}),
                fingerprint=key,
                mode=kind,
                fallback=None,
                broadened=sel.broadened,
                complete=complete,
                incomplete_reason=reason,
                total=len(rows),
                stored=len(rows),
                resume_after=None,
                skipped={},
                extra={"from": sel.result_id, **flags},
            ),
            rows,
        )
        return ReadResult(result_id, sel.source, sel.refreshed, complete, texts, reason)
