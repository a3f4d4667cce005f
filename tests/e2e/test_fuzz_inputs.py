"""Hostile input through every face (issue 15, "Must show" 4; docs/errors.md): every call
answers a normal result or an error carrying an error code other than ``internal``, in time.

What runs, over the tiny workspace of ``fuzz_helpers.build_fuzz_workspace`` (Python, Rust, Go,
TypeScript, Markdown with RTL/emoji/combining text, CRLF, binary and undecodable files, a denied
folder, two FIFOs, a symlink to a file outside, one to a file inside, a symlinked folder):

* **Python API, no language servers**: ``API_QUERIES`` seeded random queries (every mode prefix,
  an unknown ``foo:``, Boolean syntax, invalid and non-linear regexes, ``a{99999}``, ast
  patterns, huge strings up to 1 MB, NULs, control characters, lone surrogates, wrong option
  types and values, cursor garbage, hostile paths); ``API_FORGED`` forged references through
  every verb (``read``, ``select``, ``replace``, ``insert``, ``delete``, ``copy``, ``move``,
  ``undo``, ``rename``, and as a ``search`` path); then ``STALE_CYCLES`` cycles of real
  references (single, ``:all``, capture, ``RESULT#`` of a read and of an edit) used through
  every verb after their file was changed, rewritten with the same size and mtime, deleted,
  replaced by a FIFO, by a symlink to outside, by a folder or by binary bytes. A single-match
  reference whose file changed must be refused, and a refused edit writes nothing.
* **Python API with language servers**: ``SYMBOL_CALLS`` ``symbols:`` queries (with and
  without ``navigation``) and renames through forged and real references.
* **MCP, official client**: ``MCP_QUERIES`` queries and ``MCP_FORGED`` reference calls (no
  lone surrogates: the client's JSON writer refuses them and drops the connection), plus
  unknown argument names, which must be ``invalid_query`` naming them (docs/errors.md).
* **MCP, raw JSON-RPC lines**: lone surrogates (``\\udXXX`` escapes, valid JSON) in every
  string argument of every tool; each request must be answered.
* **CLI**: a few lone surrogates in argv (what undecodable bytes in a shell argument become).

Every call has a hang guard: none may take over ``HANG_GUARD_S`` (60 s).
"""

from __future__ import annotations

import json
import os
import queue
import random
import stat
import threading
import time
import traceback
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sleuth.api import Workbench
from sleuth.errors import SleuthError
from tests.e2e.conftest import SEARCH_KEYS, mcp_session, run_cli
from tests.e2e.fuzz_helpers import (
    ANSWER_CODES,
    AST,
    BOOLEAN,
    GLOBS,
    HANG_GUARD_S,
    MUTABLE,
    MUTABLE_TEXT,
    PATHS,
    PREFIXES,
    REGEX,
    SURROGATES,
    UNICODE,
    WORDS,
    Outcome,
    QueryFuzzer,
    RawMcp,
    build_fuzz_workspace,
    call_summary,
    mcp_call,
    raw_answer_code,
    restore_workspace,
)

API_QUERIES = 10_000
API_FORGED = 5_000
STALE_CYCLES = 56  # 8 of each mutation
SYMBOL_CALLS = 150
MCP_QUERIES = 700
MCP_FORGED = 300  # with the queries: 1,000 calls through the official client
HYPOTHESIS_EXAMPLES = 300
RAW_FUZZED = 100
SEED = 15_004
BATCH = 50  # queries generated (and real references fed back) per batch
READ_KEYS = {"result", "source", "refreshed", "complete", "ranges"}
EDIT_VERBS = {"replace", "insert", "delete", "copy", "move", "undo", "rename"}
ABANDON_S = 60.0
"""A call still running after this is reported as hung and the run stops there."""


@pytest.fixture
def fuzz_root(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    build_fuzz_workspace(root, tmp_path / "outside.py")
    return root


# --- running API calls with a hang guard -----------------------------------------------------


@dataclass
class ApiOutcome:
    kind: str  # ok | error | crash
    elapsed: float
    code: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    detail: str = ""


class Hung(Exception):
    pass


class ApiRunner:
    """One ``Workbench``, owned by a worker thread, so a call that hangs can be reported
    instead of hanging the test (the engine's SQLite state is bound to its thread)."""

    def __init__(self, root: Path, **options: Any) -> None:
        self._jobs: queue.Queue[tuple[str, dict[str, object]] | None] = queue.Queue()
        self._done: queue.Queue[ApiOutcome] = queue.Queue()
        self._thread = threading.Thread(target=self._loop, args=(root, options), daemon=True)
        self._thread.start()
        ready = self._done.get(timeout=ABANDON_S)
        assert ready.kind == "ok", ready.detail

    def _loop(self, root: Path, options: dict[str, Any]) -> None:
        try:
            wb = Workbench(root, **options)
        except BaseException:
            self._done.put(ApiOutcome("crash", 0.0, detail=traceback.format_exc()))
            return
        self._done.put(ApiOutcome("ok", 0.0))
        while (job := self._jobs.get()) is not None:
            verb, arguments = job
            self._done.put(_run(wb, verb, arguments))
        wb.close()

    def call(self, verb: str, arguments: dict[str, object]) -> ApiOutcome:
        self._jobs.put((verb, arguments))
        try:
            return self._done.get(timeout=ABANDON_S)
        except queue.Empty:
            raise Hung(call_summary(verb, (), arguments)) from None

    def call_many(self, calls: list[tuple[str, dict[str, object]]]) -> list[ApiOutcome]:
        """Run ``calls`` in order without a round trip between them; each still has its
        own answer, time and hang report."""
        for verb, arguments in calls:
            self._jobs.put((verb, dict(arguments)))
        outcomes = []
        for verb, arguments in calls:
            try:
                outcomes.append(self._done.get(timeout=ABANDON_S))
            except queue.Empty:
                raise Hung(call_summary(verb, (), arguments)) from None
        return outcomes

    def close(self) -> None:
        self._jobs.put(None)
        self._thread.join(timeout=ABANDON_S)


def _run(wb: Workbench, verb: str, arguments: dict[str, object]) -> ApiOutcome:
    started = time.perf_counter()
    try:
        if verb == "search":
            query = arguments.pop("query")
            value: Any = wb.search(query, **arguments)  # type: ignore[arg-type]
        else:
            value = getattr(wb, verb)(**arguments)
        data = value.to_json()
        json.dumps(data)  # the answer must serialise (lone surrogates are escaped)
    except SleuthError as exc:
        elapsed = time.perf_counter() - started
        try:
            payload = exc.to_json()
            json.dumps(payload)
        except Exception:
            return ApiOutcome("crash", elapsed, detail=traceback.format_exc())
        if payload["error"]["code"] != exc.code or not exc.message:
            return ApiOutcome("crash", elapsed, detail=f"malformed error {payload!r}")
        return ApiOutcome("error", elapsed, code=exc.code, detail=exc.message[:300])
    except Exception:
        return ApiOutcome("crash", time.perf_counter() - started, detail=traceback.format_exc())
    return ApiOutcome("ok", time.perf_counter() - started, data=data)


# --- the oracle -------------------------------------------------------------------------------


@dataclass
class Tally:
    """What a run saw; ``failures`` are the calls that broke the contract."""

    calls: int = 0
    ok: int = 0
    codes: dict[str, int] = field(default_factory=dict)
    slowest: float = 0.0
    slowest_call: str = ""
    failures: list[str] = field(default_factory=list)
    failed_calls: int = 0

    def fail(self, summary: str, why: str) -> None:
        self.failed_calls += 1
        if len(self.failures) < 40:
            self.failures.append(f"{summary}\n    -> {why}")

    def report(self, label: str) -> str:
        return (
            f"{label}: {self.calls} calls, {self.ok} ok, errors {dict(sorted(self.codes.items()))}, "
            f"slowest {self.slowest:.2f} s ({self.slowest_call}), {self.failed_calls} failed"
        )


def _shape_problem(verb: str, data: Mapping[str, Any]) -> str | None:
    if verb == "search":
        missing = SEARCH_KEYS - set(data)
        if missing:
            return f"search answer lacks {sorted(missing)}"
        if not isinstance(data["matches"], list) or len(data["matches"]) > 500:
            return "matches is not a list of at most 500"
        return None
    missing = READ_KEYS - set(data)
    if missing:
        return f"{verb} answer lacks {sorted(missing)}"
    if verb in EDIT_VERBS and not isinstance(data.get("changed"), list):
        return f"{verb} answer has no changed list"
    return None


def check_api(tally: Tally, verb: str, outcome: ApiOutcome, summary: str) -> None:
    tally.calls += 1
    if outcome.elapsed > tally.slowest:
        tally.slowest, tally.slowest_call = outcome.elapsed, summary[:120]
    if outcome.elapsed > HANG_GUARD_S:
        tally.fail(summary, f"took {outcome.elapsed:.1f} s (over {HANG_GUARD_S} s)")
    if outcome.kind == "crash":
        tally.fail(summary, f"raised a non-SleuthError:\n{outcome.detail[-1500:]}")
    elif outcome.kind == "error":
        tally.codes[str(outcome.code)] = tally.codes.get(str(outcome.code), 0) + 1
        if outcome.code not in ANSWER_CODES:
            tally.fail(summary, f"error code {outcome.code}: {outcome.detail}")
    else:
        tally.ok += 1
        problem = _shape_problem(verb, outcome.data)
        if problem:
            tally.fail(summary, problem)


def _files(root: Path) -> dict[str, bytes | str]:
    """Every entry under root except .sleuth: bytes of regular files, the kind of others
    (FIFOs are never opened)."""
    out: dict[str, bytes | str] = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".sleuth"]
        for name in names + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            full = os.path.join(folder, name)
            rel = os.path.relpath(full, root)
            mode = os.lstat(full).st_mode
            out[rel] = Path(full).read_bytes() if stat.S_ISREG(mode) else stat.filemode(mode)
    return out


# --- API: queries and forged references -------------------------------------------------------


def _fail_report(*tallies: tuple[str, Tally]) -> str:
    lines = [tally.report(label) for label, tally in tallies]
    for label, tally in tallies:
        lines.extend(f"[{label}] {f}" for f in tally.failures[:15])
    return "\n".join(lines)


def test_fuzzed_queries_and_forged_references_through_the_api(fuzz_root: Path) -> None:
    rng = random.Random(SEED)
    fuzzer = QueryFuzzer(rng)
    queries, forged = Tally(), Tally()
    runner = ApiRunner(fuzz_root, servers=False)
    started = time.perf_counter()
    try:
        for _ in range(API_QUERIES // BATCH):
            batch: list[tuple[str, dict[str, object]]] = [
                ("search", {"query": fuzzer.query(), **fuzzer.options()}) for _ in range(BATCH)
            ]
            for (verb, arguments), outcome in zip(batch, runner.call_many(batch), strict=True):
                check_api(queries, verb, outcome, call_summary(verb, (), arguments))
                if outcome.kind == "ok":
                    fuzzer.feed(outcome.data)
        query_time = time.perf_counter() - started
        for i in range(API_FORGED):
            verb, arguments = fuzzer.ref_call(fuzzer.forged_ref())
            summary = call_summary(verb, (), arguments)
            outcome = runner.call(verb, dict(arguments))
            check_api(forged, verb, outcome, summary)
            if outcome.kind == "ok":
                fuzzer.feed(outcome.data)
            if i % 500 == 499:
                restore_workspace(fuzz_root)
    finally:
        runner.close()
    elapsed = time.perf_counter() - started
    report = _fail_report(("queries", queries), ("forged references", forged))
    print(f"{report}\nqueries {query_time:.1f} s, references {elapsed - query_time:.1f} s")
    assert queries.calls == API_QUERIES and forged.calls == API_FORGED
    assert queries.failed_calls == 0 and forged.failed_calls == 0, report
    # the run reached past argument checking: real answers, and references that resolved
    assert queries.ok > API_QUERIES // 5 and forged.ok > 0, report


# --- API: hypothesis, for minimal counterexamples -------------------------------------------

ANY_CHAR = st.characters(codec=None, categories=None, exclude_categories=())  # surrogates too
FRAGMENT = st.one_of(
    st.sampled_from(WORDS + BOOLEAN + REGEX + AST + GLOBS + UNICODE + SURROGATES),
    st.text(ANY_CHAR, max_size=12),
)
BODY = st.lists(FRAGMENT, max_size=6).map("".join)
LOOSE = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(ANY_CHAR, max_size=8)
)
REF = st.one_of(
    st.builds(
        "".join,
        st.tuples(
            st.sampled_from(("SEARCH#", "RESULT#", "search#", "")),
            st.text("0123456789abcdefABCDEF", min_size=0, max_size=10),
            st.sampled_from((":1:match", ":all:line", ":0:line", ":2:NAME", ":all", "", ":1:")),
            st.text(ANY_CHAR, max_size=6),
        ),
    ),
    st.text(ANY_CHAR, max_size=30),
)


def _assert_acceptable(verb: str, arguments: dict[str, object], outcome: ApiOutcome) -> None:
    tally = Tally()
    summary = call_summary(verb, (), arguments)
    check_api(tally, verb, outcome, summary)
    assert tally.failed_calls == 0, tally.failures[0]


def test_hypothesis_queries_and_references(fuzz_root: Path) -> None:
    """The same contract, generated by hypothesis so a failure shrinks to a minimal input."""
    runner = ApiRunner(fuzz_root, servers=False)
    examples = settings(
        max_examples=HYPOTHESIS_EXAMPLES,
        database=None,
        deadline=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )

    @examples
    @given(
        prefix=st.sampled_from(PREFIXES),
        body=BODY,
        path=st.one_of(st.sampled_from(PATHS), st.text(ANY_CHAR, max_size=10)),
        limit=LOOSE,
        context=LOOSE,
        cursor=st.one_of(st.none(), st.text(ANY_CHAR, max_size=20)),
    )
    def search(
        prefix: str, body: str, path: object, limit: object, context: object, cursor: object
    ) -> None:
        arguments: dict[str, object] = {
            "query": prefix + body,
            "path": path,
            "limit": limit,
            "context": context,
            "cursor": cursor,
        }
        _assert_acceptable("search", arguments, runner.call("search", dict(arguments)))

    @examples
    @given(
        ref=REF,
        verb=st.sampled_from(
            ("read", "select", "replace", "insert", "delete", "copy", "move", "undo")
        ),
        text=st.text(ANY_CHAR, max_size=10),
        extra=LOOSE,
    )
    def reference(ref: str, verb: str, text: str, extra: object) -> None:
        by_verb: dict[str, dict[str, object]] = {
            "read": {"target": ref, "offset": extra},
            "select": {"ref": ref, "items": [extra]},
            "replace": {"ref": ref, "text": text},
            "insert": {"ref": ref, "text": text, "where": extra},
            "delete": {"ref": ref},
            "copy": {"ref": ref, "to": text},
            "move": {"ref": ref, "to": extra},
            "undo": {"result": ref},
        }
        arguments = by_verb[verb]
        _assert_acceptable(verb, arguments, runner.call(verb, dict(arguments)))

    try:
        search()
        reference()
    finally:
        runner.close()


# --- API: real references after their file changed -------------------------------------------


MUTATIONS = ("prepend", "same-stat", "delete", "fifo", "symlink-out", "folder", "binary")


def _mutate(root: Path, how: str, outside: Path) -> None:
    path = root / MUTABLE
    if how == "prepend":
        path.write_bytes(b"# changed\n" + path.read_bytes())
    elif how == "same-stat":
        st = path.stat()
        data = path.read_bytes()
        path.write_bytes(data.replace(b"alpha", b"ALPHA").replace(b"beta", b"BETA"))
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    elif how == "delete":
        path.unlink()
    elif how == "fifo":
        path.unlink()
        os.mkfifo(path)
    elif how == "symlink-out":
        path.unlink()
        os.symlink(outside, path)
    elif how == "folder":
        path.unlink()
        path.mkdir()
        (path / "inner.py").write_text("beta = 1\n")
    else:
        path.write_bytes(b"\x00\x01beta\x00alpha\xff")


def _clear_mutable(root: Path) -> None:
    path = root / MUTABLE
    if path.is_dir() and not path.is_symlink():
        for child in path.iterdir():
            child.unlink()
        path.rmdir()
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.write_text(MUTABLE_TEXT)


@dataclass
class RealRef:
    ref: str
    single: bool  # single-match (or a RESULT#): must be refused once its file changed
    origin: str  # the answer it came from


def _real_refs(runner: ApiRunner, tally: Tally, rng: random.Random) -> Iterator[RealRef]:
    """References into MUTABLE from real answers: matches, :all, captures, RESULT#s."""
    searches: list[dict[str, object]] = [
        {"query": "beta", "path": MUTABLE},
        {"query": "regex:be+ta", "path": "src"},
        {"query": "ast:def $F($$$A): $$$B", "path": MUTABLE},
        {"query": "files:mut.py"},
    ]
    for arguments in searches:
        outcome = runner.call("search", dict(arguments))
        check_api(tally, "search", outcome, call_summary("search", (), arguments))
        if outcome.kind != "ok" or not outcome.data["matches"]:
            continue
        data = outcome.data
        origin = f"search {arguments['query']!r}"
        mine = [m for m in data["matches"] if m["path"] == MUTABLE]
        # a files: match names a file without reading it: it reads the file as it is now and
        # is never edited through (unsafe_selection), so it is not a stale single reference
        single = not str(arguments["query"]).startswith("files:")
        for match in rng.sample(mine, min(2, len(mine))):
            yield RealRef(match["ref"]["match"], single, origin)
            yield RealRef(match["ref"]["line"], single, origin)
            for name, capture in (match.get("captures") or {}).items():
                if capture.get("ref"):
                    yield RealRef(capture["ref"], True, f"{origin}, capture {name}")
        if mine:
            yield RealRef(data["all"]["match"], False, origin)
            yield RealRef(data["all"]["line"], False, origin)
            yield RealRef(data["result"], False, origin)
    read = runner.call("read", {"target": MUTABLE})
    if read.kind == "ok":
        yield RealRef(read.data["result"], True, f"read {MUTABLE}")


def test_real_references_after_their_file_changed(fuzz_root: Path, tmp_path: Path) -> None:
    rng = random.Random(SEED + 1)
    fuzzer = QueryFuzzer(rng)
    tally = Tally()
    refused_single = 0
    runner = ApiRunner(fuzz_root, servers=False)
    started = time.perf_counter()
    try:
        for cycle in range(STALE_CYCLES):
            _clear_mutable(fuzz_root)
            refs = list(_real_refs(runner, tally, rng))
            edit = runner.call("insert", {"ref": refs[0].ref, "text": "# note\n"})
            check_api(tally, "insert", edit, f"cycle {cycle}: insert through {refs[0].ref}")
            if edit.kind == "ok":
                refs = [r for r in refs if r.ref != refs[0].ref]  # gone stale by the insert
                refs.append(RealRef(edit.data["result"], True, "an insert"))
                refs.append(RealRef(edit.data["result"], True, "an insert"))  # used twice
            how = MUTATIONS[cycle % len(MUTATIONS)]
            _mutate(fuzz_root, how, tmp_path / "outside.py")
            for real in refs:
                verb, arguments = fuzzer.ref_call(real.ref)
                if verb == "undo" or rng.random() < 0.1:
                    verb, arguments = "undo", {"result": real.ref}
                summary = (
                    f"cycle {cycle}, after a {how} of {MUTABLE}, a reference from "
                    f"{real.origin}: {call_summary(verb, (), arguments)}"
                )
                before = _files(fuzz_root) if verb in EDIT_VERBS else {}
                try:
                    outcome = runner.call(verb, dict(arguments))
                except Hung:
                    pytest.fail(f"{summary}: no answer within {ABANDON_S:.0f} s (a hang)")
                check_api(tally, verb, outcome, summary)
                if outcome.kind == "ok" and real.single:
                    tally.fail(
                        summary,
                        "a reference into a changed file resolved "
                        f"(docs/references.md: stale_reference): {json.dumps(outcome.data)[:300]}",
                    )
                if outcome.kind == "ok" and verb in EDIT_VERBS and "files:" in real.origin:
                    tally.fail(summary, "an edit through a files: reference went through")
                if outcome.kind == "error":
                    refused_single += real.single
                    if verb in EDIT_VERBS and _files(fuzz_root) != before:
                        tally.fail(summary, f"refused ({outcome.code}) but wrote a file")
    finally:
        runner.close()
    report = tally.report("stale references")
    failures = "\n".join(tally.failures[:20])
    print(
        f"{report}; {refused_single} refusals of single references; "
        f"{time.perf_counter() - started:.1f} s"
    )
    assert tally.failed_calls == 0, f"{report}\n{failures}"
    assert refused_single > STALE_CYCLES, report


# --- API with language servers: symbols and rename --------------------------------------------


def test_fuzzed_symbols_and_renames_with_servers(fuzz_root: Path) -> None:
    rng = random.Random(SEED + 2)
    fuzzer = QueryFuzzer(rng)
    tally = Tally()
    runner = ApiRunner(fuzz_root)
    started = time.perf_counter()
    try:
        for i in range(SYMBOL_CALLS):
            if i % 3 == 2:
                ref = (
                    rng.choice(fuzzer.real_refs)
                    if fuzzer.real_refs and rng.random() < 0.6
                    else fuzzer.forged_ref()
                )
                inline = rng.random() < 0.3
                if inline:
                    ref += "#" + rng.choice(("fetch_user", "", "1bad", "a\x00b", "é"))
                arguments: dict[str, object] = {"ref": ref}
                if not inline or rng.random() < 0.5:
                    arguments["new_name"] = rng.choice(("fetch_user", "", "a b", None, "x" * 300))
                verb = "rename"
                if rng.random() < 0.3:
                    restore_workspace(fuzz_root)  # real references go stale
            else:
                verb = "search"
                arguments = {"query": fuzzer.symbols_query(), **fuzzer.options(lsp=True)}
            summary = call_summary(verb, (), arguments)
            outcome = runner.call(verb, dict(arguments))
            check_api(tally, verb, outcome, summary)
            if outcome.kind == "ok":
                fuzzer.feed(outcome.data)
    finally:
        runner.close()
    report = tally.report("symbols with servers")
    print(f"{report}; {time.perf_counter() - started:.1f} s")
    assert tally.failed_calls == 0, report + "\n" + "\n".join(tally.failures[:20])
    assert tally.ok > SYMBOL_CALLS // 4, report


# --- MCP through the official client ------------------------------------------------------------


def _check_mcp(tally: Tally, summary: str, outcome: Outcome) -> None:
    tally.calls += 1
    if outcome.elapsed > tally.slowest:
        tally.slowest, tally.slowest_call = outcome.elapsed, summary[:120]
    if outcome.kind == "error":
        tally.codes[str(outcome.code)] = tally.codes.get(str(outcome.code), 0) + 1
    elif outcome.kind == "ok":
        tally.ok += 1
    if not outcome.acceptable:
        tally.fail(
            summary,
            f"{outcome.kind} (code {outcome.code}) after {outcome.elapsed:.1f} s: "
            f"{outcome.text[:300]}",
        )


UNKNOWN_ARGUMENTS: tuple[tuple[str, dict[str, object], str], ...] = (
    ("search", {"query": "get_user", "bogus": 1}, "bogus"),
    ("search", {"query": "get_user", "max_results": 5}, "max_results"),
    ("search", {"query": "get_user", "Path": "src"}, "Path"),
    ("read", {"target": "src/app.py", "lines": 3}, "lines"),
    ("replace", {"ref": "SEARCH#00000000:1:match", "text": "x", "force": True}, "force"),
    ("select", {"ref": "SEARCH#00000000", "items": [1], "all": True}, "all"),
)


def test_fuzzed_calls_through_mcp(fuzz_root: Path) -> None:
    rng = random.Random(SEED + 3)
    fuzzer = QueryFuzzer(rng, python_values=False)
    queries, forged, unknown = Tally(), Tally(), Tally()
    started = time.perf_counter()

    async def go() -> None:
        async with mcp_session(fuzz_root) as session:
            for i in range(MCP_QUERIES):
                if i % 100 == 99:
                    arguments: dict[str, object] = {"query": fuzzer.symbols_query()}
                else:
                    arguments = {"query": fuzzer.query(), **fuzzer.options()}
                outcome = await mcp_call(session, "search", arguments)
                _check_mcp(queries, call_summary("search", (), arguments), outcome)
                if outcome.kind == "ok":
                    fuzzer.feed(outcome.data)
                if outcome.kind in ("closed", "hang"):
                    return
            for i in range(MCP_FORGED):
                verb, arguments = fuzzer.ref_call(fuzzer.forged_ref())
                outcome = await mcp_call(session, verb, arguments)
                _check_mcp(forged, call_summary(verb, (), arguments), outcome)
                if outcome.kind == "ok":
                    fuzzer.feed(outcome.data)
                if outcome.kind in ("closed", "hang"):
                    return
                if i % 100 == 99:
                    restore_workspace(fuzz_root)
            for tool, arguments, name in UNKNOWN_ARGUMENTS:
                outcome = await mcp_call(session, tool, arguments)
                summary = call_summary(tool, (), arguments)
                _check_mcp(unknown, summary, outcome)
                if outcome.code != "invalid_query" or name not in outcome.text:
                    unknown.fail(
                        summary,
                        f"an unknown argument must be invalid_query naming "
                        f"{name!r} (docs/errors.md), got {outcome.kind}: {outcome.text[:200]}",
                    )

    anyio.run(go)
    report = _fail_report(
        ("mcp queries", queries), ("mcp references", forged), ("mcp unknown arguments", unknown)
    )
    print(f"{report}\n{time.perf_counter() - started:.1f} s")
    assert queries.calls == MCP_QUERIES and forged.calls == MCP_FORGED, report
    assert queries.failed_calls == forged.failed_calls == unknown.failed_calls == 0, report
    assert queries.ok > MCP_QUERIES // 5, report


# --- lone surrogates: raw JSON-RPC and the CLI --------------------------------------------------

SURROGATE_CALLS: tuple[tuple[str, dict[str, object]], ...] = (
    ("search", {"query": "\ud800"}),
    ("search", {"query": "get_user\udcff"}),
    ("search", {"query": "regex:\udfff+"}),
    ("search", {"query": "ast:$A(\ud800)"}),
    ("search", {"query": "files:\udc80"}),
    ("search", {"query": "symbols:\ud83d"}),
    ("search", {"query": "graph:\ud800"}),
    ("search", {"query": "symbol:#\ud800"}),
    ("search", {"query": '"\ud800" OR get_user'}),
    ("search", {"query": "get_user", "path": "src/\udcff.py"}),
    ("search", {"query": "get_user", "include": ["*\ud800"]}),
    ("search", {"query": "get_user", "exclude": ["\udfff"]}),
    ("search", {"query": "get_user", "cursor": "\ud800"}),
    ("search", {"query": "ast:$A", "lang": "py\ud800"}),
    ("search", {"query": "ast:$A", "selector": "\ud800"}),
    ("search", {"query": "symbols:get_user", "navigation": "\ud800"}),
    ("read", {"target": "\ud800"}),
    ("read", {"target": "src/app.py\udcff"}),
    ("read", {"target": "SEARCH#\ud8001234:1:match"}),
    ("select", {"ref": "SEARCH#0000000\ud800", "items": [1]}),
    ("replace", {"ref": "SEARCH#00000000:1:match", "text": "\ud800"}),
    ("replace", {"ref": "\udcff", "text": "x"}),
    ("insert", {"ref": "SEARCH#00000000:1:line", "text": "a\udfffb", "where": "after"}),
    ("insert", {"ref": "SEARCH#00000000:1:line", "text": "x", "where": "\ud800"}),
    ("delete", {"ref": "RESULT#\ud800"}),
    ("copy", {"ref": "SEARCH#00000000:1:match", "to": "src/\ud800.py:1"}),
    ("move", {"ref": "\ud800", "to": "src/app.py:1"}),
    ("undo", {"result": "RESULT#0000\ud800"}),
    ("rename", {"ref": "SEARCH#00000000:1:match", "new_name": "get_\ud800"}),
    ("rename", {"ref": "SEARCH#00000000:1:match#\ud800"}),
)


def _jsonable(value: object) -> object:
    """``value`` with what JSON cannot carry (bytes) turned into text."""
    if isinstance(value, bytes):
        return value.decode("latin-1")
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def test_lone_surrogates_through_raw_json_rpc(fuzz_root: Path) -> None:
    """Every request is answered: a result, or a tool error carrying an error code other than
    ``internal`` — and the server still answers afterwards. First lone surrogates in every
    string argument of every tool, then ``RAW_FUZZED`` fuzzed calls with them allowed."""
    raw = RawMcp(fuzz_root, {k: v for k, v in os.environ.items() if k != "SLEUTH_DEBUG"})
    failures: list[str] = []
    try:
        # a real reference first, so the edits also meet real ids next to the surrogates
        raw.send_line(raw.call_line(1, "search", {"query": "get_user"}))
        first = raw.collect({1}, time.monotonic() + 30)
        assert 1 in first and raw_answer_code(first[1][1])[0] == "ok", first
        real = first[1][1]["result"]["structuredContent"]["matches"][0]["ref"]["match"]
        calls = list(SURROGATE_CALLS) + [
            ("replace", {"ref": real, "text": "\ud800"}),
            ("insert", {"ref": real, "text": "\udcff\n"}),
            ("search", {"query": "\ud800", "path": real}),
            ("copy", {"ref": real, "to": "\ud800:1"}),
        ]
        sent: dict[int, tuple[float, str]] = {}
        for ident, (tool, arguments) in enumerate(calls, start=10):
            sent[ident] = (time.monotonic(), call_summary(tool, (), arguments))
            raw.send_line(raw.call_line(ident, tool, arguments))
        answers = raw.collect(set(sent), time.monotonic() + HANG_GUARD_S)
        for ident, (at, summary) in sent.items():
            if ident not in answers:
                failures.append(f"{summary}: never answered")
                continue
            answered_at, message = answers[ident]
            kind, code = raw_answer_code(message)
            if kind == "protocol" or (kind == "error" and code not in ANSWER_CODES):
                failures.append(f"{summary}: {kind} {code} {json.dumps(message)[:300]}")
            if answered_at - at > HANG_GUARD_S:
                failures.append(f"{summary}: answered after {answered_at - at:.1f} s")
        fuzzer = QueryFuzzer(random.Random(SEED + 4))
        fuzzed = [
            ("search", {"query": fuzzer.query(), **fuzzer.options()})
            for _ in range(RAW_FUZZED // 2)
        ]
        fuzzed += [fuzzer.ref_call(fuzzer.forged_ref()) for _ in range(RAW_FUZZED // 2)]
        for start in range(0, len(fuzzed), 20):
            batch = {start + 100 + i: call for i, call in enumerate(fuzzed[start : start + 20])}
            times = {}
            for ident, (tool, arguments) in batch.items():
                times[ident] = time.monotonic()
                raw.send_line(
                    raw.call_line(ident, tool, {k: _jsonable(v) for k, v in arguments.items()})
                )
            answers = raw.collect(set(batch), time.monotonic() + HANG_GUARD_S)
            for ident, (tool, arguments) in batch.items():
                summary = call_summary(tool, (), arguments)
                if ident not in answers:
                    failures.append(f"{summary}: never answered")
                    continue
                kind, code = raw_answer_code(answers[ident][1])
                if kind == "protocol" or (kind == "error" and code not in ANSWER_CODES):
                    failures.append(
                        f"{summary}: {kind} {code} {json.dumps(answers[ident][1])[:300]}"
                    )
                if answers[ident][0] - times[ident] > HANG_GUARD_S:
                    failures.append(f"{summary}: answered after over {HANG_GUARD_S} s")
        raw.send_line(raw.call_line(999, "search", {"query": "get_user"}))
        last = raw.collect({999}, time.monotonic() + HANG_GUARD_S)
        if 999 not in last or raw_answer_code(last[999][1])[0] != "ok":
            failures.append("the server no longer answers a plain search")
    finally:
        raw.close()
    total = len(SURROGATE_CALLS) + 4 + RAW_FUZZED
    assert failures == [], f"{len(failures)} of {total} calls:\n" + "\n".join(failures)


CLI_SURROGATES: tuple[tuple[str, ...], ...] = (
    ("search", "get_user\udcff"),
    ("search", "regex:\udcff"),
    ("search", "get_user", "--path", "src/\udcff.py"),
    ("read", "src/\udcff.py"),
    ("replace", "SEARCH#00000000:1:match", "--text", "\udcff"),
)


@pytest.mark.parametrize("args", CLI_SURROGATES, ids=lambda a: a[0])
def test_undecodable_argv_through_the_cli(fuzz_root: Path, args: tuple[str, ...]) -> None:
    """An argument with bytes that are not UTF-8 (Python sees a lone surrogate) is input to
    reject (exit 2 or 4, a JSON error with its code), never ``internal``."""
    done = run_cli([*args, "--root", str(fuzz_root), "--json"])
    try:
        error = json.loads(done.stdout)["error"]
    except (ValueError, KeyError, TypeError):
        pytest.fail(
            f"no JSON error on stdout: exit {done.returncode}\n{done.stdout}\n{done.stderr[-2000:]}"
        )
    assert error["code"] in ANSWER_CODES, (error, done.stderr[-2000:])
    assert done.returncode in (2, 4), (done.returncode, error)
