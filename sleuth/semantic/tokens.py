"""Identifier-split tokens: the vocabulary BM25 counts (docs/query.md#semantic-hybrid-retrieval).

Code names glue words together, so a query for "user name" should find ``getUserName``,
``get_user_name`` and ``GET-USER-NAME`` alike. ``split_identifier`` cuts one name at
underscores, hyphens, digits and case changes (``HTTPServer`` -> http server, the run of capitals
keeps its last letter for the next word); ``tokens`` does that for every word of a text,
lowercased, drops one-letter pieces and a few words present in almost every chunk, and keeps
each whole compound too (``getusername``), so an exact name still outranks its parts.

Prose and code name one thing differently, so every token is reduced to a common form: a light
suffix stemmer (``cookies`` -> cooki, ``encoding``/``encoded``/``encode`` -> encod) and the
abbreviations code uses for prose words (``dictionary`` -> dict, ``argument`` -> arg,
``configuration`` -> config; ``ABBREVIATIONS``). Both were chosen on sdists that are not the
benchmark's (docs/query.md#semantic-hybrid-retrieval).

Some names glue words with no mark at all (``popitemlist``, ``setdefault``, ``readline``): a
``Segmenter`` cuts such a lowercase run into the fewest words of a word list (the model's
WordPiece vocabulary, ranked by frequency, and the short forms of ``ABBREVIATIONS``: ``iter``,
``attr``), when it is not a word itself, its last word maybe inflected (``uppercased``);
``tokens`` then counts those words too, beside the whole.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

__all__ = ["split_identifier", "stem", "tokens", "Segmenter", "ABBREVIATIONS", "MAX_TOKENS"]

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


ABBREVIATIONS = {
    "address": "addr",
    "application": "app",
    "argument": "arg",
    "attribute": "attr",
    "authentication": "auth",
    "boolean": "bool",
    "buffer": "buf",
    "callback": "cb",
    "character": "char",
    "column": "col",
    "command": "cmd",
    "configuration": "config",
    "connection": "conn",
    "context": "ctx",
    "current": "cur",
    "database": "db",
    "descriptor": "desc",
    "destination": "dst",
    "dictionary": "dict",
    "directory": "dir",
    "document": "doc",
    "environment": "env",
    "error": "err",
    "exception": "exc",
    "expression": "expr",
    "format": "fmt",
    "function": "func",
    "generator": "gen",
    "header": "hdr",
    "identifier": "id",
    "implementation": "impl",
    "index": "idx",
    "information": "info",
    "initialize": "init",
    "integer": "int",
    "iterator": "iter",
    "length": "len",
    "library": "lib",
    "maximum": "max",
    "memory": "mem",
    "message": "msg",
    "minimum": "min",
    "number": "num",
    "object": "obj",
    "option": "opt",
    "options": "opts",
    "package": "pkg",
    "parameter": "param",
    "password": "passwd",
    "pointer": "ptr",
    "position": "pos",
    "previous": "prev",
    "reference": "ref",
    "request": "req",
    "response": "resp",
    "sequence": "seq",
    "source": "src",
    "specification": "spec",
    "statement": "stmt",
    "string": "str",
    "template": "tmpl",
    "temporary": "tmp",
    "timestamp": "ts",
    "utility": "util",
    "value": "val",
    "variable": "var",
}
"""Prose word -> the abbreviation code names use for it; both sides meet in one stemmed form."""


def stem(word: str) -> str:
    """A light suffix stemmer: plural ``s``/``ies``, then ``ing``/``ed``, then a final ``e``,
    then a final ``y`` as ``i`` (``policy``/``policies``, ``cookie``/``cookies`` meet), each
    only on words long enough that the rest is still a word's stem."""
    if len(word) <= 3:
        return word
    if (word.endswith("ies") and len(word) > 4) or word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if len(word) > 5 and word.endswith("ing"):
        word = word[:-3]
    elif len(word) > 4 and word.endswith("ed"):
        word = word[:-2]
    if len(word) > 4 and word.endswith("e"):
        word = word[:-1]
    if len(word) > 3 and word.endswith("y"):
        word = word[:-1] + "i"
    return word


_COMMON = {stem(prose): stem(short) for prose, short in ABBREVIATIONS.items()}


def _common_form(token: str) -> str:
    stemmed = stem(token)
    return _COMMON.get(stemmed, stemmed)


def split_identifier(name: str) -> list[str]:
    """``getUserName`` -> ``["get", "user", "name"]``; ``HTTP_server2`` -> http, server, 2."""
    return [p.lower() for p in _PARTS.findall(name)]


MEMO_WORDS = 200_000
"""Words a ``tokens`` memo keeps before it starts over (a long-running index's vocabulary)."""
SHORT_WORDS = frozenset(["to", "is", "as", "at", "by", "in", "on", "of", "id", "io", "os", "ip"])
"""Two-letter words a compound may hold (``tobytes``, ``isinstance``); shorter pieces of the
list are left out, or every long name would split into fragments."""
MIN_COMPOUND = 5
INFLECTIONS = ("s", "es", "d", "ed", "ing")
CODE_WORD_RANK = 5000
"""The rank an abbreviation (``ABBREVIATIONS``' short forms) takes in a ``Segmenter``'s list."""
MAX_PARTS = 4


class Segmenter:
    """Cuts a lowercase compound into the words of a ranked word list (``words``: most frequent
    first): the fewest words, then the most frequent; None when the run is a word of the list,
    shorter than ``MIN_COMPOUND`` letters, or does not split into 2 to ``MAX_PARTS`` words.
    Keeps a memo of the runs it has cut (owned by whoever owns the segmenter)."""

    def __init__(self, words: Iterable[str]) -> None:
        self._cost: dict[str, float] = {}
        for rank, word in enumerate(words):
            if word.isascii() and word.isalpha() and (len(word) >= 3 or word in SHORT_WORDS):
                self._cost.setdefault(word, math.log(rank + 10))
        for short in ABBREVIATIONS.values():  # code's own words: ``iteritems``, ``getattr``
            self._cost.setdefault(short, math.log(CODE_WORD_RANK + 10))
        self._longest = max(map(len, self._cost), default=0)
        self._memo: dict[str, tuple[str, ...] | None] = {}
        self._spaced: dict[str, str] = {}

    def split(self, run: str) -> tuple[str, ...] | None:
        """``popitemlist`` -> (pop, item, list); ``password`` (a word) -> None."""
        found = self._memo.get(run, ())
        if found != ():
            return found
        if len(self._memo) > MEMO_WORDS:
            self._memo.clear()
        found = self._memo[run] = self._cut(run)
        return found

    def spaced(self, run: str) -> str:
        """``Popitemlist`` -> ``pop item list``; a run that is not cut comes back as it is
        (memoised: an index build asks this for every long word of every chunk)."""
        found = self._spaced.get(run)
        if found is None:
            if len(self._spaced) > MEMO_WORDS:
                self._spaced.clear()
            words = self.split(run.lower())
            found = self._spaced[run] = " ".join(words) if words else run
        return found

    def _cut(self, run: str) -> tuple[str, ...] | None:
        if len(run) < MIN_COMPOUND or run in self._cost or not (run.isascii() and run.isalpha()):
            return None
        found = self._words_of(run)
        for suffix in INFLECTIONS if found is None else ():
            # ``uppercased``: the list has "case", not every inflected form of it
            stem = self._words_of(run[: -len(suffix)]) if run.endswith(suffix) else None
            if stem is not None:
                return (*stem[:-1], stem[-1] + suffix)
        return found

    def _words_of(self, run: str) -> tuple[str, ...] | None:
        # best[i]: (words, cost, the words) of the best cut of run[:i]
        best: list[tuple[int, float, tuple[str, ...]] | None] = [None] * (len(run) + 1)
        best[0] = (0, 0.0, ())
        for end in range(1, len(run) + 1):
            for start in range(max(0, end - self._longest), end):
                before, cost = best[start], self._cost.get(run[start:end])
                if before is None or cost is None:
                    continue
                cand = (before[0] + 1, before[1] + cost, (*before[2], run[start:end]))
                now = best[end]
                if now is None or cand[:2] < now[:2]:
                    best[end] = cand
        cut = best[-1]
        return cut[2] if cut is not None and 2 <= cut[0] <= MAX_PARTS else None


def _word_tokens(word: str, segmenter: Segmenter | None = None) -> tuple[str, ...]:
    parts = split_identifier(word)
    out = []
    for part in parts:
        if len(part) > 1 and part not in _STOP:
            common = _common_form(part)
            if common not in _STOP:
                out.append(common)
        pieces = segmenter.split(part) if segmenter is not None else None
        for piece in pieces or ():
            if piece not in _STOP:
                common = _common_form(piece)
                if common not in _STOP:
                    out.append(common)
    whole = word.lower().strip("_")
    if len(parts) > 1 and len(whole) > 2:
        out.append(_common_form(whole.replace("_", "")))
    return tuple(out)


def tokens(
    text: str,
    limit: int = MAX_TOKENS,
    memo: dict[str, tuple[str, ...]] | None = None,
    segmenter: Segmenter | None = None,
) -> list[str]:
    """The BM25 tokens of ``text`` in order, at most ``limit`` of them. ``memo`` (the caller's,
    kept across calls, always with the same ``segmenter``) holds each word's tokens: code
    repeats its words, and splitting and stemming each occurrence again was most of an index
    build's tokenizing. ``segmenter``: also count the words of glued compounds."""
    if memo is None:
        memo = {}
    elif len(memo) > MEMO_WORDS:
        memo.clear()
    out: list[str] = []
    for word in _WORD.findall(text):
        found = memo.get(word)
        if found is None:
            found = memo[word] = _word_tokens(word, segmenter)
        out.extend(found)
        if len(out) >= limit:
            return out[:limit]
    return out
