"""How the graph takes files in: ``GraphUpdates.apply`` and the cache loader's ``restore_rows``.

``apply`` replaces or removes files, works out which keys (``file_index``) their change moved,
and re-resolves exactly the files that noted one of them, carrying over what an edited file's
edit cannot have changed (``carry``), so the graph equals a full rebuild. A cold build's files
come in as record rows while the tagging workers go on, and are resolved in forked workers
(``workers``) once enough need it (``Tuning.resolve_pool_min``); their edges are installed in
path order as they come. ``restore_rows`` installs saved state without resolving anything.
``apply`` keeps the cyclic collector paused through a big batch as the caller's ``Collector``
says (the default pauses: a graph used without a session); the cache loader does the same
around ``restore_rows``.

``Graph`` (``build``) adds the convenience doors, the queries and persistence on top.
"""

from __future__ import annotations

import marshal
from collections.abc import Generator, Iterable, Mapping

from sleuth.graph import workers
from sleuth.graph.carry import carry_over
from sleuth.graph.file_index import FileIndex, changed_keys
from sleuth.graph.modules import provided_keys
from sleuth.graph.records import FileRecord, RecordRow
from sleuth.graph.resolve import EdgeKey, Resolution, Resolver
from sleuth.graph.state import GraphState
from sleuth.graph.table import NewVersion, ResolutionRow, resolution_from_row
from sleuth.tuning import Collector, Tuning

__all__ = ["GraphUpdates", "Change"]

_BATCH = 64
_DEFAULT_TUNING = Tuning()  # frozen values: a graph used without a session
_DEFAULT_COLLECTOR = Collector()
Change = FileRecord | RecordRow | bytes | None
"""A file's new version (a record, its cache row, or that row ``marshal``-ed) or None: the
file is gone."""


class GraphUpdates(GraphState):
    """The graph's update doors; see the module docstring."""

    def apply(
        self,
        changes: Mapping[str, Change] | Iterable[tuple[str, Change]],
        *,
        parallel: bool = False,
        tuning: Tuning | None = None,
        collector: Collector | None = None,
    ) -> None:
        """Replace (record, or record row) or remove (None) files, then re-resolve every
        affected file. A row (``RecordRow``, or one ``marshal``-ed by a tagging worker) is
        kept as a row (and the bytes until the cache writes them).

        ``changes`` may also be an iterable of (path, change), read once: each file is taken
        in as it comes (e.g. while workers still tag the next ones), then all are resolved.
        ``parallel``: when many files need resolving (``tuning.resolve_pool_min``), resolve them
        in forked worker processes (``workers``; in-process when forking is not possible or
        fails) — same result. ``collector``: the session's policy for the cyclic collector.
        """
        tuning = tuning if tuning is not None else _DEFAULT_TUNING
        if isinstance(changes, Mapping):
            if not changes:
                return
            if len(changes) < _BATCH:
                self.version += 1
                self._apply(changes.items(), parallel, tuning)
                return
            changes = changes.items()
        self.version += 1
        # A big batch allocates millions of small objects holding no cycles; the cyclic
        # collector scanning them repeatedly would double the build time.
        with (collector or _DEFAULT_COLLECTOR).paused():
            self._apply(changes, parallel, tuning)

    def _index(self, path: str) -> FileIndex:
        idx = self._indexes.get(path)
        if idx is None:
            raw = self._records.raw(path)  # still a cached row: index it without decoding
            idx = (
                FileIndex.of_row(path, raw)
                if raw is not None
                else FileIndex.of(self._records[path])
            )
            self._indexes[path] = idx
        return idx

    def _resolver(self) -> Resolver:
        """A resolution session over the current records."""
        return Resolver(self._records, self._index, self._modules, self._records.uses)

    def _used(self, key: str) -> bool:
        """Whether some file's resolution depends on ``key``."""
        return bool(self._key_users.get(key))

    def _apply(self, changes: Iterable[tuple[str, Change]], parallel: bool, tuning: Tuning) -> None:
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
                    path,
                    rec.lang,
                    rec.stamp,
                    rec.complete,
                    rec.reason,
                    rec.defs,
                    replace=old is not None,
                )
                affected.add(path)
                self._gone.discard(path)
        affected = {p for p in affected | by_keys if p in self._records}
        ordered = sorted(affected)
        pooled: Generator[tuple[str, bytes], None, None] | None = None
        if parallel:
            plain = sum(1 for p in ordered if p not in carried)
            if plain >= tuning.resolve_pool_min and workers.can_fork():
                pooled = workers.iter_resolved(
                    self._resolver, [p for p in ordered if p not in carried], tuning.resolve_chunk
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
        """Install saved state without resolving anything (the cache loader's door: it keeps
        the cyclic collector paused around the load, as its ``Collector`` says).

        Records stay rows until first asked for; nothing is marked as changed.
        """
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
