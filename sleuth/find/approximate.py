"""Approximate line matching for ``find`` with ``grep_mode="fuzzy"`` (docs/faces.md#find-grep).

A line matches when some run of its bytes is within ``max_edits(len(needle))`` edits
(insertions, deletions, substitutions and swaps of two neighbours: the optimal string alignment
distance) of the needle, so ``get_usr``
finds ``get_user`` and ``retrun`` finds ``return``. Each matching line gives one match, its best
run: the fewest edits, then the one cutting fewest words (``get_user``, not ``get_use``, for
``get_usr``), then the one closest to the needle's length, then the leftmost. Its score
(higher is better) is the share of the needle matched, ``100 * (n - edits) / n``, plus
``BOUNDARY_BONUS`` when the run starts at a word boundary and half of it when it ends at one,
so an exact word beats the same letters inside a longer name.

Matching is done on the bytes (so byte offsets are exact; an edit of a non-ASCII character
counts once per byte), case-insensitively for ASCII unless ``case_sensitive``. The search for
the best run is Sellers' algorithm (edit distance with a free start), which is quadratic per
line, so lines are first filtered by the q-gram lemma: a run within ``k`` edits of a needle of
``n`` bytes keeps at least ``n - 1 - 3k`` of the needle's bigrams (a swap breaks three), so a line (or a whole file)
holding fewer cannot match and is never aligned.
"""

from __future__ import annotations

__all__ = ["max_edits", "approximate_spans", "BOUNDARY_BONUS", "ApproximateHit"]

BOUNDARY_BONUS = 10.0

ApproximateHit = tuple[int, int, int, float]
"""(start byte, end byte, edits, score) of the best run of one line."""


def max_edits(length: int) -> int:
    """The edits a needle of ``length`` bytes tolerates: none below 4, then one per 4 bytes,
    at most 3 (fzf and fff keep typo tolerance small so short needles stay precise)."""
    if length < 4:
        return 0
    return min(3, 1 + (length - 4) // 4)


def _is_word(byte: int) -> bool:
    return byte == 0x5F or 0x30 <= byte <= 0x39 or 0x41 <= byte <= 0x5A or 0x61 <= byte <= 0x7A


def _bigrams(needle: bytes) -> list[bytes]:
    return [needle[i : i + 2] for i in range(len(needle) - 1)]


def _may_match(hay: bytes, grams: list[bytes], need: int) -> bool:
    """The q-gram lemma's necessary condition (module docstring)."""
    if need <= 0:
        return True
    kept = 0
    for gram in grams:
        if gram in hay:
            kept += 1
            if kept >= need:
                return True
    return False


def _best_run(line: bytes, needle: bytes, k: int) -> tuple[int, int, int] | None:
    """(start, end, edits) of the best run of ``line`` within ``k`` edits of ``needle``
    (offsets relative to ``line``), or None; Sellers' algorithm with the start carried along."""
    n = len(needle)
    cost = list(range(n + 1))
    start = [0] * (n + 1)
    best: tuple[int, ...] | None = None  # ranks runs: edits, whole words, |length - n|, start
    best_run: tuple[int, int, int] | None = None
    old_cost, old_start = cost, start  # the row before the previous one (transpositions)
    for i in range(1, len(line) + 1):
        ch = line[i - 1]
        before = line[i - 2] if i > 1 else -1
        new_cost = [0] * (n + 1)
        new_start = [i] * (n + 1)
        for j in range(1, n + 1):
            diag = cost[j - 1] + (needle[j - 1] != ch)
            skip_text = cost[j] + 1
            skip_needle = new_cost[j - 1] + 1
            if diag <= skip_text and diag <= skip_needle:
                new_cost[j], new_start[j] = diag, start[j - 1]
            elif skip_needle <= skip_text:
                new_cost[j], new_start[j] = skip_needle, new_start[j - 1]
            else:
                new_cost[j], new_start[j] = skip_text, start[j]
            if j > 1 and needle[j - 1] == before and needle[j - 2] == ch != before:
                swapped = old_cost[j - 2] + 1
                if swapped < new_cost[j]:
                    new_cost[j], new_start[j] = swapped, old_start[j - 2]
        old_cost, old_start = cost, start
        cost, start = new_cost, new_start
        if cost[n] <= k:
            s = start[n]
            cut = int(i < len(line) and _is_word(line[i])) + int(s > 0 and _is_word(line[s - 1]))
            rank = (cost[n], cut, abs(i - s - n), s)
            if best is None or rank < best:
                best, best_run = rank, (start[n], i, cost[n])
    return best_run


def _widen(data: bytes, start: int, end: int) -> tuple[int, int]:
    """The run grown to whole UTF-8 characters (a byte edit may cut one)."""
    while start > 0 and 0x80 <= data[start] < 0xC0:
        start -= 1
    while end < len(data) and 0x80 <= data[end] < 0xC0:
        end += 1
    return start, end


def approximate_spans(
    data: bytes,
    needle: str,
    *,
    case_sensitive: bool,
    start: int = 0,
    edits: int | None = None,
) -> list[ApproximateHit]:
    """The best run of every line of ``data[start:]`` within the tolerated edits of ``needle``,
    in document order (module docstring); [] when the needle is empty."""
    pattern = needle.encode("utf-8")
    if not pattern:
        return []
    hay = data if case_sensitive else data.lower()
    if not case_sensitive:
        pattern = pattern.lower()
    n = len(pattern)
    k = max_edits(n) if edits is None else edits
    grams = _bigrams(pattern)
    need = n - 1 - 3 * k  # a swap breaks up to three bigrams, another edit two
    if k == 0:
        if pattern not in hay[start:]:
            return []
    elif not _may_match(hay[start:], grams, need):
        return []
    out: list[ApproximateHit] = []
    pos = start
    size = len(hay)
    while pos <= size:
        eol = hay.find(b"\n", pos)
        end = size if eol < 0 else eol
        line = hay[pos:end]
        if line.endswith(b"\r"):
            line = line[:-1]
        if (pattern in line) if k == 0 else _may_match(line, grams, need):
            run = _best_run(line, pattern, k)
            if run is not None:
                s, e, cost = run
                s, e = _widen(data, pos + s, pos + e)
                score = 100.0 * (n - cost) / n
                if s == pos or not _is_word(hay[s - 1]):
                    score += BOUNDARY_BONUS
                if e >= pos + len(line) or not _is_word(hay[e]):
                    score += BOUNDARY_BONUS / 2
                out.append((s, e, cost, round(score, 4)))
        if eol < 0:
            break
        pos = eol + 1
    return out
