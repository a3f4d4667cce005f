"""``find`` answers (docs/json.md#find) for people (``find_human``) and models (``find_compact``).

Both start with one header line: the result id, ``files`` or ``grep <grep_mode>``, the count
(``total_matched``; in grep mode with the files it came from), which items are shown, and the
offset of the next page (``next_offset`` / ``next_file_offset``), so paging needs nothing but
the header. Then one line per match: in files mode the path (``#n  path``, its score and
frecency), in grep mode ``path:line:col #n  text`` as ``search`` prints it for models (the
CLI groups the lines under their path, with context, as ripgrep does). Last come the note (an
invalid regex searched as plain text, a file cut at ``max_results``), the warning (unknown
arguments) and, for an empty page, its diagnostics on one line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sleuth.render.common import (
    STYLE_CONTEXT,
    STYLE_HEADER,
    STYLE_LINENO,
    STYLE_PATH,
    STYLE_REF,
    STYLE_WARN,
    Json,
    plural,
    styled,
)

if TYPE_CHECKING:
    from rich.text import Text

__all__ = ["find_human", "find_compact", "find_header"]


def _next(data: Json) -> tuple[str, Any]:
    key = "next_file_offset" if data.get("mode") == "grep" else "next_offset"
    return key, data.get(key)


def find_header(data: Json) -> str:
    """``SEARCH#H  grep plain_text  7 matches in 3 files  showing #1-#7  next_file_offset: 9``."""
    mode = str(data.get("mode") or "files")
    parts = [str(data.get("result") or "(no result)")]
    parts.append(f"grep {data.get('grep_mode')}" if mode == "grep" else "files")
    count = plural(int(data.get("total_matched") or 0), "match")
    if mode == "grep":
        count += f" in {plural(int(data.get('files_with_matches') or 0), 'file')}"
    parts.append(count)
    matches = data.get("matches") or []
    if matches:
        parts.append(f"showing #{matches[0].get('n')}-#{matches[-1].get('n')}")
    key, value = _next(data)
    if value is not None:
        parts.append(f"{key}: {value}")
    parts.append("complete" if data.get("complete", True) else "incomplete")
    return "  ".join(parts)


def _file_line(match: Json) -> str:
    line = f"#{match.get('n')}  {match.get('path')}"
    if match.get("score") is not None:
        line += f"  score {match.get('score')}"
    if match.get("frecency"):
        line += f"  frecency {match.get('frecency')}"
    return line


def _grep_line(match: Json) -> str:
    return f"{match.get('path')}:{match.get('line')}:{match.get('column')} #{match.get('n')}  " + (
        str(match.get("text") or "")
    )


def _diagnostics_line(diag: Json) -> str:
    counts = "  ".join(
        f"{key}={'null' if diag.get(key) is None else diag.get(key)}"
        for key in (
            "total_files",
            "total_files_searched",
            "filtered_file_count",
            "files_with_matches",
            "offset",
            "limit",
            "next_file_offset",
        )
    )
    cons = diag.get("constraints") or {}
    shown = [f"{k}={v}" for k, v in cons.items() if v]
    return f"diagnostics: {counts}" + (f"  constraints: {' '.join(shown)}" if shown else "")


def _tail(data: Json) -> list[tuple[str, str]]:
    """(text, style) of the lines after the matches."""
    out: list[tuple[str, str]] = []
    if not data.get("complete", True) and data.get("incomplete_reason"):
        out.append((f"incomplete: {data['incomplete_reason']}", STYLE_WARN))
    for key in ("note", "warning"):
        if data.get(key):
            out.append((f"{key}: {data[key]}", STYLE_WARN))
    if data.get("diagnostics"):
        out.append((_diagnostics_line(data["diagnostics"]), STYLE_CONTEXT))
    return out


def find_compact(data: Json) -> str:
    """The MCP text content of a ``find`` answer (module docstring)."""
    lines = [find_header(data)]
    grep = data.get("mode") == "grep"
    for match in data.get("matches") or []:
        lines.append(_grep_line(match) if grep else _file_line(match))
    lines.extend(text for text, _ in _tail(data))
    return "\n".join(lines)


def find_human(data: Json) -> Text:
    """The CLI's rendering of a ``find`` answer: grep matches under their path, with context."""
    out = styled(find_header(data), STYLE_HEADER)
    grep = data.get("mode") == "grep"
    path = None
    for match in data.get("matches") or []:
        if not grep:
            out.append("\n" + _file_line(match))
            continue
        if match.get("path") != path:
            path = match.get("path")
            out.append("\n\n")
            out.append(str(path), style=STYLE_PATH)
        context = match.get("context") or {}
        line = int(match.get("line") or 0)
        before = context.get("before") or []
        for i, text in enumerate(before):
            out.append(f"\n    {line - len(before) + i}- {text}", style=STYLE_CONTEXT)
        out.append("\n")
        out.append(f"#{match.get('n')}", style=STYLE_REF)
        out.append("  ")
        out.append(f"{line}:{match.get('column')}:", style=STYLE_LINENO)
        out.append(f" {match.get('text') or ''}")
        for i, text in enumerate(context.get("after") or []):
            out.append(
                f"\n    {int(match.get('end_line') or line) + 1 + i}- {text}", style=STYLE_CONTEXT
            )
    result = data.get("result")
    if result:
        out.append(f"\n\nrefs: {result}:<n>:match  {result}:<n>:line", style=STYLE_REF)
    for text, style in _tail(data):
        out.append("\n" + text, style=style)
    return out
