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
"""

from __future__ import annotations

import re

__all__ = ["split_identifier", "stem", "tokens", "ABBREVIATIONS", "MAX_TOKENS"]

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


def _word_tokens(word: str) -> tuple[str, ...]:
    parts = split_identifier(word)
    out = []
    for part in parts:
        if len(part) > 1 and part not in _STOP:
            common = _common_form(part)
            if common not in _STOP:
                out.append(common)
    whole = word.lower().strip("_")
    if len(parts) > 1 and len(whole) > 2:
        out.append(_common_form(whole.replace("_", "")))
    return tuple(out)


MEMO_WORDS = 200_000
"""Words a ``tokens`` memo keeps before it starts over (a long-running index's vocabulary)."""


def tokens(
    text: str, limit: int = MAX_TOKENS, memo: dict[str, tuple[str, ...]] | None = None
) -> list[str]:
    """The BM25 tokens of ``text`` in order, at most ``limit`` of them. ``memo`` (the caller's,
    kept across calls) holds each word's tokens: code repeats its words, and splitting and
    stemming each occurrence again was most of an index build's tokenizing."""
    if memo is None:
        memo = {}
    elif len(memo) > MEMO_WORDS:
        memo.clear()
    out: list[str] = []
    for word in _WORD.findall(text):
        found = memo.get(word)
        if found is None:
            found = memo[word] = _word_tokens(word)
        out.extend(found)
        if len(out) >= limit:
            return out[:limit]
    return out
