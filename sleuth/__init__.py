"""sleuth — one engine, one query language, hash-stamped references (see SPEC.md)."""

from __future__ import annotations

from sleuth.errors import SleuthError

__all__ = ["SleuthError"]
