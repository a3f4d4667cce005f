"""Whether a graph cache row tells the truth about a file's bytes (docs/SAFETY.md#damaged-or-planted-state).

A row of ``.sleuth/graph.db`` can arrive with the tree (committed, unpacked, copied) or be
planted; its stamp is only a hash of the bytes, which anyone can compute. So when the keeper
has the file's bytes in hand and the stamps agree, the row is still checked against them
before it is kept: every declaration's name is the text at its name range, its id is the one
its path, container-qualified name and kind give, its lines and signature are those of its
range; every use's name is the text at its range, on its line, with the receiver the bytes
give and an enclosing declaration of the file; every edge of the file's resolution leaves the
file or one of its declarations at the range of one of its uses. A row that does not fit is
tagged again (as a file whose stamp changed). Nothing here decides where an edge leads: that
is checked when it is installed (the other end must be a node of the graph).
"""

from __future__ import annotations

import bisect
import re

from sleuth.graph.records import RecordRow
from sleuth.graph.source_facts import receiver_at, signature_of
from sleuth.graph.table import ResolutionRow
from sleuth.model import symbol_id

_NEWLINE = re.compile(b"\n")

__all__ = ["row_fits"]


def row_fits(path: str, row: RecordRow, res: ResolutionRow | None, data: bytes) -> bool:
    """True when ``row`` (and ``res``, the file's resolution, when given) fits ``data``."""
    try:
        return _fits(path, row, res, data)
    except (TypeError, ValueError, AttributeError, IndexError, UnicodeError):
        return False  # a row of other shapes or types tells nothing


def _fits(path: str, row: RecordRow, res: ResolutionRow | None, data: bytes) -> bool:
    newlines = [m.start() for m in _NEWLINE.finditer(data)]
    size = len(data)

    def line_of(offset: int) -> int:
        return bisect.bisect_left(newlines, offset) + 1

    ids: set[str] = set()
    for i, name, kind, container, sb, eb, line, end_line, ns, ne, sig in row[4]:
        if not 0 <= sb <= ns <= ne <= eb <= size or data[ns:ne] != name.encode():
            return False
        if i != symbol_id(path, f"{container}.{name}" if container else name, kind):
            return False
        if line != line_of(sb) or end_line not in (line_of(eb), line_of(max(sb, eb - 1))):
            return False
        if sig != signature_of(data, sb, eb):
            return False
        ids.add(i)
    uses: set[tuple[int, int, int]] = set()
    for name, kind, start, end, line, enclosing, _, _, receiver in row[5]:
        if not 0 <= start <= end <= size or data[start:end] != name.encode():
            return False
        if line != line_of(start) or (enclosing is not None and enclosing not in ids):
            return False
        if receiver != receiver_at(data, kind, name, start, end):
            return False
        uses.add((start, end, line))
    if res is None:
        return True
    for source, _, _, occurrences in res[0]:
        if source != path and source not in ids:
            return False
        if any(tuple(occ) not in uses for occ in occurrences):
            return False
    return True
