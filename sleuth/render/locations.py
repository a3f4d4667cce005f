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


def _steps(matches: Sequence[Json]) -> Iterator[tuple[bool, str, Json, str | None]]:
    """(starts a line, path, match, its position) of each match: a new line at a new path, for
    a match without a position, and after one (a path alone stands on its own line)."""
    path: str | None = None
    for match in matches:
        where = str(match.get("path"))
        position = _position(match)
        yield where != path or position is None, where, match, position
        path = where if position is not None else None


def _groups(matches: Sequence[Json]) -> Iterator[tuple[str, object, list[str]]]:
    """(path, first n, positions) of each run of matches in one file."""
    group: tuple[str, object, list[str]] | None = None
    for starts, where, match, position in _steps(matches):
        if starts or group is None:
            if group is not None:
                yield group
            group = (where, match.get("n"), [])
        if position is not None:
            group[2].append(position)
    if group is not None:
        yield group


def _line(path: str, first: object, positions: list[str]) -> str:
    return f"#{first} {path}: {' '.join(positions)}" if positions else f"#{first} {path}"


def location_lines(matches: Sequence[Json]) -> list[str]:
    """One line per run of matches in one file."""
    return [_line(path, first, positions) for path, first, positions in _groups(matches)]


def location_fit(matches: Sequence[Json], budget: int) -> int:
    """How many of ``matches`` the location lines show within ``budget`` bytes (at least one)."""
    used = 0
    for count, (starts, where, match, position) in enumerate(_steps(matches)):
        if starts:
            used += len(_line(where, match.get("n"), [position] if position else []).encode()) + 1
        else:
            used += len(position or "") + 1
        if used > budget:
            return max(count, 1)
    return len(matches)
