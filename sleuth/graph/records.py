"""Per-file input of the graph: the ``FileTags`` protocol and the stored ``FileRecord``.

The graph never parses source. It consumes, per file, the declarations and uses a tags
extractor found (``SymbolDef``/``SymbolRef`` from ``sleuth.model``) and, optionally, the file's
bytes. From the bytes it keeps two small facts per file so it can forget the bytes afterwards:
the signature line of every declaration (the first line of its range, for the repo map) and the
receiver of every use (``self`` in ``self.m()``, ``utils`` in ``utils.f()``, ``?`` for a
receiver that is not a plain name) — for an import, the alias it binds (``m`` in
``import pkg.mod as m``, ``ns`` in ``import * as ns from "m"``) — which scope resolution needs
and tags records do not carry (``source_facts`` reads them).

A ``FileRecord`` is the unit of incremental update and of the ``.sleuth/graph.db`` cache;
``record_to_row``/``record_from_row`` round-trip it exactly as plain tuples (what ``marshal``
stores per file), ``record_to_json``/``record_from_json`` as JSON; ``record_row`` makes the row
straight from tags given as plain tuples (a cold build's tagging workers: no objects per name).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from sleuth.graph.source_facts import receiver_at, signature_of, use_receivers
from sleuth.model import SymbolDef, SymbolRef

__all__ = [
    "FileTags",
    "FileRecord",
    "make_record",
    "record_row",
    "record_to_json",
    "record_from_json",
    "record_to_row",
    "record_from_row",
    "def_rows",
    "ref_rows",
    "language_family",
]


class FileTags(Protocol):
    """What the graph needs from a tags extractor's per-file answer (duck-typed)."""

    @property
    def path(self) -> str: ...
    @property
    def lang(self) -> str | None: ...
    @property
    def defs(self) -> Sequence[SymbolDef]: ...
    @property
    def refs(self) -> Sequence[SymbolRef]: ...
    @property
    def complete(self) -> bool: ...
    @property
    def reason(self) -> str | None: ...


@dataclass(frozen=True)
class FileRecord:
    """One file as the graph stores it: tags plus the per-def and per-ref facts from bytes.

    ``receivers[i]`` belongs to ``refs[i]`` (for an import: its local alias, if any) and
    ``signatures[i]`` to ``defs[i]``. Duplicate
    declaration ids (the same qualified name and kind twice in a file, e.g. a property getter
    and setter) keep their first occurrence only, so every id names one node.
    """

    path: str
    lang: str
    stamp: str
    complete: bool
    reason: str | None
    defs: tuple[SymbolDef, ...]
    refs: tuple[SymbolRef, ...]
    receivers: tuple[str | None, ...]
    signatures: tuple[str, ...]


def language_family(lang: str, path: str) -> str:
    """``python``, ``js`` (JavaScript/TypeScript) or ``other`` — the import and scope rules used."""
    low = (lang or "").lower()
    if low == "python" or path.endswith((".py", ".pyi")):
        return "python"
    if low in {"javascript", "typescript", "tsx", "jsx", "js", "ts"} or path.endswith(
        (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts")
    ):
        return "js"
    return "other"


def make_record(tags: FileTags, data: bytes | None, stamp: str) -> FileRecord:
    """Build the stored record of one file from its tags (and bytes, when given)."""
    path = tags.path
    seen: set[str] = set()
    defs: list[SymbolDef] = []
    for d in tags.defs:
        if d.id not in seen:
            seen.add(d.id)
            defs.append(d)
    refs = tuple(tags.refs)
    if data is None:
        receivers: tuple[str | None, ...] = tuple(None for _ in refs)
        signatures: tuple[str, ...] = tuple("" for _ in defs)
    else:
        receivers = use_receivers(tags, refs, data)
        signatures = tuple(signature_of(data, d.start_byte, d.end_byte) for d in defs)
    return FileRecord(
        path=path,
        lang=tags.lang or "",
        stamp=stamp,
        complete=bool(tags.complete),
        reason=tags.reason,
        defs=tuple(defs),
        refs=refs,
        receivers=receivers,
        signatures=signatures,
    )


def record_row(
    lang: str,
    stamp: str,
    complete: bool,
    reason: str | None,
    defs: Iterable[tuple[str, str, str, str, int, int, int, int, int, int]],
    refs: Iterable[tuple[str, str, int, int, int, str | None, str | None, str | None]],
    data: bytes,
) -> RecordRow:
    """``record_to_row(make_record(...))`` of a file's tags given as plain tuples — ``defs``
    as (id, name, kind, container, start_byte, end_byte, line, end_line, name_start,
    name_end), ``refs`` as (name, kind, start_byte, end_byte, line, enclosing, target,
    module) — without building a record (what a tagging worker sends back)."""
    seen: set[str] = set()
    def_out: list[DefRow] = []
    for d in defs:
        if d[0] not in seen:
            seen.add(d[0])
            def_out.append((*d, signature_of(data, d[4], d[5])))
    ref_out = tuple((*r, receiver_at(data, r[1], r[0], r[2], r[3])) for r in refs)
    return (lang or "", stamp, bool(complete), reason, tuple(def_out), ref_out)


def record_to_json(rec: FileRecord) -> dict[str, Any]:
    """A JSON-ready dict of ``rec`` (paths are implied by the record, not repeated)."""
    return {
        "path": rec.path,
        "lang": rec.lang,
        "stamp": rec.stamp,
        "complete": rec.complete,
        "reason": rec.reason,
        "defs": [list(row) for row in def_rows(rec)],
        "refs": [
            [
                r.name,
                r.kind,
                r.start_byte,
                r.end_byte,
                r.line,
                r.enclosing,
                r.target,
                r.module,
                recv,
            ]
            for r, recv in zip(rec.refs, rec.receivers, strict=True)
        ],
    }


def record_from_json(obj: dict[str, Any]) -> FileRecord:
    """The inverse of ``record_to_json``; raises KeyError/TypeError/ValueError on bad input."""
    path = str(obj["path"])
    defs: list[SymbolDef] = []
    sigs: list[str] = []
    for row in obj["defs"]:
        i, name, kind, cont, sb, eb, line, eline, ns, ne, sig = row
        defs.append(
            SymbolDef(
                str(i),
                str(name),
                str(kind),
                str(cont),
                path,
                int(sb),
                int(eb),
                int(line),
                int(eline),
                int(ns),
                int(ne),
            )
        )
        sigs.append(str(sig))
    refs: list[SymbolRef] = []
    recvs: list[str | None] = []
    for name, kind, start, end, line, enclosing, target, module, recv in obj["refs"]:
        refs.append(SymbolRef(name, kind, path, start, end, line, enclosing, target, module))
        recvs.append(recv)
    return FileRecord(
        path=path,
        lang=str(obj["lang"]),
        stamp=str(obj["stamp"]),
        complete=bool(obj["complete"]),
        reason=obj["reason"],
        defs=tuple(defs),
        refs=tuple(refs),
        receivers=tuple(recvs),
        signatures=tuple(sigs),
    )


DefRow = tuple[str, str, str, str, int, int, int, int, int, int, str]
"""(id, name, kind, container, start_byte, end_byte, line, end_line, name_start, name_end,
signature): one declaration of a record as a plain tuple."""
RefRow = tuple[str, str, int, int, int, str | None, str | None, str | None, str | None]
"""(name, kind, start_byte, end_byte, line, enclosing, target, module, receiver)."""
RecordRow = tuple[str, str, bool, str | None, tuple[DefRow, ...], tuple[RefRow, ...]]
"""(lang, stamp, complete, reason, defs, refs): a record without its path."""


def def_rows(rec: FileRecord) -> tuple[DefRow, ...]:
    """The record's declarations as ``DefRow`` tuples (signature included)."""
    return tuple(
        (
            d.id,
            d.name,
            d.kind,
            d.container,
            d.start_byte,
            d.end_byte,
            d.line,
            d.end_line,
            d.name_start,
            d.name_end,
            sig,
        )
        for d, sig in zip(rec.defs, rec.signatures, strict=True)
    )


def ref_rows(rec: FileRecord) -> tuple[RefRow, ...]:
    """The record's uses as ``RefRow`` tuples (receiver included)."""
    return tuple(
        (r.name, r.kind, r.start_byte, r.end_byte, r.line, r.enclosing, r.target, r.module, recv)
        for r, recv in zip(rec.refs, rec.receivers, strict=True)
    )


def record_to_row(rec: FileRecord) -> RecordRow:
    """``rec`` as plain tuples of str/int/bool/None (its path is the row's key)."""
    return (rec.lang, rec.stamp, rec.complete, rec.reason, def_rows(rec), ref_rows(rec))


def record_from_row(path: str, row: RecordRow) -> FileRecord:
    """The inverse of ``record_to_row``; raises ValueError/TypeError on a malformed row."""
    lang, stamp, complete, reason, defs, refs = row
    return FileRecord(
        path=path,
        lang=lang,
        stamp=stamp,
        complete=complete,
        reason=reason,
        defs=tuple(
            SymbolDef(i, n, k, c, path, s, e, ln, el, ns, ne)
            for i, n, k, c, s, e, ln, el, ns, ne, _ in defs
        ),
        refs=tuple(
            SymbolRef(n, k, path, s, e, ln, enc, tgt, mod)
            for n, k, s, e, ln, enc, tgt, mod, _ in refs
        ),
        receivers=tuple(r[8] for r in refs),
        signatures=tuple(d[10] for d in defs),
    )
