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
keeps what ``undo`` needs in ``.sleuth/undo/``: each file's old bytes and the ranges the edit
replaced, so an undo's answer selects the restored text, not whole files.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import re
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NamedTuple

from sleuth.edit.journal import FileChange, commit
from sleuth.errors import (
    Conflict,
    InvalidPath,
    InvalidQuery,
    NotFound,
    UnsafeSelection,
)
from sleuth.query.request import check_text
from sleuth.resources.refs import looks_like_ref, parse_ref
from sleuth.resources.selection import Range, Resolver, Selection, stale_files
from sleuth.resources.views import ReadResult, Views
from sleuth.workspace import FileText, Workspace, encoding_of, stamp_bytes
from sleuth.workspace.rooted import read_regular, write_file
from sleuth.workspace.workspace import state_subdir

__all__ = [
    "Editor",
    "MAX_DIFF_BYTES",
    "MAX_DIFF_LINES",
    "MAX_EDIT_TEXT",
    "Placed",
    "Splice",
    "splice",
    "unified_diff",
    "text_arg",
]

MAX_EDIT_TEXT = 16 * 1024 * 1024
MAX_DIFF_LINES = 400
"""Lines of unified diff one edit answer holds at most (docs/json.md#edits): past it the diff is
cut with a marker line and ``diff_truncated``; the ``RESULT#`` still selects all the text."""
MAX_DIFF_BYTES = 32 * 1024
"""Bytes of unified diff one edit answer holds at most (whichever of the two caps comes first)."""
_TARGET = re.compile(r"(?P<path>.+):(?P<line>[1-9][0-9]*)")


@dataclass
class Splice:
    start: int
    end: int
    text: bytes
    lines: bool = False
    """A deletion of whole lines: it takes their line break too."""
    select: tuple[int, int] | None = None
    """Inserted whole lines: the slice of ``text`` the answer selects, as whole lines (without
    the line break that ends them, or the one put before them at the end of a file)."""


class Placed(NamedTuple):
    """Where a splice's text ended up in the new bytes (what the answer selects)."""

    start: int
    end: int
    inserted: bool
    lines: bool


@dataclass
class _FilePlan:
    ft: FileText
    splices: list[Splice] = field(default_factory=list)


def _crlf(data: bytes) -> bool:
    crlf = data.count(b"\r\n")
    return crlf > 0 and crlf * 2 >= data.count(b"\n")


def _encode(text: str, ft: FileText) -> bytes:
    text = text.replace("\r\n", "\n")
    if _crlf(ft.data):
        text = text.replace("\n", "\r\n")
    return text.encode("utf-8")


def _without_break(text: bytes) -> bytes:
    """``text`` without one final line break (``\\r\\n`` or ``\\n``), if it ends in one."""
    if text.endswith(b"\r\n"):
        return text[:-2]
    return text[:-1] if text.endswith(b"\n") else text


def _line_edge(ft: FileText, r: Range, where: str) -> int:
    """Where whole lines go around the lines of ``r``: the start of its first line, or after
    its last line's line break (the end of the file when that line has none)."""
    data = ft.data
    if where == "before":
        return max(data.rfind(b"\n", 0, r.start_byte) + 1, min(ft.body_offset, r.start_byte))
    if r.end_byte > r.start_byte and data[r.end_byte - 1 : r.end_byte] == b"\n":
        return r.end_byte  # the range holds its line break already
    nl = data.find(b"\n", r.end_byte)
    return len(data) if nl < 0 else nl + 1


def _lines_splice(ft: FileText, at: int, text: bytes) -> Splice:
    """``text`` inserted at ``at`` as whole lines (docs/edits.md#insert).

    At a line start the text ends in one line break, the file's (``\\r\\n`` in a CRLF file),
    added when it has none. At the end of a last line that has no line break (``at`` is then
    the end of the file) the break goes before the text and none after it: the text becomes a
    new last line and the file keeps ending without a line break. Empty text inserts nothing.
    The answer selects the new lines without that break, as a ``:line`` reference would."""
    if not text:
        return Splice(at, at, b"")
    lines = _without_break(text)
    brk = b"\r\n" if _crlf(ft.data) else b"\n"
    data = ft.data
    if at == len(data) and at > ft.body_offset and data[at - 1 : at] != b"\n":
        return Splice(at, at, brk + lines, select=(len(brk), len(brk) + len(lines)))
    ending = text[len(lines) :] or brk
    return Splice(at, at, lines + ending, select=(0, len(lines)))


def text_arg(value: object, name: str) -> str:
    """``value`` when it is a string of valid Unicode, else ``invalid_query`` naming ``name``."""
    if not isinstance(value, str):
        raise InvalidQuery(
            f"{name} must be a string, got {type(value).__name__}", details={"argument": name}
        )
    return check_text(value, name)


def _check_text(text: object) -> str:
    if not isinstance(text, str):
        raise InvalidQuery("the edit text must be a string")
    if len(text) > MAX_EDIT_TEXT:
        raise InvalidQuery(
            f"edit text too large ({len(text)} characters, at most {MAX_EDIT_TEXT}): "
            "nothing was written",
            details={"length": len(text), "max": MAX_EDIT_TEXT},
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


class Editor:
    """The only writer of workspace files."""

    def __init__(self, ws: Workspace, resolver: Resolver, views: Views) -> None:
        self._ws = ws
        self._resolver = resolver
        self._views = views

    # -- selections -------------------------------------------------------------------------

    def _selection(self, ref: str) -> Selection:
        ref = text_arg(ref, "ref")
        if not looks_like_ref(ref):
            raise InvalidQuery(
                f"edits go through references: pass a SEARCH#… or RESULT#… reference, not {ref!r}"
            )
        parsed = parse_ref(ref)
        sel = self._resolver.resolve(ref)
        if sel.broadened:
            if self._resolver.get_row(parsed).mode == "semantic":
                how = "a semantic: search (ranked chunks)"
                fix = "pick the ones you mean with select REF N... and edit through that RESULT#"
            else:
                how = "a broadened search (each word on its own)"
                fix = "search for the exact text and edit through that reference"
            raise UnsafeSelection(
                f"{ref} comes from {how}: its matches are location hints, not a safe "
                f"selection; {fix}",
                details={"reference": ref},
            )
        if sel.unstamped:
            raise UnsafeSelection(
                f"{ref} names whole files that its search did not read (a files: match): read "
                "it first (read REF) and edit through the RESULT# of that read, which is stamped "
                "with the bytes you saw",
                details={"reference": ref},
            )
        row = self._resolver.get_row(parsed)
        from_all = parsed.is_all or bool(row.extra.get("incomplete_all"))
        if not sel.complete and from_all:
            raise UnsafeSelection(
                f"{ref} selects the matches of an incomplete result (not every file was "
                "searched): edit single matches, or narrow the search until it is complete",
                details={"reference": ref},
            )
        return sel

    def _file(self, sel: Selection, path: str) -> FileText:
        ft = sel.texts.get(path)
        if ft is None:
            raise NotFound(f"{path} is no longer readable; re-run the search")
        return ft

    def _target(self, to: str) -> tuple[str, int, FileText, bool]:
        """(path, byte offset, content, at a line start) of a copy/move target."""
        to = text_arg(to, "to")
        if looks_like_ref(to):
            sel = self._resolver.resolve(to)
            if len(sel.ranges) != 1:
                raise InvalidQuery(
                    f"the target {to} must select one range, it selects {len(sel.ranges)}"
                )
            r = sel.ranges[0]
            held = self._file(sel, r.path)
            at = _line_edge(held, r, "before") if r.lines else r.start_byte
            return r.path, at, held, r.lines
        m = _TARGET.fullmatch(to) if isinstance(to, str) else None
        if m is None:
            raise InvalidQuery(f"a target is a reference or PATH:LINE, got {to!r}")
        rel = self._ws.validate_path(m.group("path"))
        ft = self._ws.read(rel)
        if ft is None:
            raise InvalidPath(f"{rel} is not a text file sleuth can edit", details={"path": rel})
        line = int(m.group("line"))
        count = len(ft.line_starts)
        lines = count - 1 if ft.data.endswith(b"\n") else count
        if line > lines + 1:
            raise InvalidQuery(
                f"{rel} has {lines} lines: the target line must be at most {lines + 1} "
                f"({lines + 1} appends at the end)"
            )
        offset = ft.line_starts[line - 1] if line <= count else len(ft.data)
        if line == 1:
            offset = max(offset, ft.body_offset)
        return rel, offset, ft, True

    # -- operations -------------------------------------------------------------------------

    def replace(self, ref: str, text: str) -> ReadResult:
        text = _check_text(text)
        sel = self._selection(ref)
        plans = self._plans(sel)
        for r in sel.ranges:
            plans[r.path].splices.append(
                Splice(r.start_byte, r.end_byte, _encode(text, plans[r.path].ft))
            )
        return self._apply(ref, plans, "replace", refreshed=sel.refreshed)

    def insert(
        self, ref: str, text: str, where: Literal["before", "after"] = "before"
    ) -> ReadResult:
        text = _check_text(text)
        if where not in ("before", "after"):
            raise InvalidQuery(f"where must be 'before' or 'after', got {where!r}")
        sel = self._selection(ref)
        plans = self._plans(sel)
        for r in sel.ranges:
            ft = plans[r.path].ft
            data = _encode(text, ft)
            if r.lines:  # whole lines, before the first or after the last line's break
                plans[r.path].splices.append(_lines_splice(ft, _line_edge(ft, r, where), data))
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
        elif plans[path].ft.stamp != target_ft.stamp:
            raise Conflict(f"{path} changed while the edit was prepared; try again")
        if move:
            for r in sel.ranges:
                if r.path == path and r.start_byte < offset < r.end_byte:
                    raise Conflict(f"cannot move {ref} into itself ({path})")
                plans[r.path].splices.append(Splice(r.start_byte, r.end_byte, b"", lines=r.lines))
        text = blob
        if _crlf(target_ft.data):
            text = text.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
        # to a line (PATH:LINE, a :line reference) the text goes as whole lines, as an insert
        # through a :line reference does; to a match, exactly at its start
        plans[path].splices.append(
            _lines_splice(target_ft, offset, text)
            if at_line_start
            else Splice(offset, offset, text)
        )
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
            if plan.ft.encoding != "binary-safe" and encoding_of(new) == "binary-safe":
                raise UnsafeSelection(
                    f"the edit would leave invalid UTF-8 in {path} (a range splits a character, "
                    "or the text comes from a file in another encoding); nothing was written",
                    details={"path": path},
                )
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
        commit(self._ws, changes, verify)
        sel = Selection(
            source=ref, ranges=sorted(results), result_id="", texts=texts, refreshed=refreshed
        )
        answer = self._views.register(sel, kind, {"ref": ref}, None)
        self.save_undo(answer.result, changes, replaced)
        answer.changed = [c.path for c in changes]
        answer.diff, answer.diff_truncated = unified_diff(changes, answer.result)
        return answer

    # -- undo -------------------------------------------------------------------------------

    def _undo_dir(self, result_id: str) -> Path:
        return state_subdir(self._ws.state_dir, "undo") / result_id.removeprefix("RESULT#")

    def save_undo(
        self,
        result_id: str,
        changes: Sequence[FileChange],
        spans: dict[str, list[tuple[int, int]]] | None = None,
    ) -> None:
        """Keep what ``undo`` needs: each file's old bytes, the stamp the edit left and the
        ranges of the old bytes the edit replaced (what an undo's answer selects)."""
        folder = self._undo_dir(result_id)
        with contextlib.suppress(FileExistsError):
            folder.mkdir()
        files = []
        for i, change in enumerate(changes):
            write_file(folder / f"{i}.old", change.old)
            entry: dict[str, Any] = {
                "path": change.path,
                "old": f"{i}.old",
                "new_stamp": stamp_bytes(change.new),
            }
            if spans is not None and change.path in spans:
                entry["spans"] = spans[change.path]
            files.append(entry)
        write_file(folder / "undo.json", json.dumps({"files": files}).encode())

    def _undo_manifest(self, result_id: str, folder: Path) -> list[dict[str, Any]]:
        try:
            manifest = json.loads((folder / "undo.json").read_bytes())
            files = manifest["files"]
            if not isinstance(files, list):
                raise TypeError(files)
            return files
        except FileNotFoundError:
            raise NotFound(
                f"{result_id} is not an edit that can be undone (or was undone already)"
            ) from None
        except (OSError, ValueError, KeyError, TypeError):
            raise NotFound(
                f"the undo data of {result_id} is unreadable; it cannot be undone"
            ) from None

    def undo(self, result_id: str) -> ReadResult:
        parsed = parse_ref(text_arg(result_id, "result"))
        if parsed.kind != "result":
            raise InvalidQuery(f"undo takes the RESULT# an edit answered, got {result_id}")
        folder = self._undo_dir(parsed.result_id)
        entries = self._undo_manifest(result_id, folder)
        changes = []
        moved = []
        for entry in entries:
            path = str(entry["path"])
            if self._ws.is_denied(path):
                raise NotFound(
                    f"cannot undo {result_id}: path not found: {path}", details={"path": path}
                )
            old = (folder / str(entry["old"])).read_bytes()
            try:
                current: bytes | None = read_regular(str(self._ws.root), path)
            except OSError:
                current = None  # gone, or no longer a regular file (a FIFO is never opened)
            if current is None or stamp_bytes(current) != entry["new_stamp"]:
                moved.append(path)
                continue
            changes.append(FileChange(path, str(entry["new_stamp"]), current, old))
        if moved:
            raise Conflict(
                f"cannot undo {result_id}: {', '.join(moved)} changed after the edit; nothing "
                "was written",
                details={"files": moved},
            )
        commit(self._ws, changes)
        ranges = []
        texts = {}
        for change, entry in zip(changes, entries, strict=True):
            ft = FileText(change.path, change.new, stamp_bytes(change.new), encoding_of(change.new))
            texts[change.path] = ft
            ranges.extend(_restored(ft, entry.get("spans"), change.old))
        done = folder.with_name(folder.name + ".undone")
        if done.is_dir():
            shutil.rmtree(done)  # an earlier undo of the same (redone) edit
        os.rename(folder, done)
        answer = self._views.register(
            Selection(source=result_id, ranges=sorted(ranges), result_id="", texts=texts),
            "undo",
            {"ref": result_id},
            None,
        )
        answer.changed = [c.path for c in changes]
        answer.diff, answer.diff_truncated = unified_diff(changes, answer.result)
        return answer


def _restored(ft: FileText, spans: object, undone: bytes) -> list[Range]:
    """The ranges of ``ft`` an undo put back: the edit's spans; for undo data without them,
    the one range where ``ft`` differs from the ``undone`` bytes (never the whole file)."""
    out = []
    if isinstance(spans, list) and all(
        isinstance(p, list) and len(p) == 2 and all(isinstance(x, int) for x in p) for p in spans
    ):
        for s, e in spans:
            if 0 <= s <= e <= len(ft.data):
                line, _, end_line, _ = ft.locate(s, e)
                out.append(Range(ft.path, s, e, line, end_line, ft.stamp))
        if out:
            return out
    data = ft.data
    limit = min(len(data), len(undone))
    s = 0
    while s < limit and data[s] == undone[s]:
        s += 1
    e = 0
    while e < limit - s and data[-1 - e] == undone[-1 - e]:
        e += 1
    # never inside a UTF-8 character: the range is whole characters of the restored text
    while 0 < s < len(data) and data[s] & 0xC0 == 0x80:
        s -= 1
    end = len(data) - e
    while end < len(data) and data[end] & 0xC0 == 0x80:
        end += 1
    line, _, end_line, _ = ft.locate(s, end)
    return [Range(ft.path, s, end, line, end_line, ft.stamp)]


_DIFF_MAX_BYTES = 2 * 1024 * 1024
"""Files (old + new bytes) past this are not diffed at all: difflib's cost grows faster."""


def _diff_lines(changes: Sequence[FileChange]) -> Iterator[str]:
    """The lines of a unified diff of ``changes`` (``a/``, ``b/`` prefixes), each ending in
    ``\\n`` (a line without one is followed by ``\\ No newline at end of file``)."""
    for c in changes:
        if len(c.old) + len(c.new) > _DIFF_MAX_BYTES:
            yield f"--- a/{c.path}\n"
            yield f"+++ b/{c.path}\n"
            yield "@@ (file too large to diff here) @@\n"
            continue
        old = c.old.decode("utf-8", errors="replace").splitlines(keepends=True)
        new = c.new.decode("utf-8", errors="replace").splitlines(keepends=True)
        for line in difflib.unified_diff(old, new, f"a/{c.path}", f"b/{c.path}", n=DIFF_CONTEXT):
            if line.endswith("\n"):
                yield line
            else:
                yield line + "\n"
                yield "\\ No newline at end of file\n"


DIFF_CONTEXT = 1
"""Unchanged lines around each hunk of an edit's diff (``git diff -U1``): enough to see where
it landed; the answer's RESULT# reads the rest (docs/edits.md)."""


def unified_diff(changes: Sequence[FileChange], result: str = "") -> tuple[str, bool]:
    """A unified diff of ``changes`` for people and agents, and whether it was cut.

    At most ``MAX_DIFF_LINES`` lines and ``MAX_DIFF_BYTES`` bytes (whole lines): the rest is one
    marker line, ``… N more lines (diff truncated; read RESULT#… to see the text)``, naming the
    answer's ``result`` (docs/json.md#edits)."""
    out: list[str] = []
    size = 0
    lines = _diff_lines(changes)
    for line in lines:
        size += len(line.encode("utf-8", errors="surrogateescape"))
        if len(out) >= MAX_DIFF_LINES or size > MAX_DIFF_BYTES:
            more = 1 + sum(1 for _ in lines)
            what = result or "the RESULT#"
            out.append(
                f"\u2026 {more} more line{'s' if more != 1 else ''} (diff truncated; read "
                f"{what} to see the text)\n"
            )
            return "".join(out), True
        out.append(line)
    return "".join(out), False


def _line_break_at(data: bytes, at: int) -> int:
    """Length of the line break starting at byte ``at`` (0 when there is none)."""
    if data[at : at + 2] == b"\r\n":
        return 2
    return 1 if data[at : at + 1] == b"\n" else 0


def splice(ft: FileText, splices: list[Splice]) -> tuple[bytes, list[Placed]]:
    """Apply splices (end first); the new bytes and where each splice's text is in them (in
    order of position; an inserted whole-lines splice: the lines it selects)."""
    data = ft.data
    ordered = sorted(splices, key=lambda s: (s.start, s.end))
    for sp in ordered:
        if sp.lines and sp.text == b"":
            # deleting whole lines removes their line break too (the one before the last line
            # of a file that has no final newline)
            after = _line_break_at(data, sp.end)
            if after:
                sp.end += after
            elif sp.start > 0 and data[sp.start - 1 : sp.start] == b"\n":
                sp.start -= 2 if data[sp.start - 2 : sp.start] == b"\r\n" else 1
    for a, b in zip(ordered, ordered[1:], strict=False):
        if b.start < a.end:
            raise Conflict(
                f"overlapping ranges in {ft.path} (bytes {a.start}-{a.end} and {b.start}-{b.end}): "
                "one edit cannot change the same text twice; select fewer matches",
                details={"path": ft.path},
            )
    out = []
    pos = 0
    shift = 0
    result = []
    for sp in ordered:
        out.append(data[pos : sp.start])
        out.append(sp.text)
        pos = sp.end
        start = sp.start + shift
        if sp.select is not None:
            first, last = sp.select
            result.append(Placed(start + first, start + last, bool(sp.text), True))
        else:
            result.append(Placed(start, start + len(sp.text), bool(sp.text), False))
        shift += len(sp.text) - (sp.end - sp.start)
    out.append(data[pos:])
    return b"".join(out), result
