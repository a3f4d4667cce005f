"""The messages and class checks of the regex scan (``regex_scan``): a caret under the
position of an invalid or unsupported construct, ripgrep's refusal of a pattern that must match
a NUL, and whether a Unicode class holds a newline (then the pattern is multi-line)."""

from __future__ import annotations

import re2

from sleuth.errors import InvalidQuery, Unsupported

__all__ = ["caret_message", "invalid", "nul_error", "property_has_newline", "unsupported_error"]
__all__ += ["word_edge_error"]


def caret_message(headline: str, pattern: str, position: int, hint: str) -> str:
    """A message quoting ``pattern`` with a caret under ``position``, then what to do next."""
    return f"{headline}\n  {pattern}\n  {' ' * position}^\n{hint}"


def invalid(pattern: str, position: int, what: str, hint: str = "") -> InvalidQuery:
    hint = hint or (
        "Fix the regular expression, escape the character with \\, or search for the text "
        "literally (a quoted query is never treated as a regex)."
    )
    msg = caret_message(f"invalid regex at position {position}: {what}", pattern, position, hint)
    return InvalidQuery(msg, details={"position": position, "pattern": pattern})


def nul_error(pattern: str, at: int) -> InvalidQuery:
    """ripgrep's refusal of a pattern that must match a NUL (docs/query.md#limits)."""
    what = "the pattern must match a NUL, which binary detection never lets match (as in rg)"
    return invalid(pattern, at, what, "Drop the NUL; a class such as [\\x00-\\x08] may hold one.")


def property_has_newline(spelling: str) -> bool:
    """Whether the Unicode class ``spelling`` (RE2's ``\\p{Any}``, ``\\pC``) holds U+000A."""
    options = re2.Options()
    options.log_errors = False
    program = re2._re2.RE2(spelling.encode("utf-8"), options)  # an unknown name: not ok()
    return bool(
        program.ok() and program.Match(re2._re2.RE2.Anchor.ANCHOR_BOTH, b"\n", 0, 1)[0][0] == 0
    )


def unsupported_error(pattern: str, position: int, construct: str, spelling: str) -> Unsupported:
    msg = caret_message(
        f"{construct} `{spelling}` is not supported: sleuth runs linear-time regexes (RE2), "
        "which have no lookaround or backreferences",
        pattern,
        position,
        "Match the surrounding text instead (e.g. capture it in a group), or combine two "
        "searches with a Boolean query such as `a NOT b`.",
    )
    return Unsupported(msg, details={"construct": construct, "position": position})


def word_edge_error(pattern: str, position: int, spelling: str) -> Unsupported:
    """ripgrep's word start or end where it is not the ``\\b`` it equals beside a word
    character: RE2 cannot say it (docs/query.md#regex-regular-expressions)."""
    msg = caret_message(
        f"the word boundary `{spelling}` is supported only beside a word character "
        "(`\\<foo`, `foo\\>`), where it is `\\b`; RE2 has no word start or end of its own",
        pattern,
        position,
        "Write \\b next to the word it bounds, e.g. \\bfoo\\b.",
    )
    return Unsupported(msg, details={"construct": "word boundary", "position": position})
