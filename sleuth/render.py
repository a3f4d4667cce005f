"""Renderings of the SPEC §3.4 JSON for people (CLI) and for models (MCP text content).

Faces are thin (DESIGN): every function here is pure and reads only the JSON dict a verb
returned, so a field the engine adds shows up in ``--json`` and ``structuredContent`` without any
change here, and the renderings can be tested without an engine.

- ``search_human`` builds a ripgrep-like ``rich.text.Text``: a header, matches grouped under
  their path with context lines, then hints (references, next cursor, skipped files, suggestions).
  Styles are attached as spans; the CLI prints ``.plain`` when colour is off.
- ``search_compact`` is the MCP text content of SPEC §10: one header line, then one line per
  match ``path:line:col #n  text`` so ``SEARCH#H:n:match`` is derivable without repeating it.
- Matches in files that are not UTF-8 (``"encoding": "binary-safe"``, SPEC §1) are marked once
  per file: ``[binary-safe: …]`` after the path (CLI), one hint line naming the files (MCP).
- ``read_human`` / ``read_compact`` render a SPEC §5 ``read``/``select`` answer: a header with
  the ``RESULT#`` id and its source, then the selected text with line numbers, sparse ranges of
  one file kept apart by a gap marker (CLI) or by their line numbers (``path:line| text``, MCP).
- Symbol matches (``symbols:``, ``symbol:#``; SPEC §7) are listed one per line instead, as
  ``#1 pkg/a.py:5:5  function get_user  [semantic] id=aac9e3052f59`` (a reference:
  ``reference get_user -> aac9e3052f59  [semantic]``) with the code below it; the compact form
  puts the same phrase between ``path:line:col #n`` and the text.
- ``index_human`` is the one line ``sleuth index`` prints.
- ``edit_human`` / ``edit_compact`` render an edit's answer (SPEC §9): a header
  ``RESULT#… replace: 2 files changed``, then the unified diff (``+`` green, ``-`` red when
  colour is on); the CLI adds the ``sleuth undo RESULT#…`` hint.
- ``rename_human`` / ``rename_compact``: a rename's header and diff, then the occurrences of
  the old name it left alone (``untouched``), listed for review.
- ``doctor_human`` / ``doctor_compact``: the language-server table of ``sleuth doctor``.
- ``error_line`` is the one-line form of a SPEC §3.5 error object; ``printable`` makes any
  answer encodable as UTF-8 (a lone surrogate written out as ``\\udcff`` text).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.text import Text

__all__ = [
    "search_human",
    "search_compact",
    "read_human",
    "read_compact",
    "index_human",
    "edit_header",
    "edit_human",
    "edit_compact",
    "rename_header",
    "rename_human",
    "rename_compact",
    "doctor_human",
    "doctor_compact",
    "symbol_phrase",
    "error_line",
    "printable",
    "count_phrase",
    "status_phrase",
    "suggestion_phrase",
]

Json = Mapping[str, Any]

STYLE_HEADER = "bold"
STYLE_PATH = "bold magenta"
STYLE_LINENO = "green"
STYLE_REF = "cyan"
STYLE_MATCH = "bold red"
STYLE_CONTEXT = "dim"
STYLE_WARN = "yellow"
STYLE_DIFF_ADD = "green"
STYLE_DIFF_DEL = "red"
STYLE_DIFF_HUNK = "cyan"
STYLE_DIFF_FILE = "bold"
BINARY_SAFE = "binary-safe"
BINARY_SAFE_NOTE = "not UTF-8, searched as bytes"


def _text(text: str = "", style: str = "") -> Text:
    """A new ``rich`` text, imported on first use: a ``--json`` call never renders (~30 ms)."""
    from rich.text import Text

    return Text(text, style=style)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}es" if word.endswith("ch") else f"{n} {word}s"


def count_phrase(data: Json) -> str:
    """``3 matches`` when the total is known, ``at least 100 matches`` when it is not (§3.4)."""
    total = data.get("total")
    if isinstance(total, int):
        return _plural(total, "match")
    at_least = data.get("total_at_least")
    if isinstance(at_least, int):
        return f"at least {_plural(at_least, 'match')}"
    return _plural(len(data.get("matches") or ()), "match") + " on this page"


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
    """``did you mean: get_user (3), GetUsers (1)`` from ``possible_names``, or None (§3.1.5)."""
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
    """The lines said after an empty page: suggestions, and the not-a-proof warning (§3.4)."""
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
    out = _text("\n".join(lines[:1]))
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
    block = _text(path, style=STYLE_PATH)
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
    line = _text()
    line.append(f"#{match.get('n')}", style=STYLE_REF)
    line.append("  ")
    line.append(str(match.get("path") or match.get("text") or ""), style=STYLE_PATH)
    if match.get("score") is not None:
        line.append(f"  score {match['score']}", style=STYLE_CONTEXT)
    return line


def symbol_phrase(symbol: Json) -> str:
    """What a symbol match is (SPEC §7): ``method Cart.total  [semantic] id=f0ea30790afb`` for
    a declaration, ``reference total -> f0ea30790afb  [semantic]`` for a reference (``-> one
    of A, B`` when it was not resolved between same-named declarations)."""
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
    out = _text()
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
    out = _text(_header(data), style=STYLE_HEADER)
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
    """The MCP text content: a header, one line per match, then short hints (SPEC §10)."""
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


# --- read / select ---------------------------------------------------------------------------

LINENO_WIDTH = 4
GAP = "…"


def _range_lines(rng: Json) -> list[tuple[int, str]]:
    """``(line number, text)`` for each line of one selected range (no trailing EOL line)."""
    first = int(rng.get("line") or 1)
    end_line = int(rng.get("end_line") or first)
    lines = str(rng.get("text") or "").split("\n")
    if len(lines) > end_line - first + 1 and lines[-1] == "":
        lines.pop()  # the range ends with its last line's EOL
    return [(first + i, text.removesuffix("\r")) for i, text in enumerate(lines)]


def _read_header(data: Json) -> str:
    parts = [f"{data.get('result') or '(no result id)'} from {data.get('source') or '?'}"]
    ranges = data.get("ranges") or ()
    parts.append(_plural(len(ranges), "range"))
    parts.append("complete" if data.get("complete", True) else "incomplete")
    if data.get("refreshed"):
        parts.append("refreshed")
    return "  ".join(parts)


def _read_notes(data: Json) -> list[str]:
    notes = []
    if data.get("refreshed"):
        notes.append(
            "refreshed: files changed since the search, so it was re-run and these "
            "are the fresh matches"
        )
    if not data.get("complete", True):
        reason = data.get("incomplete_reason")
        notes.append(f"incomplete: {reason}" if reason else "incomplete selection")
    return notes


def read_human(data: Json) -> Text:
    """The CLI's rendering of a ``read``/``select`` answer: ``  12 | text`` under each path,
    with ``   … |`` between ranges of one file that are not adjacent."""
    out = _text()
    out.append(_read_header(data), style=STYLE_HEADER)  # a span: the text below is not bold
    for note in _read_notes(data):
        out.append("\n")
        out.append(note, style=STYLE_WARN)
    ranges: list[Json] = list(data.get("ranges") or ())
    if not ranges:
        out.append("\n")
        out.append("nothing selected", style=STYLE_WARN)
        return out
    width = max(LINENO_WIDTH, *(len(str(r.get("end_line") or r.get("line") or 1)) for r in ranges))
    path: str | None = None
    last_line = 0
    for rng in ranges:
        lines = _range_lines(rng)
        if rng.get("path") != path:
            path = str(rng.get("path"))
            out.append("\n\n")
            out.append(path, style=STYLE_PATH)
        elif lines and lines[0][0] > last_line + 1:
            out.append("\n")
            out.append(f"{GAP:>{width}} |", style=STYLE_CONTEXT)
        for number, text in lines:
            out.append("\n")
            out.append(f"{number:>{width}} |", style=STYLE_LINENO)
            if text:
                out.append(" " + text)
            last_line = number
    return out


def read_compact(data: Json) -> str:
    """The MCP text content of a ``read``/``select`` answer: the header, then one
    ``path:line| text`` line per selected line (gaps show as jumps in the line numbers)."""
    lines = [_read_header(data), *_read_notes(data)]
    for rng in data.get("ranges") or ():
        for number, text in _range_lines(rng):
            lines.append(f"{rng.get('path')}:{number}|" + (f" {text}" if text else ""))
    if not data.get("ranges"):
        lines.append("nothing selected")
    return "\n".join(lines)


def index_human(data: Json) -> Text:
    """``indexed 42 files into .sleuth/trigram.idx``."""
    out = _text("indexed ")
    out.append(_plural(int(data.get("indexed") or 0), "file"), style=STYLE_HEADER)
    out.append(" into ")
    out.append(str(data.get("path") or "?"), style=STYLE_PATH)
    return out


# --- edits ---------------------------------------------------------------------------------


def edit_header(data: Json, verb: str) -> str:
    """``RESULT#… replace: 2 files changed`` (plus ``refreshed`` when an ``:all`` re-ran)."""
    changed = data.get("changed") or ()
    text = (
        f"{data.get('result') or '(no result id)'} {verb}: {_plural(len(changed), 'file')} changed"
    )
    return text + "  refreshed" if data.get("refreshed") else text


def _edit_notes(data: Json) -> list[str]:
    if data.get("refreshed"):
        return [
            "refreshed: files changed since the search, so it was re-run and the fresh "
            "matches were edited"
        ]
    return []


_HUNK = re.compile(r"@@ -\d+(?:,(?P<old>\d+))? \+\d+(?:,(?P<new>\d+))? @@")


def _diff_lines(data: Json) -> list[tuple[str, str | None]]:
    """The diff's lines with their styles, without the carriage returns of CRLF files.

    Hunk headers say how many old and new lines follow, so a removed line that itself starts
    with ``--`` is not mistaken for a file header."""
    diff = str(data.get("diff") or "")
    lines = diff.split("\n")
    if diff.endswith("\n"):
        lines.pop()
    out: list[tuple[str, str | None]] = []
    old = new = 0
    for raw in lines:
        line = raw.removesuffix("\r")
        style: str | None = None
        if line.startswith("\\"):
            style = STYLE_CONTEXT
        elif old or new:
            if line.startswith("-"):
                old, style = old - 1, STYLE_DIFF_DEL
            elif line.startswith("+"):
                new, style = new - 1, STYLE_DIFF_ADD
            else:
                old, new = max(old - 1, 0), max(new - 1, 0)
        elif line.startswith("@@"):
            style = STYLE_DIFF_HUNK
            hunk = _HUNK.match(line)
            if hunk:
                old = int(hunk["old"] if hunk["old"] is not None else 1)
                new = int(hunk["new"] if hunk["new"] is not None else 1)
        elif line.startswith(("--- ", "+++ ")):
            style = STYLE_DIFF_FILE
        out.append((line, style))
    return out


def edit_human(data: Json, *, verb: str) -> Text:
    """The CLI's rendering of an edit: the header, the unified diff, and how to undo it."""
    out = _text()
    out.append(edit_header(data, verb), style=STYLE_HEADER)  # a span: the diff is not bold
    for note in _edit_notes(data):
        out.append("\n")
        out.append(note, style=STYLE_WARN)
    for line, style in _diff_lines(data):
        out.append("\n")
        out.append(line, style=style or "")
    if verb != "undo" and data.get("result"):
        out.append("\n")
        out.append(f"undo: sleuth undo {data['result']}", style=STYLE_CONTEXT)
    return out


def edit_compact(data: Json, *, verb: str) -> str:
    """The MCP text content of an edit: the header, then the unified diff."""
    lines = [line for line, _ in _diff_lines(data)]
    return "\n".join([edit_header(data, verb), *_edit_notes(data), *lines])


# --- rename / doctor ---------------------------------------------------------------------------

UNTOUCHED_TITLE = "not renamed (text matches, review them):"


def rename_header(data: Json) -> str:
    """``RESULT#… rename: 5 occurrences in 2 files`` (SPEC §7)."""
    changed = data.get("changed") or ()
    ranges = data.get("ranges") or ()
    text = (
        f"{data.get('result') or '(no result id)'} rename: "
        f"{_plural(len(ranges), 'occurrence')} in {_plural(len(changed), 'file')}"
    )
    return text + "  refreshed" if data.get("refreshed") else text


def _untouched_lines(data: Json) -> list[str]:
    """``path:line  text`` for each occurrence of the old name the rename left alone."""
    return [
        f"{u.get('path')}:{u.get('line')}  {str(u.get('text') or '').strip()}"
        for u in data.get("untouched") or ()
        if isinstance(u, Mapping)
    ]


def rename_human(data: Json) -> Text:
    """The CLI's rendering of a rename: header, unified diff, then the untouched occurrences."""
    out = _text()
    out.append(rename_header(data), style=STYLE_HEADER)
    for line, style in _diff_lines(data):
        out.append("\n")
        out.append(line, style=style or "")
    untouched = _untouched_lines(data)
    if untouched:
        out.append("\n")
        out.append(UNTOUCHED_TITLE, style=STYLE_WARN)
        for line in untouched:
            out.append("\n  " + line)
    return out


def rename_compact(data: Json) -> str:
    """The MCP text content of a rename: header, diff, untouched occurrences."""
    lines = [rename_header(data), *(line for line, _ in _diff_lines(data))]
    untouched = _untouched_lines(data)
    if untouched:
        lines += [UNTOUCHED_TITLE, *("  " + line for line in untouched)]
    return "\n".join(lines)


DOCTOR_COLUMNS = ("language", "server", "found", "version", "install")


def _doctor_cells(rows: Sequence[Json]) -> list[list[str]]:
    cells = []
    for row in rows:
        found = row.get("found")
        cells.append(
            [
                str(row.get("language") or "?"),
                str(row.get("server") or "?"),
                "yes" if found else "no",
                str(row.get("version") or "-"),
                str(row.get("install") or ""),
            ]
        )
    return cells


def _doctor_summary(rows: Sequence[Json]) -> str:
    missing = [str(r.get("language")) for r in rows if not r.get("found")]
    if not rows:
        return "language servers are off in this workbench"
    if not missing:
        return "every language has its server: symbols: answers are semantic"
    return (
        f"no server for {', '.join(missing)}: symbols: answers there are syntactic and "
        "rename is unsupported"
    )


def _doctor_table(rows: Sequence[Json]) -> list[str]:
    cells = _doctor_cells(rows)
    widths = [
        max(len(c[i]) for c in [list(DOCTOR_COLUMNS), *cells])
        for i in range(len(DOCTOR_COLUMNS) - 1)
    ]
    return [
        "  ".join([*(c[i].ljust(w) for i, w in enumerate(widths)), c[-1]]).rstrip()
        for c in [list(DOCTOR_COLUMNS), *cells]
    ]


def doctor_human(rows: Sequence[Json] | Json) -> Text:
    """``sleuth doctor``: one row per language, missing servers in yellow, then a summary
    (``doctor --recover``: the interrupted edits left for the user)."""
    if isinstance(rows, Mapping):
        return _text(recovered_compact(rows))
    out = _text()
    table = _doctor_table(rows)
    out.append(table[0], style=STYLE_HEADER)
    for row, line in zip(rows, table[1:], strict=True):
        out.append("\n")
        out.append(line, style="" if row.get("found") else STYLE_WARN)
    out.append("\n")
    out.append(_doctor_summary(rows), style=STYLE_CONTEXT)
    return out


def doctor_compact(data: Json) -> str:
    """The MCP text content of ``doctor`` (``{"servers": [...], "recovered": [...]}``)."""
    rows = [r for r in data.get("servers") or () if isinstance(r, Mapping)]
    lines = [*_doctor_table(rows), _doctor_summary(rows)]
    if data.get("recovered"):
        lines.append(recovered_compact(data))
    return "\n".join(lines)


def recovered_compact(data: Json) -> str:
    """Interrupted edits recovery left as they were: each journal, each file and why."""
    reports = [r for r in data.get("recovered") or () if isinstance(r, Mapping)]
    if not reports:
        return "no interrupted edit was left unfinished"
    lines = []
    for report in reports:
        lines.append(f"interrupted edit kept in {report.get('journal')} (old bytes inside):")
        for f in report.get("files") or ():
            if isinstance(f, Mapping):
                lines.append(f"  {f.get('path') or '(journal)'}: {f.get('reason')}")
    return "\n".join(lines)


def error_line(error: Json) -> str:
    """``error[CODE]: message`` (plus ``retry after Ns``) from a SPEC §3.5 error object."""
    body = error.get("error", error)
    text = f"error[{body.get('code', 'internal')}]: {body.get('message', '')}"
    if body.get("retry_after") is not None:
        text += f" (retry after {body['retry_after']}s)"
    return text


def printable(value: Any) -> Any:
    """The JSON ``value`` with each lone surrogate in its strings written out as ``\\udcff``
    text, so it encodes as UTF-8: an error may quote input that is not Unicode, and an answer
    must still be printed (or sent) whole rather than fail half-way."""
    if isinstance(value, str):
        if value.isascii():
            return value
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, Mapping):
        return {printable(k): printable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [printable(v) for v in value]
    return value
