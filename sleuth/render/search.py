"""Search answers for people (``search_human``) and for models (``search_compact``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
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
from sleuth.render.line_spans import LineSpans
from sleuth.render.locations import location_lines

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


def _header(data: Json, status: Callable[[Json], str] = status_phrase) -> str:
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


def _absence_lines(data: Json) -> list[tuple[str, str]]:
    """The lines said after the matches: a recovered pattern's warning, and after an empty
    page the suggestions and the not-a-proof warning (docs/json.md#search)."""
    warning = data.get("pattern_warning")
    said = [(f"warning: {warning}", STYLE_WARN)] if warning else []
    if data.get("matches"):
        return said
    lines: list[tuple[str, str]] = said
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
    """The CLI's human rendering of a search response (``output="locations"``: the model's)."""
    if data.get("output") == "locations":
        return styled(search_compact(data))
    out = styled(_header(data), style=STYLE_HEADER)
    matches: list[Json] = list(data.get("matches") or ())
    groups: dict[str, list[Json]] = {}
    symbols: list[Json] = []
    graphs = 0
    for match in matches:
        symbol = match.get("symbol")
        graph = match.get("graph")
        if isinstance(symbol, Mapping) and match.get("line") is not None:
            symbols.append(symbol)
            out.append("\n" if len(symbols) > 1 else "\n\n")
            out.append_text(_symbol_line(match, symbol))
        elif isinstance(graph, Mapping) and match.get("line") is not None:
            # a declaration or a use, with its edges: the model's lines are the people's too
            graphs += 1
            out.append("\n" if graphs > 1 else "\n\n")
            first, *edges = _graph_line(data, match, graph)
            out.append(first)
            for edge in edges:
                out.append("\n" + edge, style=STYLE_CONTEXT)
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
        out.append("\n\n" if i == 0 and (groups or symbols or graphs) else "\n")
        out.append(text, style=style)
    return out


def _one_line(text: str) -> str:
    return " ⏎ ".join(text.split("\n"))


CAPTURE_CHARS = 80
"""The most of a capture's text the compact rendering shows (its RESULT# selects all of it)."""


def _quoted(text: str, most: int = CAPTURE_CHARS) -> str:
    # Only the head can be shown: quoting a whole function body to keep 80 characters of it
    # was most of the rendering of an ast: page (escapes only lengthen, so the head suffices).
    shown = json.dumps(text[:most], ensure_ascii=False)
    return shown if len(shown) <= most and len(text) <= most else shown[: most - 2] + '…"'


def compact_status(data: Json) -> str:
    """``complete`` only when the search was complete and this page shows the rest of it;
    ``more`` when a cursor continues it (docs/faces.md#mcp-server)."""
    if not data.get("complete", True):
        return status_phrase(data) + ("  more" if data.get("next_cursor") else "")
    return "more" if data.get("next_cursor") else "complete"


def compact_header(data: Json) -> str:
    return _header(data, compact_status)


def _qualified(node: Json) -> str:
    container = node.get("container")
    name = str(node.get("name") or "?")
    return f"{container}.{name}" if container else name


def _edge_phrase(graph: Json) -> str:
    """``<- calls Dog.speak`` (the declaration is used there by Dog.speak) or ``-> calls x``
    (it uses x there), with the edge's precision when a language server confirmed it."""
    arrow = "<-" if graph.get("direction") == "in" else "->"
    node = graph.get("node") or {}
    edge = str(graph.get("edge") or "?")
    if edge == "dependent":
        edge = f"dependent (distance {graph.get('distance')})"
    precision = "  [semantic]" if graph.get("precision") == "semantic" else ""
    return f"{arrow} {edge} {_qualified(node)}{precision}"


EDGE_NAMES = 4
"""How many other ends of one edge kind a ``graph:PATH`` line names."""


def _edge_lines(graph: Json) -> list[str]:
    """Under a ``graph:PATH`` declaration: one line per edge kind and direction."""
    lines = []
    for direction, arrow in (("incoming", "<-"), ("outgoing", "->")):
        for kind, edges in (graph.get(direction) or {}).items():
            neighbors = list(edges.get("neighbors") or ())
            names = [_qualified(n.get("node") or {}) for n in neighbors[:EDGE_NAMES]]
            more = int(edges.get("count") or len(neighbors)) - len(names)
            tail = f" (+{more} more)" if more > 0 else ""
            lines.append(f"    {arrow} {kind}: {', '.join(names)}{tail}")
    return lines


def _graph_line(data: Json, match: Json, graph: Json) -> list[str]:
    where = f"{match.get('path')}:{match.get('line')}:{match.get('column')} #{match.get('n')}"
    if "direction" in graph:  # graph:#ID: one use, at the occurrence
        text = _one_line(str(match.get("text") or "")).strip()
        return [f"{where}  {_edge_phrase(graph)}  {text}"]
    what = f"{graph.get('kind') or 'symbol'} {_qualified(graph)}  id={graph.get('id')}"
    signature = str(graph.get("signature") or "").strip()
    if not data.get("query", "graph:").removeprefix("graph:").strip():  # ``graph:`` alone
        score = match.get("score")
        rank = f"rank {match.get('n')}" + (f" ({score:.4f})" if isinstance(score, float) else "")
        return [f"{where}  {rank}  {what}  {signature}"]
    return [f"{where}  {what}  {signature}", *_edge_lines(graph)]


def _first_line(match: Json, end_line: int) -> str:
    """A match's first line; one spanning more lines says up to where (its ref selects it)."""
    first, *rest = str(match.get("text") or "").split("\n")
    return first.strip() + (f"  … (to line {end_line})" if rest else "")


def _capture_lines(match: Json) -> list[str]:
    lines = []
    for name, capture in (match.get("captures") or {}).items():
        if not isinstance(capture, Mapping):
            continue
        nodes = capture.get("nodes")
        count = f" ({nodes} nodes)" if isinstance(nodes, int) and nodes != 1 else ""
        ref = capture.get("ref")
        target = f"  -> {ref}" if ref else ""
        lines.append(f"  ${name}{count} = {_quoted(str(capture.get('text') or ''))}{target}")
    return lines


def _declaration_lines(match: Json, symbol: Json) -> list[str]:
    """``symbol:#ID``: the whole declaration, numbered like ``read``."""
    text = symbol.get("declaration")
    if not isinstance(text, str):
        return []
    first = int(match.get("line") or 1)
    lines = [f"{first + i}| {line}".rstrip() for i, line in enumerate(text.split("\n"))]
    if symbol.get("declaration_cut"):
        lines.append(f"… (cut: read {match.get('ref', {}).get('match')} for the rest)")
    return lines


def match_compact(
    data: Json, match: Json, shown: LineSpans, shown_refs: dict[str, str]
) -> list[str]:
    """The compact lines of one match: the match line, its captures, graph edges or
    declaration, and context lines not shown yet (``shown``: (path, line) printed so far;
    ``shown_refs``: the reference phrase said last, not repeated by the next reference)."""
    n = match.get("n")
    if match.get("line") is None:
        score = f"  score {match['score']}" if match.get("score") is not None else ""
        return [f"{match.get('path')} #{n}{score}"]
    graph = match.get("graph")
    path = str(match.get("path"))
    line = int(match["line"])
    end_line = int(match.get("end_line") or line)
    if isinstance(graph, Mapping):
        out = _graph_line(data, match, graph)
    else:
        where = f"{path}:{line}:{match.get('column')}"
        symbol = match.get("symbol")
        what = f"{symbol_phrase(symbol)}  " if isinstance(symbol, Mapping) else ""
        if isinstance(symbol, Mapping) and symbol.get("kind") == "reference":
            # a run of references to one declaration names it once (docs/faces.md#mcp-server)
            what = "" if what == shown_refs.get("last") else what
            shown_refs["last"] = f"{symbol_phrase(symbol)}  "
        if isinstance(symbol, Mapping) and data.get("mode") == "symbol":
            out = [f"{where} #{n}  {what}".rstrip(), *_declaration_lines(match, symbol)]
        else:
            # Indentation dropped: the column already says where the match starts.
            out = [f"{where} #{n}  {what}{_first_line(match, end_line)}"]
    out += _capture_lines(match)
    context = match.get("context") or {}
    before = [str(t) for t in context.get("before") or ()]
    after = [str(t) for t in context.get("after") or ()]
    lead = [
        f"  {number}- {text}".rstrip()
        for number, text in enumerate(before, start=line - len(before))
        if (path, number) not in shown
    ]
    trail = [
        f"  {number}- {text}".rstrip()
        for number, text in enumerate(after, start=end_line + 1)
        if (path, number) not in shown
    ]
    shown.add(path, line - len(before), end_line + len(after))
    return lead + out + trail


def compact_tail(data: Json) -> list[str]:
    """The lines after the matches: binary-safe files, absence, skipped files, the cursor."""
    lines = []
    unsafe = list(
        dict.fromkeys(
            str(m.get("path"))
            for m in data.get("matches") or ()
            if m.get("encoding") == BINARY_SAFE
        )
    )
    if unsafe:
        lines.append(f"{BINARY_SAFE} ({BINARY_SAFE_NOTE}): {', '.join(unsafe)}")
    if data.get("pattern_warning"):
        lines.append(f"warning: {data['pattern_warning']}")
    if not data.get("matches"):
        suggestion = suggestion_phrase(data, with_refs=True)
        lines.append("no matches; " + suggestion if suggestion else "no matches")
        if not data.get("complete", True):
            lines.append("incomplete search: zero matches is not proof of absence")
    names = list(
        dict.fromkeys(name for m in data.get("matches") or () for name in m.get("captures") or {})
    )
    result = str(data.get("result") or "")
    if names and result.startswith("SEARCH#"):
        rid = result.removeprefix("SEARCH#")
        lines.append("every match's: " + "  ".join(f"RESULT#{rid}:all:{n}" for n in names))
    skipped = _skipped_phrase(data)
    if skipped:
        lines.append(skipped)
    if data.get("cut") == "max_bytes":
        lines.append("page cut to fit max_bytes")
    if data.get("next_cursor"):
        lines.append(f"next_cursor: {data['next_cursor']}")
    return lines


def matched_lines(matches: Sequence[Json]) -> LineSpans:
    """(path, line) of every line one of ``matches`` covers: never shown as context."""
    found = LineSpans()
    for match in matches:
        if match.get("line") is not None:
            line = int(match["line"])
            found.add(str(match.get("path")), line, int(match.get("end_line") or line))
    return found


def search_compact(data: Json) -> str:
    """The MCP text content (docs/faces.md#mcp-server): a header, the lines of each match
    (``path:line:col #n  text``, then captures, edges, context), then short hints; with
    ``output="locations"``, one line of positions per file instead of the match lines."""
    lines = [compact_header(data)]
    if data.get("output") == "locations":
        return "\n".join(lines + location_lines(data.get("matches") or ()) + compact_tail(data))
    shown = matched_lines(data.get("matches") or ())
    said: dict[str, str] = {}
    for match in data.get("matches") or ():
        lines.extend(match_compact(data, match, shown, said))
    lines.extend(compact_tail(data))
    return "\n".join(lines)
