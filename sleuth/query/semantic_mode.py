"""``semantic:QUERY``: plan a hybrid-retrieval answer (docs/query.md#semantic-hybrid-retrieval).

The semantic engine ranks chunks; this module gives it what it may not fetch itself: the
declarations of each file, from the tree-sitter tags the graph and ``symbols:`` use (the
engines never import each other), and the progress of a first index build (and of the token
table computed from the model, once per machine) to the workspace. Its answer is
score-ordered ``path_matches`` (as fuzzy ``files:``), each spanning its chunk and marked as
location hints.

A stale chunk is never answered from: every hit's file is read again and its stamp compared
with the stamp the chunk was cut from. A file that changed since the sync (or went away) is
re-indexed (or dropped) and the query asked again, once; a file still changing after that is
left out and named in a note.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from sleuth.errors import InvalidQuery, Unsupported
from sleuth.query.request import MAX_LIMIT
from sleuth.workspace import FileEntry

if TYPE_CHECKING:
    from sleuth.query.execute import Engines, Prepared
    from sleuth.semantic import Decl, Hit, SemanticIndex
    from sleuth.workspace.text import FileText

__all__ = ["plan_semantic", "decls_of"]


def decls_of(path: str, data: bytes) -> list[Decl] | None:
    """The declarations of a file from its tree-sitter tags, or None (no tags for its language,
    too large to tag): the engine then cuts it into windows."""
    from sleuth.ast_search import language_for_path
    from sleuth.ast_search.tags import MAX_TAGS_BYTES, extract_tags, tags_supported

    lang = language_for_path(path)
    if lang is None or not tags_supported(lang) or len(data) > MAX_TAGS_BYTES:
        return None
    tags = extract_tags(path, data, lang)
    return [(d.start_byte, d.end_byte, d.name, d.kind, d.container) for d in tags.defs]


def _index(prepared: Prepared, engines: Engines) -> SemanticIndex:
    from sleuth.semantic import MISSING, SemanticIndex, StaticEncoder, available

    if not available():
        raise Unsupported(MISSING, details={"prefix": "semantic:", "mode": "semantic"})
    if engines.semantic is None or engines.semantic.ws is not prepared.ws:
        table = prepared.ws.reporter("computing the semantic token table (once per machine)")
        engines.semantic = SemanticIndex(prepared.ws, StaticEncoder(progress=table))
    return engines.semantic


def _current(
    prepared: Prepared, index: SemanticIndex, hits: Sequence[Hit]
) -> tuple[dict[str, FileText], list[str]]:
    """The files of ``hits`` read now, and the paths whose bytes are not the indexed ones or
    whose chunks do not fit them (a planted or copied row with the right stamp,
    docs/SAFETY.md#damaged-or-planted-state)."""
    texts: dict[str, FileText] = {}
    stale: list[str] = []
    for hit in hits:
        if hit.path in texts or hit.path in stale:
            continue
        try:
            ft = prepared.ws.read(hit.path)
        except Exception:  # cloaked or gone outside the root since the sync
            ft = None
        if ft is None or ft.stamp != hit.stamp or not index.fits(hit.path, ft.stamp, ft.data):
            stale.append(hit.path)
        else:
            texts[hit.path] = ft
    return texts, stale


def plan_semantic(prepared: Prepared, engines: Engines, everything: list[FileEntry]) -> None:
    """Sync the index to the workspace and rank its chunks for the query."""
    from sleuth.query.scan import make_match

    if not prepared.route.body.strip():
        raise InvalidQuery(
            "nothing but spaces after the semantic: prefix: describe what you look for, "
            "e.g. semantic:load the configuration",
            details={"position": len("semantic:"), "prefix": "semantic:"},
        )
    index = _index(prepared, engines)
    req = prepared.request
    index.sync(everything, decls_of, prepared.ws.reporter("building the semantic index"))
    whole = prepared.scope == "" and not req.include and not req.exclude
    scope = None if whole else {f.path for f in prepared.files}
    threshold = req.threshold or 0.0
    hits = index.search(prepared.route.body, limit=MAX_LIMIT, threshold=threshold, paths=scope)
    texts, stale = _current(prepared, index, hits)
    if stale:
        index.refresh(stale, decls_of)
        hits = index.search(prepared.route.body, limit=MAX_LIMIT, threshold=threshold, paths=scope)
        texts, stale = _current(prepared, index, hits)
        if stale:
            prepared.notes.append(
                "left out, changing while indexed: " + ", ".join(sorted(set(stale))[:5])
            )
    matches = []
    for hit in hits:
        ft = texts.get(hit.path)
        if ft is None:
            continue
        extra = {"chunk": {"kind": hit.kind, "name": hit.title}} if hit.title else None
        m = make_match(ft, hit.start, hit.end, req.context, None, extra)
        matches.append(replace(m, score=hit.score))
    prepared.path_matches = matches
    prepared.ordered_by_score = True
    prepared.location_hints = True
