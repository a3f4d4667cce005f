"""The pattern compiler: pattern text -> a tree of ``PNode`` the matcher walks
(docs/query.md#ast-structural-patterns).

Steps, as ast-grep takes them: substitute metavariable sigils with the language's expando
character, parse, descend through single-child wrappers (``module > expression_statement >
call`` gives a pattern rooted at the call), and turn every node whose whole text is one
metavariable into that metavariable (the outermost such node wins). The pattern is parsed
without its surrounding white space, and also as given when that is another clean reading
(ast-grep parses it as given: a Rust doc comment's token holds its newline).

Unlike ast-grep, a pattern whose parse holds an ERROR or MISSING node (or a kind the language
table marks as a misreading, such as C's ``macro_type_specifier``) is first retried in the
language's code contexts (a function body for Go, Java, C#, Kotlin, Swift, C, C++, Rust). One
clean in none of them is read from its top-level parse as ast-grep reads it (``recovery``),
with a warning and a hint; only one that would then match anything, or is not one
node, is an ``InvalidQuery`` with the position and the hint.

Compiling costs time linear in the pattern's size: a bounded number of parses per language
(the top level, each code context, and on the error and recovery paths the hint's trial parses,
only for patterns up to ``HINT_PROBE_CHARS``), and walks that visit each node once, without
recursion, slicing only texts short enough to be a metavariable.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from tree_sitter import Node, Parser

from sleuth.ast_search.languages import LangSpec
from sleuth.ast_search.meta_var import substitute
from sleuth.ast_search.pattern_nodes import (
    MAX_PATTERN_DEPTH,
    CompiledPattern,
    PNode,
    Tag,
    anchored,
    pattern_tree,
)
from sleuth.ast_search.pattern_reading import (
    container_kind,
    ends_with_token,
    find_kind,
    has_kind,
    is_single,
    misreading_warning,
    node_with_span,
    reading_warning,
    relexed,
    selected_reading_warning,
    type_name_warning,
)
from sleuth.ast_search.recovery import (
    ERROR_KIND_ID,
    HINT_PROBE_CHARS,
    MAX_HINT_PARSES,
    error_position,
    find_problem,
    fragment_hint,
    recovered_parts,
    recovery_warning,
)
from sleuth.errors import InvalidQuery

__all__ = ["Tag", "PNode", "CompiledPattern", "compile_tree", "MAX_PATTERN_CHARS"]
__all__ += ["MAX_PATTERN_DEPTH", "HINT_PROBE_CHARS", "MAX_HINT_PARSES", "ERROR_KIND_ID"]

MAX_PATTERN_CHARS = 16 * 1024
"""The same cap as a whole query (``query.request.MAX_QUERY_CHARS``): a longer pattern is
``invalid_query`` whichever door it comes through."""


@dataclass
class _Attempt:
    node: Node | None
    data: bytes
    problem: tuple[int, str] | None  # (byte offset in the pattern, what is wrong)
    suspect: bool = False
    root: Node | None = None  # the parse, kept when it holds an error (to recover from)


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
    named = (True, False)
    if selector is not None and all(lang.id_for_node_kind(selector, n) is None for n in named):
        raise InvalidQuery(
            f"selector {selector!r} is not a node kind of {spec.name}: name a kind of the "
            f"{spec.name} grammar (as `ast-grep run --debug-query=cst` shows them)",
            details={"selector": selector, "position": 0, "hint": "check the selector"},
        )
    parser = Parser(lang)
    top = _attempt(parser, src, ("", ""), selector, spec)
    if top.node is not None and not top.suspect:
        compiled = _finish(top, spec, selector, lead)
        if pattern != stripped:
            return _as_given(parser, pattern, spec, selector, compiled)
        return compiled
    # the node ast-grep's top-level parse gives without a selector: picked once, asked thrice
    plain = top if top.root is None else _pick(top.root, top.data, None, spec)
    type_name = _as_type_name(parser, top, plain.node, src, selector, spec, lead)
    if type_name is not None:
        return type_name
    for context in spec.contexts:
        retry = _attempt(parser, src, context, selector, spec)
        if retry.node is not None and not retry.suspect and not relexed(top.root, retry.node):
            compiled = _finish(retry, spec, selector, lead)
            misread = plain.node if selector is None else None
            if misread is not None and has_kind(misread, spec.retry_kinds):
                warning = misreading_warning(spec.name, misread.type, retry.node.type)
                return replace(compiled, warning=warning)
            theirs = _their_reading(top, plain, spec, selector, lead)
            if theirs is not None and theirs[1].root != compiled.root:
                # ast-grep parses at the top level only: its reading is the answer, and the
                # body's reading is one selector away (docs/query.md#strictness-and-selector)
                if selector is not None:
                    warning = selected_reading_warning(spec.name, selector)
                else:
                    warning = reading_warning(spec.name, theirs[0].type, retry.node.type)
                return replace(theirs[1], warning=warning)
            return compiled
    if top.node is not None:
        return _finish(top, spec, selector, lead)
    return _recover(parser, top, spec, selector, pattern, src)


def _as_given(
    parser: Parser, pattern: str, spec: LangSpec, selector: str | None, stripped: CompiledPattern
) -> CompiledPattern:
    """The pattern read with its surrounding white space when that reading parses cleanly too
    and is another one, else ``stripped`` (its reading without): ast-grep parses a pattern as
    given, and some tokens hold white space (a Rust doc comment its newline, a Markdown list
    item its indentation)."""
    given = _attempt(parser, substitute(pattern, spec.expando), ("", ""), selector, spec)
    if given.node is None or given.suspect:
        return stripped
    compiled = _finish(given, spec, selector, 0)
    return stripped if compiled.root == stripped.root else compiled


def _their_reading(
    top: _Attempt, plain: _Attempt, spec: LangSpec, selector: str | None, lead: int
) -> tuple[Node, CompiledPattern] | None:
    """ast-grep's reading of a pattern whose top-level parse holds an error, when it is a
    construct of its own: the node that parse gives (``plain``, or the selector's first one)
    and the pattern compiled from it. None when the parse is clean (a suspect reading), its
    node is an ERROR or holds a kind known to be a misreading (``retry_kinds``: Go's call read
    as a type conversion, C's as a macro type, whose function-body reading is the point), or
    the reading would match anything."""
    if top.node is not None or top.root is None:
        return None
    picked = plain if selector is None else _pick(top.root, top.data, selector, spec)
    node = picked.node
    if node is None or node.is_error or has_kind(node, spec.retry_kinds):
        return None
    compiled = _recovered(picked, spec, selector, lead)
    if compiled is None or (selector is None and not anchored(compiled.root)):
        return None
    return node, compiled


def _as_type_name(
    parser: Parser,
    top: _Attempt,
    picked: Node | None,
    src: str,
    selector: str | None,
    spec: LangSpec,
    lead: int,
) -> CompiledPattern | None:
    """A qualified name alone (C++'s ``std::string``, ``std::vector<$T>``, Rust's
    ``fmt::Debug``) read as the type ast-grep reads it, where this grammar's top-level parse
    (whose node is ``picked``) makes an expression of it (the name an ``identifier``, not a
    ``type_identifier``: they match different nodes); a selector picks its node from that
    reading. None for any other pattern."""
    if spec.name_context is None or top.root is None or picked is None:
        return None
    first = top.root.child(0)
    if not spec.name_after_missing and (first is None or not first.is_error):
        return None
    inner = picked.named_child(0) if picked.named_child_count == 1 else None
    if inner is not None and inner.byte_range == picked.byte_range:
        picked = inner  # a statement around the name alone (with a MISSING `;`)
    if picked.type not in spec.name_kinds:
        return None
    named = _attempt(parser, src, spec.name_context, selector, spec)
    if named.node is None:
        return None
    compiled = _finish(named, spec, selector, lead)
    return replace(compiled, warning=type_name_warning(spec.name, named.node.type))


def _recover(
    parser: Parser,
    top: _Attempt,
    spec: LangSpec,
    selector: str | None,
    pattern: str,
    src: str,
) -> CompiledPattern:
    """The pattern read from the top-level parse ``top`` as ast-grep reads it, with its warning
    (docs/query.md#patterns-that-do-not-parse-cleanly); ``InvalidQuery`` with the position of
    the first problem and a hint when ast-grep refuses it too, or when it would match anything."""
    assert top.problem is not None
    stripped = pattern.strip()
    lead = len(pattern) - len(pattern.lstrip())
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
    degenerate = False
    if top.root is not None:
        recovered = _pick(top.root, top.data, selector, spec)
        compiled = _recovered(recovered, spec, selector, lead)
        if compiled is not None and (selector is not None or anchored(compiled.root)):
            assert recovered.node is not None
            node, data = recovered.node, recovered.data
            parts = recovered_parts(
                top.root, node, data, spec.expando, src, lead, selected=selector is not None
            )
            return replace(compiled, warning=recovery_warning(spec.name, pattern, parts, hint))
        degenerate = compiled is not None
    also = "; read as ast-grep reads it, it would match any node" if degenerate else ""
    raise InvalidQuery(
        f"the ast: pattern does not parse as one {spec.name} node ({what} at character "
        f"{position}{also}): {hint}",
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
    problem = find_problem(root, data, spec.expando, len(suffix.encode()))
    if problem is not None:
        bad, what = problem
        kept = root if not (prefix or suffix) else None  # only the top level is recovered
        return _Attempt(None, data, (max(0, min(bad, end) - start), what), root=kept)
    if prefix or suffix:
        top = node_with_span(root, start, end)
        if top is None and suffix.startswith(";"):  # a statement that needed the ";"
            top = node_with_span(root, start, end + 1)
            if top is not None and not ends_with_token(top, end):
                top = None  # the ";" made a statement of its own (``if ($A);``): not a reading
        if top is None:
            return _Attempt(None, data, (0, "no single node"))
        if not is_single(top) and top.type == container_kind(parser, context):
            return _Attempt(None, data, (0, "several top-level nodes"))
        return _select(top, data, selector, spec)
    return _pick(root, data, selector, spec)


def _pick(root: Node, data: bytes, selector: str | None, spec: LangSpec) -> _Attempt:
    """The pattern node of a top-level parse, chosen as ast-grep chooses it: the selector's
    first node, or the root's single child (descending through single-child wrappers)."""
    if selector is None:
        if root.child_count == 0:
            return _Attempt(None, data, (0, "no code"))
        if not is_single(root):
            second = root.child(1)
            assert second is not None
            return _Attempt(None, data, (second.start_byte, "several top-level nodes"))
    return _select(root, data, selector, spec)


def _select(top: Node, data: bytes, selector: str | None, spec: LangSpec) -> _Attempt:
    if selector is not None:
        found = find_kind(top, selector)
        if found is None:
            return _Attempt(None, data, (0, f"no {selector} node"))
        node = found
    else:
        node = top
        while is_single(node):
            child = node.child(0)
            assert child is not None
            node = child
    suspect = bool(spec.retry_kinds) and has_kind(node, spec.retry_kinds)
    return _Attempt(node, data, None, suspect)


def _recovered(
    attempt: _Attempt, spec: LangSpec, selector: str | None, lead: int
) -> CompiledPattern | None:
    """The pattern read from a parse with errors, or None when ast-grep would refuse it too
    (not one node, no selector node) or it nests too deep (the parse error is then reported)."""
    root = None if attempt.node is None else pattern_tree(attempt.node, attempt.data, spec.expando)
    return None if root is None else _compiled(root, attempt, selector, lead)


def _finish(attempt: _Attempt, spec: LangSpec, selector: str | None, lead: int) -> CompiledPattern:
    assert attempt.node is not None
    root = pattern_tree(attempt.node, attempt.data, spec.expando)
    if root is None:
        raise InvalidQuery(
            f"the ast: pattern nests more than {MAX_PATTERN_DEPTH} nodes deep: search for a "
            f"smaller part of the code, or stand a metavariable (`$A`) for the inner parts",
            details={"position": lead, "hint": "shorten or flatten the pattern"},
        )
    return _compiled(root, attempt, selector, lead)


def _compiled(root: PNode, attempt: _Attempt, selector: str | None, lead: int) -> CompiledPattern:
    assert attempt.node is not None
    if root.is_multi:
        raise InvalidQuery(
            "a `$$$` metavariable cannot stand alone as the whole pattern: use `$VAR` for "
            "one node, or wrap `$$$VAR` in a larger pattern such as `foo($$$VAR)`",
            details={"position": lead, "hint": "use $VAR or wrap $$$VAR in a larger pattern"},
        )
    kind_id = attempt.node.kind_id if selector is not None else None
    return CompiledPattern(root, selector, kind_id, attempt.data.decode(errors="replace"))
