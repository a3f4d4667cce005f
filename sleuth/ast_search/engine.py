"""The public entry of structural search: ``compile_pattern`` -> ``AstPattern.find``.

``find`` never runs the Python matcher on every node: a tree-sitter ``Query`` on the kind of
the pattern's root (run in C) yields the candidate nodes, a byte search drops candidates that
lack one of the pattern's literal leaf texts, and only the rest are matched in Python. Matches
come back in document order with nested matches included, as ``ast-grep run`` reports them.

``literals`` is the prefilter hint (docs/architecture.md#engine-boundaries-are-small-protocols:
returning None is never wrong): leaf texts the matcher compares verbatim, so every matching file
contains them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from tree_sitter import Node, Query, QueryCursor, QueryError, Tree

from sleuth.ast_search.languages import LangSpec, get_lang_spec
from sleuth.ast_search.matcher import STRICTNESS, Env, Matcher
from sleuth.ast_search.pattern import compile_tree
from sleuth.ast_search.pattern_nodes import CompiledPattern, PNode, Tag, fixed_text
from sleuth.ast_search.trees import parse
from sleuth.errors import InvalidQuery
from sleuth.prefilter import Literals

__all__ = ["Literals", "Capture", "AstMatch", "AstPattern", "compile_pattern"]

_MAX_LITERALS = 6
_CHECK_LITERALS = 2  # exact leaf texts checked per candidate before the Python matcher


@dataclass(frozen=True)
class Capture:
    """A metavariable's binding: ``nodes`` named nodes in [start_byte, end_byte).

    For ``$$$`` captures the range runs from the first captured node to the last, punctuation
    between them included; ``nodes`` counts the named nodes only (``foo(1, 2)`` gives 2). An
    empty ``$$$`` capture has ``nodes == 0`` and an empty range where the nodes would be.
    """

    nodes: int
    start_byte: int
    end_byte: int


@dataclass(frozen=True)
class AstMatch:
    """One match: the matched node's byte range and the named captures."""

    start_byte: int
    end_byte: int
    captures: dict[str, Capture]


class AstPattern:
    """A compiled structural pattern for one language."""

    def __init__(
        self,
        compiled: CompiledPattern,
        spec: LangSpec,
        strictness: str,
        text: str,
        selector: str | None,
    ) -> None:
        self.lang = spec.name
        self.args: tuple[str, str, str | None, str] = (text, spec.name, selector, strictness)
        """(pattern, lang, selector, strictness): enough to compile it again (in a worker)."""
        self.spec = spec
        self.strictness = strictness
        self._compiled = compiled
        self._root = compiled.root
        self._query = _candidate_query(spec, compiled, strictness)
        self._exact = _exact_leaves(self._root, strictness)[:_CHECK_LITERALS]
        self._gate = fixed_text(self._root)

    def __repr__(self) -> str:
        return f"AstPattern(lang={self.lang!r}, strictness={self.strictness!r})"

    @property
    def warning(self) -> str | None:
        """What was recovered from a pattern that does not parse cleanly, else None."""
        return self._compiled.warning

    @cached_property
    def literals(self) -> Literals | None:
        """Lower-cased leaf texts every matching file contains, or None."""
        texts = [t.lower() for t in _exact_leaves(self._root, self.strictness)]
        texts += [t.lower() for t in _keywords(self._root, self.strictness)]
        if len(self._gate) >= 2:
            texts.append(self._gate.lower())
        unique = sorted(set(texts), key=lambda t: (-len(t), t))[:_MAX_LITERALS]
        return tuple((t,) for t in unique) or None

    def parse(self, data: bytes) -> Tree:
        """Parse ``data`` with this pattern's language (a per-thread parser)."""
        return parse(self.lang, data)

    def find(self, data: bytes, tree: Tree | None = None) -> list[AstMatch]:
        """Every match in ``data`` (parsed as ``tree`` if given), in document order."""
        if self._gate and self._gate not in data:
            return []  # ast-grep searches only the files that hold the pattern's longest text
        if tree is None:
            tree = self.parse(data)
        matcher = Matcher(self.strictness, data)
        out: list[AstMatch] = []
        root = self._root
        exact = self._exact
        for node in self._candidates(tree, data):
            start, end = node.start_byte, node.end_byte
            if exact and any(data.find(t, start, end) < 0 for t in exact):
                continue
            env = matcher.match_root(root, node)
            if env is not None:
                out.append(AstMatch(start, end, _captures(env)))
        return out

    def _candidates(self, tree: Tree, data: bytes) -> list[Node]:
        """Nodes of the root's kind, in document (pre-)order."""
        if self._exact:
            rare = min(self._exact, key=data.count)
            if data.count(rare) <= len(data) // 1000 + 16:
                return self._around(tree, data, rare)
        if self._query is None:
            return _walk(tree, self._compiled, self.strictness)
        # matches() of a one-node query come in pre-order (captures() do not)
        return [caps["n"][0] for _, caps in QueryCursor(self._query).matches(tree.root_node)]

    def _around(self, tree: Tree, data: bytes, literal: bytes) -> list[Node]:
        """Candidates that contain ``literal``: ancestors of its (few) occurrences.

        A named pattern leaf matches a target node with exactly its text, so every match is
        an ancestor of some occurrence; this costs occurrences x depth instead of a tree walk.
        """
        kind_id = self._compiled.root_kind_id
        if kind_id is None:
            kind_id = self._root.kind_id
        any_kind = self._compiled.any_kind(self.strictness)
        root = tree.root_node
        seen: dict[int, Node] = {}
        pos = data.find(literal)
        while pos >= 0:
            node: Node | None = root.descendant_for_byte_range(pos, pos + len(literal))
            chain: list[Node] = []
            while node is not None:
                if any_kind or node.kind_id == kind_id:
                    chain.append(node)
                node = node.parent
            for found in reversed(chain):  # outer first, so equal ranges keep pre-order
                seen.setdefault(found.id, found)
            pos = data.find(literal, pos + 1)
        return sorted(seen.values(), key=lambda n: (n.start_byte, -n.end_byte))


def compile_pattern(
    pattern: str, lang: str, *, selector: str | None = None, strictness: str = "smart"
) -> AstPattern:
    """Compile an ``ast:`` pattern for ``lang`` (a name or alias).

    Raises ``Unsupported`` for an unknown language and ``InvalidQuery`` for a bad strictness,
    an unknown selector kind, or a pattern that does not parse as one node.
    """
    spec = get_lang_spec(lang)
    if strictness not in STRICTNESS:
        raise InvalidQuery(
            f"unknown strictness {strictness!r}: use one of {', '.join(STRICTNESS)}",
            details={"strictness": strictness, "known": list(STRICTNESS)},
        )
    compiled = compile_tree(pattern, spec, selector)
    return AstPattern(compiled, spec, strictness, pattern, selector)


def _captures(env: Env) -> dict[str, Capture]:
    out = {name: Capture(1, node.start_byte, node.end_byte) for name, node in env.single.items()}
    for name, multi in env.multi.items():
        if multi.nodes:
            named = sum(1 for n in multi.nodes if n.is_named)
            out[name] = Capture(named, multi.nodes[0].start_byte, multi.nodes[-1].end_byte)
        else:
            out[name] = Capture(0, multi.position, multi.position)
    return out


def _candidate_query(spec: LangSpec, compiled: CompiledPattern, strictness: str) -> Query | None:
    """A query capturing every node of the root's kind as ``@n``; None means walk the tree."""
    root = compiled.root
    if root.tag is not Tag.META and compiled.any_kind(strictness):
        # an ERROR root, or template: any kind (``_`` alone leaves out ERROR nodes)
        return Query(spec.ts_language, "[_ (ERROR)] @n")
    if compiled.root_kind is not None:
        kind, named = compiled.root_kind, True
        if spec.ts_language.id_for_node_kind(kind, True) is None:
            named = False
    elif root.tag is Tag.META:
        assert root.var is not None
        # ``(_)`` leaves out ERROR nodes, which a lone metavariable matches in ast-grep too
        source = "[(_) (ERROR)] @n" if root.var.kind.value == "single" else "[_ (ERROR)] @n"
        return Query(spec.ts_language, source)
    else:
        kind, named = root.kind, root.named
    if named:
        source = f"({kind}) @n"
    else:
        escaped = kind.replace("\\", "\\\\").replace('"', '\\"')
        source = f'"{escaped}" @n'
    try:
        return Query(spec.ts_language, source)
    except QueryError:
        return None


def _walk(tree: Tree, compiled: CompiledPattern, strictness: str) -> list[Node]:
    """Fallback candidate search (a kind the query language cannot name): a cursor walk."""
    root = compiled.root
    kind_id = compiled.root_kind_id if compiled.root_kind_id is not None else root.kind_id
    any_kind = compiled.any_kind(strictness)
    out: list[Node] = []
    cursor = tree.walk()
    while True:
        node = cursor.node
        if node is not None and (any_kind or node.kind_id == kind_id):
            out.append(node)
        if cursor.goto_first_child() or cursor.goto_next_sibling():
            continue
        while True:
            if not cursor.goto_parent():
                return out
            if cursor.goto_next_sibling():
                break


def _exact_leaves(node: PNode, strictness: str) -> list[bytes]:
    """Texts of named pattern leaves, compared verbatim by every strictness but signature."""
    if strictness == "signature":
        return []
    out: list[bytes] = []
    stack = [node]
    while stack:
        cur = stack.pop()
        if cur.tag is Tag.TERMINAL and cur.named and len(cur.text) >= 2:
            out.append(cur.text)
        stack.extend(cur.children)
    out.sort(key=len, reverse=True)
    return out


def _keywords(node: PNode, strictness: str) -> list[bytes]:
    """Keyword tokens (unnamed leaves spelled like their kind) that cst/smart require."""
    if strictness not in ("cst", "smart"):
        return []
    out: list[bytes] = []
    stack = [node]
    while stack:
        cur = stack.pop()
        text = cur.text
        if (
            cur.tag is Tag.TERMINAL
            and not cur.named
            and len(text) >= 2
            and text.isascii()
            and text.isalpha()
            and text.decode() == cur.kind
        ):
            out.append(text)
        stack.extend(cur.children)
    return out
