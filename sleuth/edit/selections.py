"""What an edit goes through: its reference's selection, refused when unsafe, and its target.

``EditSelections`` (a base of ``Editor``) resolves a reference to its selection (the resolver
checks the stamps, docs/SAFETY.md) and refuses one that is not safe to edit through
(``unsafe_selection``, docs/edits.md#what-an-edit-refuses): a broadened or ``semantic:``
result, whole files its search did not read, an ``:all`` of an incomplete result. A copy or
move target (docs/edits.md#copy-and-move) is a reference selecting one range or ``PATH:LINE``.
``text_arg`` checks every string argument of an edit or undo.
"""

from __future__ import annotations

import re

from sleuth.edit.splices import line_edge
from sleuth.errors import InvalidPath, InvalidQuery, NotFound, UnsafeSelection
from sleuth.query.request import check_text
from sleuth.resources.refs import looks_like_ref, parse_ref
from sleuth.resources.selection import Resolver, Selection
from sleuth.workspace import FileText, Workspace

__all__ = [
    "EditSelections",
    "text_arg",
]

_TARGET = re.compile(r"(?P<path>.+):(?P<line>[1-9][0-9]*)")


def text_arg(value: object, name: str) -> str:
    """``value`` when it is a string of valid Unicode, else ``invalid_query`` naming ``name``."""
    if not isinstance(value, str):
        raise InvalidQuery(
            f"{name} must be a string, got {type(value).__name__}", details={"argument": name}
        )
    return check_text(value, name)


class EditSelections:
    """The selections and targets an edit goes through (a base of ``Editor``, which sets the
    workspace and the resolver)."""

    _ws: Workspace
    _resolver: Resolver

    def _selection(self, ref: str) -> Selection:
        ref = text_arg(ref, "ref")
        if not looks_like_ref(ref):
            raise InvalidQuery(
                f"edits go through references: pass a SEARCH#… or RESULT#… reference, not {ref!r}"
            )
        parsed = parse_ref(ref)
        sel = self._resolver.resolve(ref)
        if sel.broadened:
            mode = self._resolver.get_row(parsed).mode
            if mode in ("semantic", "fuzzy"):
                how = (
                    "a semantic: search (ranked chunks)"
                    if mode == "semantic"
                    else "a fuzzy find (approximate matches, typos tolerated)"
                )
                fix = "pick the ones you mean with select REF N... and edit through that RESULT#"
            else:
                how = "a broadened search (each word on its own)"
                fix = "search for the exact text and edit through that reference"
            raise UnsafeSelection(
                f"{ref} comes from {how}: its matches are location hints, not a safe "
                f"selection; {fix}",
                details={"reference": ref},
            )
        if sel.unstamped:
            raise UnsafeSelection(
                f"{ref} names whole files that its search did not read (a files: match): read "
                "it first (read REF) and edit through the RESULT# of that read, which is stamped "
                "with the bytes you saw",
                details={"reference": ref},
            )
        row = self._resolver.get_row(parsed)
        from_all = parsed.every_match or bool(row.extra.get("incomplete_all"))
        if not sel.complete and from_all:
            raise UnsafeSelection(
                f"{ref} selects the matches of an incomplete result (not every file was "
                "searched): edit single matches, or narrow the search until it is complete",
                details={"reference": ref},
            )
        return sel

    def _file(self, sel: Selection, path: str) -> FileText:
        ft = sel.texts.get(path)
        if ft is None:
            raise NotFound(f"{path} is no longer readable; re-run the search")
        return ft

    def _target(self, to: str) -> tuple[str, int, FileText, bool]:
        """(path, byte offset, content, at a line start) of a copy/move target."""
        to = text_arg(to, "to")
        if looks_like_ref(to):
            sel = self._resolver.resolve(to)
            if len(sel.ranges) != 1:
                raise InvalidQuery(
                    f"the target {to} must select one range, it selects {len(sel.ranges)}"
                )
            r = sel.ranges[0]
            held = self._file(sel, r.path)
            at = line_edge(held, r, "before") if r.lines else r.start_byte
            return r.path, at, held, r.lines
        m = _TARGET.fullmatch(to) if isinstance(to, str) else None
        if m is None:
            raise InvalidQuery(f"a target is a reference or PATH:LINE, got {to!r}")
        rel = self._ws.validate_path(m.group("path"))
        ft = self._ws.read(rel)
        if ft is None:
            raise InvalidPath(f"{rel} is not a text file sleuth can edit", details={"path": rel})
        line = int(m.group("line"))
        count = len(ft.line_starts)
        lines = count - 1 if ft.data.endswith(b"\n") else count
        if line > lines + 1:
            raise InvalidQuery(
                f"{rel} has {lines} lines: the target line must be at most {lines + 1} "
                f"({lines + 1} appends at the end)"
            )
        offset = ft.line_starts[line - 1] if line <= count else len(ft.data)
        if line == 1:
            offset = max(offset, ft.body_offset)
        return rel, offset, ft, True
