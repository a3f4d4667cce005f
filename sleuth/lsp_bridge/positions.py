"""Byte offsets <-> LSP positions: the only module that knows about UTF-16
(docs/faces.md#positions).

sleuth speaks byte offsets into a file's current bytes; a language server speaks 0-based
``(line, character)`` pairs whose ``character`` counts code units of the *negotiated* position
encoding: ``utf-16`` (the LSP default), ``utf-8`` (bytes) or ``utf-32`` (code points).

Lines end at ``\\r\\n``, ``\\n`` or a lone ``\\r``, as the LSP specification says. Conversions
follow the specification's tolerance rules:

* a ``character`` past the end of its line means the end of the line (before its terminator);
* a line past the last line means the end of the file;
* an offset inside a multi-byte character rounds down to the character's first byte, and a
  ``character`` inside a surrogate pair rounds down to the pair's start.

Undecodable bytes count as one code unit each (as U+FFFD would), so a binary-ish file never
breaks a conversion.
"""

from __future__ import annotations

import bisect
import re
from typing import Literal

__all__ = ["PositionEncoding", "LineIndex", "normalize_encoding"]

PositionEncoding = Literal["utf-8", "utf-16", "utf-32"]

_EOL = re.compile(rb"\r\n|\n|\r")


def normalize_encoding(value: object) -> PositionEncoding:
    """The encoding named in a server's ``capabilities.positionEncoding`` (absent = utf-16)."""
    if value in ("utf-8", "utf-32"):
        return value
    return "utf-16"


def _is_continuation(byte: int) -> bool:
    return 0x80 <= byte <= 0xBF


def _units(text: str, encoding: PositionEncoding) -> int:
    """Code units of ``text`` in ``encoding`` (utf-8 is handled on bytes by the caller)."""
    if encoding == "utf-32":
        return len(text)
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


class LineIndex:
    """Line starts of one file's bytes and conversions between offsets and LSP positions."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        starts = [0]
        ends: list[int] = []
        for m in _EOL.finditer(data):
            ends.append(m.start())
            starts.append(m.end())
        ends.append(len(data))
        self._starts = starts
        self._ends = ends

    @property
    def line_count(self) -> int:
        """Number of lines (a trailing terminator opens one more, empty line)."""
        return len(self._starts)

    def line_bounds(self, line: int) -> tuple[int, int]:
        """Byte range of 0-based ``line`` without its terminator (clamped to the file)."""
        if line < 0:
            return 0, 0
        if line >= len(self._starts):
            end = len(self.data)
            return end, end
        return self._starts[line], self._ends[line]

    def _round_down(self, offset: int, floor: int) -> int:
        data = self.data
        while offset > floor and offset < len(data) and _is_continuation(data[offset]):
            offset -= 1
        return offset

    def to_position(self, offset: int, encoding: PositionEncoding) -> tuple[int, int]:
        """The 0-based ``(line, character)`` of byte ``offset`` in ``encoding``."""
        offset = max(0, min(offset, len(self.data)))
        line = bisect.bisect_right(self._starts, offset) - 1
        start, end = self._starts[line], self._ends[line]
        # An offset inside a CRLF terminator belongs to the end of its line.
        offset = min(offset, end)
        offset = self._round_down(offset, start)
        segment = self.data[start:offset]
        if encoding == "utf-8" or segment.isascii():
            return line, len(segment)
        try:
            return line, _units(segment.decode("utf-8"), encoding)
        except UnicodeDecodeError:
            return line, _walk_bytes(segment, None, encoding)[1]

    def to_offset(self, line: int, character: int, encoding: PositionEncoding) -> int:
        """The byte offset of LSP position ``(line, character)`` in ``encoding``."""
        if line >= len(self._starts):
            return len(self.data)
        if line < 0:
            return 0
        start, end = self._starts[line], self._ends[line]
        character = max(0, character)
        if encoding == "utf-8":
            return self._round_down(min(start + character, end), start)
        segment = self.data[start:end]
        # Fast path: ASCII lines map one unit to one byte.
        if segment.isascii():
            return start + min(character, len(segment))
        try:
            text = segment.decode("utf-8")
        except UnicodeDecodeError:
            return start + _walk_bytes(segment, character, encoding)[0]
        units = 0
        for i, ch in enumerate(text):
            width = 2 if encoding == "utf-16" and ord(ch) > 0xFFFF else 1
            if units + width > character:
                return start + len(text[:i].encode("utf-8"))
            units += width
        return end

    def range_to_bytes(
        self, rng: dict[str, dict[str, int]], encoding: PositionEncoding
    ) -> tuple[int, int]:
        """An LSP ``Range`` (raw JSON) as a byte range ``(start, end)``, ``start <= end``."""
        s, e = rng["start"], rng["end"]
        start = self.to_offset(int(s["line"]), int(s["character"]), encoding)
        end = self.to_offset(int(e["line"]), int(e["character"]), encoding)
        return (start, end) if start <= end else (end, start)

    def position_json(self, offset: int, encoding: PositionEncoding) -> dict[str, int]:
        """Byte ``offset`` as a raw-JSON LSP ``Position``."""
        line, character = self.to_position(offset, encoding)
        return {"line": line, "character": character}


def _walk_bytes(
    segment: bytes, character: int | None, encoding: PositionEncoding
) -> tuple[int, int]:
    """``(offset, units)`` in ``segment`` (which holds undecodable bytes) after ``character``
    units, or at its end when ``character`` is None.

    Decodes one character at a time so every undecodable byte counts as a single unit.
    """
    units = 0
    i = 0
    n = len(segment)
    while i < n:
        lead = segment[i]
        size = 1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
        chunk = segment[i : i + size]
        try:
            ch = chunk.decode("utf-8")
        except UnicodeDecodeError:
            ch, size = "\ufffd", 1
        width = 2 if encoding == "utf-16" and ord(ch) > 0xFFFF else 1
        if character is not None and units + width > character:
            return i, units
        units += width
        i += size
    return n, units
