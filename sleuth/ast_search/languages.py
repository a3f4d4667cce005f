"""The per-language table of structural search: one frozen ``LangSpec`` record per language.

Every quirk of a language lives here and nowhere else
(docs/architecture.md#per-language-quirks-live-in-tables: "per-language quirks live in a table
of records with defaults"): the grammar wheel and its entry point, the metavariable substitution
("expando") character, the code contexts a pattern snippet is retried in when it does not parse
on its own (docs/query.md#ast-structural-patterns) and the default language server. File
extensions, names and aliases are the package's one language table, ``sleuth.languages``
(ast-grep's), which every record here reads; a test checks each language there has a record.

Expando characters follow ast-grep: ``µ`` where ``$`` is not an identifier character
(Elixir, Haskell and HCL among them), ``𐀀`` for C and C++ (their grammars reject ``µ`` in
some positions), ``_`` for CSS and Nix (Nix reads ``$`` as interpolation), ``z`` for HTML (its
tag names are ASCII), and ``$`` itself for the languages whose grammars accept it or that
ast-grep leaves unprocessed (JavaScript, TypeScript, Java, Bash, Lua, JSON, Scala, Solidity,
YAML, Markdown).
PHP is parsed with the grammar's ``php_only`` entry point, as ast-grep does, so a pattern needs
no ``<?php`` tag; Markdown with the block grammar (``language``, not ``inline_language``), as
ast-grep does, so inline content is one ``inline`` node.
A wheel whose entry point still returns the language as a bare address (tree-sitter-solidity)
is wrapped in the capsule py-tree-sitter expects, so no deprecated call is made.
"""

from __future__ import annotations

import ctypes
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from types import MappingProxyType
from typing import Any

from tree_sitter import Language

from sleuth import languages as table
from sleuth.errors import Unsupported

__all__ = [
    "LangSpec",
    "LANGUAGES",
    "ALIASES",
    "language_for_path",
    "get_lang_spec",
    "get_ts_language",
]

# A body-level code context, tried with and without a closing ";" (statements in C-like
# languages need one; expressions at the end of a Rust block must not have one).
Context = tuple[str, str]


def _loader(module: str, entry: str = "language") -> Callable[[], Any]:
    """A lazy loader for a grammar wheel: imports the module only when first used."""

    def load() -> Any:
        found = getattr(importlib.import_module(module), entry)()
        return _capsule(found) if isinstance(found, int) else found

    load.__qualname__ = f"{module}.{entry}"
    return load


def _capsule(address: int) -> Any:
    """A ``TSLanguage *`` given as an int -> the ``tree_sitter.Language`` capsule py-tree-sitter
    takes (its int form is deprecated)."""
    new = ctypes.pythonapi.PyCapsule_New
    new.restype = ctypes.py_object
    new.argtypes = (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)
    return new(address, b"tree_sitter.Language", None)


def _body(prefix: str, suffix: str) -> tuple[Context, ...]:
    return ((prefix, suffix), (prefix, ";" + suffix))


@dataclass(frozen=True)
class LangSpec:
    """How one language is parsed and matched.

    ``contexts`` are (prefix, suffix) pairs that wrap a pattern which does not parse cleanly at
    top level; ``retry_kinds`` are node kinds that parse cleanly at top level but mean the
    snippet was read the wrong way (Go's ``fmt.Errorf(x)`` as a type conversion, C's
    ``kmalloc(x)`` as a macro type), so the contexts are tried for them too. ``name_context``
    reads a pattern that is a qualified name alone (``name_kinds``: C++'s ``std::string``) as a
    type, as ast-grep does, where the grammar's top-level parse makes it an expression (with
    ``name_after_missing`` False, only when that parse is an ERROR, not a MISSING token).
    """

    name: str
    loader: Callable[[], Any] = field(repr=False, compare=False)
    expando: str = "µ"
    contexts: tuple[Context, ...] = ()
    retry_kinds: frozenset[str] = frozenset()
    language_server: str | None = None
    name_context: Context | None = None
    name_kinds: frozenset[str] = frozenset()
    name_after_missing: bool = True  # also when the top-level parse only lacks a token

    @property
    def extensions(self) -> tuple[str, ...]:
        """File extensions of the language (``sleuth.languages``)."""
        return table.BY_NAME[self.name].extensions

    @property
    def aliases(self) -> tuple[str, ...]:
        """Other names ``--lang`` accepts for it (``sleuth.languages``)."""
        return table.BY_NAME[self.name].aliases

    @property
    def ts_language(self) -> Language:
        """The tree-sitter ``Language`` (loaded once per process)."""
        return get_ts_language(self.name)


_C_BODY = _body("void __sleuth_ctx__(void) {\n", "\n}")
_CPP_BODY = _body("void __sleuth_ctx__() {\n", "\n}")


def _class_body(object_type: str) -> tuple[Context, ...]:
    """Java/C#: a method body, a class body, and an initializer (for a bare expression)."""
    return (
        *_body("class __sleuth_ctx__ {\nvoid __sleuth_ctx__() {\n", "\n}\n}"),
        ("class __sleuth_ctx__ {\n", "\n}"),
        (f"class __sleuth_ctx__ {{\n{object_type} __sleuth_ctx__ = ", ";\n}"),
    )


_SPECS: tuple[LangSpec, ...] = (
    LangSpec(
        "python",
        _loader("tree_sitter_python"),
        language_server="ty",
    ),
    LangSpec(
        "javascript",
        _loader("tree_sitter_javascript"),
        expando="$",
        language_server="tsc",
    ),
    LangSpec(
        "typescript",
        _loader("tree_sitter_typescript", "language_typescript"),
        expando="$",
        language_server="tsc",
    ),
    LangSpec(
        "tsx",
        _loader("tree_sitter_typescript", "language_tsx"),
        expando="$",
        language_server="tsc",
    ),
    LangSpec(
        "go",
        _loader("tree_sitter_go"),
        contexts=(("func __sleuth_ctx__() {\n", "\n}"),),
        retry_kinds=frozenset({"type_conversion_expression"}),
        language_server="gopls",
    ),
    LangSpec(
        "rust",
        _loader("tree_sitter_rust"),
        contexts=_body("fn __sleuth_ctx__() {\n", "\n}"),
        language_server="rust-analyzer",
        # ast-grep's parse of `fmt::Debug` recovers a type path; this runtime an expression
        # path (`std::io::Result`, which parses with a MISSING `;`, is an expression in both)
        name_context=("type __sleuth_ctx__ = ", ";"),
        name_kinds=frozenset({"scoped_identifier"}),
        name_after_missing=False,
    ),
    LangSpec(
        "java",
        _loader("tree_sitter_java"),
        expando="$",
        contexts=_class_body("Object"),
        language_server="jdtls",
    ),
    LangSpec(
        "c",
        _loader("tree_sitter_c"),
        expando="\U00010000",
        contexts=_C_BODY,
        retry_kinds=frozenset({"macro_type_specifier"}),
        language_server="clangd",
    ),
    LangSpec(
        "cpp",
        _loader("tree_sitter_cpp"),
        expando="\U00010000",
        contexts=_CPP_BODY,
        # `ns::f($A)` at the top level is a declaration of `A` (the most vexing parse)
        retry_kinds=frozenset({"macro_type_specifier", "parenthesized_declarator"}),
        language_server="clangd",
        name_context=("", " __sleuth_ctx__;"),
        name_kinds=frozenset({"qualified_identifier"}),
    ),
    LangSpec(
        "csharp",
        _loader("tree_sitter_c_sharp"),
        contexts=_class_body("object"),
        language_server="csharp-ls",
    ),
    LangSpec(
        "ruby",
        _loader("tree_sitter_ruby"),
        language_server="ruby-lsp",
    ),
    LangSpec(
        "php",
        _loader("tree_sitter_php", "language_php_only"),
        contexts=(("", ";"), ("function __sleuth_ctx__() {\n", ";\n}")),
        language_server="intelephense",
    ),
    LangSpec(
        "kotlin",
        _loader("tree_sitter_kotlin"),
        contexts=(("fun __sleuth_ctx__() {\n", "\n}"),),
        language_server="kotlin-language-server",
    ),
    LangSpec(
        "swift",
        _loader("tree_sitter_swift"),
        contexts=(("func __sleuth_ctx__() {\n", "\n}"),),
        language_server="sourcekit-lsp",
    ),
    LangSpec(
        "bash",
        _loader("tree_sitter_bash"),
        expando="$",
        language_server="bash-language-server",
    ),
    LangSpec(
        "lua",
        _loader("tree_sitter_lua"),
        expando="$",
        language_server="lua-language-server",
    ),
    LangSpec("css", _loader("tree_sitter_css"), expando="_"),
    LangSpec("html", _loader("tree_sitter_html"), expando="z"),
    LangSpec("json", _loader("tree_sitter_json"), expando="$"),
    LangSpec("elixir", _loader("tree_sitter_elixir")),
    LangSpec("haskell", _loader("tree_sitter_haskell")),
    LangSpec("hcl", _loader("tree_sitter_hcl")),
    LangSpec("markdown", _loader("tree_sitter_markdown"), expando="$"),
    LangSpec("nix", _loader("tree_sitter_nix"), expando="_"),
    LangSpec("scala", _loader("tree_sitter_scala"), expando="$"),
    LangSpec("solidity", _loader("tree_sitter_solidity"), expando="$"),
    LangSpec("yaml", _loader("tree_sitter_yaml"), expando="$"),
    LangSpec("zig", _loader("tree_sitter_zig"), expando="_"),  # `$` starts no Zig identifier
)

LANGUAGES: Mapping[str, LangSpec] = MappingProxyType({spec.name: spec for spec in _SPECS})

ALIASES: Mapping[str, str] = MappingProxyType(
    {alias: name for alias, name in table.ALIASES.items() if name in LANGUAGES}
)


def language_for_path(path: str) -> str | None:
    """The language of ``path`` by its extension (``src/a.tsx`` -> ``"tsx"``), or None."""
    name = table.language_for_path(path)
    return name if name in LANGUAGES else None


def get_lang_spec(lang: str) -> LangSpec:
    """The record for a language name or alias (case-insensitive); raises ``Unsupported``."""
    name = ALIASES.get(lang.strip().lower())
    if name is None:
        known = ", ".join(sorted(LANGUAGES))
        raise Unsupported(
            f"structural search does not support the language {lang!r}; "
            f"use one of: {known} (or an alias such as py, js, ts, rs, c++, cs, kt, sh)",
            details={"lang": lang, "known": sorted(LANGUAGES)},
        )
    return LANGUAGES[name]


# Kept for the process's life on purpose: a loaded grammar is immutable and costs a shared
# library load, and the same grammars serve every session (no state to own or reset).
@cache
def get_ts_language(name: str) -> Language:
    """Load the grammar of ``name`` (a canonical language name) once per process."""
    spec = LANGUAGES[name]
    try:
        return Language(spec.loader())
    except (ImportError, ValueError, OSError) as exc:
        raise Unsupported(
            f"the tree-sitter grammar for {name} is not installed or does not load; "
            f"install the matching tree-sitter-{name} wheel",
            details={"lang": name},
        ) from exc
