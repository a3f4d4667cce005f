"""The fault-injection and model-check harness of the edit layer (issue 15; docs/SAFETY.md).

``SafetyMachine`` is a hypothesis ``RuleBasedStateMachine`` that drives one long-running
``Workbench`` (``watch=True`` as the MCP server has it, or ``watch=False``) over a tiny workspace
in a scratch folder (on tmpfs when there is one, so fsync costs nothing) laid out as::

    <scratch>/root/                 the workspace root
        .sleuth.toml                deny = ["config/secret.py"]
        config/secret.py            holds the marker ``hunter2`` next to ordinary tokens
        a.txt  b.txt  sub/c.txt  sub/d.txt
    <scratch>/outside/              beside the root, never inside it: sleuth must not touch it

Files hold words of the alphabet ``TOKENS``: each is a capital followed by small letters, so
no token has a border and no two literal matches of one token can overlap — ``bytes.replace``
and ``re.finditer`` compute exactly the matches sleuth must find. The machine interleaves at
random searches (literal and ``regex:``, in several scopes, keeping their answers), edits
through their references (replace, insert, delete of ``:N:match``, ``:N:line``, ``:all:…``;
copy and move to ``PATH:LINE``; a replace through an edit's ``RESULT#``; undo), writes of its
own (in place, temp-and-rename, truncation, append, deletion, a rewrite that keeps size, inode
and mtime, backdating), swaps of ``sub`` for a symlink to the outside folder (optionally with
the outside folder made to mirror ``sub``, so stamps match through the link), of a file for a
FIFO, of ``.sleuth`` for a symlink into the outside folder, a hard link from the outside folder
to a workspace file (a write in place would change it), and aliases of the denied file
(``cfg -> config``, ``leak.txt -> config/secret.py``) with reads and searches through them.
Earlier answers are picked by a drawn index counted from the newest, so what hypothesis draws
never depends on sleuth's answers (it replays sequences and insists they draw alike).

Faults inside an edit go through ``Workspace.fault_hook``, which the edit layer calls at
``planned`` (selection resolved, new bytes computed, lock not yet taken), ``verified`` (one file
read under the lock and verified) and ``before-rename`` (its temporary file written). An edit
step may carry a ``Fault``: at the chosen call of the chosen point the hook performs one of the
writes above. At every ``verified`` call the hook reads the file itself (no symlink followed,
never opening a FIFO): those are *the bytes the edit was verified against*.

After every step the harness checks, against its own model of every file:

1. ``inv1``: nothing in the outside folder changed and nothing new appeared there;
2. ``inv2``: the denied file never changed, and ``hunter2`` appears in no answer (search and
   read answers, edit answers and their diffs, error objects — each serialised with
   ``to_json()``), nor does a match or range come from the denied file or an alias of it;
3. ``inv3``: every workspace entry is exactly what the harness last put there or, after a
   successful edit, exactly that edit applied (by the harness's own computation) to the bytes
   it was verified against; a single-match reference must have been refused unless those bytes
   are the bytes its search saw; a failed edit changed nothing; an ``:all`` edit selected every
   current match of its result's files (and of its whole scope when it says ``refreshed``); a
   copy succeeded only if its source did not change after the reference resolved;
4. ``inv4``: an edit succeeds or raises ``SleuthError`` with one of ``ALLOWED_EDIT_CODES``;
   nothing raises ``internal`` or a foreign exception, and nothing hangs (``StepTimeout``);
5. ``inv5``: every search answer equals the matches in the bytes on disk (a subset when it says
   ``complete: false``) — for a watching face, per file, in the bytes it held at some moment of
   the last ``WATCH_WINDOW_S`` (docs/SAFETY.md) — a plain read answers the file's bytes, and an
   edit's answer names the files it changed and selects the text it wrote (through a ``:line``
   reference an insert's new lines, without their last line break), at the offsets where the
   harness's model of the file holds it.

``tests/e2e/safety_helpers.py`` holds the layout, the disk snapshots, the harness's model of
each edit (which semantics it follows is said there), the account and the strategies.

``Report`` counts steps, edits and hook calls and holds the violations: in strict mode (the
tests) the first violation raises ``SafetyViolation`` so hypothesis shrinks it to a minimal
sequence; in collecting mode (``benchmarks/safety_soak.py``) each kind is counted, its first
occurrence kept with the steps that led to it, the model resynchronised and the run goes on.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import re
import shutil
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule

from sleuth import Workbench
from sleuth.errors import SleuthError
from tests.e2e.safety_helpers import (
    ALLOWED_EDIT_CODES,
    CONFIG,
    CONTENT,
    FAULT,
    FILES,
    HARD,
    INITIAL,
    LINK_TARGET,
    MARKER,
    MAX_FILE,
    ORIG,
    OUTSIDE_INITIAL,
    OUTSIDE_MARKER,
    PICK,
    PROBES,
    READ_CODES,
    SCOPE_CODES,
    SCOPES,
    SECRET,
    SELECTION,
    SETTLED,
    STATE,
    STATE_ORIG,
    SUB,
    SWAPS,
    TEXT,
    TOKEN,
    TOKENS,
    WATCH_WINDOW_S,
    WRITE_ACTIONS,
    EditRecord,
    Entry,
    Fault,
    Refuse,
    Report,
    SafetyViolation,
    SearchRecord,
    Selected,
    Sp,
    StepTimeout,
    Tree,
    Verified,
    Where,
    apply_splices,
    copied_from,
    data_of,
    deadline,
    describe,
    expect_copy,
    expect_simple,
    expect_undo,
    query_pattern,
    read_entry,
    scratch_dir,
    searchable,
    selected_insert,
    snapshot,
    wait_for_watcher,
)

__all__ = [
    "ALLOWED_EDIT_CODES",
    "MARKER",
    "Report",
    "SafetyMachine",
    "SafetyViolation",
    "StepTimeout",
    "safety_machine",
]


# -- the machine -------------------------------------------------------------------------------


class SafetyMachine(RuleBasedStateMachine):
    """See the module docstring. Subclass through ``safety_machine(report, watch=...)``."""

    report: Report = Report()
    watch: bool = True

    def __init__(self) -> None:
        super().__init__()
        self.report.examples += 1
        self.base = Path(tempfile.mkdtemp(prefix="sleuth-safety-", dir=scratch_dir()))
        self.root = self.base / "root"
        self.outside = self.base / "outside"
        for top, files in ((self.root, INITIAL), (self.outside, OUTSIDE_INITIAL)):
            for rel, text in files.items():
                (top / rel).parent.mkdir(parents=True, exist_ok=True)
                (top / rel).write_bytes(text.encode())
        self.model = snapshot(self.root, skip=STATE)
        self.outside_model = snapshot(self.outside)
        self.history: dict[str, list[tuple[float, bytes | None]]] = {
            rel: [(time.monotonic(), data_of(entry))] for rel, entry in self.model.items()
        }
        """Per path, its contents (None: no file) and when each became what it held."""
        self.log: list[str] = []
        self.searches: list[SearchRecord] = []
        self.edits: list[EditRecord] = []
        self.fifos: dict[str, bytes] = {}
        self.hard_ino: int | None = None  # the inode outside/hard.txt shares with a workspace file
        self.state_swapped = False  # .sleuth is a symlink to outside/state
        self.fault: Fault | None = None
        self.fault_calls: Counter[str] = Counter()
        self.fault_done = False
        self.fault_point = ""
        self.rename_failed = False  # the edit's rename was made to fail: ``internal`` is due
        self.edit_paths: list[str] = []
        self.verified: dict[str, Entry | None] = {}
        self.moved: dict[str, str] = {}
        self.hook_error: BaseException | None = None
        self.wb = Workbench(self.root, watch=self.watch, tuning=SETTLED)
        if self.watch:
            wait_for_watcher(self.wb, self.root)
        self.wb.workspace.fault_hook = self._hook

    def teardown(self) -> None:
        try:
            self.wb.workspace.fault_hook = None
            self.wb.close()
        finally:
            shutil.rmtree(self.base, ignore_errors=True)

    # -- accounting ------------------------------------------------------------------------

    def _step(self, text: str) -> None:
        self.report.steps += 1
        self.report.rules[text.split(" ", 1)[0]] += 1
        self.log.append(text)
        del self.log[:-60]

    def note(self, text: str) -> None:
        self.log.append("    " + text)
        del self.log[:-60]

    def violate(self, kind: str, detail: str) -> None:
        self.report.violations[kind] += 1
        message = f"[{kind}] {detail}\nsteps of this example (latest last):\n" + "\n".join(
            "  " + line for line in self.log
        )
        self.report.first.setdefault(kind, message)
        only = self.report.only
        if self.report.strict and (only is None or kind.startswith(only)):
            raise SafetyViolation(message)

    def _call(
        self,
        what: str,
        fn: Callable[[], Any],
        allowed: frozenset[str],
        refused: str = "inv4-error-code",
    ) -> tuple[Any, str | None]:
        """(answer JSON, None) or (None, error code); a code outside ``allowed`` is a
        violation of kind ``refused``, ``internal`` and foreign exceptions always (inv4)."""
        self.hook_error = None
        if self.state_swapped:
            allowed = allowed | {"invalid_path"}  # .sleuth is a symlink: nothing may use it
        try:
            with deadline(self.report.timeout):
                answer = fn()
        except StepTimeout:
            self.report.hangs += 1
            self._check_hook()
            self.violate("inv4-hang", f"{what} did not return within {self.report.timeout} s")
            return None, "hang"
        except SleuthError as exc:
            self._check_hook()
            data = exc.to_json()
            self.check_marker(what, data)
            self.note(f"-> {exc.code}: {exc.message[:160]}")
            torn = (
                exc.code == "internal" and self.rename_failed and "could not write" in exc.message
            )
            if exc.code not in allowed and not torn:
                self.violate(
                    refused if exc.code != "internal" else "inv4-internal",
                    f"{what} raised {exc.code}: {exc.message}",
                )
            return None, exc.code
        except Exception as exc:  # noqa: BLE001 - any foreign exception is the finding
            self._check_hook()
            self.violate(
                "inv4-foreign-exception",
                f"{what} raised {type(exc).__name__}: {exc}\n{traceback.format_exc()}",
            )
            return None, type(exc).__name__
        self._check_hook()
        data = answer.to_json()
        self.check_marker(what, data, strip_query=MARKER in what)
        return data, None

    def _check_hook(self) -> None:
        if self.hook_error is not None:
            error, self.hook_error = self.hook_error, None
            raise RuntimeError("the harness's fault hook failed") from error

    def check_marker(self, what: str, data: dict[str, Any], strip_query: bool = False) -> None:
        doc = {k: v for k, v in data.items() if not (strip_query and k in ("query", "source"))}
        text = json.dumps(doc, ensure_ascii=False)
        for marker, kind in ((MARKER, "inv2-marker-leaked"), (OUTSIDE_MARKER, "inv1-outside-read")):
            if marker in text:
                at = text.index(marker)
                self.violate(
                    kind, f"{what} answered {marker!r}: …{text[max(0, at - 200) : at + 80]}…"
                )

    # -- the model -------------------------------------------------------------------------

    def candidates(self) -> list[str]:
        """The files a write or a target may name: the model's files, and the usual names."""
        have = [r for r, e in self.model.items() if e[0] == "file" and r not in (SECRET, CONFIG)]
        return sorted(set(have) | set(FILES))

    def pick(self, index: int) -> str:
        names = self.candidates()
        return names[index % len(names)]

    def set_file(self, rel: str, data: bytes | None, *, in_place: bool = False) -> None:
        """The model's ``rel`` after a write of the harness's own (``in_place``: same inode)."""
        if data is None:
            self.model.pop(rel, None)
        else:
            self.model[rel] = ("file", data)
        if in_place and data is not None and self.hard_ino is not None:
            # the file outside/hard.txt is a hard link of changes with it (by its inode, which
            # a rename over the file, sleuth's way of writing, leaves behind)
            with contextlib.suppress(OSError):
                if os.stat(self.root / rel).st_ino == self.hard_ino:
                    self.outside_model[HARD] = ("file", data)

    def set_model(self, tree: Tree) -> None:
        """The model becomes ``tree`` (what is on disk after a step); the history notes which
        files changed (at the end of the step: a little late, so a little lenient)."""
        now = time.monotonic()
        for rel in set(tree) | set(self.history):
            data = data_of(tree.get(rel))
            history = self.history.setdefault(rel, [(0.0, None)])  # (no file before)
            if history[-1][1] != data:
                history.append((now, data))
                del history[:-8]
        self.model = tree

    def check_outside(self) -> None:
        now = snapshot(self.outside)
        if now != self.outside_model:
            diff = [
                f"{r}: {describe(self.outside_model.get(r))} -> {describe(now.get(r))}"
                for r in sorted(set(now) | set(self.outside_model))
                if now.get(r) != self.outside_model.get(r)
            ]
            self.violate("inv1-outside-changed", "the outside folder changed: " + "; ".join(diff))
            self.outside_model = now

    def check_tree(self, expected: Tree, why: str) -> None:
        """The workspace holds exactly ``expected`` (inv2 for the denied file, else inv3)."""
        actual = snapshot(self.root, skip=STATE)
        for rel in sorted(set(actual) | set(expected)):
            a, e = actual.get(rel), expected.get(rel)
            if a == e:
                continue
            kind = "inv2-denied-changed" if rel == SECRET else "inv3-file"
            self.violate(kind, f"{why}: {rel} holds {describe(a)}, expected {describe(e)}")
        self.set_model(actual)
        self.check_outside()
        for rel, entry in sorted(actual.items()):
            if entry[0] == "file" and len(entry[1]) > MAX_FILE and rel not in (SECRET, CONFIG):
                cut = entry[1].rfind(b"\n", 0, MAX_FILE // 4) + 1
                os.truncate(self.root / rel, cut)
                self.set_file(rel, entry[1][:cut], in_place=True)
                self.note(f"harness cut {rel} back to {cut} bytes")

    # -- outside writes (the harness's own) --------------------------------------------------

    def do_write(self, action: str, rel: str, content: str) -> None:
        """One outside write; the model follows. Only regular files are written in place."""
        full = self.root / rel
        data = data_of(self.model.get(rel))
        new = content.encode()
        if action in ("truncate", "delete", "backdate", "keep_stat") and data is None:
            return
        if action in ("rewrite", "append", "rename_over") and data is None:
            if (
                self.model.get(rel) is not None
                or not full.parent.is_dir()
                or self.model.get(str(Path(rel).parent), ("dir",))[0] != "dir"
            ):
                return
            action = "rename_over"  # (re)create a missing file
        if action == "rewrite":
            assert data is not None
            with open(full, "r+b") as fh:
                fh.write(new)
                fh.truncate()
            self.set_file(rel, new, in_place=True)
        elif action == "rename_over":
            temp = full.parent / ".harness-tmp"
            temp.write_bytes(new)
            os.replace(temp, full)
            self.set_file(rel, new)
        elif action == "truncate":
            assert data is not None
            os.truncate(full, len(data) // 2)
            self.set_file(rel, data[: len(data) // 2], in_place=True)
        elif action == "append":
            assert data is not None
            with open(full, "ab") as fh:
                fh.write(new)
            self.set_file(rel, data + new, in_place=True)
        elif action == "delete":
            os.unlink(full)
            self.set_file(rel, None)
        elif action == "backdate":
            past = time.time_ns() - 60_000_000_000
            os.utime(full, ns=(past, past))
        elif action == "keep_stat":
            assert data is not None
            self._rewrite_keeping_stat(rel, data)
        elif action == "swap_dir":
            self.swap_dir_now(mirror=bool(len(content) % 2))
        elif action == "fifo":
            self.fifo_now(rel)

    def _rewrite_keeping_stat(self, rel: str, data: bytes) -> None:
        """Same size, same inode, same mtime, other bytes: a stat signature cannot tell."""
        new = data
        for a, b in (("Alpha", "Delta"), ("Bravo", "Alpha"), ("Delta", "Bravo")):
            if a.encode() in data:
                new = data.replace(a.encode(), b.encode(), 1)
                break
        if new == data:
            return
        full = self.root / rel
        st_ = os.stat(full)
        with open(full, "r+b") as fh:
            fh.write(new)
        os.utime(full, ns=(st_.st_atime_ns, st_.st_mtime_ns))
        self.set_file(rel, new, in_place=True)

    def swap_dir_now(self, *, mirror: bool) -> bool:
        """``mv sub sub.orig; ln -s ../outside sub`` (optionally copying sub's files outside)."""
        if self.model.get(SUB) != ("dir", None) or ORIG in self.model:
            return False
        os.rename(self.root / SUB, self.root / ORIG)
        if mirror:
            for name in sorted(os.listdir(self.root / ORIG)):
                data = data_of(self.model.get(f"{SUB}/{name}"))
                if data is not None:
                    (self.outside / name).write_bytes(data)
            self.outside_model = snapshot(self.outside)
        os.symlink(LINK_TARGET, self.root / SUB)
        for rel in sorted(r for r in self.model if r == SUB or r.startswith(SUB + "/")):
            self.model[ORIG + rel[len(SUB) :]] = self.model.pop(rel)
        self.model[SUB] = ("link", LINK_TARGET)
        self.moved[SUB + "/"] = ORIG + "/"
        return True

    def fifo_now(self, rel: str) -> bool:
        data = data_of(self.model.get(rel))
        if data is None or rel in (SECRET, CONFIG):
            return False
        os.unlink(self.root / rel)
        os.mkfifo(self.root / rel)
        self.fifos[rel] = data
        self.set_file(rel, None)
        self.model[rel] = ("fifo", None)
        return True

    # -- the fault hook --------------------------------------------------------------------

    def _hook(self, point: str, rel: str) -> None:
        fault = self.fault
        if fault is not None and fault.action == "fail":
            # only renames fail, and only there: no write of the harness's own
            self.report.hook_calls[point] += 1
            if point == "verified" and rel not in self.verified:
                self.verified[rel] = read_entry(self.root, rel)
            if point != "rename" or self.fault_done:
                return
            nth = self.fault_calls[point]
            self.fault_calls[point] += 1
            if nth == fault.nth:
                self.fault_done, self.fault_point, self.rename_failed = True, point, True
                self.report.faults["rename:fail"] += 1
                self.note(f"fault at rename({rel!r}): the rename fails (EBUSY)")
                raise OSError(errno.EBUSY, os.strerror(errno.EBUSY), rel)
            return
        try:
            self.report.hook_calls[point] += 1
            if point == "verified" and rel not in self.verified:
                self.verified[rel] = read_entry(self.root, rel)
            fault = self.fault
            if fault is None or self.fault_done or fault.point != point:
                return
            nth = self.fault_calls[point]
            self.fault_calls[point] += 1
            if nth != fault.nth:
                return
            self.fault_done = True
            self.fault_point = point
            if fault.target >= 0:
                target = self.pick(fault.target)
            else:
                target = rel or (self.edit_paths[0] if self.edit_paths else self.pick(0))
            self.report.faults[f"{point}:{fault.action}"] += 1
            self.note(f"fault at {point}({rel!r}): {fault.action} {target}")
            self.do_write(fault.action, target, fault.content)
        except BaseException as exc:  # noqa: BLE001 - reported after the sleuth call returns
            self.hook_error = exc

    # -- searches ----------------------------------------------------------------------------

    def _search(self, query: str, scope: str, keep: bool = True) -> SearchRecord | None:
        """Search, check the answer against the model, keep it for later edits (``keep``)."""
        self.note(f"search {query!r} path={scope}")
        real = scope == "/" or self.model.get(scope, ("",))[0] in ("dir", "file")
        answer, _ = self._call(
            f"search {query!r} path={scope}",
            lambda: self.wb.search(query, path=scope, limit=500),
            frozenset() if real else SCOPE_CODES,
            "inv5-search-refused",
        )
        if answer is None:
            return None
        for _ in range(20):  # every page: the workspace is kept small, so one page usually
            if answer.get("next_cursor") is None:
                break
            more, _ = self._call(
                f"search {query!r} path={scope} cursor",
                functools.partial(
                    self.wb.search, query, path=scope, limit=500, cursor=answer["next_cursor"]
                ),
                frozenset(),
                "inv5-search-refused",
            )
            if more is None:
                return None
            answer = {**more, "matches": answer["matches"] + more["matches"]}
        pattern = query_pattern(query)
        got = [(m["path"], m["start_byte"], m["end_byte"]) for m in answer["matches"]]
        what = f"search {query!r} path={scope}"
        seen = self.check_found(what, got, scope, pattern, answer["complete"])
        self.note(f"-> {answer['result']}: {len(got)} matches, complete={answer['complete']}")
        if seen is None:
            # reported already; which bytes its offsets and stamps come from is unknown, so the
            # harness could not tell what an edit through it must do: it is not used again
            return None
        rec = SearchRecord(answer["result"], query, scope, pattern, seen, got, answer["complete"])
        if keep:
            self.searches.append(rec)
        return rec

    def check_found(
        self,
        what: str,
        got: list[tuple[str, int, int]],
        scope: str,
        pattern: re.Pattern[bytes],
        complete: bool,
    ) -> dict[str, set[bytes]] | None:
        """Check a search answer against the model (inv2, inv5): per file, its matches must be
        those in the file's bytes — for a watching face, in one of the versions the file had
        within ``WATCH_WINDOW_S`` (docs/SAFETY.md: a watching face may answer what the files
        held just before, until its watcher reports the change). A subset when the answer says
        ``complete: false``. Returns, per file with matches, the bytes they may come from; None
        when the answer is stale."""
        before = self.report.violations["inv5-search-stale"]
        by_path: dict[str, set[tuple[int, int]]] = {}
        for path, start, end in got:
            by_path.setdefault(path, set()).add((start, end))
        now = searchable(self.model, scope)
        seen: dict[str, set[bytes]] = {}
        for path in sorted(set(by_path) | set(now)):
            have = by_path.get(path, set())
            if path == SECRET or path.startswith("cfg/") or path in ("leak.txt", "cfg"):
                self.violate("inv2-cloak-bypassed", f"{what} answered a match in {path}")
                continue
            versions = self.versions_of(path, scope)
            fits = []
            for v in versions:
                occ = set() if v is None else {m.span() for m in pattern.finditer(v)}
                if have == occ or (not complete and have <= occ):
                    fits.append(v)
            if not fits:
                shown = [describe(None if v is None else ("file", v)) for v in versions]
                self.violate(
                    "inv5-search-stale",
                    f"{what} (complete={complete}) answered {sorted(have)} in {path}; its "
                    f"matches {'now' if len(versions) == 1 else 'in its recent versions'} are in "
                    f"{shown}",
                )
            elif have:
                seen[path] = {v for v in fits if v is not None}
        return seen if self.report.violations["inv5-search-stale"] == before else None

    def versions_of(self, path: str, scope: str) -> list[bytes | None]:
        """What a search of ``scope`` may find in ``path``: its bytes now (None: nothing to
        find there), and for a watching face also its versions of the last WATCH_WINDOW_S."""

        def searchable_in(tree_entry: Entry | None) -> bytes | None:
            whole = scope in ("", "/")
            inside = whole or path == scope or path.startswith(scope + "/")
            return data_of(tree_entry) if inside and path != SECRET else None

        current = searchable(self.model, scope).get(path)
        out: list[bytes | None] = [current]
        if self.watch:
            horizon = time.monotonic() - WATCH_WINDOW_S
            history = self.history.get(path, [])
            for i, (_, data) in enumerate(history):
                replaced = history[i + 1][0] if i + 1 < len(history) else None
                if replaced is not None and replaced >= horizon:
                    older = searchable_in(("file", data) if data is not None else None)
                    if older not in out:
                        out.append(older)
        return out

    @rule(tok=TOKEN, scope=st.sampled_from(SCOPES))
    def search_literal(self, tok: str, scope: str) -> None:
        self._step(f"search_literal {tok} {scope}")
        self._search(tok, scope)
        self.check_tree(dict(self.model), "after a search")

    @rule(toks=st.lists(TOKEN, min_size=2, max_size=2, unique=True))
    def search_regex(self, toks: list[str]) -> None:
        self._step(f"search_regex {'|'.join(toks)}")
        self._search("regex:" + "|".join(toks), "/")
        self.check_tree(dict(self.model), "after a search")

    @rule(kind=st.sampled_from(PROBES), tok=TOKEN)
    def probe_cloak(self, kind: str, tok: str) -> None:
        """Searches and reads aimed at the denied file, directly and through aliases."""
        self._step(f"probe_cloak {kind} {tok}")
        rec = None
        searches = {
            "search-marker": (MARKER, "/"),
            "search-marker-cfg": (MARKER, "cfg"),
            "search-hunter": ("hunter", "/"),
            "regex-marker": ("regex:hunt.r2", "/"),
            "search-cfg": (tok, "cfg"),
            "search-cfg-file": (tok, "cfg/secret.py"),
            "search-config": (tok, "config"),
            "search-leak": (tok, "leak.txt"),
        }
        if kind in searches:
            query, scope = searches[kind]
            rec = self._search(query, scope, keep=False)
            if rec is not None and rec.matches:
                self.searches.append(rec)  # a leak already reported: edits through it must fail
        elif kind == "files-secret":
            answer, _ = self._call(
                "search files:secret",
                lambda: self.wb.search("files:secret", limit=500),
                frozenset(),
            )
            for m in (answer or {}).get("matches", []):
                if m["path"] in (SECRET, "leak.txt") or m["path"].startswith("cfg/"):
                    self.violate("inv2-cloak-bypassed", f"files:secret listed {m['path']}")
        else:
            target = {
                "read-cfg-file": "cfg/secret.py",
                "read-config-file": SECRET,
                "read-leak": "leak.txt",
                "read-cfg": "cfg",
            }[kind]
            answer, _ = self._call(f"read {target}", lambda: self.wb.read(target), SCOPE_CODES)
            if answer is not None:
                self.violate(
                    "inv2-cloak-bypassed",
                    f"read {target} answered {[r['path'] for r in answer['ranges']]}",
                )
        self.check_tree(dict(self.model), "after a probe")

    @rule(index=st.integers(0, 7))
    def read_path(self, index: int) -> None:
        rel = self.pick(index)
        self._step(f"read_path {rel}")
        entry = self.model.get(rel)
        # a FIFO (or anything but a text file) is refused like a binary file: unsupported
        allowed = frozenset() if entry is not None and entry[0] == "file" else READ_CODES
        answer, code = self._call(
            f"read {rel} ({describe(entry)})",
            lambda: self.wb.read(rel),
            allowed,
            "inv5-read-refused",
        )
        data = data_of(entry)
        if answer is not None and data is not None:
            text = data.decode("utf-8", "replace")
            text = text[:-1] if text.endswith("\n") else text
            got = "".join(r["text"] for r in answer["ranges"])
            if got != text:
                self.violate(
                    "inv5-read-stale", f"read {rel} answered {got!r}, the file holds {data!r}"
                )
        elif answer is not None and data is None:
            through = rel.startswith(SUB + "/") and self.model.get(SUB, ("",))[0] == "link"
            self.violate(
                "inv1-outside-read" if through else "inv5-read-stale",
                f"read {rel} answered {answer['ranges']!r} although it is "
                + ("reached through sub -> ../outside" if through else describe(entry)),
            )
        self.check_tree(dict(self.model), "after a read")

    # -- edits -------------------------------------------------------------------------------

    def _edit(
        self,
        op: str,
        what: str,
        run: Callable[[], Any],
        fault: Fault | None,
        paths: list[str],
        expect: Callable[[bool, Tree, Verified], dict[str, bytes] | Refuse],
        text: str | None = None,
        copied: Callable[[bool, Tree], list[str]] | None = None,
        unit: str = "match",
    ) -> EditRecord | None:
        """``paths``: the files the edit names (a ``planned`` fault's default target);
        ``copied``: the files a copy reads without writing them (given ``refreshed`` and the
        tree as the step began); ``unit``: what the reference selects (``match`` or ``line``)."""
        """Run one edit with its fault and check the tree against the harness's expectation."""
        start = dict(self.model)
        self.fault, self.fault_done, self.fault_calls = fault, False, Counter()
        self.fault_point, self.rename_failed = "", False
        self.edit_paths, self.verified, self.moved = paths, {}, {}
        calls_before = sum(self.report.hook_calls.values())
        self.note(f"{what}" + (f" with {fault}" if fault else ""))
        try:
            answer, code = self._call(what, run, ALLOWED_EDIT_CODES)
        finally:
            self.fault = None
        hooked = sum(self.report.hook_calls.values()) > calls_before
        self.report.edits["ok" if answer is not None else f"refused:{code}"] += 1
        if answer is None:
            self.check_tree(dict(self.model), f"{what} was refused ({code})")
            return None

        def verified(path: str) -> bytes | None:
            if path in self.verified:
                return data_of(self.verified[path])
            return data_of(start.get(path))

        outcome = expect(bool(answer.get("refreshed")), start, verified)
        if isinstance(outcome, Refuse):
            self.violate(
                f"inv3-should-refuse:{outcome.tag}", f"{what} succeeded, but {outcome.reason}"
            )
            self.resync()
            return None
        wanted = dict(self.model)
        changed = {p: new for p, new in outcome.items() if new != verified(p)}
        for path, new in changed.items():
            if hooked and path not in self.verified:
                self.violate(
                    "inv3-unverified-write",
                    f"{what}: {path} was to be written without a 'verified' call for it",
                )
            wanted[self._moved(path)] = ("file", new)
        sources = copied(bool(answer.get("refreshed")), start) if copied else []
        for path in sources if self.fault_point == "planned" else ():
            # changed after the reference resolved and before the lock was taken
            if path not in changed and self.model.get(path) != start.get(path):
                self.violate(
                    "inv3-copy-source-unverified",
                    f"{what} pasted text from {path}, which changed before the commit",
                )
        if sorted(answer.get("changed") or []) != sorted(changed):
            self.violate(
                "inv5-edit-answer",
                f"{what} says it changed {answer.get('changed')}, the model {sorted(changed)}",
            )
        if text is not None and op in ("replace", "insert"):
            # an insert through a :line reference selects the new lines as a :line would
            wrote = selected_insert(unit, text) if op == "insert" else text
            texts = {r["text"] for r in answer["ranges"]}
            if texts - {wrote}:
                self.violate("inv5-edit-answer", f"{what} selects {texts}, it wrote {wrote!r}")
        for r in answer["ranges"]:
            if r["path"] not in changed:
                continue
            held = changed[r["path"]][r["start_byte"] : r["end_byte"]]
            if held.decode("utf-8", "replace") != r["text"]:
                self.violate(
                    "inv5-edit-answer",
                    f"{what} selects {r['text']!r} at {r['path']}:{r['start_byte']}-"
                    f"{r['end_byte']}, where the file holds {held!r}",
                )
        self.check_tree(wanted, f"after {what}")
        ranges = [(r["path"], r["start_byte"], r["end_byte"]) for r in answer["ranges"]]
        record = EditRecord(
            answer["result"],
            op,
            {p: (verified(p) or b"", new) for p, new in changed.items()},
            ranges,
        )
        if op != "undo":
            # an edit that ends exactly as an earlier one (same reference, same resulting ranges
            # and stamps) gets its RESULT# too, and its undo data: it supersedes the earlier one
            self.edits = [e for e in self.edits if e.result != record.result] + [record]
        return record

    def resync(self) -> None:
        """After a violation in collecting mode: the denied file and the outside folder are
        still checked, then the model becomes what is on disk."""
        actual = snapshot(self.root, skip=STATE)
        if actual.get(SECRET) != self.model.get(SECRET):
            self.violate("inv2-denied-changed", f"{SECRET} holds {describe(actual.get(SECRET))}")
        self.set_model(actual)
        self.check_outside()

    # Earlier answers are picked by an index drawn as a plain integer (counted from the newest):
    # hypothesis replays a sequence and insists it draws the same way, and which answers exist
    # depends on sleuth (a bundle would not), so the index is read against the list as it is.

    def search_at(self, pick: int) -> SearchRecord | None:
        """An earlier answer, or a fresh search of a token when there is none yet."""
        if not self.searches:
            return self._search(TOKENS[pick % len(TOKENS)], "/")
        return self.searches[-1 - pick % len(self.searches)]

    def edit_at(self, pick: int) -> EditRecord | None:
        return self.edits[-1 - pick % len(self.edits)] if self.edits else None

    def _moved(self, path: str) -> str:
        for old, new in self.moved.items():
            if path.startswith(old):
                return new + path[len(old) :]
        return path

    def _fresh(self, pick: int, refresh: bool) -> SearchRecord | None:
        """An earlier answer; with ``refresh``, its search again right now (the edit follows
        at once)."""
        rec = self.search_at(pick)
        return self._search(rec.query, rec.scope) if refresh and rec is not None else rec

    def _simple(
        self,
        op: str,
        pick: int,
        sel: tuple[str, int | None],
        fault: Fault | None,
        refresh: bool,
        text: str = "",
        where: str = "before",
    ) -> None:
        self._step(
            f"{op} {self.search_at(pick) if self.searches else pick!r} {sel} refresh={refresh}"
        )
        fresh = self._fresh(pick, refresh)
        if fresh is None:
            self.check_tree(dict(self.model), "after a search")
            return
        s = Selected(fresh, *sel)
        calls = {
            "replace": lambda: self.wb.replace(s.ref, text),
            "insert": lambda: self.wb.insert(s.ref, text, where=cast(Where, where)),
            "delete": lambda: self.wb.delete(s.ref),
        }
        what = f"{op}({s.ref}{', ' + repr(text) if op != 'delete' else ''}" + (
            f", {where})" if op == "insert" else ")"
        )
        self._edit(
            op,
            what,
            calls[op],
            fault,
            s.paths(False, self.model),
            lambda refreshed, start, verified: expect_simple(
                op, s, refreshed, start, verified, text.encode(), where
            ),
            text=text if op != "delete" else "",
            unit=s.unit,
        )

    @rule(pick=PICK, sel=SELECTION, text=TEXT, fault=FAULT, refresh=st.booleans())
    def replace(
        self,
        pick: int,
        sel: tuple[str, int | None],
        text: str,
        fault: Fault | None,
        refresh: bool,
    ) -> None:
        self._simple("replace", pick, sel, fault, refresh, text)

    @rule(
        pick=PICK,
        sel=SELECTION,
        text=TEXT,
        where=st.sampled_from(("before", "after")),
        fault=FAULT,
        refresh=st.booleans(),
    )
    def insert(
        self,
        pick: int,
        sel: tuple[str, int | None],
        text: str,
        where: str,
        fault: Fault | None,
        refresh: bool,
    ) -> None:
        self._simple("insert", pick, sel, fault, refresh, text, where)

    @rule(pick=PICK, sel=SELECTION, fault=FAULT, refresh=st.booleans())
    def delete(
        self, pick: int, sel: tuple[str, int | None], fault: Fault | None, refresh: bool
    ) -> None:
        self._simple("delete", pick, sel, fault, refresh)

    def _copy(
        self,
        move: bool,
        pick: int,
        sel: tuple[str, int | None],
        index: int,
        line: int,
        fault: Fault | None,
        refresh: bool,
    ) -> None:
        op = "move" if move else "copy"
        target = self.pick(index) if index >= 0 else ("cfg/secret.py", SECRET)[index % 2]
        self._step(f"{op} {sel} to {target}:{line} refresh={refresh}")
        fresh = self._fresh(pick, refresh)
        if fresh is None:
            self.check_tree(dict(self.model), "after a search")
            return
        s = Selected(fresh, *sel)
        to = f"{target}:{line}"
        sources = s.paths(False, self.model)
        run = (lambda: self.wb.move(s.ref, to=to)) if move else (lambda: self.wb.copy(s.ref, to=to))
        self._edit(
            op,
            f"{op}({s.ref}, to={to})",
            run,
            fault,
            [target, *sources],
            lambda refreshed, start, verified: expect_copy(
                s, move, target, line, refreshed, start, verified
            ),
            copied=None if move else functools.partial(copied_from, s, target),
        )

    @rule(
        pick=PICK,
        sel=SELECTION,
        index=st.integers(-2, 7),
        line=st.integers(1, 5),
        fault=FAULT,
        refresh=st.booleans(),
    )
    def copy(
        self,
        pick: int,
        sel: tuple[str, int | None],
        index: int,
        line: int,
        fault: Fault | None,
        refresh: bool,
    ) -> None:
        self._copy(False, pick, sel, index, line, fault, refresh)

    @rule(
        pick=PICK,
        sel=SELECTION,
        index=st.integers(-2, 7),
        line=st.integers(1, 5),
        fault=FAULT,
        refresh=st.booleans(),
    )
    def move(
        self,
        pick: int,
        sel: tuple[str, int | None],
        index: int,
        line: int,
        fault: Fault | None,
        refresh: bool,
    ) -> None:
        self._copy(True, pick, sel, index, line, fault, refresh)

    @rule(pick=PICK, text=TEXT, fault=FAULT)
    def replace_result(self, pick: int, text: str, fault: Fault | None) -> None:
        """A further edit through an edit's own ``RESULT#`` (it selects the text it wrote)."""
        found = self.edit_at(pick)
        self._step(f"replace_result {found!r}")
        if found is None:
            self.check_tree(dict(self.model), "after nothing")
            return
        rec = found

        def expect(refreshed: bool, start: Tree, verified: Verified) -> dict[str, bytes] | Refuse:
            out: dict[str, bytes] = {}
            for path in sorted({p for p, _, _ in rec.ranges}):
                data = verified(path)
                after = rec.files.get(path, (b"", None))[1]
                if data is None or data != after:
                    return Refuse(
                        "changed-since", f"{path} no longer holds what {rec.result} wrote"
                    )
                # identical ranges (a delete's empty positions that met) are one range
                spans = sorted({(s, e) for p, s, e in rec.ranges if p == path})
                sps = [Sp(s, e, text.encode()) for s, e in spans]
                new = apply_splices(data, sps)
                if new is None:
                    return Refuse("overlap", f"overlapping ranges in {path}")
                out[path] = new
            if all(out[p] == verified(p) for p in out):
                return Refuse("changes-nothing", "the edit changes nothing")
            return out

        self._edit(
            "replace",
            f"replace({rec.result}, {text!r})",
            lambda: self.wb.replace(rec.result, text),
            fault,
            sorted({p for p, _, _ in rec.ranges}),
            expect,
            text=text,
        )

    @rule(pick=PICK, fault=FAULT)
    def undo(self, pick: int, fault: Fault | None) -> None:
        rec = self.edit_at(pick)
        self._step(f"undo {rec!r}")
        if rec is None:
            self.check_tree(dict(self.model), "after nothing")
            return
        out = self._edit(
            "undo",
            f"undo({rec.result})",
            lambda: self.wb.undo(rec.result),
            fault,
            sorted(rec.files),
            lambda refreshed, start, verified: expect_undo(rec, verified),
        )
        if out is not None:
            rec.undone = True

    # -- outside writes and swaps --------------------------------------------------------------

    @rule(action=st.sampled_from(WRITE_ACTIONS), index=st.integers(0, 7), content=CONTENT)
    def outside_write(self, action: str, index: int, content: str) -> None:
        rel = self.pick(index)
        self._step(f"outside_write {action} {rel} {content!r}")
        self.do_write(action, rel, content)
        self.check_tree(dict(self.model), f"after the harness's {action} of {rel}")

    # No rule has a precondition: the state they would test follows faults that fire only when
    # an edit gets that far, and hypothesis insists that a replayed sequence draws the same way.
    # A rule that does not apply is a no-op step instead.

    @rule(kind=st.sampled_from(SWAPS), index=st.integers(0, 7))
    def swap(self, kind: str, index: int) -> None:
        """Swap ``sub`` for a symlink to the outside folder (``mv sub sub.orig; ln -s ../outside
        sub``, the outside folder first made to mirror ``sub`` for ``dir-mirror``) or back; a
        file for a FIFO (``rm f; mkfifo f``) or every FIFO back; make or remove an alias of the
        denied file (``ln -s config cfg``, ``ln -s config/secret.py leak.txt``)."""
        if kind.startswith("dir"):
            self._step(f"swap {kind}")
            if self.swap_dir_now(mirror=kind == "dir-mirror"):
                self.moved = {}
            elif self.model.get(SUB) == ("link", LINK_TARGET) and self.model.get(ORIG) == (
                "dir",
                None,
            ):
                os.unlink(self.root / SUB)
                os.rename(self.root / ORIG, self.root / SUB)
                for rel in sorted(r for r in self.model if r == ORIG or r.startswith(ORIG + "/")):
                    self.model[SUB + rel[len(ORIG) :]] = self.model.pop(rel)
        elif kind == "fifo" and self.fifos and index % 2:
            self._step(f"swap fifo back {sorted(self.fifos)}")
            for rel, data in sorted(self.fifos.items()):
                if self.model.get(rel) == ("fifo", None):
                    os.unlink(self.root / rel)
                    (self.root / rel).write_bytes(data)
                    self.set_file(rel, data)
            self.fifos.clear()
        elif kind == "fifo":
            rel = self.pick(index)
            self._step(f"swap fifo {rel}")
            self.fifo_now(rel)
        elif kind == "hardlink":
            self._swap_hardlink(index)
        elif kind == "state-link":
            self._swap_state()
        else:
            alias = "cfg" if kind == "alias-cfg" else "leak.txt"
            self._step(f"swap {kind}")
            if alias in self.model:
                os.unlink(self.root / alias)
                del self.model[alias]
            else:
                os.symlink("config" if alias == "cfg" else SECRET, self.root / alias)
                self.model[alias] = ("link", "config" if alias == "cfg" else SECRET)
        self.check_tree(dict(self.model), f"after the swap {kind}")

    def _swap_hardlink(self, index: int) -> None:
        """``ln root/FILE outside/hard.txt`` (an edit written in place would change the outside
        folder; a rename leaves it be), or its removal."""
        hard = self.outside / HARD
        if self.hard_ino is not None and index % 2:
            self._step("swap hardlink removed")
            os.unlink(hard)
            self.outside_model.pop(HARD, None)
            self.hard_ino = None
            return
        rel = self.pick(index)
        data = data_of(self.model.get(rel))
        self._step(f"swap hardlink {rel}")
        if data is None:
            return
        with contextlib.suppress(FileNotFoundError):
            os.unlink(hard)
        os.link(self.root / rel, hard)
        self.hard_ino = os.stat(hard).st_ino
        self.outside_model[HARD] = ("file", data)

    def _swap_state(self) -> None:
        """``mv .sleuth .sleuth.orig; ln -s ../outside/state .sleuth``, or back."""
        state, orig = self.root / ".sleuth", self.root / STATE_ORIG
        self._step(f"swap state-link {'back' if self.state_swapped else ''}")
        if self.state_swapped:
            os.unlink(state)
            os.rename(orig, state)
            self.state_swapped = False
        elif state.is_dir() and not state.is_symlink() and not orig.exists():
            os.rename(state, orig)
            os.symlink("../outside/state", state)
            self.state_swapped = True


def safety_machine(report: Report, *, watch: bool) -> type[SafetyMachine]:
    """A ``SafetyMachine`` class bound to ``report``, on a workbench with or without a watcher."""
    name = "SafetyMachineWatch" if watch else "SafetyMachineCold"
    return type(name, (SafetyMachine,), {"report": report, "watch": watch})
