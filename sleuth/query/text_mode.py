"""Text, regex and Boolean queries as span sources, with the fallback chain of
docs/query.md#plain-text.

``plan_text`` turns the body of an unprefixed query into the ordered stages to try: the exact
literal first; for an unquoted query that finds nothing, the same text as a regular expression
(``fallback: "regex"``); then, for several words, each word on its own (``"broadened"``). Quoted
queries and Boolean queries have one stage and never fall back.
"""

from __future__ import annotations

from itertools import islice
from typing import TYPE_CHECKING

from sleuth.errors import SleuthError
from sleuth.prefilter import Literals
from sleuth.query.scan import FILE_MATCHES_MAX, Stage, TextMode
from sleuth.text_search.matchers import Matcher, literal_matcher, regex_matcher

if TYPE_CHECKING:
    from sleuth.text_search.boolean import BoolNode

__all__ = ["Stage", "MatcherSource", "BooleanSource", "plan_text", "plan_regex", "TextMode"]

_OPERATOR_TEXT = ("|", "AND", "OR", "NOT")
"""What every Boolean operator contains (``AND``, ``OR``, ``NOT``, ``||``, a spaced ``|``)."""


def _may_be_boolean(query: str) -> bool:
    """False when ``query`` cannot be Boolean (no operator's text in it): then the Boolean
    parser is not even imported, which a plain query's cold start would pay for."""
    return any(text in query for text in _OPERATOR_TEXT)


class MatcherSource:
    """A span source over one matcher (literal or regex)."""

    def __init__(self, matcher: Matcher, *, prefilter: bool) -> None:
        self._matcher = matcher
        self._prefilter = prefilter

    @property
    def literals(self) -> Literals | None:
        return self._matcher.required_literals()

    @property
    def prefilter(self) -> bool:
        return self._prefilter

    def spans(self, data: bytes, start: int) -> list[tuple[int, int]]:
        # one more than a file may list: the scanner then knows it was cut (FILE_MATCHES_MAX)
        return list(islice(self._matcher.find_spans(data, start), FILE_MATCHES_MAX + 1))


class BooleanSource:
    """A span source for a Boolean expression, evaluated per file (docs/query.md#boolean)."""

    def __init__(self, node: BoolNode, *, case_sensitive: bool) -> None:
        self._node = node
        self._case_sensitive = case_sensitive
        self._literals = node.required_literals()

    @property
    def literals(self) -> Literals | None:
        return self._literals

    @property
    def prefilter(self) -> bool:
        return True

    def spans(self, data: bytes, start: int) -> list[tuple[int, int]]:
        from sleuth.text_search.boolean import evaluate  # loaded with the BoolNode

        body = data if start == 0 else data[start:]
        found = evaluate(self._node, body, self._case_sensitive)
        if not found:
            return []
        return [(s + start, e + start) for s, e in found] if start else list(found)


class _BroadenedSource(MatcherSource):
    """Every word of a multi-word query on its own, merged in order."""

    def __init__(self, matchers: list[Matcher]) -> None:
        self._matchers = matchers
        self._prefilter = False

    @property
    def literals(self) -> Literals | None:
        groups: list[bytes] = []
        for m in self._matchers:
            lits = m.required_literals()
            if not lits or len(lits) != 1:
                return None
            groups.extend(lits[0])
        return (tuple(groups),)

    def spans(self, data: bytes, start: int) -> list[tuple[int, int]]:
        found = sorted({span for m in self._matchers for span in m.find_spans(data, start)})
        merged: list[tuple[int, int]] = []
        for s, e in found:
            if merged and s < merged[-1][1]:
                continue  # overlapping words: keep the earlier one
            merged.append((s, e))
        return merged


_REGEX_META = frozenset(".^$*+?()[]{}|\\")


def _is_quoted(body: str) -> bool:
    return len(body) >= 2 and body[0] == '"' and body[-1] == '"' and '"' not in body[1:-1]


def plan_regex(body: str, *, case_sensitive: bool) -> list[Stage]:
    """``regex:`` — one stage; invalid patterns raise (never a silent fallback,
    docs/query.md#regex-regular-expressions)."""
    matcher = regex_matcher(body, case_sensitive=case_sensitive)
    return [Stage("regex", None, MatcherSource(matcher, prefilter=True))]


def plan_text(body: str, *, case_sensitive: bool) -> tuple[list[Stage], bool]:
    """The stages for an unprefixed query, and whether ``possible_names`` may be offered."""
    if _is_quoted(body):
        inner = body[1:-1]
        return [
            Stage(
                "literal",
                None,
                MatcherSource(
                    literal_matcher(inner, case_sensitive=case_sensitive), prefilter=False
                ),
            )
        ], False
    if _may_be_boolean(body):
        from sleuth.text_search.boolean import is_boolean, parse_boolean  # late: rare, ~9 ms

        if is_boolean(body):
            node = parse_boolean(body)
            return [
                Stage("boolean", None, BooleanSource(node, case_sensitive=case_sensitive))
            ], False
    stages = [
        Stage(
            "literal",
            None,
            MatcherSource(
                literal_matcher(body, case_sensitive=case_sensitive), prefilter=not case_sensitive
            ),
        )
    ]
    as_regex: Matcher | None = None
    if any(ch in _REGEX_META for ch in body):  # else the regex reading equals the literal one
        try:
            as_regex = regex_matcher(body, case_sensitive=case_sensitive)
        except SleuthError:
            as_regex = None  # not a valid regex: the literal was the only reading
    if as_regex is not None:
        stages.append(Stage("regex", "regex", MatcherSource(as_regex, prefilter=True)))
    words = body.split()
    if len(words) > 1:
        matchers = [literal_matcher(w, case_sensitive=case_sensitive) for w in dict.fromkeys(words)]
        stages.append(Stage("broadened", "broadened", _BroadenedSource(matchers), broadened=True))
    return stages, True
