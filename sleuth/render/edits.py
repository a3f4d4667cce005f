"""Edit and rename answers: a header, the unified diff, and a rename's untouched names.

The diff is the answer's own, which the edit layer bounds (``sleuth/edit/diff.py``
``MAX_DIFF_LINES``/``MAX_DIFF_BYTES``, docs/json.md#edits): when ``diff_truncated`` its last line
is the marker ``… N more lines (diff truncated; read RESULT#… to see the text)``, shown as a
warning. Nothing here re-reads files, so a rendering is never larger than its answer."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from sleuth.render.common import (
    STYLE_CONTEXT,
    STYLE_DIFF_ADD,
    STYLE_DIFF_DEL,
    STYLE_DIFF_FILE,
    STYLE_DIFF_HUNK,
    STYLE_HEADER,
    STYLE_WARN,
    Json,
    plural,
    styled,
)

if TYPE_CHECKING:
    from rich.text import Text


def edit_header(data: Json, verb: str) -> str:
    """``RESULT#… replace: 2 files changed`` (plus ``refreshed`` when an ``:all`` re-ran)."""
    changed = data.get("changed") or ()
    text = (
        f"{data.get('result') or '(no result id)'} {verb}: {plural(len(changed), 'file')} changed"
    )
    return text + "  refreshed" if data.get("refreshed") else text


def _edit_notes(data: Json) -> list[str]:
    if data.get("refreshed"):
        return [
            "refreshed: files changed since the search, so it was re-run and the fresh "
            "matches were edited"
        ]
    return []


_HUNK = re.compile(r"@@ -\d+(?:,(?P<old>\d+))? \+\d+(?:,(?P<new>\d+))? @@")


def _diff_lines(data: Json) -> list[tuple[str, str | None]]:
    """The diff's lines with their styles, without the carriage returns of CRLF files.

    Hunk headers say how many old and new lines follow, so a removed line that itself starts
    with ``--`` is not mistaken for a file header; a cut diff's marker (its last line) is a
    warning, never read as a line of the hunk it cut."""
    diff = str(data.get("diff") or "")
    lines = diff.split("\n")
    if diff.endswith("\n"):
        lines.pop()
    marker = lines.pop() if data.get("diff_truncated") and lines else None
    out: list[tuple[str, str | None]] = []
    old = new = 0
    for raw in lines:
        line = raw.removesuffix("\r")
        style: str | None = None
        if line.startswith("\\"):
            style = STYLE_CONTEXT
        elif old or new:
            if line.startswith("-"):
                old, style = old - 1, STYLE_DIFF_DEL
            elif line.startswith("+"):
                new, style = new - 1, STYLE_DIFF_ADD
            else:
                old, new = max(old - 1, 0), max(new - 1, 0)
        elif line.startswith("@@"):
            style = STYLE_DIFF_HUNK
            hunk = _HUNK.match(line)
            if hunk:
                old = int(hunk["old"] if hunk["old"] is not None else 1)
                new = int(hunk["new"] if hunk["new"] is not None else 1)
        elif line.startswith(("--- ", "+++ ")):
            style = STYLE_DIFF_FILE
        out.append((line, style))
    if marker is not None:
        out.append((marker, STYLE_WARN))
    return out


def edit_human(data: Json, *, verb: str) -> Text:
    """The CLI's rendering of an edit: the header, the unified diff, and how to undo it."""
    out = styled()
    out.append(edit_header(data, verb), style=STYLE_HEADER)  # a span: the diff is not bold
    for note in _edit_notes(data):
        out.append("\n")
        out.append(note, style=STYLE_WARN)
    for line, style in _diff_lines(data):
        out.append("\n")
        out.append(line, style=style or "")
    if verb != "undo" and data.get("result"):
        out.append("\n")
        out.append(f"undo: sleuth undo {data['result']}", style=STYLE_CONTEXT)
    return out


def edit_compact(data: Json, *, verb: str) -> str:
    """The MCP text content of an edit: the header, then the unified diff."""
    lines = [line for line, _ in _diff_lines(data)]
    return "\n".join([edit_header(data, verb), *_edit_notes(data), *lines])


# --- rename / doctor ---------------------------------------------------------------------------

UNTOUCHED_TITLE = "not renamed (text matches, review them):"


def rename_header(data: Json) -> str:
    """``RESULT#… rename: 5 occurrences in 2 files`` (docs/edits.md#rename)."""
    changed = data.get("changed") or ()
    ranges = data.get("ranges") or ()
    text = (
        f"{data.get('result') or '(no result id)'} rename: "
        f"{plural(len(ranges), 'occurrence')} in {plural(len(changed), 'file')}"
    )
    return text + "  refreshed" if data.get("refreshed") else text


def _untouched_lines(data: Json) -> list[str]:
    """``path:line  text`` for each occurrence of the old name the rename left alone."""
    return [
        f"{u.get('path')}:{u.get('line')}  {str(u.get('text') or '').strip()}"
        for u in data.get("untouched") or ()
        if isinstance(u, Mapping)
    ]


def rename_human(data: Json) -> Text:
    """The CLI's rendering of a rename: header, unified diff, then the untouched occurrences."""
    out = styled()
    out.append(rename_header(data), style=STYLE_HEADER)
    for line, style in _diff_lines(data):
        out.append("\n")
        out.append(line, style=style or "")
    untouched = _untouched_lines(data)
    if untouched:
        out.append("\n")
        out.append(UNTOUCHED_TITLE, style=STYLE_WARN)
        for line in untouched:
            out.append("\n  " + line)
    return out


def rename_compact(data: Json) -> str:
    """The MCP text content of a rename: header, diff, untouched occurrences."""
    lines = [rename_header(data), *(line for line, _ in _diff_lines(data))]
    untouched = _untouched_lines(data)
    if untouched:
        lines += [UNTOUCHED_TITLE, *("  " + line for line in untouched)]
    return "\n".join(lines)
