"""Path queries for the ``files:`` mode (docs/query.md#files-paths).

A path query is either a *glob* or a *fuzzy* query:

- A single token containing a glob character (``* ? [ ] { }``) is a glob, with exactly the
  meaning an ``include`` glob has: ripgrep's ``--glob``, translated by the workspace's one
  translator (``sleuth.workspace.user_globs.parse_glob``, which says the rules). In short: a glob
  with ``/`` matches the whole workspace-relative path from the root (a leading ``/`` or ``./``
  is dropped), one without matches the basename at any depth; ``*`` and ``?`` never cross ``/``
  but do match a leading dot (hidden files are searched, docs/faces.md#which-files-are-searched);
  ``**``, ``{a,b}`` (nestable), ``[a-z]`` / ``[!a-z]``, ``\\`` escapes; a trailing ``/`` means
  everything below that folder. What this module adds is the query around it: case-insensitivity
  (``-i``), and errors that give their position in the query. The glob is one regular expression,
  matched once per path (on RE2 when it has enough stars for ``re`` to backtrack badly,
  ``user_globs.LINEAR_FROM``).
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
from sleuth.workspace.user_globs import GlobSyntaxError, glob_matcher

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


def _glob_match(glob: str, offset: int, ignore_case: bool) -> Callable[[str], object]:
    """``glob`` (a token at ``offset`` in the query) through the workspace's one translator.

    ``invalid_query`` with the position in the query for what rg would refuse.
    """
    try:
        return glob_matcher(glob, ignore_case=ignore_case)
    except GlobSyntaxError as exc:
        pos = offset + exc.position
        raise InvalidQuery(
            f"{exc.problem} at position {pos} of the files: query; {exc.hint}",
            details={"position": pos},
        ) from None


@lru_cache(maxsize=64)
def _compiled(pq: PathQuery) -> Callable[[str], object]:
    """Glob: its compiled ``fullmatch``. Fuzzy: validates the glob tokens among the terms."""
    if pq.kind == "fuzzy":
        _fuzzy(pq)
        return bool
    return _glob_match(pq.text, 0, not pq.case_sensitive)


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
            filters.append(_glob_match(token, offset, not pq.case_sensitive))
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
