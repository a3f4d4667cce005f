"""The reference graph engine (``graph:``, docs/query.md#graph-the-reference-graph): files and
declarations joined by uses.

``Graph`` is a networkx ``MultiDiGraph`` built from per-file tags records (``FileTags``: the
declarations and uses a tags extractor found) by name and scope rules alone — every edge is
``precision: "syntactic"`` until a language server confirms it. It updates one file at a time
with the same result as a full rebuild (``sync``: a listing's stamps in, only changed files
re-tagged), persists to ``.sleuth/graph.db`` one row per file (``GraphStore``, ``save``,
``load``), ranks through a SciPy matrix cached per version, and answers ``file_view``
(``graph:PATH``), ``node_view`` (``graph:#ID``), ``dependents`` and ``rank`` (``graph:``,
personalised PageRank).

Like every engine it imports only ``sleuth.errors``, ``sleuth.model`` and ``sleuth.workspace``;
it never parses source itself.
"""

from __future__ import annotations

from sleuth.graph.build import EDGE_KINDS, EdgeKey, Graph, SyncReport, sync
from sleuth.graph.model import (
    DeclView,
    Dependent,
    EdgeGroup,
    FileView,
    Neighbor,
    NodeInfo,
    NodeView,
    Occurrence,
    Ranked,
    Use,
)
from sleuth.graph.records import FileRecord, FileTags, make_record
from sleuth.graph.store import DEFAULT_CACHE, GraphStore, load, save

__all__ = [
    "Graph",
    "EdgeKey",
    "EDGE_KINDS",
    "FileTags",
    "FileRecord",
    "make_record",
    "FileView",
    "DeclView",
    "EdgeGroup",
    "Neighbor",
    "NodeInfo",
    "NodeView",
    "Use",
    "Occurrence",
    "Dependent",
    "Ranked",
    "SyncReport",
    "DEFAULT_CACHE",
    "GraphStore",
    "save",
    "load",
    "sync",
]
