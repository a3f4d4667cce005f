"""Read and select answers (``read_human``/``read_compact``) and the ``index`` line."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sleuth.render.common import (
    STYLE_CONTEXT,
    STYLE_HEADER,
    STYLE_LINENO,
    STYLE_PATH,
    STYLE_WARN,
    Json,
    plural,
    styled,
    visible,
)

if TYPE_CHECKING:
    from rich.text import Text


LINENO_WIDTH = 4
GAP = "…"


def _range_lines(rng: Json) -> list[tuple[int, str]]:
    """``(line number, text)`` for each line of one selected range (no trailing EOL line)."""
    first = int(rng.get("line") or 1)
    end_line = int(rng.get("end_line") or first)
    lines = str(rng.get("text") or "").split("\n")
    if len(lines) > end_line - first + 1 and lines[-1] == "":
        lines.pop()  # the range ends with its last line's EOL
    return [(first + i, text.removesuffix("\r")) for i, text in enumerate(lines)]


def _read_header(data: Json) -> str:
    parts = [f"{data.get('result') or '(no result id)'} from {data.get('source') or '?'}"]
    ranges = data.get("ranges") or ()
    parts.append(plural(len(ranges), "range"))
    parts.append("complete" if data.get("complete", True) else "incomplete")
    if data.get("refreshed"):
        parts.append("refreshed")
    return "  ".join(parts)


def _read_notes(data: Json) -> list[str]:
    notes = []
    if data.get("refreshed"):
        notes.append(
            "refreshed: files changed since the search, so it was re-run and these "
            "are the fresh matches"
        )
    if not data.get("complete", True):
        reason = data.get("incomplete_reason")
        notes.append(f"incomplete: {reason}" if reason else "incomplete selection")
    return notes


def read_human(data: Json) -> Text:
    """The CLI's rendering of a ``read``/``select`` answer: ``  12 | text`` under each path,
    with ``   … |`` between ranges of one file that are not adjacent."""
    out = styled()
    out.append(_read_header(data), style=STYLE_HEADER)  # a span: the text below is not bold
    for note in _read_notes(data):
        out.append("\n")
        out.append(note, style=STYLE_WARN)
    ranges: list[Json] = list(data.get("ranges") or ())
    if not ranges:
        out.append("\n")
        out.append("nothing selected", style=STYLE_WARN)
        return out
    width = max(LINENO_WIDTH, *(len(str(r.get("end_line") or r.get("line") or 1)) for r in ranges))
    path: str | None = None
    last_line = 0
    for rng in ranges:
        lines = _range_lines(rng)
        if rng.get("path") != path:
            path = str(rng.get("path"))
            out.append("\n\n")
            out.append(path, style=STYLE_PATH)
        elif lines and lines[0][0] > last_line + 1:
            out.append("\n")
            out.append(f"{GAP:>{width}} |", style=STYLE_CONTEXT)
        for number, text in lines:
            out.append("\n")
            out.append(f"{number:>{width}} |", style=STYLE_LINENO)
            if text:
                out.append(" " + text)
            last_line = number
    return out


def numbered_line(number: int, text: str) -> str:
    """One line of a compact read: ``12| text``."""
    return f"{number}|" + (f" {visible(text)}" if text else "")  # shown, never obeyed


def read_compact(data: Json) -> str:
    """The MCP text content of a ``read``/``select`` answer: the header, then each file's path
    once and its selected lines as ``N| text`` (``…`` between ranges that are not adjacent)."""
    lines = [_read_header(data), *_read_notes(data)]
    path: str | None = None
    last_line = 0
    for rng in data.get("ranges") or ():
        numbered = _range_lines(rng)
        if rng.get("path") != path:
            path = str(rng.get("path"))
            lines.append(path)
        elif numbered and numbered[0][0] > last_line + 1:
            lines.append(GAP)
        for number, text in numbered:
            lines.append(numbered_line(number, text))
            last_line = number
    if not data.get("ranges"):
        lines.append("nothing selected")
    if data.get("next_offset"):
        lines.append(f"more: read with offset={data['next_offset']}")
    return "\n".join(lines)


def index_human(data: Json) -> Text:
    """``indexed 42 files into .sleuth/trigram.idx``."""
    out = styled("indexed ")
    out.append(plural(int(data.get("indexed") or 0), "file"), style=STYLE_HEADER)
    out.append(" into ")
    out.append(str(data.get("path") or "?"), style=STYLE_PATH)
    return out
