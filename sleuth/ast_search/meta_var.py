"""Metavariables of structural patterns (docs/query.md#ast-structural-patterns): their syntax,
substitution and recognition.

``$NAME`` binds one named node, ``$$NAME`` one node of any kind, ``$$$NAME`` zero or more
consecutive siblings; names are uppercase letters, digits and ``_`` starting with a letter or
``_``, and a name starting with ``_`` (``$_``, ``$_X``, ``$$$``, ``$$$_X``) binds without capturing.
``$a`` is not a metavariable.

Before a pattern is parsed its ``$`` sigils are replaced by the language's expando character
(``µ`` in Python, ``𐀀`` in C) so that a metavariable reads as an identifier; the replacement
keeps one code point per ``$``, so positions in code points carry over unchanged. After parsing,
a node whose *entire text* is one substituted metavariable becomes that metavariable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from tree_sitter import Node

__all__ = ["VarKind", "MetaVar", "substitute", "extract_meta_var", "has_meta_var"]
__all__ += ["node_meta_var"]

_MAX_VAR_BYTES = 128  # longer node texts cannot be a single metavariable

_SIGILS = re.compile(r"\$+")
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_FIRST_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ_")


class VarKind(Enum):
    """What a metavariable binds."""

    SINGLE = "single"  # $A, $_: one named node
    ANY = "any"  # $$A, $$_: one node, named or not
    MULTI = "multi"  # $$$A, $$$: zero or more sibling nodes


@dataclass(frozen=True)
class MetaVar:
    """One metavariable occurrence; ``name`` is None for the anonymous ``$_`` forms."""

    kind: VarKind
    name: str | None

    @property
    def is_multi(self) -> bool:
        return self.kind is VarKind.MULTI


def substitute(pattern: str, expando: str) -> str:
    """Replace the sigils of every metavariable in ``pattern`` by ``expando``.

    A run of ``$`` is a sigil when an uppercase letter or ``_`` follows it, or when it is
    exactly ``$$$`` (the anonymous multi form, also at the end of the pattern). Other ``$``
    (``$a``, ``$1``, a lone ``$``) are left alone.
    """
    if expando == "$":
        return pattern

    def repl(m: re.Match[str]) -> str:
        run = m.group(0)
        following = pattern[m.end() : m.end() + 1]
        if (following and following in _FIRST_CHARS) or len(run) == 3:
            return expando * len(run)
        return run

    return _SIGILS.sub(repl, pattern)


def extract_meta_var(text: str, expando: str) -> MetaVar | None:
    """The metavariable ``text`` (a node's whole text, after substitution) is, if any."""
    if not text.startswith(expando):
        return None
    triple = expando * 3
    if text == triple:
        return MetaVar(VarKind.MULTI, None)
    if text.startswith(triple):
        rest = text[len(triple) :]
        if not _valid_name(rest):  # `$$$1` is text, as in ast-grep 0.51
            return None
        return MetaVar(VarKind.MULTI, None if rest.startswith("_") else rest)
    rest = text[len(expando) :]
    kind = VarKind.SINGLE
    if rest.startswith(expando):
        rest = rest[len(expando) :]
        kind = VarKind.ANY
    if not rest or rest[0] not in _FIRST_CHARS or not _valid_name(rest):
        return None
    return MetaVar(kind, None if rest.startswith("_") else rest)


def node_meta_var(node: Node, data: bytes, expando: str) -> MetaVar | None:
    """The metavariable ``node``'s whole text (in ``data``) is, if any; long texts are never
    sliced."""
    start, end = node.start_byte, node.end_byte
    if end - start > _MAX_VAR_BYTES or not data.startswith(expando.encode(), start, end):
        return None
    return extract_meta_var(data[start:end].decode(errors="replace"), expando)


def has_meta_var(text: str, expando: str) -> bool:
    """True when ``text`` (after substitution) may contain a metavariable sigil."""
    return expando in text


def _valid_name(rest: str) -> bool:
    return bool(rest) and rest[0] in _FIRST_CHARS and all(ch in _NAME_CHARS for ch in rest)
