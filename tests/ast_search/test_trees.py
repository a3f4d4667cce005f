"""The tree cache: stamps, incremental reparse, the byte bound; the language table."""

from __future__ import annotations

import pytest

from sleuth.ast_search import LANGUAGES, TreeCache, compile_pattern, language_for_path
from sleuth.ast_search.languages import get_ts_language
from sleuth.errors import Unsupported


def test_same_stamp_returns_the_cached_tree() -> None:
    cache = TreeCache(1_000_000)
    data = b"def f():\n    return g(1)\n"
    tree = cache.get("a.py", "s1", data)
    assert cache.get("a.py", "s1", data) is tree
    assert (cache.hits, cache.parses) == (1, 1)


def test_changed_file_is_reparsed_incrementally_and_correctly() -> None:
    cache = TreeCache(1_000_000)
    old = b"def f():\n    return g(1)\n\ndef h():\n    pass\n"
    new = b"def f():\n    return g(1, 2)\n\ndef h():\n    g(3)\n"
    cache.get("a.py", "s1", old)
    tree = cache.get("a.py", "s2", new)
    assert cache.reparses == 1
    fresh = compile_pattern("g($$$A)", "python")
    assert str(tree.root_node) == str(fresh.parse(new).root_node)
    assert [new[m.start_byte : m.end_byte] for m in fresh.find(new, tree)] == [b"g(1, 2)", b"g(3)"]


def test_a_tree_with_syntax_errors_is_parsed_afresh_without_trying_incrementally(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sleuth.ast_search.trees as trees

    cache = TreeCache(1_000_000)
    old = b"int f(void) {\n  return g(1)\n}\nMACRO(x) {\n  h(2);\n}\n"  # missing ";": errors
    new = b"int f(void) {\n  return g(1, 3)\n}\nMACRO(x) {\n  h(2);\n}\n"
    assert cache.get("a.c", "s1", old).root_node.has_error
    calls: list[bool] = []
    real = trees.parse

    def counting(lang: str, data: bytes, old_tree: object = None) -> object:
        calls.append(old_tree is not None)
        return real(lang, data, old_tree)  # type: ignore[arg-type]

    monkeypatch.setattr(trees, "parse", counting)
    tree = cache.get("a.c", "s2", new)
    assert calls == [False]  # one parse, from scratch
    assert (cache.parses, cache.reparses) == (2, 0)
    assert str(tree.root_node) == str(real("c", new).root_node)


def test_cache_is_bounded_by_bytes() -> None:
    cache = TreeCache(100)
    for i in range(5):
        cache.get(f"f{i}.py", "s", b"x = 1\n" * 6)  # 36 bytes each
    assert cache.size_bytes <= 100 and len(cache) == 2
    cache.get("huge.py", "s", b"x = 1\n" * 100)  # larger than the budget: not kept
    assert len(cache) == 2
    cache.discard("f4.py")
    assert len(cache) == 1


def test_language_for_path() -> None:
    cases = {"src/a.py": "python", "b.TSX": "tsx", "c.ts": "typescript", "d.mjs": "javascript",
             "e.go": "go", "f.rs": "rust", "g.java": "java", "h.h": "c", "i.hpp": "cpp",
             "j.cs": "csharp", "k.rb": "ruby", "l.php": "php", "m.kt": "kotlin",
             "n.swift": "swift", "o.sh": "bash", "p.lua": "lua", "Makefile": None,
             "q.txt": None, "r.css": "css", "s.scss": "css", "t.HTM": "html",
             "u.json": "json", "v.yml": "yaml", "w.toml": None, ".bashrc": None}  # fmt: skip
    assert {path: language_for_path(path) for path in cases} == cases


def test_every_language_loads_and_parses() -> None:
    assert len(LANGUAGES) == 28
    for name, spec in LANGUAGES.items():
        assert get_ts_language(name) is spec.ts_language
        assert len(spec.expando) == 1 and spec.extensions
    assert LANGUAGES["python"].expando == "µ" and LANGUAGES["c"].expando == "\U00010000"
    assert LANGUAGES["javascript"].expando == "$"
    assert LANGUAGES["go"].language_server == "gopls"
    assert LANGUAGES["python"].language_server == "ty"


def test_unknown_extension_in_cache_is_unsupported() -> None:
    with pytest.raises(Unsupported):
        TreeCache().get("notes.txt", "s", b"hello")
