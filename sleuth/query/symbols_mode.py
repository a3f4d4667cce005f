"""``symbols:NAME`` and ``symbol:#ID`` (docs/query.md#symbols-and-symbolid-declarations):
declarations, their references, one body.

Declarations come from a language server when one runs for the language (``precision:
"semantic"``), else from tree-sitter tags (``"syntactic"``; name equality is never reported as
semantic identity). Names match in tiers — exact, then case-insensitive, then fuzzy — and the
first tier with a declaration answers (``fallback`` says which). Each match is the declaration's
*name* (so ``:match`` is what a rename needs) and carries a ``symbol`` object: name, kind,
container, id, precision and the whole declaration range. With ``navigation="references"`` the
references of the declarations found are listed too, across the whole workspace, each naming
the declaration id it resolves to.

The answer is computed up front (declarations need the whole scope) and handed to the scanner
as per-file matches, so ordering, paging, stamps and references work as for every mode. The
planners take any ``SymbolFinder``; this module holds the tags one, and ``lsp_symbols`` the
servers' one and ``pick_finder``, which chooses (it imports this module, never the reverse).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from sleuth.ast_search import TreeCache, language_for_path
from sleuth.ast_search.tags import MAX_TAGS_BYTES, FileTags, extract_tags, tags_supported
from sleuth.errors import InvalidQuery, NotFound
from sleuth.model import SymbolDef, SymbolRef
from sleuth.prefilter import Literals
from sleuth.query.scan import Found
from sleuth.workspace import FileEntry, FileText, Workspace
from sleuth.workspace.text import whole_chars

__all__ = [
    "SymbolSource",
    "SymbolFinder",
    "TagsFinder",
    "TagsCache",
    "name_tier",
    "TIERS",
    "symbol_json",
    "plan_symbols",
]

TIERS = ("exact", "case-insensitive", "fuzzy")
SCAN_BUDGET_S = 20.0


def name_tier(query: str, name: str) -> int | None:
    """0 exact, 1 case-insensitive, 2 fuzzy (subsequence, case-insensitive), None no match."""
    if name == query:
        return 0
    low_q, low_n = query.lower(), name.lower()
    if low_n == low_q:
        return 1
    it = iter(low_n)
    if all(ch in it for ch in low_q):
        return 2
    return None


def symbol_json(d: SymbolDef, precision: str) -> dict[str, Any]:
    return {
        "name": d.name,
        "kind": d.kind,
        "container": d.container or None,
        "id": d.id,
        "precision": precision,
        "range": {
            "path": d.path,
            "start_byte": d.start_byte,
            "end_byte": d.end_byte,
            "line": d.line,
            "end_line": d.end_line,
        },
    }


_FAMILIES = {"cpp": "c", "typescript": "javascript", "tsx": "javascript"}


def _family(lang: str | None) -> str | None:
    """Languages whose files use each other's declarations share a family (C and C++ headers,
    JavaScript and TypeScript modules)."""
    return _FAMILIES.get(lang, lang) if lang is not None else None


class SymbolFinder(Protocol):
    """Where declarations and references come from (tags, or a language server)."""

    def precision_of(self, path: str) -> str:
        """``"semantic"`` when a language server answers for ``path``, else ``"syntactic"``."""
        ...

    def defs(self, files: Sequence[FileEntry], name: str, fuzzy: bool) -> Iterable[SymbolDef]:
        """Declarations in ``files`` that may match ``name`` (all of them when ``fuzzy``)."""
        ...

    def refs(self, d: SymbolDef, files: Sequence[FileEntry]) -> Iterable[SymbolRef]: ...


def stale_note(path: str) -> str:
    return (
        f"{path} changed since the graph read it: its matches are left out; search again once "
        "the graph has caught up"
    )


@dataclass
class SymbolSource:
    """Precomputed symbol matches, handed out per file to the scanner."""

    by_path: dict[str, list[Found]] = field(default_factory=dict)
    tier: int = 0
    complete: bool = True
    reason: str | None = None
    stamps: dict[str, str] = field(default_factory=dict)
    """The stamp of the bytes each path's offsets were found in (graph records): a file read
    with other bytes hands out none of them, and says so in ``notes``."""
    notes: list[str] | None = None

    @property
    def literals(self) -> Literals | None:
        return None

    @property
    def prefilter(self) -> bool:
        return False

    def spans(self, data: bytes, start: int) -> list[tuple[int, int]]:
        raise NotImplementedError("symbol matches are precomputed: use find_in_file")

    def find_in_file(self, ft: FileText) -> list[Found]:
        expected = self.stamps.get(ft.path)
        found = list(self.by_path.get(ft.path, []))
        if (expected is not None and expected != ft.stamp) or not all(
            whole_chars(ft.data, s, e) for s, e, *_ in found
        ):
            # offsets of other bytes (or of none: a cache row with a true stamp and offsets
            # past the end, docs/SAFETY.md#damaged-or-planted-state): a reference made from
            # them would select the wrong text
            if self.notes is not None:
                self.notes.append(stale_note(ft.path))
            return []
        return found

    @property
    def paths(self) -> list[str]:
        return sorted(self.by_path)

    def add_def(self, d: SymbolDef, precision: str) -> None:
        extra = {"symbol": symbol_json(d, precision)}
        self.by_path.setdefault(d.path, []).append((d.name_start, d.name_end, None, extra))

    def add_ref(self, r: SymbolRef, ids: list[str], precision: str) -> None:
        """A reference; ``ids`` are the declarations it may resolve to (one when resolved)."""
        symbol: dict[str, Any] = {
            "name": r.name.rsplit(".", 1)[-1],
            "kind": "reference",
            "reference_of": ids[0] if len(ids) == 1 else None,
            "precision": precision,
        }
        if len(ids) > 1:
            symbol["candidates"] = ids  # same name, not resolved by scope: never passed off as one
        extra = {"symbol": symbol}
        self.by_path.setdefault(r.path, []).append((r.start_byte, r.end_byte, None, extra))

    def sort(self) -> None:
        for found in self.by_path.values():
            found.sort(key=lambda f: (f[0], f[1]))
            # one match per range: a declaration name reported as its own reference is dropped
            dedup: list[Found] = []
            for f in found:
                if dedup and (dedup[-1][0], dedup[-1][1]) == (f[0], f[1]):
                    continue
                dedup.append(f)
            found[:] = dedup


def plan_symbols(
    ws: Workspace,
    name: str,
    scope_files: Sequence[FileEntry],
    all_files: Sequence[FileEntry] | None,
    finder: SymbolFinder,
    ranges: dict[str, list[tuple[int, int]]] | None = None,
) -> SymbolSource:
    """Find the declarations named ``name`` in ``scope_files`` (tiered), and with ``all_files``
    (navigation="references") their references anywhere in the workspace."""
    name = name.strip()
    if not name or any(ch.isspace() for ch in name):
        raise InvalidQuery("symbols: takes one name, e.g. symbols:get_user (no spaces)")
    deadline = time.monotonic() + SCAN_BUDGET_S
    tiers: list[list[SymbolDef]] = [[], [], []]
    complete = True
    for fuzzy in (False, True):
        if fuzzy and (tiers[0] or tiers[1]):
            break  # the fuzzy tier is only needed (and only paid for) when nothing else matched
        for d in finder.defs(scope_files, name, fuzzy):
            if ranges is not None and not any(
                s <= d.start_byte and d.end_byte <= e for s, e in ranges.get(d.path, ())
            ):
                continue
            tier = name_tier(name, d.name)
            if tier is not None and (fuzzy or tier < 2):
                tiers[tier].append(d)
            if time.monotonic() > deadline:
                complete = False
                break
    source = SymbolSource(complete=complete, reason=None if complete else "time budget spent")
    for tier, found in enumerate(tiers):
        if found:
            source.tier = tier
            for d in found:
                source.add_def(d, finder.precision_of(d.path))
            if all_files is not None:
                decl_ranges = {(d.path, d.name_start, d.name_end) for d in found}
                refs: dict[tuple[str, int, int], tuple[SymbolRef, list[str], str]] = {}
                for d in found:
                    precision = finder.precision_of(d.path)
                    for r in finder.refs(d, all_files):
                        key = (r.path, r.start_byte, r.end_byte)
                        if key in decl_ranges:
                            continue
                        if r.target is not None and r.target != d.id:
                            continue
                        entry = refs.setdefault(key, (r, [], precision))
                        if d.id not in entry[1]:
                            entry[1].append(d.id)
                for r, ids, precision in refs.values():
                    source.add_ref(r, ids, precision)
            break
    source.sort()
    return source


class TagsCache:
    """Tags of files keyed by path and stamp (kept by long-running faces; bounded)."""

    def __init__(self, max_files: int = 50_000) -> None:
        self._items: dict[str, tuple[str, FileTags]] = {}
        self._max = max_files

    def get(self, ft: FileText, lang: str, trees: TreeCache | None) -> FileTags:
        hit = self._items.get(ft.path)
        if hit is not None and hit[0] == ft.stamp:
            return hit[1]
        small = len(ft.data) <= MAX_TAGS_BYTES  # an oversize file is refused before any parse
        tree = trees.get(ft.path, ft.stamp, ft.data, lang) if trees is not None and small else None
        tags = extract_tags(ft.path, ft.data, lang, tree)
        if len(self._items) >= self._max:
            self._items.clear()
        self._items[ft.path] = (ft.stamp, tags)
        return tags


class TagsFinder:
    """Declarations and references from tree-sitter tags (``precision: "syntactic"``)."""

    def __init__(
        self,
        ws: Workspace,
        cache: TagsCache,
        trees: TreeCache | None,
        only: set[str] | None = None,
    ) -> None:
        self._ws = ws
        self._cache = cache
        self._trees = trees
        self._only = only
        self.unsupported: set[str] = set()

    def precision_of(self, path: str) -> str:
        return "syntactic"

    def tags_of(self, entry: FileEntry, needle: bytes | None) -> FileTags | None:
        lang = language_for_path(entry.path)
        if lang is None or (self._only is not None and lang not in self._only):
            return None
        if not tags_supported(lang):
            self.unsupported.add(lang)
            return None
        ft = self._ws.read(entry.path)
        if ft is None or (needle is not None and needle not in ft.data.lower()):
            return None
        return self._cache.get(ft, lang, self._trees)

    def defs(self, files: Sequence[FileEntry], name: str, fuzzy: bool) -> Iterable[SymbolDef]:
        needle = None if fuzzy else name.lower().encode()
        for entry in files:
            tags = self.tags_of(entry, needle)
            if tags is not None:
                yield from tags.defs

    def refs(self, d: SymbolDef, files: Sequence[FileEntry]) -> Iterable[SymbolRef]:
        needle = d.name.encode()
        family = _family(language_for_path(d.path))
        for entry in files:
            if _family(language_for_path(entry.path)) != family:
                continue  # a Ruby method is never used from Python, whatever its name
            tags = self.tags_of(entry, needle.lower())
            if tags is None:
                continue
            for r in tags.refs:
                if r.name == d.name or r.name.rsplit(".", 1)[-1] == d.name:
                    yield r


MAX_DECLARATION_BYTES = 64 * 1024
"""The most of a declaration ``symbol:#ID`` answers in its ``declaration`` field."""


def plan_symbol_id(
    ws: Workspace, symbol_id: str, hint: str | None, finder: SymbolFinder
) -> SymbolSource:
    """``symbol:#ID``: the declaration's whole range (body included) as the one match."""
    sid = symbol_id.strip().lstrip("#")
    if not sid or not all(c in "0123456789abcdef" for c in sid):
        raise InvalidQuery(f"symbol:# takes an id from a symbols: answer, got {symbol_id!r}")
    candidates: list[FileEntry] = []
    if hint is not None:
        candidates = [FileEntry(hint, 0, 0)]
    source = SymbolSource()
    for files in (candidates, None):
        if files is None:
            files = list(ws.list_files().files)
        for d in finder.defs(files, "", True):
            if d.id == sid:
                symbol = symbol_json(d, finder.precision_of(d.path))
                ft = ws.read(d.path)
                if ft is not None:  # the whole declaration: a match's text stops at 256 chars
                    whole = ft.data[d.start_byte : d.end_byte]
                    symbol["declaration"] = whole[:MAX_DECLARATION_BYTES].decode("utf-8", "replace")
                    symbol["declaration_cut"] = len(whole) > MAX_DECLARATION_BYTES
                source.by_path[d.path] = [(d.start_byte, d.end_byte, None, {"symbol": symbol})]
                return source
    raise NotFound(
        f"no declaration with id {sid} in this workspace (it may have been renamed or moved): "
        "run symbols:NAME again for a fresh id",
        details={"id": sid},
    )
