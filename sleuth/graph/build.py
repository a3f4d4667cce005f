"""The reference graph: a networkx ``MultiDiGraph`` kept equal to a full rebuild under updates.

Nodes are files (id = the path, ``type="file"``) and declarations (id = ``SymbolDef.id``,
``type="decl"``, with name, kind, container, path, byte and line range and signature line).
Edges are keyed by their kind — at most one edge per (source, target, kind), carrying every
occurrence of the use — and are ``contains`` (file/class -> member), ``calls``/``references``
(the declaration holding a use, or the file for a top-level use -> the declaration it resolves
to), ``imports`` (file -> file or declaration) and ``inherits`` (class -> base). Each has
``precision`` ``"syntactic"`` until a caller confirms it with a language server
(``confirm``/``mark_semantic``).

The graph also keeps what the cache (``store``) has not written yet — the files whose record or
resolution changed since ``take_changes`` — so a one-file update writes a few rows, and the
ranked graph's weights, adjusted per file, with a ``version`` that keys the rank cache.

Incremental rule: the edges a file owns (those leaving its nodes) are a function of its own
record and of what it read of other files while resolving, each read named by a key
(``Resolution.keys``, see ``file_index``: what a file binds to a top-level name, a class as seen
from outside, a star list, a module lookup). ``update_file``/``remove_file`` replace one file's
nodes, compute which of its keys changed, and re-resolve exactly the files that noted one, so
the result equals a full rebuild while an edit that moves nothing others read (inside a body, a
new function nobody names) re-resolves the edited file alone.

A cold build takes files in as record rows (``marshal``-ed by the tagging workers, kept as rows
and never decoded into records) and, asked to (``parallel``), resolves them in forked worker
processes (``workers``) while it installs the edges of those already done, in path order.
"""

from __future__ import annotations

import contextlib
import gc
import marshal
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from sleuth.errors import InvalidQuery, NotFound
from sleuth.graph import queries, workers
from sleuth.graph import rank as ranking
from sleuth.graph.carry import carry_over
from sleuth.graph.file_index import FileIndex, changed_keys
from sleuth.graph.model import Dependent, FileView, NodeView, Ranked
from sleuth.graph.modules import provided_keys
from sleuth.graph.records import FileRecord, FileTags, RecordRow, make_record
from sleuth.graph.resolve import EdgeKey, Resolution, Resolver
from sleuth.graph.state import GraphState
from sleuth.graph.table import (
    NewVersion,
    ResolutionRow,
    resolution_from_row,
    resolution_to_row,
)

if TYPE_CHECKING:
    from sleuth.graph.store import SyncReport

__all__ = ["Graph", "EdgeKey", "EDGE_KINDS"]

_BATCH = 64
Change = FileRecord | RecordRow | bytes | None
"""A file's new version (a record, its cache row, or that row ``marshal``-ed) or None: the
file is gone."""
EDGE_KINDS = ("contains", "calls", "references", "imports", "inherits")


class Graph(GraphState):
    """Files and declarations with their reference edges; see the module docstring."""

    # -- input --------------------------------------------------------------------------------

    def update_file(
        self, tags: FileTags, data: bytes | None = None, *, stamp: str | None = None
    ) -> None:
        """Add or replace one file from its tags; ``data`` gives signatures and receivers.

        Without ``data`` signature lines are empty and every use is taken as a bare name
        (``obj.m()`` then looks like ``m()``), so pass the bytes when they are at hand.
        """
        self.apply({tags.path: make_record(tags, data, _stamp(data, stamp))})

    def update_files(self, items: Iterable[tuple[FileTags, bytes | None, str | None]]) -> None:
        """Add or replace several files in one pass (each re-resolution happens once)."""
        self.apply({t.path: make_record(t, d, _stamp(d, s)) for t, d, s in items})

    def remove_file(self, path: str) -> None:
        """Drop a file's nodes and edges and re-resolve the files that used it."""
        if path not in self._records:
            raise NotFound(f"{path} is not in the graph; nothing to remove")
        self.apply({path: None})

    def apply(
        self,
        changes: Mapping[str, Change] | Iterable[tuple[str, Change]],
        *,
        parallel: bool = False,
    ) -> None:
        """Replace (record, or record row) or remove (None) files, then re-resolve every
        affected file. A row (``RecordRow``, or one ``marshal``-ed by a tagging worker) is
        kept as a row (and the bytes until the cache writes them).

        ``changes`` may also be an iterable of (path, change), read once: each file is taken
        in as it comes (e.g. while workers still tag the next ones), then all are resolved.
        ``parallel``: when many files need resolving, resolve them in forked worker processes
        (``workers``; in-process when forking is not possible or fails) — same result.
        """
        if isinstance(changes, Mapping):
            if not changes:
                return
            if len(changes) < _BATCH:
                self.version += 1
                self._apply(changes.items(), parallel)
                return
            changes = changes.items()
        self.version += 1
        # A big batch allocates millions of small objects holding no cycles; the cyclic
        # collector scanning them repeatedly would double the build time.
        with _no_gc():
            self._apply(changes, parallel)

    def _index(self, path: str) -> FileIndex:
        idx = self._indexes.get(path)
        if idx is None:
            raw = self._records.raw(path)  # still a cached row: index it without decoding
            idx = FileIndex.of_row(path, raw) if raw is not None else FileIndex.of(self._records[path])
            self._indexes[path] = idx
        return idx

    def _resolver(self) -> Resolver:
        """A resolution session over the current records."""
        return Resolver(self._records, self._index, self._modules, self._records.uses)

    def _used(self, key: str) -> bool:
        """Whether some file's resolution depends on ``key``."""
        return bool(self._key_users.get(key))

    def _apply(self, changes: Iterable[tuple[str, Change]], parallel: bool) -> None:
        affected: set[str] = set()
        by_keys: set[str] = set()  # files that read a key that changed
        moved: set[str] = set()  # every key that changed
        carried: dict[str, tuple[FileRecord, FileIndex, Resolution]] = {}
        # Changed keys matter only to a file that noted one (``by_keys``) or to a carry, which
        # needs a prior resolution: with no key noted by anyone (a first build), every prior
        # resolution read none, so no key can matter and comparing them is skipped.
        tracked = bool(self._key_users)
        for path, change in changes:
            known = path in self._records
            if not known and change is None:
                continue
            old = self._records[path] if known else None
            old_index = self._index(path) if known else None
            new_index: FileIndex | None
            blob = None
            if isinstance(change, bytes):
                blob, change = change, marshal.loads(change)
            if change is None:
                rec = new_index = None
            elif isinstance(change, FileRecord):
                rec, new_index = NewVersion.record(change), FileIndex.of(change)
            else:
                rec, new_index = NewVersion(*change), FileIndex.of_row(path, change)
            if tracked:
                keys = changed_keys(path, old_index, new_index, self._used)
                if (old is None) != (rec is None):
                    keys |= provided_keys(path)
                moved |= keys
                for key in keys:
                    by_keys |= self._key_users.get(key, set())
            prior = self._resolved.get(path)
            if old is not None and old_index is not None and prior is not None:
                carried[path] = (old, old_index, prior)
            if old is not None and (rec is None or rec.stamp != old.stamp or not rec.stamp):
                # The content changed: a server's confirmation of its uses no longer holds.
                kept = {k: p for k, p in self._semantic.items() if p != path}
                if len(kept) != len(self._semantic):
                    self._semantic, self._semantic_dirty = kept, True
            if rec is None:
                self._forget_resolution(path)
            # else its edges stay until its next resolution replaces them (``_install``)
            if old is not None:
                self._drop_nodes(old, keep=rec.def_ids() if rec is not None else None)
            if rec is None or change is None or new_index is None:
                self._records.pop(path, None)
                self._indexes.pop(path, None)
                self._modules.remove(path)
                self._dirty.discard(path)
                self._gone.add(path)
            else:
                if isinstance(change, FileRecord):
                    self._records[path] = change
                else:
                    self._records.put_row(path, change, blob)
                self._indexes[path] = new_index
                self._modules.add(path)
                self._add_nodes(
                    path, rec.lang, rec.stamp, rec.complete, rec.reason, rec.defs,
                    replace=old is not None,
                )
                affected.add(path)
                self._gone.discard(path)
        affected = {p for p in affected | by_keys if p in self._records}
        ordered = sorted(affected)
        pooled: Generator[tuple[str, bytes], None, None] | None = None
        if parallel:
            plain = sum(1 for p in ordered if p not in carried)
            if plain >= workers.RESOLVE_POOL_MIN and workers.can_fork():
                pooled = workers.iter_resolved(
                    self._resolver, [p for p in ordered if p not in carried]
                )
        resolver = self._resolver()
        try:
            for path in ordered:
                if pooled is not None and path not in carried:
                    try:
                        done, blob = next(pooled)
                    except workers.POOL_ERRORS:
                        pooled = None  # this file and the next ones are resolved here
                    else:
                        if done != path:
                            raise RuntimeError(f"pool resolved {done} for {path}")
                        self._install(path, resolution_from_row(marshal.loads(blob)), blob)
                        continue
                carry = None
                if path in carried:
                    old, old_index, prior = carried[path]
                    if prior.keys.isdisjoint(moved):  # nothing it read elsewhere moved
                        carry = carry_over(
                            old, old_index, prior.edges, prior.keys, self._index(path)
                        )
                self._install(path, resolver.resolve_file(path, carry))
        finally:
            if pooled is not None:
                pooled.close()
        self._dirty |= affected

    def restore_rows(
        self,
        rows: Iterable[tuple[str, RecordRow, ResolutionRow]],
        semantic: Mapping[EdgeKey, str],
    ) -> None:
        """Install saved state without resolving anything (the cache loader's door).

        Records stay rows until first asked for; nothing is marked as changed.
        """
        with _no_gc():
            self.version += 1
            self._semantic = dict(semantic)
            resolutions: list[tuple[str, ResolutionRow]] = []
            for path, rec_row, res_row in rows:
                self._records.put_row(path, rec_row)
                self._modules.add(path)
                lang, stamp, complete, reason, defs, _ = rec_row
                self._add_nodes(path, lang, stamp, complete, reason, defs)
                resolutions.append((path, res_row))
            for path, res_row in resolutions:
                self._install(path, resolution_from_row(res_row))

    def row(self, path: str) -> tuple[RecordRow, ResolutionRow]:
        """``path``'s record and resolution as plain rows (what the cache stores)."""
        return self._records.row(path), resolution_to_row(self.resolution(path))

    def blobs(self, path: str) -> tuple[bytes, bytes]:
        """``row(path)`` as the cache stores it (``marshal``-ed), from the bytes a worker made
        when they are still current (each given once)."""
        rec = self._records.take_blob(path)
        res = self._res_blobs.pop(path, None)
        if rec is None:
            rec = marshal.dumps(self._records.row(path))
        if res is None:
            res = marshal.dumps(resolution_to_row(self.resolution(path)))
        return rec, res

    def take_changes(self) -> tuple[set[str], set[str], dict[EdgeKey, str] | None]:
        """(changed paths, removed paths, confirmed edges if they changed) since the last call."""
        out = (self._dirty, self._gone, dict(self._semantic) if self._semantic_dirty else None)
        self._dirty, self._gone, self._semantic_dirty = set(), set(), False
        return out

    def mark_all_changed(self) -> None:
        """Make the next ``take_changes`` report every file (a full cache write)."""
        self._dirty = set(self._records)
        self._semantic_dirty = True

    def semantic_edges(self) -> dict[EdgeKey, str]:
        """Confirmed edges, each with the file that owns it."""
        return dict(self._semantic)

    def state(self) -> tuple[dict[str, FileRecord], dict[str, Resolution], dict[EdgeKey, str]]:
        """Records, resolutions and confirmed edges (decodes every record)."""
        resolved = {p: self._resolved.get(p, Resolution()) for p in self._records}
        return dict(self._records.items()), resolved, dict(self._semantic)

    # -- queries and persistence --------------------------------------------------------------

    def file_view(self, path: str) -> FileView:
        """``graph:PATH`` — top-level declarations with edges by kind (NotFound if unknown)."""
        return queries.file_view(self, path)

    def node_view(self, node_id: str) -> NodeView:
        """``graph:#ID`` — one node's incoming and outgoing uses with their locations."""
        return queries.node_view(self, node_id)

    def dependents(self, node_id: str, depth: int = 2) -> list[Dependent]:
        """Transitive users of ``node_id`` up to ``depth`` uses away, with distances."""
        return queries.dependents(self, node_id, depth)

    def rank(self, limit: int = 20, personalize_paths: Iterable[str] | None = None) -> list[Ranked]:
        """``graph:`` — declarations by (personalised) PageRank, best first."""
        return ranking.rank(self, limit, personalize_paths)

    def save(self, path: str) -> None:
        """Write the whole cache (e.g. ``.sleuth/graph.db``)."""
        from sleuth.graph.store import save

        save(self, path)

    @classmethod
    def load(cls, path: str) -> Graph:
        """Read a cache written by ``save``; an empty graph when there is none usable."""
        from sleuth.graph.store import load

        return load(path)

    def sync(
        self, stamps: Mapping[str, str], get_tags: Callable[[str], tuple[FileTags, bytes | None]]
    ) -> SyncReport:
        """Re-tag and re-resolve only the files whose stamps changed; drop vanished files."""
        from sleuth.graph.store import sync

        return sync(self, stamps, get_tags)

    # -- semantic confirmation ----------------------------------------------------------------

    def confirm(self, edge: EdgeKey, semantic: bool = True) -> None:
        """Mark edge ``(source, target, kind)`` as confirmed by a language server (or not)."""
        u, v, kind = edge
        if not self.g.has_edge(u, v, key=kind):
            raise NotFound(f"no {kind} edge from {u} to {v}; list edges with node_view")
        if kind == "contains":
            raise InvalidQuery("contains edges come from the file's structure; nothing to confirm")
        self.g.edges[u, v, kind]["precision"] = "semantic" if semantic else "syntactic"
        if semantic:
            self._semantic[edge] = str(self.g.nodes[u]["path"])
        else:
            self._semantic.pop(edge, None)
        self._semantic_dirty = True

    def mark_semantic(self, source_id: str, target_id: str) -> int:
        """Confirm every reference edge from ``source_id`` to ``target_id``; returns how many."""
        data = self.g.get_edge_data(source_id, target_id) or {}
        kinds = [k for k in data if k != "contains"]
        if not kinds:
            raise NotFound(f"no reference edge from {source_id} to {target_id}")
        for kind in kinds:
            self.confirm((source_id, target_id, kind))
        return len(kinds)

    # -- inspection ---------------------------------------------------------------------------

    def __contains__(self, node_id: object) -> bool:
        return node_id in self.g

    def has_file(self, path: str) -> bool:
        """Whether ``path`` is in the graph."""
        return path in self._records

    def file_count(self) -> int:
        """How many files the graph holds."""
        return len(self._records)

    def files(self) -> list[str]:
        """Every file in the graph, sorted."""
        return sorted(self._records)

    def incomplete(self) -> list[tuple[str, str | None]]:
        """(path, reason) of every file the graph holds without all its declarations, sorted
        (kept per graph version: every answer about the whole graph asks)."""
        memo = self._incomplete
        if memo is None or memo[0] != self.version:
            nodes = self.g._node
            found = sorted(
                (p, nodes[p].get("reason")) for p in self._records if not nodes[p].get("complete")
            )
            memo = self._incomplete = (self.version, found)
        return list(memo[1])

    def stamp(self, path: str) -> str:
        """The stamp the graph holds for ``path`` (no record decoded); NotFound when absent."""
        try:
            return self._records.stamp(path)
        except KeyError:
            raise NotFound(f"{path} is not in the graph; sync or update it first") from None

    def decl_ids(self, path: str) -> list[str]:
        """The ids of ``path``'s declarations in order (no record decoded); NotFound if absent."""
        if path not in self._records:
            raise NotFound(f"{path} is not in the graph; sync or update it first")
        return [d[0] for d in self._records.row(path)[4]]

    def record(self, path: str) -> FileRecord:
        """The stored record of ``path``; NotFound when absent."""
        try:
            return self._records[path]
        except KeyError:
            raise NotFound(f"{path} is not in the graph; sync or update it first") from None

    def resolution(self, path: str) -> Resolution:
        """What resolving ``path`` produced (edges, dependencies, unresolved count)."""
        if path not in self._records:  # (without decoding a record kept as a row)
            raise NotFound(f"{path} is not in the graph; sync or update it first")
        return self._resolved.get(path, Resolution())

    def node(self, node_id: str) -> dict[str, Any]:
        """A node's attributes; NotFound for an unknown id."""
        if node_id not in self.g:
            raise NotFound(f"no graph node {node_id!r}; ids come from symbols: or graph:PATH")
        return dict(self.g.nodes[node_id])

    def iter_edges(
        self, kinds: Iterable[str] | None = None
    ) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
        """Every edge as (source, target, kind, attributes), optionally only some kinds."""
        wanted = set(kinds) if kinds is not None else None
        for u, v, k, attrs in self.g.edges(keys=True, data=True):
            if wanted is None or k in wanted:
                yield u, v, k, attrs

    def snapshot(self) -> dict[str, Any]:
        """A canonical, comparable dump of nodes and edges (for tests and debugging)."""
        nodes = {n: dict(sorted(a.items())) for n, a in sorted(self.g.nodes(data=True))}
        edges = sorted(
            (u, v, k, a["precision"], tuple(map(tuple, a["occurrences"])))
            for u, v, k, a in self.g.edges(keys=True, data=True)
        )
        unresolved = {p: r.unresolved for p, r in sorted(self._resolved.items())}
        return {"nodes": nodes, "edges": edges, "unresolved": unresolved}


@contextlib.contextmanager
def _no_gc() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _stamp(data: bytes | None, stamp: str | None) -> str:
    if stamp is not None:
        return stamp
    if data is None:
        return ""
    from sleuth.workspace.reader import stamp_bytes

    return stamp_bytes(data)
