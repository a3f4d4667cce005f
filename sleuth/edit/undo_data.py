"""What ``undo`` needs of an edit, kept in ``.sleuth/undo/<id>/`` (docs/edits.md#undo).

Each file's old bytes (``N.old``), the stamp the edit left and the ranges of the old bytes the
edit replaced (what an undo's answer selects), listed in ``undo.json`` with the root folder's
device and inode (undo data that arrived with the tree is not this root's). The data is *staged*
(``stage``) before a file is written and only put in place (``keep``) once the edit landed, so
an edit refused at the write leaves nothing to undo, and nothing that can fail is left for
after the write (docs/SAFETY.md#undo): an error there would answer a landed edit as one that
never happened. ``plan`` reads the data back for an undo, trusting only what an edit writes (a
workspace path, the folder's own ``N.old``, read without following a symlink).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sleuth.edit.journal import FileChange
from sleuth.edit.recovery import own_bytes, root_id, workspace_file_path
from sleuth.errors import Conflict, NotFound, SleuthError
from sleuth.resources.selection import Range
from sleuth.workspace import FileText, Workspace, stamp_bytes
from sleuth.workspace.rooted import read_regular, write_file
from sleuth.workspace.state_folder import state_subdir

__all__ = ["stage", "keep", "drop", "plan", "mark_undone", "restored"]

_STAGED = ".staged-"


def _folder(ws: Workspace, result_id: str) -> Path:
    return state_subdir(ws.state_dir, "undo") / result_id.removeprefix("RESULT#")


def stage(
    ws: Workspace,
    result_id: str,
    changes: Sequence[FileChange],
    spans: dict[str, list[tuple[int, int]]] | None = None,
) -> Path:
    """Write the undo data of an edit about to be committed, in a folder of its own."""
    folder = _folder(ws, result_id)
    staged = folder.with_name(f"{folder.name}{_STAGED}{uuid.uuid4().hex[:12]}")
    staged.mkdir()
    try:
        files = []
        for i, change in enumerate(changes):
            write_file(staged / f"{i}.old", change.old)
            entry: dict[str, Any] = {
                "path": change.path,
                "old": f"{i}.old",
                "new_stamp": stamp_bytes(change.new),
            }
            if spans is not None and change.path in spans:
                entry["spans"] = spans[change.path]
            files.append(entry)
        manifest = {"root": root_id(ws), "files": files}
        write_file(staged / "undo.json", json.dumps(manifest).encode())
    except BaseException:
        drop(staged)
        raise
    return staged


def drop(staged: Path) -> None:
    """Remove staged undo data (the edit was not written)."""
    shutil.rmtree(staged, ignore_errors=True)


def _remove(path: Path) -> None:
    """Remove whatever is at ``path`` in the undo folder (never following a symlink)."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def keep(ws: Workspace, result_id: str, staged: Path) -> None:
    """Put staged undo data in place once the edit landed. Never raises: the files are
    written, and an answer saying otherwise would be wrong (undo then answers not_found)."""
    try:
        folder = _folder(ws, result_id)
        _remove(folder)  # an earlier edit with this id (the same result: the same new bytes)
        os.rename(staged, folder)
    except (OSError, SleuthError):  # the state folder unusable now: the edit stands
        drop(staged)


def plan(
    ws: Workspace, result_id: str, text: str
) -> tuple[Path, list[dict[str, Any]], list[FileChange]]:
    """The undo data of ``result_id`` (a ``RESULT#`` as ``text`` gave it) and the changes that
    restore it; ``not_found`` without data, ``conflict`` when a file moved on since the edit."""
    folder = _folder(ws, result_id)
    entries = _manifest(ws, text, folder)
    changes = []
    moved = []
    for entry in entries:
        path = str(entry["path"])
        if ws.is_denied(path):
            raise NotFound(f"cannot undo {text}: path not found: {path}", details={"path": path})
        try:
            old = own_bytes(folder, str(entry["old"]))
        except OSError:
            raise NotFound(f"the undo data of {text} is unreadable; it cannot be undone") from None
        try:
            current: bytes | None = read_regular(str(ws.root), path)
        except OSError:
            current = None  # gone, or no longer a regular file (a FIFO is never opened)
        if current is None or stamp_bytes(current) != entry["new_stamp"]:
            moved.append(path)
            continue
        changes.append(FileChange(path, str(entry["new_stamp"]), current, old))
    if moved:
        raise Conflict(
            f"cannot undo {text}: {', '.join(moved)} changed after the edit; nothing was written",
            details={"files": moved},
        )
    return folder, entries, changes


def _manifest(ws: Workspace, text: str, folder: Path) -> list[dict[str, Any]]:
    """The files of the undo data in ``folder``, each entry as ``stage`` writes it (a
    workspace file's path, the folder's own ``N.old``): undo writes what they name. Only undo
    data written for this very root folder (its device and inode, which no one knows before
    the tree is checked out) is used: a ``.sleuth/`` can arrive with the tree, and planted undo
    data would write bytes no edit of this workspace replaced (docs/SAFETY.md#undo)."""
    try:
        manifest = json.loads(own_bytes(folder, "undo.json"))
        if manifest["root"] != root_id(ws):
            raise FileNotFoundError(folder)  # not an edit made here
        files = manifest["files"]
        if not isinstance(files, list) or not all(
            isinstance(entry, dict)
            and entry.get("old") == f"{i}.old"
            and isinstance(entry.get("new_stamp"), str)
            and workspace_file_path(entry.get("path"))
            for i, entry in enumerate(files)
        ):
            raise TypeError(files)
        return files
    except FileNotFoundError:
        raise NotFound(
            f"{text} is not an edit that can be undone (or was undone already)"
        ) from None
    except (OSError, ValueError, KeyError, TypeError):
        raise NotFound(f"the undo data of {text} is unreadable; it cannot be undone") from None


def mark_undone(folder: Path) -> None:
    """Set the undo data of an edit just undone aside (a second undo is ``not_found``). Never
    raises: the files are restored; undo data left in place would only meet a ``conflict``."""
    done = folder.with_name(folder.name + ".undone")
    with contextlib.suppress(OSError):
        _remove(done)  # an earlier undo of the same (redone) edit
        os.rename(folder, done)


def restored(ft: FileText, spans: object, undone: bytes) -> list[Range]:
    """The ranges of ``ft`` an undo put back: the edit's spans; for undo data without them,
    the one range where ``ft`` differs from the ``undone`` bytes (never the whole file)."""
    out = []
    if isinstance(spans, list) and all(
        isinstance(p, list) and len(p) == 2 and all(isinstance(x, int) for x in p) for p in spans
    ):
        for s, e in spans:
            if 0 <= s <= e <= len(ft.data):
                line, _, end_line, _ = ft.locate(s, e)
                out.append(Range(ft.path, s, e, line, end_line, ft.stamp))
        if out:
            return out
    data = ft.data
    limit = min(len(data), len(undone))
    s = 0
    while s < limit and data[s] == undone[s]:
        s += 1
    e = 0
    while e < limit - s and data[-1 - e] == undone[-1 - e]:
        e += 1
    # never inside a UTF-8 character: the range is whole characters of the restored text
    while 0 < s < len(data) and data[s] & 0xC0 == 0x80:
        s -= 1
    end = len(data) - e
    while end < len(data) and data[end] & 0xC0 == 0x80:
        end += 1
    line, _, end_line, _ = ft.locate(s, end)
    return [Range(ft.path, s, end, line, end_line, ft.stamp)]
