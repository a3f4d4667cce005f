"""clangd's compilation database, kept under ``.sleuth/clangd/`` and never in the workspace.

Without a ``compile_commands.json`` clangd silently knows only the files that are open, so its
cross-file references and renames are incomplete (2 of 5: docs/servers.md#per-server-quirks). And
clangd writes its background index (``.cache/clangd/index``) beside the database it uses. So clangd
is always started with ``--compile-commands-dir=.sleuth/clangd``, holding either

* a copy of the project's own database (``compile_commands.json`` at the root or in
  ``build/``; its entries carry absolute directories, so a copy works), or
* one generated here: every C/C++ source file, compiled from the root with ``-I`` for the root,
  every folder that holds a header, and the flags of a root ``compile_flags.txt``.

Either way the index lands in ``.sleuth/clangd/.cache``, inside sleuth's state folder.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from sleuth.errors import SleuthError
from sleuth.workspace import Workspace
from sleuth.workspace.rooted import read_file, read_regular, write_file
from sleuth.workspace.state_folder import state_subdir

__all__ = ["CLANGD_DIR", "SOURCE_EXTENSIONS", "HEADER_EXTENSIONS", "prepare_compile_db"]

CLANGD_DIR = "clangd"
"""Folder of clangd's state inside ``.sleuth/``."""

SOURCE_EXTENSIONS = {".c": "c", ".cc": "c++", ".cpp": "c++", ".cxx": "c++", ".c++": "c++"}
HEADER_EXTENSIONS = {".h", ".hh", ".hpp", ".hxx", ".h++", ".ipp", ".inc"}
PROJECT_DATABASES = ("compile_commands.json", "build/compile_commands.json")


def _root_file(ws: Workspace, rel: str) -> str | None:
    """A root file's text, reached as any file a search reads (no symlinked folder, no link out
    of the root, never a FIFO); None when there is none such."""
    try:
        return read_regular(str(ws.root), rel).decode("utf-8", errors="replace")
    except (OSError, SleuthError):
        return None


def _extra_flags(ws: Workspace) -> list[str]:
    """Flags of a root ``compile_flags.txt`` (one per line), which clangd would have read."""
    text = _root_file(ws, "compile_flags.txt") or ""
    return [line.strip() for line in text.splitlines() if line.strip()]


def generated_entries(ws: Workspace) -> list[dict[str, Any]]:
    """One compile command per C/C++ source file of the workspace."""
    root = str(ws.root)
    sources: list[tuple[str, str]] = []
    include_dirs: set[str] = {""}
    for entry in ws.list_files().files:
        ext = os.path.splitext(entry.path)[1].lower()
        if ext in SOURCE_EXTENSIONS:
            sources.append((entry.path, SOURCE_EXTENSIONS[ext]))
        elif ext in HEADER_EXTENSIONS:
            include_dirs.add(os.path.dirname(entry.path))
    includes = [f"-I{os.path.join(root, d) if d else root}" for d in sorted(include_dirs)]
    extra = _extra_flags(ws)
    entries = []
    for rel, lang in sources:
        full = os.path.join(root, rel)
        compiler = "clang" if lang == "c" else "clang++"
        entries.append(
            {
                "directory": root,
                "file": full,
                "arguments": [compiler, f"-x{lang}", *includes, *extra, "-c", full],
            }
        )
    return entries


def _write_if_changed(path: Path, text: str) -> None:
    # a planted .sleuth/clangd/ may hold symlinks or FIFOs by these names: neither is
    # followed, and what is written is made anew beside the database, then renamed over it
    with contextlib.suppress(OSError):
        if read_file(path) == text.encode("utf-8"):
            return
    tmp = path.with_suffix(".tmp")
    write_file(tmp, text.encode("utf-8"))
    os.replace(tmp, path)


def prepare_compile_db(ws: Workspace) -> Path:
    """Write ``.sleuth/clangd/compile_commands.json`` and return its folder (for clangd)."""
    folder = state_subdir(ws.state_dir, CLANGD_DIR)
    # clangd writes its index under .cache/clangd/index here: each a real folder of ours
    # (invalid_path otherwise), so no planted symlink sends those writes out of the root
    index = folder
    for name in (".cache", "clangd", "index"):
        index = state_subdir(index, name)
    own = next(filter(None, (_root_file(ws, rel) for rel in PROJECT_DATABASES)), None)
    if own is None:
        own = json.dumps(generated_entries(ws), indent=1) + "\n"
    _write_if_changed(folder / "compile_commands.json", own)
    return folder
