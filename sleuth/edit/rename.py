"""Native rename (SPEC §7): the language server computes it, the edit layer writes it.

``Renamer.rename(ref, new_name)`` points at the reference's (single) range, asks the language
server of its language for a rename (``prepareRename`` first where supported), and applies the
WorkspaceEdit through ``journal.commit``: the reference's stamp is checked by the resolver, every
other file's bytes are stamped as they are read for the edit, and all files land or none. The
answer is the edit answer (RESULT# selecting every new name, ``changed``, ``diff``) plus
``untouched``: the text occurrences of the old name that the rename did not change, so a
silently incomplete server answer is visible. Without a semantic server the answer is
``unsupported`` — a text replace is never passed off as a rename.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from sleuth.edit.journal import FileChange, commit
from sleuth.edit.operations import Editor, Splice, splice, unified_diff
from sleuth.errors import InvalidQuery, NotFound, SleuthError, Unsupported
from sleuth.resources.refs import looks_like_ref
from sleuth.resources.selection import Range, Resolver, Selection
from sleuth.resources.views import ReadResult, Views
from sleuth.workspace import FileText, Workspace, encoding_of, stamp_bytes

__all__ = ["Renamer", "split_rename", "MAX_UNTOUCHED"]

MAX_UNTOUCHED = 100
_NAME = re.compile(r"[^\W\d]\w*|\$\w*", re.UNICODE)


def split_rename(ref: str, new_name: str | None) -> tuple[str, str]:
    """``(ref, new_name)`` from ``rename(ref, new)`` or the ``REF#NEW_NAME`` form."""
    if new_name is None:
        head, sep, tail = ref.rpartition("#")
        if not sep or not looks_like_ref(head):
            raise InvalidQuery(f"rename needs a new name: rename REF NEW or REF#NEW, got {ref!r}")
        ref, new_name = head, tail
    if not isinstance(new_name, str) or not _NAME.fullmatch(new_name):
        raise InvalidQuery(f"not a valid identifier for a rename: {new_name!r}")
    return ref, new_name


def _install_hint(servers: Any, lang: str | None) -> str:
    if servers is None or lang is None:
        return ""
    try:
        spec = servers.spec(lang)
    except SleuthError:
        return ""
    return f" ({spec.name} is not installed; install it with: {spec.install})"


class Renamer:
    """Renames through a language-server pool (duck-typed: ``language_of``, ``available``,
    ``rename``)."""

    def __init__(self, ws: Workspace, resolver: Resolver, views: Views, editor: Editor) -> None:
        self._ws = ws
        self._resolver = resolver
        self._views = views
        self._editor = editor  # keeps the undo data, as for every edit

    def rename(self, ref: str, new_name: str | None, servers: Any) -> ReadResult:
        ref, new_name = split_rename(ref, new_name)
        sel = self._resolver.resolve(ref)
        if len(sel.ranges) != 1:
            raise InvalidQuery(
                f"{ref} selects {len(sel.ranges)} ranges: rename takes one symbol (a "
                "symbols: match or a :match reference on its name)"
            )
        target = sel.ranges[0]
        lang = servers.language_of(target.path) if servers is not None else None
        # ``serving`` raises server_unavailable for a configured server that is missing or a
        # crashed one; a language with no installed server is unsupported, with the install
        if servers is None or lang is None or not servers.serving(lang):
            install = _install_hint(servers, lang)
            raise Unsupported(
                f"renaming in {target.path} needs a language server and none runs for "
                f"{lang or 'this language'}{install} (see `sleuth doctor`); a text replace is "
                "never passed off as a rename",
                details={"path": target.path, "language": lang},
            )
        old_text = sel.texts[target.path].data[target.start_byte : target.end_byte]
        old_name = old_text.decode("utf-8", errors="replace")
        edits = servers.rename(target.path, target.start_byte, new_name)
        if not edits:
            raise NotFound(f"the language server found nothing to rename at {ref}")
        by_file: dict[str, list[Any]] = defaultdict(list)
        for e in edits:
            by_file[e.path].append(e)
        changes: list[FileChange] = []
        results: list[Range] = []
        texts: dict[str, FileText] = {}
        for path in sorted(by_file):
            ft = sel.texts.get(path) if path == target.path else self._ws.read(path)
            if ft is None:
                raise NotFound(f"the rename touches {path}, which sleuth cannot read")
            splices = [
                Splice(e.start_byte, e.end_byte, e.new_text.encode("utf-8")) for e in by_file[path]
            ]
            new, found = splice(ft, splices)  # the edit layer's own splice: end first, no overlap
            spans = [(s, e) for s, e, _ in found]
            changes.append(FileChange(path, ft.stamp, ft.data, new))
            new_ft = FileText(path, new, stamp_bytes(new), encoding_of(new))
            texts[path] = new_ft
            for s, e in spans:
                line, _, end_line, _ = new_ft.locate(s, e)
                results.append(Range(path, s, e, line, end_line, new_ft.stamp))
        commit(self._ws, changes)
        answer = self._views.register(
            Selection(source=ref, ranges=sorted(results), result_id="", texts=texts),
            "rename", {"ref": ref, "new_name": new_name}, None,
        )
        self._editor.save_undo(answer.result, changes)
        answer.changed = [c.path for c in changes]
        answer.diff = unified_diff(changes)
        answer.untouched = self._untouched(old_name)
        return answer

    def _untouched(self, old_name: str) -> list[dict[str, Any]]:
        """Occurrences of the old name (as a word) left after the rename, for review."""
        if not old_name:
            return []
        word = re.compile(rb"(?<![\w$])" + re.escape(old_name.encode()) + rb"(?![\w$])")
        out: list[dict[str, Any]] = []
        for entry in self._ws.list_files().files:
            ft = self._ws.read(entry.path)
            if ft is None or old_name.encode() not in ft.data:
                continue
            for m in word.finditer(ft.data):
                line = ft.line_of(m.start())
                out.append({"path": entry.path, "line": line, "text": ft.line_text(line)[:256]})
                if len(out) >= MAX_UNTOUCHED:
                    return out
        return out

