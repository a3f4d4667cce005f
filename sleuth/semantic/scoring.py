"""The weights of semantic ranking, the ``Hit`` it answers and its lexical half (BM25).

The lexical part of a chunk's score is BM25 (k1 = 1.2, b = 0.75) over identifier-split tokens,
divided by its upper bound for the query (each term's ``idf * (k1 + 1)``), so it lies in [0, 1)
whatever the corpus, mixed with ``HEAD_WEIGHT`` of the share of the query's idf found in the
chunk's first line (a declaration's name and parameters). How it is fused with the dense part:
``sleuth/semantic/index.py`` and docs/query.md#semantic-hybrid-retrieval.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from sleuth.semantic.tokens import tokens

__all__ = [
    "ALPHA",
    "TITLE_WEIGHT",
    "K1",
    "B",
    "HEAD_WEIGHT",
    "NAME_WEIGHT",
    "TEST_WEIGHT",
    "TEST_PATH",
    "TEST_TERMS",
    "Hit",
    "bm25",
]

ALPHA = 0.5
TITLE_WEIGHT = 4
"""How many times a declaration's "kind name" line is embedded: in a mean of token vectors a
name of three words would otherwise weigh as little as three of a body's hundred."""
K1 = 1.2
B = 0.75
HEAD_WEIGHT = 0.2
NAME_WEIGHT = 0.2
TEST_WEIGHT = 0.8
TEST_PATH = re.compile(
    r"(^|/)(tests?|testing)/|(^|/)test_[^/]*$|_tests?\.[^/.]+$|(^|/)conftest\.py$"
)
"""A test file: under a ``test``/``tests``/``testing`` folder, ``test_*``, ``*_test(s).ext``."""
TEST_TERMS = frozenset(tokens("test tests testing"))
"""A query holding one of these speaks of tests: test code is not weighed down for it."""


@dataclass(frozen=True)
class Hit:
    """One ranked chunk: where it is, the stamp of the bytes it was cut from, and its scores."""

    path: str
    start: int
    end: int
    line: int
    end_line: int
    kind: str
    title: str
    stamp: str
    score: float
    bm25: float
    dense: float


class _Chunk(Protocol):
    @property
    def terms(self) -> Mapping[str, int]: ...
    @property
    def length(self) -> int: ...
    @property
    def head(self) -> frozenset[str]: ...


class _Row(Protocol):
    @property
    def chunks(self) -> list[Any]: ...


def bm25(
    terms: set[str],
    df: Mapping[str, int],
    count: int,
    avg: float,
    postings: Mapping[str, Mapping[str, list[int]]],
    rows: Mapping[str, _Row],
    first: Mapping[str, int],
    n: int,
) -> np.ndarray[Any, Any]:
    """The lexical part of every one of the ``n`` chunks for the query's ``terms``: ``df`` and
    ``postings`` (term -> path -> chunk positions) over ``count`` chunks of ``avg`` tokens;
    chunk ``i`` of ``path`` is row ``first[path] + i``."""
    lexical = np.zeros(n, dtype=np.float32)
    head = np.zeros(n, dtype=np.float32)  # idf of the query found in first lines
    total = 0.0
    for term in terms:
        seen = df.get(term, 0)
        if seen <= 0:
            continue
        idf = math.log(1 + (count - seen + 0.5) / (seen + 0.5))
        total += idf
        for path, where in postings.get(term, {}).items():
            chunks, base = rows[path].chunks, first[path]
            for i in where:
                c: _Chunk = chunks[i]
                tf = c.terms[term]
                norm = K1 * (1 - B + B * c.length / avg)
                lexical[base + i] += idf * tf * (K1 + 1) / (tf + norm)
                if term in c.head:
                    head[base + i] += idf
    if total > 0:
        lexical /= total * (K1 + 1)
        lexical += HEAD_WEIGHT * head / np.float32(total)
        lexical /= 1 + HEAD_WEIGHT
    return lexical
