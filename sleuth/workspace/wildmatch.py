"""Ignore-file globs: one ``.gitignore`` line translated with git's *wildmatch* rules.

``wildmatch_to_regex`` follows ``WM_PATHNAME``: no ``{}``; classes never match ``/``, take ``\\``
escapes and POSIX names (``[[:alpha:]]``); a line git would never match (an unclosed ``[``, a
trailing lone backslash, an unknown POSIX class) translates to ``None``. ``ignore.py`` compiles
ignore files with it, so they keep git's meaning; the globs a user writes have rg's meaning
instead (``user_globs.py``).
"""

from __future__ import annotations

import re

from sleuth.workspace.user_globs import NEVER

__all__ = ["wildmatch_to_regex", "any_depth", "class_end"]

Ranges = list[tuple[int, int]]


def _ranges(body: str) -> Ranges:
    """A class body of single characters and ``a-b`` ranges (unescaped) as code point ranges."""
    out: Ranges = []
    i = 0
    while i < len(body):
        if i + 2 < len(body) and body[i + 1] == "-":
            out.append((ord(body[i]), ord(body[i + 2])))
            i += 3
        else:
            out.append((ord(body[i]), ord(body[i])))
            i += 1
    return out


_POSIX_CLASSES: dict[str, Ranges] = {
    name: _ranges(body)
    for name, body in {
        "alnum": "a-zA-Z0-9",
        "alpha": "a-zA-Z",
        "blank": " \t",
        "cntrl": "\x00-\x1f\x7f",
        "digit": "0-9",
        "graph": "\x21-\x7e",
        "lower": "a-z",
        "print": "\x20-\x7e",
        "punct": "!-/:-@[-`{-~",
        "space": " \t\n\r\f\v",
        "upper": "A-Z",
        "xdigit": "0-9A-Fa-f",
    }.items()
}
"""Each POSIX class git knows, as code point ranges (read once, never changed)."""


def _class_body(ranges: Ranges) -> str:
    """A regex class body (no brackets) for ``ranges``, read alike by ``re`` and RE2."""
    out = []
    for lo, hi in ranges:
        out.append(re.escape(chr(lo)) if lo == hi else f"{re.escape(chr(lo))}-{re.escape(chr(hi))}")
    return "".join(out)


def _without_slash(ranges: Ranges) -> Ranges:
    """``ranges`` less ``/`` (a class never matches it under ``WM_PATHNAME``): a class with no
    lookahead, which RE2 (``ignore_match``'s linear lines) does not take."""
    slash = ord("/")
    out: Ranges = []
    for lo, hi in ranges:
        if lo <= slash <= hi:
            out.extend(r for r in ((lo, slash - 1), (slash + 1, hi)) if r[0] <= r[1])
        else:
            out.append((lo, hi))
    return out


def _class_to_regex(pat: str, i: int) -> tuple[str | None, int]:
    """Translate the bracket expression starting at ``pat[i] == '['``.

    Returns (regex, index after the closing ``]``); regex is None when git would abort the match.
    """
    n = len(pat)
    i += 1
    negated = False
    if i < n and pat[i] in "!^":
        negated = True
        i += 1
    items: Ranges = []
    first = True
    while True:
        if i >= n:
            return None, n  # unclosed: wildmatch aborts, nothing matches
        c = pat[i]
        if c == "]" and not first:
            i += 1
            break
        first = False
        if c == "[" and pat.startswith("[:", i):
            end = pat.find(":]", i + 2)
            if end < 0:
                items.append((ord(c), ord(c)))
                i += 1
                continue
            name = pat[i + 2 : end]
            if name not in _POSIX_CLASSES:
                return None, n
            items.extend(_POSIX_CLASSES[name])
            i = end + 2
            continue
        if c == "\\":
            i += 1
            if i >= n:
                return None, n
            c = pat[i]
        lo = c
        i += 1
        if i + 1 < n and pat[i] == "-" and pat[i + 1] != "]":
            hi = pat[i + 1]
            i += 2
            if hi == "\\":
                if i >= n:
                    return None, n
                hi = pat[i]
                i += 1
            if lo <= hi:
                items.append((ord(lo), ord(hi)))
            continue
        items.append((ord(lo), ord(lo)))
    if negated:
        return f"[^/{_class_body(items)}]", i
    body = _class_body(_without_slash(items))
    if not body:
        return NEVER, i
    return f"[{body}]", i


def class_end(pat: str, i: int) -> int:
    """The index after the bracket expression starting at ``pat[i] == '['`` (the end of the
    pattern when git would abort the match there)."""
    _cls, end = _class_to_regex(pat, i)
    return end


def any_depth(glob: str, i: int, j: int) -> bool:
    """Whether the stars ``glob[i:j]`` are an any-depth ``**``: two or more, at the start of
    the line, after a ``/``, or right after the line's literal prefix. git compares that prefix
    (up to the first ``*?[\\``) as a string and runs wildmatch on the rest from there, so
    ``b**/*`` matches ``b`` and ``ba`` as ``b`` then ``**/*`` (dir.c's ``match_pathname``)."""
    if j - i < 2:
        return False
    if i == 0 or glob[i - 1] == "/":
        return True
    return not any(c in "*?[\\" for c in glob[:i])


def wildmatch_to_regex(glob: str) -> str | None:
    """Regex body (no anchors) for one ignore-file line under git's wildmatch (``WM_PATHNAME``)."""
    out: list[str] = []
    n = len(glob)
    i = 0
    while i < n:
        c = glob[i]
        if c == "*":
            j = i
            while j < n and glob[j] == "*":
                j += 1
            double = any_depth(glob, i, j)
            if double and j == n:
                out.append(".*")
            elif double and glob[j] == "/":
                out.append("(?:.*/)?")
                j += 1
            else:
                out.append("[^/]*")
            i = j
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            cls, i = _class_to_regex(glob, i)
            if cls is None:
                return None
            out.append(cls)
        elif c == "\\":
            if i + 1 >= n:
                return None
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)
