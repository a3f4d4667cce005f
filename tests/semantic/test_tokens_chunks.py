"""Identifier splitting and chunking (docs/query.md#semantic-hybrid-retrieval)."""

from __future__ import annotations

from sleuth.semantic import chunk_file, split_identifier, tokens
from sleuth.semantic.chunks import MAX_CHUNKS, WINDOW_BYTES, WINDOW_LINES
from sleuth.semantic.encoder import VOCAB
from sleuth.semantic.static import WORD_RANK_START
from sleuth.semantic.tokens import ABBREVIATIONS, Segmenter, stem


def test_split_identifier_cuts_case_underscores_and_digits() -> None:
    assert split_identifier("getUserName") == ["get", "user", "name"]
    assert split_identifier("get_user_name") == ["get", "user", "name"]
    assert split_identifier("HTTPServer2") == ["http", "server", "2"]
    assert split_identifier("parseXMLDoc") == ["parse", "xml", "doc"]


def test_tokens_keep_the_compound_and_drop_noise() -> None:
    toks = tokens("def getUserName(self): return self.x")
    assert toks == ["get", "user", "name", "getusernam"]  # stemmed: the final e goes
    assert tokens("a b c") == []
    assert len(tokens("word " * 10_000, limit=50)) == 50


def test_glued_compounds_are_cut_into_words() -> None:
    """``popitemlist`` is the name of "pop an (item, list) pair": its words count too."""
    seg = Segmenter(["set", "default", "item", "pop", "list", "read", "line", "password", "to"])
    assert seg.split("popitemlist") == ("pop", "item", "list")
    assert seg.split("setdefault") == ("set", "default")
    assert seg.split("password") is None  # a word of the list stays whole
    assert seg.split("pop") is None and seg.split("xyzzyplugh") is None
    assert seg.split("readlineitemsetpop") is None  # more than four words: a name, not a compound
    toks = tokens("def popitemlist(self)", segmenter=seg)
    assert toks == ["popitemlist", "pop", "item", "list"]
    assert tokens("def popitemlist(self)") == ["popitemlist"]  # no segmenter: as before
    real = Segmenter(VOCAB.read_text(encoding="utf-8").splitlines()[WORD_RANK_START:])
    assert real.split("setdefault") == ("set", "default")
    assert real.split("readline") == ("read", "line")
    assert real.split("password") is None
    assert real.split("uppercased") == ("upper", "cased")  # an inflected last word
    assert real.split("iteritems") == ("iter", "items")  # code's abbreviations are words


def test_prose_and_code_spellings_meet_in_one_token() -> None:
    """``Returns the cookies from a dictionary`` must reach ``cookies_from_dict``."""
    assert tokens("Returns the cookies from a dictionary") == tokens("cookie dict")
    assert tokens("encoding") == tokens("encoded") == tokens("encode") == tokens("encodes")
    assert tokens("parse the configuration arguments") == tokens("parse config args")
    assert tokens("classes") == tokens("class") and tokens("policies") == tokens("policy")
    for prose, short in ABBREVIATIONS.items():
        assert tokens(prose) == tokens(short), prose
    # words of three letters and words ending in ss/us/is keep their ending
    assert [stem(w) for w in ("bus", "class", "this", "ids", "keys")] == [
        "bus",
        "class",
        "this",
        "ids",
        "key",
    ]


SRC = b'''import os


class Store:
    """Keeps things."""

    def put(self, key):
        return key

    def get(self, key):
        return key


def helper():
    pass
'''


def _decls(data: bytes) -> list[tuple[int, int, str, str, str]]:
    def span(start: bytes, end: bytes) -> tuple[int, int]:
        s = data.index(start)
        return s, data.index(end, s) + len(end)

    cls = span(b"class Store", b"return key\n\n    def get(self, key):\n        return key")
    put = span(b"def put", b"return key")
    get = span(b"def get", b"return key")
    helper = span(b"def helper", b"pass")
    return [
        (*get, "get", "method", "Store"),
        (*cls, "Store", "class", ""),
        (*put, "put", "method", "Store"),
        (*helper, "helper", "function", ""),
    ]


def test_one_chunk_per_declaration_and_windows_for_the_rest() -> None:
    chunks = chunk_file(SRC, _decls(SRC))
    titles = [(c.kind, c.title) for c in chunks]
    assert titles == [
        ("window", ""),
        ("class", "Store"),
        ("method", "Store.put"),
        ("method", "Store.get"),
        ("function", "helper"),
    ]
    cls = chunks[1]
    # the class spans its methods but its text keeps only their first lines
    assert SRC[cls.start : cls.end].startswith(b"class Store")
    assert "def put(self, key):" in cls.text and "return key" not in cls.text
    assert chunks[0].text.strip() == "import os" and chunks[0].line == 1
    assert chunks[4].line == 14 and chunks[4].end_line == 15


def test_a_file_without_tags_is_cut_into_windows() -> None:
    data = "".join(f"line {i} words here\n" for i in range(100)).encode()
    chunks = chunk_file(data, None)
    assert [c.line for c in chunks] == [1, 31, 61, 91]
    assert all(c.end_line - c.line < WINDOW_LINES for c in chunks)
    assert b"".join(data[c.start : c.end] for c in chunks) == data


def test_a_minified_line_is_cut_at_character_boundaries() -> None:
    data = ("é" * 20_000).encode()  # one 40 KB line of two-byte characters
    chunks = chunk_file(data, None)
    assert len(chunks) >= 40000 // WINDOW_BYTES
    for c in chunks:
        assert c.end - c.start <= WINDOW_BYTES
        data[c.start : c.end].decode("utf-8")  # never a cut character


def test_limits_and_bad_declarations() -> None:
    data = b"x = 1\n" * 200_000
    assert len(chunk_file(data, None)) == MAX_CHUNKS
    assert chunk_file(b"\n\n  ;;\n", None) == []  # nothing to rank
    out_of_range = [(5, 10_000, "f", "function", ""), (3, 3, "g", "function", "")]
    assert [c.kind for c in chunk_file(b"value = compute()\n", out_of_range)] == ["window"]
