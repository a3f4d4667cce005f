"""Search answers for people: ``search_human``, the CLI's ripgrep-like rendering.

Matches are grouped under their path with context lines, symbols and graph lines one a line,
then the hints (references, the next cursor, skipped files, suggestions). The model's
rendering is ``render.compact``; the phrases both say are ``render.search_phrases``.
"""

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
    styled,
)
from sleuth.render.compact import graph_line, search_compact
from sleuth.render.search_phrases import (
    search_header,
    skipped_phrase,
    suggestion_phrase,
    symbol_phrase,
)

if TYPE_CHECKING:
    from rich.text import Text

__all__ = ["search_human"]


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
    out = styled(search_header(data), style=STYLE_HEADER)
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
            first, *edges = graph_line(data, match, graph)
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
    skipped = skipped_phrase(data)
    if skipped:
        footer.append((skipped, STYLE_WARN))
    if data.get("next_cursor"):
        footer.append((f"more: --cursor {data['next_cursor']}", STYLE_WARN))
    for i, (text, style) in enumerate(footer):
        out.append("\n\n" if i == 0 and (groups or symbols or graphs) else "\n")
        out.append(text, style=style)
    return out
