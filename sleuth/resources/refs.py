"""Reference strings (SPEC §5): the only code that parses ``SEARCH#…`` and ``RESULT#…``.

    SEARCH#H:N:line    the whole line(s) of match N of result H
    SEARCH#H:N:match   exactly match N's range
    SEARCH#H:all:line  every match of H (all pages), as whole lines
    SEARCH#H:all:match every match of H (all pages)
    SEARCH#H           the same as SEARCH#H:all:match (accepted by ``select`` and scopes)
    RESULT#ID          a registered read/select/edit/capture result

Malformed strings are ``invalid_query`` (what is wrong and the expected shape); well-formed
strings that name nothing are ``not_found`` — decided by the registry, not here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from sleuth.errors import InvalidQuery

__all__ = ["Ref", "parse_ref", "looks_like_ref", "Unit"]

Unit = Literal["line", "match"]

_ID = r"[0-9a-f]{8}"
_SEARCH = re.compile(rf"SEARCH#({_ID})(?::(all|[1-9][0-9]{{0,8}}):(line|match))?")
_RESULT = re.compile(rf"RESULT#({_ID})")
_SHAPES = (
    "SEARCH#<8 hex>:<n>:line|match, SEARCH#<8 hex>:all:line|match, SEARCH#<8 hex> or "
    "RESULT#<8 hex> (copy a reference from a previous answer)"
)


@dataclass(frozen=True)
class Ref:
    """A parsed reference: which result, which match (None = all), which unit."""

    kind: Literal["search", "result"]
    result_id: str
    n: int | None
    unit: Unit
    text: str

    @property
    def is_all(self) -> bool:
        return self.kind == "search" and self.n is None


def looks_like_ref(text: str) -> bool:
    """True when ``text`` is meant as a reference (so a path is not read as one)."""
    return text.startswith(("SEARCH#", "RESULT#"))


def parse_ref(text: str) -> Ref:
    """Parse a reference string; ``InvalidQuery`` naming the expected shapes if malformed."""
    if not isinstance(text, str) or len(text) > 100:
        raise InvalidQuery(f"not a reference: expected {_SHAPES}", details={"reference": str(text)[:100]})
    m = _SEARCH.fullmatch(text)
    if m:
        which, unit = m.group(2), m.group(3)
        n = None if which in (None, "all") else int(which)
        return Ref("search", f"SEARCH#{m.group(1)}", n, "line" if unit == "line" else "match", text)
    m = _RESULT.fullmatch(text)
    if m:
        return Ref("result", f"RESULT#{m.group(1)}", None, "match", text)
    raise InvalidQuery(f"malformed reference {text!r}: expected {_SHAPES}", details={"reference": text})
