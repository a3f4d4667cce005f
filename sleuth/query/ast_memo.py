"""The matches ``ast:`` scans memoise per request, so no file is parsed twice for one request.

Counting past a page, the snapshot after it and the next page's scan all run the same request
over the same files: ``FileMemo`` keeps each scanned file's matches by path and stamp (bounded
by ``Tuning.ast_memo_found``), and the worker batches that were still running when a page
stopped reading, so the next scan takes their answers instead of parsing those files again.
The match records a worker built beside a file's matches are kept too (bounded apart, by
``Tuning.ast_memo_records``: they hold the matched texts), until a scan takes them.
``AstMemos`` keeps the ``FileMemo`` of the last few requests (``Tuning.ast_memo_requests``,
least recently used dropped): the session owns one (``service.session.Session``) and lends it
to the engines through ``query.execute.Engines``.

Kept apart from ``ast_mode`` so that a session can hold one without importing tree-sitter.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

from sleuth.tuning import Tuning

if TYPE_CHECKING:
    from concurrent.futures import Future

    from sleuth.ast_search import Answer
    from sleuth.model import Found, Match
    from sleuth.workspace import FileText

__all__ = ["FileMemo", "AstMemos"]


class FileMemo:
    """The matches of each scanned file of one request, by path and stamp (bounded)."""

    def __init__(self, max_found: int, max_records: int = 0) -> None:
        self.max_found = max_found
        self.max_records = max_records
        self.files: dict[str, tuple[str, list[Found]]] = {}
        self.size = 0
        self.records: dict[str, tuple[str, list[Match]]] = {}
        self.records_size = 0
        # (stamp, batch, index) of files whose batch was already running when a page stopped
        # reading: the request's next scan takes their answers instead of parsing them again
        self.inflight: dict[str, tuple[str, Future[list[Answer]], int]] = {}

    def get(self, ft: FileText) -> list[Found] | None:
        hit = self.files.get(ft.path)
        return hit[1] if hit is not None and hit[0] == ft.stamp else None

    def put(self, ft: FileText, found: list[Found], records: list[Match] | None = None) -> None:
        if records:
            old = self.records.pop(ft.path, None)  # a file answered again replaces its records
            if old is not None:
                self.records_size -= len(old[1])
            if self.records_size + len(records) <= self.max_records:
                self.records[ft.path] = (ft.stamp, records)
                self.records_size += len(records)
        cost = len(found) + 1
        if ft.path in self.files or self.size + cost > self.max_found:
            return
        self.files[ft.path] = (ft.stamp, found)
        self.size += cost

    def take_records(self, ft: FileText, count: int) -> list[Match] | None:
        """The records of ``ft``'s ``count`` matches when a worker built them (once)."""
        hit = self.records.pop(ft.path, None)
        if hit is None:
            return None
        self.records_size -= len(hit[1])
        return hit[1] if hit[0] == ft.stamp and len(hit[1]) == count else None

    def take_inflight(self, ft: FileText) -> tuple[Future[list[Answer]], int] | None:
        hit = self.inflight.pop(ft.path, None)
        return (hit[1], hit[2]) if hit is not None and hit[0] == ft.stamp else None


class AstMemos:
    """The ``FileMemo`` of each of the last few requests, by request identity."""

    def __init__(self, tuning: Tuning | None = None) -> None:
        tuning = tuning if tuning is not None else Tuning()
        self.max_requests = tuning.ast_memo_requests
        self.max_found = tuning.ast_memo_found
        self.max_records = tuning.ast_memo_records
        self._memos: OrderedDict[str, FileMemo] = OrderedDict()

    def get(self, key: str) -> FileMemo:
        """The memo of request ``key`` (made empty on first use; the oldest one dropped)."""
        memo = self._memos.get(key)
        if memo is None:
            memo = self._memos[key] = FileMemo(self.max_found, self.max_records)
            while len(self._memos) > self.max_requests:
                self._memos.popitem(last=False)
        else:
            self._memos.move_to_end(key)
        return memo

    def clear(self) -> None:
        self._memos.clear()
