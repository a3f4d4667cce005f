"""What the safety harness knows without asking sleuth (``tests/e2e/safety_model.py``).

The workspace it builds and the alphabet its files are written in; the disk as the harness sees
it (snapshots that follow no symlink and open no FIFO); its own model of each edit — the bytes a
successful edit must leave, computed from the bytes it was verified against, or the reason it
must have been refused (``Refuse``); the run's account (``Report``), the per-call deadline that
turns a hang into ``StepTimeout``, the watcher settling, and the hypothesis strategies.

The harness's expected result of an edit follows the documented semantics of
``sleuth/edit/operations.py`` (and ``tests/edit/test_operations.py``): ``insert`` through a
``:match`` goes exactly at its edge; through a ``:line`` reference it inserts whole lines
(``whole_lines``): before the line, or after its line break, the text ending in one line break
(added when missing), or after a last line without a line break the break first and none at
the end. Copy and move to ``PATH:LINE`` insert whole lines the same way, at the start of the
target line; deleting whole lines takes their line break (or the one before a last line
without one).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import stat
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import FrameType
from typing import Any, Literal

from hypothesis import strategies as st

from sleuth import Workbench
from sleuth.tuning import Tuning

__all__ = [
    "ALLOWED_EDIT_CODES",
    "CONFIG",
    "CONTENT",
    "EditRecord",
    "Entry",
    "FAULT",
    "FILES",
    "Fault",
    "HARD",
    "INITIAL",
    "LINK_TARGET",
    "MARKER",
    "MAX_FILE",
    "ORIG",
    "OUTSIDE_INITIAL",
    "OUTSIDE_MARKER",
    "PICK",
    "PROBES",
    "READ_CODES",
    "Refuse",
    "Report",
    "SCOPES",
    "SCOPE_CODES",
    "SECRET",
    "SELECTION",
    "STATE",
    "STATE_ORIG",
    "SUB",
    "SWAPS",
    "SafetyViolation",
    "SearchRecord",
    "Selected",
    "Sp",
    "StepTimeout",
    "TEXT",
    "TOKEN",
    "TOKENS",
    "Tree",
    "Verified",
    "WATCH_WINDOW_S",
    "WRITE_ACTIONS",
    "Where",
    "apply_splices",
    "copied_from",
    "data_of",
    "deadline",
    "describe",
    "expect_copy",
    "expect_simple",
    "expect_undo",
    "query_pattern",
    "read_entry",
    "scratch_dir",
    "SETTLED",
    "searchable",
    "selected_insert",
    "snapshot",
    "wait_for_watcher",
    "whole_lines",
]

TOKENS = ("Alpha", "Bravo", "Charlie", "Delta")
MARKER = "hunter2"
OUTSIDE_MARKER = "zulu9outside"
SECRET = "config/secret.py"
CONFIG = ".sleuth.toml"
SETTLED = replace(Tuning(), watch_settle_s=0.0)
"""The machine's tuning: a watcher trusted at once. The machine itself waits until the watcher
reports a probe write (``wait_for_watcher``), which is what the settle time stands in for, so a
run's examples (a second or two each) exercise the cached-listing path of a long-lived server."""
SUB = "sub"
ORIG = "sub.orig"
LINK_TARGET = "../outside"
STATE_ORIG = ".sleuth.orig"
STATE = frozenset({".sleuth", STATE_ORIG})
"""sleuth's state folder (and where the harness moves it aside): not the model's business."""
HARD = "hard.txt"
FILES = ("a.txt", "b.txt", "sub/c.txt", "sub/d.txt")

INITIAL: dict[str, str] = {
    CONFIG: 'deny = ["config/secret.py"]\n',
    SECRET: f"Alpha = '{MARKER}'  # Bravo Charlie Delta\nDelta Alpha {MARKER}\n",
    "a.txt": "Alpha Bravo\nCharlie Alpha Delta\n",
    "b.txt": "Bravo\nDelta Delta\nAlpha",
    "sub/c.txt": "Charlie Bravo Alpha\n",
    "sub/d.txt": "Delta\n\nAlpha Charlie\n",
}
OUTSIDE_INITIAL: dict[str, str] = {
    "c.txt": f"Alpha {OUTSIDE_MARKER}\n",
    "keep.txt": f"Bravo Alpha {OUTSIDE_MARKER}\n",
    "state/keep": "a folder the state folder .sleuth may be swapped for a symlink to\n",
}

ALLOWED_EDIT_CODES = frozenset(
    {
        "stale_reference",
        "conflict",
        "not_found",
        "invalid_path",
        "unsafe_selection",
        "invalid_query",
    }
)
SCOPE_CODES = frozenset({"not_found", "invalid_path"})
READ_CODES = SCOPE_CODES | {"unsupported"}
WATCH_WINDOW_S = 1.0
"""How long a watching face may answer what a file held before a change (docs/SAFETY.md: until
its watcher reports it, some milliseconds later; generous for a loaded machine)."""
MAX_FILE = 400
"""A file the edits have grown past this many bytes is cut back by the harness (a write of its
own) after the step, so that matches stay few and every search fits one page."""
POINTS = ("planned", "verified", "before-rename")
WRITE_ACTIONS = ("rewrite", "rename_over", "truncate", "append", "delete", "backdate", "keep_stat")
FAULT_ACTIONS = (
    "rewrite",
    "rename_over",
    "truncate",
    "append",
    "delete",
    "keep_stat",
    "swap_dir",
    "fifo",
)
SWAPS = ("dir", "dir-mirror", "fifo", "alias-cfg", "alias-leak", "hardlink", "state-link")
PROBES = (
    "search-marker",
    "search-marker-cfg",
    "search-hunter",
    "regex-marker",
    "files-secret",
    "search-cfg",
    "search-cfg-file",
    "search-config",
    "search-leak",
    "read-cfg-file",
    "read-config-file",
    "read-leak",
    "read-cfg",
)

Entry = tuple[str, Any]
"""``("file", bytes)``, ``("link", target)``, ``("fifo", None)``, ``("dir", None)``,
``("via-link", None)`` (reached through a symlinked folder) or ``("other", None)``."""
Tree = dict[str, Entry]
Where = Literal["before", "after"]


# -- the disk, as the harness sees it --------------------------------------------------------


def scratch_dir() -> str | None:
    """tmpfs when there is one: the edit layer fsyncs every file, which costs nothing there."""
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None


def _read_regular(path: str) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _entry(path: str, st_mode: int) -> Entry:
    if stat.S_ISLNK(st_mode):
        return ("link", os.readlink(path))
    if stat.S_ISDIR(st_mode):
        return ("dir", None)
    if stat.S_ISREG(st_mode):
        return ("file", _read_regular(path))
    if stat.S_ISFIFO(st_mode):
        return ("fifo", None)
    return ("other", None)


def snapshot(top: Path, *, skip: frozenset[str] = frozenset()) -> Tree:
    """Every entry under ``top`` by relative path, symlinks not followed, FIFOs not opened."""
    out: Tree = {}

    def walk(folder: str, prefix: str) -> None:
        with os.scandir(folder) as it:
            names = sorted(e.name for e in it)
        for name in names:
            rel = prefix + name
            if rel in skip:
                continue
            full = os.path.join(folder, name)
            entry = _entry(full, os.lstat(full).st_mode)
            out[rel] = entry
            if entry[0] == "dir":
                walk(full, rel + "/")

    walk(str(top), "")
    return out


def read_entry(root: Path, rel: str) -> Entry | None:
    """What ``rel`` holds now, reached from ``root`` without following a symlinked folder."""
    parts = rel.split("/")
    folder = str(root)
    for part in parts[:-1]:
        folder = os.path.join(folder, part)
        try:
            mode = os.lstat(folder).st_mode
        except OSError:
            return None
        if stat.S_ISLNK(mode):
            return ("via-link", None)
        if not stat.S_ISDIR(mode):
            return None
    full = os.path.join(folder, parts[-1])
    try:
        return _entry(full, os.lstat(full).st_mode)
    except OSError:
        return None


def data_of(entry: Entry | None) -> bytes | None:
    return entry[1] if entry is not None and entry[0] == "file" else None


def searchable(model: Tree, scope: str) -> dict[str, bytes]:
    """The files a search of ``scope`` must read: regular, not denied, no symlink on the way."""
    whole = scope in ("", "/")
    if not whole and model.get(scope, ("",))[0] not in ("dir", "file"):
        return {}
    return {
        rel: entry[1]
        for rel, entry in model.items()
        if entry[0] == "file"
        and rel != SECRET
        and (whole or rel == scope or rel.startswith(scope + "/"))
    }


def describe(entry: Entry | None) -> str:
    if entry is None:
        return "nothing"
    if entry[0] == "file":
        return repr(entry[1])
    return f"a {entry[0]}" + (f" -> {entry[1]}" if entry[0] == "link" else "")


# -- the harness's own model of an edit ------------------------------------------------------


@dataclass
class Refuse:
    """The edit must have been refused, for ``reason`` (``tag`` names the kind of reason)."""

    tag: str
    reason: str


@dataclass
class Sp:
    start: int
    end: int
    text: bytes
    lines: bool = False


def apply_splices(data: bytes, splices: list[Sp]) -> bytes | None:
    """``data`` with ``splices`` applied; None when two overlap (the edit is a conflict).

    Whole-line deletions take their line break with them; the deleted lines that end the file
    without a line break take the one before the first of them (docs/edits.md#delete,
    ``sleuth/edit/splices.py``): the file keeps ending without one."""
    ordered = sorted(
        (Sp(s.start, s.end, s.text, s.lines) for s in splices), key=lambda s: (s.start, s.end)
    )
    for i, sp in enumerate(ordered):
        if sp.lines and not sp.text:
            if data[sp.end : sp.end + 1] == b"\n":
                sp.end += 1
                continue
            first = i  # back over the whole-line deletions that touch this one
            while (
                first > 0
                and ordered[first - 1].lines
                and not ordered[first - 1].text
                and ordered[first - 1].end == ordered[first].start
            ):
                first -= 1
            head = ordered[first]
            if head.start > 0 and data[head.start - 1 : head.start] == b"\n":
                head.start -= 1
    for a, b in zip(ordered, ordered[1:], strict=False):
        if b.start < a.end:
            return None
    out, pos = [], 0
    for sp in ordered:
        out += [data[pos : sp.start], sp.text]
        pos = sp.end
    out.append(data[pos:])
    return b"".join(out)


def whole_lines(data: bytes, at: int, text: bytes) -> Sp:
    """``text`` inserted at ``at`` as whole lines (docs/edits.md#insert): at a line start it
    ends in one ``\\n``; at the end of a file whose last line has no line break the ``\\n``
    goes first and none is added at the end. Empty text inserts nothing."""
    if not text:
        return Sp(at, at, b"")
    lines = text.removesuffix(b"\n")
    if at == len(data) and at > 0 and data[at - 1 : at] != b"\n":
        return Sp(at, at, b"\n" + lines)
    return Sp(at, at, lines + b"\n")


def selected_insert(unit: str, text: str) -> str:
    """The text an insert's answer selects: all of it through a ``:match``; through a ``:line``
    the new lines as a ``:line`` reference selects them, without their last line break."""
    return text.removesuffix("\n") if unit == "line" else text


def line_span(data: bytes, start: int, end: int) -> tuple[int, int]:
    """The whole lines holding [start, end), without the last one's line break."""
    s = data.rfind(b"\n", 0, start) + 1
    e = data.find(b"\n", max(start, end - 1))
    return s, len(data) if e < 0 else e


@dataclass(eq=False)
class SearchRecord:
    """A search answer and what the harness knew when it was given."""

    result: str
    query: str
    scope: str
    pattern: re.Pattern[bytes]
    seen: dict[str, set[bytes]]
    """Per file with matches, the bytes the answer's offsets may come from: the file as it is
    when searched, or for a watching face one of its versions within the watcher's tick."""
    matches: list[tuple[str, int, int]]
    complete: bool

    def __repr__(self) -> str:
        return f"<{self.result} {self.query!r} in {self.scope}: {len(self.matches)} matches>"


@dataclass(eq=False)
class EditRecord:
    """A successful edit: per file the bytes it was applied to and the bytes it left."""

    result: str
    op: str
    files: dict[str, tuple[bytes, bytes]]
    ranges: list[tuple[str, int, int]]
    undone: bool = False

    def __repr__(self) -> str:
        return f"<{self.result} {self.op} of {sorted(self.files)}>"


@dataclass(frozen=True)
class Fault:
    """At call ``nth`` of ``point``, the hook performs ``action`` on ``target`` (-1: the file
    the hook names, or for ``planned`` the edit's first file; else an index into the files)."""

    point: str
    nth: int
    action: str
    target: int
    content: str


class Selected:
    """Which ranges reference ``rec``/``unit``/``n`` selects in a file's bytes."""

    def __init__(self, rec: SearchRecord, unit: str, n: int | None) -> None:
        self.rec, self.unit, self.n = rec, unit, n
        self.ref = f"{rec.result}:{'all' if n is None else n}:{unit}"

    @property
    def single(self) -> bool:
        return self.n is not None

    def paths(self, refreshed: bool, start: Tree) -> list[str]:
        if self.n is not None:
            return [self.rec.matches[self.n - 1][0]] if self.n <= len(self.rec.matches) else []
        paths = {p for p, _, _ in self.rec.matches}
        if refreshed:
            paths |= set(searchable(start, self.rec.scope))
        return sorted(paths)

    def ranges(self, path: str, data: bytes) -> list[tuple[int, int]] | Refuse:
        if self.n is not None:
            if data not in self.rec.seen.get(path, ()):
                return Refuse(
                    "stale-single", f"{self.ref}: {path} holds other bytes than its search saw"
                )
            _, s, e = self.rec.matches[self.n - 1]
            return [line_span(data, s, e) if self.unit == "line" else (s, e)]
        occ = [(m.start(), m.end()) for m in self.rec.pattern.finditer(data)]
        if self.unit == "line":
            occ = sorted({line_span(data, s, e) for s, e in occ})
        return occ


Verified = Callable[[str], bytes | None]


def expect_simple(
    op: str,
    sel: Selected,
    refreshed: bool,
    start: Tree,
    verified: Verified,
    text: bytes,
    where: str,
) -> dict[str, bytes] | Refuse:
    """The files a replace/insert/delete must leave, from the bytes each was verified against."""
    if sel.single and sel.n is not None and sel.n > len(sel.rec.matches):
        return Refuse("no-such-match", f"{sel.ref}: the result has {len(sel.rec.matches)} matches")
    out: dict[str, bytes] = {}
    for path in sel.paths(refreshed, start):
        data = verified(path)
        if data is None or path == SECRET:
            if sel.single:
                return Refuse(
                    "not-regular", f"{path} is not a regular workspace file reached from the root"
                )
            continue
        ranges = sel.ranges(path, data)
        if isinstance(ranges, Refuse):
            return ranges
        if not ranges:
            continue
        if op == "replace":
            sps = [Sp(s, e, text) for s, e in ranges]
        elif op == "insert" and sel.unit == "line":
            # before the line, or after its line break (the end of a file without a final one)
            sps = [
                whole_lines(data, s if where == "before" else min(e + 1, len(data)), text)
                for s, e in ranges
            ]
        elif op == "insert":
            sps = [Sp(s, s, text) if where == "before" else Sp(e, e, text) for s, e in ranges]
        else:
            sps = [Sp(s, e, b"", sel.unit == "line") for s, e in ranges]
        new = apply_splices(data, sps)
        if new is None:
            return Refuse("overlap", f"overlapping ranges in {path}")
        out[path] = new
    if all(out[p] == verified(p) for p in out):
        return Refuse("changes-nothing", "the edit changes nothing")
    return out


def expect_copy(
    sel: Selected,
    move: bool,
    target: str,
    line: int,
    refreshed: bool,
    start: Tree,
    verified: Verified,
) -> dict[str, bytes] | Refuse:
    """The files a copy/move to ``target:line`` must leave (the moved-from files verified)."""
    if sel.single and sel.n is not None and sel.n > len(sel.rec.matches):
        return Refuse("no-such-match", f"{sel.ref}: the result has {len(sel.rec.matches)} matches")
    pieces: list[tuple[str, int, int, bytes]] = []
    sources: dict[str, bytes] = {}
    for path in sel.paths(refreshed, start):
        # a moved-from file is verified under the lock; a copied-from one was read when the
        # reference resolved, i.e. as the step began
        data = verified(path) if move else data_of(start.get(path))
        if data is None or path == SECRET:
            if sel.single:
                return Refuse(
                    "not-regular", f"{path} is not a regular workspace file reached from the root"
                )
            continue
        ranges = sel.ranges(path, data)
        if isinstance(ranges, Refuse):
            return ranges
        sources[path] = data
        pieces += [(path, s, e, data[s:e]) for s, e in ranges]
    tdata = verified(target)
    if tdata is None or target == SECRET:
        return Refuse("target-not-regular", f"the target {target} is not a regular workspace file")
    if tdata != data_of(start.get(target)):
        return Refuse("target-changed", f"the target {target} changed after its line was resolved")
    count = tdata.count(b"\n") + 1
    lines = count - 1 if tdata.endswith(b"\n") else count
    if line > lines + 1:
        return Refuse("line-out-of-range", f"{target} has {lines} lines, the target line is {line}")
    starts = [0] + [i + 1 for i, c in enumerate(tdata) if c == 10]
    offset = starts[line - 1] if line <= count else len(tdata)
    all_lines = sel.unit == "line"
    blob = (b"\n" if all_lines else b"").join(p[3] for p in pieces)
    # to PATH:LINE the text goes as whole lines, whatever the unit of its source
    splices: dict[str, list[Sp]] = {target: [whole_lines(tdata, offset, blob)]}
    if move:
        for path, s, e, _ in pieces:
            if path == target and s < offset < e:
                return Refuse("move-into-itself", "a move into the moved text itself")
            splices.setdefault(path, []).append(Sp(s, e, b"", all_lines))
    out: dict[str, bytes] = {}
    for path, sps in splices.items():
        base = tdata if path == target else sources[path]
        new = apply_splices(base, sps)
        if new is None:
            return Refuse("overlap", f"overlapping ranges in {path}")
        out[path] = new
    if all(out[p] == verified(p) for p in out):
        return Refuse("changes-nothing", "the edit changes nothing")
    return out


def copied_from(sel: Selected, target: str, refreshed: bool, start: Tree) -> list[str]:
    """The files whose text a copy pastes (other than its target): those its selection has a
    range in, in their bytes when the reference resolved."""
    out = []
    for path in sel.paths(refreshed, start):
        data = data_of(start.get(path))
        if path != target and data is not None:
            ranges = sel.ranges(path, data)
            if not isinstance(ranges, Refuse) and ranges:
                out.append(path)
    return out


def expect_undo(rec: EditRecord, verified: Verified) -> dict[str, bytes] | Refuse:
    if rec.undone:
        return Refuse("undone-already", f"{rec.result} was undone already")
    out = {}
    for path, (old, new) in rec.files.items():
        if verified(path) != new or path == SECRET:
            return Refuse("changed-since", f"{path} no longer holds what {rec.result} wrote")
        out[path] = old
    return out


# -- the run's account -------------------------------------------------------------------------


class SafetyViolation(AssertionError):
    """An invariant did not hold (strict mode)."""


class StepTimeout(BaseException):
    """A sleuth call did not return in time (a hang); a BaseException so no handler eats it."""


@dataclass
class Report:
    """Counts of one run and its violations (first occurrence of each kind, with its steps)."""

    strict: bool = True
    only: str | None = None
    """In strict mode, raise only for violation kinds starting with this (others are counted):
    to shrink one kind of violation to a minimal sequence while others are around."""
    hang_s: float = 20.0
    hang_after_first_s: float = 3.0
    steps: int = 0
    examples: int = 0
    hangs: int = 0
    rules: Counter[str] = field(default_factory=Counter)
    edits: Counter[str] = field(default_factory=Counter)
    hook_calls: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    violations: Counter[str] = field(default_factory=Counter)
    first: dict[str, str] = field(default_factory=dict)

    @property
    def timeout(self) -> float:
        return self.hang_after_first_s if self.hangs else self.hang_s

    def summary(self) -> str:
        lines = [
            f"steps {self.steps}, examples {self.examples}, hangs {self.hangs}",
            f"rules {dict(sorted(self.rules.items()))}",
            f"edits {dict(sorted(self.edits.items()))}",
            f"hook calls {dict(sorted(self.hook_calls.items()))}",
            f"faults fired {dict(sorted(self.faults.items()))}",
            f"violations {dict(sorted(self.violations.items())) or 'none'}",
        ]
        for kind in sorted(self.first):
            lines.append(f"--- first {kind} ---\n{self.first[kind]}")
        return "\n".join(lines)


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """``StepTimeout`` when the body runs longer than ``seconds`` (and every second after)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_alarm(_signum: int, _frame: FrameType | None) -> None:
        raise StepTimeout()

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds, 1.0)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def wait_for_watcher(wb: Workbench, root: Path, timeout: float = 5.0) -> None:
    """Block until the workbench's watcher is trusted and has reported a write of ours."""
    ws = wb.workspace
    until = time.monotonic() + timeout
    while ws.generation is None and time.monotonic() < until:
        time.sleep(0.005)
    before = ws.generation
    if before is None:
        return  # the watcher never became trusted: every query walks, which is fine too
    probe = root / ".harness-probe"
    probe.write_bytes(b"probe\n")
    probe.unlink()
    while ws.generation == before and time.monotonic() < until:
        time.sleep(0.002)


# -- strategies --------------------------------------------------------------------------------

TOKEN = st.sampled_from(TOKENS)
TEXT = st.lists(st.sampled_from((*TOKENS, " ", "\n")), min_size=1, max_size=3).map("".join)
CONTENT = st.tuples(
    st.lists(st.lists(TOKEN, max_size=3).map(" ".join), max_size=3), st.booleans()
).map(lambda t: "\n".join(t[0]) + ("\n" if t[1] and t[0] else ""))
PICK = st.integers(0, 15)
SELECTION = st.tuples(st.sampled_from(("match", "line")), st.one_of(st.none(), st.integers(1, 4)))
FAULT = st.one_of(
    st.none(),
    st.builds(
        Fault,
        point=st.sampled_from(POINTS),
        nth=st.integers(0, 1),
        action=st.sampled_from(FAULT_ACTIONS),
        target=st.integers(-1, 5),
        content=CONTENT,
    ),
    # the file system refuses the nth rename (a bind-mounted or immutable file): the edit
    # must answer ``internal`` with every file old (docs/SAFETY.md#the-journal-and-recovery)
    st.builds(
        Fault,
        point=st.just("rename"),
        nth=st.integers(0, 1),
        action=st.just("fail"),
        target=st.just(-1),
        content=st.just(""),
    ),
)
SCOPES = ("/", "/", "/", SUB, "a.txt", ORIG)


def query_pattern(query: str) -> re.Pattern[bytes]:
    body = query.removeprefix("regex:")
    if query.startswith("regex:"):
        return re.compile(body.encode())
    return re.compile(re.escape(body.encode()))
