"""The bridge's records and the normalisers that turn raw LSP JSON into them.

A declaration a server reports is the model's ``SymbolDef``, the record the tags extractor
yields too (one declaration record): its kind in the tags vocabulary (``normal_kind``),
its id ``symbol_id`` of path, qualified name and kind, its lines those of docs/faces.md#positions.
So every layer above reads one shape, and ``query`` only aligns ids with the tags' where both see a
name.

Servers answer the same question in several shapes (docs/servers.md#answer-shapes): ``Location`` or
``LocationLink``; ``DocumentSymbol`` trees or flat ``SymbolInformation``; a ``WorkspaceEdit``
with ``changes`` or ``documentChanges``, whose edits are identifier ranges (ty, tsgo),
character-level diff hunks (jedi) or whole-file replacements (pylsp). Everything here ends as
byte ranges of the file's *current* bytes, through ``positions.LineIndex`` and the negotiated
encoding; paths are workspace-relative POSIX, and anything outside the workspace is dropped.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from sleuth.errors import Unsupported
from sleuth.lsp_bridge.positions import LineIndex, PositionEncoding
from sleuth.model import SymbolDef, symbol_id

__all__ = [
    "LspLocation",
    "LspEdit",
    "SYMBOL_KINDS",
    "normal_kind",
    "iter_locations",
    "flatten_symbols",
    "edits_of",
]

SYMBOL_KINDS: dict[int, str] = {
    1: "file", 2: "module", 3: "namespace", 4: "package", 5: "class", 6: "method",
    7: "property", 8: "field", 9: "constructor", 10: "enum", 11: "interface", 12: "function",
    13: "variable", 14: "constant", 15: "string", 16: "number", 17: "boolean", 18: "array",
    19: "object", 20: "key", 21: "null", 22: "enum_member", 23: "struct", 24: "event",
    25: "operator", 26: "type_parameter",
}  # fmt: skip

# LSP kind names (``SYMBOL_KINDS``, lower case, no "_") -> the tags vocabulary of ``SymbolDef``.
_KINDS = {
    "class": "class",
    "struct": "class",
    "interface": "interface",
    "enum": "class",
    "method": "method",
    "constructor": "method",
    "function": "function",
    "module": "module",
    "namespace": "module",
    "package": "module",
    "constant": "constant",
    "enummember": "constant",
    "variable": "variable",
    "field": "field",
    "property": "field",
    "typeparameter": "type",
    "object": "variable",
}

IndexOf = Callable[[str], "LineIndex | None"]
"""Line index of a workspace file's current bytes, None when it cannot be read."""
RelOf = Callable[[str], "str | None"]
"""Workspace-relative path of a ``file://`` URI, None when outside (or cloaked)."""


@dataclass(frozen=True, order=True)
class LspLocation:
    """A byte range in a workspace file (a reference, a definition)."""

    path: str
    start_byte: int
    end_byte: int


@dataclass(frozen=True, order=True)
class LspEdit:
    """Replace bytes ``[start_byte, end_byte)`` of ``path`` (current bytes) by ``new_text``."""

    path: str
    start_byte: int
    end_byte: int
    new_text: str


def kind_name(kind: object) -> str:
    """The lower-case name of an LSP ``SymbolKind`` number ("symbol" when unknown)."""
    return SYMBOL_KINDS.get(kind, "symbol") if isinstance(kind, int) else "symbol"


def normal_kind(kind: str, container: str) -> str:
    """The tags vocabulary for an LSP symbol kind (a function inside a class is a method)."""
    k = _KINDS.get(kind.lower().replace("_", ""), kind.lower())
    if k == "function" and container:
        return "method"
    return k


def iter_locations(
    result: Any, rel_of: RelOf, index_of: IndexOf, encoding: PositionEncoding
) -> list[LspLocation]:
    """Locations of a definition/references answer, sorted, deduplicated, in the workspace.

    Accepts ``null``, a ``Location``, or a list of ``Location``/``LocationLink``; for a link the
    target's selection range (the name) is used.
    """
    if result is None:
        return []
    items = result if isinstance(result, list) else [result]
    found: set[LspLocation] = set()
    for item in items:
        if not isinstance(item, dict):
            continue
        uri = item.get("uri") or item.get("targetUri")
        rng = item.get("range") or item.get("targetSelectionRange") or item.get("targetRange")
        if not isinstance(uri, str) or not isinstance(rng, dict):
            continue
        rel = rel_of(uri)
        index = index_of(rel) if rel is not None else None
        if rel is None or index is None:
            continue
        start, end = index.range_to_bytes(rng, encoding)
        found.add(LspLocation(rel, start, end))
    return sorted(found)


def _name_range(index: LineIndex, name: str, start: int, end: int) -> tuple[int, int]:
    """Where ``name`` is spelled as a whole word inside ``[start, end)``; else the range."""
    raw = name.encode("utf-8")
    if not raw:
        return start, end
    word = re.compile(rb"(?<![\w$])" + re.escape(raw) + rb"(?![\w$])")
    m = word.search(index.data, start, end)
    return (m.start(), m.end()) if m else (start, end)


class _Declarations:
    """Makes the ``SymbolDef`` of each declaration of one file's answer."""

    def __init__(self, rel: str, data: bytes) -> None:
        self.rel, self.data = rel, data
        self._starts: list[int] | None = None

    def line_of(self, offset: int) -> int:
        # docs/faces.md#positions lines end at "\n" only (as ``FileText.line_of``); LSP's also end
        # at a lone "\r", so ``LineIndex`` lines are not these. Built once a file, on first use.
        if self._starts is None:
            pieces = self.data.split(b"\n")
            pieces.pop()
            self._starts = list(accumulate((len(p) + 1 for p in pieces), initial=0))
        return bisect_right(self._starts, offset)

    def make(
        self, name: str, lsp_kind: object, container: str, span: tuple[int, int, int, int]
    ) -> SymbolDef:
        start, end, n_start, n_end = span
        kind = normal_kind(kind_name(lsp_kind), container)
        qualified = f"{container}.{name}" if container else name
        return SymbolDef(
            id=symbol_id(self.rel, qualified, kind),
            name=name,
            kind=kind,
            container=container,
            path=self.rel,
            start_byte=start,
            end_byte=end,
            line=self.line_of(start),
            end_line=self.line_of(max(start, end - 1)),
            name_start=n_start,
            name_end=n_end,
        )


def flatten_symbols(
    result: Any, rel: str, index: LineIndex, encoding: PositionEncoding
) -> list[SymbolDef]:
    """A ``documentSymbol`` answer as a flat list in document order, containers dotted.

    ``DocumentSymbol`` trees give whole range and name range; flat ``SymbolInformation`` gives
    one range, in which the name is looked up. Ids are those of the names and kinds the server
    gives; ``query`` keeps the tags' id where the tags see the same name (``LspFinder``).
    """
    out: list[SymbolDef] = []
    if not isinstance(result, list):
        return out
    decls = _Declarations(rel, index.data)

    def walk(items: Iterable[Any], container: str) -> None:
        for item in items:
            if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                continue
            name = item["name"]
            if isinstance(item.get("location"), dict):  # SymbolInformation
                rng = item["location"].get("range")
                if not isinstance(rng, dict):
                    continue
                start, end = index.range_to_bytes(rng, encoding)
                n_start, n_end = _name_range(index, name, start, end)
                outer = item.get("containerName") or container
                out.append(decls.make(name, item.get("kind"), outer, (start, end, n_start, n_end)))
                continue
            rng, sel = item.get("range"), item.get("selectionRange")
            if not isinstance(rng, dict):
                continue
            start, end = index.range_to_bytes(rng, encoding)
            if isinstance(sel, dict):
                n_start, n_end = index.range_to_bytes(sel, encoding)
            else:
                n_start, n_end = _name_range(index, name, start, end)
            out.append(decls.make(name, item.get("kind"), container, (start, end, n_start, n_end)))
            children = item.get("children")
            if isinstance(children, list):
                walk(children, f"{container}.{name}" if container else name)

    walk(result, "")
    out.sort(key=lambda s: (s.start_byte, -s.end_byte))
    return out


def _malformed(why: str) -> Unsupported:
    return Unsupported(
        f"the language server's edit is malformed ({why}); nothing was written — rename by "
        "hand or with another server",
        details={"reason": "malformed_edit"},
    )


def _position(pos: object, index: LineIndex, end: bool) -> tuple[int, int]:
    """``(line, character)`` of a Position a server wrote in an edit: integers (not booleans,
    not strings), never negative; a start on a line past the file's last is refused (an edit
    never starts beyond the file), an end there means the end of the file, as a whole-file
    replacement writes it (docs/servers.md#answer-shapes)."""
    line = pos.get("line") if isinstance(pos, dict) else None
    char = pos.get("character") if isinstance(pos, dict) else None
    if type(line) is not int or type(char) is not int or line < 0 or char < 0:
        raise _malformed(f"a position is not two non-negative integers: {pos!r:.80}")
    if not end and line >= index.line_count:
        raise _malformed(f"an edit starts on line {line + 1} of a file of {index.line_count}")
    return line, char


def _text_edits(edit: Any, index: LineIndex) -> Iterable[tuple[dict[str, Any], str]]:
    """(range, new text) of each ``TextEdit``/``AnnotatedTextEdit``/``SnippetTextEdit``, checked
    whole: one malformed entry refuses the rename (dropping it would write part of it)."""
    if not isinstance(edit, list):
        raise _malformed("a file's edits are not a list")
    for item in edit:
        if not isinstance(item, dict) or not isinstance(item.get("range"), dict):
            raise _malformed("an edit has no range")
        text = item.get("newText")
        if text is None and isinstance(item.get("snippet"), dict):
            text = item["snippet"].get("value")
        if not isinstance(text, str):
            raise _malformed("an edit's new text is not a string")
        if "\0" in text:
            raise _malformed("an edit's new text holds a NUL character")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise _malformed("an edit's new text is not valid Unicode") from None
        rng = item["range"]
        start = _position(rng.get("start"), index, end=False)
        if start > _position(rng.get("end"), index, end=True):
            raise _malformed("an edit's range ends before it starts")
        yield rng, text


def edits_of(
    edit: Any, rel_of: RelOf, index_of: IndexOf, encoding: PositionEncoding
) -> list[LspEdit]:
    """A ``WorkspaceEdit`` as byte-range edits of the current file bytes, sorted by position.

    ``documentChanges`` wins over ``changes`` (LSP: a client that supports it gets it).
    File operations (create, rename, delete) and edits outside the workspace are
    ``Unsupported``: sleuth applies text edits inside the workspace only. So is an answer that
    does not follow the protocol's types (docs/edits.md#rename): any entry that is not one.
    """
    if not isinstance(edit, dict):
        return []
    pairs: list[tuple[str, Any]] = []
    doc_changes = edit.get("documentChanges")
    if isinstance(doc_changes, list):
        for change in doc_changes:
            if not isinstance(change, dict):
                raise _malformed("a documentChanges entry is not an object")
            if "kind" in change:
                raise Unsupported(
                    f"the language server's edit would {change['kind']} a file; sleuth applies "
                    "text edits only — make that file change by hand, then rename again",
                    details={"operation": change["kind"]},
                )
            doc = change.get("textDocument")
            if not isinstance(doc, dict):
                raise _malformed("a documentChanges entry names no document")
            pairs.append((str(doc.get("uri", "")), change.get("edits")))
    elif isinstance(edit.get("changes"), dict):
        pairs.extend(edit["changes"].items())
    elif edit.get("changes") is not None:
        raise _malformed("changes is not an object")
    out: list[LspEdit] = []
    replaced: set[LspEdit] = set()
    stepped: set[str] = set()
    for uri, edits in pairs:
        rel = rel_of(uri)
        index = index_of(rel) if rel is not None else None
        if rel is None or index is None:
            raise Unsupported(
                "the rename would edit a file outside the workspace (or one sleuth may not "
                "touch); rename only symbols declared in the workspace",
                details={"reason": "outside_workspace"},
            )
        if isinstance(doc_changes, list) and rel in stepped:
            # LSP applies documentChanges one after another, so a second entry's positions
            # are of the bytes the first one left: refused rather than applied to the old ones
            raise _malformed(f"the edit changes {rel} in two steps")
        stepped.add(rel)
        for rng, text in _text_edits(edits, index):
            start, end = index.range_to_bytes(rng, encoding)
            e = LspEdit(rel, start, end, text)
            if start < end:
                if e in replaced:  # the same replacement twice changes the text once
                    continue
                replaced.add(e)
            out.append(e)
    # a stable sort: inserts at one position keep the array's order, as LSP says they appear
    return sorted(out, key=lambda e: (e.path, e.start_byte, e.end_byte))
