"""What the graph reads from a file's bytes: declaration signatures and use receivers.

``signature_of`` is the first line of a declaration's range (decorator lines skipped), for the
repo map. ``receiver_of``/``receiver_at`` is what is written before a use's name: ``self`` in
``self.m()``, ``utils`` in ``utils.f()``, ``?`` for a receiver that is not a plain name — and
for an import the alias it binds (``alias_of``: ``m`` in ``import pkg.mod as m``, ``ns`` in
``import * as ns from "m"``). ``use_receivers`` finds them for every use of a file, reusing a
re-tag's previous answers where no byte its scan reads changed. ``records`` keeps both in the
``FileRecord``, so the bytes can be forgotten.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sleuth.model import SymbolRef

if TYPE_CHECKING:
    from sleuth.graph.records import FileTags

__all__ = [
    "MAX_SIGNATURE",
    "signature_of",
    "receiver_of",
    "receiver_at",
    "alias_of",
    "use_receivers",
]

MAX_SIGNATURE = 240
"""Characters kept of a declaration's signature line."""

_SUPER = re.compile(rb"super\s*\([^()]*\)\s*$")
_ALIAS_AFTER = re.compile(rb"\s+as\s+([A-Za-z_$][\w$]*)")
_ALIAS_BEFORE = (
    re.compile(rb"\*\s*as\s+([A-Za-z_$][\w$]*)\s+from\s*[\"'`]$"),  # import * as ns from "m"
    re.compile(
        rb"([A-Za-z_$][\w$]*)\s*=\s*(?:await\s+)?require\s*\(\s*[\"'`]$"
    ),  # ns = require("m")
)


def signature_of(data: bytes, start_byte: int, end_byte: int) -> str:
    """The first line of a declaration's range, stripped (decorator lines skipped)."""
    pos = max(0, min(start_byte, len(data)))
    end = max(pos, min(end_byte, len(data)))
    while True:
        line_start = data.rfind(b"\n", 0, pos) + 1
        line_end = data.find(b"\n", pos)
        if line_end < 0:
            line_end = len(data)
        text = data[line_start:line_end].decode("utf-8", errors="replace").strip()
        if not text.startswith("@") or line_end + 1 >= end:
            return text[:MAX_SIGNATURE]
        pos = line_end + 1


_IDENT_BYTES = frozenset(
    b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$."
) | frozenset(range(0x80, 0x100))
"""Bytes of a receiver: identifier characters, dots, and any byte of a non-ASCII character."""
_BEFORE_NAME = frozenset(b" \t.>:")
"""What the byte before a use's name is when a receiver is written before it."""


def receiver_of(data: bytes, ref: SymbolRef) -> str | None:
    """The receiver written before a use: None for a bare name, a dotted name, or ``?``.

    Works whether the ref's range covers the name only (tags ``@name``) or the whole
    ``recv.name`` expression. ``super().m()`` gives ``super()``.
    """
    return receiver_at(data, ref.kind, ref.name, ref.start_byte, ref.end_byte)


def receiver_at(data: bytes, kind: str, name: str, start: int, end: int) -> str | None:
    """``receiver_of`` for a use given as its kind, name and byte range."""
    if kind == "import":
        return _alias_at(data, start, end)
    if not name:
        return None
    raw = name.encode()
    pos = start
    if end - pos != len(raw) or not data.startswith(raw, pos):
        found = data[pos:end].rfind(raw)
        if found < 0:
            return None
        pos += found
    if pos == 0 or data[pos - 1] not in _BEFORE_NAME:
        return None  # most uses: no receiver (checked below the long way)
    j = pos
    while j > 0 and data[j - 1] in (0x20, 0x09):
        j -= 1
    last = data[j - 1] if j > 0 else 0
    if last == 0x2E:  # "." or "?."
        j -= 2 if j > 1 and data[j - 2] == 0x3F else 1
    elif last in (0x3E, 0x3A) and data[j - 2 : j] in (b"->", b"::"):
        j -= 2
    else:
        return None
    while j > 0 and data[j - 1] in b" \t\r\n":
        j -= 1
    k = j
    ident = _IDENT_BYTES
    while k > 0 and data[k - 1] in ident:
        k -= 1
    recv = data[k:j].decode("utf-8", errors="replace")
    if not recv:
        if _SUPER.search(data[max(0, j - 120) : j]):
            return "super()"
        return "?"
    if recv.startswith(".") or recv.endswith(".") or recv[0].isdigit():
        return "?"
    if k > 0 and data[k - 1] in b")]":
        return "?"
    return recv


def alias_of(data: bytes, ref: SymbolRef) -> str | None:
    """The local name an import binds when it differs from the imported one, else None.

    ``import pkg.mod as m`` / ``from x import y as z`` / ``{ a as b }`` (written after the
    name), ``import * as ns from "m"`` and ``const ns = require("m")`` (written before).
    """
    return _alias_at(data, ref.start_byte, ref.end_byte)


def _alias_at(data: bytes, start: int, end: int) -> str | None:
    after = _ALIAS_AFTER.match(data, end)
    if after:
        return after.group(1).decode()
    before = data[max(0, start - 200) : start]
    if before[-1:] not in (b'"', b"'", b"`"):
        return None  # both patterns end at the module string's opening quote
    for pattern in _ALIAS_BEFORE:
        found = pattern.search(before)
        if found:
            return found.group(1).decode()
    return None


_SCAN_STOP = re.compile(rb"[^A-Za-z0-9_$.\x80-\xff \t\r\n?\->:]")
"""A byte no backward scan of ``receiver_at`` passes (none of identifier characters,
whitespace, ``.``, ``?``, ``-``, ``>``, ``:``)."""
_SUPER_REACH = 121
"""How far before a receiver's dot ``receiver_at`` looks for ``super(...)`` (plus one)."""


def use_receivers(tags: FileTags, refs: Sequence[SymbolRef], data: bytes) -> tuple[str | None, ...]:
    """Each use's receiver (``receiver_of``). A re-tag's uses that are the previous version's
    (``kept``) keep the receivers found for it when every byte their scan reads is unchanged:
    uses before the edit (the scan reads backwards only), and uses after it past a byte no scan
    passes that lies ``_SUPER_REACH`` or more after the edited region. Imports are always
    read again (their alias is read forwards too). The receivers are kept on ``tags`` for the
    next version."""
    kept: Any = getattr(tags, "kept", None)
    prev: Any = None
    if kept is not None:
        prev = kept.memo.get("receivers")
        if prev is not None and len(prev) != kept.count:
            prev = None
    if prev is None:
        out = tuple(receiver_of(data, r) for r in refs)
    else:
        n, before, after = len(refs), kept.before, kept.after
        stop = _SCAN_STOP.search(data, kept.hi + _SUPER_REACH)
        safe_from = stop.start() if stop is not None else len(data) + 1
        shift = len(prev) - n
        out = tuple(
            prev[i]
            if r.kind != "import" and i < before
            else prev[i + shift]
            if r.kind != "import" and i >= n - after and r.start_byte > safe_from
            else receiver_of(data, r)
            for i, r in enumerate(refs)
        )
    memo = getattr(tags, "memo", None)
    if isinstance(memo, dict):
        memo["receivers"] = out
    return out
