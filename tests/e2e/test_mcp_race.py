"""Edits through MCP while another process rewrites the files (issue 15, "Must show" 3;
docs/references.md#stamps, docs/edits.md): every edit lands on exactly the bytes it was computed
from, or is refused.

Set-up. ``sleuth mcp`` (the official client, ``mcp_session``) serves a workspace with two
Python files, ``src/target.py`` and ``src/other.py``. A second process, the *rewriter*, loops
over them (a few ms apart) and, for each write, first appends the exact bytes it is about to
write to a log, then writes them by one of: ``sed -i '1i # outside edit'``-style prepending of a
header line to the current content (temp file + rename, or in place), stripping those headers,
a reset to one of the known base versions (rename or in place), or swapping the two tokens in
place with the same size and the old mtime restored (a change no stat signature sees). Temp
files live outside the workspace, so no search lists them.

The harness meanwhile runs ``RACING_EDITS`` edits, each right after its own search:
``replace`` through ``SEARCH#H:N:match`` and ``SEARCH#H:all:match``, ``delete`` through
``:N:line`` and ``:all:line``, ``insert`` before ``:N:line``/``:all:line`` and after
``:N:match``, scoped to one file or to ``src`` (both files: an all-or-nothing two-file edit).

The oracle. The *known states* of a file are every byte string the rewriter logged plus the
result of every verified edit. A successful edit's answer must be explained by one known state
``a`` of each changed file: the search's matches for that file equal the occurrences of the
token in ``a`` (unless ``:all`` says ``refreshed: true``; a single-match reference must never
refresh), the harness computes ``b`` = ``a`` with the edit applied, the answer's unified diff
applied to ``a`` gives exactly ``b`` (so its ``a/`` side is ``a`` and its ``b/`` side is ``b``),
``changed`` lists exactly the files whose diff is there, and every answered range sits where
the harness computes the new text in ``b`` with that text. ``b`` then becomes a known state. A
refusal must be ``stale_reference``, ``conflict``, ``not_found`` or ``unsafe_selection``.

Every ``CHECK_EVERY`` edits the rewriter is paused through a flag file (it acknowledges before
its next write) and, with nothing moving: each file on disk must be the rewriter's last write
or the result of a verified edit — never bytes that are neither (e.g. a replacement at shifted
offsets, ``if isinstance(params, (str, bytes)params = str(params)``); then a *calm round* runs:
a search and a ``:N:match`` replace must succeed and leave exactly the computed bytes; then the
harness itself prepends a header right after a search and a single-match replace must be
``stale_reference`` with the file untouched, while an ``:all:match`` replace must either be
refused with the file untouched or refresh and land exactly on the prepended bytes; the same
again after an in-place, same-size, same-mtime token swap. At the end: no corruption, no
unanswered call, no call over 10 s, enough edits succeeded for the race to mean something, and
the rewriter really wrote during the edits.
"""

from __future__ import annotations

import base64
import json
import os
import random
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp.client.session import ClientSession

from tests.conftest import MakeWorkspace
from tests.e2e.conftest import mcp_session
from tests.e2e.fuzz_helpers import HANG_GUARD_S, Outcome, mcp_call

RACING_EDITS = 500
CHECK_EVERY = 25
SEED = 15_003
REFUSALS = frozenset({"stale_reference", "conflict", "not_found", "unsafe_selection"})

ALPHA, OMEGA, GAMMA = "alpha_mode", "omega_mode", "gamma_note"  # alpha/omega: same length
HEADER = b"# outside edit\n"

TARGET_V0 = """\
import json


def encode(params, alpha_mode=False):
    # gamma_note: keep bytes as they are
    if isinstance(params, (str, bytes)):
        params = str(params)
    return json.dumps(params, sort_keys=alpha_mode)


def decode(value, omega_mode=True):
    if isinstance(value, (str, bytes)):
        value = json.loads(value)
    # gamma_note: omega_mode decides
    return value
"""
OTHER_V0 = """\
class Settings:
    alpha_mode = 1
    omega_mode = 2

    def pick(self, flag):
        # gamma_note
        return self.alpha_mode if flag else self.omega_mode
"""


def _swap(data: bytes) -> bytes:
    """ALPHA and OMEGA exchanged: the same size, other bytes."""
    return (
        data.replace(ALPHA.encode(), b"\0")
        .replace(OMEGA.encode(), ALPHA.encode())
        .replace(b"\0", OMEGA.encode())
    )


def _versions(base: str) -> list[bytes]:
    v0 = base.encode()
    lines = v0.splitlines(keepends=True)
    return [
        v0,
        HEADER + v0,
        HEADER * 3 + v0,
        _swap(v0),
        HEADER + _swap(v0),
        b"".join(line for line in lines if GAMMA.encode() not in line),
        v0 + b"\n\ndef extra(alpha_mode):\n    return alpha_mode  # gamma_note\n",
    ]


FILES = {"src/target.py": _versions(TARGET_V0), "src/other.py": _versions(OTHER_V0)}

REWRITER = textwrap.dedent('''
    """The outside writer: log each write's bytes first, then write them; pause on a flag."""
    import base64, json, os, random, sys, time

    root, ctl, tmp, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    spec = json.load(open(os.path.join(ctl, "spec.json")))
    versions = {rel: [base64.b64decode(v) for v in vs] for rel, vs in spec["files"].items()}
    header = spec["header"].encode()
    alpha, omega = spec["alpha"].encode(), spec["omega"].encode()
    pause, paused, stop = (os.path.join(ctl, n) for n in ("pause", "paused", "stop"))
    rng = random.Random(seed)
    log = open(os.path.join(ctl, "writes.log"), "ab", buffering=0)
    writes = 0

    def by_rename(path, data):
        temp = os.path.join(tmp, "w%d" % writes)
        with open(temp, "wb") as fh:
            fh.write(data)
        os.replace(temp, path)

    def in_place(path, data, keep_times=False):
        st = os.stat(path)
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        if keep_times:
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))

    while not os.path.exists(stop):
        if os.path.exists(pause):
            with open(paused + ".tmp", "w") as fh:
                fh.write(str(writes))
            os.replace(paused + ".tmp", paused)
            while os.path.exists(pause) and not os.path.exists(stop):
                time.sleep(0.001)
            os.unlink(paused)
            continue
        rel = rng.choice(sorted(versions))
        path = os.path.join(root, rel)
        with open(path, "rb") as fh:
            current = fh.read()
        roll = rng.random()
        keep = False
        if roll < 0.30:
            data, how = header + current, "prepend-rename"
        elif roll < 0.45:
            data, how = header + current, "prepend-in-place"
        elif roll < 0.60:
            data = current
            while data.startswith(header):
                data = data[len(header):]
            how = "strip-rename"
        elif roll < 0.85:
            data = rng.choice(versions[rel])
            how = rng.choice(("version-rename", "version-in-place"))
        else:
            data = current.replace(alpha, b"\\0").replace(omega, alpha).replace(b"\\0", omega)
            how, keep = "swap-in-place-same-mtime", True
        if len(data) > 4000:
            data, how = versions[rel][0], "reset-rename"
        log.write(("%s\\t%s\\t%s\\n" % (rel, how, base64.b64encode(data).decode())).encode())
        if how.endswith("rename"):
            by_rename(path, data)
        else:
            in_place(path, data, keep)
        writes += 1
        time.sleep(rng.uniform(0, 0.004))
''')


# --- the rewriter and its log -----------------------------------------------------------------


class Rewriter:
    """The outside writer process, its control flags and its write log."""

    def __init__(self, root: Path, ctl: Path, tmp: Path, seed: int) -> None:
        self.ctl = ctl
        spec = {
            "files": {rel: [base64.b64encode(v).decode() for v in vs] for rel, vs in FILES.items()},
            "header": HEADER.decode(),
            "alpha": ALPHA,
            "omega": OMEGA,
        }
        (ctl / "spec.json").write_text(json.dumps(spec))
        (ctl / "writes.log").write_bytes(b"")
        self._log = open(ctl / "writes.log", "rb")  # noqa: SIM115 - read as it grows
        self._rest = b""
        self.known: dict[str, set[bytes]] = {rel: set(vs) for rel, vs in FILES.items()}
        self.last: dict[str, bytes] = {rel: vs[0] for rel, vs in FILES.items()}
        self.last_how: dict[str, str] = {}
        self.writes = 0
        self.how: dict[str, int] = {}
        self.proc = subprocess.Popen(
            [sys.executable, "-c", REWRITER, str(root), str(ctl), str(tmp), str(seed)]
        )

    def poll(self) -> None:
        """Read the log's new complete lines into ``known`` and ``last``."""
        chunk = self._log.read()
        if not chunk:
            return
        *lines, self._rest = (self._rest + chunk).split(b"\n")
        for line in lines:
            rel, how, data = line.decode().split("\t")
            content = base64.b64decode(data)
            self.known[rel].add(content)
            self.last[rel] = content
            self.last_how[rel] = how
            self.writes += 1
            self.how[how] = self.how.get(how, 0) + 1

    def _wait(self, ready: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + HANG_GUARD_S
        while not ready():
            assert self.proc.poll() is None, f"the rewriter exited ({self.proc.returncode})"
            assert time.monotonic() < deadline, f"the rewriter did not {what}"
            time.sleep(0.001)

    def pause(self) -> None:
        (self.ctl / "pause").write_bytes(b"")
        self._wait(lambda: (self.ctl / "paused").exists(), "pause")
        self.poll()

    def resume(self) -> None:
        (self.ctl / "pause").unlink()
        self._wait(lambda: not (self.ctl / "paused").exists(), "resume")

    def stop(self) -> None:
        (self.ctl / "stop").write_bytes(b"")
        try:
            self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self._log.close()


# --- the oracle -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Op:
    """One kind of edit: the tool, the reference unit, single (``:N:``) or ``:all``."""

    tool: str
    unit: str
    single: bool
    where: str = "before"

    def token_and_text(self, rng: random.Random) -> tuple[str, str | None]:
        if self.tool == "delete":
            return GAMMA, None
        token = rng.choice((ALPHA, OMEGA))
        if self.tool == "replace":
            return token, OMEGA if token == ALPHA else ALPHA
        if self.unit == "match":
            return token, "_v2"
        return token, f"    # {GAMMA} {'one' if self.single else 'all'}\n"


OPS: tuple[tuple[Op, int], ...] = (
    (Op("replace", "match", True), 25),
    (Op("replace", "match", False), 25),
    (Op("delete", "line", False), 12),
    (Op("delete", "line", True), 8),
    (Op("insert", "line", True), 10),
    (Op("insert", "match", True, "after"), 8),
    (Op("insert", "line", False), 12),
)


def occurrences(data: bytes, token: str) -> list[tuple[int, int]]:
    needle = token.encode()
    out, at = [], data.find(needle)
    while at >= 0:
        out.append((at, at + len(needle)))
        at = data.find(needle, at + len(needle))
    return out


def _line_span(data: bytes, start: int) -> tuple[int, int]:
    """(start, end without its line break) of the line holding byte ``start``."""
    end = data.find(b"\n", start)
    return data.rfind(b"\n", 0, start) + 1, len(data) if end < 0 else end


def expected_edit(
    op: Op, a: bytes, chosen: list[tuple[int, int]], text: str | None
) -> tuple[bytes, list[tuple[int, int, str]]]:
    """``a`` with the edit applied to the ``chosen`` matches, and the ranges of the answer:
    (start_byte, end_byte, text) in the new bytes."""
    line_spans = {_line_span(a, s) for s, _ in chosen}
    spans = sorted(line_spans) if op.unit == "line" else sorted(chosen)
    splices: list[tuple[int, int, bytes]] = []
    for s, e in spans:
        if op.tool == "replace":
            splices.append((s, e, (text or "").encode()))
        elif op.tool == "delete":
            if e < len(a):
                splices.append((s, e + 1, b""))  # the line with its line break
            else:
                splices.append((max(0, s - 1), e, b""))
        else:
            at = s if op.where == "before" else e
            splices.append((at, at, (text or "").encode()))
    out, ranges, pos, shift = [], [], 0, 0
    # inserted whole lines (through :line) are answered as a :line selects them: without their
    # last line break (docs/edits.md#insert); the texts here always end in one
    trim = 1 if op.tool == "insert" and op.unit == "line" else 0
    for s, e, new in splices:
        out.append(a[pos:s])
        out.append(new)
        pos = e
        ranges.append((s + shift, s + shift + len(new) - trim, new[: len(new) - trim].decode()))
        shift += len(new) - (e - s)
    out.append(a[pos:])
    return b"".join(out), ranges


@dataclass
class Hunk:
    old_start: int
    old_len: int
    lines: list[tuple[str, str]]


def parse_diff(diff: str) -> dict[str, list[Hunk]]:
    """The hunks of a unified diff (``--- a/P``, ``+++ b/P``, ``@@ -l,s +l,s @@``) per path."""
    files: dict[str, list[Hunk]] = {}
    hunks: list[Hunk] | None = None
    for raw in diff.splitlines(keepends=True):
        if raw.startswith("--- "):
            continue
        if raw.startswith("+++ "):
            path = raw[4:].rstrip("\n")
            hunks = files.setdefault(path.removeprefix("b/"), [])
        elif raw.startswith("@@"):
            assert hunks is not None, diff
            old = raw.split()[1].lstrip("-")
            start, _, length = old.partition(",")
            hunks.append(Hunk(int(start), int(length or 1), []))
        elif raw.startswith("\\"):
            assert hunks, diff
            tag, text = hunks[-1].lines[-1]
            hunks[-1].lines[-1] = (tag, text.removesuffix("\n"))
        else:
            assert hunks, diff
            hunks[-1].lines.append((raw[0], raw[1:]))
    return files


def apply_hunks(a: bytes, hunks: list[Hunk]) -> bytes | None:
    """``a`` patched by ``hunks``, or None when a context or removed line is not ``a``'s."""
    old = a.decode("utf-8", errors="replace").splitlines(keepends=True)
    out: list[str] = []
    pos = 0
    for hunk in hunks:
        start = hunk.old_start - 1 if hunk.old_len else hunk.old_start
        if start < pos:
            return None
        out.extend(old[pos:start])
        pos = start
        for tag, text in hunk.lines:
            if tag in " -":
                if pos >= len(old) or old[pos] != text:
                    return None
                pos += 1
                if tag == " ":
                    out.append(text)
            elif tag == "+":
                out.append(text)
            else:
                return None
    out.extend(old[pos:])
    return "".join(out).encode()


def verify_edit(
    op: Op,
    token: str,
    text: str | None,
    n: int | None,
    search: dict[str, Any],
    answer: dict[str, Any],
    known: dict[str, set[bytes]],
) -> tuple[dict[str, list[tuple[bytes, bytes]]], str | None]:
    """Explain a successful edit by a known state of each changed file.

    Returns ({path: [(a, b), ...]}, None) when every changed file is explained, else
    ({}, why). Every known state that explains the answer is listed: states that differ only
    outside the diff's hunks (and, for a refreshed ``:all``, in where the token is) explain
    it alike, and the file may hold the edit of any of them."""
    matches = search["matches"]
    refreshed = bool(answer.get("refreshed"))
    if op.single and refreshed:
        return {}, "a single-match reference answered refreshed: true"
    if n is not None:
        chosen = matches[n - 1]
        k = sum(1 for m in matches[: n - 1] if m["path"] == chosen["path"])
        scope_paths = {chosen["path"]}
    else:
        k = -1
        scope_paths = set(FILES) if search["query_scope"] == "src" else {search["query_scope"]}
    diffs = parse_diff(answer.get("diff") or "")
    changed = set(answer.get("changed") or [])
    if changed != set(diffs) or not changed:
        return {}, f"changed {sorted(changed)} but the diff covers {sorted(diffs)}"
    if not changed <= scope_paths:
        return {}, f"changed {sorted(changed)} outside the reference's files {sorted(scope_paths)}"
    explained: dict[str, list[tuple[bytes, bytes]]] = {}
    for path in sorted(changed):
        seen = [(m["start_byte"], m["end_byte"]) for m in matches if m["path"] == path]
        got = sorted(
            (r["start_byte"], r["end_byte"], r["text"])
            for r in answer["ranges"]
            if r["path"] == path
        )
        for a in known[path]:
            occ = occurrences(a, token)
            if (not refreshed or op.single) and occ != seen:
                continue  # not the bytes the search saw
            chosen_occ = [occ[k]] if k >= 0 else occ
            b, ranges = expected_edit(op, a, chosen_occ, text)
            if b == a or apply_hunks(a, diffs[path]) != b:
                continue
            want = sorted(ranges)
            if op.tool == "delete":
                ok = {(s, e) for s, e, _ in got} == {(s, e) for s, e, _ in want} and all(
                    t == "" for _, _, t in got
                )
            else:
                ok = got == want
            if ok:
                explained.setdefault(path, []).append((a, b))
        if path not in explained:
            return {}, (
                f"{path}: no known state explains the answer (the diff does not turn "
                "one into the computed edit, or the ranges are elsewhere)"
            )
    return explained, None


# --- the run ----------------------------------------------------------------------------------


@dataclass
class Stats:
    searches: int = 0
    empty_searches: int = 0
    racing_edits: int = 0
    applied: int = 0
    refreshed: int = 0
    two_file_edits: int = 0
    refused: dict[str, int] = field(default_factory=dict)
    calm_rounds: int = 0
    disk_checks: int = 0
    disk_was_edit: int = 0
    max_call: float = 0.0
    calls: int = 0
    outside_writes: int = 0
    outside_kinds: dict[str, int] = field(default_factory=dict)
    stale_searches: dict[str, int] = field(default_factory=dict)
    harness_changes: int = 0
    unjudged_same_stat: int = 0
    failures: list[str] = field(default_factory=list)
    corruptions: list[str] = field(default_factory=list)


class Race:
    def __init__(self, session: ClientSession, root: Path, rewriter: Rewriter) -> None:
        self.session = session
        self.root = root
        self.rewriter = rewriter
        self.rng = random.Random(SEED)
        self.stats = Stats()
        self.made: dict[str, set[bytes]] = {rel: set() for rel in FILES}  # verified edit results
        self.last_refusal = ""
        self.refusal_text = ""

    async def call(self, tool: str, arguments: dict[str, Any]) -> Outcome:
        outcome = await mcp_call(self.session, tool, arguments)
        self.stats.calls += 1
        self.stats.max_call = max(self.stats.max_call, outcome.elapsed)
        if outcome.kind not in ("ok", "error") or outcome.elapsed > HANG_GUARD_S:
            self.stats.failures.append(
                f"{tool}({json.dumps(arguments)[:200]}): {outcome.kind} after "
                f"{outcome.elapsed:.1f} s {outcome.text[:300]}"
            )
        return outcome

    def known(self) -> dict[str, set[bytes]]:
        self.rewriter.poll()
        return {rel: self.rewriter.known[rel] | self.made[rel] for rel in FILES}

    async def search(self, token: str, scope: str) -> dict[str, Any] | None:
        outcome = await self.call(
            "search", {"query": token, "path": scope, "limit": 100, "context": 0}
        )
        self.stats.searches += 1
        if outcome.kind != "ok":
            if outcome.kind == "error":
                self.stats.failures.append(f"search {token!r} in {scope}: {outcome.text[:300]}")
            return None
        data = dict(outcome.data)
        data["query_scope"] = scope
        if not data.get("complete") or data.get("next_cursor"):
            self.stats.failures.append(f"search {token!r} in {scope} was not one complete page")
            return None
        return data

    def edit_arguments(
        self, op: Op, search: dict[str, Any], text: str | None
    ) -> tuple[dict[str, Any], int | None]:
        n = self.rng.randint(1, len(search["matches"])) if op.single else None
        ref = f"{search['result']}:{n if n else 'all'}:{op.unit}"
        arguments: dict[str, Any] = {"ref": ref}
        if text is not None:
            arguments["text"] = text
        if op.tool == "insert":
            arguments["where"] = op.where
        return arguments, n

    async def edit(
        self,
        op: Op,
        token: str,
        text: str | None,
        search: dict[str, Any],
        label: str,
        known: dict[str, set[bytes]] | None = None,
    ) -> tuple[str, dict[str, list[tuple[bytes, bytes]]]]:
        """Run one edit through ``search``; ('applied'|'refused'|'failed', explained).

        ``known`` is the states the file may be in; by default everything known once the
        answer is in (the rewriter logs a write before making it)."""
        arguments, n = self.edit_arguments(op, search, text)
        outcome = await self.call(op.tool, arguments)
        if outcome.kind == "error":
            self.last_refusal = str(outcome.code)
            if outcome.code in REFUSALS:
                self.stats.refused[outcome.code] = self.stats.refused.get(outcome.code, 0) + 1
                self.refusal_text = outcome.text[:300]
                return "refused", {}
            self.stats.failures.append(f"{label} {op.tool}({arguments}): {outcome.text[:300]}")
            return "failed", {}
        if outcome.kind != "ok":
            return "failed", {}
        states = self.known() if known is None else known
        explained, why = verify_edit(op, token, text, n, search, outcome.data, states)
        if why is not None:
            self.stats.corruptions.append(
                f"{label} {op.tool} {arguments} after search {search['result']} "
                f"(matches {[(m['path'], m['start_byte']) for m in search['matches']]}), "
                f"refreshed={outcome.data.get('refreshed')}: {why}\n{outcome.data.get('diff')}"
            )
            return "failed", {}
        for path, pairs in explained.items():
            self.made[path].update(b for _, b in pairs)
        self.stats.applied += 1
        self.stats.refreshed += bool(outcome.data.get("refreshed"))
        self.stats.two_file_edits += len(explained) > 1
        return "applied", explained

    async def racing_edit(self) -> None:
        ops, weights = zip(*OPS, strict=True)
        op = self.rng.choices(ops, weights)[0]
        token, text = op.token_and_text(self.rng)
        scope = self.rng.choices(("src/target.py", "src/other.py", "src"), (45, 20, 35))[0]
        search = await self.search(token, scope)
        if search is None:
            return
        if not search["matches"]:
            self.stats.empty_searches += 1
            return
        self.stats.racing_edits += 1
        await self.edit(op, token, text, search, "racing")

    # -- with the rewriter paused --------------------------------------------------------

    def disk(self, rel: str) -> bytes:
        return (self.root / rel).read_bytes()

    def check_disk(self, label: str) -> None:
        self.rewriter.poll()
        for rel in FILES:
            data = self.disk(rel)
            self.stats.disk_checks += 1
            if data in self.made[rel]:
                self.stats.disk_was_edit += 1
            elif data != self.rewriter.last[rel]:
                self.stats.corruptions.append(
                    f"{label}: {rel} on disk is neither the rewriter's last write nor a verified "
                    f"edit's result:\n{data.decode(errors='replace')}"
                )

    def outside_write(self, rel: str, data: bytes, how: str = "rename") -> None:
        """The harness's own outside write (``rename``, ``in-place`` or ``same-stat``: in
        place with the old size and mtime), known before it happens."""
        path = self.root / rel
        self.rewriter.known[rel].add(data)
        self.rewriter.last[rel] = data
        self.rewriter.last_how[rel] = f"the harness's {how}"
        if how == "rename":
            temp = self.rewriter.ctl / "harness.tmp"
            temp.write_bytes(data)
            os.replace(temp, path)
            return
        st = path.stat()
        with open(path, "r+b") as fh:
            fh.truncate(0)
            fh.write(data)
        if how == "same-stat":
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))

    async def present_token(self, rel: str) -> tuple[str, dict[str, Any], bool] | None:
        """A token ``rel`` holds, its search, and whether the search saw the bytes on disk.

        With nothing writing, a search should see them; a watching face may answer from
        caches a watcher tick behind, and a same-size rewrite that kept the mtime is not seen
        at all (``test_search_sees_a_same_size_same_mtime_rewrite``). A search that did not
        see the bytes is counted, and its references must then be refused."""
        for token in (ALPHA, OMEGA):
            search = await self.search(token, rel)
            if search is None:
                continue
            seen = [(m["start_byte"], m["end_byte"]) for m in search["matches"]]
            fresh = seen == occurrences(self.disk(rel), token)
            if not fresh:
                how = self.rewriter.last_how.get(rel, "none")
                self.stats.stale_searches[how] = self.stats.stale_searches.get(how, 0) + 1
            if search["matches"]:
                return token, search, fresh
        return None

    async def calm_round(self, round_no: int) -> None:
        """Nothing else writes: an edit through a search that saw the bytes must land exactly;
        an outside change just before an edit must be seen."""
        self.stats.calm_rounds += 1
        rel = "src/target.py" if round_no % 2 == 0 else "src/other.py"
        replace_one, replace_all = Op("replace", "match", True), Op("replace", "match", False)
        found = await self.present_token(rel)
        if found is None:
            self.outside_write(rel, FILES[rel][0])
            found = await self.present_token(rel)
        assert found is not None, f"calm round {round_no}: no token in {rel} after a reset"
        token, search, fresh = found
        current = self.disk(rel)
        status, explained = await self.edit(
            replace_one,
            token,
            OMEGA if token == ALPHA else ALPHA,
            search,
            f"calm {round_no}",
            {p: {self.disk(p)} for p in FILES},
        )
        label = f"calm round {round_no}: a quiet :N:match replace in {rel}"
        if fresh and status != "applied":
            self.stats.failures.append(f"{label} was {status}: {self.refusal_text}")
        elif fresh and (current, self.disk(rel)) not in explained[rel]:
            self.stats.corruptions.append(f"{label}: the file is not the edit's result")
        elif not fresh and (status != "refused" or self.disk(rel) != current):
            self.stats.corruptions.append(
                f"{label} through a search that did not see the file's bytes was {status}"
            )

        for how in ("rename", "in-place", "same-stat"):
            for op in (replace_one, replace_all):
                await self.outside_change_then_edit(round_no, rel, how, op)

    async def outside_change_then_edit(self, round_no: int, rel: str, how: str, op: Op) -> None:
        """Search, change the file from outside, edit at once: a single-match reference must
        be ``stale_reference`` with nothing written; ``:all`` must be refused with nothing
        written, or refresh and land exactly on the changed bytes."""
        found = await self.present_token(rel)
        if found is None:
            return
        token, search, fresh = found
        current = self.disk(rel)
        # The change must be bytes no search could have seen, or an edit through a search a
        # watcher tick behind may rightly land (it saw exactly these bytes, written before by
        # the rewriter: A-B-A). A numbered line makes a prepended change new; a same-size swap
        # is its own inverse, so it is judged only after a search that saw ``current``.
        if how == "same-stat" and not fresh:
            self.stats.unjudged_same_stat += 1
            return
        self.stats.harness_changes += 1
        marker = f"# harness change {self.stats.harness_changes}\n".encode()
        changed = _swap(current) if how == "same-stat" else HEADER + marker + current
        self.outside_write(rel, changed, how)
        snapshot = {p: {self.disk(p)} for p in FILES}
        label = (
            f"calm round {round_no}: {op.tool} :{'N' if op.single else 'all'}:{op.unit} "
            f"right after an outside {how} write of {rel}"
        )
        status, explained = await self.edit(
            op, token, OMEGA if token == ALPHA else ALPHA, search, label, snapshot
        )
        if status == "refused":
            if self.disk(rel) != changed:
                self.stats.corruptions.append(f"{label}: refused, but the file was written")
            elif op.single and self.last_refusal != "stale_reference":
                self.stats.failures.append(
                    f"{label}: refused as {self.last_refusal}, not stale_reference"
                )
        elif status == "applied":
            if op.single:
                self.stats.corruptions.append(f"{label}: applied (must be stale_reference)")
            elif (changed, self.disk(rel)) not in explained[rel]:
                self.stats.corruptions.append(f"{label}: did not land on the changed bytes")

    async def checkpoint(self, label: str, round_no: int) -> None:
        self.rewriter.pause()
        try:
            self.check_disk(label)
            await self.calm_round(round_no)
            self.check_disk(f"{label}, after the calm round")
        finally:
            self.rewriter.resume()

    async def run(self) -> None:
        rounds = 0
        next_check = CHECK_EVERY
        while self.stats.racing_edits < RACING_EDITS:
            await self.racing_edit()
            if self.stats.racing_edits >= next_check:
                rounds += 1
                next_check += CHECK_EVERY
                await self.checkpoint(f"checkpoint {rounds}", rounds)
            if len(self.stats.failures) > 20:
                break


def test_edits_race_an_outside_writer_through_mcp(
    make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    root = make_workspace({rel: vs[0] for rel, vs in FILES.items()})
    ctl = tmp_path / "ctl"
    tmp = tmp_path / "rewriter-tmp"  # same file system, outside the workspace
    ctl.mkdir()
    tmp.mkdir()
    started = time.perf_counter()
    stats = Stats()
    writes_before = 0

    async def go() -> None:
        nonlocal stats, writes_before
        async with mcp_session(root) as session:
            warm = await mcp_call(session, "search", {"query": ALPHA, "path": "src"})
            assert warm.kind == "ok", warm.text
            rewriter = Rewriter(root, ctl, tmp, SEED)
            try:
                race = Race(session, root, rewriter)
                rewriter.pause()
                writes_before = rewriter.writes
                rewriter.resume()
                try:
                    await race.run()
                finally:
                    rewriter.pause()
                    race.check_disk("the end")
                stats = race.stats
            finally:
                rewriter.stop()
            stats.outside_kinds = rewriter.how
            stats.outside_writes = rewriter.writes - writes_before

    anyio.run(go)
    elapsed = time.perf_counter() - started
    summary = (
        f"{stats.racing_edits} racing edits ({stats.applied} applied incl. calm, "
        f"{stats.refreshed} refreshed, {stats.two_file_edits} two-file, refused "
        f"{stats.refused}), {stats.searches} searches ({stats.empty_searches} empty), "
        f"{stats.calm_rounds} calm rounds ({stats.stale_searches} quiet searches that missed "
        f"the last write, by its kind; {stats.unjudged_same_stat} same-stat changes not "
        f"judged after one), {stats.disk_checks} disk checks "
        f"({stats.disk_was_edit} held an edit), {stats.calls} calls, slowest "
        f"{stats.max_call:.2f} s, outside writes {stats.outside_writes} "
        f"{stats.outside_kinds}, {elapsed:.1f} s"
    )
    print(summary)
    assert stats.corruptions == [], (
        f"{len(stats.corruptions)} corruptions ({summary}):\n" + "\n\n".join(stats.corruptions[:8])
    )
    assert stats.failures == [], f"{len(stats.failures)} failures ({summary}):\n" + "\n".join(
        stats.failures[:20]
    )
    assert stats.racing_edits >= RACING_EDITS, summary
    assert stats.applied >= RACING_EDITS // 20, f"too few edits landed for a race: {summary}"
    assert stats.outside_writes >= RACING_EDITS // 2, f"no real race: {summary}"


def test_search_sees_a_same_size_same_mtime_rewrite(make_workspace: MakeWorkspace) -> None:
    """docs/references.md#stamps: a result is stamped with the hash of the file's bytes at the time
    of the search. A rewrite in place that keeps the size and restores the mtime (``cp -p``,
    ``rsync -t``, ``tar x`` of another copy) must still be searched, well after any watcher
    tick, and an edit through that search must land: otherwise every search answers the old
    bytes and every edit through it is refused, for as long as the file keeps that stat."""
    root = make_workspace({"src/target.py": TARGET_V0})
    path = root / "src" / "target.py"

    async def go() -> None:
        async with mcp_session(root) as session:
            first = await mcp_call(session, "search", {"query": ALPHA, "path": "src/target.py"})
            assert first.kind == "ok" and first.data["total"] == 2, first.text
            st = path.stat()
            swapped = _swap(path.read_bytes())
            with open(path, "r+b") as fh:
                fh.write(swapped)  # same size, in place
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
            await anyio.sleep(1.0)  # long past a watcher tick: nothing is in flight
            again = await mcp_call(session, "search", {"query": ALPHA, "path": "src/target.py"})
            assert again.kind == "ok", again.text
            seen = [(m["start_byte"], m["end_byte"]) for m in again.data["matches"]]
            assert seen == occurrences(swapped, ALPHA), (
                f"the search answered {seen}, the file holds {ALPHA} at "
                f"{occurrences(swapped, ALPHA)}"
            )
            ref = again.data["matches"][0]["ref"]["match"]
            edit = await mcp_call(session, "replace", {"ref": ref, "text": OMEGA})
            assert edit.kind == "ok", edit.text
            start, end = occurrences(swapped, ALPHA)[0]
            assert path.read_bytes() == swapped[:start] + OMEGA.encode() + swapped[end:]

    anyio.run(go)
