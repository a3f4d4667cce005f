"""The Python face: ``Workbench(root)`` with one method per verb (SPEC §10).

A ``Workbench`` is the long-running form of sleuth: it keeps the workspace's content cache,
the trigram index (built in the background after the first search), the registry connection
and, with ``watch=True``, the file listing warm across calls (a file watcher invalidates it). The CLI makes one per process (with the index loaded from
``.sleuth/`` when present, never built); the MCP server keeps one for its lifetime.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace

from sleuth.query.execute import prepare
from sleuth.query.index import IndexKeeper
from sleuth.query.request import DEFAULT_LIMIT, SearchRequest
from sleuth.resources.registry import Registry
from sleuth.resources.response import SearchResult
from sleuth.resources.results import SearchPager
from sleuth.workspace import Workspace

__all__ = ["Workbench"]


class Workbench:
    """One workspace, searched through every engine, answering SPEC JSON shapes."""

    def __init__(
        self,
        root: str | os.PathLike[str] = ".",
        *,
        no_ignore: bool = False,
        build_index: bool = True,
        watch: bool = False,
    ) -> None:
        self.workspace = Workspace(root, no_ignore=no_ignore)
        if watch:
            self.workspace.watch()  # listings and the index are then reused between queries
        self._registry = Registry(self.workspace.state_dir)
        self._pager = SearchPager(self._registry)
        self._build_index = build_index
        self._index: IndexKeeper | None = None

    @property
    def root(self) -> str:
        return str(self.workspace.root)

    @property
    def index(self) -> IndexKeeper:
        """The trigram index keeper (loaded from ``.sleuth/`` lazily)."""
        if self._index is None:
            self._index = IndexKeeper(self.workspace, build=self._build_index)
        return self._index

    def search(
        self,
        query: str,
        *,
        path: str = "/",
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        limit: int = DEFAULT_LIMIT,
        cursor: str | None = None,
        context: int = 1,
        lang: str | None = None,
        navigation: str | None = None,
        case_sensitive: bool = True,
    ) -> SearchResult:
        """Search the workspace (SPEC §3); one page of matches with references."""
        req = SearchRequest.build(
            query,
            path=path,
            include=include,
            exclude=exclude,
            limit=limit,
            cursor=cursor,
            context=context,
            lang=lang,
            navigation=navigation,
            case_sensitive=case_sensitive,
        )
        if req.cursor is not None:
            row, offset = self._pager.resolve_cursor(req)
            prepared = None
            if row.resume_after is not None:
                prepared = prepare(self.workspace, replace(req, cursor=None), self.index)
            result = self._pager.next_page(row, offset, req.limit, prepared)
            result.query = req.query
            return result
        return self._pager.first_page(prepare(self.workspace, req, self.index))

    def index_now(self) -> int:
        """Build or refresh the on-disk trigram index in the foreground (``sleuth index``)."""
        files = self.workspace.list_files().files
        return self.index.build_now(files)

    def close(self) -> None:
        self.workspace.close()
        self._registry.close()

    def __enter__(self) -> Workbench:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
