"""Re-tagging a changed file from its previous tags: only the top-level statements it touched.

``tags_of(trees, path, stamp, data, lang)`` gives the same ``FileTags`` as
``extract_tags(path, data, lang)`` (tests/ast_search/test_tags_update.py checks it on random
edits), but when the ``TreeCache`` holds the file's previous version with its tags attached, it
reparses incrementally and runs the tags query only over the part the edit touched:

1. the *dirty* ranges are tree-sitter's changed ranges (where the tree's structure differs;
   outside them every character keeps identical ancestors) plus the edited bytes themselves (a
   name edited in place changes no structure);
2. the region redone is the span of the dirty ranges and of the top-level statements (the
   root's children) that meet one: every declaration and use lies inside one top-level
   statement (error recovery may leave bytes under none: the ranges cover those), and its
   container and enclosing declaration too, so what lies outside the region is the previous
   tags unchanged — before it as is, after it moved by the edit's byte and line delta;
3. the query runs on the region alone (``QueryCursor.set_byte_range``); what it finds inside
   the region is nested and attached as a full extraction would.

Anything that breaks the premise — a previous declaration or use straddling the region, a
match straddling it — falls back to a full extraction, so the answer never depends on the
shortcut. Files over the tags cap or in a language without rules are never parsed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from tree_sitter import Tree

from sleuth.ast_search.languages import ALIASES
from sleuth.ast_search.tag_rules import RULES
from sleuth.ast_search.tags import (
    MAX_TAGS_BYTES,
    FileTags,
    Kept,
    _collect,
    _compiled,
    _nest,
    _nested,
    _resolve_refs,
    extract_tags,
)
from sleuth.ast_search.trees import Previous, TreeCache
from sleuth.model import SymbolDef, SymbolRef

__all__ = ["tags_of", "retag"]


def tags_of(trees: TreeCache, path: str, stamp: str, data: bytes, lang: str) -> FileTags:
    """The tags of ``data`` (``path`` at ``stamp``), kept with its tree in ``trees``."""
    name = ALIASES.get(lang.strip().lower())
    if name is None or _compiled(name) is None or len(data) > MAX_TAGS_BYTES:
        return extract_tags(path, data, lang)  # refused before any parse
    rev = trees.revise(path, stamp, data, name)
    if isinstance(rev.attached, FileTags):
        return rev.attached
    tags = None
    if rev.previous is not None and isinstance(rev.previous.attached, FileTags):
        tags = retag(path, name, rev.previous, rev.tree, data)
    if tags is None:
        tags = extract_tags(path, data, name, rev.tree)
    trees.attach(path, stamp, tags)
    return tags


def _region(prev: Previous, tree: Tree) -> tuple[int, int]:
    """The new-coordinates span of the top-level statements the edit touched (and the edit)."""
    edit = prev.edit
    dirty = [(r.start_byte, r.end_byte) for r in prev.tree.changed_ranges(tree)]
    dirty.append((edit.start, edit.new_end))
    # the ranges themselves too: error recovery can leave bytes under no top-level node
    lo, hi = min(a for a, _ in dirty), max(b for _, b in dirty)
    for child in tree.root_node.children:
        cs, ce = child.start_byte, child.end_byte
        for a, b in dirty:
            if (cs < b and a < ce) if a < b else (cs <= a <= ce):
                lo, hi = min(lo, cs), max(hi, ce)
                break
    return lo, hi


_T = TypeVar("_T", SymbolDef, SymbolRef)


def _outside(
    items: list[_T], lo: int, hi: int, moved: Callable[[_T], _T]
) -> tuple[list[_T], list[_T]] | None:
    """``items`` (old coordinates) before ``[lo, hi)`` as they are and after it ``moved``;
    None when one straddles the span (those inside it are redone)."""
    before: list[_T] = []
    after: list[_T] = []
    for item in items:
        if item.end_byte <= lo:
            before.append(item)
        elif item.start_byte >= hi:
            after.append(moved(item))
        elif not (lo <= item.start_byte and item.end_byte <= hi):
            return None
    return before, after


def retag(path: str, lang: str, prev: Previous, tree: Tree, data: bytes) -> FileTags | None:
    """The tags of ``data`` from ``prev`` (whose ``attached`` are its tags) and the new
    ``tree``; None when the shortcut does not apply (the caller extracts in full)."""
    old = prev.attached
    query = _compiled(lang)
    if not isinstance(old, FileTags) or not old.complete or query is None:
        return None
    edit = prev.edit
    lo, hi = _region(prev, tree)
    delta = edit.delta
    old_lo, old_hi = lo, hi - delta
    lines = data.count(b"\n", edit.start, edit.new_end) - prev.data.count(
        b"\n", edit.start, edit.old_end
    )

    def moved_def(d: SymbolDef) -> SymbolDef:
        return d.moved(delta, lines)

    def moved_ref(r: SymbolRef) -> SymbolRef:
        return r.moved(delta, lines)

    def_parts = _outside(old.defs, old_lo, old_hi, moved_def)
    ref_parts = _outside(old.refs, old_lo, old_hi, moved_ref)
    if def_parts is None or ref_parts is None:
        return None  # a previous declaration or use straddles the region
    defs_before, defs_after = def_parts
    refs_before, refs_after = ref_parts

    rules = RULES[lang]
    raw_defs, raw_refs = _collect(query, tree, data, rules, (lo, hi))
    inside_defs = []
    for rd in raw_defs:
        if lo <= rd.node_start and rd.node_end <= hi:
            inside_defs.append(rd)
        elif rd.node_start < hi and lo < rd.node_end:
            return None  # a match straddling the region
    inside_refs = []
    for rr in raw_refs:
        if lo <= rr.start and rr.end <= hi:
            inside_refs.append(rr)
        elif rr.start < hi and lo < rr.end:
            return None
    defs = [*defs_before, *_nest(_nested(inside_defs, path, rules), path), *defs_after]
    refs = [*refs_before, *_resolve_refs(inside_refs, inside_defs, path), *refs_after]
    kept = Kept(old.memo, len(old.refs), len(refs_before), len(refs_after), hi)
    return FileTags(path, lang, defs, refs, kept=kept)
