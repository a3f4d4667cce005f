"""Splices: the bytes an edit writes over one range of a file, built and applied.

A ``Splice`` is one range of a file's bytes and the bytes that replace it; every edit, and
every edit a rename's server answers, becomes splices of the bytes it was computed from, so the
writer (``journal.commit``) checks only those bytes (docs/SAFETY.md). ``splice`` applies them
from the end backwards, refuses overlapping ranges (``conflict``) and answers where each text
landed (``Placed``): what the edit's ``RESULT#`` selects. Inserted text takes the file's line
endings (``encode``: CRLF stays CRLF). Whole lines (docs/edits.md#insert) go at a line edge
(``line_edge``) as ``lines_splice`` builds them, and deleting whole lines takes their line
break too (docs/edits.md#delete).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from sleuth.errors import Conflict, UnsafeSelection
from sleuth.resources.selection import Range
from sleuth.workspace import FileText, encoding_of

__all__ = [
    "Placed",
    "Splice",
    "uses_crlf",
    "encode",
    "line_edge",
    "lines_splice",
    "line_break",
    "splice",
    "keeps_encoding",
]


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
    verbatim: bool = False
    """``text`` is bytes copied from files that are not UTF-8 either, written as they are
    (``keeps_encoding``)."""


class Placed(NamedTuple):
    """Where a splice's text ended up in the new bytes (what the answer selects)."""

    start: int
    end: int
    inserted: bool
    lines: bool


def uses_crlf(data: bytes) -> bool:
    crlf = data.count(b"\r\n")
    return crlf > 0 and crlf * 2 >= data.count(b"\n")


def encode(text: str, ft: FileText) -> bytes:
    text = text.replace("\r\n", "\n")
    if uses_crlf(ft.data):
        text = text.replace("\n", "\r\n")
    return text.encode("utf-8")


def _without_break(text: bytes) -> bytes:
    """``text`` without one final line break (``\\r\\n`` or ``\\n``), if it ends in one."""
    if text.endswith(b"\r\n"):
        return text[:-2]
    return text[:-1] if text.endswith(b"\n") else text


def line_edge(ft: FileText, r: Range, where: str) -> int:
    """Where whole lines go around the lines of ``r``: the start of its first line, or after
    its last line's line break (the end of the file when that line has none)."""
    data = ft.data
    if where == "before":
        return max(data.rfind(b"\n", 0, r.start_byte) + 1, min(ft.body_offset, r.start_byte))
    if r.end_byte > r.start_byte and data[r.end_byte - 1 : r.end_byte] == b"\n":
        return r.end_byte  # the range holds its line break already
    nl = data.find(b"\n", r.end_byte)
    return len(data) if nl < 0 else nl + 1


def line_break(ft: FileText) -> bytes:
    """The line break a new line of ``ft`` takes: ``\r\n`` in a CRLF file."""
    return b"\r\n" if uses_crlf(ft.data) else b"\n"


def lines_splice(ft: FileText, at: int, text: bytes, brk: bytes | None = None) -> Splice:
    """``text`` inserted at ``at`` as whole lines (docs/edits.md#insert).

    At a line start the text ends in one line break, the file's (``\\r\\n`` in a CRLF file),
    added when it has none. At the end of a last line that has no line break (``at`` is then
    the end of the file) the break goes before the text and none after it: the text becomes a
    new last line and the file keeps ending without a line break. Empty text inserts nothing.
    The answer selects the new lines without that break, as a ``:line`` reference would.
    ``brk``: the file's ``line_break``, when the caller splices the file many times."""
    if not text:
        return Splice(at, at, b"")
    lines = _without_break(text)
    brk = line_break(ft) if brk is None else brk
    data = ft.data
    if at == len(data) and at > ft.body_offset and data[at - 1 : at] != b"\n":
        return Splice(at, at, brk + lines, select=(len(brk), len(brk) + len(lines)))
    ending = text[len(lines) :] or brk
    return Splice(at, at, lines + ending, select=(0, len(lines)))


def _line_break_at(data: bytes, at: int) -> int:
    """Length of the line break starting at byte ``at`` (0 when there is none)."""
    if data[at : at + 2] == b"\r\n":
        return 2
    return 1 if data[at : at + 1] == b"\n" else 0


def _deletes_lines(sp: Splice) -> bool:
    return sp.lines and sp.text == b""


def splice(ft: FileText, splices: list[Splice]) -> tuple[bytes, list[Placed]]:
    """Apply splices (end first); the new bytes and where each splice's text is in them (in
    order of position; an inserted whole-lines splice: the lines it selects)."""
    data = ft.data
    ordered = sorted(splices, key=lambda s: (s.start, s.end))
    for i, sp in enumerate(ordered):
        if sp.lines and sp.text == b"":
            # deleting whole lines removes their line break too (the one before the last line
            # of a file that has no final newline)
            after = _line_break_at(data, sp.end)
            if after:
                sp.end += after
                continue
            # ... taken by the first of a run of deleted lines that reaches that last line,
            # whose breaks the deletions before it hold already
            head = i
            while head > 0 and _deletes_lines(ordered[head - 1]):
                if ordered[head - 1].end != ordered[head].start:
                    break
                head -= 1
            run = ordered[head]
            if run.start > 0 and data[run.start - 1 : run.start] == b"\n":
                run.start -= 2 if data[run.start - 2 : run.start] == b"\r\n" else 1
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


def keeps_encoding(ft: FileText, new: bytes, splices: Sequence[Splice]) -> None:
    """``unsafe_selection`` when the edit of ``ft`` into ``new`` would break its encoding
    (docs/edits.md#what-an-edit-refuses): a UTF-8 file left with invalid UTF-8 (a range that
    splits a character, bytes copied from a file in another encoding), or a file that is not
    UTF-8 given text that is not ASCII. sleuth does not know such a file's encoding (Latin-1,
    Shift-JIS, ...): text is written as UTF-8, and its non-ASCII characters would turn into
    other characters there. Bytes copied from a file that is not UTF-8 either go as they are."""
    if ft.encoding != "binary-safe":
        if encoding_of(new) == "binary-safe":
            raise UnsafeSelection(
                f"the edit would leave invalid UTF-8 in {ft.path} (a range splits a character, "
                "or the text comes from a file in another encoding); nothing was written",
                details={"path": ft.path},
            )
        return
    if any(not sp.verbatim and not sp.text.isascii() for sp in splices):
        raise UnsafeSelection(
            f"{ft.path} is not UTF-8 and sleuth does not know its encoding: the edit's text is "
            "not ASCII, and written as UTF-8 it would turn into other characters there; nothing "
            "was written — write those characters in the file's own encoding with your editor",
            details={"path": ft.path, "encoding": "binary-safe"},
        )
