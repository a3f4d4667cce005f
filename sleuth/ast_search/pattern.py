"""The pattern compiler: pattern text -> a tree of ``PNode`` the matcher walks
(docs/query.md#ast-structural-patterns).

Steps, as ast-grep takes them: substitute metavariable sigils with the language's expando
character, parse, descend through single-child wrappers (``module > expression_statement >
call`` gives a pattern rooted at the call), and turn every node whose whole text is one
metavariable into that metavariable (the outermost such node wins).

Unlike ast-grep, a pattern whose parse holds an ERROR or MISSING node (or a node kind the
language table marks as a misreading, such as C's ``macro_type_specifier``) is retried in the
language's code contexts (a function body for Go, Java, C#, Kotlin, Swift, C, C++, Rust); a
pattern that still does not parse cleanly is an ``InvalidQuery`` with the position and a hint,
never an ERROR-rooted pattern that silently matches anything. The hint names a context and
selector for a fragment (``{"a": $V}`` with ``selector=pair`` for ``"a": $V``) or a completion
that parses (``class $C: $$$BODY``); those probes run only on the error path.

Compiling costs time linear in the pattern's size: a bounded number of parses per language
(the top level, each code context, and on the error path the hint's trial parses, only for
patterns up to ``HINT_PROBE_CHARS``), and walks that visit each node once, without recursion,
slicing only texts short enough to be a metavariable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum

from tree_sitter import Node, Parser

from sleuth.ast_search.languages import LangSpec
from sleuth.ast_search.meta_var import MetaVar, extract_meta_var, substitute
from sleuth.errors import InvalidQuery

__all__ = ["Tag", "PNode", "CompiledPattern", "compile_tree", "MAX_PATTERN_CHARS"]
__all__ += ["MAX_PATTERN_DEPTH", "HINT_PROBE_CHARS", "MAX_HINT_PARSES"]

MAX_PATTERN_CHARS = 16 * 1024
"""The same cap as a whole query (``query.request.MAX_QUERY_CHARS``): a longer pattern is
``invalid_query`` whichever door it comes through."""
MAX_PATTERN_DEPTH = 256
"""Inner pattern nodes nested inside one another at most: the matcher recurses once per level
(two Python frames), so a deeper pattern would exhaust the interpreter's stack."""
HINT_PROBE_CHARS = 1024
"""A pattern that does not parse gets a rewrite hint found by trial parses (fragment contexts,
quoting, completions) only up to this size: the hints are for short fragments, and the trial
parses would otherwise dominate the cost of a long pattern's error."""
_MAX_QUOTE_PROBES = 4  # bare metavariables (nearest the error first) tried inside quotes
_MAX_VAR_BYTES = 128  # longer node texts cannot be a single metavariable


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


@dataclass
class _Attempt:
    node: Node | None
    data: bytes
    problem: tuple[int, str] | None  # (byte offset in the pattern, what is wrong)
    suspect: bool = False


def compile_tree(pattern: str, spec: LangSpec, selector: str | None) -> CompiledPattern:
    """Compile ``pattern`` for ``spec``; raises ``InvalidQuery`` with position and hint."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise InvalidQuery(
            f"the ast: pattern is {len(pattern)} characters long; patterns are limited to "
            f"{MAX_PATTERN_CHARS}: search for a smaller, characteristic part of the code",
            details={"position": MAX_PATTERN_CHARS, "hint": "shorten the pattern"},
        )
    stripped = pattern.strip()
    if not stripped:
        raise InvalidQuery(
            "the ast: pattern is empty: give a code snippet such as `foo($A)`",
            details={"position": 0, "hint": "write a code snippet with metavariables"},
        )
    lead = len(pattern) - len(pattern.lstrip())
    src = substitute(stripped, spec.expando)
    lang = spec.ts_language
    if (
        selector is not None
        and lang.id_for_node_kind(selector, True) is None
        and lang.id_for_node_kind(selector, False) is None
    ):
        raise InvalidQuery(
            f"selector {selector!r} is not a node kind of {spec.name}: name a kind of the "
            f"{spec.name} grammar (as `ast-grep run --debug-query=cst` shows them)",
            details={"selector": selector, "position": 0, "hint": "check the selector"},
        )
    parser = Parser(lang)
    top = _attempt(parser, src, ("", ""), selector, spec)
    if top.node is not None and not top.suspect:
        return _finish(top, spec, selector, lead, src)
    for context in spec.contexts:
        retry = _attempt(parser, src, context, selector, spec)
        if retry.node is not None and not retry.suspect:
            return _finish(retry, spec, selector, lead, src)
    if top.node is not None:
        return _finish(top, spec, selector, lead, src)
    assert top.problem is not None
    offset, what = top.problem
    near = error_position(src, offset)
    position = lead + near
    if what == "several top-level nodes":
        hint = (
            "a pattern matches one node: search for one statement or expression at a time, "
            "or write the construct that contains them all (e.g. the enclosing block)"
        )
    else:
        hint = fragment_hint(parser, src, spec, stripped, near)
    raise InvalidQuery(
        f"the ast: pattern does not parse as one {spec.name} node ({what} at character "
        f"{position}): {hint}",
        details={"position": position, "hint": hint, "lang": spec.name},
    )


def _attempt(
    parser: Parser, src: str, context: tuple[str, str], selector: str | None, spec: LangSpec
) -> _Attempt:
    prefix, suffix = context
    data = (prefix + src + suffix).encode()
    start = len(prefix.encode())
    end = start + len(src.encode())
    root = parser.parse(data).root_node
    problem = _find_problem(root, data, spec.expando, len(suffix.encode()))
    if problem is not None:
        bad, what = problem
        return _Attempt(None, data, (max(0, min(bad, end) - start), what))
    if prefix or suffix:
        top = node_with_span(root, start, end)
        if top is None and suffix.startswith(";"):  # a statement that needed the ";"
            top = node_with_span(root, start, end + 1)
        if top is None:
            return _Attempt(None, data, (0, "no single node"))
        if not _is_single(top) and top.type == _container_kind(parser, context):
            return _Attempt(None, data, (0, "several top-level nodes"))
    else:
        top = root
    if selector is not None:
        found = _find_kind(top, selector)
        if found is None:
            return _Attempt(None, data, (0, f"no {selector} node"))
        node = found
    else:
        if top.child_count == 0 and top is root:
            return _Attempt(None, data, (0, "no code"))
        if top is root and not _is_single(root):
            second = root.child(1)
            assert second is not None
            return _Attempt(None, data, (second.start_byte, "several top-level nodes"))
        node = top
        while _is_single(node):
            child = node.child(0)
            assert child is not None
            node = child
    suspect = bool(spec.retry_kinds) and _has_kind(node, spec.retry_kinds)
    return _Attempt(node, data, None, suspect)


def _finish(
    attempt: _Attempt, spec: LangSpec, selector: str | None, lead: int, src: str
) -> CompiledPattern:
    assert attempt.node is not None
    root = _convert(attempt.node, attempt.data, spec.expando)
    if root is None:
        raise InvalidQuery(
            f"the ast: pattern nests more than {MAX_PATTERN_DEPTH} nodes deep: search for a "
            f"smaller part of the code, or stand a metavariable (`$A`) for the inner parts",
            details={"position": lead, "hint": "shorten or flatten the pattern"},
        )
    if root.is_multi:
        raise InvalidQuery(
            "a `$$$` metavariable cannot stand alone as the whole pattern: use `$VAR` for "
            "one node, or wrap `$$$VAR` in a larger pattern such as `foo($$$VAR)`",
            details={"position": lead, "hint": "use $VAR or wrap $$$VAR in a larger pattern"},
        )
    kind_id = attempt.node.kind_id if selector is not None else None
    return CompiledPattern(root, selector, kind_id, attempt.data.decode(errors="replace"))


def _convert(top: Node, data: bytes, expando: str) -> PNode | None:
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
    var = _var_of(node, data, expando)
    if var is not None:
        text = data[node.start_byte : node.end_byte]
        return PNode(Tag.META, node.kind_id, node.type, node.is_named, text, var)
    if node.child_count == 0:
        text = data[node.start_byte : node.end_byte]
        return PNode(Tag.TERMINAL, node.kind_id, node.type, node.is_named, text)
    return None


def _container_kind(parser: Parser, context: tuple[str, str]) -> str | None:
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


def _is_single(node: Node) -> bool:
    """ast-grep's wrapper rule: one child, or two when the second is MISSING or kind-less."""
    count = node.child_count
    if count == 1:
        return True
    if count == 2:
        second = node.child(1)
        return second is not None and (second.is_missing or second.type == "")
    return False


def _find_kind(node: Node, kind: str) -> Node | None:
    """The first node of ``kind`` in pre-order, ``node`` included."""
    stack = [node]
    while stack:
        cur = stack.pop()
        if cur.type == kind:
            return cur
        stack.extend(reversed(cur.children))
    return None


def _has_kind(node: Node, kinds: frozenset[str]) -> bool:
    stack = [node]
    while stack:
        cur = stack.pop()
        if cur.type in kinds:
            return True
        stack.extend(cur.children)
    return False


def _find_problem(
    node: Node, data: bytes, expando: str, suffix_len: int = 0
) -> tuple[int, str] | None:
    """The first ERROR or MISSING node in pre-order as (byte offset, description), or None.

    Tolerated, because the node becomes a metavariable anyway: an ERROR whose whole text is
    one metavariable, and a MISSING token right after a metavariable (``{ $$$B }`` in Java
    or C, where a statement-position ``$$$B`` lacks its ``;``). Subtrees without an error are
    not entered, and the walk keeps its own stack (a frame per open node: its remaining
    children and whether the previous sibling was a metavariable).
    """
    if not node.has_error:
        return None
    if node.is_error and not _is_var_text(node, data, expando):
        return node.start_byte, "a syntax error"
    if node.is_missing:
        return node.start_byte, f"a missing {node.type!r}"
    code_end = len(data.rstrip()) - suffix_len
    stack: list[tuple[list[Node], list[bool]]] = [(node.children[::-1], [False])]
    while stack:
        todo, previous_is_var = stack[-1]
        if not todo:
            stack.pop()
            continue
        child = todo.pop()
        if child.is_missing:
            if not previous_is_var[0]:
                return child.start_byte, f"a missing {child.type!r}"
            continue
        is_var = _is_var_text(child, data, expando)
        previous_is_var[0] = is_var
        if is_var or not child.has_error:
            continue
        if child.is_error:
            if child.end_byte >= code_end:
                return child.end_byte, "an unfinished construct"  # it runs to the end
            leaf = child
            while leaf.child_count:
                last = leaf.child(leaf.child_count - 1)
                assert last is not None
                leaf = last
            return leaf.start_byte, "a syntax error"
        stack.append((child.children[::-1], [False]))
    return None


def _var_of(node: Node, data: bytes, expando: str) -> MetaVar | None:
    """The metavariable ``node``'s whole text is, if any (long texts are never sliced)."""
    start, end = node.start_byte, node.end_byte
    if end - start > _MAX_VAR_BYTES or not data.startswith(expando.encode(), start, end):
        return None
    return extract_meta_var(data[start:end].decode(errors="replace"), expando)


def _is_var_text(node: Node, data: bytes, expando: str) -> bool:
    return _var_of(node, data, expando) is not None


# -- hints for patterns that do not parse (error path only) ----------------------------------
_FRAGMENT_CONTEXTS: tuple[tuple[str, str], ...] = (
    ("{", "}"),
    ("({", "})"),
    ("[", "]"),
    ("f(", ")"),
    ("x = {", "}"),
    ("class X {\n", "\n}"),
)
_COMPLETIONS: tuple[str, ...] = (
    ": $$$BODY",
    " { $$$BODY }",
    "\n  $$$BODY\nend",
    " {}",
    ")",
    ";",
)
MAX_HINT_PARSES = len(_FRAGMENT_CONTEXTS) + _MAX_QUOTE_PROBES + len(_COMPLETIONS)
"""Trial parses of one hint at most, besides one per code context of the language."""


def error_position(src: str, offset: int) -> int:
    """The code-point index of byte ``offset`` in ``src`` (UTF-8)."""
    return len(src.encode()[:offset].decode(errors="ignore"))


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


_GENERIC_HINT = (
    "write a complete {name} snippet (use `$$$NAME` for omitted parts), or wrap the fragment "
    "in a larger snippet and pick the node you want with a selector"
)
_BARE_VAR = re.compile(r"(?<![\w$'\"`])\$[A-Z_][A-Z0-9_]*(?![\w'\"`])")


def _quoted_hint(parser: Parser, spec: LangSpec, original: str, near: int) -> str | None:
    """A hint to quote a metavariable standing where the grammar wants a string literal
    (``import $X from $Y`` in JavaScript), when quoting one makes the pattern parse.

    Only the ``_MAX_QUOTE_PROBES`` bare metavariables nearest the error (code point ``near``)
    are tried, one parse each."""
    bare = sorted(_BARE_VAR.finditer(original), key=lambda m: abs(m.start() - near))
    for m in bare[:_MAX_QUOTE_PROBES]:
        candidate = f'{original[: m.start()]}"{m.group(0)}"{original[m.end() :]}'
        root = parser.parse(substitute(candidate, spec.expando).encode()).root_node
        if not root.has_error and root.named_child_count == 1:
            return (
                f"{m.group(0)} stands where {spec.name} expects a string literal: quote it, "
                f"e.g. `{candidate}` (the metavariable then matches the string's content)"
            )
    return None


def fragment_hint(parser: Parser, src: str, spec: LangSpec, original: str, near: int = 0) -> str:
    """A sentence saying how to rewrite ``original`` (``src`` is it after substitution; the
    parse went wrong at code point ``near``), from at most ``MAX_HINT_PARSES`` trial parses, and
    none for a pattern longer than ``HINT_PROBE_CHARS``."""
    if len(original) > HINT_PROBE_CHARS:
        return _GENERIC_HINT.format(name=spec.name)
    for prefix, suffix in (*_FRAGMENT_CONTEXTS, *spec.contexts):
        data = (prefix + src + suffix).encode()
        root = parser.parse(data).root_node
        if root.has_error:
            continue
        start = len(prefix.encode())
        node = node_with_span(root, start, start + len(src.encode()))
        if node is None or not node.is_named:
            continue
        context = f"{prefix}{original}{suffix}".strip()
        return (
            f"it reads as a fragment of a larger construct; write the larger construct and "
            f"pick the part with a selector, e.g. the context pattern `{context}` with "
            f"selector={node.type}"
        )
    quoted = _quoted_hint(parser, spec, original, near)
    if quoted is not None:
        return quoted
    for tail in _COMPLETIONS:
        candidate = original + tail
        root = parser.parse(substitute(candidate, spec.expando).encode()).root_node
        if not root.has_error and root.child_count == 1:
            return (
                f"it is not a complete {spec.name} construct; complete it so it parses on its "
                f"own, e.g. `{candidate.strip()}` (`$$$NAME` stands for any number of nodes)"
            )
    return _GENERIC_HINT.format(name=spec.name)
