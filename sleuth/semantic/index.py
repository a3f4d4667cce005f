"""``SemanticIndex``: hybrid retrieval over a workspace's chunks (docs/query.md#semantic-hybrid-retrieval).

``sync`` brings the index to the files listed: a file whose (size, mtime_ns) is unchanged is kept
as is; one whose stat moved is read through the workspace and re-chunked only if its stamp
changed; a file that is gone, binary or too large now leaves the index. Re-chunked files are
embedded in batches (``progress`` is told how far) and written to the store in one transaction.

``search`` scores every chunk with two parts in [0, 1]. The lexical part is BM25 over
identifier-split tokens, normalised to [0, 1) (``sleuth/semantic/scoring.py``, which holds the
weights). The dense part is the cosine of the chunk's vector with the query's, clipped at 0, mixed with
``NAME_WEIGHT`` of the cosine of the vector of its ``kind title`` alone: a name that says what
the query says is worth more than the same words somewhere in a body (both weights chosen on
sdists that are not the benchmark's, docs/query.md#semantic-hybrid-retrieval). The score is
``alpha * dense + (1 - alpha) * lexical``, in [0, 1]; ``alpha`` 1 is dense alone, 0 lexical
alone.
A chunk of test code (``TEST_PATH``) scores ``TEST_WEIGHT`` of that unless the query speaks of
tests: a test shares its subject's words and names (``test_iri_to_uri`` beside ``iri_to_uri``)
and would otherwise outrank the code a description is about. Hits below ``threshold`` are dropped; order is score descending, then path, then position.
Postings and document frequencies are kept per file and updated as files change, so a sync after
one edit costs that file's chunks, not the corpus.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import xxhash

from sleuth.semantic.chunks import Chunk, Decl, chunk_file
from sleuth.semantic.encoder import VOCAB, TextEncoder, Vectors
from sleuth.semantic.scoring import (
    ALPHA,
    HEAD_WEIGHT,
    K1,
    NAME_WEIGHT,
    TEST_PATH,
    TEST_TERMS,
    TEST_WEIGHT,
    TITLE_WEIGHT,
    B,
    Hit,
    bm25,
)
from sleuth.semantic.static import WORD_RANK_START, StaticEncoder
from sleuth.semantic.store import FileRow, IndexedChunk, SemanticStore
from sleuth.semantic.tokens import Segmenter, tokens
from sleuth.workspace import FileEntry, Workspace
from sleuth.workspace.state_folder import STATE_DIR

__all__ = [
    "SemanticIndex",
    "Hit",
    "DeclsOf",
    "Progress",
    "ALPHA",
    "K1",
    "B",
    "TITLE_WEIGHT",
    "HEAD_WEIGHT",
    "NAME_WEIGHT",
    "TEST_WEIGHT",
    "TEST_PATH",
]

DeclsOf = Callable[[str, bytes], list[Decl] | None]
"""The declarations of a file (path, bytes), or None for windows only: the query layer's tags."""
Progress = Callable[[int, int], None]
"""Told (chunks embedded, chunks to embed) while a sync embeds."""


def _embed_text(chunk: Chunk) -> str:
    head = f"{chunk.kind} {chunk.title}\n" * TITLE_WEIGHT if chunk.title else ""
    return head + chunk.text


def _name_text(chunk: Chunk) -> str:
    return f"{chunk.kind} {chunk.title}" if chunk.title else ""


def _digest(text: str) -> str:
    return xxhash.xxh3_64_hexdigest(text.encode("utf-8", "surrogatepass"))


def _index_chunk(
    chunk: Chunk, digest: str, memo: dict[str, tuple[str, ...]], segmenter: Segmenter
) -> IndexedChunk:
    toks = tokens(f"{chunk.title} {chunk.title} {chunk.text}", memo=memo, segmenter=segmenter)
    first = chunk.text.split("\n", 1)[0]
    return IndexedChunk(
        chunk.start,
        chunk.end,
        chunk.line,
        chunk.end_line,
        chunk.kind,
        chunk.title,
        dict(Counter(toks)),
        len(toks),
        digest,
        frozenset(tokens(first, memo=memo, segmenter=segmenter)),
    )


_Matrix = tuple[Vectors, list[tuple[str, int]], dict[str, int], "np.ndarray[Any, Any]"]
"""Every chunk's two vectors side by side (its text's, its name's), its (path, position), where
each file's chunks start, and which chunks are test code."""


class SemanticIndex:
    """The index of one workspace, warm in memory, persisted in ``.sleuth/semantic.sqlite3``."""

    def __init__(self, ws: Workspace, encoder: TextEncoder | None = None) -> None:
        self.ws = ws
        self.encoder: TextEncoder = encoder or StaticEncoder()
        dim = self.encoder.dim
        self._store = SemanticStore(ws.root / STATE_DIR, self.encoder.model_id, 2 * dim)
        self._rows: dict[str, FileRow] | None = None
        self._df: Counter[str] = Counter()
        # term -> path -> positions of that file's chunks holding it: a query walks only the
        # chunks with its terms, not every chunk of every file that has one
        self._postings: dict[str, dict[str, list[int]]] = {}
        self._length = 0  # tokens over all chunks
        self._count = 0  # chunks
        self._matrix: _Matrix | None = None
        self._words: dict[str, tuple[str, ...]] = {}  # the tokens of each word seen (a memo)
        self._segmenter = Segmenter(
            VOCAB.read_text(encoding="utf-8").splitlines()[WORD_RANK_START:]
        )

    # -- keeping up with the files ----------------------------------------------------------

    def _rows_now(self) -> dict[str, FileRow]:
        if self._rows is None or self._store.replaced():
            self._rows = {}
            self._df.clear()
            self._postings.clear()
            self._length = self._count = 0
            self._matrix = None
            for row in self._store.load().values():
                self._add(row)
        return self._rows

    def _add(self, row: FileRow) -> None:
        assert self._rows is not None
        self._rows[row.path] = row
        for i, c in enumerate(row.chunks):
            self._df.update(c.terms.keys())
            self._length += c.length
            for term in c.terms:
                self._postings.setdefault(term, {}).setdefault(row.path, []).append(i)
        self._count += len(row.chunks)
        self._matrix = None

    def _remove(self, path: str) -> None:
        assert self._rows is not None
        row = self._rows.pop(path, None)
        if row is None:
            return
        for c in row.chunks:
            self._df.subtract(c.terms.keys())
            self._length -= c.length
            for term in c.terms:
                holders = self._postings.get(term)
                if holders is not None:
                    holders.pop(path, None)
                    if not holders:
                        del self._postings[term]
        self._count -= len(row.chunks)
        self._matrix = None

    def sync(
        self, files: Iterable[FileEntry], decls_of: DeclsOf, progress: Progress | None = None
    ) -> int:
        """Bring the index to ``files`` (the whole workspace listing); the count of files
        re-chunked. Files not listed leave the index."""
        rows = self._rows_now()
        listed: set[str] = set()
        fresh: list[tuple[FileRow, list[Chunk]]] = []
        for entry in files:
            listed.add(entry.path)
            row = rows.get(entry.path)
            if row is not None and (row.size, row.mtime_ns) == (entry.size, entry.mtime_ns):
                continue
            ft = self.ws.read(entry.path)
            if ft is None:  # binary, too large or unreadable now
                listed.discard(entry.path)
                continue
            if row is not None and row.stamp == ft.stamp and row.fits(ft.data):
                row.size, row.mtime_ns = entry.size, entry.mtime_ns
                self._store.touch(row.path, entry.size, entry.mtime_ns)
                continue
            chunks = chunk_file(ft.data, decls_of(ft.path, ft.data))
            fresh.append((FileRow(ft.path, entry.size, entry.mtime_ns, ft.stamp), chunks))
        gone = [p for p in rows if p not in listed]
        return self._apply(fresh, gone, progress)

    def refresh(self, paths: Iterable[str], decls_of: DeclsOf) -> None:
        """Re-read ``paths`` now (found changed after a sync) and re-index or drop each."""
        rows = self._rows_now()
        fresh: list[tuple[FileRow, list[Chunk]]] = []
        gone: list[str] = []
        for path in paths:
            try:
                ft = self.ws.read(path)
            except Exception:  # denied or outside the root now: not a file to answer from
                ft = None
            if ft is None:
                gone.append(path)
            elif path not in rows or rows[path].stamp != ft.stamp or not rows[path].fits(ft.data):
                fresh.append(
                    (FileRow(path, -1, -1, ft.stamp), chunk_file(ft.data, decls_of(path, ft.data)))
                )
        self._apply(fresh, [p for p in gone if p in rows], None)

    def _apply(
        self,
        fresh: list[tuple[FileRow, list[Chunk]]],
        gone: list[str],
        progress: Progress | None,
    ) -> int:
        rows = self._rows_now()
        known: dict[str, Vectors] = {}  # text digest -> vector, of the files being re-indexed
        for row, _ in fresh:
            old = rows.get(row.path)
            if old is not None:
                known.update((c.digest, v) for c, v in zip(old.chunks, old.vectors, strict=True))
        every = [c for _, chunks in fresh for c in chunks]
        texts = [_embed_text(c) for c in every]
        digests = [_digest(t) for t in texts]
        missing = [i for i, d in enumerate(digests) if d not in known]  # only new text is encoded
        dim = self.encoder.dim
        vectors = np.zeros((len(texts), 2 * dim), dtype=np.float32)
        step = max(self.encoder.batch * 8, 1)
        if progress is not None and missing:
            progress(0, len(missing))  # the step starts: a face may show it
        for at in range(0, len(missing), step):
            part = missing[at : at + step]
            vectors[part, :dim] = self.encoder.encode([texts[i] for i in part])
            vectors[part, dim:] = self.encoder.encode([_name_text(every[i]) for i in part])
            if progress is not None:
                progress(min(at + step, len(missing)), len(missing))
        for i, d in enumerate(digests):
            if d in known:
                vectors[i] = known[d]
        at = 0
        for row, chunks in fresh:
            row.chunks = [
                _index_chunk(c, d, self._words, self._segmenter)
                for c, d in zip(chunks, digests[at:], strict=False)
            ]
            row.vectors = vectors[at : at + len(chunks)]
            at += len(chunks)
        for path in gone:
            self._remove(path)
        for row, _ in fresh:
            self._remove(row.path)
            self._add(row)
        if fresh or gone:
            self._store.write([row for row, _ in fresh], gone)
        return len(fresh)

    # -- answering --------------------------------------------------------------------------

    def _vectors(self) -> _Matrix:
        if self._matrix is None:
            rows = self._rows_now()
            owners = [(p, i) for p, row in rows.items() for i in range(len(row.chunks))]
            first: dict[str, int] = {}
            at = 0
            for p, row in rows.items():
                first[p] = at
                at += len(row.chunks)
            parts = [row.vectors for row in rows.values() if len(row.chunks)]
            dim = 2 * self.encoder.dim
            matrix = np.concatenate(parts) if parts else np.zeros((0, dim), dtype=np.float32)
            tests = np.fromiter(
                (TEST_PATH.search(p) is not None for p, _ in owners), dtype=bool, count=len(owners)
            )
            self._matrix = (matrix, owners, first, tests)
        return self._matrix

    def search(
        self,
        query: str,
        *,
        limit: int,
        threshold: float = 0.0,
        alpha: float = ALPHA,
        paths: set[str] | None = None,
    ) -> list[Hit]:
        """The best ``limit`` chunks for ``query`` scoring at least ``threshold`` (in ``paths``
        only, when given)."""
        rows = self._rows_now()
        matrix, owners, first, tests = self._vectors()
        if not owners:
            return []
        terms = set(tokens(query, memo=self._words, segmenter=self._segmenter))
        avg = self._length / self._count if self._count else 1.0
        lexical = bm25(terms, self._df, self._count, avg, self._postings, rows, first, len(owners))
        dense = np.zeros(len(owners), dtype=np.float32)
        if alpha > 0:
            q = self.encoder.encode([query])[0]
            dim = self.encoder.dim
            # each row is [text | name]: one pass over the matrix gives both cosines. einsum,
            # not BLAS: OpenBLAS runs a product this size on threads, which on a busy machine
            # waited for the cores (6 ms instead of 0.5 for 1,700 chunks, under load 8)
            cosines = np.einsum("ij,j->i", matrix.reshape(-1, dim), q)
            both = np.clip(cosines, 0.0, 1.0).reshape(-1, 2)
            dense = (both[:, 0] + NAME_WEIGHT * both[:, 1]) / (1 + NAME_WEIGHT)
        fused = np.clip(alpha * dense + (1 - alpha) * lexical, 0.0, 1.0)
        if not terms & TEST_TERMS:
            fused[tests] *= TEST_WEIGHT
        ok = (fused >= threshold) & (fused > 0)
        if paths is not None:
            ok &= np.fromiter((p in paths for p, _ in owners), dtype=bool, count=len(owners))
        found = np.flatnonzero(ok)
        if len(found) > limit:  # every chunk tied with the limit-th stays, for the path order
            cutoff = np.partition(fused[found], len(found) - limit)[len(found) - limit]
            found = found[fused[found] >= cutoff]
        keep = sorted(
            (int(n) for n in found),
            key=lambda n: (-round(float(fused[n]), 6), owners[n][0], owners[n][1]),
        )
        hits = []
        for n in keep[:limit]:
            path, i = owners[n]
            row, c = rows[path], rows[path].chunks[i]
            hits.append(
                Hit(
                    path,
                    c.start,
                    c.end,
                    c.line,
                    c.end_line,
                    c.kind,
                    c.title,
                    row.stamp,
                    round(float(fused[n]), 6),
                    float(lexical[n]),
                    float(dense[n]),
                )
            )
        return hits

    def fits(self, path: str, stamp: str, data: bytes) -> bool:
        """Whether ``path``'s chunks were cut from ``data`` (of ``stamp``) as far as the
        bytes can tell (``FileRow.fits``; checked once per stamp)."""
        row = self._rows_now().get(path)
        if row is None or row.stamp != stamp:
            return False
        if row.confirmed != stamp:
            if not row.fits(data):
                return False
            row.confirmed = stamp
        return True

    @property
    def chunk_count(self) -> int:
        self._rows_now()
        return self._count

    def close(self) -> None:
        self._store.close()
