"""The unified diff an edit answers, bounded (docs/json.md#edits).

Every edit, undo and rename answers the diff of the files it changed. It is cut at
``MAX_DIFF_LINES`` lines or ``MAX_DIFF_BYTES`` bytes with a marker line naming the answer's
``RESULT#``, which still selects all the text; a file too large for difflib is named, not
diffed.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Sequence

from sleuth.edit.journal import FileChange

__all__ = [
    "MAX_DIFF_BYTES",
    "MAX_DIFF_LINES",
    "unified_diff",
]

MAX_DIFF_LINES = 400
"""Lines of unified diff one edit answer holds at most (docs/json.md#edits): past it the diff is
cut with a marker line and ``diff_truncated``; the ``RESULT#`` still selects all the text."""
MAX_DIFF_BYTES = 32 * 1024
"""Bytes of unified diff one edit answer holds at most (whichever of the two caps comes first)."""

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
