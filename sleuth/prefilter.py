"""Prefilter hints shared by every engine: the literals a pattern needs before a file can match.

A ``Literals`` value is a conjunction of disjunctions: every inner tuple is a set of
alternatives, at least one of which must occur (ASCII case-folded, i.e. ``bytes.lower()``) in a
file that can match. ``None`` means "no usable hint" and is never wrong (ripgrep's Matcher
contract); an empty tuple means "every file is a candidate" too.

Producers: text matchers (literal, regex, Boolean terms) and ast patterns. Consumers: the trigram
index and the query layer's cheap ``bytes`` prefilter.
"""

from __future__ import annotations

__all__ = ["Literals", "fold", "file_may_match"]

Literals = tuple[tuple[bytes, ...], ...]


def fold(text: bytes) -> bytes:
    """The case folding every prefilter uses (ASCII lower-case)."""
    return text.lower()


def file_may_match(literals: Literals | None, folded: bytes) -> bool:
    """True unless ``folded`` (a file's folded bytes) lacks a required literal."""
    if not literals:
        return True
    return all(any(alt in folded for alt in group) for group in literals)
