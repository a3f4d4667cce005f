"""The one language table (``sleuth.languages``) and its three readers agree by construction.

Structural search (``ast_search.languages``), the language-server table
(``lsp_bridge.servers``) and the server pool read the same records, so a file has one language
everywhere: these tests walk every extension of the table and of the readers and check each
answer against the table's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sleuth import languages as table
from sleuth.ast_search import languages as ast_langs
from sleuth.errors import Unsupported
from sleuth.lsp_bridge import servers
from sleuth.lsp_bridge.pool import ServerPool
from sleuth.workspace import Workspace

EVERY_EXTENSION = sorted(table.BY_EXTENSION)


def test_every_extension_has_one_language() -> None:
    seen = [ext for lang in table.TABLE for ext in lang.extensions]
    assert len(seen) == len(set(seen)), "an extension is listed for two languages"
    assert all(ext == ext.lower() and not ext.startswith(".") for ext in seen)


def test_every_language_has_a_grammar_record() -> None:
    assert set(ast_langs.LANGUAGES) == set(table.BY_NAME)
    for name, spec in ast_langs.LANGUAGES.items():
        assert spec.extensions == table.BY_NAME[name].extensions
        assert spec.aliases == table.BY_NAME[name].aliases


@pytest.mark.parametrize("ext", EVERY_EXTENSION)
def test_structural_search_reads_the_table(ext: str) -> None:
    path = f"src/file.{ext.upper()}"
    assert ast_langs.language_for_path(path) == table.BY_EXTENSION[ext]


@pytest.mark.parametrize("ext", EVERY_EXTENSION)
def test_the_server_table_and_the_pool_read_the_table(ext: str, tmp_path: Path) -> None:
    name = table.BY_EXTENSION[ext]
    served = table.server_language(name)
    expected = served if served in servers.SERVERS else None
    path = f"src/file.{ext}"
    assert servers.language_of(path) == expected
    assert servers.EXTENSIONS.get(f".{ext}") == expected
    pool = ServerPool(Workspace(tmp_path))
    try:
        assert pool.language_of(path) == expected
    finally:
        pool.close()


def test_the_server_table_has_no_extension_of_its_own() -> None:
    assert {ext[1:] for ext in servers.EXTENSIONS} <= set(table.BY_EXTENSION)
    assert {ext[1:] for ext in servers.LANGUAGE_IDS} <= set(table.BY_EXTENSION)
    assert set(servers.SERVERS) <= set(table.BY_NAME)


def test_tsx_is_its_own_grammar_but_the_typescript_server() -> None:
    assert ast_langs.language_for_path("a.tsx") == "tsx"
    assert servers.language_of("a.tsx") == "typescript"
    assert servers.language_of("a.css") is None  # no server: symbol queries do not route it


@pytest.mark.parametrize("alias", sorted(table.ALIASES))
def test_every_alias_names_its_language(alias: str) -> None:
    assert ast_langs.get_lang_spec(alias.upper()).name == table.ALIASES[alias]


def test_the_pool_refuses_a_language_without_a_server(tmp_path: Path) -> None:
    pool = ServerPool(Workspace(tmp_path))
    try:
        with pytest.raises(Unsupported, match="symbol queries cover c, cpp, go"):
            pool.spec("css")
    finally:
        pool.close()
