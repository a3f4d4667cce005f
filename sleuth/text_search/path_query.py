"""Path queries for the ``files:`` mode (SPEC §3 routing table, §3.3 ordering, §10 ``find``).

A path query is either a *glob* or a *fuzzy* query:

- A single token containing a glob character (``* ? [ ] { }``) is a glob. A glob with ``/``
  matches the whole workspace-relative POSIX path (a leading ``/`` or ``./`` is dropped: globs
  are anchored at the root); a glob without ``/`` matches the basename at any depth. ``**``
  crosses folders, ``{a,b}`` alternates (nestable), ``[a-z]`` / ``[!a-z]`` are classes, ``\\``
  escapes. ``*`` and ``?`` never cross ``/`` but do match a leading dot: hidden files are searched
  (SPEC §1). A glob ending in ``/`` means everything below that folder. The glob is compiled to
  one regular expression, so 100k paths take a few tens of milliseconds.
- Anything else is fuzzy: whitespace-separated tokens, where ``*.rs`` (a glob) and, next to other
  tokens, ``.py`` filter by name, ``src/`` requires a folder segment (or prefix), and every other
  token is a fuzzy term that must occur as a subsequence of the path. Scoring follows fzf and VS
  Code's quick-open: matched characters, bonuses at segment starts, after ``_ - .`` and at camel
  humps, for consecutive runs and for matches inside the basename; gaps cost a little, and a
  shorter path wins a tie. Terms are smart-case: a term with an upper-case letter is matched
  case-sensitively unless the query was compiled with ``case_sensitive=False``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from sleuth.errors import InvalidQuery

__all__ = ["PathQuery", "compile_path_query", "match_paths", "FRECENCY_BONUS"]

GLOB_CHARS = frozenset("*?[]{}")
FRECENCY_BONUS = 10.0
"""Largest frecency bonus: less than one well-placed character (16+), so it only breaks ties."""

_MATCH, _GAP_START, _GAP_EXTEND = 16.0, 3.0, 1.0
_BONUS_SEGMENT, _BONUS_DELIM, _BONUS_CAMEL, _BONUS_CONSECUTIVE = 10.0, 8.0, 7.0, 4.0
_BONUS_BASENAME, _BONUS_COVERAGE, _LENGTH_PENALTY = 12.0, 30.0, 0.05
_EXT_TOKEN = re.compile(r"\.[A-Za-z0-9_+-]{1,12}")


@dataclass(frozen=True)
class PathQuery:
    """A validated ``files:`` query; compile once with ``compile_path_query``."""

    kind: Literal["glob", "fuzzy"]
    text: str
    case_sensitive: bool = True


def compile_path_query(q: str, *, case_sensitive: bool = True) -> PathQuery:
    """Classify and validate a path query; raises ``InvalidQuery`` for an empty or bad glob."""
    text = q.strip()
    if not text:
        raise InvalidQuery(
            "empty files: query; give a glob such as `*.py` or fuzzy text such as `wbsearch`"
        )
    tokens = text.split()
    kind: Literal["glob", "fuzzy"] = (
        "glob" if len(tokens) == 1 and GLOB_CHARS & set(text) else "fuzzy"
    )
    pq = PathQuery(kind, text, case_sensitive)
    try:
        _compiled(pq)  # validate now so errors surface at parse time
    except InvalidQuery as exc:  # positions count from the start of the query as given
        lead = len(q) - len(q.lstrip())
        pos = int(exc.details.get("position", 0)) + lead
        raise InvalidQuery(
            exc.message.replace(f"position {pos - lead} ", f"position {pos} ", 1),
            details={"position": pos},
        ) from None
    return pq


def match_paths(
    pq: PathQuery, paths: Sequence[str], frecency: Mapping[str, float] | None = None
) -> list[tuple[str, float | None]]:
    """Glob: matching paths in input order, score None. Fuzzy: matches by score desc, path."""
    if pq.kind == "glob":
        fullmatch = _compiled(pq)
        return [(p, None) for p in paths if fullmatch(p)]
    fuzzy = _fuzzy(pq)
    scored: list[tuple[str, float | None]] = []
    for path in paths:
        score = fuzzy(path)
        if score is None:
            continue
        if frecency:
            score += FRECENCY_BONUS * min(1.0, max(0.0, frecency.get(path, 0.0)))
        scored.append((path, round(score, 4)))
    scored.sort(key=lambda item: (-(item[1] or 0.0), item[0]))
    return scored


# --- globs -------------------------------------------------------------------------------


def glob_to_regex(glob: str, base: int = 0) -> str:
    """The regular expression (for ``fullmatch``) of ``glob``, which starts at query offset ``base``."""
    if "/" not in glob:
        return "(?:.*/)?" + _translate(glob, 0, len(glob), base=base, slashes=False)
    stripped = glob[2:] if glob.startswith("./") else glob
    stripped = stripped.lstrip("/")
    base += len(glob) - len(stripped)
    if stripped.endswith("/"):
        stripped += "**"
    return _translate(stripped, 0, len(stripped), base=base, slashes=True)


def _translate(g: str, i: int, end: int, *, base: int, slashes: bool) -> str:
    out: list[str] = []
    while i < end:
        c = g[i]
        if c == "*":
            j = i
            while j < end and g[j] == "*":
                j += 1
            if j - i >= 2 and slashes:
                at_start = i == 0 or g[i - 1] == "/"
                if at_start and j < end and g[j] == "/":
                    out.append("(?:.*/)?")  # `**/` : zero or more folders
                    j += 1
                else:
                    out.append(".*")
            else:
                out.append("[^/]*")
            i = j
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            cls, i = _char_class(g, i, end, base)
            out.append(cls)
        elif c == "{":
            close = _matching_brace(g, i, end, base)
            alts = [
                _translate(g, a, b, base=base, slashes=slashes) for a, b in _split_alts(g, i, close)
            ]
            out.append("(?:" + "|".join(alts) + ")")
            i = close + 1
        elif c == "\\" and i + 1 < end:
            out.append(re.escape(g[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _char_class(g: str, i: int, end: int, base: int) -> tuple[str, int]:
    j = i + 1
    negate = j < end and g[j] in "!^"
    if negate:
        j += 1
    body: list[str] = []
    first = True
    while j < end and (g[j] != "]" or first):
        ch = g[j]
        if ch == "\\" and j + 1 < end:
            body.append(re.escape(g[j + 1]))
            j += 2
        elif ch == "-" and body and j + 1 < end and g[j + 1] != "]":
            body.append("-")
            j += 1
        else:
            body.append(re.escape(ch))
            j += 1
        first = False
    if j >= end:
        raise InvalidQuery(
            f"unclosed `[` at position {base + i} of the files: query; "
            "close it with `]` or escape it as `\\[`",
            details={"position": base + i},
        )
    inner = "".join(body)
    return ("[^/" + inner + "]" if negate else "(?!/)[" + inner + "]"), j + 1


def _matching_brace(g: str, i: int, end: int, base: int) -> int:
    depth, j = 0, i
    while j < end:
        ch = g[j]
        if ch == "\\":
            j += 2
            continue
        if ch == "[":
            _, j = _char_class(g, j, end, base)
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return j
        j += 1
    raise InvalidQuery(
        f"unclosed `{{` at position {base + i} of the files: query; "
        "close it with `}` or escape it as `\\{`",
        details={"position": base + i},
    )


def _split_alts(g: str, open_: int, close: int) -> list[tuple[int, int]]:
    parts, depth, start, j = [], 0, open_ + 1, open_ + 1
    while j < close:
        ch = g[j]
        if ch == "\\":
            j += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append((start, j))
            start = j + 1
        j += 1
    parts.append((start, close))
    return parts


@lru_cache(maxsize=64)
def _compiled(pq: PathQuery) -> Callable[[str], object]:
    """Glob: its compiled ``fullmatch``. Fuzzy: validates the glob tokens among the terms."""
    if pq.kind == "fuzzy":
        _fuzzy(pq)
        return bool
    flags = 0 if pq.case_sensitive else re.IGNORECASE
    return _glob_regex(pq.text, glob_to_regex(pq.text), flags).fullmatch


def _glob_regex(glob: str, rx: str, flags: int) -> re.Pattern[str]:
    """``rx`` (translated from ``glob``) compiled; ``invalid_query`` for a bad class range."""
    try:
        return re.compile(rx, flags | re.DOTALL)
    except re.error as exc:
        raise InvalidQuery(
            f"invalid glob {glob!r}: {exc.msg} (a class range runs low to high, e.g. [a-z])",
            details={"glob": glob},
        ) from None


# --- fuzzy -------------------------------------------------------------------------------


@lru_cache(maxsize=64)
def _fuzzy(pq: PathQuery) -> Callable[[str], float | None]:
    """A scorer for ``pq``: path -> score, or None when a term or a constraint does not match."""
    tokens = pq.text.split()
    filters: list[Callable[[str], object]] = []
    terms: list[tuple[str, bool, Callable[[str], object]]] = []
    ci_flag = 0 if pq.case_sensitive else re.IGNORECASE
    offset = pq.text.find(tokens[0]) if tokens else 0
    for token in tokens:
        offset = pq.text.find(token, offset)
        if GLOB_CHARS & set(token):
            rx = glob_to_regex(token, offset)
            filters.append(_glob_regex(token, rx, ci_flag).fullmatch)
        elif token.endswith("/") and token.strip("/"):
            folder = re.escape(token.strip("/"))
            filters.append(re.compile(f"(?:^|.*/){folder}/", ci_flag | re.DOTALL).match)
        elif len(tokens) > 1 and _EXT_TOKEN.fullmatch(token):
            filters.append(re.compile(".*" + re.escape(token), ci_flag | re.DOTALL).fullmatch)
        else:
            sensitive = pq.case_sensitive and token != token.lower()
            needle = token if sensitive else token.lower()
            pattern = "[^\n]*?".join(map(re.escape, needle))
            terms.append((needle, sensitive, re.compile(pattern, re.DOTALL).search))

    def score(path: str) -> float | None:
        for keep in filters:
            if not keep(path):
                return None
        lower = path.lower()
        for _, sensitive, search in terms:
            if not search(path if sensitive else lower):
                return None
        total = -_LENGTH_PENALTY * len(path)
        base = path.rfind("/") + 1
        for needle, sensitive, _ in terms:
            total += _score_term(needle, path if sensitive else lower, path, base)
        return total

    return score


def _score_term(needle: str, hay: str, original: str, base: int) -> float:
    """Score the best cheap alignment of ``needle``: inside the basename if possible, else path."""
    best = _align(needle, hay, base)
    in_basename = best is not None
    if best is None:
        best = _align(needle, hay, 0)
    if best is None:  # unreachable after the prefilter; keep the scorer total
        return 0.0
    total = 0.0
    prev = -2
    chunk_bonus = 0.0
    for k, pos in enumerate(best):
        bonus = _boundary_bonus(original, pos)
        if pos == prev + 1:
            chunk_bonus = max(chunk_bonus, bonus, _BONUS_CONSECUTIVE)
            bonus = chunk_bonus
        else:
            chunk_bonus = bonus
            if k:
                total -= _GAP_START + _GAP_EXTEND * (pos - prev - 2)
        total += _MATCH + (2 * bonus if k == 0 else bonus)
        prev = pos
    basename_len = max(1, len(hay) - base)
    in_base = sum(1 for pos in best if pos >= base)
    total += _BONUS_COVERAGE * in_base / basename_len
    if in_basename:
        total += _BONUS_BASENAME
    return total


def _align(needle: str, hay: str, start: int) -> list[int] | None:
    """fzf v1: leftmost forward scan for the end, then a backward scan for a compact window."""
    pos = start - 1
    for ch in needle:
        pos = hay.find(ch, pos + 1)
        if pos < 0:
            return None
    positions = [0] * len(needle)
    end = pos + 1
    for k in range(len(needle) - 1, -1, -1):
        end = hay.rfind(needle[k], start, end)
        positions[k] = end
    return positions


def _boundary_bonus(path: str, pos: int) -> float:
    if pos == 0:
        return _BONUS_SEGMENT
    before, ch = path[pos - 1], path[pos]
    if before == "/":
        return _BONUS_SEGMENT
    if before in "_-. ":
        return _BONUS_DELIM
    if ch.isupper() and before.islower():
        return _BONUS_CAMEL
    if ch.isdigit() and not before.isdigit():
        return _BONUS_CAMEL
    return 0.0
