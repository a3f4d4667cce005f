"""``read`` and ``select`` (docs/references.md): selections registered as ``RESULT#`` references.

``read(target, offset, limit)`` answers the text a path or reference selects, with a line window
(``offset`` = first line, 1-based; ``limit`` = number of lines); ``select(ref, items)`` keeps
some matches of a result. Both register what they answer as a ``RESULT#`` whose ranges and
stamps are exactly what was shown, so it can be read again, used as a search scope, or edited.

Every answer is bounded: at most ``MAX_READ_RANGES`` ranges and ``MAX_READ_BYTES`` of text.
Past either the read is refused with ``invalid_query`` saying how to narrow it, never cut (a cut
``:all`` would look like every match). The range count of an ``:all`` or ``RESULT#`` is decided
from its stored total before the result is completed, read or registered, so refusing a
million-match ``:all`` costs one registry lookup.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import xxhash

from sleuth.errors import InvalidPath, InvalidQuery, NotFound, Unsupported
from sleuth.model import SkipCounts
from sleuth.query.request import check_text
from sleuth.resources.refs import Ref, looks_like_ref, parse_ref
from sleuth.resources.registry import MatchRow, Registry, ResultRow
from sleuth.resources.selection import Range, Resolver, Selection
from sleuth.workspace import FileText, Workspace

__all__ = ["ReadResult", "Views", "DEFAULT_READ_LINES", "MAX_READ_RANGES", "MAX_READ_BYTES"]

DEFAULT_READ_LINES = 2000
MAX_READ_RANGES = 10_000
"""Ranges one ``read`` or ``select`` answers at most (each is also a registry row)."""
MAX_READ_BYTES = 8 * 1024 * 1024
"""Bytes of selected text one answer holds at most: the default file size cap, so the default
window of any file the workspace reads fits."""


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
            self._check_count(ref)  # before resolving, which may complete a paged :all
            sel = self._resolver.resolve(target)
            if ref.is_all and not sel.complete:
                extra["incomplete_all"] = True  # edits must refuse it, as the :all itself
        else:
            sel = self._path_selection(target)
        truncated = False
        if offset is not None or limit is not None or not is_ref:
            sel, truncated = self._window(sel, offset or 1, limit)
        if is_ref:
            self._check_size(sel, _narrow_hint(ref))
        else:
            self._check_size(sel, "pass offset and limit to read fewer lines")
        reason = (
            f"only the first {DEFAULT_READ_LINES} lines were read: pass offset and limit for more"
            if truncated
            else None
        )
        next_offset = None
        if max_bytes is not None:
            extra["max_bytes"] = max_bytes
            sel, next_offset, cut = self._fit(sel, max_bytes, whole_ranges=is_ref)
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

    def _fit(
        self, sel: Selection, max_bytes: int, *, whole_ranges: bool
    ) -> tuple[Selection, int | None, int]:
        """The selection cut to what the compact rendering shows within ``max_bytes``
        (docs/faces.md#budgets): whole ranges of a reference (at least one), whole lines of a
        path's window, which continues at the returned line; and how many ranges were dropped."""
        from sleuth.render.read import numbered_line

        used = len(sel.source.encode()) + 200  # the header, and the note of a cut
        path = None
        for i, r in enumerate(sel.ranges):
            ft = sel.texts.get(r.path) or self._current(r)
            if r.path != path:
                path = r.path
                used += len(r.path.encode()) + 1
            lines = ft.data[r.start_byte : r.end_byte].decode("utf-8", "replace").split("\n")
            if len(lines) > r.end_line - r.line + 1 and lines[-1] == "":
                lines.pop()
            for k, text in enumerate(lines):
                used += len(numbered_line(r.line + k, text).encode()) + 1
                if used <= max_bytes:
                    continue
                if whole_ranges:
                    keep = max(i, 1)
                    dropped = len(sel.ranges) - keep
                    sel.ranges = sel.ranges[:keep]
                    return sel, None, dropped
                if k == 0 and i == 0:
                    k = 1  # a read always moves on by at least one line
                    if len(lines) == 1 and len(sel.ranges) == 1:
                        return sel, None, 0
                if k == 0:
                    sel.ranges = sel.ranges[:i]
                    return sel, r.line, 0
                clipped, _ = self._window(replace(sel, ranges=[r]), r.line, k)
                sel.ranges = [*sel.ranges[:i], *clipped.ranges]
                return sel, r.line + k, 0
        return sel, None, 0

    def _check_count(self, ref: Ref) -> None:
        """Refuse a whole result (``:all``, ``RESULT#``) of more than ``MAX_READ_RANGES`` ranges
        from its stored count, before any of it is completed or read."""
        if not (ref.is_all or ref.kind == "result"):
            return
        row = self._resolver.get_row(ref)
        # an unfinished count is a lower bound; the exact count is checked again after resolving
        count = (
            row.total
            if row.total is not None
            else int(row.extra.get("counted_at_least", row.stored))
        )
        if count > MAX_READ_RANGES:
            raise _too_many(
                ref.text, count, _narrow_hint(ref), "matches" if ref.is_all else "ranges"
            )

    def _check_size(self, sel: Selection, hint: str) -> None:
        """Refuse an answer of more than ``MAX_READ_RANGES`` ranges or ``MAX_READ_BYTES`` of
        text, before any text is decoded or a row registered."""
        if len(sel.ranges) > MAX_READ_RANGES:
            raise _too_many(sel.source, len(sel.ranges), hint, "ranges")
        size = sum(r.end_byte - r.start_byte for r in sel.ranges)
        if size > MAX_READ_BYTES:
            raise InvalidQuery(
                f"{sel.source} selects {size} bytes of text, more than one answer holds (at "
                f"most {MAX_READ_BYTES} bytes): {hint}",
                details={"bytes": size, "max_bytes": MAX_READ_BYTES, "source": sel.source},
            )

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

    def _window(self, sel: Selection, first: int, limit: int | None) -> tuple[Selection, bool]:
        """Clip every range to lines ``first`` .. ``first + limit - 1`` (default cap on size)."""
        cap = limit if limit is not None else DEFAULT_READ_LINES
        out: list[Range] = []
        truncated = False
        for r in sel.ranges:
            lo = max(first, r.line)
            hi = min(r.end_line, first + cap - 1)
            if limit is None and r.end_line > first + cap - 1:
                truncated = True
            if lo > hi:
                continue
            if (lo, hi) == (r.line, r.end_line):
                out.append(r)
                continue
            ft = sel.texts.get(r.path) or self._current(r)
            s = r.start_byte if lo == r.line else ft.line_span(lo)[0]
            e = r.end_byte if hi == r.end_line else ft.line_span(hi)[1]
            out.append(Range(r.path, s, e, lo, hi, r.stamp, r.lines))
        sel.ranges = out
        return sel, truncated

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
                picked.append(f"{row.id}:{i}:{parsed.unit}")
            else:
                picked.append(str(i))
        ranges: list[Range] = []
        if parsed.kind == "search":
            for sub in picked:
                ranges.extend(self._resolver.resolve(sub).ranges)
        else:
            # not _check_count: keeping a few ranges is how a too-large RESULT# is narrowed
            sel = self._resolver.resolve(ref)
            for i in dict.fromkeys(items):
                if i > len(sel.ranges):
                    raise NotFound(f"{ref} has {len(sel.ranges)} range(s), no item {i}")
                ranges.append(sel.ranges[i - 1])
        # explicit items are an exact selection even when their result is incomplete, and
        # picking semantic: hints one by one makes them a selection (docs/query.md#semantic)
        sel = Selection(
            source=ref,
            ranges=sorted(set(ranges)),
            result_id=row.id,
            complete=True,
            broadened=row.broadened and row.mode != "semantic",
        )
        self._check_size(sel, "select fewer items, or read them one by one")
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


def _narrow_hint(ref: Ref) -> str:
    """How to read less of what ``ref`` selects (the end of a too-large message)."""
    if ref.kind == "search":
        return (
            f"read one match ({ref.result_id}:1:{ref.unit}), keep some with select "
            f"{ref.result_id} 1 2 3, or search again within a path to narrow it"
        )
    return f"keep some of its ranges with select {ref.result_id} 1 2 3, or read them one by one"


def _too_many(source: str, count: int, hint: str, what: str) -> InvalidQuery:
    return InvalidQuery(
        f"{source} selects {count} {what}, more than one answer holds (at most "
        f"{MAX_READ_RANGES} ranges): {hint}",
        details={"ranges": count, "max_ranges": MAX_READ_RANGES, "reference": source},
    )
