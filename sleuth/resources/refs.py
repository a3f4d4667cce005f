"""Reference strings (docs/references.md#the-forms): the only code that parses ``SEARCH#…`` and
``RESULT#…``.

    SEARCH#H:N:line    the whole line(s) of match N of result H
    SEARCH#H:N:match   exactly match N's range
    SEARCH#H:all:line  every match of H (all pages), as whole lines
    SEARCH#H:all:match every match of H (all pages)
    SEARCH#H           the same as SEARCH#H:all:match (accepted by ``select`` and scopes)
    RESULT#ID          a registered read/select/edit result (or a capture of an older engine)
    RESULT#H:N:NAME    capture NAME of match N of search H (docs/references.md#captures): derived
                       from the match's own stored row, so registering a match writes no
                       row per capture

Malformed strings are ``invalid_query`` (what is wrong and the expected shape); well-formed
strings that name nothing are ``not_found`` — decided by the registry, not here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from sleuth.errors import InvalidQuery

__all__ = [
    "Ref",
    "parse_ref",
    "looks_like_ref",
    "capture_ref",
    "Unit",
    "CAPTURE_SPANS",
    "MAX_MATCH_NUMBER",
]

Unit = Literal["line", "match"]

_ID = r"[0-9a-f]{8}"
MAX_MATCH_NUMBER = 999_999_999
"""The largest match number a reference names (nine digits)."""
_SEARCH = re.compile(rf"SEARCH#({_ID})(?::(all|[1-9][0-9]{{0,8}}):(line|match))?")
_RESULT = re.compile(rf"RESULT#({_ID})")
_CAPTURE = re.compile(rf"RESULT#({_ID}):(all|[1-9][0-9]{{0,8}}):([A-Z0-9_]{{1,160}})")
_SHAPES = (
    "SEARCH#<8 hex>:<n>:line|match, SEARCH#<8 hex>:all:line|match, SEARCH#<8 hex>, "
    "RESULT#<8 hex>, RESULT#<8 hex>:<n>:<NAME> or RESULT#<8 hex>:all:<NAME> (copy a "
    "reference from a previous answer)"
)
_MAX_REF_CHARS = 200

CAPTURE_SPANS = "capture_spans"
"""Key of a stored match body holding ``{NAME: [start_byte, end_byte, line, end_line]}``: what
a capture reference resolves to. Never shown: a page drops it (docs/json.md#a-match lists no
such field)."""


@dataclass(frozen=True)
class Ref:
    """A parsed reference: which result, which match (None = all), which unit.

    For a capture (``kind == "capture"``) ``result_id`` is the search holding the match, ``n``
    the match (None: every match, ``RESULT#H:all:NAME``) and ``capture`` the metavariable's
    name.
    """

    kind: Literal["search", "result", "capture"]
    result_id: str
    n: int | None
    unit: Unit
    text: str
    capture: str | None = None

    @property
    def is_all(self) -> bool:
        return self.kind == "search" and self.n is None

    @property
    def every_match(self) -> bool:
        """Every match of a result: ``SEARCH#H:all:…`` and ``RESULT#H:all:NAME`` (every capture),
        a partial set when the result is incomplete (edits refuse it then)."""
        return self.n is None and self.kind in ("search", "capture")


def looks_like_ref(text: str) -> bool:
    """True when ``text`` is meant as a reference (so a path is not read as one)."""
    return text.startswith(("SEARCH#", "RESULT#"))


def capture_ref(result_id: str, n: int, name: str) -> str:
    """The reference of capture ``name`` of match ``n`` of search ``result_id`` (``SEARCH#H``)."""
    return f"RESULT#{result_id.removeprefix('SEARCH#')}:{n}:{name}"


def parse_ref(text: str) -> Ref:
    """Parse a reference string; ``InvalidQuery`` naming the expected shapes if malformed."""
    if not isinstance(text, str) or len(text) > _MAX_REF_CHARS:
        raise InvalidQuery(
            f"not a reference: expected {_SHAPES}", details={"reference": str(text)[:100]}
        )
    m = _SEARCH.fullmatch(text)
    if m:
        which, unit = m.group(2), m.group(3)
        n = None if which in (None, "all") else int(which)
        return Ref("search", f"SEARCH#{m.group(1)}", n, "line" if unit == "line" else "match", text)
    m = _RESULT.fullmatch(text)
    if m:
        return Ref("result", f"RESULT#{m.group(1)}", None, "match", text)
    m = _CAPTURE.fullmatch(text)
    if m:
        n = None if m.group(2) == "all" else int(m.group(2))
        return Ref("capture", f"SEARCH#{m.group(1)}", n, "match", text, m.group(3))
    raise InvalidQuery(
        f"malformed reference {text!r}: expected {_SHAPES}", details={"reference": text}
    )
