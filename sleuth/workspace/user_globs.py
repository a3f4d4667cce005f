"""User globs: the one translator of the globs a user writes, with ripgrep's ``--glob`` meaning.

``parse_glob`` / ``glob_to_regex`` translate the ``include`` and ``exclude`` options and ``deny``
lists (``paths.PathGlobs``) and ``files:`` queries (``text_search/path_query.py``, which adds fuzzy
terms and query offsets on top). Its meaning is ripgrep's ``--glob``: a port of ``globset``'s
parser (``literal_separator``, ``backslash_escape``) behind the rules the ``ignore`` crate applies
to a ``-g`` glob. ``*`` and ``?`` never cross ``/``, but a ``[...]`` class may (``src[/]a.py``
matches ``src/a.py``, as in rg); ``**/`` is zero or more folders, ``/**`` everything inside,
``**`` elsewhere is ``*``; ``[!a-z]`` and ``[^a-z]`` negate, ``]`` first and ``-`` first or last
are literal, and ``\\`` is literal inside a class; ``{a,b}`` alternates, nested too (ripgrep
14.1.1+; 14.1.0 refuses nesting), and an empty alternative is dropped (``{,a}`` is ``a``);
``\\x`` escapes elsewhere. A glob without ``/`` matches the base name at any depth; one with
``/`` anywhere (inside ``{}`` or ``[]`` too) or a leading ``/`` matches the whole path from the
root. Trailing blanks are dropped unless the last one is escaped. What rg refuses (an unclosed
``[`` or ``{``, a ``}`` that closes nothing (ripgrep 14.1.1+), a class range running high to low,
a trailing lone backslash) raises ``GlobSyntaxError``. Where rg's answer for a file listing is
always empty, sleuth gives the spelling a use: a trailing ``/`` (rg: folders only) means
everything below that folder, and a leading ``./`` anchors like ``/``; a glob starting with ``#``
is a glob (rg drops it as a gitignore comment), and ``?`` or a class matches one character (rg:
one byte of its UTF-8). ``tests/workspace/test_glob_parity.py`` checks all of this against
``rg --files --glob``.

``compile_bodies`` compiles translated globs: with Python's ``re``, or with RE2 (linear time, as
rg's matcher) once a glob has enough stars for ``re`` to backtrack badly.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from sleuth.errors import InvalidQuery

__all__ = [
    "GlobSyntaxError",
    "GlobPattern",
    "parse_glob",
    "glob_to_regex",
    "glob_matcher",
    "compile_bodies",
    "LINEAR_FROM",
    "unbounded_repeats",
    "NEVER",
]

NEVER = r"\b\B"
"""A regex body that matches nothing (an empty glob; ``wildmatch`` uses it for globs git would
never match). Not ``(?!)``: RE2 has no lookahead, and a glob or ignore line with enough
repeats runs on RE2 (``*[/]*x*`` in a ``.gitignore`` made every listing an internal error)."""


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
MAX_BRACE_DEPTH = 32
"""Nested ``{`` groups a glob may open: the translation recurses once per level (hundreds
overflowed Python's stack), and no real glob nests deeper than a few."""
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
                if len(self.groups) >= MAX_BRACE_DEPTH:
                    raise GlobSyntaxError(
                        f"braces nested deeper than {MAX_BRACE_DEPTH}",
                        at,
                        "flatten the alternatives ({a,b,c} instead of {a,{b,{c}}})",
                    )
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


LINEAR_FROM = 3
"""Unbounded repeats (``*``, ``**``) from which a compiled glob runs on RE2 (linear time): with
Python's backtracking ``re`` the cost of a failing match grows as ``len(path) ** repeats``
(``*a*a*a*a*b`` against a 40-character name took ~0.1 s per path, ``*a`` x 8 minutes;
``a/**/a/**/a/**/b``, a deny glob a tree's own configuration can bring, 4.6 s against one path
1,000 folders deep), which rg's automata never do. Below it ``re`` is faster (RE2's Python
wrapper costs ~6 us a call) and at worst quadratic."""


_ANY_DEPTH = "(?:/?|.*/)"  # what an unanchored glob starts with: tried only at each "/"


def unbounded_repeats(body: str) -> int:
    r"""The unbounded repeats of a translated glob (this module's or ``wildmatch``'s): each is
    ``[^/]*`` or ``.*`` (a literal ``*``, ``.`` or ``]`` is escaped, so ``\*``, ``\.`` and
    ``\]`` never count). What decides whether it runs on RE2."""
    return body.count("]*") + body.count(".*")


def _repeats(body: str) -> int:
    # the leading any-depth group multiplies the rest's cost by the path's depth only
    return unbounded_repeats(body.removeprefix(_ANY_DEPTH))


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
