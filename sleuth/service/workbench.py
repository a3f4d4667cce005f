"""``Workbench(root)``: one workspace and one method per verb (docs/faces.md#python-api).

A ``Workbench`` is the long-running form of sleuth: it keeps the workspace's content cache,
the trigram index (built in the background after the first search), the registry connection
and, with ``watch=True``, the file listing warm across calls (a file watcher invalidates it).
The CLI makes one per process (with the index loaded from ``.sleuth/`` when present, never
built); the MCP server keeps one for its lifetime.

Each verb method takes its request's fields (``sleuth.service.requests``), builds the request
(the one validation every face shares) and runs it: searches through ``Searches`` (the search
run), reads through ``Views``, edits through the ``Editor``, the one writer of files.
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, ParamSpec, TypeVar

from sleuth.errors import InvalidPath, InvalidQuery
from sleuth.model import OnProgress
from sleuth.query.execute import Engines
from sleuth.query.request import DEFAULT_MAX_BYTES, SearchRequest
from sleuth.resources.registry import Registry
from sleuth.resources.response import SearchResult
from sleuth.resources.views import ReadResult, Views
from sleuth.service.find import FindRequest, FindResult
from sleuth.service.finder import Finder, RecordingViews
from sleuth.service.search import Searches
from sleuth.service.session import Session
from sleuth.tuning import Tuning
from sleuth.workspace import Workspace
from sleuth.workspace.policy import bounded_seconds
from sleuth.workspace.state_folder import journal_pending

if TYPE_CHECKING:
    from sleuth.edit.operations import Editor
    from sleuth.query.index import IndexKeeper
    from sleuth.query.servers import LanguageServers

__all__ = ["Workbench"]

SERVER_TIMEOUT_MAX_S = 3600.0
"""The longest ``server_timeout`` a configuration may ask for: past an hour a hung server is
never noticed (docs/faces.md#configuration)."""
P = ParamSpec("P")
R = TypeVar("R")


def strict(verb: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A verb method whose arguments follow the rule of every face (docs/faces.md#strict-
    arguments): aliases are renamed to the request's fields, and an unknown or missing
    argument is ``invalid_query`` naming the valid ones, never a ``TypeError`` (unless the
    request collects unknown names as a warning: ``Request.UNKNOWN_FIELD``)."""

    def wrap(method: Callable[P, R]) -> Callable[P, R]:
        signature = inspect.signature(method)
        names = tuple(name for name in signature.parameters if name != "self")

        @functools.wraps(method)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            if any(key not in signature.parameters for key in kwargs):
                from sleuth.service.verbs import VERBS

                request = VERBS[verb].request_type()
                kwargs = request.canonical(kwargs, names, lenient=True)
            try:
                signature.bind(*args, **kwargs)
            except TypeError as exc:
                raise InvalidQuery(
                    f"{verb}: {exc}; its arguments are {', '.join(names)}",
                    details={"valid": list(names)},
                ) from None
            bench = args[0]
            if isinstance(bench, Workbench):
                # a deny glob added since the last call cloaks in this one (docs/SAFETY.md)
                bench.workspace.refresh_config()
                bench.recover_crashed_edit()
            return method(*args, **kwargs)

        return call

    return wrap


class Workbench:
    """One workspace, searched through every engine, answering the JSON shapes of docs/json.md."""

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
        self._use_servers = servers
        engines = Engines(
            make_servers=self._servers,
            one_shot=one_shot,
            match_pool=self.session.match_pool,
            ast_memos=lambda: self.session.ast_memos,
            digests=self.session.listing_digests,
            collector=self.session.collector,
        )
        self._searches = Searches(self.workspace, self._registry, engines, build_index=build_index)
        self._resolver = self._searches.resolver
        views = RecordingViews(self.workspace, self._registry, self._resolver)  # + frecency
        self._views: Views = views
        self._finder = Finder(self.workspace, self._searches, views.frecency)
        self._editor_: Editor | None = None
        self._release = self.session.hold(self._close_resources)
        self.recover_crashed_edit()

    def recover_crashed_edit(self) -> None:
        """Roll back an edit a killed process left half done (docs/SAFETY.md#the-journal-and-
        recovery), at the start and before every call: a long-running face would otherwise
        answer the torn files until its own next edit. One ``scandir`` of the (almost always
        empty) journal folder; a live writer's journal is left to it (``recover`` only tries
        the edit lock)."""
        if journal_pending(self.workspace.root):
            from sleuth.edit.journal import recover

            if recover(self.workspace):
                self.workspace.note_changed()  # files rolled back: read them again

    @property
    def _engines(self) -> Engines:
        """The warm engine state (index, trees, tags, language servers, graph)."""
        return self._searches.engines

    @property
    def _editor(self) -> Editor:
        if self._editor_ is None:
            from sleuth.edit.operations import Editor

            self._editor_ = Editor(self.workspace, self._resolver, self._views)
        return self._editor_

    def _servers(self) -> LanguageServers | None:
        if not self._use_servers:
            return None
        from sleuth.lsp_bridge import ServerPool

        timeout = self.workspace.config.get("server_timeout")
        versions = self.session.server_versions
        if timeout is None:
            return ServerPool(self.workspace, versions=versions)
        try:
            seconds = bounded_seconds(timeout, "[tool.sleuth] server_timeout", SERVER_TIMEOUT_MAX_S)
        except ValueError as exc:
            raise InvalidPath(str(exc)) from None
        return ServerPool(self.workspace, timeout=seconds, versions=versions)

    def _server_pool(self) -> LanguageServers | None:
        engines = self._engines
        if engines.servers is None:
            engines.servers = self._servers()
        return engines.servers

    @property
    def root(self) -> str:
        return str(self.workspace.root)

    @property
    def index(self) -> IndexKeeper:
        """The trigram index keeper (loaded from ``.sleuth/`` lazily)."""
        return self._searches.index

    # -- the verbs: each takes its request's fields ------------------------------------------

    @strict("search")
    def search(
        self,
        query: str,
        *,
        path: str = "/",
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        limit: int | None = None,
        cursor: str | None = None,
        context: int = 1,
        lang: str | None = None,
        navigation: str | None = None,
        case_sensitive: bool = True,
        selector: str | None = None,
        strictness: str | None = None,
        depth: int | None = None,
        threshold: float | None = None,
        max_bytes: int | None = DEFAULT_MAX_BYTES,
        output: str = "lines",
    ) -> SearchResult:
        """Search the workspace (docs/query.md); one page of matches with references."""
        options = dict(locals())  # the parameters are the request's fields (tests/service)
        del options["self"]
        return self._searches.search(SearchRequest.build(**options))

    @strict("read")
    def read(
        self,
        target: str,
        *,
        offset: int | None = None,
        limit: int | None = None,
        max_bytes: int | None = DEFAULT_MAX_BYTES,
    ) -> ReadResult:
        """The text a path (with a line window) or a reference selects; registers a RESULT#."""
        from sleuth.service import requests as rq  # late: a search never needs it

        req = rq.ReadRequest.build(target, offset=offset, limit=limit, max_bytes=max_bytes)
        return self._views.read(req.target, req.offset, req.limit, req.max_bytes)

    @strict("select")
    def select(self, ref: str, items: Sequence[int]) -> ReadResult:
        """Register the matches ``items`` (their ``#n``) of result ``ref`` as a RESULT#."""
        from sleuth.service import requests as rq  # late: a search never needs it

        req = rq.SelectRequest.build(ref, items)
        return self._views.select(req.ref, req.items)

    @strict("find")
    def find(
        self,
        query: str,
        *,
        mode: Literal["files", "grep"] = "files",
        grep_mode: Literal["plain_text", "regex", "fuzzy"] = "plain_text",
        case_sensitive: bool = False,
        context_lines: int = 0,
        max_results: int = 50,
        offset: int = 0,
        path: str | None = None,
        ext: str | None = None,
        unrecognized: Sequence[str] = (),
    ) -> FindResult:
        """The harness search tool (docs/faces.md#find): fuzzy paths ranked with frecency, or
        grep; an unknown keyword is answered as a warning, not refused."""
        options = dict(locals())  # the parameters are the request's fields (tests/service)
        del options["self"]
        return self._finder.find(FindRequest.build(**options))

    # -- edits (docs/edits.md): stamps checked first, all files or none ---------------------

    @strict("replace")
    def replace(self, ref: str, text: str) -> ReadResult:
        """Replace every range ``ref`` selects with ``text``."""
        from sleuth.service import edit_requests as rq  # late: a search never needs it

        req = rq.ReplaceRequest.build(ref, text)
        return self._editor.replace(req.ref, req.text)

    @strict("insert")
    def insert(
        self, ref: str, text: str, *, where: Literal["before", "after"] = "before"
    ) -> ReadResult:
        """Insert ``text`` before (or after) every range ``ref`` selects."""
        from sleuth.service import edit_requests as rq  # late: a search never needs it

        req = rq.InsertRequest.build(ref, text, where=where)
        return self._editor.insert(req.ref, req.text, req.where)

    @strict("delete")
    def delete(self, ref: str) -> ReadResult:
        """Delete every range ``ref`` selects (whole lines with their line breaks)."""
        from sleuth.service import edit_requests as rq  # late: a search never needs it

        return self._editor.delete(rq.DeleteRequest.build(ref).ref)

    @strict("copy")
    def copy(self, ref: str, *, to: str) -> ReadResult:
        """Copy the selected text to ``to`` (a reference or ``PATH:LINE``)."""
        from sleuth.service import edit_requests as rq  # late: a search never needs it

        req = rq.CopyRequest.build(ref, to=to)
        return self._editor.copy(req.ref, req.to)

    @strict("move")
    def move(self, ref: str, *, to: str) -> ReadResult:
        """Move the selected text to ``to`` (a reference or ``PATH:LINE``)."""
        from sleuth.service import edit_requests as rq  # late: a search never needs it

        req = rq.MoveRequest.build(ref, to=to)
        return self._editor.move(req.ref, req.to)

    @strict("undo")
    def undo(self, result: str) -> ReadResult:
        """Restore the bytes an edit replaced, while its files still hold what it wrote."""
        from sleuth.service import edit_requests as rq  # late: a search never needs it

        return self._editor.undo(rq.UndoRequest.build(result).result)

    @strict("rename")
    def rename(self, ref: str, new_name: str | None = None, *, force: bool = False) -> ReadResult:
        """Native rename through the language server (docs/edits.md#rename); also
        ``rename("REF#NEW")``."""
        from sleuth.edit.rename import Renamer
        from sleuth.service import requests as rq  # late: a search never needs it

        req = rq.RenameRequest.build(ref, new_name, force=force)
        assert req.new_name is not None  # a built request has split REF#NEW_NAME
        return Renamer(self.workspace, self._resolver, self._views, self._editor).rename(
            req.ref, req.new_name, self._server_pool(), force=req.force
        )

    def report_to(self, sink: OnProgress | None) -> None:
        """Where the engines report a long step of the calls to come (a graph build, a
        language server starting, an index build); None: nowhere (docs/faces.md#progress)."""
        self.workspace.progress = sink

    def catch_up(self) -> bool:
        """Wait until the file watcher has seen every change made so far, or drop what it kept
        (``Workspace.catch_up``); a resident face asks before each call."""
        return self.workspace.catch_up()

    def warm_servers(self) -> None:
        """Start the language servers of the workspace's languages in the background (the MCP
        server does at start; ``[tool.sleuth] warm_servers = false`` turns it off)."""
        if self.workspace.config.get("warm_servers", True) is False:
            return
        pool = self._server_pool()
        if pool is not None:
            pool.warm(f.path for f in self.workspace.list_files().files)

    def doctor(self) -> list[dict[str, Any]]:
        """Each language, its server, found or not, version, how to install it."""
        pool = self._server_pool()
        return [] if pool is None else pool.status()

    def recovered(self) -> list[dict[str, Any]]:
        """Interrupted edits that recovery could not finish: per journal, its folder under
        ``.sleuth/recovered/`` and each file left as it was, with why (docs/SAFETY.md)."""
        from sleuth.edit.journal import recovered

        return recovered(self.workspace)

    def index_now(self, on_progress: Callable[[int, int], None] | None = None) -> int:
        """Build or refresh the on-disk trigram index in the foreground (``sleuth index``);
        ``on_progress(done_files, total_files)`` follows it, else the workspace's progress
        (docs/faces.md#progress)."""
        files = self.workspace.list_files().files
        if on_progress is None:
            on_progress = self.workspace.reporter("building the trigram index")
        return self.index.build_now(files, on_progress)

    def _close_resources(self) -> None:
        self._searches.close()
        self._finder.close()
        self.workspace.close()
        self._registry.close()

    def close(self) -> None:
        """Close the language servers, the watcher and the registry (and the session, if this
        workbench made it)."""
        self._release()
        self._close_resources()
        if self._own_session:
            self.session.close()

    def __enter__(self) -> Workbench:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
