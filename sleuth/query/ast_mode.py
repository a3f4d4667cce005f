"""``ast:`` queries as a structured span source (docs/query.md#ast-structural-patterns).

The pattern is compiled once per language present in the scope (or only ``lang``); files of
other languages are not read. A file is parsed only when it contains the pattern's literal
tokens (checked on its bytes first), and in long-running faces its tree comes from a bounded
``TreeCache`` that reparses incrementally after a change.

Before anything is compiled, the pattern's size times the number of languages it would be
compiled for is held to ``MAX_COMPILE_CHARS``: each compilation is linear in the pattern's size,
but a long pattern that does not parse costs several parses in each language of a polyglot tree.

A one-shot process (no tree cache) with many files to parse hands them, in batches, to worker
processes (``ast_search.workers``: tree-sitter holds the GIL while parsing) and takes the
answers back in file order, so results, pages and resume keys are those of a serial scan.
The matches of each file are memoised per request (bounded, ``ast_memo``), so counting past a
page, the snapshot after it and the next page's scan never parse a file twice; a batch already
running in a worker when a page stopped reading is not lost either: the next scan takes its
answers. The pool and the memos are the session's (lent through ``execute.Engines``), and the
thresholds are the workspace's ``Tuning``: nothing here outlives a call.

Workers also build the match records of what they find (``records``: ``scan.make_matches``
with the request's context), so the caller's process, which stores and pages every match,
does not build them too; a scan takes them with ``take_records``, and a file without them
(parsed here, or its records dropped by the memo's bound) has its records built on demand.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import TypeVar

from sleuth.ast_search import (
    MAX_PATTERN_CHARS,
    Answer,
    AstPattern,
    MatchPool,
    PatternArgs,
    Records,
    TreeCache,
    compile_pattern,
    find_raw,
    get_lang_spec,
    language_for_path,
)
from sleuth.errors import InvalidQuery, SleuthError
from sleuth.model import Match
from sleuth.prefilter import Literals, file_may_match, fold
from sleuth.query.ast_memo import AstMemos, FileMemo
from sleuth.query.request import SearchRequest
from sleuth.query.scan import Found
from sleuth.tuning import Tuning
from sleuth.workspace import FileEntry, FileText

__all__ = ["AstSource", "plan_ast", "MAX_COMPILE_CHARS"]

T = TypeVar("T")

MAX_COMPILE_CHARS = 64 * 1024
"""Pattern characters times candidate languages one request may compile: with the 16 languages
of the table, a pattern of up to 4 KiB is never refused, and with ``lang`` (one language) the
pattern cap (16 KiB, ``ast_search.MAX_PATTERN_CHARS``) is the only limit."""


@dataclass
class _Pending:
    """One file of the parallel stream, answered or waiting for its batch."""

    ft: FileText
    extra: object
    found: list[Found] | None
    pattern: AstPattern | None
    future: Future[list[Answer]] | None = None
    index: int = 0


class AstSource:
    """Runs one compiled pattern per language over the files of that language."""

    def __init__(
        self,
        patterns: dict[str, AstPattern],
        trees: TreeCache | None,
        memo_key: str | None = None,
        files: int = 0,
        *,
        tuning: Tuning | None = None,
        pool: Callable[[], MatchPool | None] | None = None,
        memos: AstMemos | None = None,
        records: Records | None = None,
    ) -> None:
        """``pool`` gives the session's worker pool (made on first use; None: scan serially)
        and ``memos`` its per-request memos (the matches of request ``memo_key`` found by an
        earlier scan); ``files`` is how many files the plan holds; ``records`` makes a file's
        match records in a worker."""
        self._patterns = patterns
        self._records = records
        self._trees = trees
        self._tuning = tuning = tuning if tuning is not None else Tuning()
        self._pool = pool
        self._serial = 0 if files >= tuning.ast_parallel_at else tuning.ast_serial_files
        only = next(iter(patterns.values())) if len(patterns) == 1 else None
        self._literals = only.literals if only is not None else None
        self._memo = (
            memos.get(memo_key)
            if memos is not None and memo_key is not None
            else FileMemo(tuning.ast_memo_found, tuning.ast_memo_records)
        )

    @property
    def literals(self) -> Literals | None:
        return self._literals

    @property
    def pattern_warnings(self) -> dict[str, str]:
        """What was recovered from a pattern that does not parse cleanly, per language whose
        reading recovered (docs/json.md#search)."""
        return {
            lang: warning
            for lang in sorted(self._patterns)
            if (warning := self._patterns[lang].warning)
        }

    @property
    def prefilter(self) -> bool:
        return True  # a bytes check is far cheaper than a parse

    @property
    def languages(self) -> list[str]:
        return sorted(self._patterns)

    def spans(self, data: bytes, start: int) -> list[tuple[int, int]]:
        raise NotImplementedError("ast patterns need the file's path: use find_in_file")

    def _lookup(self, ft: FileText) -> tuple[list[Found] | None, AstPattern | None]:
        """(matches, None) when known without parsing, else (None, the pattern to run)."""
        hit = self._memo.get(ft)
        if hit is not None:
            return hit, None
        lang = language_for_path(ft.path)
        pattern = self._patterns.get(lang) if lang else None
        if pattern is None:
            return [], None
        if (
            self._literals is None
            and pattern.literals
            and not file_may_match(pattern.literals, fold(ft.data))
        ):
            return [], None
        return None, pattern

    def _here(self, ft: FileText, pattern: AstPattern) -> list[Found]:
        """Parse and match ``ft`` in this process (through the tree cache when there is one)."""
        tree = None
        if self._trees is not None:
            tree = self._trees.get(ft.path, ft.stamp, ft.data, pattern.lang)
        found = find_raw(pattern, ft.data, tree)
        self._memo.put(ft, found)
        return found

    def _answer(
        self, ft: FileText, pattern: AstPattern, future: Future[list[Answer]], index: int
    ) -> list[Found]:
        """The matches of ``ft`` from its worker batch (parsed here if a worker died)."""
        try:
            found, records = future.result()[index]
        except BrokenProcessPool:
            return self._here(ft, pattern)
        self._memo.put(ft, found, records)
        return found

    def take_records(self, ft: FileText, count: int) -> list[Match] | None:
        """The records a worker built of ``ft``'s ``count`` matches, or None (then the caller
        builds them): handed out once."""
        return self._memo.take_records(ft, count) if self._memo.records else None

    def find_in_file(self, ft: FileText) -> list[Found]:
        found, pattern = self._lookup(ft)
        if found is not None:
            return found
        assert pattern is not None
        return self._here(ft, pattern)

    def find_in_files(
        self, items: Iterable[tuple[FileText, T]]
    ) -> Iterator[tuple[FileText, T, list[Found]]]:
        """``find_in_file`` of each item, in the items' order; after the first few parses (none
        when the plan holds ``Tuning.ast_parallel_at`` files), a one-shot process parses the
        rest in worker processes."""
        pool = self._pool() if self._trees is None and self._pool is not None else None
        it = iter(items)
        if pool is not None and self._serial == 0:
            yield from self._parallel(pool, it)
            return
        parsed = 0
        for ft, extra in it:
            found, pattern = self._lookup(ft)
            if found is None:
                assert pattern is not None
                running = self._memo.take_inflight(ft)
                found = self._answer(ft, pattern, *running) if running else self._here(ft, pattern)
                parsed += 1
            yield ft, extra, found
            if pool is not None and parsed >= self._serial:
                break
        else:
            return
        yield from self._parallel(pool, it)

    def _parallel(
        self, pool: MatchPool, it: Iterator[tuple[FileText, T]]
    ) -> Iterator[tuple[FileText, T, list[Found]]]:
        pending: deque[_Pending] = deque()
        batch: list[_Pending] = []
        state = {"bytes": 0, "pending_bytes": 0}
        batch_args: PatternArgs | None = None
        tuning = self._tuning
        batch_files, batch_bytes = tuning.ast_batch_files, tuning.ast_batch_bytes
        max_files, max_bytes = tuning.ast_max_pending_files, tuning.ast_max_pending_bytes

        def flush() -> None:
            if batch and batch_args is not None:
                future = pool.submit(batch_args, [p.ft for p in batch], self._records)
                for i, p in enumerate(batch):
                    p.future, p.index = future, i
                batch.clear()
                state["bytes"] = 0

        def take(p: _Pending) -> tuple[FileText, T, list[Found]]:
            state["pending_bytes"] -= len(p.ft.data)
            if p.found is None:
                if p.future is None:
                    flush()
                assert p.future is not None and p.pattern is not None
                p.found = self._answer(p.ft, p.pattern, p.future, p.index)
            return p.ft, p.extra, p.found  # type: ignore[return-value]

        def ready(p: _Pending) -> bool:
            return p.found is not None or (p.future is not None and p.future.done())

        try:
            for ft, extra in it:
                found, pattern = self._lookup(ft)
                entry = _Pending(ft, extra, found, pattern)
                pending.append(entry)
                state["pending_bytes"] += len(ft.data)
                running = self._memo.take_inflight(ft) if found is None else None
                if running is not None:
                    entry.future, entry.index = running
                elif found is None:
                    assert pattern is not None
                    if batch and batch_args != pattern.args:
                        flush()
                    batch.append(entry)
                    batch_args = pattern.args
                    state["bytes"] += len(ft.data)
                    if len(batch) >= batch_files or state["bytes"] >= batch_bytes:
                        flush()
                while pending and (
                    ready(pending[0])
                    or len(pending) > max_files
                    or state["pending_bytes"] > max_bytes
                ):
                    yield take(pending.popleft())
            flush()
            while pending:
                yield take(pending.popleft())
        finally:
            for p in pending:  # the consumer stopped early (a full page)
                if p.found is None and p.future is not None and not p.future.cancel():
                    self._memo.inflight[p.ft.path] = (p.ft.stamp, p.future, p.index)


def plan_ast(
    body: str,
    req: SearchRequest,
    files: Sequence[FileEntry],
    trees: TreeCache | None,
    *,
    tuning: Tuning | None = None,
    pool: Callable[[], MatchPool | None] | None = None,
    memos: AstMemos | None = None,
    records: Records | None = None,
) -> tuple[AstSource, list[FileEntry]]:
    """Compile ``body`` for ``req.lang`` or every language in ``files``; the files to parse
    (by an ``AstSource`` running under ``tuning``, with the session's ``pool`` and ``memos``;
    ``records`` makes match records in the workers).

    Without ``lang``, a language whose grammar cannot read the pattern is left out; only if it
    reads in none of them is the error raised (for the language with the most files). A
    language that reads it only by recovering from a parse error is searched too, as ast-grep
    searches each file with its own language's reading, and says so in ``pattern_warning``.
    """
    strictness = req.strictness or "smart"
    langs_of = [language_for_path(f.path) for f in files]
    if req.lang:
        langs = [get_lang_spec(req.lang).name]
    else:
        counts = Counter(lang for lang in langs_of if lang)
        langs = [lang for lang, _ in counts.most_common()]
    _check_budget(body, langs)
    patterns: dict[str, AstPattern] = {}
    first_error: SleuthError | None = None
    for lang in langs:
        try:
            patterns[lang] = compile_pattern(
                body, lang, selector=req.selector, strictness=strictness
            )
        except SleuthError as exc:
            if req.lang:
                raise
            first_error = first_error or exc
    if not patterns and first_error is not None:
        raise first_error
    wanted = set(patterns)
    kept = [f for f, lang in zip(files, langs_of, strict=True) if lang in wanted]
    source = AstSource(
        patterns,
        trees,
        req.identity_json(),
        len(kept),
        tuning=tuning,
        pool=pool,
        memos=memos,
        records=records,
    )
    return source, kept


def _check_budget(body: str, langs: list[str]) -> None:
    """Refuse, before any parse, a pattern too long for the number of languages it would be
    compiled for (``MAX_COMPILE_CHARS``)."""
    cost = len(body) * len(langs)
    if cost <= MAX_COMPILE_CHARS:
        return
    most = MAX_COMPILE_CHARS // len(langs)
    hint = "set lang to the pattern's language, narrow the path, or shorten the pattern"
    raise InvalidQuery(
        f"the ast: pattern is {len(body)} characters long and would be compiled for "
        f"{len(langs)} languages ({', '.join(langs)}): {cost} characters, over the budget of "
        f"{MAX_COMPILE_CHARS} (pattern characters x languages, so at most {most} characters "
        f"here): {hint} (with lang, up to {MAX_PATTERN_CHARS} characters)",
        details={
            "length": len(body),
            "languages": langs,
            "max": MAX_COMPILE_CHARS,
            "position": 0,
            "hint": hint,
        },
    )
