"""``ast:`` scans in worker processes answer exactly what a serial scan answers.

Also: each file is parsed once per request (counting past a page, the snapshot after it and
later pages reuse its matches), a large tree's structural count stops at its budget, and a
paged result stores ahead so later pages need no new scan.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, cast

import pytest

import sleuth.query.ast_mode as ast_mode
import sleuth.query.scan as scan
from sleuth.api import Workbench
from sleuth.ast_search import MatchPool, compile_pattern, find_raw
from sleuth.query.ast_memo import AstMemos
from sleuth.query.scan import make_matches
from sleuth.service.search import Searches
from sleuth.service.session import Session
from sleuth.tuning import Tuning
from sleuth.workspace import FileText
from tests.conftest import MakeWorkspace


def _tree(files: int = 40) -> dict[str, str | bytes]:
    out: dict[str, str | bytes] = {}
    for i in range(files):
        body = "".join(f"def f{i}_{j}(a, *b):\n    return g(a, {j})\n\n" for j in range(i % 4))
        out[f"pkg/m{i:03}.py"] = f"import os\n\n{body}class C{i}:\n    def m(self):\n        pass\n"
    out["pkg/empty.py"] = "x = 1\n"
    out["notes.txt"] = "def f(a): pass\n"
    return out


def _session(pool: Any, **knobs: Any) -> Session:
    """A session whose ast worker pool is ``pool`` (None: serial scans), tuned by ``knobs``."""
    session = Session(replace(Tuning(), **knobs))
    session.match_pool = lambda: pool  # type: ignore[method-assign]
    return session


def _walk(
    root: Path, query: str, limit: int, fresh: str = "none", session: Session | None = None
) -> list[list[dict[str, Any]]]:
    """Every page of ``query`` (matches without their result-specific references); ``fresh``
    is an exclude glob matching nothing, so the search is not the registered one."""
    wb = Workbench(root, build_index=False, session=session)
    pages: list[list[dict[str, Any]]] = []
    cursor = None
    while True:
        page = wb.search(
            query, limit=limit, cursor=cursor, exclude=[fresh], max_bytes=None
        ).to_json()
        pages.append(
            [
                {
                    **m,
                    "ref": None,
                    "captures": {
                        k: (c["text"], c["nodes"]) for k, c in (m["captures"] or {}).items()
                    },
                }
                for m in page["matches"]
            ]
        )
        cursor = page["next_cursor"]
        if cursor is None:
            return pages


class _SpyPool:
    """The real pool, counting batches."""

    def __init__(self, pool: MatchPool) -> None:
        self.pool = pool
        self.batches = 0

    def submit(self, args: Any, files: list[Any], records: Any = None) -> Any:
        self.batches += 1
        return self.pool.submit(args, files, records)


@pytest.mark.parametrize("query", ["ast:def $F($$$A): $$$B", "ast:g($A, $B)", "ast:return $X"])
@pytest.mark.parametrize("limit", [3, 500])
def test_parallel_pages_equal_serial_pages(
    make_workspace: MakeWorkspace, query: str, limit: int
) -> None:
    root = make_workspace(_tree())
    serial = _walk(root, query, limit, session=_session(None))

    spy = _SpyPool(MatchPool(2))
    session = _session(spy, ast_serial_files=1, ast_batch_files=3, ast_max_pending_files=5)
    try:
        parallel = _walk(root, query, limit, fresh="again", session=session)
    finally:
        spy.pool.shutdown()
    assert spy.batches > 0  # the workers did take part
    assert parallel == serial
    assert sum(len(p) for p in serial) > limit or len(serial) == 1


def test_workers_build_the_match_records_of_what_they_find(
    make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files answered by the workers come with their match records: this process builds
    none, and every page is the serial scan's."""
    root = make_workspace(_tree())
    query = "ast:def $F($$$A): $$$B"
    serial = _walk(root, query, 3, session=_session(None))
    built: list[str] = []
    real = scan.make_match

    def counting(ft: Any, *args: Any) -> Any:
        built.append(ft.path)  # in this process only: a worker appends to its own copy
        return real(ft, *args)

    monkeypatch.setattr(scan, "make_match", counting)
    pool = MatchPool(2)
    try:
        parallel = _walk(root, query, 3, fresh="workers", session=_session(pool, ast_parallel_at=1))
    finally:
        pool.shutdown()
    assert parallel == serial
    assert built == []


def test_a_large_plan_parses_nothing_in_process_and_pages_stay_equal(
    make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``ast_parallel_at`` files or more in the plan, the first file already goes to the
    workers (no serial warm-up); below it, the first ``ast_serial_files`` are parsed here."""
    root = make_workspace(_tree())
    serial = _walk(root, "ast:g($A, $B)", 4, session=_session(None))

    here: list[str] = []
    real_here = ast_mode.AstSource._here

    def spy_here(self: ast_mode.AstSource, ft: Any, pattern: Any) -> Any:
        here.append(ft.path)
        return real_here(self, ft, pattern)

    spy = _SpyPool(MatchPool(2))
    monkeypatch.setattr(ast_mode.AstSource, "_here", spy_here)
    try:
        for parallel_at, fresh in ((10, "large"), (10_000, "small")):
            here.clear()
            session = _session(spy, ast_parallel_at=parallel_at)
            assert _walk(root, "ast:g($A, $B)", 4, fresh=fresh, session=session) == serial
            serial_files = Tuning().ast_serial_files
            assert len(here) == (0 if parallel_at == 10 else serial_files), parallel_at
    finally:
        spy.pool.shutdown()
    assert spy.batches > 0


def test_workers_answer_what_the_process_finds() -> None:
    pattern = compile_pattern("def $F($$$A): $$$B", "python")
    datas = [b"def a(x, y):\n    return 1\n", b"x = 1\n", b"def b():\n    def c(): pass\n"]
    files = [FileText(f"m{i}.py", d, f"s{i}") for i, d in enumerate(datas)]
    records = partial(make_matches, context=1)
    pool = MatchPool(2)
    try:
        bare = pool.submit(pattern.args, files).result()
        answered = pool.submit(pattern.args, files, records).result()
    finally:
        pool.shutdown()
    found = [find_raw(pattern, d) for d in datas]
    assert bare == [(f, None) for f in found]
    assert [a[0] for a in answered] == found
    assert [len(a[0]) for a in answered] == [1, 0, 2]
    assert answered[0][0][0][2]["A"] == (2, 6, 10)  # (named nodes, start, end) of "x, y"
    # the records built in a worker are those this process builds (none for no match)
    assert [a[1] for a in answered] == [
        make_matches(ft, f, 1) if f else None for ft, f in zip(files, found, strict=True)
    ]


def test_each_file_is_parsed_once_per_request(
    make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_workspace(_tree())
    parsed: list[int] = []
    real = ast_mode.find_raw

    def counting(pattern: Any, data: bytes, tree: Any = None) -> Any:
        parsed.append(len(data))
        return real(pattern, data, tree)

    monkeypatch.setattr(ast_mode, "find_raw", counting)
    # a page, the count, the snapshot, the later pages
    pages = _walk(root, "ast:def $F($$$A): $$$B", 2, session=_session(None))
    with_def = [p for p, text in _tree().items() if p.endswith(".py") and "def" in str(text)]
    assert len(parsed) == len(with_def) == 40  # pkg/empty.py is never parsed (no "def")
    assert sum(len(p) for p in pages) == sum(i % 4 for i in range(40)) + 40


def test_a_large_tree_counts_structural_matches_within_a_budget(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace(_tree())
    small = Workbench(root, build_index=False).search("ast:return $X", limit=2).to_json()
    assert small["total"] == sum(i % 4 for i in range(40))  # a small tree: exact

    # as if the tree (41 .py) were large, with no time to count
    tuning = replace(Tuning(), small_tree_files=30, count_budget_s=-1.0)
    wb = Workbench(root, build_index=False, tuning=tuning)
    large = wb.search("ast:return $X", limit=2, exclude=["x"]).to_json()
    assert large["total"] is None and 3 <= large["total_at_least"] < small["total"]
    # text too: past the page of a large tree only the budget counts (there is none here)
    exact = Workbench(root, build_index=False).search("return", limit=2).to_json()["total"]
    tuned = Workbench(root, build_index=False, tuning=tuning)
    text = tuned.search("return", limit=2, exclude=["x"]).to_json()  # not the stored result
    assert text["total"] is None and 2 <= text["total_at_least"] < exact


def test_later_pages_are_stored_ahead(
    make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_workspace(_tree())
    # page by page, nothing counted past a page
    tuning = replace(Tuning(), snapshot_max=0, small_tree_files=0, count_budget_s=-1.0)
    wb = Workbench(root, build_index=False, tuning=tuning)
    scans: list[str] = []
    real = Searches._prepare

    def prepare(self: Searches, req: Any) -> Any:
        scans.append(req.query)
        return real(self, req)

    monkeypatch.setattr(Searches, "_prepare", prepare)
    numbers: list[int] = []
    cursor = None
    pages = 0
    while True:
        page = wb.search("ast:return $X", limit=2, cursor=cursor).to_json()
        numbers += [m["n"] for m in page["matches"]]
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            break
    total = sum(i % 4 for i in range(40))
    assert numbers == list(range(1, total + 1))
    assert pages == (total + 1) // 2
    assert len(scans) < pages // 2  # storing ahead doubles: few pages scan at all


class _EagerPool:
    """Answers each batch at once in this process: every batch has run before a page stops."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def submit(self, args: Any, files: list[Any], records: Any = None) -> Any:
        from concurrent.futures import Future

        from sleuth.ast_search.workers import _find_batch

        self.sent += [ft.data for ft in files]
        future: Future[Any] = Future()
        future.set_running_or_notify_cancel()
        future.set_result(_find_batch(args, files, records))
        return future


def test_batches_run_past_a_page_are_not_parsed_again() -> None:
    pattern = compile_pattern("def $F($$$A): $$$B", "python")
    files = [
        FileText(f"m{i:02}.py", f"def f{i}(a):\n    return {i}\n".encode(), "s") for i in range(20)
    ]
    pool = _EagerPool()
    tuning = replace(Tuning(), ast_serial_files=1, ast_batch_files=8)
    memos = AstMemos()  # the session's: shared by the request's scans

    def source() -> ast_mode.AstSource:
        return ast_mode.AstSource(
            {"python": pattern}, None, "request", tuning=tuning, pool=lambda: pool, memos=memos
        )

    stream = source().find_in_files((ft, None) for ft in files)
    first = [next(stream) for _ in range(3)]  # a page stops here, its batch already answered
    stream.close()
    again = source()  # the next page's scan
    rest = list(again.find_in_files((ft, None) for ft in files[3:]))
    assert [ft.path for ft, _, _ in first + rest] == [ft.path for ft in files]
    assert [found[0][:2] for _, _, found in first + rest] == [(0, len(ft.data) - 1) for ft in files]
    assert len(pool.sent) == len(files) - 1  # all but the first (parsed in process), once each


def test_the_records_of_a_file_answered_twice_are_counted_once() -> None:
    # the memo's bound on worker-built records held a file's records twice in its count when
    # a second answer replaced the first, so later files' records were dropped early
    from sleuth.model import Match
    from sleuth.query.ast_memo import FileMemo
    from sleuth.workspace import FileText

    memo = FileMemo(max_found=100, max_records=5)
    ft = FileText("a.py", b"x = 1\n", "s1")
    records = [cast(Match, object()), cast(Match, object())]
    memo.put(ft, [], records)
    memo.put(ft, [], records)
    assert memo.records_size == 2
    other = FileText("b.py", b"y = 2\n", "s2")
    memo.put(other, [], [cast(Match, object())])
    assert memo.take_records(other, 1) is not None and memo.take_records(ft, 2) == records
    assert memo.records_size == 0
