"""Native rename (docs/edits.md#rename): the language server computes it, the edit layer writes it.

``Renamer.rename(ref, new_name)`` points at the reference's (single) range and asks the language
server of its language for a rename (``ServerPool.rename_plan``). The answer comes with the
exact bytes the server held for every file it edits — the files are brought up to the disk
before the question and opened from bytes read for it after — and each ``FileChange`` is built
from those bytes, so ``journal.commit`` (which re-reads every file under the edit lock) writes
only when the disk still holds what the server saw: a file edited meanwhile is
``stale_reference`` and nothing is written, never the new name at the old offsets.

The answer is the edit answer (RESULT# selecting every new name, ``changed``, a bounded
``diff``) plus ``untouched``: the text occurrences of the old name that the rename did not
change, so a silently incomplete server answer is visible. The undo data records the old names'
ranges, so undoing a rename answers the restored names, not whole files. Without a semantic server the answer is
``unsupported`` — a text replace is never passed off as a rename.

Name clashes (``conflict``, unless ``force``). The new name clashes when, in any file the rename
edits (the declaration's file and every reference site's), it is already written as a name:

* an identifier token of the file's syntax tree (tree-sitter), so never inside a string or a
  comment, that the rename does not itself produce;
* a member position — an attribute or property after a dot (``obj.name``), a field, a keyword
  argument's name, a module path in an import — counts only when the renamed symbol is itself
  a member (declared in a class body, or renamed somewhere at a member position): renaming a
  function ``f`` to ``g`` ignores ``obj.g``; renaming a method ``C.f`` to ``g`` does not;
* the check is per file, not per scope: a local ``g`` in another function of an edited file is
  a clash too. This covers the declaration's module and class scope (its file is edited) and
  every scope of every reference site; a builtin counts only where an edited file uses it;
  members inherited from a class in a file the rename does not edit are not seen. A file with
  no grammar is checked by text (every whole-word occurrence).

``conflict`` lists each place (``path:line``) and writes nothing; ``force`` renames anyway.

Denied files (docs/faces.md#access-policy-denied-files-are-cloaked). A rename never reads, sends to
a server, edits or lists a denied file: the server's edits for denied files are dropped without a
word, so uses of the symbol in them keep the old name. The answer is the same whether or not a
denied file uses the symbol.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sleuth.edit.journal import FileChange
from sleuth.edit.operations import Editor
from sleuth.edit.splices import Splice, keeps_encoding, splice
from sleuth.errors import Conflict, InvalidQuery, NotFound, SleuthError, Unsupported
from sleuth.query.name_syntax import NameSyntax, name_syntax
from sleuth.query.servers import LanguageServers
from sleuth.resources.selection import Range, Resolver, Selection
from sleuth.resources.views import ReadResult, Views
from sleuth.workspace import FileText, Workspace, encoding_of, stamp_bytes

if TYPE_CHECKING:
    from sleuth.query.servers import LspEdit

__all__ = ["Renamer", "find_clashes", "MAX_UNTOUCHED", "MAX_CLASHES"]

MAX_UNTOUCHED = 100
MAX_CLASHES = 100


def _install_hint(servers: LanguageServers | None, lang: str | None) -> str:
    if servers is None or lang is None:
        return ""
    try:
        spec = servers.spec(lang)
    except SleuthError:
        return ""
    return f" ({spec.name} is not installed; install it with: {spec.install})"


def _is_word(byte: int) -> bool:
    return byte >= 0x80 or byte in b"_$" or chr(byte).isalnum()


def _whole_words(data: bytes, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Each span widened to the identifier around it, merged: servers that answer with
    character hunks (jedi) still give one range per new name."""
    out: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        while s > 0 and _is_word(data[s - 1]):
            s -= 1
        while e < len(data) and _is_word(data[e]):
            e += 1
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(e, out[-1][1]))
        else:
            out.append((s, e))
    return out


class Renamer:
    """Renames through a language-server pool (duck-typed: ``language_of``, ``serving``,
    ``spec``, ``rename_plan``)."""

    def __init__(self, ws: Workspace, resolver: Resolver, views: Views, editor: Editor) -> None:
        self._ws = ws
        self._resolver = resolver
        self._views = views
        self._editor = editor  # keeps the undo data, as for every edit

    def rename(
        self,
        ref: str,
        new_name: str,
        servers: LanguageServers | None,
        *,
        force: bool = False,
    ) -> ReadResult:
        """Rename the symbol ``ref`` names to ``new_name`` (both checked by the rename request,
        ``sleuth.service.requests.RenameRequest``); ``force`` writes even when it clashes."""
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
        held = sel.texts[target.path].data
        old_name = held[target.start_byte : target.end_byte].decode("utf-8", errors="replace")
        plan = servers.rename_plan(target.path, target.start_byte, new_name, expect=held)
        by_file: dict[str, list[LspEdit]] = defaultdict(list)
        for e in plan.edits:
            if not self._ws.is_denied(e.path):  # the pool drops them already; never written
                by_file[e.path].append(e)
        if not by_file:
            raise NotFound(f"the language server found nothing to rename at {ref}")
        olds = {path: _file_text(path, plan.sources[path]) for path in sorted(by_file)}
        if not force and new_name != old_name:
            renamed = {p: [(e.start_byte, e.end_byte) for e in es] for p, es in by_file.items()}
            clashes = find_clashes(olds, renamed, old_name, new_name)
            if clashes:
                raise _conflict(new_name, clashes)
        changes: list[FileChange] = []
        results: list[Range] = []
        texts: dict[str, FileText] = {}
        replaced: dict[str, list[tuple[int, int]]] = {}  # the old names: what an undo selects
        for path, ft in olds.items():
            splices = [
                Splice(e.start_byte, e.end_byte, e.new_text.encode("utf-8")) for e in by_file[path]
            ]
            spans = [(sp.start, sp.end) for sp in splices]
            new, found = splice(ft, splices)  # the edit layer's own splice: end first, no overlap
            keeps_encoding(ft, new, splices)
            changes.append(FileChange(path, ft.stamp, ft.data, new))
            replaced[path] = _whole_words(ft.data, spans)
            new_ft = _file_text(path, new)
            texts[path] = new_ft
            for start, end in _whole_words(new, [(p.start, p.end) for p in found]):
                line, _, end_line, _ = new_ft.locate(start, end)
                results.append(Range(path, start, end, line, end_line, new_ft.stamp))
        # the commit refuses unless every file still holds what the server saw
        answer = self._editor.land(
            Selection(source=ref, ranges=sorted(results), result_id="", texts=texts),
            "rename",
            {"ref": ref, "new_name": new_name},
            changes,
            replaced,
        )
        answer.untouched = self._untouched(old_name)
        return answer

    def _untouched(self, old_name: str) -> list[dict[str, Any]]:
        """Occurrences of the old name (as a word) left after the rename, for review; the
        listing leaves denied files out, so they are never read here."""
        if not old_name:
            return []
        word = _word_pattern(old_name)
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


def _file_text(path: str, data: bytes) -> FileText:
    return FileText(path, data, stamp_bytes(data), encoding_of(data))


def _conflict(new_name: str, clashes: list[dict[str, Any]]) -> Conflict:
    where = ", ".join(f"{c['path']}:{c['line']}" for c in clashes[:10])
    more = f" and {len(clashes) - 10} more" if len(clashes) > 10 else ""
    return Conflict(
        f"nothing was written: {new_name} is already a name where the rename would write it "
        f"({where}{more}); pick another name, or pass force to rename anyway",
        details={"new_name": new_name, "conflicts": clashes},
    )


def find_clashes(
    texts: Mapping[str, FileText],
    renamed: Mapping[str, list[tuple[int, int]]],
    old_name: str,
    new_name: str,
) -> list[dict[str, Any]]:
    """Where ``new_name`` is already written as a name in the files a rename edits (the rule
    in the module docstring): ``[{"path", "line", "text"}]`` by path and line, one per line.

    ``renamed`` holds each file's edited byte ranges, of the bytes in ``texts``: the names the
    rename changes are the ``old_name`` tokens in them (a whole-file edit: every one). No
    ``new_name`` token of these bytes is the rename's own, so each one found is a clash."""
    word = new_name.encode()
    pattern = _word_pattern(new_name)
    names = {p: _old_names(texts[p].data, spans, old_name) for p, spans in renamed.items()}
    roots: dict[str, NameSyntax | None] = {}

    def root(path: str) -> NameSyntax | None:
        if path not in roots:
            roots[path] = name_syntax(path, texts[path].data)
        return roots[path]

    member: list[bool] = []  # computed once, only when a member position needs it

    def renames_member() -> bool:
        if not member:
            member.append(
                any(
                    tree.renames_member(s, e)
                    for path, spans in sorted(names.items())
                    if (tree := root(path)) is not None
                    for s, e in spans
                )
            )
        return member[0]

    out: list[dict[str, Any]] = []
    for path in sorted(texts):
        ft = texts[path]
        if word not in ft.data:
            continue
        lines: list[int] = []
        for m in pattern.finditer(ft.data):
            start, end = m.span()
            tree = root(path)
            if tree is not None:
                kind = tree.name_at(start, end)
                if kind is None:
                    continue  # in a string, a comment, or part of a longer token
                if kind == "member" and not renames_member():
                    continue
            line = ft.line_of(start)
            if line not in lines:
                lines.append(line)
        for line in lines:
            out.append({"path": path, "line": line, "text": ft.line_text(line)[:256]})
            if len(out) >= MAX_CLASHES:
                return out
    return out


def _word_pattern(name: str) -> re.Pattern[bytes]:
    return re.compile(rb"(?<![\w$])" + re.escape(name.encode()) + rb"(?![\w$])")


def _old_names(data: bytes, spans: list[tuple[int, int]], old_name: str) -> list[tuple[int, int]]:
    """The ``old_name`` tokens inside the edited ``spans`` (each widened to whole words)."""
    pattern = _word_pattern(old_name)
    return [m.span() for s, e in _whole_words(data, spans) for m in pattern.finditer(data, s, e)]
