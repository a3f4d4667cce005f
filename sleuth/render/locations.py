"""The ``output="locations"`` text of a search (docs/faces.md#locations): where each match is,
without its text — each file's path once, then the ``line:col`` of its matches in order.

An agent that wants every place a name is used (to count, to check, or to edit them all through
``SEARCH#H:all:match``) reads a fraction of the bytes of the match lines: a use's line is mostly
code it does not need, and its path repeats on every line of ripgrep's output.

    #1 src/requests/cookies.py: 521:5 553:21
    #3 src/requests/models.py: 40:40 624:29 691:24

The number before the path is the first match's ``n``; the file's other matches follow it in
order (``SEARCH#H:4:match`` is ``624:29`` above). A match without a line (``files:``) is its path
alone.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from sleuth.render.common import Json

__all__ = ["location_lines", "location_fit"]


def _position(match: Json) -> str | None:
    line = match.get("line")
    if line is None:
        return None
    column = match.get("column")
    return f"{line}:{column}" if column is not None else str(line)


def _groups(matches: Sequence[Json]) -> Iterator[tuple[str, object, list[str]]]:
    """(path, first n, positions) of each run of matches in one file."""
    path: str | None = None
    first: object = None
    positions: list[str] = []
    for match in matches:
        where = str(match.get("path"))
        position = _position(match)
        if where != path or position is None or not positions:
            if path is not None:
                yield path, first, positions
            path, first, positions = where, match.get("n"), []
        if position is not None:
            positions.append(position)
    if path is not None:
        yield path, first, positions


def _line(path: str, first: object, positions: list[str]) -> str:
    return f"#{first} {path}: {' '.join(positions)}" if positions else f"#{first} {path}"


def location_lines(matches: Sequence[Json]) -> list[str]:
    """One line per run of matches in one file."""
    return [_line(path, first, positions) for path, first, positions in _groups(matches)]


def location_fit(matches: Sequence[Json], budget: int) -> int:
    """How many of ``matches`` the location lines show within ``budget`` bytes (at least one)."""
    used = 0
    path: str | None = None
    for count, match in enumerate(matches):
        where = str(match.get("path"))
        position = _position(match) or ""
        if where == path and position:
            used += len(position) + 1
        else:
            used += len(f"#{match.get('n')} {where}: {position}".encode()) + 1
            path = where if position else None
        if used > budget:
            return max(count, 1)
    return len(matches)
