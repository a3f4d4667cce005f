"""Identifier-split tokens: the vocabulary BM25 counts (docs/query.md#semantic-hybrid-retrieval).

Code names glue words together, so a query for "user name" should find ``getUserName``,
``get_user_name`` and ``GET-USER-NAME`` alike. ``split_identifier`` cuts one name at
underscores, hyphens, digits and case changes (``HTTPServer`` -> http server, the run of capitals
keeps its last letter for the next word); ``tokens`` does that for every word of a text,
lowercased, drops one-letter pieces and a few words present in almost every chunk, and keeps
each whole compound too (``getusername``), so an exact name still outranks its parts.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["split_identifier", "tokens", "MAX_TOKENS"]

MAX_TOKENS = 4096
"""Tokens counted per chunk: past it a chunk is long enough that more words change nothing."""

_WORD = re.compile(r"[A-Za-z0-9_]+|[^\W\d_]+")
# lower->Upper boundary, an acronym before a capitalised word, letters<->digits
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_]+")
_STOP = frozenset(
    [
        "the",
        "a",
        "an",
        "of",
        "to",
        "in",
        "is",
        "it",
        "be",
        "and",
        "or",
        "for",
        "on",
        "as",
        "at",
        "by",
        "with",
        "this",
        "that",
        "self",
        "def",
        "return",
        "if",
        "else",
        "not",
        "none",
        "true",
        "false",
        "from",
        "import",
    ]
)


def split_identifier(name: str) -> list[str]:
    """``getUserName`` -> ``["get", "user", "name"]``; ``HTTP_server2`` -> http, server, 2."""
    return [p.lower() for p in _PARTS.findall(name)]


def _iter_tokens(text: str) -> Iterator[str]:
    for word in _WORD.findall(text):
        parts = split_identifier(word)
        for part in parts:
            if len(part) > 1 and part not in _STOP:
                yield part
        whole = word.lower().strip("_")
        if len(parts) > 1 and len(whole) > 2:
            yield whole.replace("_", "")


def tokens(text: str, limit: int = MAX_TOKENS) -> list[str]:
    """The BM25 tokens of ``text`` in order, at most ``limit`` of them."""
    out: list[str] = []
    for tok in _iter_tokens(text):
        out.append(tok)
        if len(out) >= limit:
            break
    return out
