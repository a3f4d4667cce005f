"""Matchers: find every match of a literal or a regex in a file's bytes (docs/query.md).

A ``Matcher`` is the engine boundary the query layer drives (ripgrep's Matcher trait): one
required method, ``find_spans``, that yields absolute byte spans, plus ``required_literals``, a
prefilter hint for which returning None is never wrong.

Both matchers scan the whole buffer in one pass, never line by line: a case-sensitive literal is
a ``bytes.find`` loop (memchr-fast), everything else is RE2 called on the whole buffer with a
start offset (google-re2's wrapper costs ~6 µs per call,
benchmarks/RESULTS.md#measured-constraints). Matching is
line-oriented unless the pattern can match a newline: RE2's ``never_nl`` then guarantees that no
match contains ``\\n``, as ripgrep without ``-U``.

Empty matches follow ripgrep/Rust regex: an empty match right where the previous match ended is
skipped, the search advances one code point after an empty match, and none is reported after a
final newline or in an empty file (ripgrep has no line there). Unlike ripgrep 14, an empty match is never reported
inside a UTF-8 sequence. Invalid UTF-8 never raises: stray bytes simply do not match ``.``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

import re2

from sleuth.errors import InvalidQuery
from sleuth.prefilter import Literals, fold
from sleuth.text_search.regex_syntax import compile_re2, required_literals, translate_scan

__all__ = ["Matcher", "LiteralMatcher", "RegexMatcher", "literal_matcher", "regex_matcher"]

_UNANCHORED = re2._re2.RE2.Anchor.UNANCHORED


class Matcher(Protocol):
    """Finds matches in bytes; ``multiline`` says whether a match may contain a newline."""

    multiline: bool

    def find_spans(self, data: bytes, start: int = 0) -> Iterator[tuple[int, int]]:
        """All non-overlapping leftmost-first matches in ``data[start:]``, absolute, ascending.

        ``data[start:]`` is searched as a text of its own: ``^`` matches at ``start`` (the
        caller passes the offset after a UTF-8 BOM, which ripgrep strips before matching).
        """
        ...

    def required_literals(self) -> Literals | None:
        """Literals a file must contain to match (ASCII-folded); None is never wrong."""
        ...


def _sequence_length(lead: int) -> int:
    if lead < 0xC2 or lead > 0xF4:
        return 1
    return 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4


def is_boundary(data: bytes, i: int) -> bool:
    """True unless offset ``i`` falls inside a well-formed UTF-8 sequence."""
    if i <= 0 or i >= len(data) or data[i] & 0xC0 != 0x80:
        return True
    for lead_at in range(i - 1, max(i - 4, -1), -1):
        byte = data[lead_at]
        if byte & 0xC0 != 0x80:
            length = _sequence_length(byte)
            tail = data[lead_at + 1 : lead_at + length]
            whole = len(tail) == length - 1 and all(b & 0xC0 == 0x80 for b in tail)
            return not (whole and lead_at + length > i)
    return True


def next_boundary(data: bytes, i: int) -> int:
    """The first code-point boundary after offset ``i`` (one code point further)."""
    i += 1
    while i < len(data) and not is_boundary(data, i):
        i += 1
    return i


class RegexMatcher:
    """A compiled RE2 program run over whole buffers."""

    def __init__(self, re2_pattern: str, *, multiline: bool, literals: Literals | None) -> None:
        self.pattern = re2_pattern
        self.multiline = multiline
        self._literals = literals
        self._program: Any = compile_re2(re2_pattern, multiline=multiline, capture=False)
        if not self._program.ok():  # translate() checked it; this guards direct construction
            error = self._program.error().decode("utf-8", "replace")
            raise InvalidQuery(
                f"cannot compile regex: {error}. Simplify the pattern and try again.",
                details={"position": 0},
            )

    def required_literals(self) -> Literals | None:
        return self._literals

    def find_spans(self, data: bytes, start: int = 0) -> Iterator[tuple[int, int]]:
        if start:
            # data[start:] is a text of its own: `^` matches at start (after a UTF-8 BOM,
            # which ripgrep strips before matching)
            for s, e in self.find_spans(data[start:]):
                yield s + start, e + start
            return
        match = self._program.Match
        end = len(data)
        # No line follows a final newline (and an empty file has none): no empty match there.
        if end == 0:
            return
        last_pos = end - 1 if data.endswith(b"\n") else end
        pos, previous_end = 0, -1
        while pos <= end:
            s, e = match(_UNANCHORED, data, pos, end)[0]
            if s < 0 or s > last_pos:
                return
            if s != e:
                yield s, e
                pos = previous_end = e
                continue
            if s != previous_end and is_boundary(data, s):
                yield s, e
                previous_end = e
            if s >= end:
                return
            pos = next_boundary(data, s)


class LiteralMatcher:
    """An exact substring; ``bytes.find`` when case-sensitive (or caseless text)."""

    def __init__(self, text: str, *, case_sensitive: bool = True) -> None:
        self.text = text
        self.needle = text.encode("utf-8")
        self.multiline = "\n" in text
        self.case_sensitive = case_sensitive
        caseless = all(ch.lower() == ch == ch.upper() for ch in text)
        self._regex: RegexMatcher | None = None
        if not self.needle or not (case_sensitive or caseless):
            # Unicode simple case folding as rg -i -F does; "" matches (emptily) everywhere.
            flags = "" if case_sensitive else "(?i)"
            self._regex = RegexMatcher(
                flags + re2.escape(text), multiline=self.multiline, literals=None
            )
        if not self.needle:
            self._literals: Literals | None = None
        elif case_sensitive:
            self._literals = ((fold(self.needle),),)
        else:
            self._literals = required_literals([("lit", ch) for ch in text], icase=True)

    def required_literals(self) -> Literals | None:
        return self._literals

    def find_spans(self, data: bytes, start: int = 0) -> Iterator[tuple[int, int]]:
        if self._regex is not None:
            yield from self._regex.find_spans(data, start)
            return
        needle, size = self.needle, len(self.needle)
        i = data.find(needle, start)
        while i >= 0:
            yield i, i + size
            i = data.find(needle, i + size)


def literal_matcher(text: str, *, case_sensitive: bool = True) -> Matcher:
    """A matcher for the exact text (docs/query.md#literal; ``case_sensitive=False`` as
    ``rg -i -F``)."""
    return LiteralMatcher(text, case_sensitive=case_sensitive)


def regex_matcher(pattern: str, *, case_sensitive: bool = True) -> Matcher:
    """A matcher for a sleuth regex (docs/query.md#regex-regular-expressions); raises InvalidQuery
    or Unsupported."""
    translated, scanned = translate_scan(pattern, case_sensitive=case_sensitive)
    icase = scanned.icase or not case_sensitive
    literals = required_literals(scanned.atoms, icase=icase)
    return RegexMatcher(translated.re2, multiline=translated.multiline, literals=literals)
