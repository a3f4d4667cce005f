"""The phrases both search renderings say: counts, status, suggestions, skips, the header line,
a symbol's kind and name."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from sleuth.render.common import Json, plural

__all__ = [
    "count_phrase",
    "status_phrase",
    "suggestion_phrase",
    "skipped_phrase",
    "search_header",
    "symbol_phrase",
]


def count_phrase(data: Json) -> str:
    """``3 matches`` when the total is known, ``at least 100 matches`` when it is not
    (docs/json.md#search)."""
    total = data.get("total")
    if isinstance(total, int):
        return plural(total, "match")
    at_least = data.get("total_at_least")
    if isinstance(at_least, int):
        return f"at least {plural(at_least, 'match')}"
    return plural(len(data.get("matches") or ()), "match") + " on this page"


def status_phrase(data: Json) -> str:
    """``complete`` or ``incomplete (reason)``."""
    if data.get("complete", True):
        return "complete"
    reason = data.get("incomplete_reason")
    return f"incomplete ({reason})" if reason else "incomplete"


def _group_name(group: Json) -> str:
    for key in ("name", "text", "query"):
        value = group.get(key)
        if isinstance(value, str):
            return value
    return "?"


def _group_count(group: Json) -> str:
    count = group.get("count", group.get("total"))
    text = "?" if count is None else str(count)
    return text if group.get("complete", True) else f"{text}+"


def suggestion_phrase(data: Json, *, with_refs: bool = False) -> str | None:
    """``did you mean: get_user (3), GetUsers (1)`` from ``possible_names``, or None
    (docs/query.md#name-suggestions)."""
    groups = data.get("possible_names")
    if not groups:
        return None
    parts = []
    for group in groups:
        if not isinstance(group, Mapping):
            continue
        inner = _group_count(group)
        ref = group.get("result") or group.get("ref")
        if with_refs and isinstance(ref, str):
            inner = f"{inner}, {ref}"
        parts.append(f"{_group_name(group)} ({inner})")
    return "did you mean: " + ", ".join(parts) if parts else None


def skipped_phrase(data: Json) -> str | None:
    skipped = data.get("skipped") or {}
    parts = [
        f"{n} {kind.replace('_', ' ')}" for kind, n in skipped.items() if isinstance(n, int) and n
    ]
    return "skipped files: " + ", ".join(parts) if parts else None


def search_header(data: Json, status: Callable[[Json], str] = status_phrase) -> str:
    """``SEARCH#H  mode  [fallback=…]  N matches  [showing #a-#b]  status  [refreshed]``."""
    parts = [str(data.get("result") or "(no result id)"), str(data.get("mode") or "?")]
    if data.get("fallback"):
        parts.append(f"fallback={data['fallback']}")
    parts.append(count_phrase(data))
    numbers = [m.get("n") for m in data.get("matches") or () if isinstance(m.get("n"), int)]
    if numbers and (data.get("next_cursor") or numbers[0] != 1):
        parts.append(f"showing #{numbers[0]}-#{numbers[-1]}")
    parts.append(status(data))
    if data.get("refreshed"):
        parts.append("refreshed")
    return "  ".join(parts)


def symbol_phrase(symbol: Json) -> str:
    """What a symbol match is (docs/json.md#symbol-matches): ``method Cart.total  [semantic]
    id=f0ea30790afb`` for a declaration, ``reference total -> f0ea30790afb  [semantic]`` for a
    reference (``-> one of A, B`` when it was not resolved between same-named declarations)."""
    precision = f"[{symbol.get('precision') or '?'}]"
    name = str(symbol.get("name") or "?")
    if symbol.get("kind") == "reference":
        target = symbol.get("reference_of")
        candidates = [str(c) for c in symbol.get("candidates") or ()]
        if isinstance(target, str):
            to = target
        elif candidates:
            to = "one of " + ", ".join(candidates)
        else:
            to = "(unresolved)"
        return f"reference {name} -> {to}  {precision}"
    container = symbol.get("container")
    qualified = f"{container}.{name}" if container else name
    return f"{symbol.get('kind') or 'symbol'} {qualified}  {precision} id={symbol.get('id')}"
