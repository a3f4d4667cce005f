"""Workspace-relative paths and the two glob languages workspace rules are written in.

* ``normalize_rel`` turns user input (``"./src//a.py"``, ``"/"``, ``"src/../a.py"``) into the
  canonical relative POSIX form of docs/faces.md#paths, or raises ``InvalidPath`` for input that
  leaves the root lexically (absolute paths, ``..`` past the root, NUL bytes).
* ``parse_glob`` / ``glob_to_regex`` is the one translator of *user* globs: the ``include`` and
  ``exclude`` options and ``deny`` lists (``PathGlobs``) and ``files:`` queries
  (``text_search/path_query.py``, which adds fuzzy terms and query offsets on top). Its meaning
  is ripgrep's ``--glob``: a port of ``globset``'s parser (``literal_separator``,
  ``backslash_escape``) behind the rules the ``ignore`` crate applies to a ``-g`` glob.
  ``*`` and ``?`` never cross ``/``, but a ``[...]`` class may (``src[/]a.py`` matches
  ``src/a.py``, as in rg); ``**/`` is zero or more folders, ``/**`` everything inside, ``**``
  elsewhere is ``*``; ``[!a-z]`` and ``[^a-z]`` negate, ``]`` first and ``-`` first or last are
  literal, and ``\\`` is literal inside a class; ``{a,b}`` alternates, nested too (ripgrep
  14.1.1+; 14.1.0 refuses nesting), and an empty alternative is dropped (``{,a}`` is ``a``);
  ``\\x`` escapes elsewhere. A glob without ``/`` matches the base name at any depth; one with
  ``/`` anywhere (inside ``{}`` or ``[]`` too) or a leading ``/`` matches the whole path from
  the root. Trailing blanks are dropped unless the last one is escaped. What rg refuses (an
  unclosed ``[`` or ``{``, a ``}`` that closes nothing (ripgrep 14.1.1+), a class range running
  high to low, a trailing lone backslash) raises ``GlobSyntaxError``. Where rg's answer for a
  file listing is always empty, sleuth gives the spelling a use: a trailing ``/`` (rg: folders
  only) means everything below that folder, and a leading ``./`` anchors like ``/``; a glob
  starting with ``#`` is a glob (rg drops it as a gitignore comment), and ``?`` or a class
  matches one character (rg: one byte of its UTF-8).
  ``tests/workspace/test_glob_parity.py`` checks all of this against ``rg --files --glob``.
  ``compile_bodies`` compiles translated globs: with Python's ``re``, or with RE2 (linear time,
  as rg's matcher) once a glob has enough stars for ``re`` to backtrack badly.
* ``wildmatch_to_regex`` translates one ``.gitignore`` line with git's *wildmatch* rules
  (``WM_PATHNAME``): no ``{}``; classes never match ``/``, take ``\\`` escapes and POSIX names
  (``[[:alpha:]]``); a line git would never match (an unclosed ``[``, a trailing lone
  backslash, an unknown POSIX class) translates to ``None``. ``ignore.py`` compiles ignore
  files with it, so they keep git's meaning.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from sleuth.errors import InvalidPath, InvalidQuery

__all__ = [
    "normalize_rel",
    "ancestors",
    "GlobSyntaxError",
    "GlobPattern",
    "parse_glob",
    "glob_to_regex",
    "glob_matcher",
    "compile_bodies",
    "LINEAR_FROM",
    "wildmatch_to_regex",
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


_SEGMENT = r"(?!\.\.?(?:/|\Z))[^/\x00]+"
_CANONICAL = re.compile(rf"{_SEGMENT}(?:/{_SEGMENT})*")
"""A path ``normalize_rel`` gives back unchanged: segments that are neither empty, ``.``,
``..`` nor hold a NUL, and no leading or trailing slash."""


def normalize_rel(path: str) -> str:
    """The canonical workspace-relative form of ``path`` ("" is the root).

    Purely lexical: no file system access. Raises ``InvalidPath`` for NUL bytes, absolute paths
    (except the bare ``"/"``, which docs/faces.md#paths uses for the root) and ``..`` that leaves
    the root.
    """
    if _CANONICAL.fullmatch(path):  # a listed path: every read of a scan passes one
        return path
    return _normalized(path)


def _normalized(path: str) -> str:
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


# --- user globs: ripgrep's --glob ------------------------------------------------------------


class GlobSyntaxError(ValueError):
    """A glob ripgrep refuses: what is wrong, where (an index into the glob as given), the fix.

    Not a ``SleuthError``: only the caller knows where the glob came from (an ``include``
    option, a token of a ``files:`` query) and raises ``InvalidQuery`` saying so.
    """

    def __init__(self, problem: str, position: int, hint: str) -> None:
        super().__init__(f"{problem} at position {position}; {hint}")
        self.problem = problem
        self.position = position
        self.hint = hint

    def invalid_query(self, glob: str, where: str = "") -> InvalidQuery:
        """The ``invalid_query`` of a user's ``glob`` (``where``: what it came from, said after
        the glob)."""
        return InvalidQuery(
            f"invalid glob {glob!r}{where}: {self.problem} at position {self.position}; "
            f"{self.hint}",
            details={"glob": glob, "position": self.position},
        )

    def shifted(self, by: int) -> GlobSyntaxError:
        """The same error for a glob that starts ``by`` characters later in its source."""
        return GlobSyntaxError(self.problem, self.position + by, self.hint)


# globset's tokens, already in regex form; the three recursive ones are compared by value (no
# literal or class token can equal them: those are one (escaped) character or start with "[")
_ANY = "[^/]"
_STAR = "[^/]*"
_RPREFIX = "(?:/?|.*/)"  # `**/` at the start of a glob or of an alternative
_RSUFFIX = "/.*"  # `/**` at the end
_RZERO = "(?:/|/.*/)"  # `/**/`


@dataclass
class _Alt:
    """A ``{...}`` group: one token list per alternative."""

    branches: list[list[_Token]]


_Token: TypeAlias = "str | _Alt"


class _RgParser:
    """globset's ``Parser`` (0.4.16+, nested alternates) with the options ``-g`` uses."""

    def __init__(self, glob: str) -> None:
        self.glob = glob
        self.i = 0  # index of the next character
        self.prev: str | None = None
        self.cur: str | None = None
        self.branches: list[list[_Token]] = [[]]
        self.groups: list[tuple[int, int]] = []  # open `{`: (its first branch, its position)

    def _bump(self) -> str | None:
        self.prev = self.cur
        if self.i < len(self.glob):
            self.cur = self.glob[self.i]
            self.i += 1
        else:
            self.cur = None
        return self.cur

    def _peek(self) -> str | None:
        return self.glob[self.i] if self.i < len(self.glob) else None

    def _push(self, token: _Token) -> None:
        branch = self.branches[-1]
        if token == _STAR and branch and branch[-1] == _STAR:
            return  # `**` that globset reads as two `*`: one is the same language, less backtracking
        branch.append(token)

    def parse(self) -> list[_Token]:
        while (c := self._bump()) is not None:
            at = self.i - 1
            if c == "?":
                self._push(_ANY)
            elif c == "*":
                self._star()
            elif c == "[":
                self._class(at)
            elif c == "{":
                self.groups.append((len(self.branches), at))
                self.branches.append([])
            elif c == "}":
                if not self.groups:
                    raise GlobSyntaxError(
                        "unopened `}`", at, "escape it as `\\}` or open the group with `{`"
                    )
                first, _ = self.groups.pop()
                alt = _Alt(self.branches[first:])
                del self.branches[first:]
                self._push(alt)
            elif c == "," and self.groups:
                self.branches.append([])
            elif c == "\\":
                escaped = self._bump()
                if escaped is None:
                    raise GlobSyntaxError(
                        "a trailing `\\` escapes nothing", at, "remove it, or write `\\\\`"
                    )
                self._push(re.escape(escaped))
            else:
                self._push(re.escape(c))
        if self.groups:
            raise GlobSyntaxError(
                "unclosed `{`", self.groups[0][1], "close it with `}` or escape it as `\\{`"
            )
        return self.branches[0]

    def _star(self) -> None:
        """globset's ``parse_star``: where ``**`` is recursive and where it is just ``*``."""
        prev = self.prev
        if self._peek() != "*":
            self._push(_STAR)
            return
        self._bump()
        branch = self.branches[-1]
        if not branch:  # at the start of the glob or of an alternative
            if self._peek() not in (None, "/"):
                self._push(_STAR)
            else:
                self._push(_RPREFIX)
                self._bump()
            return
        if prev != "/" and (len(self.branches) <= 1 or prev not in (",", "{")):
            self._push(_STAR)
            return
        following = self._peek()
        if following is None or (following in ",}" and len(self.branches) >= 2):
            suffix = True
        elif following == "/":
            self._bump()
            suffix = False
        else:
            self._push(_STAR)
            return
        last = branch.pop()  # the "/" before the `**`, or a recursive token that holds it
        if last in (_RPREFIX, _RSUFFIX):
            self._push(last)
        else:
            self._push(_RSUFFIX if suffix else _RZERO)

    def _class(self, at: int) -> None:
        """globset's ``parse_class``: no escapes inside, ``/`` allowed, ranges checked."""
        negated = self._peek() in ("!", "^")
        if negated:
            self._bump()
        ranges: list[list[str]] = []
        first, in_range = True, False
        while True:
            c = self._bump()
            if c is None:
                raise GlobSyntaxError("unclosed `[`", at, "close it with `]` or escape it as `\\[`")
            if c == "]" and not first:
                break
            if c == "-" and not first and not in_range:
                in_range = True
            elif in_range:
                lo = ranges[-1][0]
                if c < lo:
                    raise GlobSyntaxError(
                        f"invalid class range `[{lo}-{c}]`",
                        at,
                        "a range runs from low to high, e.g. `[a-z]`",
                    )
                ranges[-1][1] = c
                in_range = False
            else:
                ranges.append([c, c])
            first = False
        if in_range:
            ranges.append(["-", "-"])
        esc = re.escape
        items = (esc(lo) if lo == hi else f"{esc(lo)}-{esc(hi)}" for lo, hi in ranges)
        self._push("[" + ("^" if negated else "") + "".join(items) + "]")


def _regex(tokens: list[_Token]) -> str:
    out: list[str] = []
    for token in tokens:
        if isinstance(token, str):
            out.append(token)
            continue
        parts = [body for body in map(_regex, token.branches) if body]  # `{,a}` is `a`
        if parts:
            out.append("(?:" + "|".join(parts) + ")")
    return "".join(out)


@dataclass(frozen=True, slots=True)
class GlobPattern:
    """One user glob, translated (``parse_glob``)."""

    regex: str
    """Regex body to ``fullmatch`` against a workspace-relative path."""
    name_regex: str | None = None
    """Set when only the base name decides (no ``/``, no class): ``fullmatch`` it against that."""
    name: str | None = None
    """Set when the glob is one exact base name (no wildcard): compare it with that."""


_NAME_SPECIAL = frozenset("*?[{\\")  # a glob without these (and without "/") is one base name


def parse_glob(glob: str) -> GlobPattern | None:
    """``glob`` with ripgrep's ``-g`` rules; None for a glob that is empty once trimmed.

    Raises ``GlobSyntaxError`` (positions index ``glob`` as given) where rg refuses the glob.
    """
    text = glob if glob.endswith("\\ ") else glob.rstrip()  # rg keeps an escaped last blank
    start, anchored = 0, False
    while text.startswith(("/", "./"), start):  # rg: one "/" anchors; sleuth: "./" too
        start += 1 if text[start] == "/" else 2
        anchored = True
    body = text[start:]
    contents = body.endswith("/")  # rg: folders only; sleuth: everything below the folder
    if contents:
        body = body[:-1]
        if body.endswith("\\"):  # `x\/`: rg drops the escape with the slash
            body = body[:-1]
    if not body:
        return None
    anchored = anchored or "/" in body
    source = body + "/*" if body.endswith("/**") else body  # rg: `a/**` is what is inside `a`
    try:
        tokens = _RgParser(source).parse()
    except GlobSyntaxError as exc:
        raise exc.shifted(start) from None
    name_regex = name = None
    if not anchored and body != "**":
        if not contents and "[" not in body:
            name_regex = _regex(tokens)
            if not _NAME_SPECIAL.intersection(body):
                name = body
        tokens = [_RPREFIX, *tokens]  # rg prefixes `**/`
    regex = ".*" if tokens == [_RPREFIX] else _regex(tokens)
    if contents:
        regex += "/.*"
    return GlobPattern(regex, name_regex, name)


def glob_to_regex(glob: str) -> str:
    """Regex body (for ``fullmatch`` on a relative path) of ``glob`` under rg's ``-g`` rules.

    Raises ``GlobSyntaxError`` where rg refuses the glob; an empty glob matches nothing.
    """
    pattern = parse_glob(glob)
    return NEVER if pattern is None else pattern.regex


LINEAR_FROM = 4
"""Unbounded repeats (``*``, ``**``) from which a compiled glob runs on RE2 (linear time): with
Python's backtracking ``re`` the cost of a failing match grows as ``len(path) ** repeats``
(``*a*a*a*a*b`` against a 40-character name took ~0.1 s per path, ``*a`` x 8 minutes), which
rg's automata never do. Below it ``re`` is faster (RE2's Python wrapper costs ~6 us a call)."""


def _repeats(body: str) -> int:
    # every unbounded repeat the translator emits is ``[^/]*`` or ``.*`` (literal ``*``, ``.``
    # and ``]`` are escaped, so ``\*``, ``\.`` and ``\]`` never count)
    return body.count("]*") + body.count(".*")


def compile_bodies(bodies: Sequence[str], *, ignore_case: bool = False) -> Callable[[str], object]:
    """``fullmatch`` of the alternation of regex ``bodies`` (from ``glob_to_regex``).

    Python's ``re`` unless one body has ``LINEAR_FROM`` or more unbounded repeats; then RE2.
    """
    pattern = bodies[0] if len(bodies) == 1 else "|".join(f"(?:{b})" for b in bodies)
    if max(map(_repeats, bodies)) >= LINEAR_FROM:
        import re2  # deferred: few globs need it, and a cold CLI should not pay its import

        try:
            linear = re2.compile(("(?si)" if ignore_case else "(?s)") + pattern)
        except re2.error:
            pass  # RE2 refuses what ``re`` takes (none known): a glob never fails on the engine
        else:
            return linear.fullmatch  # type: ignore[no-any-return]
    return re.compile(pattern, re.DOTALL | (re.IGNORECASE if ignore_case else 0)).fullmatch


def glob_matcher(glob: str, *, ignore_case: bool = False) -> Callable[[str], object]:
    """``fullmatch`` of ``glob`` (``glob_to_regex``) on a workspace-relative path."""
    return compile_bodies([glob_to_regex(glob)], ignore_case=ignore_case)


# --- ignore files: git's wildmatch -----------------------------------------------------------


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


def _alternation(bodies: list[str]) -> Callable[[str], object] | None:
    return compile_bodies(bodies) if bodies else None


def _folder_variant(glob: str, whole_folder: bool) -> str | None:
    """The folder itself of ``X/`` (whose files the walker then takes or drops as one), and
    with ``whole_folder`` (a deny list) of ``X/**``: a folder named ``X`` at any depth, as the
    deny list always cloaked it — a deny rule errs on the side of hiding (docs/SAFETY.md)."""
    text = glob if glob.endswith("\\ ") else glob.rstrip()
    if text.endswith("/") and text.strip("/."):
        return text.rstrip("/")
    if whole_folder and text.endswith("/**") and len(text) > 3:
        return text[:-3]
    return None


class PathGlobs:
    """A set of user globs (``include``, ``exclude``, ``deny``) compiled into two regexes.

    Each glob has rg's ``-g`` meaning (``parse_glob``); one that rg refuses is ``InvalidQuery``
    naming it, so a mistyped glob never silently matches nothing (nor a deny list cloak less).
    A glob ending in ``/`` also matches the folder itself (so the walker prunes or takes it
    whole), and with ``whole_folder=True`` so does one ending in ``/**``: ``secrets/**`` cloaks
    ``secrets`` as well as what is inside it.
    """

    __slots__ = ("globs", "_path_re", "_base_re", "_base_names")

    def __init__(self, globs: Sequence[str], *, whole_folder: bool = False) -> None:
        self.globs = tuple(globs)
        path_bodies: list[str] = []
        base_bodies: list[str] = []
        names: set[str] = set()  # globs that are one exact base name: a set lookup
        for raw in self.globs:
            variants = [raw]
            folder = _folder_variant(raw, whole_folder)
            if folder is not None:
                variants.append(folder)
            for glob in variants:
                try:
                    pattern = parse_glob(glob)
                except GlobSyntaxError as exc:
                    raise exc.invalid_query(raw) from None
                if pattern is None:
                    continue
                if pattern.name is not None:
                    names.add(pattern.name)
                elif pattern.name_regex is not None:
                    base_bodies.append(pattern.name_regex)
                else:
                    path_bodies.append(pattern.regex)
        self._path_re = _alternation(path_bodies)
        self._base_re = _alternation(base_bodies)
        self._base_names = frozenset(names) or None

    def __bool__(self) -> bool:
        return self._path_re is not None or self._base_re is not None or bool(self._base_names)

    def match(self, rel: str) -> bool:
        """True when one glob matches ``rel`` itself (not its folders)."""
        if self._path_re is not None and self._path_re(rel):
            return True
        if self._base_re is None and self._base_names is None:
            return False
        base = rel[rel.rfind("/") + 1 :]
        if self._base_names is not None and base in self._base_names:
            return True
        return self._base_re is not None and self._base_re(base) is not None

    def literal_names(self) -> frozenset[str] | None:
        """The base names these globs match when every glob is one exact name (``vendor``,
        ``__init__.py``), else None: such globs match a path only by its last part."""
        if self._path_re is not None or self._base_re is not None:
            return None
        return self._base_names or frozenset()

    def match_any_level(self, rel: str) -> bool:
        """True when one glob matches ``rel`` or any folder above it."""
        return any(self.match(p) for p in ancestors(rel))
