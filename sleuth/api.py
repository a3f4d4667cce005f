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
from typing import TYPE_CHECKING, Any, Literal

from sleuth.query.execute import Engines, Prepared, prepare
from sleuth.query.request import DEFAULT_LIMIT, SearchRequest
from sleuth.resources.refs import looks_like_ref
from sleuth.resources.registry import Registry, ResultRow
from sleuth.resources.response import SearchResult
from sleuth.resources.results import SearchPager
from sleuth.resources.selection import Resolver, request_of
from sleuth.resources.views import ReadResult, Views
from sleuth.service.session import Session
from sleuth.tuning import Tuning
from sleuth.workspace import Workspace

if TYPE_CHECKING:
    from sleuth.ast_search import TreeCache
    from sleuth.edit.operations import Editor
    from sleuth.query.index import IndexKeeper

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
        servers: bool = True,
        one_shot: bool = False,
        session: Session | None = None,
        tuning: Tuning | None = None,
    ) -> None:
        """``one_shot``: this workbench answers a query or two and goes (a CLI call), so a
        ``graph:PATH`` reads only the part of a current graph cache it shows instead of
        loading the whole graph, which a long-running face keeps for its next queries.

        ``session``: the process resources to run on (pools, prefetched listing, memos, the
        collector policy), left open by ``close``; without one the workbench makes its own
        (with ``tuning``) and closes it with itself."""
        if session is not None and tuning is not None and tuning != session.tuning:
            raise ValueError("pass tuning to the Session, or a tuning without a session")
        self._own_session = session is None
        self.session = session if session is not None else Session(tuning)
        self.workspace = Workspace(
            root,
            no_ignore=no_ignore,
            tuning=self.session.tuning,
            prefetched=self.session.prefetched,
        )
        if watch:
            self.workspace.watch()  # listings and the index are then reused between queries
        self._registry = Registry(self.workspace.state_dir)
        self._pager = SearchPager(self._registry, self.workspace.is_denied)
        self._build_index = build_index
        self._index: IndexKeeper | None = None
        self._trees_: TreeCache | None = None
        self._use_servers = servers
        self._engines = Engines(
            make_servers=self._servers,
            one_shot=one_shot,
            match_pool=self.session.match_pool,
            ast_memos=self.session.ast_memos,
            digests=self.session.listing_digests,
            collector=self.session.collector,
        )
        self._resolver = Resolver(
            self.workspace, self._registry, complete=self._complete, rerun=self._rerun
        )
        self._views = Views(self.workspace, self._registry, self._resolver)
        self._editor_: Editor | None = None
        if (self.workspace.root / ".sleuth" / "journal").is_dir():
            from sleuth.edit.journal import recover

            recover(self.workspace)  # finish or roll back an edit a crash interrupted (SPEC §9)

    @property
    def _editor(self) -> Editor:
        if self._editor_ is None:
            from sleuth.edit.operations import Editor

            self._editor_ = Editor(self.workspace, self._resolver, self._views)
        return self._editor_

    @property
    def _trees(self) -> TreeCache | None:
        """Parse trees are worth keeping only in a process that answers many queries."""
        if self._trees_ is None and self._build_index:
            from sleuth.ast_search import TreeCache

            self._trees_ = TreeCache()
        return self._trees_

    # -- plumbing between the registry and the query layer ----------------------------------

    def _engine_state(self, req: SearchRequest) -> Engines:
        engines = self._engines
        engines.trees = self._trees
        # a one-shot process (the CLI) neither loads nor builds the index: loading it costs more
        # than the scan it would save (benchmarks/RESULTS.md)
        engines.index = self.index if self._build_index else None
        if req.query.startswith("symbol:#"):
            sid = req.query.removeprefix("symbol:#").strip()
            path = self._registry.find_symbol_path(sid)
            if path is not None:
                engines.symbol_paths[sid] = path
        return engines

    def _servers(self) -> Any:
        if not self._use_servers:
            return None
        from sleuth.lsp_bridge import ServerPool

        timeout = self.workspace.config.get("server_timeout")
        versions = self.session.server_versions
        if timeout is None:
            return ServerPool(self.workspace, versions=versions)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            from sleuth.errors import InvalidPath

            raise InvalidPath(
                f"[tool.sleuth] server_timeout must be a positive number of seconds, got {timeout!r}"
            )
        return ServerPool(self.workspace, timeout=float(timeout), versions=versions)

    def _prepare(self, req: SearchRequest) -> Prepared:
        """Prepare a search; a reference as ``path`` is resolved to its exact ranges first."""
        engines = self._engine_state(req)
        if looks_like_ref(req.path):
            sel = self._resolver.resolve(req.path)
            ranges = [(r.path, r.start_byte, r.end_byte, r.stamp) for r in sel.ranges]
            engines.index = None
            return prepare(self.workspace, req, engines, ranges)
        return prepare(self.workspace, req, engines)

    def _complete(self, row: ResultRow) -> ResultRow:
        return self._pager.complete(row, self._prepare(request_of(row)))

    def _rerun(self, req: SearchRequest) -> ResultRow:
        return self._pager.run_all(self._prepare(req))

    @property
    def root(self) -> str:
        return str(self.workspace.root)

    @property
    def index(self) -> IndexKeeper:
        """The trigram index keeper (loaded from ``.sleuth/`` lazily)."""
        if self._index is None:
            from sleuth.query.index import IndexKeeper

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
        selector: str | None = None,
        strictness: str | None = None,
        depth: int | None = None,
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
            selector=selector,
            strictness=strictness,
            depth=depth,
        )
        if req.cursor is not None:
            row, offset = self._pager.resolve_cursor(req)
            prepared = None
            if self._pager.needs_scan(row, offset, req.limit):
                prepared = self._prepare(replace(req, cursor=None))
            result = self._pager.next_page(row, offset, req.limit, prepared)
            result.query = req.query
            return result
        return self._pager.first_page(self._prepare(req))

    def read(
        self, target: str, *, offset: int | None = None, limit: int | None = None
    ) -> ReadResult:
        """The text a path (with a line window) or a reference selects; registers a RESULT#."""
        return self._views.read(target, offset, limit)

    def select(self, ref: str, items: Sequence[int]) -> ReadResult:
        """Register the matches ``items`` (their ``#n``) of result ``ref`` as a RESULT#."""
        return self._views.select(ref, items)

    # -- edits (SPEC §9): stamps checked first, all files or none -----------------------------

    def replace(self, ref: str, text: str) -> ReadResult:
        """Replace every range ``ref`` selects with ``text``."""
        return self._editor.replace(ref, text)

    def insert(
        self, ref: str, text: str, *, where: Literal["before", "after"] = "before"
    ) -> ReadResult:
        """Insert ``text`` before (or after) every range ``ref`` selects."""
        return self._editor.insert(ref, text, where)

    def delete(self, ref: str) -> ReadResult:
        """Delete every range ``ref`` selects (whole lines with their line breaks)."""
        return self._editor.delete(ref)

    def copy(self, ref: str, *, to: str) -> ReadResult:
        """Copy the selected text to ``to`` (a reference or ``PATH:LINE``)."""
        return self._editor.copy(ref, to)

    def move(self, ref: str, *, to: str) -> ReadResult:
        """Move the selected text to ``to`` (a reference or ``PATH:LINE``)."""
        return self._editor.move(ref, to)

    def undo(self, result: str) -> ReadResult:
        """Restore the bytes an edit replaced, while its files still hold what it wrote."""
        return self._editor.undo(result)

    def rename(self, ref: str, new_name: str | None = None, *, force: bool = False) -> ReadResult:
        """Native rename through the language server (SPEC §7); also ``rename("REF#NEW")``."""
        from sleuth.edit.rename import Renamer

        if self._engines.servers is None:
            self._engines.servers = self._servers()
        return Renamer(self.workspace, self._resolver, self._views, self._editor).rename(
            ref, new_name, self._engines.servers, force=force
        )

    def doctor(self) -> list[dict[str, Any]]:
        """Each language, its server, found or not, version, how to install it."""
        if self._engines.servers is None:
            self._engines.servers = self._servers()
        if self._engines.servers is None:
            return []
        status: list[dict[str, Any]] = self._engines.servers.status()
        return status

    def recovered(self) -> list[dict[str, Any]]:
        """Interrupted edits that recovery could not finish: per journal, its folder under
        ``.sleuth/recovered/`` and each file left as it was, with why (docs/SAFETY.md)."""
        from sleuth.edit.journal import recovered

        return recovered(self.workspace)

    def index_now(self) -> int:
        """Build or refresh the on-disk trigram index in the foreground (``sleuth index``)."""
        files = self.workspace.list_files().files
        return self.index.build_now(files)

    def close(self) -> None:
        if self._engines.servers is not None:
            self._engines.servers.close()
            self._engines.servers = None
        if self._engines.graph is not None:
            self._engines.graph.close()
            self._engines.graph = None
        self.workspace.close()
        self._registry.close()
        if self._own_session:
            self.session.close()

    def __enter__(self) -> Workbench:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
