"""``sleuth.workspace``: files, ignore rules, access policy, stamps and the content cache.

The bottom layer but one (docs/architecture.md#layers). Engines list files with
``Workspace.list_files`` and read them with ``Workspace.read``; nothing above this package opens
workspace files for searching.
"""

from __future__ import annotations

from sleuth.workspace.reader import encoding_of, stamp_bytes
from sleuth.workspace.text import FileText
from sleuth.workspace.walker import FileEntry, FileList
from sleuth.workspace.workspace import Workspace

__all__ = ["Workspace", "FileEntry", "FileList", "FileText", "stamp_bytes", "encoding_of"]
