"""Opaque page cursors (docs/query.md#ordering-and-pagination): ``result id + offset``,
authenticated by the registry secret.

A cursor is tied to one result and cannot be forged: the payload carries a keyed xxh3 tag made
with a secret stored in the workspace's registry, so a corrupted cursor, one from another
workspace, or one whose registry was deleted is ``invalid_query``.
"""

from __future__ import annotations

import base64
import binascii

import xxhash

from sleuth.errors import InvalidQuery

__all__ = ["encode_cursor", "decode_cursor"]


def _tag(secret: bytes, payload: str) -> str:
    return xxhash.xxh3_64_hexdigest(secret + payload.encode())


def encode_cursor(secret: bytes, result_id: str, offset: int) -> str:
    """A cursor that resumes ``result_id`` at match number ``offset`` (1-based)."""
    payload = f"{result_id}:{offset}"
    raw = f"{payload}.{_tag(secret, payload)}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(secret: bytes, cursor: str) -> tuple[str, int]:
    """(result id, offset) of a cursor made by ``encode_cursor``; ``InvalidQuery`` otherwise."""
    bad = InvalidQuery(
        "invalid cursor: pass the next_cursor of the previous page unchanged, "
        "with the same query and options (or search again without a cursor)",
        details={"cursor": cursor[:80]},
    )
    if len(cursor) > 200:
        raise bad
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, ValueError, UnicodeDecodeError) as exc:
        raise bad from exc
    payload, _, tag = raw.rpartition(".")
    if not payload or tag != _tag(secret, payload):
        raise bad
    result_id, _, offset = payload.rpartition(":")
    if not result_id or not offset.isdigit() or int(offset) < 1:
        raise bad
    return result_id, int(offset)
