"""Search answers for models: the MCP text content (``search_compact``, docs/faces.md#mcp-server).

One header line, then the lines of each match (``path:line:col #n  text``, captures, graph
edges, a declaration, context lines not shown yet), then short hints; ``output="locations"``
shows one line of positions per file instead (``render.locations``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from json.encoder import encode_basestring

from sleuth.render.common import BINARY_SAFE, BINARY_SAFE_NOTE, Json, visible
from sleuth.render.line_spans import LineSpans
from sleuth.render.locations import location_lines
from sleuth.render.search_phrases import (
    search_header,
    skipped_phrase,
    status_phrase,
    suggestion_phrase,
    symbol_phrase,
)

__all__ = [
    "search_compact",
    "match_compact",
    "compact_header",
    "compact_tail",
    "matched_lines",
    "graph_line",
    "CAPTURE_CHARS",
]


def _one_line(text: str) -> str:
    return " ⏎ ".join(text.split("\n"))


CAPTURE_CHARS = 80
"""The most of a capture's text the compact rendering shows (its RESULT# selects all of it)."""


def _quoted(text: str, most: int = CAPTURE_CHARS) -> str:
    # Only the head can be shown: quoting a whole function body to keep 80 characters of it
    # was most of the rendering of an ast: page (escapes only lengthen, so the head suffices).
    # json.dumps(head, ensure_ascii=False) is this C function once its checks are done: a
    # page of ast: captures quotes three heads a match
    shown = encode_basestring(text[:most])
    return shown if len(shown) <= most and len(text) <= most else shown[: most - 2] + '…"'


def compact_status(data: Json) -> str:
    """``complete`` only when the search was complete and this page shows the rest of it;
    ``more`` when a cursor continues it (docs/faces.md#mcp-server)."""
    if not data.get("complete", True):
        return status_phrase(data) + ("  more" if data.get("next_cursor") else "")
    return "more" if data.get("next_cursor") else "complete"


def compact_header(data: Json) -> str:
    return search_header(data, compact_status)


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


def graph_line(data: Json, match: Json, graph: Json) -> list[str]:
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
        out = graph_line(data, match, graph)
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
    return [visible(text) for text in lead + out + trail]  # shown, never obeyed


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
    skipped = skipped_phrase(data)
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
