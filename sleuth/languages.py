"""The language table of the whole package: file extension -> language, and the names ``--lang``
accepts.

One record per language, read by every part that names a language (structural search's
grammar table ``ast_search.languages``, the language-server table ``lsp_bridge.servers`` and
the server pool), so a file has the same language everywhere (docs/query.md#languages). The
table is a base module: the engines import it and none of them owns it.

Names, aliases and extensions are ast-grep's (ast-grep-cli 0.51.1, the oracle of the structural
parity tests; docs/query.md#languages): ``language_for_path`` answers what
``ast-grep run -l LANG DIR`` would search, so an ``ast:`` query without ``--lang`` sees the
files ast-grep sees. A few aliases more than ast-grep's are accepted (``python3``, ``node``,
``shell``, ``c#``, ``terraform``); none names another language than ast-grep would.

``server`` is the language whose server covers a file of this language, when that is another
one: a ``.tsx`` file is structurally TSX (its own grammar) and is served by the TypeScript
server.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = [
    "Language",
    "TABLE",
    "BY_NAME",
    "ALIASES",
    "BY_EXTENSION",
    "extension_of",
    "language_for_path",
    "canonical_name",
    "server_language",
]


@dataclass(frozen=True)
class Language:
    """One language: its canonical name, its file extensions (lower case, no dot), its aliases."""

    name: str
    extensions: tuple[str, ...]
    aliases: tuple[str, ...] = ()
    server: str | None = None
    """The language whose server covers this one (None: the language itself)."""
    declares: bool = True
    """Whether its files declare symbols (False for data, configuration and markup: CSS, HCL,
    HTML, JSON, Markdown, YAML), so a ``symbols:`` answer without tags for it is not
    incomplete."""


TABLE: tuple[Language, ...] = (
    Language("bash", ("bash", "bats", "cgi", "command", "env", "fcgi", "ksh", "sh", "tmux",
                      "tool", "zsh"), ("sh", "shell", "zsh")),
    Language("c", ("c", "h")),
    Language("cpp", ("cc", "hpp", "cpp", "c++", "hh", "cxx", "cu", "ino"), ("c++", "cxx", "cc")),
    Language("csharp", ("cs",), ("cs", "c#", "c_sharp")),
    Language("css", ("css", "scss"), declares=False),
    Language("elixir", ("ex", "exs"), ("ex",)),
    Language("go", ("go",), ("golang",)),
    Language("haskell", ("hs",), ("hs",)),
    Language("hcl", ("hcl", "nomad", "tf", "tfvars", "workflow"), ("terraform",),
             declares=False),
    Language("html", ("html", "htm", "xhtml"), declares=False),
    Language("java", ("java",)),
    Language("javascript", ("cjs", "js", "mjs", "jsx"), ("js", "jsx", "node")),
    Language("json", ("json",), declares=False),
    Language("kotlin", ("kt", "ktm", "kts"), ("kt",)),
    Language("lua", ("lua",)),
    Language("markdown", ("markdown", "md"), ("md",), declares=False),
    Language("nix", ("nix",)),
    Language("php", ("php",)),
    Language("python", ("py", "py3", "pyi", "bzl", "bazel"), ("py", "python3")),
    Language("ruby", ("rb", "rbw", "gemspec"), ("rb",)),
    Language("rust", ("rs",), ("rs",)),
    Language("scala", ("scala", "sc", "sbt")),
    Language("solidity", ("sol",), ("sol",)),
    Language("swift", ("swift",)),
    Language("tsx", ("tsx",), server="typescript"),
    Language("typescript", ("ts", "cts", "mts"), ("ts",)),
    Language("yaml", ("yaml", "yml"), ("yml",), declares=False),
    Language("zig", ("zig",)),
)  # fmt: skip

BY_NAME: Mapping[str, Language] = MappingProxyType({lang.name: lang for lang in TABLE})
"""Canonical name -> record."""

ALIASES: Mapping[str, str] = MappingProxyType(
    {alias: lang.name for lang in TABLE for alias in (lang.name, *lang.aliases)}
)
"""Every name ``--lang`` accepts (lower case) -> the canonical name."""

BY_EXTENSION: Mapping[str, str] = MappingProxyType(
    {ext: lang.name for lang in TABLE for ext in lang.extensions}
)
"""Extension (lower case, no dot) -> canonical name."""


def extension_of(path: str) -> str | None:
    """The lower-case extension of ``path``'s file name without the dot (``a/B.TSX`` -> ``tsx``),
    or None when the name has none (``Makefile``, ``.bashrc``)."""
    base = path.replace("\\", "/").rsplit("/", 1)[-1]
    stem, dot, ext = base.rpartition(".")
    return ext.lower() if dot and stem else None


def language_for_path(path: str) -> str | None:
    """The language of ``path`` by its extension (``src/a.tsx`` -> ``"tsx"``), or None."""
    ext = extension_of(path)
    return BY_EXTENSION.get(ext) if ext is not None else None


def canonical_name(lang: str) -> str | None:
    """The canonical name of a language name or alias (case-insensitive), or None."""
    return ALIASES.get(lang.strip().lower())


def server_language(name: str) -> str:
    """The language whose server covers language ``name`` (``tsx`` -> ``typescript``)."""
    return BY_NAME[name].server or name
