"""Identifier suggestions for searches that found nothing (``possible_names``,
docs/query.md#name-suggestions).

When a text search finds zero matches, the caller feeds the candidate files' bytes to
``suggest_names`` and gets back identifiers that really exist and are close in spelling to the
query, so an agent that guessed ``getUser`` learns about ``get_user`` or ``GetUsers`` instead of
concluding that nothing is there. Closeness, best first:

0. same name after dropping case and ``_``/``-`` separators (``getUser`` ~ ``GET_USER``);
1. singular/plural of each other (``getUser`` ~ ``GetUsers``, ``entry`` ~ ``entries``);
2. edit distance 1 on that normalised form;
3. edit distance 2 (only for normalised forms longer than 5 characters).

Ties are broken by frequency (more occurrences first), then by name. The query itself is never
suggested. The pass is bounded by ``budget_s``: it stops early and says so, and the caller
reports ``"possible_names_skipped": "budget"``. ``name_variants`` spells one name in the usual
case styles, for callers that want to search the variants directly.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Iterable

__all__ = ["suggest_names", "name_variants", "normalise", "split_words", "edit_distance"]

_IDENT = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_QUERY_CHUNK = re.compile(r"[A-Za-z0-9_]+")
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_CHECK_EVERY = 2048  # identifiers compared between two looks at the clock


def normalise(name: str) -> str:
    """Case- and separator-free form: ``getUser``, ``get_user``, ``GET-USER`` -> ``getuser``."""
    return name.replace("_", "").replace("-", "").lower()


def split_words(name: str) -> list[str]:
    """Words of an identifier in any style: ``HTTPServerError`` -> HTTP, Server, Error."""
    words: list[str] = []
    for chunk in _QUERY_CHUNK.findall(name):
        words.extend(_WORD.findall(chunk))
    return words


def name_variants(query: str) -> list[str]:
    """``query`` in snake, camel, Pascal, SCREAMING and kebab case (distinct, without itself)."""
    words = [w.lower() for w in split_words(query)]
    if not words:
        return []
    head, tail = words[0], words[1:]
    candidates = [
        "_".join(words),
        head + "".join(w.capitalize() for w in tail),
        "".join(w.capitalize() for w in words),
        "_".join(words).upper(),
        "-".join(words),
    ]
    seen = {query}
    out: list[str] = []
    for name in candidates:
        if name not in seen:
            seen.add(name)
            out.append(name)
    return out


def edit_distance(a: str, b: str, limit: int) -> int:
    """Levenshtein distance of ``a`` and ``b``, or ``limit + 1`` as soon as it exceeds ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    if len(a) > len(b):
        a, b = b, a
    previous = list(range(len(a) + 1))
    for j, cb in enumerate(b, 1):
        current = [j]
        best = j
        for i, ca in enumerate(a, 1):
            cost = min(previous[i] + 1, current[i - 1] + 1, previous[i - 1] + (ca != cb))
            current.append(cost)
            best = min(best, cost)
        if best > limit:
            return limit + 1
        previous = current
    return previous[-1]


def _plural_pair(a: str, b: str) -> bool:
    """True if one normalised name is the English plural of the other (s, es, ies/y)."""
    if len(a) > len(b):
        a, b = b, a
    if b == a + "s" or b == a + "es":
        return True
    return a.endswith("y") and b == a[:-1] + "ies"


def _closeness(target: str, candidate: str) -> int | None:
    """0..3 as in the module docstring, or None when ``candidate`` is not close enough."""
    if candidate == target:
        return 0
    if _plural_pair(target, candidate):
        return 1
    limit = 1 if len(target) <= 5 else 2
    distance = edit_distance(target, candidate, limit)
    if distance > limit:
        return None
    return 1 + distance


def suggest_names(
    query: str, texts: Iterable[bytes], *, limit: int = 5, budget_s: float = 0.5
) -> tuple[list[str], bool]:
    """Existing identifiers close to ``query``, best first; ``(names, budget_exhausted)``.

    Words of a multi-word query are joined (``get user`` looks for ``getUser``); a query without
    identifier characters gets ``([], False)``.
    """
    target = normalise("".join(_QUERY_CHUNK.findall(query)))
    if not target or limit <= 0:
        return [], False
    deadline = time.monotonic() + budget_s
    counts: Counter[bytes] = Counter()
    exhausted = False
    for data in texts:
        counts.update(_IDENT.findall(data))
        if time.monotonic() > deadline:
            exhausted = True
            break
    limit_len = 1 if len(target) <= 5 else 2
    lo, hi = len(target) - limit_len, len(target) + limit_len + 1  # +1 more for "ies"
    ranked: list[tuple[int, int, str]] = []
    for k, (raw, count) in enumerate(counts.items()):
        if k % _CHECK_EVERY == 0 and k and time.monotonic() > deadline:
            exhausted = True
            break
        if not lo <= len(raw) - raw.count(b"_") <= hi:
            continue
        name = raw.decode("ascii")
        if name == query:
            continue
        closeness = _closeness(target, normalise(name))
        if closeness is not None:
            ranked.append((closeness, -count, name))
    ranked.sort()
    return [name for _, _, name in ranked[:limit]], exhausted
