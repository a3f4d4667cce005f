"""``FileText``: one file's bytes as read for a search, with its stamp and line index.

Engines search ``data`` (bytes; re2 and ``bytes.find`` give byte offsets directly) and turn byte
ranges into SPEC §2 positions with ``locate``; snippets and context lines come from here too, so
every engine renders the same way.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["FileText", "SNIPPET_MAX", "Encoding"]

SNIPPET_MAX = 256
Encoding = Literal["utf-8", "utf-8-bom", "binary-safe"]


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
            starts = [0]
            data = self.data
            find = data.find
            i = find(b"\n")
            while i >= 0:
                starts.append(i + 1)
                i = find(b"\n", i + 1)
            self._line_starts = starts
        return self._line_starts

    def line_of(self, offset: int) -> int:
        """1-based line holding byte ``offset``."""
        return bisect.bisect_right(self.line_starts, offset)

    def line_span(self, line: int) -> tuple[int, int]:
        """Byte range of line ``line`` (1-based) without its line terminator."""
        starts = self.line_starts
        start = starts[line - 1]
        end = starts[line] - 1 if line < len(starts) else len(self.data)
        if end > start and self.data[end - 1 : end] == b"\r":
            end -= 1
        if line == 1:
            start = max(start, min(self.body_offset, end))
        return start, end

    def line_text(self, line: int) -> str:
        start, end = self.line_span(line)
        return _decode(self.data[start:end])

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
        line = self.line_of(start)
        end_line = self.line_of(end - 1) if end > start else line
        if end > start and self.data[end - 1 : end] == b"\n":
            # a match that ends with the newline ends on that line, after its last character
            return line, self.column_of(start, line), end_line, self.column_of(end - 1, end_line) + 1
        return line, self.column_of(start, line), end_line, self.column_of(end, end_line)

    def snippet(self, start: int, end: int) -> str:
        """The matched line(s), at most ``SNIPPET_MAX`` characters, cut around the match."""
        line = self.line_of(start)
        end_line = self.line_of(end - 1) if end > start else line
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
        before = tuple(self.line_text(i)[:SNIPPET_MAX] for i in range(max(1, line - n), line))
        after = tuple(
            self.line_text(i)[:SNIPPET_MAX] for i in range(end_line + 1, min(count, end_line + n) + 1)
        )
        return before, after
