"""Helpers for the language-server tests: projects on disk, offsets, applying edits."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import pytest

from sleuth.lsp_bridge import LspEdit, LspLocation
from sleuth.lsp_bridge.servers import SERVERS, ServerVersions, find_binary, usable

LSP_STDIO = r"""
import json, os, sys, time
inp, out = sys.stdin.buffer, sys.stdout.buffer

def read():
    length = 0
    while True:
        line = inp.readline()
        if not line:
            sys.exit(0)
        if line in (b"\r\n", b"\n"):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(inp.read(length))

def send(msg_id, result):
    body = json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": result}).encode()
    out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    out.flush()
"""
"""The stdio framing of the fake language servers the fault tests run (``read``/``send``);
each test's script follows it with its own behaviour."""


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """Write ``files`` (relative path -> text) under ``root`` and return it."""
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode("utf-8"))
    return root


def offset_of(root: Path, rel: str, needle: str, name: str) -> int:
    """Byte offset of ``name`` inside the first occurrence of ``needle`` in ``rel``."""
    data = (root / rel).read_bytes()
    return data.index(needle.encode()) + len(needle[: needle.rindex(name)].encode())


def texts(root: Path, locations: Iterable[LspLocation]) -> set[bytes]:
    """The bytes each location covers."""
    return {(root / loc.path).read_bytes()[loc.start_byte : loc.end_byte] for loc in locations}


def occurrences(root: Path, rels: Iterable[str], word: str) -> set[tuple[str, int]]:
    """(path, byte offset) of every occurrence of ``word`` in ``rels`` (a plain text search)."""
    found = set()
    raw = word.encode()
    for rel in rels:
        data = (root / rel).read_bytes()
        at = data.find(raw)
        while at >= 0:
            found.add((rel, at))
            at = data.find(raw, at + 1)
    return found


def apply_edits(root: Path, edits: list[LspEdit]) -> dict[str, bytes]:
    """New contents of the edited files (nothing is written)."""
    out: dict[str, bytes] = {}
    for edit in sorted(edits, key=lambda e: (e.path, e.start_byte), reverse=True):
        data = out.get(edit.path) or (root / edit.path).read_bytes()
        out[edit.path] = data[: edit.start_byte] + edit.new_text.encode() + data[edit.end_byte :]
    return out


VERSIONS: ServerVersions = {}
"""What probed servers answered to ``--version``, asked once per test run (as a session would)."""


def require_server(lang: str, name: str | None = None) -> None:
    """Fail (never skip) when the server for ``lang`` (or the one called ``name``) is missing:
    ``make test`` installs every server the suite needs (scripts/install_tools.sh)."""
    for spec in SERVERS[lang]:
        if (name is None or spec.name == name) and usable(spec, VERSIONS):
            return
    pytest.fail(f"{name or lang} language server not installed: run scripts/install_tools.sh")


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it has exited all the same.
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def group_members(pgid: int) -> list[int]:
    """Live processes whose process group is ``pgid`` (read from /proc)."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(entry))
    return members


__all__ = [
    "write_tree",
    "offset_of",
    "texts",
    "occurrences",
    "apply_edits",
    "require_server",
    "pid_alive",
    "group_members",
    "find_binary",
]
