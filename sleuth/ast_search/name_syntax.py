"""What the syntax tree says about one name token: a name, a member, or neither.

A rename's clash check (docs/edits.md) asks, of each place the new name is written, whether it
is an identifier token (never inside a string or a comment) and whether it stands at a member
position — an attribute or property after a dot, a field, a keyword argument's name, a module
path in an import — and, of the names the rename edits, whether the renamed symbol is itself a
member (written at a member position, or declared in a class, struct, interface... body).
``NameSyntax`` answers those questions over one file's tree-sitter tree.
"""

from __future__ import annotations

from typing import Literal

from tree_sitter import Node

from sleuth.ast_search.languages import language_for_path
from sleuth.ast_search.trees import parse
from sleuth.errors import SleuthError

__all__ = ["NameSyntax", "NameKind", "name_syntax"]

NameKind = Literal["name", "member"]

_MEMBER_FIELDS = ("attribute", "property", "field")
_MEMBER_TYPES = {
    "property_identifier",
    "field_identifier",
    "shorthand_field_identifier",
    "private_property_identifier",
}
_CLASS_WORDS = ("class", "struct", "interface", "enum", "impl", "trait", "union", "object_type")
_FUNCTION_WORDS = ("function", "method", "lambda", "closure", "arrow", "func_literal")


def name_syntax(path: str, data: bytes) -> NameSyntax | None:
    """The syntax of ``data`` (the file at ``path``), or None when its language has no
    grammar here (the caller then goes by text)."""
    lang = language_for_path(path)
    if lang is None:
        return None
    try:
        return NameSyntax(parse(lang, data).root_node)
    except SleuthError:
        return None


class NameSyntax:
    """One file's syntax tree, asked about the name tokens at byte ranges."""

    def __init__(self, root: Node) -> None:
        self._root = root

    def _token(self, start: int, end: int) -> Node | None:
        node = self._root.descendant_for_byte_range(start, end)
        if node is None or not _is_name(node, start, end):
            return None
        return node

    def name_at(self, start: int, end: int) -> NameKind | None:
        """``member`` or ``name`` for an identifier token spanning exactly ``start:end``, None
        for anything else (a string, a comment, part of a longer token)."""
        node = self._token(start, end)
        if node is None:
            return None
        return "member" if _member_position(node) else "name"

    def renames_member(self, start: int, end: int) -> bool:
        """True when the name at ``start:end`` is a member: written at a member position, or
        declared in a class (struct, interface, ...) body."""
        node = self._token(start, end)
        if node is None:
            return False
        if _member_position(node):
            return True
        scope = node.parent
        if scope is not None and _field_of(node) == "name":
            scope = scope.parent  # the definition the name belongs to is not its scope
        while scope is not None:
            kind = scope.type
            if any(w in kind for w in _FUNCTION_WORDS):
                return False
            if any(w in kind for w in _CLASS_WORDS):
                return True
            scope = scope.parent
        return False


def _is_name(node: Node, start: int, end: int) -> bool:
    """True for an identifier token spanning exactly ``start:end``."""
    return (
        node.start_byte == start
        and node.end_byte == end
        and node.child_count == 0
        and node.type.endswith("identifier")
    )


def _field_of(node: Node) -> str | None:
    parent = node.parent
    if parent is None:
        return None
    for i, child in enumerate(parent.children):
        if child == node:
            return parent.field_name_for_child(i)
    return None


def _member_position(node: Node) -> bool:
    """True where a name does not bind or read the scope: after a dot, a field, a keyword
    argument's name, a module path in an import (``from a.b import c``: ``a``, ``b``)."""
    if node.type in _MEMBER_TYPES:
        return True
    parent = node.parent
    if parent is None:
        return False
    field = _field_of(node)
    if field in _MEMBER_FIELDS:
        return True
    if parent.type == "keyword_argument":
        return field == "name"
    if parent.type != "dotted_name":
        return False
    holder = parent.parent
    if holder is not None and (
        holder.type == "relative_import"
        or (holder.type == "import_from_statement" and _field_of(parent) == "module_name")
        or (holder.type == "aliased_import" and _field_of(parent) == "name")
    ):
        return True
    return parent.children[0] != node  # ``import a.b`` binds ``a`` only
