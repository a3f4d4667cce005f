"""Edits through references (docs/edits.md): replace, insert, delete, copy, move, undo.

Every operation resolves its reference to a selection (stamps already checked by the
resolver), refuses what is unsafe — a broadened result, an ``:all`` of an incomplete result
(``unsafe_selection``), overlapping ranges (``conflict``), text that would break a UTF-8 file —
computes the new bytes of each file with its ranges applied from the end backwards, and hands
them to ``journal.commit``, which writes all files or none. Inserted text takes the file's line
endings (CRLF stays CRLF); bytes outside the ranges, the BOM and the file mode are untouched.

Whole lines (docs/edits.md#insert): ``insert`` through a whole-line range (a ``:line`` reference,
a path read, the ``RESULT#`` of an earlier whole-line insert) and ``copy``/``move`` to a line
(``PATH:LINE`` or such a reference) insert whole lines — before the first selected line or after
the last one's line break, the text ending in one line break (the file's, added when missing).
After a last line that has no line break the break goes first and the file still ends without
one. Through a ``:match`` or capture the text goes exactly at the edge.

Each edit answers a ``RESULT#`` selecting exactly the resulting text (a delete selects the empty
position; inserted whole lines are selected as whole lines, like a ``:line`` reference: without
their last line break), with a unified diff bounded to ``MAX_DIFF_LINES``/``MAX_DIFF_BYTES``, and
keeps what ``undo`` needs in ``.sleuth/undo/`` (``undo_data``): each file's old bytes and the
ranges the edit replaced, so an undo's answer selects the restored text, not whole files. The
answer and the undo data are stored before the write (``Editor.land``).

The parts have modules of their own: ``selections`` (the reference's selection and a target,
refused when unsafe), ``splices`` (the bytes written over each range, whole lines, the line
endings) and ``diff`` (the bounded diff); this module plans, writes and undoes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from sleuth.edit import undo_data
from sleuth.edit.diff import unified_diff
from sleuth.edit.journal import FileChange, commit
from sleuth.edit.selections import EditSelections, text_arg
from sleuth.edit.splices import (
    Splice,
    encode,
    keeps_encoding,
    line_break,
    line_edge,
    lines_splice,
    splice,
    uses_crlf,
)
from sleuth.errors import Conflict, InvalidQuery
from sleuth.resources.refs import parse_ref
from sleuth.resources.selection import Range, Resolver, Selection, stale_files
from sleuth.resources.views import ReadResult, Views
from sleuth.workspace import FileText, Workspace, encoding_of, stamp_bytes

__all__ = [
    "Editor",
    "MAX_EDIT_TEXT",
]

MAX_EDIT_TEXT = 16 * 1024 * 1024


@dataclass
class _FilePlan:
    ft: FileText
    splices: list[Splice] = field(default_factory=list)


def _check_text(text: object) -> str:
    if not isinstance(text, str):
        raise InvalidQuery("the edit text must be a string")
    if len(text) > MAX_EDIT_TEXT:
        raise InvalidQuery(
            f"edit text too large ({len(text)} characters, at most {MAX_EDIT_TEXT}): "
            "nothing was written",
            details={"length": len(text), "max": MAX_EDIT_TEXT},
        )
    nul = text.find("\x00")
    if nul >= 0:
        # a NUL makes the file binary: it would drop out of every search, and the edit's own
        # RESULT# would read as stale (docs/edits.md)
        raise InvalidQuery(
            f"the edit text holds a NUL character (at character {nul}); a text file with one "
            "is binary to every search: nothing was written",
            details={"position": nul},
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidQuery(
            f"the edit text is not valid Unicode (a lone surrogate at character {exc.start}): "
            "nothing was written",
            details={"position": exc.start},
        ) from exc
    return text


class Editor(EditSelections):
    """The only writer of workspace files."""

    def __init__(self, ws: Workspace, resolver: Resolver, views: Views) -> None:
        self._ws = ws
        self._resolver = resolver
        self._views = views

    # -- operations -------------------------------------------------------------------------

    def replace(self, ref: str, text: str) -> ReadResult:
        text = _check_text(text)
        sel = self._selection(ref)
        plans = self._plans(sel)
        # encoded once a file: the file's line endings are counted over all of its bytes
        # (20k matches of a 4 MB file took minutes encoding the text again per match)
        data = {path: encode(text, plan.ft) for path, plan in plans.items()}
        for r in sel.ranges:
            plans[r.path].splices.append(Splice(r.start_byte, r.end_byte, data[r.path]))
        return self._apply(ref, plans, "replace", refreshed=sel.refreshed)

    def insert(
        self, ref: str, text: str, where: Literal["before", "after"] = "before"
    ) -> ReadResult:
        text = _check_text(text)
        if where not in ("before", "after"):
            raise InvalidQuery(f"where must be 'before' or 'after', got {where!r}")
        sel = self._selection(ref)
        plans = self._plans(sel)
        encoded = {path: encode(text, plan.ft) for path, plan in plans.items()}
        breaks = {path: line_break(plan.ft) for path, plan in plans.items()}
        for r in sel.ranges:
            ft = plans[r.path].ft
            data = encoded[r.path]
            if r.lines:  # whole lines, before the first or after the last line's break
                edge = line_edge(ft, r, where)
                plans[r.path].splices.append(lines_splice(ft, edge, data, breaks[r.path]))
            else:  # exactly at the edge of a match or capture
                at = r.start_byte if where == "before" else r.end_byte
                plans[r.path].splices.append(Splice(at, at, data))
        return self._apply(ref, plans, "insert", refreshed=sel.refreshed)

    def delete(self, ref: str) -> ReadResult:
        sel = self._selection(ref)
        plans = self._plans(sel)
        for r in sel.ranges:
            plans[r.path].splices.append(Splice(r.start_byte, r.end_byte, b"", lines=r.lines))
        return self._apply(ref, plans, "delete", refreshed=sel.refreshed)

    def copy(self, ref: str, to: str) -> ReadResult:
        return self._copy(ref, to, move=False)

    def move(self, ref: str, to: str) -> ReadResult:
        return self._copy(ref, to, move=True)

    def _copy(self, ref: str, to: str, *, move: bool) -> ReadResult:
        sel = self._selection(ref)
        if not sel.ranges:
            raise Conflict(
                f"{ref} selects nothing now (its matches are gone): nothing to "
                f"{'move' if move else 'copy'}; search again",
                details={"reference": ref},
            )
        path, offset, target_ft, at_line_start = self._target(to)
        pieces = [self._file(sel, r.path).data[r.start_byte : r.end_byte] for r in sel.ranges]
        all_lines = all(r.lines for r in sel.ranges)
        blob = (b"\n" if all_lines else b"").join(pieces)
        plans = self._plans(sel) if move else {}
        if path not in plans:
            plans[path] = _FilePlan(target_ft)
        if sel.texts.get(path, target_ft).stamp != target_ft.stamp:
            # the source's bytes and the target's are one file's: the text is copied from the
            # bytes it is written into, never from bytes the file held before
            raise Conflict(f"{path} changed while the edit was prepared; try again")
        if move:
            for r in sel.ranges:
                if r.path == path and r.start_byte < offset < r.end_byte:
                    raise Conflict(f"cannot move {ref} into itself ({path})")
                plans[r.path].splices.append(Splice(r.start_byte, r.end_byte, b"", lines=r.lines))
        # the target's line endings, both ways (as ``encode`` gives the text of an insert)
        text = blob.replace(b"\r\n", b"\n")
        if uses_crlf(target_ft.data):
            text = text.replace(b"\n", b"\r\n")
        # to a line (PATH:LINE, a :line reference) the text goes as whole lines, as an insert
        # through a :line reference does; to a match, exactly at its start
        put = (
            lines_splice(target_ft, offset, text) if at_line_start else Splice(offset, offset, text)
        )
        # bytes of files that are not UTF-8 go as they are into another such file
        put.verbatim = all(self._file(sel, r.path).encoding == "binary-safe" for r in sel.ranges)
        plans[path].splices.append(put)
        # the copied text must still be what the sources hold when the target is written
        sources = [
            FileChange(p, ft.stamp, ft.data, ft.data)
            for p, ft in sorted(sel.texts.items())
            if p not in plans and any(r.path == p for r in sel.ranges)
        ]
        return self._apply(
            ref,
            plans,
            "move" if move else "copy",
            keep_empty=False,
            refreshed=sel.refreshed,
            verify=sources,
        )

    # -- planning and applying ---------------------------------------------------------------

    def _plans(self, sel: Selection) -> dict[str, _FilePlan]:
        plans: dict[str, _FilePlan] = {}
        for r in sel.ranges:
            if r.path not in plans:
                plans[r.path] = _FilePlan(self._file(sel, r.path))
            if r.stamp != plans[r.path].ft.stamp:
                # the range's offsets were found in other bytes than the ones at hand (a cache
                # that lagged behind an outside write): applying them would corrupt the file
                raise stale_files([r.path])
        return plans

    def _apply(
        self,
        ref: str,
        plans: dict[str, _FilePlan],
        kind: str,
        keep_empty: bool = True,
        refreshed: bool = False,
        verify: Sequence[FileChange] = (),
    ) -> ReadResult:
        changes: list[FileChange] = []
        results: list[Range] = []
        texts: dict[str, FileText] = {}
        replaced: dict[str, list[tuple[int, int]]] = {}
        for path in sorted(plans):
            plan = plans[path]
            new, placed = splice(plan.ft, plan.splices)
            replaced[path] = sorted((sp.start, sp.end) for sp in plan.splices)
            keeps_encoding(plan.ft, new, plan.splices)
            if new == plan.ft.data:
                continue
            changes.append(FileChange(path, plan.ft.stamp, plan.ft.data, new))
            new_ft = FileText(path, new, stamp_bytes(new), encoding_of(new))
            texts[path] = new_ft
            for s, e, inserted, lines in placed:
                if keep_empty or inserted:
                    line, _, end_line, _ = new_ft.locate(s, e)
                    results.append(Range(path, s, e, line, end_line, new_ft.stamp, lines=lines))
        if not changes:
            raise Conflict(f"{ref}: the edit changes nothing (the text is already there)")
        sel = Selection(
            source=ref, ranges=sorted(results), result_id="", texts=texts, refreshed=refreshed
        )
        return self.land(sel, kind, {"ref": ref}, changes, replaced, verify)

    def land(
        self,
        sel: Selection,
        kind: str,
        options: dict[str, Any],
        changes: Sequence[FileChange],
        replaced: dict[str, list[tuple[int, int]]],
        verify: Sequence[FileChange] = (),
    ) -> ReadResult:
        """Write ``changes`` (all or nothing) and answer ``sel``, the text that results.

        The answer's ``RESULT#`` row and the undo data are stored *before* the write: a step
        that fails after it (the registry locked by another process, a full disk) would answer
        ``timeout``/``internal`` for files already written, and a retry would apply the edit
        twice (docs/SAFETY.md#undo). An edit refused at the write keeps no undo data."""
        answer = self._views.register(sel, kind, options, None)
        staged = undo_data.stage(self._ws, answer.result, changes, replaced)
        try:
            commit(self._ws, changes, verify)
        except BaseException:
            undo_data.drop(staged)
            raise
        undo_data.keep(self._ws, answer.result, staged)
        answer.changed = [c.path for c in changes]
        answer.diff, answer.diff_truncated = unified_diff(changes, answer.result)
        return answer

    # -- undo -------------------------------------------------------------------------------

    def undo(self, result_id: str) -> ReadResult:
        parsed = parse_ref(text_arg(result_id, "result"))
        if parsed.kind != "result":
            raise InvalidQuery(f"undo takes the RESULT# an edit answered, got {result_id}")
        folder, entries, changes = undo_data.plan(self._ws, parsed.result_id, result_id)
        ranges = []
        texts = {}
        for change, entry in zip(changes, entries, strict=True):
            ft = FileText(change.path, change.new, stamp_bytes(change.new), encoding_of(change.new))
            texts[change.path] = ft
            ranges.extend(undo_data.restored(ft, entry.get("spans"), change.old))
        # the answer is stored before the write, as an edit's is (``land``)
        answer = self._views.register(
            Selection(source=result_id, ranges=sorted(ranges), result_id="", texts=texts),
            "undo",
            {"ref": result_id},
            None,
        )
        commit(self._ws, changes)
        undo_data.mark_undone(folder)
        answer.changed = [c.path for c in changes]
        answer.diff, answer.diff_truncated = unified_diff(changes, answer.result)
        return answer
