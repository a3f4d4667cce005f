"""The compiled lines of one ignore file: which line matches a path last, by cheap lookups first.

A walk asks every ignore file in force about every entry, so this is the hot loop of a cold
listing (``benchmarks/walk.py``). Most lines of real ignore files have a literal shape, and
each shape gets a table instead of a regex (the strategies of ripgrep's ``globset``):

* a literal base name (``modules.order``, ``node_modules``): a dict keyed by the entry's name;
* ``*.ext`` with a literal extension (``*.o``): a dict keyed by the name's last extension;
* a literal prefix or suffix (``cscope.*``, ``.*``, ``*.mod.c``, ``*~``): short lists keyed by
  the name's first or last character;
* a literal path with a slash (``/vmlinux``, ``doc/frotz``): a dict keyed by the relative path,
  asked only in the folders such paths lie in.

Every other line goes into a regex alternation: lines without a slash are matched against the
base name only (git matches them there; their regex cannot match a ``/``), lines with one
against the path from the ignore file's folder, grouped by how many ``/`` the paths they can
match hold (lines with ``**`` everywhere). The alternations list lines in reverse order so
that the first alternative to match is the last matching line (``m.lastindex``).

Git's rule "the last matching line decides" becomes: the highest line number any table or
regex reports decides, ignored unless that line is a ``!`` re-include.

A line with ``WILD_FROM`` or more unbounded repeats (``*a*b``) runs on RE2 instead, alone and
only when the entry holds the line's longest literal: an ignore file arrives with the tree,
and under Python's backtracking ``re`` such a line costs ``len(name) ** repeats`` on a name
that almost matches (``*a*a*a*a*a*a*a*a*b`` and one file named ``a`` x 200 hung a listing for
minutes, where git and rg answer at once).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from typing import Any, NamedTuple

from sleuth.workspace.user_globs import unbounded_repeats
from sleuth.workspace.wildmatch import any_depth, class_end

__all__ = ["IgnoreLine", "LineMatcher", "View", "is_empty", "last_line"]

_SPECIAL = frozenset("*?[\\")


class IgnoreLine(NamedTuple):
    """One effective line of an ignore file, as ``ignore.parse_lines`` reads it."""

    glob: str
    """The pattern without ``!``, the leading ``/`` and the trailing ``/``."""
    body: str
    """Its regex (``wildmatch.wildmatch_to_regex``), without the any-depth prefix."""
    negated: bool
    dir_only: bool
    anchored: bool
    """The line holds a ``/`` (other than a trailing one): it matches the path, not a name."""


def _literal(glob: str) -> bool:
    return not (_SPECIAL & set(glob))


WILD_FROM = 2
"""Unbounded repeats (``[^/]*``, ``.*``) from which a line runs on RE2 (linear time)."""

Wild = tuple[tuple[str, Callable[[str], bool], int], ...]
"""Lines run on RE2: (a literal every match holds, its full match, line number)."""

Alternation = tuple[re.Pattern[str] | None, tuple[int, ...], Wild | None]


def _longest_literal(glob: str) -> str:
    """The longest run of literal characters in ``glob`` (escapes read), "" for none: a
    substring of everything the line matches."""
    best, run, i = "", "", 0
    while i < len(glob):
        c = glob[i]
        if c == "\\" and i + 1 < len(glob):
            run += glob[i + 1]
            i += 2
        elif c == "*":
            best, run = max(best, run, key=len), ""
            j = i
            while j < len(glob) and glob[j] == "*":
                j += 1
            # an any-depth ``**/`` is zero or more folders: its ``/`` is part of that
            # optional group, not a literal (``**/a*`` matches ``ab``, ``b**/c*d`` ``bcd``)
            if any_depth(glob, i, j) and glob[j : j + 1] == "/":
                j += 1
            i = j
        elif c in "?[":
            best, run = max(best, run, key=len), ""
            # a class ends where the translator says (``[[:digit:]]``, ``[]a]``)
            i = class_end(glob, i) if c == "[" else i + 1
        else:
            run += c
            i += 1
    return max(best, run, key=len)


def _linear(body: str) -> Callable[[str], bool]:
    """RE2's full match of ``body``; on text UTF-8 cannot carry (lone surrogates from bytes
    that were no UTF-8), the same on the bytes, one byte a character as git reads them."""
    import re2  # deferred: few ignore files need it, and a cold CLI should not pay its import

    options = re2.Options()
    options.encoding = re2.Options.Encoding.LATIN1
    raw = re2.compile(b"(?s)" + body.encode("utf-8", "surrogateescape"), options)
    text: Any = None
    with contextlib.suppress(re2.error, UnicodeError):
        text = re2.compile("(?s)" + body)

    def fullmatch(subject: str) -> bool:
        if text is not None:
            try:
                return text.fullmatch(subject) is not None
            except UnicodeError:
                pass
        return raw.fullmatch(subject.encode("utf-8", "surrogateescape")) is not None

    return fullmatch


def _alternation(lines: list[tuple[int, str, str]]) -> Alternation:
    """One regex over ``(line number, glob, body)`` lines and the line number of each group,
    and the lines run on RE2."""
    # the last line first: the first alternative (or RE2 line) to match is the last matching
    ordered: list[tuple[int, str]] = []
    wild: list[tuple[str, Callable[[str], bool], int]] = []
    for no, glob, body in sorted(lines, reverse=True):
        if unbounded_repeats(body) >= WILD_FROM:
            wild.append((_longest_literal(glob), _linear(body), no))
        else:
            ordered.append((no, body))
    linear = tuple(wild) or None
    if not ordered:
        return None, (), linear
    pattern = "|".join(f"({body})" for _, body in ordered)
    return re.compile(pattern, re.DOTALL), (0,) + tuple(n for n, _ in ordered), linear


Affixes = dict[str, tuple[tuple[str, int], ...]]
"""Literal prefixes (or suffixes) of base names, by their first (or last) character, each with
its line number."""

View = tuple[
    dict[str, int] | None,
    dict[str, int] | None,
    Affixes | None,
    Affixes | None,
    dict[str, int] | None,
    re.Pattern[str] | None,
    tuple[int, ...],
    re.Pattern[str] | None,
    tuple[int, ...],
    Wild | None,
    Wild | None,
]
"""What a ``LineMatcher`` asks for the entries of one folder: (names, extensions, prefixes,
suffixes, literal paths, base-name regex and its line numbers, path regex and its line
numbers, base-name and path lines on RE2); None = nothing there can match in that folder."""


def is_empty(view: View) -> bool:
    """Nothing in ``view`` can match."""
    return all(view[i] is None for i in (0, 1, 2, 3, 4, 5, 7, 9, 10))


def _path_depth(glob: str) -> int | None:
    """How many ``/`` a path this anchored glob matches holds; None when it varies (``**``)
    or is not plain to count (a class or an escape)."""
    if "**" in glob or "[" in glob or "\\" in glob:
        return None
    return glob.count("/")


class LineMatcher:
    """The lines of one ignore file that apply to one kind of entry (files, or folders)."""

    __slots__ = (
        "_names",
        "_exts",
        "_prefixes",
        "_suffixes",
        "_paths",
        "_path_dirs",
        "_base_re",
        "_base_no",
        "_base_wild",
        "_by_depth",
        "_deep",
        "_compiled",
    )

    def __init__(self, lines: list[tuple[int, IgnoreLine]]) -> None:
        """``lines`` are (line number from 1, line); later numbers win."""
        self._names: dict[str, int] = {}
        self._exts: dict[str, int] = {}
        self._paths: dict[str, int] = {}
        base: list[tuple[int, str, str]] = []
        prefixes: dict[str, list[tuple[str, int]]] = {}  # by the first character
        suffixes: dict[str, list[tuple[str, int]]] = {}  # by the last character
        self._by_depth: dict[int, list[tuple[int, str, str]]] = {}
        self._deep: list[tuple[int, str, str]] = []
        for no, line in lines:
            glob = line.glob
            if line.anchored:
                depth = _path_depth(glob)
                if _literal(glob):
                    self._paths[glob] = no
                elif depth is None:
                    self._deep.append((no, glob, line.body))
                else:
                    self._by_depth.setdefault(depth, []).append((no, glob, line.body))
            elif _literal(glob):
                self._names[glob] = no
            elif glob.startswith("*.") and _literal(glob[2:]) and "." not in glob[2:]:
                self._exts[glob[2:]] = no
            elif len(glob) > 1 and glob[0] == "*" and _literal(glob[1:]):
                suffixes.setdefault(glob[-1], []).append((glob[1:], no))
            elif len(glob) > 1 and glob[-1] == "*" and _literal(glob[:-1]):
                prefixes.setdefault(glob[0], []).append((glob[:-1], no))
            else:
                base.append((no, glob, line.body))
        # the folders (as "a/b/", "" at the top) that hold a literal path: elsewhere none can
        self._path_dirs = frozenset(
            p.rpartition("/")[0] + "/" if "/" in p else "" for p in self._paths
        )
        self._prefixes = {c: tuple(v) for c, v in prefixes.items()}
        self._suffixes = {c: tuple(v) for c, v in suffixes.items()}
        self._base_re, self._base_no, self._base_wild = _alternation(base)
        # path regexes by the depth of the folder asking, each compiled on first use
        self._compiled: dict[int, Alternation] = {}

    def __bool__(self) -> bool:
        return bool(
            self._names
            or self._exts
            or self._prefixes
            or self._suffixes
            or self._paths
            or self._base_re
            or self._base_wild
            or self._by_depth
            or self._deep
        )

    def view(self, prefix: str) -> View:
        """The tables and regexes that can match an entry of the folder ``prefix`` (its path
        from this file's folder, ``"a/b/"`` or "")."""
        depth = prefix.count("/")
        hit = self._compiled.get(depth)
        if hit is None:
            hit = _alternation(self._by_depth.get(depth, []) + self._deep)
            self._compiled[depth] = hit
        return (
            self._names or None,
            self._exts or None,
            self._prefixes or None,
            self._suffixes or None,
            self._paths if prefix in self._path_dirs else None,
            self._base_re,
            self._base_no,
            hit[0],
            hit[1],
            self._base_wild,
            hit[2],
        )

    def last_line(self, path: str, name: str) -> int:
        """The number of the last line matching ``path`` (base name ``name``), 0 for none."""
        return last_line(self.view(path[: len(path) - len(name)]), path, name)


def last_line(view: View, path: str, name: str) -> int:
    """The number of the last line of ``view`` matching ``path`` (base name ``name``; its
    folder is the one ``view`` was made for), 0 for none."""
    names, exts, prefixes, suffixes, paths, base_re, base_no, path_re, path_no, bw, pw = view
    best = names.get(name, 0) if names is not None else 0
    if exts is not None:
        dot = name.rfind(".")
        if dot >= 0:
            no = exts.get(name[dot + 1 :], 0)
            if no > best:
                best = no
    if prefixes is not None:
        for lit, no in prefixes.get(name[0], ()):
            if no > best and name.startswith(lit):
                best = no
    if suffixes is not None:
        for lit, no in suffixes.get(name[-1], ()):
            if no > best and name.endswith(lit):
                best = no
    if paths is not None:
        no = paths.get(path, 0)
        if no > best:
            best = no
    if base_re is not None:
        m = base_re.fullmatch(name)
        if m is not None:
            no = base_no[m.lastindex or 0]
            if no > best:
                best = no
    if path_re is not None:
        m = path_re.fullmatch(path)
        if m is not None:
            no = path_no[m.lastindex or 0]
            if no > best:
                best = no
    for wild, subject in ((bw, name), (pw, path)):
        if wild is not None:
            for lit, fullmatch, no in wild:  # the last line first
                if no > best and lit in subject and fullmatch(subject):
                    best = no
                    break
    return best
