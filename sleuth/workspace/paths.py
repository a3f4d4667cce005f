"""Workspace-relative paths and the glob language every workspace rule is written in.

Two things live here because both are about spelling paths:

* ``normalize_rel`` turns user input (``"./src//a.py"``, ``"/"``, ``"src/../a.py"``) into the
  canonical relative POSIX form of SPEC §1, or raises ``InvalidPath`` for input that leaves the
  root lexically (absolute paths, ``..`` past the root, NUL bytes).
* ``glob_to_regex`` translates one glob to a Python regex body with git's *wildmatch* rules
  (``WM_PATHNAME``): ``*`` and ``?`` and ``[...]`` never cross ``/``; ``**/`` matches zero or more
  folders, ``/**`` everything inside, ``**`` elsewhere acts as ``*``; ``\\x`` escapes; POSIX
  classes ``[[:alpha:]]``. ``.gitignore`` lines (``ignore.py``), ``deny`` globs (``policy.py``) and
  the ``include``/``exclude`` options (``PathGlobs``) all compile through it, so the three agree.

A glob that git would never match (an unclosed ``[``, a trailing lone backslash, an unknown POSIX
class) translates to ``None``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence

from sleuth.errors import InvalidPath

__all__ = [
    "normalize_rel",
    "ancestors",
    "glob_to_regex",
    "PathGlobs",
    "NEVER",
]

NEVER = "(?!)"
"""A regex body that matches nothing (used for globs git would never match)."""

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


def normalize_rel(path: str) -> str:
    """The canonical workspace-relative form of ``path`` ("" is the root).

    Purely lexical: no file system access. Raises ``InvalidPath`` for NUL bytes, absolute paths
    (except the bare ``"/"``, which SPEC §3 uses for the root) and ``..`` that leaves the root.
    """
    if "\x00" in path:
        raise InvalidPath(
            "path contains a NUL byte; give a plain relative path such as 'src/app.py'",
            details={"path": path.replace("\x00", "\\0")},
        )
    if path in ("", ".", "/"):
        return ""
    if path.startswith("/"):
        raise InvalidPath(
            f"absolute paths are not accepted: {path}; give the path relative to the workspace "
            "root, e.g. 'src/app.py' (use '/' or '' for the root itself)",
            details={"path": path},
        )
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                raise InvalidPath(
                    f"path leaves the workspace root: {path}; only paths inside the root can be "
                    "used",
                    details={"path": path},
                )
            parts.pop()
            continue
        parts.append(part)
    return "/".join(parts)


def ancestors(rel: str) -> Iterator[str]:
    """``rel`` and every folder above it, deepest first, root ("") excluded."""
    while rel:
        yield rel
        cut = rel.rfind("/")
        rel = rel[:cut] if cut >= 0 else ""


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


def glob_to_regex(glob: str) -> str | None:
    """Regex body (no anchors) for ``glob`` under git's wildmatch with ``WM_PATHNAME``."""
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


_GLOB_SPECIAL = frozenset("*?[\\")  # what makes a glob more than a literal name (see glob_to_regex)


def _alternation(bodies: Iterable[str]) -> re.Pattern[str] | None:
    parts = list(bodies)
    if not parts:
        return None
    return re.compile("|".join(f"(?:{b})" for b in parts), re.DOTALL)


class PathGlobs:
    """A set of user globs (``include``, ``exclude``, ``deny``) compiled into two regexes.

    A glob containing ``/`` matches the whole relative path (a leading ``/`` or ``./`` is
    dropped); one without ``/`` matches the base name at any depth (SPEC §3, ``files:``).
    With ``whole_folder=True`` a glob ending in ``/**`` also matches the folder itself, so
    ``secrets/**`` cloaks ``secrets`` as well as what is inside it.
    """

    __slots__ = ("globs", "_path_re", "_base_re", "_base_names")

    def __init__(self, globs: Sequence[str], *, whole_folder: bool = False) -> None:
        self.globs = tuple(globs)
        path_bodies: list[str] = []
        base_bodies: list[str] = []
        names: set[str] = set()  # globs without wildcards that name a base name: a set lookup
        for raw in self.globs:
            glob = raw.strip()
            while glob.startswith("./"):
                glob = glob[2:]
            glob = glob.lstrip("/")
            if glob.endswith("/") and glob != "/":
                glob = glob.rstrip("/")
            if not glob:
                continue
            targets = [glob]
            if whole_folder and glob.endswith("/**") and len(glob) > 3:
                targets.append(glob[:-3])
            for g in targets:
                if "/" not in g and not _GLOB_SPECIAL.intersection(g):
                    names.add(g)
                    continue
                body = glob_to_regex(g)
                if body is None:
                    continue
                (path_bodies if "/" in g else base_bodies).append(body)
        self._path_re = _alternation(path_bodies)
        self._base_re = _alternation(base_bodies)
        self._base_names = frozenset(names) or None

    def __bool__(self) -> bool:
        return self._path_re is not None or self._base_re is not None or bool(self._base_names)

    def match(self, rel: str) -> bool:
        """True when one glob matches ``rel`` itself (not its folders)."""
        if self._path_re is not None and self._path_re.fullmatch(rel):
            return True
        if self._base_re is None and self._base_names is None:
            return False
        base = rel[rel.rfind("/") + 1 :]
        if self._base_names is not None and base in self._base_names:
            return True
        return self._base_re is not None and self._base_re.fullmatch(base) is not None

    def match_any_level(self, rel: str) -> bool:
        """True when one glob matches ``rel`` or any folder above it."""
        return any(self.match(p) for p in ancestors(rel))
