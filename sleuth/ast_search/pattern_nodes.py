"""The compiled form of an ``ast:`` pattern: ``PNode`` trees, ``CompiledPattern``, and the
conversion of a pattern's parse into them (``pattern.py`` chooses which parse)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from tree_sitter import Node

from sleuth.ast_search.meta_var import MetaVar, VarKind, node_meta_var
from sleuth.ast_search.recovery import ERROR_KIND_ID

__all__ = ["Tag", "PNode", "CompiledPattern", "MAX_PATTERN_DEPTH", "pattern_tree", "anchored"]
__all__ += ["fixed_text"]

MAX_PATTERN_DEPTH = 256
"""Inner pattern nodes nested inside one another at most: the matcher recurses once per level
(two Python frames), so a deeper pattern would exhaust the interpreter's stack."""


class Tag(IntEnum):
    TERMINAL = 0
    META = 1
    INTERNAL = 2


@dataclass(frozen=True, slots=True)
class PNode:
    """One pattern node: a leaf to compare, a metavariable, or an inner node with children."""

    tag: Tag
    kind_id: int
    kind: str
    named: bool
    text: bytes = b""
    var: MetaVar | None = None
    children: tuple[PNode, ...] = ()

    @property
    def is_trivial(self) -> bool:
        """An unnamed leaf (punctuation, keyword): skipped in the goal after a ``$$$``."""
        return self.tag is Tag.TERMINAL and not self.named

    @property
    def is_multi(self) -> bool:
        return self.var is not None and self.var.is_multi


@dataclass(frozen=True)
class CompiledPattern:
    """The matcher's input: the pattern tree, and the node kind a selector pinned, if any."""

    root: PNode
    root_kind: str | None  # set by a selector: candidates must have exactly this kind
    root_kind_id: int | None
    source: str  # the pattern text actually parsed (after substitution and any context)
    warning: str | None = None  # what was recovered from a parse with errors (``recovery``)

    def any_kind(self, strictness: str) -> bool:
        """Whether a candidate of any node kind may match: a root metavariable, an inner ERROR
        root (docs/query.md#patterns-that-do-not-parse-cleanly), or ``template``, which
        compares no kinds; a selector always pins the kind. An ERROR leaf at the root (CSS's
        `28px` recovers as one around `px`) is a kind of its own there, as in ast-grep."""
        if self.root_kind_id is not None:
            return False
        root = self.root
        error = root.tag is Tag.INTERNAL and root.kind_id == ERROR_KIND_ID
        return root.tag is Tag.META or error or strictness == "template"


def fixed_text(root: PNode) -> bytes:
    """The text a file must contain to be searched for ``root``, as ast-grep gates files
    (docs/query.md#how-tokens-compare): the longest leaf text of the pattern, the first of
    equal ones in document order; metavariables count as empty. Its unnamed tokens compare by
    kind alone, so ``"X"`` finds Ruby's ``'X'`` only in a file that holds a ``"``."""
    if root.tag is Tag.META:
        return b""
    if root.tag is Tag.TERMINAL:
        return root.text
    longest = b""
    for child in root.children:  # at most MAX_PATTERN_DEPTH deep
        text = fixed_text(child)
        if len(text) > len(longest):
            longest = text
    return longest


def anchored(root: PNode) -> bool:
    """Whether a recovered pattern still compares something: a token, a node kind other than
    ERROR, or two single metavariables side by side (HCL's `$BLOCK $BODY`, a node with two
    named children at least, as ast-grep reads it). An ERROR holding only `$$$` lists or one
    single metavariable matches any node; a selector's kind anchors any pattern."""
    stack = [root]
    while stack:
        cur = stack.pop()
        if cur.tag is Tag.TERMINAL or (cur.tag is Tag.INTERNAL and cur.kind_id != ERROR_KIND_ID):
            return True
        singles = [c for c in cur.children if c.var is not None and c.var.kind is VarKind.SINGLE]
        if len(singles) >= 2:
            return True
        stack.extend(cur.children)
    return False


def pattern_tree(top: Node, data: bytes, expando: str) -> PNode | None:
    """The PNode tree of ``top`` (None when it nests deeper than ``MAX_PATTERN_DEPTH``).

    One walk without recursion: each frame holds a node, its children still to convert and
    the PNodes converted so far, which become the node's children when it is left.
    """
    leaf = _leaf(top, data, expando)
    if leaf is not None:
        return leaf
    done: list[PNode] = []
    stack: list[tuple[Node, list[Node], list[PNode]]] = [(top, _kept(top), [])]
    while stack:
        node, todo, built = stack[-1]
        if todo:
            child = todo.pop()
            leaf = _leaf(child, data, expando)
            if leaf is not None:
                built.append(leaf)
            elif len(stack) >= MAX_PATTERN_DEPTH:
                return None
            else:
                stack.append((child, _kept(child), []))
            continue
        stack.pop()
        inner = PNode(Tag.INTERNAL, node.kind_id, node.type, node.is_named, b"", None, tuple(built))
        (stack[-1][2] if stack else done).append(inner)
    return done[0]


def _kept(node: Node) -> list[Node]:
    """The children a pattern node keeps (MISSING tokens dropped), last first (to pop)."""
    return [c for c in reversed(node.children) if not c.is_missing]


def _leaf(node: Node, data: bytes, expando: str) -> PNode | None:
    """``node`` as a metavariable or a terminal, or None for an inner node."""
    var = node_meta_var(node, data, expando)
    if var is not None:
        text = data[node.start_byte : node.end_byte]
        return PNode(Tag.META, node.kind_id, node.type, node.is_named, text, var)
    if node.child_count == 0:
        text = data[node.start_byte : node.end_byte]
        return PNode(Tag.TERMINAL, node.kind_id, node.type, node.is_named, text)
    return None
