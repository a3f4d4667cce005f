"""The text pieces of ``find`` (docs/faces.md#find): exact globs and regexes for a page's files
and needles, smart case, and the notes and skip counts an answer carries."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from sleuth.errors import InvalidQuery, Unsupported
from sleuth.model import SkipCounts

if TYPE_CHECKING:
    from sleuth.query.scan import SpanSource

__all__ = [
    "path_glob",
    "escape_regex",
    "has_upper_literal",
    "text_source",
    "skip_reason",
    "skip_counts",
    "joined",
    "cut_note",
    "regex_source",
    "LOOKAROUND",
]

LOOKAROUND = frozenset({"lookahead", "negative lookahead", "lookbehind", "negative lookbehind"})

_REGEX_SPECIAL = frozenset("\\^$.|?*+()[]{}")
_GLOB_SPECIAL = frozenset("\\*?[]{}!,")
_ESCAPED = re.compile(r"\\(?:[pP]\{[^}]*\}|.)", re.DOTALL)


def path_glob(path: str) -> str:
    """An ``include`` glob matching exactly the workspace-relative ``path`` (anchored, escaped)."""
    return "/" + "".join("\\" + ch if ch in _GLOB_SPECIAL or ch.isspace() else ch for ch in path)


def escape_regex(text: str) -> str:
    """``text`` as a sleuth regex matching exactly it."""
    return "".join("\\" + ch if ch in _REGEX_SPECIAL else ch for ch in text)


def has_upper_literal(needle: str, *, regex: bool) -> bool:
    """Whether smart case makes ``needle`` case-sensitive (escapes of a regex do not count)."""
    text = _ESCAPED.sub("", needle) if regex else needle
    return any(ch.isupper() for ch in text)


def skip_reason(*skips: SkipCounts) -> str | None:
    """Why files were left out, for ``incomplete_reason`` (None when none were)."""
    too_large = sum(s.too_large for s in skips)
    unreadable = sum(s.unreadable for s in skips)
    parts = []
    if too_large:
        parts.append(f"{too_large} file(s) over the size cap were not searched")
    if unreadable:
        parts.append(f"{unreadable} file(s) could not be read")
    return "; ".join(parts) or None


def text_source(search_query: str, cs: bool) -> SpanSource:
    """The span source ``search`` would scan ``search_query`` with (its first stage)."""
    from sleuth.query.text_mode import plan_regex, plan_text

    if search_query.startswith("regex:"):
        return plan_regex(search_query.removeprefix("regex:"), case_sensitive=cs)[0].source
    stages, _ = plan_text(search_query, case_sensitive=cs)
    return stages[0].source


def skip_counts(*skips: SkipCounts) -> dict[str, int]:
    """The sum of ``skips`` as an answer's ``skipped``."""
    total = SkipCounts()
    for s in skips:
        total.add(s)
    return total.to_json()


def joined(a: str | None, b: str | None) -> str | None:
    return "; ".join(filter(None, [a, b])) or None


def cut_note(page: list[tuple[str, int]], shown: int) -> str:
    """The note of a page whose one file holds more matches than ``max_results``."""
    path, count = page[0]
    return (
        f"{path} alone has {count} matches: only {shown} are shown; narrow the query or "
        "read the file"
    )


def regex_source(needle: str, cs: bool) -> tuple[SpanSource | None, str | None]:
    """The regex's span source, or (None, why) when it is invalid: plain text then.
    Lookaround is ``invalid_query``: it changes what matches, so no fallback is safe."""
    from sleuth.query.text_mode import plan_regex

    try:
        return plan_regex(needle, case_sensitive=cs)[0].source, None
    except Unsupported as exc:
        if exc.details.get("construct") in LOOKAROUND:
            raise InvalidQuery(exc.message, details=dict(exc.details)) from None
        why = exc.message.splitlines()[0]
    except InvalidQuery as exc:
        why = exc.message.splitlines()[0]
    return None, f"{why}: searched as plain text instead"
