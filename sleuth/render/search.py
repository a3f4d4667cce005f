"""Search answers for people (``search_human``) and for models (``search_compact``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from sleuth.render.common import (
    BINARY_SAFE,
    BINARY_SAFE_NOTE,
    STYLE_CONTEXT,
    STYLE_HEADER,
    STYLE_LINENO,
    STYLE_MATCH,
    STYLE_PATH,
    STYLE_REF,
    STYLE_WARN,
    Json,
    plural,
    styled,
)

if TYPE_CHECKING:
    from rich.text import Text


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


def _skipped_phrase(data: Json) -> str | None:
    skipped = data.get("skipped") or {}
    parts = [
        f"{n} {kind.replace('_', ' ')}" for kind, n in skipped.items() if isinstance(n, int) and n
    ]
    return "skipped files: " + ", ".join(parts) if parts else None


def _header(data: Json) -> str:
    parts = [str(data.get("result") or "(no result id)"), str(data.get("mode") or "?")]
    if data.get("fallback"):
        parts.append(f"fallback={data['fallback']}")
    parts.append(count_phrase(data))
    numbers = [m.get("n") for m in data.get("matches") or () if isinstance(m.get("n"), int)]
    if numbers and (data.get("next_cursor") or numbers[0] != 1):
        parts.append(f"showing #{numbers[0]}-#{numbers[-1]}")
    parts.append(status_phrase(data))
    if data.get("refreshed"):
        parts.append("refreshed")
    return "  ".join(parts)


def _absence_lines(data: Json) -> list[tuple[str, str]]:
    """The lines said after an empty page: suggestions, and the not-a-proof warning
    (docs/json.md#search)."""
    if data.get("matches"):
        return []
    lines: list[tuple[str, str]] = []
    suggestion = suggestion_phrase(data)
    lines.append(("no matches; " + suggestion if suggestion else "no matches", STYLE_WARN))
    if data.get("possible_names_skipped"):
        lines.append(
            (f"(name suggestions skipped: {data['possible_names_skipped']})", STYLE_CONTEXT)
        )
    if not data.get("complete", True):
        lines.append(
            (
                "the search was incomplete, so zero matches is not proof of absence",
                STYLE_WARN,
            )
        )
    return lines


def _display_text(text: str) -> list[str]:
    return text.split("\n") if text else [""]


def _match_text(match: Json, indent: int) -> Text:
    """The match's text with its own range highlighted when that is safe to compute."""
    raw = str(match.get("text") or "")
    lines = _display_text(raw)
    out = styled("\n".join(lines[:1]))
    col, end_col = match.get("column"), match.get("end_column")
    single = match.get("line") is not None and match.get("line") == match.get("end_line")
    if (
        single
        and isinstance(col, int)
        and isinstance(end_col, int)
        and not raw.startswith("…")
        and 0 <= col - 1 < end_col - 1 <= len(lines[0])
    ):
        out.stylize(STYLE_MATCH, col - 1, end_col - 1)
    for extra in lines[1:]:
        out.append("\n" + " " * indent + extra)
    return out


def _file_block(path: str, matches: Sequence[Json]) -> Text:
    """One file: its path, then context and match lines in line order, ``--`` at gaps."""
    block = styled(path, style=STYLE_PATH)
    if any(m.get("encoding") == BINARY_SAFE for m in matches):
        block.append(f"  [{BINARY_SAFE}: {BINARY_SAFE_NOTE}]", style=STYLE_WARN)
    match_lines: dict[int, list[Json]] = {}
    covered: set[int] = set()
    context: dict[int, str] = {}
    for match in matches:
        line = int(match["line"])
        end_line = int(match.get("end_line") or line)
        match_lines.setdefault(line, []).append(match)
        covered.update(range(line, end_line + 1))
        ctx = match.get("context") or {}
        before = list(ctx.get("before") or ())
        for i, text in enumerate(before):
            context.setdefault(line - len(before) + i, str(text))
        for i, text in enumerate(ctx.get("after") or ()):
            context.setdefault(end_line + 1 + i, str(text))
    gutter = max(len(f"#{m.get('n')}") for m in matches) + 2
    previous: int | None = None
    for number in sorted(set(match_lines) | (set(context) - covered)):
        if number in covered and number not in match_lines:
            continue
        if previous is not None and number > previous + 1:
            block.append("\n--", style=STYLE_CONTEXT)
        if number in match_lines:
            for match in match_lines[number]:
                block.append("\n")
                block.append(f"#{match.get('n')}".ljust(gutter), style=STYLE_REF)
                block.append(f"{number}:{match.get('column')}:", style=STYLE_LINENO)
                block.append(" ")
                block.append_text(_match_text(match, gutter + len(f"{number}:")))
            previous = int(match_lines[number][-1].get("end_line") or number)
        else:
            block.append("\n")
            block.append(
                " " * gutter + f"{number}- {context[number]}".rstrip(), style=STYLE_CONTEXT
            )
            previous = number
    return block


def _whole_file_line(match: Json) -> Text:
    """A ``files``-mode match (or any match without a line): ``#n  path  score``."""
    line = styled()
    line.append(f"#{match.get('n')}", style=STYLE_REF)
    line.append("  ")
    line.append(str(match.get("path") or match.get("text") or ""), style=STYLE_PATH)
    if match.get("score") is not None:
        line.append(f"  score {match['score']}", style=STYLE_CONTEXT)
    return line


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


def _symbol_line(match: Json, symbol: Json) -> Text:
    """``#n path:line:col  phrase``, then the match's code lines indented below it."""
    out = styled()
    out.append(f"#{match.get('n')}", style=STYLE_REF)
    out.append(" ")
    out.append(str(match.get("path")), style=STYLE_PATH)
    out.append(f":{match.get('line')}:{match.get('column')}", style=STYLE_LINENO)
    out.append("  " + symbol_phrase(symbol))
    for text in _display_text(str(match.get("text") or "")):
        out.append("\n")
        out.append(f"    {text}".rstrip(), style=STYLE_CONTEXT)
    return out


def _symbol_notes(data: Json, symbols: Sequence[Json]) -> list[tuple[str, str]]:
    """Hints under a symbol listing: how to read a body and rename, and what syntactic means."""
    notes: list[tuple[str, str]] = []
    result = data.get("result")
    declarations = [s for s in symbols if s.get("kind") != "reference"]
    if result and declarations and data.get("mode") != "symbol":
        hint = "body: sleuth search 'symbol:#<id>'"
        if any(s.get("precision") == "semantic" for s in declarations):
            hint += f"   rename: sleuth rename {result}:<n>:match NEW"
        notes.append((hint, STYLE_CONTEXT))
    if any(s.get("precision") == "syntactic" for s in symbols):
        notes.append(
            (
                "syntactic: names from tree-sitter, not resolved by a language server "
                "(see sleuth doctor)",
                STYLE_WARN,
            )
        )
    return notes


def search_human(data: Json) -> Text:
    """The CLI's human rendering of a search response."""
    out = styled(_header(data), style=STYLE_HEADER)
    matches: list[Json] = list(data.get("matches") or ())
    groups: dict[str, list[Json]] = {}
    symbols: list[Json] = []
    for match in matches:
        symbol = match.get("symbol")
        if isinstance(symbol, Mapping) and match.get("line") is not None:
            symbols.append(symbol)
            out.append("\n" if len(symbols) > 1 else "\n\n")
            out.append_text(_symbol_line(match, symbol))
        elif match.get("line") is None:
            out.append("\n")
            out.append_text(_whole_file_line(match))
        else:
            groups.setdefault(str(match.get("path")), []).append(match)
    for path, group in groups.items():
        out.append("\n\n")
        out.append_text(_file_block(path, group))
    footer = _absence_lines(data) + _symbol_notes(data, symbols)
    result = data.get("result")
    if matches and result:
        footer.append((f"refs: {result}:<n>:match  {result}:<n>:line", STYLE_CONTEXT))
        all_refs = data.get("all") or {}
        if all_refs:
            footer.append(("all:  " + "  ".join(str(v) for v in all_refs.values()), STYLE_CONTEXT))
    skipped = _skipped_phrase(data)
    if skipped:
        footer.append((skipped, STYLE_WARN))
    if data.get("next_cursor"):
        footer.append((f"more: --cursor {data['next_cursor']}", STYLE_WARN))
    for i, (text, style) in enumerate(footer):
        out.append("\n\n" if i == 0 and (groups or symbols) else "\n")
        out.append(text, style=style)
    return out


def _one_line(text: str) -> str:
    return " ⏎ ".join(text.split("\n"))


def search_compact(data: Json) -> str:
    """The MCP text content: a header, one line per match, then short hints
    (docs/faces.md#mcp-server)."""
    lines = [_header(data)]
    for match in data.get("matches") or ():
        n = match.get("n")
        if match.get("line") is None:
            score = f"  score {match['score']}" if match.get("score") is not None else ""
            lines.append(f"{match.get('path')} #{n}{score}")
        else:
            where = f"{match.get('path')}:{match.get('line')}:{match.get('column')}"
            symbol = match.get("symbol")
            what = f"{symbol_phrase(symbol)}  " if isinstance(symbol, Mapping) else ""
            # Indentation dropped: the column already says where the match starts.
            lines.append(f"{where} #{n}  {what}{_one_line(str(match.get('text') or '')).lstrip()}")
    unsafe = list(
        dict.fromkeys(
            str(m.get("path"))
            for m in data.get("matches") or ()
            if m.get("encoding") == BINARY_SAFE
        )
    )
    if unsafe:
        lines.append(f"{BINARY_SAFE} ({BINARY_SAFE_NOTE}): {', '.join(unsafe)}")
    if not data.get("matches"):
        suggestion = suggestion_phrase(data, with_refs=True)
        lines.append("no matches; " + suggestion if suggestion else "no matches")
        if not data.get("complete", True):
            lines.append("incomplete search: zero matches is not proof of absence")
    skipped = _skipped_phrase(data)
    if skipped:
        lines.append(skipped)
    if data.get("next_cursor"):
        lines.append(f"next_cursor: {data['next_cursor']}")
    return "\n".join(lines)
