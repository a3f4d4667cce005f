"""The file scan every positional engine shares: files in path order, spans -> ``Match``.

An engine contributes a ``SpanSource`` (what to find in one file's bytes); the ``Scanner``
owns ordering, prefiltering (trigram candidates and required literals), reading through the
workspace (so cloaking, caps and stamps apply) and turning byte spans into the matches of
docs/json.md#a-match.
Results are produced one file at a time so a page can stop at a file boundary and resume after
it (docs/query.md#ordering-and-pagination).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

from sleuth.model import CaptureSpan, Found, Match, SkipCounts
from sleuth.prefilter import Literals, file_may_match, fold
from sleuth.query.scan_split import Read, split_reads
from sleuth.workspace import FileEntry, FileText, Workspace
from sleuth.workspace.reader import Wanted

__all__ = [
    "split_resume",
    "resume_key",
    "after_inside",
    "Inside",
    "SpanSource",
    "StructuredSource",
    "BatchedSource",
    "Found",
    "CaptureSpan",
    "FileHits",
    "Scanner",
    "make_match",
    "make_matches",
    "Stage",
    "TextMode",
    "FILE_MATCHES_MAX",
]

FILE_MATCHES_MAX = 100_000
"""Matches one file lists at most (text and regex): a minified bundle or a file of empty lines
can hold millions, and their positions alone took gigabytes (a one-match page of an 8 MiB
file: 2.5 GB and 7 s); past it the answer is incomplete and says which file was cut."""

TextMode = Literal["literal", "regex", "boolean", "broadened", "ast", "symbols", "symbol", "graph"]


class SpanSource(Protocol):
    """What one engine finds in one file (the engine boundary for positional modes)."""

    @property
    def literals(self) -> Literals | None:
        """Literals a file must contain to match; ``None`` is never wrong."""
        ...

    @property
    def prefilter(self) -> bool:
        """Whether checking ``literals`` against a file's folded bytes is cheaper than ``spans``."""
        ...

    def spans(self, data: bytes, start: int) -> list[tuple[int, int]]:
        """Byte spans found in ``data[start:]`` (absolute offsets), ascending; [] for none."""
        ...


class StructuredSource(SpanSource, Protocol):
    """A source whose matches carry captures and must lie wholly inside a scope range."""

    def find_in_file(self, ft: FileText) -> list[Found]:
        """(start, end, captures) of every match in ``ft``, in document order."""
        ...


@dataclass(frozen=True)
class Stage:
    """One attempt of a mode's fallback chain (docs/query.md#plain-text): what to run and what it
    falls back to."""

    mode: TextMode
    fallback: str | None
    source: SpanSource
    broadened: bool = False


T = TypeVar("T")


@runtime_checkable
class BatchedSource(Protocol):
    """A structured source that may work ahead on the next files (e.g. in other processes).

    ``find_in_files`` answers ``find_in_file`` of every item, in the items' order.
    """

    def find_in_files(
        self, items: Iterable[tuple[FileText, T]]
    ) -> Iterator[tuple[FileText, T, list[Found]]]: ...


@runtime_checkable
class PrebuiltSource(Protocol):
    """A source that may have built the match records of a file's matches already (in worker
    processes, ``query.ast_mode``): ``take_records`` hands them out once, or None."""

    def take_records(self, ft: FileText, count: int) -> list[Match] | None: ...


@dataclass
class FileHits:
    """The matches of one file, in order, with the stamp of the bytes they were found in.

    Match records are built on demand (``build``): a file with 100k matches costs only the
    records a page needs. ``records``, when the source built them already, are those of every
    match of ``found``, in order.
    """

    path: str
    stamp: str
    ft: FileText
    found: list[Found]
    context: int
    first: int = 0  # the index of found[0] among all of the file's matches (for resume_key)
    records: list[Match] | None = None

    def build(self, count: int | None = None) -> list[Match]:
        if self.records is not None:
            return self.records[:count]
        return make_matches(self.ft, self.found[:count], self.context)


Inside = tuple[int, int, int | None]
"""Where in a file a page ended: (start, end, index among the file's matches) of its last match
(the index None in a key written before it was kept)."""


def split_resume(after: str | None) -> tuple[str | None, Inside | None]:
    """``"path"`` (resume after the whole file) or ``"path\0start\0end\0index"`` (inside it)."""
    if after is None or "\0" not in after:
        return after, None
    path, start, end, *index = after.split("\0")
    return path, (int(start), int(end), int(index[0]) if index else None)


def resume_key(path: str, last: Found | None = None, index: int = 0) -> str:
    """The key of a page that ends after the whole file ``path``, or (``last``) after its match
    ``last``, the ``index``-th of the file's matches."""
    return path if last is None else f"{path}\0{last[0]}\0{last[1]}\0{index}"


def after_inside(found: list[Found], inside: Inside) -> tuple[list[Found], int]:
    """(the matches of a file after the key's match, the index of the first of them).

    By index, not by position: structural matches come in document order, so an enclosing
    match precedes the nested ones that start where it starts (``a.b().c()`` holds two calls
    at one offset), and two matches can have one span; a comparison of positions would drop
    or repeat them. When the key's match is not at its index (the file changed since, or an
    older key without one), what starts after it or ends earlier at its start follows.
    """
    start, end, index = inside
    if index is not None and index < len(found) and found[index][:2] == (start, end):
        return found[index + 1 :], index + 1
    rest = [f for f in found if f[0] > start or (f[0] == start and f[1] < end)]
    return rest, len(found) - len(rest)


def _captures(ft: FileText, caps: dict[str, CaptureSpan]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    lines_of = ft.lines_of
    data = ft.data
    for name, (nodes, start, end) in caps.items():
        line, end_line = lines_of(start, end)  # lines only: a capture shows no columns
        out[name] = {
            "text": data[start:end].decode("utf-8", errors="replace"),
            "nodes": nodes,
            "start_byte": start,
            "end_byte": end,
            "line": line,
            "end_line": end_line,
        }
    return out


def make_match(
    ft: FileText,
    start: int,
    end: int,
    context: int,
    captures: dict[str, CaptureSpan] | None = None,
    extra: dict[str, Any] | None = None,
) -> Match:
    """A match record (docs/json.md#a-match) for the byte range [start, end) of ``ft``.

    Captures are kept as raw spans here; ``resources`` registers each as a ``RESULT#``. A file
    that is not UTF-8 was searched as bytes: its matches say ``"encoding": "binary-safe"``
    (docs/faces.md#which-files-are-searched), and only theirs, so a UTF-8 file's match keeps exactly
    the keys of docs/json.md#a-match.
    """
    if ft.encoding == "binary-safe":
        extra = {**(extra or {}), "encoding": "binary-safe"}
    line, column, end_line, end_column = ft.locate(start, end)
    before, after = ft.context(line, end_line, context)
    return Match(
        path=ft.path,
        start_byte=start,
        end_byte=end,
        line=line,
        column=column,
        end_line=end_line,
        end_column=end_column,
        text=ft.snippet(start, end, (line, end_line)),
        before=before,
        after=after,
        stamp=ft.stamp,
        captures=_captures(ft, captures) if captures is not None else None,
        extra=extra,
    )


def make_matches(ft: FileText, found: list[Found], context: int) -> list[Match]:
    """The match records of ``found`` in ``ft`` (``make_match`` of each)."""
    return [make_match(ft, s, e, context, caps, extra) for s, e, caps, extra in found]


class Scanner:
    """Runs one ``SpanSource`` over files in path order."""

    def __init__(
        self,
        ws: Workspace,
        files: Sequence[FileEntry],
        source: SpanSource,
        *,
        context: int,
        candidates: set[str] | None = None,
        skipped: SkipCounts | None = None,
        ranges: dict[str, list[tuple[int, int]]] | None = None,
        notes: list[str] | None = None,
    ) -> None:
        self._ws = ws
        self._notes = notes  # where a file cut at FILE_MATCHES_MAX is said
        self._files = files
        self._source = source
        self._context = context
        self._candidates = candidates
        self._ranges = ranges
        # decided once: a runtime Protocol check per file costs more than reading the file
        self._structured: _Structured | None = source if isinstance(source, _Structured) else None
        self._batched: BatchedSource | None = source if isinstance(source, BatchedSource) else None
        self._prebuilt = source if isinstance(source, PrebuiltSource) else None
        self.skipped = skipped if skipped is not None else SkipCounts()
        self._memo: tuple[str, str, list[Found]] | None = None  # the last file's matches
        self._split_files = ws.tuning.scan_split_files
        # the spans ``_wanted``'s test found last, with the bytes they are of: the file it
        # keeps is searched again by ``_found`` right after, on the very same bytes object
        self._tested: tuple[bytes, int, list[tuple[int, int]]] | None = None
        self.files_scanned = 0

    def _files_from(
        self, after: str | None, wanted: Wanted | None = None
    ) -> Iterator[tuple[FileText, Inside | None]]:
        """Readable candidate files from the resume point on (with the in-file position);
        with ``wanted``, only those whose bytes it wants (the rest counted as scanned)."""
        literals = self._source.literals if self._source.prefilter else None
        candidates = self._candidates
        after_path, inside = split_resume(after)
        paths = (
            entry.path
            for entry in self._files
            if (
                after_path is None
                or entry.path > after_path
                or (entry.path == after_path and inside is not None)
            )
            and (candidates is None or entry.path in candidates)
        )
        ws, skipped = self._ws, self.skipped
        reads: Iterable[Read]
        if wanted is None:
            reads = ((p, ws.read(p, skipped)) for p in paths)
        elif after_path is None and len(self._files) >= self._split_files:
            reads = split_reads(ws, list(paths), wanted, skipped, self._split_files)
        else:  # a page after the first, or a small tree: no fork, and no list made up front
            reads = ((p, ws.read_if(p, skipped, wanted)) for p in paths)
        if wanted is not None:
            literals = None  # the test checked them
        for path, ft in reads:
            if ft is None:
                continue
            self.files_scanned += 1
            if isinstance(ft, str):  # read, and without a match
                continue
            if literals and not file_may_match(literals, fold(ft.data)):
                continue
            yield ft, inside if path == after_path else None

    def _wanted(self) -> Wanted | None:
        """For a cold scan (an unwatched workspace) of spans in whole files: the test that
        keeps a file only when it has a match, so a file without one costs no stamp, no text
        object and no cache entry, and the scan can be split (``scan_split``)."""
        if self._structured is not None or self._ranges is not None:
            return None
        if self._ws.generation is not None:
            return None  # a watched workspace keeps every text in its cache, for the next call
        source = self._source
        literals = source.literals if source.prefilter else None

        def wanted(data: bytes, start: int) -> bool:
            if literals and not file_may_match(literals, fold(data)):
                return False
            spans = source.spans(data, start)
            self._tested = (data, start, spans)
            return bool(spans)

        return wanted

    def _found_after(self, ft: FileText) -> list[Found]:
        memo = self._memo
        if memo is not None and memo[0] == ft.path and memo[1] == ft.stamp:
            return memo[2]
        found = self._found(ft)
        self._memo = (ft.path, ft.stamp, found)
        return found

    def _found_stream(self, after: str | None) -> Iterator[tuple[FileText, list[Found], int]]:
        """(file, its matches after ``after``, the index of the first of them among the
        file's) of every candidate file, in path order."""
        if self._batched is None:
            for ft, inside in self._files_from(after, self._wanted()):
                found = self._found_after(ft)
                yield (ft, found, 0) if inside is None else (ft, *after_inside(found, inside))
            return
        # the source memoises per file itself (and may work ahead of this loop)
        for ft, inside, found in self._batched.find_in_files(self._files_from(after)):
            found = self._in_ranges(ft, found)
            yield (ft, found, 0) if inside is None else (ft, *after_inside(found, inside))

    def iter_hits(self, after: str | None = None) -> Iterator[FileHits]:
        """Files with at least one match, in path order, after the resume key ``after``."""
        prebuilt = self._prebuilt
        for ft, found, first in self._found_stream(after):
            if found:
                # records of the whole file fit only a whole file's matches (first 0, as many)
                records = (
                    prebuilt.take_records(ft, len(found))
                    if prebuilt is not None and first == 0
                    else None
                )
                yield FileHits(ft.path, ft.stamp, ft, found, self._context, first, records)

    def count_rest(self, after: str | None) -> Iterator[int]:
        """Match counts of the files after ``after`` (cheap: no match records built)."""
        for _, found, _first in self._found_stream(after):
            yield len(found)

    def _cut(self, path: str) -> None:
        note = (
            f"{path} holds more than {FILE_MATCHES_MAX} matches: only the first "
            f"{FILE_MATCHES_MAX} are listed; narrow the pattern or the scope"
        )
        if self._notes is not None and note not in self._notes:
            self._notes.append(note)

    def _in_ranges(self, ft: FileText, found: list[Found]) -> list[Found]:
        """Structural matches lying wholly inside one range of the scope
        (docs/references.md#references-as-a-scope)."""
        if self._ranges is None:
            return found
        ranges = self._ranges.get(ft.path, [])
        return [f for f in found if any(s <= f[0] and f[1] <= e for s, e in ranges)]

    def _found(self, ft: FileText) -> list[Found]:
        """Matches in the whole file, or only inside the scope's ranges
        (docs/references.md#references-as-a-scope)."""
        source = self._source
        ranges = None if self._ranges is None else self._ranges.get(ft.path, [])
        if self._structured is not None:
            return self._in_ranges(ft, self._structured.find_in_file(ft))
        if ranges is None:
            tested = self._tested
            if tested is not None and tested[0] is ft.data and tested[1] == ft.body_offset:
                spans = tested[2]
            else:
                spans = source.spans(ft.data, ft.body_offset)
            if len(spans) > FILE_MATCHES_MAX:
                spans = spans[:FILE_MATCHES_MAX]
                self._cut(ft.path)
            return [(s, e, None, None) for s, e in spans]
        out: list[Found] = []
        for start, end in ranges:
            # each range is searched on its own: a match never spans a gap between ranges
            piece = ft.data[start:end]
            out.extend((s + start, e + start, None, None) for s, e in source.spans(piece, 0))
        return out


@runtime_checkable
class _Structured(Protocol):
    def find_in_file(self, ft: FileText) -> list[Found]: ...
