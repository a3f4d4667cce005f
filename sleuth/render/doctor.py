"""The language-server table of ``doctor`` and the interrupted edits it lists."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from sleuth.render.common import STYLE_CONTEXT, STYLE_HEADER, STYLE_WARN, Json, styled

if TYPE_CHECKING:
    from rich.text import Text


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
        return styled(recovered_compact(rows))
    out = styled()
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


def daemon_human(data: Json) -> Text:
    """``sleuth daemon``'s line: ``daemon running for ROOT (pid N, up 3.1 s, 2 calls)`` or
    ``no daemon runs for ROOT``."""
    root = str(data.get("root") or "?")
    if not data.get("running"):
        out = styled("no daemon runs for ", STYLE_CONTEXT)
        out.append(root, style=STYLE_HEADER)
        stopped = data.get("stopped_pid")
        if stopped is not None:
            out.append(f" (stopped pid {stopped})", style=STYLE_CONTEXT)
        return out
    out = styled("daemon running for ")
    out.append(root, style=STYLE_HEADER)
    calls = int(data.get("calls") or 0)
    out.append(
        f" (pid {data.get('pid')}, up {data.get('uptime_s')} s, {calls} call"
        f"{'' if calls == 1 else 's'}, exits after {data.get('idle_exit_s')} s idle)",
        style=STYLE_CONTEXT,
    )
    return out
