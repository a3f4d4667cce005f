"""Patterns whose parse is not clean (docs/query.md#patterns-that-do-not-parse-cleanly): the
first problem of a parse, the checks that tell a context's reading of a pattern from a
misreading, the rewrite hints, and the recovered reading's warning.

A pattern that does not parse cleanly at top level is retried in the language's code contexts
(a function body, a class body, an initializer, each also with a ``;`` appended). A clean
parse there is the pattern's reading only if the pattern is one node of it: not several
statements of the context's list, not a ``;`` that became a statement of its own
(``if ($A);``), and not a keyword read as a name (``if ($A)`` as a call of ``if``).

Otherwise, as ast-grep does, the pattern is read from its top-level parse: a MISSING token is
left out, and an ERROR node matches a node of any kind whose children match the ERROR's
children, so sleuth matches exactly the nodes ast-grep matches; the answer's
``pattern_warning`` (docs/json.md#search) names every recovered part and adds the hint.
``pattern`` builds the tree and refuses a recovered pattern that would match anything (and one
that is not one node, with the same hint); the matcher gives ERROR its any-kind meaning.

The hint is found by a bounded number of trial parses: a context and selector for a fragment
(``{"a": $V}`` with ``selector=pair`` for ``"a": $V``), the quoting of a metavariable standing
where a string literal goes, or a completion that parses (``class $C: $$$BODY``), and only for
patterns up to ``HINT_PROBE_CHARS``: the hints are for short fragments, and the trial parses
would otherwise dominate the cost of a long pattern.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node, Parser

from sleuth.ast_search.languages import LangSpec
from sleuth.ast_search.meta_var import node_meta_var, substitute
from sleuth.ast_search.pattern_reading import node_with_span

__all__ = ["ERROR_KIND_ID", "Part", "find_problem", "recovered_parts", "recovery_warning"]
__all__ += ["HINT_PROBE_CHARS", "MAX_HINT_PARSES", "fragment_hint", "error_position"]

ERROR_KIND_ID = 65535
"""tree-sitter's built-in ERROR symbol (``(TSSymbol)-1``): the same id in every grammar."""
_MAX_NAMED_PARTS = 3  # parts spelled out in a warning; the rest are counted
_MAX_SNIPPET = 40  # code points of a part quoted in a warning


@dataclass(frozen=True)
class Part:
    """One recovered part of a pattern, in code points of the pattern as given."""

    start: int
    end: int
    missing: str | None = None  # the token kind of a MISSING node; None for an ERROR node
    around: str | None = None  # an ERROR around the pattern's node (of this kind): passed by


def recovered_parts(
    root: Node, node: Node, data: bytes, expando: str, src: str, lead: int, *, selected: bool
) -> list[Part]:
    """The recovered parts of the pattern ``node`` chosen in the parse ``root``, in order:
    the ERROR nodes around it (descended through, as single-child wrappers are), then the
    outermost ERROR nodes and the MISSING tokens inside it.

    ``data`` is ``src`` encoded (the top-level parse), ``lead`` the whitespace stripped before
    it; a subtree whose text is one metavariable becomes that metavariable, so nothing inside
    it is recovered. Errors outside ``node`` (beside a selector's node) change nothing it
    matches and are not listed, nor are those around a ``selected`` node (its context). One
    walk with its own stack (patterns may nest deeply).
    """

    def span(n: Node) -> tuple[int, int]:
        return lead + error_position(src, n.start_byte), lead + error_position(src, n.end_byte)

    out: list[Part] = []
    up = None if selected else node.parent
    while up is not None and up.id != root.id:
        if up.is_error:
            out.append(Part(*span(up), around=node.type))
        up = up.parent
    out.reverse()
    stack = [node]
    while stack:
        cur = stack.pop()
        if not cur.has_error and not cur.is_missing:
            continue
        if node_meta_var(cur, data, expando) is not None:
            continue
        if cur.is_missing or cur.is_error:
            out.append(Part(*span(cur), missing=cur.type if cur.is_missing else None))
            continue
        stack.extend(reversed(cur.children))
    return out


def recovery_warning(lang: str, pattern: str, parts: list[Part], hint: str) -> str:
    """The ``pattern_warning`` of a recovered ``pattern`` (as given): what was recovered and
    how, then ``hint`` (how to write the pattern so that it parses cleanly)."""
    said = [_describe(pattern, part) for part in parts[:_MAX_NAMED_PARTS]]
    if len(parts) > _MAX_NAMED_PARTS:
        said.append(f"{len(parts) - _MAX_NAMED_PARTS} more recovered parts")
    if not said:  # the errors lie beside the selector's node
        said.append("the errors lie outside the selected node and change nothing it matches")
    return (
        f"the ast: pattern does not parse cleanly as {lang}; it is matched as ast-grep reads "
        f"it: {'; '.join(said)}. If that is not what you mean: {hint}"
    )


def _describe(pattern: str, part: Part) -> str:
    if part.missing is not None:
        return f"the missing {part.missing!r} at character {part.start} is left out"
    text = pattern[part.start : part.end]
    if len(text) > _MAX_SNIPPET:
        text = text[: _MAX_SNIPPET - 1] + "…"
    text = " ".join(text.split())  # one line, whatever the pattern's layout
    where = f"`{text}` (characters {part.start}-{part.end}) is an ERROR node"
    if part.around is not None:
        return f"{where} around one {part.around}, which is the pattern"
    return f"{where}, which matches a node of any kind with the same children"


def find_problem(
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


def _is_var_text(node: Node, data: bytes, expando: str) -> bool:
    return node_meta_var(node, data, expando) is not None


# -- reading a pattern inside a code context ----------------------------------------------
HINT_PROBE_CHARS = 1024
"""A pattern that does not parse gets a rewrite hint found by trial parses (fragment contexts,
quoting, completions) only up to this size."""
_MAX_QUOTE_PROBES = 4  # bare metavariables (nearest the error first) tried inside quotes

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
