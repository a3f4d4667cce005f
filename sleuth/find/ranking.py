"""The order of ``find`` files mode: fuzzy path score boosted by frecency (docs/faces.md#find-files).

The fuzzy score is ``files:``'s (``sleuth.text_search.path_query``: fzf-like bonuses at segment
starts, camel humps and in the base name; a term with an upper-case letter is matched
case-sensitively, i.e. smart case). ``find`` adds ``FRECENCY_WEIGHT * frecency`` (frecency
0..1, ``sleuth.find.frecency`` with git history as a weaker signal): about one and a half
well-placed characters, so among near-equal matches the files in use come first while a clearly
better match still wins. With ``case_sensitive`` every term must also occur, in order and with
its exact case, in the path. An empty needle (a query of constraints only, or none) lists the
files by frecency, then path: the files in use first, as fff answers an empty query.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sleuth.text_search.path_query import compile_path_query, match_paths

__all__ = ["FRECENCY_WEIGHT", "GIT_WEIGHT", "rank_paths", "combined_frecency"]

FRECENCY_WEIGHT = 24.0
GIT_WEIGHT = 0.5
"""How much a file's git history (``text_search.frecency``) counts beside its use through
sleuth: half, since a commit says someone worked on the file, a read says this agent did."""

RankedPath = tuple[str, float, float]
"""(path, score, frecency)."""


def combined_frecency(used: Mapping[str, float], git: Mapping[str, float]) -> dict[str, float]:
    """Per path, its use through sleuth plus ``GIT_WEIGHT`` of its git frecency, at most 1."""
    out = {path: min(1.0, value) for path, value in used.items()}
    for path, value in git.items():
        out[path] = min(1.0, out.get(path, 0.0) + GIT_WEIGHT * value)
    return out


def _in_order(term: str, path: str) -> bool:
    pos = 0
    for ch in term:
        pos = path.find(ch, pos) + 1
        if pos == 0:
            return False
    return True


def rank_paths(
    needle: str,
    paths: Sequence[str],
    frecency: Mapping[str, float],
    *,
    case_sensitive: bool = False,
) -> list[RankedPath]:
    """``paths`` that match ``needle``, best first (module docstring); ties by path."""
    ranked: list[RankedPath] = []
    if not needle.strip():
        for path in paths:
            f = frecency.get(path, 0.0)
            ranked.append((path, round(FRECENCY_WEIGHT * f, 4), round(f, 4)))
    else:
        terms = needle.split()
        for path, score in match_paths(compile_path_query(needle, case_sensitive=True), paths):
            if case_sensitive and not all(_in_order(t, path) for t in terms if "/" not in t):
                continue
            f = frecency.get(path, 0.0)
            ranked.append((path, round((score or 0.0) + FRECENCY_WEIGHT * f, 4), round(f, 4)))
    ranked.sort(key=lambda item: (-item[1], item[0]))
    return ranked
