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

__all__ = ["wildmatch_to_regex"]

_POSIX_CLASSES: dict[str, str] = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "\\x21-\\x7e",
    "lower": "a-z",
    "print": "\\x20-\\x7e",
    "punct": "".join(re.escape(c) for c in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
    "space": " \\t\\n\\r\\f\\v",
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
}


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
    items: list[str] = []
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
                items.append(re.escape(c))
                i += 1
                continue
            name = pat[i + 2 : end]
            if name not in _POSIX_CLASSES:
                return None, n
            items.append(_POSIX_CLASSES[name])
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
                items.append(f"{re.escape(lo)}-{re.escape(hi)}")
            continue
        items.append(re.escape(lo))
    body = "".join(items)
    if negated:
        return f"[^/{body}]", i
    if not body:
        return NEVER, i
    return f"(?!/)[{body}]", i


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
            double = j - i >= 2 and (i == 0 or glob[i - 1] == "/")
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
