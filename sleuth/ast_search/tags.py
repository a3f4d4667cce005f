"""Syntactic symbols: the declarations and uses of names in one file, from tree-sitter tags.

``extract_tags(path, data, lang)`` runs one compiled query per language (the grammar's
tags.scm plus the patterns of ``tag_rules``) once over the file, in document order, and gives
``FileTags``: every ``SymbolDef`` (kind from ``@definition.KIND``, the whole ``@definition``
node as range, the ``@name`` node as name range, the container from nesting) and every
``SymbolRef`` (calls, references, imports, base classes), each ref knowing the id of the
innermost declaration holding it. This is the ``"precision": "syntactic"`` fallback of
docs/query.md#symbols-and-symbolid-declarations and the node/edge source of the graph
(docs/query.md#graph-the-reference-graph). ``extract_tag_tuples`` gives the same answer as plain
tuples, for callers that only pass it on (a cold graph build's worker processes).

Choices, written down:

- A ref's range is its name's range (what a rename or a highlight touches); a ref whose range
  is a declaration's own name is dropped, and two refs on one name keep the most specific kind
  (import > inherit > call > reference).
- A function whose container is a class (or interface, struct, trait, type, Go receiver, Rust
  impl, C++ ``A::``) is a ``"method"``.
- Imports: ``name`` is the imported name, ``module`` the module as written
  (``from pkg.mod import f`` -> f / pkg.mod; ``import pkg.mod`` -> pkg.mod / pkg.mod;
  ``import * as ns from "m"``, ``require("m")`` -> m / m; ``from m import *`` -> * / m).
- Files over ``MAX_TAGS_BYTES`` (2 MiB, generated code in practice) are not tagged:
  ``complete=False, reason="too large for tags"``. A file with syntax errors is tagged from
  its valid parts and stays complete (tree-sitter recovers around the error).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

from tree_sitter import Node, Query, QueryCursor, Tree

from sleuth.ast_search.languages import ALIASES, get_ts_language
from sleuth.ast_search.tag_rules import CLASS_KINDS, RULES, TagRules
from sleuth.ast_search.trees import parse
from sleuth.model import SymbolDef, SymbolRef, symbol_id

__all__ = [
    "FileTags",
    "Kept",
    "extract_tags",
    "extract_tag_tuples",
    "tags_supported",
    "MAX_TAGS_BYTES",
    "DefTuple",
    "RefTuple",
]

MAX_TAGS_BYTES = 2 * 1024 * 1024

# The most specific kind wins when two patterns tag the same name (edge kinds:
# docs/json.md#graph-matches).
_REF_PRIORITY = {"import": 3, "inherit": 2, "call": 1, "reference": 0}
_REF_KINDS = {"call": "call", "send": "call", "import": "import", "inherit": "inherit"}


@dataclass(frozen=True)
class FileTags:
    """The declarations and uses of names in one file (``complete=False`` says why not).

    ``kept`` (a re-tag's answer, ``tags_update.retag``) says which uses are the previous
    version's, unchanged or moved; ``memo`` holds what a consumer derived from these tags for
    the next version to reuse (the graph keeps each use's receiver there). Neither takes part
    in comparisons: equal tags are equal however they were made.
    """

    path: str
    lang: str
    defs: list[SymbolDef] = field(default_factory=list)
    refs: list[SymbolRef] = field(default_factory=list)
    complete: bool = True
    reason: str | None = None
    kept: Kept | None = field(default=None, compare=False, repr=False)
    memo: dict[str, object] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class Kept:
    """How a re-tag's uses relate to the previous version's: its first ``before`` uses are the
    previous first ``before`` ones, unchanged, with every byte before them; its last ``after``
    uses are the previous last ``after`` ones moved, with every byte from ``hi`` (new
    coordinates) on the previous bytes from ``hi`` minus the edit's delta. ``memo`` is the
    previous version's ``FileTags.memo`` and ``count`` its number of uses (the previous tags
    themselves are not held: each version would hold the one before, and so on)."""

    memo: dict[str, object]
    count: int
    before: int
    after: int
    hi: int


@dataclass(slots=True)
class _Def:
    """A definition before its container is known."""

    node_start: int
    node_end: int
    line: int
    end_line: int
    name: str
    name_start: int
    name_end: int
    kind: str
    pattern: int
    owner: str | None
    container: str = ""
    id: str = ""

    @property
    def qualified(self) -> str:
        return f"{self.container}.{self.name}" if self.container else self.name


@dataclass(slots=True)
class _Ref:
    name: str
    kind: str
    start: int
    end: int
    line: int
    module: str | None


def _canonical(lang: str) -> str | None:
    return ALIASES.get(lang.strip().lower())


def tags_supported(lang: str) -> bool:
    """Whether ``lang`` (a name or alias) has definition and reference rules."""
    name = _canonical(lang)
    return name is not None and _compiled(name) is not None


@cache
def _compiled(lang: str) -> Query | None:
    """The tags query of ``lang`` (tags.scm + our patterns), compiled once per process."""
    rules = RULES.get(lang)
    if rules is None:
        return None
    try:
        return Query(get_ts_language(lang), rules.query_text())
    except (FileNotFoundError, ImportError, ValueError, SyntaxError, NameError):
        return None


def _text(data: bytes, node: Node) -> str:
    # slicing the source is much cheaper than ``node.text`` (measured ~10x)
    return data[node.start_byte : node.end_byte].decode("utf-8", "replace")


def extract_tags(
    path: str,
    data: bytes,
    lang: str,
    tree: Tree | None = None,
    *,
    max_bytes: int = MAX_TAGS_BYTES,
) -> FileTags:
    """Tag one file: its declarations and references (see the module docstring).

    ``tree`` is the parse tree of ``data`` if the caller has one (e.g. from ``TreeCache``);
    a file over ``max_bytes`` is not tagged (``complete=False``).
    """
    found = _extract(path, data, lang, tree, max_bytes)
    if isinstance(found, FileTags):
        return found
    name, raw_defs, raw_refs = found
    return FileTags(path, name, _nest(raw_defs, path), _resolve_refs(raw_refs, raw_defs, path))


DefTuple = tuple[str, str, str, str, int, int, int, int, int, int]
"""(id, name, kind, container, start_byte, end_byte, line, end_line, name_start, name_end):
a ``SymbolDef`` of the file without its path, as a plain tuple."""
RefTuple = tuple[str, str, int, int, int, str | None, str | None, str | None]
"""(name, kind, start_byte, end_byte, line, enclosing, target, module): a ``SymbolRef`` of the
file without its path, as a plain tuple."""


def extract_tag_tuples(
    path: str, data: bytes, lang: str
) -> tuple[str, list[DefTuple], list[RefTuple], bool, str | None]:
    """``extract_tags`` as plain tuples: (lang, defs, refs, complete, reason) — the same
    answer without a ``SymbolDef``/``SymbolRef`` object per name (a cold graph build's
    workers send tuples on anyway)."""
    found = _extract(path, data, lang, None, MAX_TAGS_BYTES)
    if isinstance(found, FileTags):
        return found.lang, [], [], found.complete, found.reason
    name, raw_defs, raw_refs = found
    defs = [
        (
            d.id,
            d.name,
            d.kind,
            d.container,
            d.node_start,
            d.node_end,
            d.line,
            d.end_line,
            d.name_start,
            d.name_end,
        )
        for d in raw_defs
    ]
    refs: list[RefTuple] = [
        (r.name, r.kind, r.start, r.end, r.line, enclosing, None, r.module)
        for r, enclosing in _enclosed(raw_refs, raw_defs)
    ]
    return name, defs, refs, True, None


def _declares(lang: str) -> bool:
    """Whether files of ``lang`` declare anything (Markdown, YAML, JSON, CSS, HCL... do not)."""
    from sleuth.languages import BY_NAME

    known = BY_NAME.get(lang)
    return known is None or known.declares


def _extract(
    path: str, data: bytes, lang: str, tree: Tree | None, max_bytes: int
) -> FileTags | tuple[str, list[_Def], list[_Ref]]:
    """The nested raw definitions and raw references of a file, or why it has none."""
    name = _canonical(lang)
    query = _compiled(name) if name is not None else None
    if name is None or query is None:
        if not _declares(lang):  # data and markup: nothing to declare, nothing missed
            return FileTags(path, lang, complete=True, reason=None)
        return FileTags(path, lang, complete=False, reason=f"no tags rules for {lang}")
    if len(data) > max_bytes:
        reason = f"too large for tags ({len(data)} bytes > {max_bytes})"
        return FileTags(path, name, complete=False, reason=reason)
    if tree is None:
        tree = parse(name, data)
    rules = RULES[name]
    raw_defs, raw_refs = _collect(query, tree, data, rules)
    return name, _nested(raw_defs, path, rules), raw_refs


# What one pattern of the query tags: ("def" | "ref", the capture naming the kind, the kind).
_Role = tuple[str, str, str] | None


def _role(captures: dict[str, list[Node]]) -> _Role:
    for capture in captures:
        if capture.startswith("definition."):
            return ("def", capture, capture[11:])
        if capture.startswith("reference."):
            return ("ref", capture, _REF_KINDS.get(capture[10:], "reference"))
    return None  # e.g. Go's ``(package_clause ... @name)``: a name with no role


def _collect(
    query: Query,
    tree: Tree,
    data: bytes,
    rules: TagRules,
    byte_range: tuple[int, int] | None = None,
) -> tuple[list[_Def], list[_Ref]]:
    """Run the query once and turn its matches into raw definitions and references
    (``byte_range``: only the matches that intersect it)."""
    defs: dict[tuple[int, int, int], _Def] = {}
    refs: dict[tuple[int, int], _Ref] = {}
    roles: dict[int, _Role] = {}
    cursor = QueryCursor(query)
    if byte_range is not None:
        cursor.set_byte_range(*byte_range)
    ignore = rules.ignore_refs
    for pattern, captures in cursor.matches(tree.root_node):
        role = roles[pattern] if pattern in roles else roles.setdefault(pattern, _role(captures))
        names = captures.get("name")
        if role is None or not names:
            continue
        if role[0] == "def":
            _add_def(defs, captures[role[1]][0], names[0], role[2], pattern, data, rules)
            continue
        # a reference (most matches: inline, the per-call cost shows on a cold build)
        name_node, kind = names[0], role[2]
        start, end = name_node.start_byte, name_node.end_byte
        key = (start, end)
        old = refs.get(key)
        if old is not None and _REF_PRIORITY[old.kind] >= _REF_PRIORITY[kind]:
            continue
        name = data[start:end].decode("utf-8", "replace")
        if name in ignore:
            continue
        module = captures.get("module")
        module_text = _text(data, module[0]) if module else None
        if kind == "import":
            name = name.strip("\"'<>")
            module_text = (module_text or name).strip("\"'<>")
        refs[key] = _Ref(name, kind, start, end, name_node.start_point.row + 1, module_text)
    return sorted(defs.values(), key=lambda d: (d.node_start, -d.node_end)), sorted(
        refs.values(), key=lambda r: r.start
    )


def _add_def(
    defs: dict[tuple[int, int, int], _Def],
    node: Node,
    name_node: Node,
    kind: str,
    pattern: int,
    data: bytes,
    rules: TagRules,
) -> None:
    if rules.widen is not None:
        node = rules.widen(node)
    key = (node.start_byte, node.end_byte, name_node.start_byte)
    old = defs.get(key)
    if old is not None and old.pattern <= pattern:
        return  # the same declaration twice: the earlier, more specific pattern wins
    owner = rules.owner(node) if rules.owner is not None else None
    defs[key] = _Def(
        key[0],
        key[1],
        node.start_point.row + 1,
        node.end_point.row + 1,
        _text(data, name_node),
        key[2],
        name_node.end_byte,
        kind,
        pattern,
        owner,
    )


def _nested(raw: list[_Def], path: str, rules: TagRules) -> list[_Def]:
    """Give each definition (in place) its container and normalised kind, then its id
    (document order); returns ``raw``."""
    stack: list[_Def] = []
    for d in raw:
        while stack and stack[-1].node_end <= d.node_start:
            stack.pop()
        parent = stack[-1] if stack else None
        base = parent.qualified if parent is not None else ""
        d.container = f"{base}.{d.owner}" if base and d.owner else (d.owner or base)
        in_class = d.owner is not None or (parent is not None and parent.kind in CLASS_KINDS)
        if d.kind == "function" and in_class:
            d.kind = "method"
        elif d.kind == "method" and rules.demote_methods and not in_class:
            d.kind = "function"
        d.id = symbol_id(path, d.qualified, d.kind)
        stack.append(d)
    return raw


def _nest(raw: list[_Def], path: str) -> list[SymbolDef]:
    """The definitions (already ``_nested``) as ``SymbolDef``."""
    return [
        SymbolDef(
            d.id,
            d.name,
            d.kind,
            d.container,
            path,
            d.node_start,
            d.node_end,
            d.line,
            d.end_line,
            d.name_start,
            d.name_end,
        )
        for d in raw
    ]


def _enclosed(raw: list[_Ref], defs: list[_Def]) -> list[tuple[_Ref, str | None]]:
    """Drop refs that are a declaration's own name; pair each with the id of its innermost
    declaration."""
    def_names = {(d.name_start, d.name_end) for d in defs}
    out: list[tuple[_Ref, str | None]] = []
    stack: list[_Def] = []
    i = 0
    for r in raw:
        if (r.start, r.end) in def_names:
            continue
        while i < len(defs) and defs[i].node_start <= r.start:
            while stack and stack[-1].node_end <= defs[i].node_start:
                stack.pop()
            stack.append(defs[i])
            i += 1
        while stack and stack[-1].node_end < r.end:
            stack.pop()
        out.append((r, stack[-1].id if stack else None))
    return out


def _resolve_refs(raw: list[_Ref], defs: list[_Def], path: str) -> list[SymbolRef]:
    """The refs that are not a declaration's own name as ``SymbolRef``, each attached to its
    innermost declaration."""
    return [
        SymbolRef(r.name, r.kind, path, r.start, r.end, r.line, enclosing, None, r.module)
        for r, enclosing in _enclosed(raw, defs)
    ]
