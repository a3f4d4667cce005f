"""Chunks: the units semantic search ranks (docs/query.md#semantic-hybrid-retrieval).

A file is cut into one chunk per declaration, from the tree-sitter tags the query layer hands
in (``Decl``: byte range, name, kind, container), and windows of ``WINDOW_LINES`` lines for the
code between top-level declarations, or for the whole file when it has no tags. A chunk spans
its declaration whole (a match through it selects the whole function), but its *text* — what is
tokenized and embedded — leaves out the bodies of the declarations nested in it, keeping only
their first line: a class is described by its header, docstring and member signatures, and each
method stands as a chunk of its own.

Limits keep a pathological file cheap: a window also ends at ``WINDOW_BYTES`` (a minified line is
cut at a UTF-8 character boundary), a chunk's text is cut at ``TEXT_BYTES``, a file yields at most
``MAX_CHUNKS`` chunks, and a window of blank lines or punctuation yields none.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

__all__ = [
    "Chunk",
    "Decl",
    "chunk_file",
    "WINDOW_LINES",
    "WINDOW_BYTES",
    "TEXT_BYTES",
    "MAX_CHUNKS",
]

WINDOW_LINES = 30
WINDOW_BYTES = 4096
TEXT_BYTES = 8192
MAX_CHUNKS = 2000

Decl = tuple[int, int, str, str, str]
"""(start_byte, end_byte, name, kind, container) of one declaration from the tags."""


@dataclass(frozen=True)
class Chunk:
    """One ranked unit: a byte range of a file, what it is called, and the text that stands
    for it (``title`` is the qualified name of a declaration, ``""`` for a window)."""

    start: int
    end: int
    line: int
    end_line: int
    kind: str
    title: str
    text: str


def _line_starts(data: bytes) -> list[int]:
    starts = [0]
    at = data.find(b"\n")
    while at != -1:
        starts.append(at + 1)
        at = data.find(b"\n", at + 1)
    return starts


def _char_boundary(data: bytes, at: int) -> int:
    """``at`` moved back to the start of a UTF-8 character (a continuation byte is 10xxxxxx)."""
    while 0 < at < len(data) and data[at] & 0xC0 == 0x80:
        at -= 1
    return at


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _header(data: bytes, start: int, end: int) -> bytes:
    stop = data.find(b"\n", start, end)
    return data[start : end if stop == -1 else stop]


def _decl_text(data: bytes, decl: Decl, children: list[Decl]) -> str:
    start, end = decl[0], decl[1]
    pieces: list[bytes] = []
    at = start
    for c_start, c_end, *_ in children:
        if c_start < at:
            continue
        pieces.append(data[at:c_start])
        pieces.append(_header(data, c_start, c_end))
        at = c_end
    pieces.append(data[at:end])
    return _decode(b"".join(pieces)[:TEXT_BYTES])


def _windows(data: bytes, start: int, end: int, starts: list[int]) -> list[tuple[int, int]]:
    """[start, end) cut into windows of whole lines (and at most ``WINDOW_BYTES`` each)."""
    out: list[tuple[int, int]] = []
    at = start
    while at < end:
        line = bisect_right(starts, at) - 1
        stop_line = line + WINDOW_LINES
        stop = starts[stop_line] if stop_line < len(starts) else len(data)
        stop = min(stop, end, at + WINDOW_BYTES)
        if stop < end and stop - at == WINDOW_BYTES:
            stop = _char_boundary(data, stop) or stop
        if stop <= at:
            stop = min(end, at + WINDOW_BYTES)
        out.append((at, stop))
        at = stop
    return out


def _has_words(text: str) -> bool:
    return sum(ch.isalnum() for ch in text) >= 3


def chunk_file(data: bytes, decls: list[Decl] | None = None) -> list[Chunk]:
    """The chunks of one file's bytes, in document order of their start.

    ``decls`` are the file's declarations (any order, nesting allowed); None or empty: windows
    only. Declarations outside the data or empty are ignored.
    """
    starts = _line_starts(data)

    def line_of(at: int) -> int:
        return bisect_right(starts, at)

    good = sorted(
        (d for d in decls or () if 0 <= d[0] < d[1] <= len(data)),
        key=lambda d: (d[0], -d[1]),
    )
    chunks: list[Chunk] = []
    # the immediate children of each declaration, by a stack walk over the sorted ranges
    children: dict[int, list[Decl]] = {i: [] for i in range(len(good))}
    stack: list[int] = []
    top: list[Decl] = []
    for i, d in enumerate(good):
        while stack and good[stack[-1]][1] <= d[0]:
            stack.pop()
        if stack and d[1] <= good[stack[-1]][1]:
            children[stack[-1]].append(d)
        else:
            top.append(d)
        stack.append(i)
    for i, d in enumerate(good):
        start, end, name, kind, container = d
        title = f"{container}.{name}" if container else name
        text = _decl_text(data, d, children[i])
        chunks.append(Chunk(start, end, line_of(start), line_of(end - 1), kind, title, text))
    # windows over what no top-level declaration covers
    at = 0
    gaps: list[tuple[int, int]] = []
    for d in top:
        if d[0] > at:
            gaps.append((at, d[0]))
        at = max(at, d[1])
    if at < len(data):
        gaps.append((at, len(data)))
    for g_start, g_end in gaps:
        for w_start, w_end in _windows(data, g_start, g_end, starts):
            text = _decode(data[w_start:w_end])
            if _has_words(text):
                chunks.append(
                    Chunk(w_start, w_end, line_of(w_start), line_of(w_end - 1), "window", "", text)
                )
    chunks.sort(key=lambda c: (c.start, -c.end))
    return chunks[:MAX_CHUNKS]
