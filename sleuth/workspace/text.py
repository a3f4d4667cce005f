"""``FileText``: one file's bytes as read for a search, with its stamp and line index.

Engines search ``data`` (bytes; re2 and ``bytes.find`` give byte offsets directly) and turn byte
ranges into positions (docs/faces.md#positions) with ``locate``; snippets and context lines come
from here too, so every engine renders the same way.
"""

from __future__ import annotations

from bisect import bisect_right as _bisect_right
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Literal

__all__ = ["FileText", "SNIPPET_MAX", "Encoding", "whole_chars"]

SNIPPET_MAX = 256
Encoding = Literal["utf-8", "utf-8-bom", "binary-safe"]


_PLUS_ONE = (1).__add__


def whole_chars(data: bytes, start: int, end: int) -> bool:
    """Whether [start, end) lies inside ``data``, in order, and cuts no UTF-8 character: the
    test a stored range (registry, graph, semantic index) passes before it is trusted
    (docs/SAFETY.md#damaged-or-planted-state)."""
    if not 0 <= start <= end <= len(data):
        return False
    return all(at == len(data) or data[at] & 0xC0 != 0x80 for at in (start, end))


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")


@dataclass
class FileText:
    """The content of one workspace file at the moment it was read."""

    path: str
    data: bytes
    stamp: str
    encoding: Encoding = "utf-8"
    _line_starts: list[int] | None = field(default=None, repr=False)
    # the last column computed: matches come in order, so a long line is decoded once, not
    # once per match (a 5 MB minified line with 50k matches stays linear)
    _col_memo: tuple[int, int, int] = field(default=(-1, -1, 0), repr=False)

    @property
    def body_offset(self) -> int:
        """Bytes of BOM before the text (3 for ``utf-8-bom``)."""
        return 3 if self.encoding == "utf-8-bom" else 0

    @property
    def line_starts(self) -> list[int]:
        if self._line_starts is None:
            # 0, then one past each newline: running sums of (line length + 1), all in C
            pieces = self.data.split(b"\n")
            pieces.pop()
            self._line_starts = list(accumulate(map(_PLUS_ONE, map(len, pieces)), initial=0))
        return self._line_starts

    def line_of(self, offset: int) -> int:
        """1-based line holding byte ``offset``."""
        starts = self._line_starts
        return _bisect_right(self.line_starts if starts is None else starts, offset)

    def lines_of(self, start: int, end: int) -> tuple[int, int]:
        """(first line, last line) of the byte range [start, end); an empty range: one line."""
        starts = self._line_starts
        if starts is None:
            starts = self.line_starts
        line = _bisect_right(starts, start)
        return line, (_bisect_right(starts, end - 1) if end > start else line)

    def line_span(self, line: int) -> tuple[int, int]:
        """Byte range of line ``line`` (1-based) without its line terminator."""
        starts = self._line_starts
        if starts is None:
            starts = self.line_starts
        data = self.data
        start = starts[line - 1]
        end = starts[line] - 1 if line < len(starts) else len(data)
        if end > start and data[end - 1] == 13:  # b"\r"
            end -= 1
        if line == 1:
            start = max(start, min(self.body_offset, end))
        return start, end

    def line_text(self, line: int) -> str:
        start, end = self.line_span(line)
        return self.data[start:end].decode("utf-8", errors="replace")

    def column_of(self, offset: int, line: int | None = None) -> int:
        """1-based code-point column of byte ``offset``."""
        if line is None:
            line = self.line_of(offset)
        start = self.line_starts[line - 1]
        if line == 1:
            start = min(self.body_offset, offset)
        memo_line, memo_offset, memo_col = self._col_memo
        if memo_line == line and start <= memo_offset <= offset:
            start, base = memo_offset, memo_col
        else:
            base = 1
        piece = self.data[start:offset]
        column = base + (len(piece) if piece.isascii() else len(_decode(piece)))
        self._col_memo = (line, offset, column)
        return column

    def locate(self, start: int, end: int) -> tuple[int, int, int, int]:
        """(line, column, end_line, end_column) of the byte range [start, end).

        ``end_column`` is the column just after the last character, as in LSP ranges; an empty
        or line-final range ends on its own line.
        """
        line, end_line = self.lines_of(start, end)
        if end > start and self.data[end - 1 : end] == b"\n":
            # a match that ends with the newline ends on that line, after its last character
            return (
                line,
                self.column_of(start, line),
                end_line,
                self.column_of(end - 1, end_line) + 1,
            )
        return line, self.column_of(start, line), end_line, self.column_of(end, end_line)

    def snippet(self, start: int, end: int, lines: tuple[int, int] | None = None) -> str:
        """The matched line(s), at most ``SNIPPET_MAX`` characters, cut around the match.

        ``lines`` is ``lines_of(start, end)`` when the caller has it already.
        """
        long = 4 * SNIPPET_MAX  # bytes that hold at least SNIPPET_MAX characters
        if end - start > long and self.data[end - 1] not in (10, 13):
            # the hit alone is longer than a snippet (a whole declaration): its head is the
            # snippet, whatever surrounds it, so the rest of it is never decoded
            return _decode(self.data[start : start + long])[: SNIPPET_MAX - 1] + "…"
        line, end_line = self.lines_of(start, end) if lines is None else lines
        ls, _ = self.line_span(line)
        _, le = self.line_span(end_line)
        ls = min(ls, start)
        le = max(le, end) if end <= len(self.data) else le
        # only a window around the match is ever shown: never decode a whole long line
        window = 4 * SNIPPET_MAX + 4
        if start - ls > window:
            ls = start - window
            while ls < start and (self.data[ls] & 0xC0) == 0x80:
                ls += 1  # not inside a UTF-8 sequence
        if le - end > window:
            le = end + window
            while le > end and le < len(self.data) and (self.data[le] & 0xC0) == 0x80:
                le -= 1
        text = _decode(self.data[ls:le]).rstrip("\r\n")
        if len(text) <= SNIPPET_MAX:
            return text
        pre = _decode(self.data[ls:start])
        hit = _decode(self.data[start:end])
        if len(hit) >= SNIPPET_MAX - 2:
            return hit[: SNIPPET_MAX - 1] + "…"
        room = SNIPPET_MAX - len(hit) - 2
        left = min(len(pre), room // 2)
        post_full = text[len(pre) + len(hit) :]
        right = room - left
        if right > len(post_full):
            left += right - len(post_full)
            left = min(left, len(pre))
            right = len(post_full)
        head = ("…" if left < len(pre) else "") + pre[len(pre) - left :]
        tail = post_full[:right] + ("…" if right < len(post_full) else "")
        return head + hit + tail

    def context(self, line: int, end_line: int, n: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """``n`` lines before ``line`` and after ``end_line``, each cut to ``SNIPPET_MAX``."""
        if n <= 0:
            return (), ()
        count = len(self.line_starts)
        if self.data.endswith(b"\n"):
            count -= 1  # the empty tail after the final newline is not a line
        line_text = self.line_text
        before = [line_text(i)[:SNIPPET_MAX] for i in range(max(1, line - n), line)]
        after = [
            line_text(i)[:SNIPPET_MAX] for i in range(end_line + 1, min(count, end_line + n) + 1)
        ]
        return tuple(before), tuple(after)
