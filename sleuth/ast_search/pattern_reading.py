"""Readings of a pattern's parse: the nodes a reading is taken from (the one node spanning the
pattern, the selector's kind, a single-child wrapper), whether a context changed how its first
token lexed, and the warnings an answer carries when sleuth's reading and ast-grep's are not
the same parse (docs/query.md#strictness-and-selector)."""

from __future__ import annotations

from tree_sitter import Node, Parser

__all__ = ["container_kind", "relexed", "ends_with_token", "node_with_span", "is_single"]
__all__ += ["find_kind", "has_kind", "reading_warning", "selected_reading_warning"]
__all__ += ["misreading_warning", "type_name_warning"]


def node_with_span(root: Node, start: int, end: int) -> Node | None:
    """The outermost node below ``root`` spanning exactly [start, end)."""
    node = root
    while True:
        if node.start_byte == start and node.end_byte == end and node is not root:
            return node
        inner = next(
            (c for c in node.children if c.start_byte <= start and c.end_byte >= end), None
        )
        if inner is None:
            return None
        node = inner


def container_kind(parser: Parser, context: tuple[str, str]) -> str | None:
    """The kind of the list node a context wraps statements in (Go's ``statement_list``).

    One small probe parse, run only for a context attempt whose top node has several children.
    """
    prefix, suffix = context
    probe = "__sleuth_probe__"
    data = (prefix + probe + suffix).encode()
    start = len(prefix.encode())
    root = parser.parse(data).root_node
    node = node_with_span(root, start, start + len(probe))
    if node is None or node.child_count != 1 or root.has_error:
        return None
    return node.type


def relexed(top: Node | None, node: Node) -> bool:
    """Whether a context reads the pattern's first keyword as a name (Java's initializer
    context makes ``if ($A)`` a call of ``if``): a misreading, not the pattern."""
    if top is None:
        return False
    first, mine = _first_leaf(top), _first_leaf(node)
    return (
        not first.is_named
        and mine.is_named
        and first.type == (mine.text or b"").decode(errors="replace")
    )


def _first_leaf(node: Node) -> Node:
    while node.child_count:
        child = node.child(0)
        assert child is not None
        node = child
    return node


def ends_with_token(node: Node, at: int) -> bool:
    """Whether ``node``'s last child is the token at byte ``at`` as its terminator: a leaf in
    no field (Java's empty statement ``if ($A);`` is the ``;`` in the consequence field)."""
    n = node.child_count
    last = node.child(n - 1) if n else None
    if last is None or last.child_count or last.start_byte != at:
        return False
    return node.field_name_for_child(n - 1) is None


# -- hints (error and recovery paths only) ------------------------------------------------


def is_single(node: Node) -> bool:
    """ast-grep's wrapper rule: one child, or two when the second is MISSING or kind-less."""
    count = node.child_count
    if count == 1:
        return True
    if count == 2:
        second = node.child(1)
        return second is not None and (second.is_missing or second.type == "")
    return False


def find_kind(node: Node, kind: str) -> Node | None:
    """The first node of ``kind`` in pre-order, ``node`` included."""
    stack = [node]
    while stack:
        cur = stack.pop()
        if cur.type == kind:
            return cur
        stack.extend(reversed(cur.children))
    return None


def has_kind(node: Node, kinds: frozenset[str]) -> bool:
    """Whether ``node`` or a node below it is of one of ``kinds``."""
    stack = [node]
    while stack:
        cur = stack.pop()
        if cur.type in kinds:
            return True
        stack.extend(cur.children)
    return False


def reading_warning(lang: str, top_level: str, in_body: str) -> str:
    """The ``pattern_warning`` of a pattern that does not parse at the top level, where
    ast-grep reads it as a ``top_level`` node and sleuth matches it so, while inside a function
    body it reads as an ``in_body`` node (Go's ``$A.Body`` a type there and an expression
    here): the answer says how to ask for the other reading."""
    other = (
        f"pass the selector {in_body!r} for that reading"
        if in_body != top_level
        else "write it inside a larger snippet (an expression or a call) for that reading"
    )
    return (
        f"the ast: pattern does not parse cleanly at the top level of a {lang} file; it is "
        f"matched as ast-grep reads it there, as a node of kind {top_level!r}. Inside a "
        f"function body it reads as another {in_body!r} node: {other}"
    )


def selected_reading_warning(lang: str, selector: str) -> str:
    """The ``pattern_warning`` of a pattern with a selector whose top-level parse holds an
    error: as in ast-grep, the selector's node is the first of that parse, which a function
    body's reading would place elsewhere."""
    return (
        f"the ast: pattern does not parse cleanly at the top level of a {lang} file; as in "
        f"ast-grep, the selector {selector!r} picks the first such node of that parse (read "
        f"inside a function body, the pattern would give another one)"
    )


def misreading_warning(lang: str, top_level: str, in_body: str) -> str:
    """The ``pattern_warning`` of a pattern read inside a function body because its top-level
    parse is a known misreading (C's ``free(p)`` a macro type, Go's ``fmt.Errorf(x)`` a type
    conversion, C++'s ``ns::f(x)`` a declaration), which ast-grep keeps and which code in
    bodies does not hold (docs/query.md#strictness-and-selector)."""
    return (
        f"the ast: pattern is read inside a function body, as a node of kind {in_body!r}; "
        f"ast-grep reads it at the top level of a {lang} file, as a node of kind "
        f"{top_level!r}, which code inside functions rarely holds: pass the selector "
        f"{top_level!r} for that reading"
    )


def type_name_warning(lang: str, kind: str) -> str:
    """The ``pattern_warning`` of a qualified name read as a type name, as ast-grep reads it
    (docs/query.md#strictness-and-selector); ``kind`` is the node kind it is read as."""
    return (
        f"the ast: pattern is a qualified name alone; it is read as ast-grep reads it, as a "
        f"{lang} type name ({kind!r} in a type position), and finds the name where a type "
        f"stands. To find it used as a value, write it in an expression, e.g. `NAME($$$ARGS)`"
    )
