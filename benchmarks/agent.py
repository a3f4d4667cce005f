"""Agent tasks through the MCP server against a grep+read baseline (issue 20, must-show 3 and 4).

A scripted "agent" drives ``sleuth mcp --root COPY`` through the official MCP client
(``mcp.client.stdio``, as ``benchmarks/startup.py`` and ``tests/e2e/conftest.py`` start it) and
does five tasks on each of three real sdists (``benchmarks/agent_tasks.py``: requests 2.32.3,
click 8.1.7, httpx 0.27.2, none of them a test fixture), every task on a fresh copy of the
unpacked tree. For every task it prints the tool calls, the bytes of *text content* the model
reads (UTF-8, every tool answer of the task; structured content is not read, except where the
text lacks what the agent needs, and then its JSON bytes are counted too and the row says so),
whether the outcome matches the ground truth, and the same figures for a grep+read baseline.
Targets per task: correct; text bytes <= 0.3x the baseline's; no more calls than the baseline.
It also prints the MCP ``initialize`` time (spawn -> answer, median of ``--init-runs`` fresh
servers; target < 0.5 s) and the size of ``tools/list`` (names, descriptions and input schemas
of all tools, compact JSON; target <= 6 KB).

Targets, chosen per sdist by fixed rules on ``ast-grep``/``rg`` output (never by sleuth):

* **F** (tasks 1-3): among the package's public module-level functions whose name is declared
  once in the tree (no other ``def``/``class`` of that name) and whose every word occurrence in
  the tree (``rg -w``, all files) is a Python identifier token (ast-grep ``kind: identifier``),
  used in two files or more: the one with the most identifier tokens (ties: the name).
* **G** (task 4): among the same unique public functions, the one with the most calls
  ``G($A, $B)`` (at least 3, both arguments positional in every call, none nested, second
  parameter an ordinary one); ties: more files, then the name. Its second parameter is ``P``.
* **hubs** (task 5): the package's five public module-level declarations (declared once) whose
  name occurs as an identifier in the most other files.

What the sleuth agent does (its only input is the text of each answer, parsed as a model
reads it: ``path:line:col #n`` match lines, ``SEARCH#H`` ids, ``id=...``, ``next_cursor``;
every search passes ``context=0``, as a terse agent does: the tool's default is 1):

1. **definition** of F (goal: its location and its whole text): ``search symbols:F``; then
   ``search symbol:#ID`` with the id shown; if that text is cut short (a line ending in ``…``),
   ``read SEARCH#H:1:match``. Correct: the ``symbols:`` hit is F's ``def`` line and the text read
   holds the definition's last line.
2. **uses** of F (goal: every location): ``search symbols:F navigation=references
   output=locations`` (every page; the goal is where, not the lines' text). Correct: its ``(path, line)`` set equals that of every identifier token of F
   (ast-grep, the definition included).
3. **rename** F to ``F_v2``: ``search symbols:F``, then ``rename SEARCH#H:1:match``. Correct:
   every file equals the original with every identifier token of F replaced (nothing else
   changed, no file added or removed) and every edited file compiles.
4. **keyword argument**: every call ``G(a, b)`` becomes ``G(a, P=b)``: ``search 'ast:G($A,
   $B)'``, then ``insert`` ``P=`` at each capture ``RESULT#H:n:B``. A capture reference goes
   stale once its file changes, so the agent edits one call per file, searches again, and so
   on (searches = the most calls in one file). When a text shows an all-matches capture
   reference (``RESULT#H:all:B``) the agent inserts through it once instead. Capture references
   missing from the text are taken from structured content (its bytes counted). Correct: every
   file equals the original with ``P=`` inserted before each ast-grep capture ``B``; compiles.
5. **orient**: ``search graph: limit=10 context=0`` (the ranked declarations). Correct: at
   least three of the five hubs are named in the text read.

The grep+read baseline (``agent_tasks.Baseline``; rg's output as a shell shows it, reads as
``cat -n`` lines of 40-line windows, an edit answering one line, one edit call per file):

1. ``rg -n 'def F\\b'``, then 40-line reads from the ``def`` line until its last line is shown.
2. ``rg -n -w F``.
3. ``rg -n -w F``, a 40-line window centred on each hit not inside an earlier window, one edit
   per file to change.
4. ``rg -n '\\bG\\('``, the same windows, one edit per file to change.
5. ``rg --files``, the README's first 40 lines, the package's ``__init__.py`` whole.

The baseline's edits are not executed: it is "correct" when its reads showed every location
of the ground truth (and, for orientation, the hub criterion holds on its text).

Usage::

    python -m benchmarks.agent               # all sdists, plain table
    python -m benchmarks.agent --markdown    # the table for RESULTS.md
    python -m benchmarks.agent --only requests --task rename --show   # print each answer
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.agent_tasks import (
    HUBS_NEEDED,
    SDISTS,
    WINDOW,
    Baseline,
    Cost,
    Sdist,
    Targets,
    check_tree,
    hub_names_seen,
    keyword_edits,
    rename_edits,
    sdist_tree,
    select_targets,
)

REPO = Path(__file__).resolve().parents[1]
TASKS = ("definition", "uses", "rename", "keyword", "orient")
BYTES_TARGET = 0.3
INIT_TARGET_S = 0.5
TOOLS_TARGET_BYTES = 6 * 1024

# -- reading answers the way a model does -------------------------------------------------------

_RESULT = re.compile(r"\b(SEARCH#[0-9a-f]{8})\b")
# path:line:col #n  text   (the MCP text of a search)
_HIT_MCP = re.compile(
    r"^(?P<path>\S[^\n]*?):(?P<line>\d+):(?P<col>\d+) #(?P<n>\d+)\b ?(?P<rest>.*)$"
)
# #n path:line:col  text   (the CLI's symbols: lines)
_HIT_SYM = re.compile(r"^#(?P<n>\d+) (?P<path>\S+?):(?P<line>\d+):(?P<col>\d+)\b ?(?P<rest>.*)$")
# #n  line:col: text       (the CLI's grouped lines, under a path line)
_HIT_GROUPED = re.compile(r"^#(?P<n>\d+)\s+(?P<line>\d+):(?P<col>\d+):? ?(?P<rest>.*)$")
# #n path: line:col line:col ...   (output="locations": a file's matches on one line)
_HIT_LOCATIONS = re.compile(r"^#(?P<n>\d+) (?P<path>\S[^\n]*?): (?P<where>\d+:\d+(?: \d+:\d+)*)$")
_CURSOR = re.compile(r"(?:next_cursor:|--cursor)\s+(\S+)")
_CAPTURE = re.compile(r"\bRESULT#([0-9a-f]{8}):(\d+|all):([A-Z_][A-Z0-9_]*)\b")


@dataclass(frozen=True)
class Hit:
    n: int
    path: str
    line: int
    rest: str


def parse_hits(text: str) -> list[Hit]:
    """The numbered matches of a search answer, in any of the renderings sleuth has used."""
    hits: list[Hit] = []
    path: str | None = None
    for line in text.splitlines():
        located = _HIT_LOCATIONS.match(line)
        if located:
            for k, where in enumerate(located["where"].split()):
                number = int(where.split(":")[0])
                hits.append(Hit(int(located["n"]) + k, located["path"], number, ""))
            continue
        m = _HIT_MCP.match(line) or _HIT_SYM.match(line)
        if m:
            hits.append(Hit(int(m["n"]), m["path"], int(m["line"]), m["rest"]))
            continue
        g = _HIT_GROUPED.match(line)
        if g and path is not None:
            hits.append(Hit(int(g["n"]), path, int(g["line"]), g["rest"]))
        elif line and not line[0].isspace() and " " not in line.strip() and "#" not in line:
            path = line.strip()
    return hits


@dataclass
class Answer:
    tool: str
    text: str
    structured: dict[str, Any] | None
    error: bool


@dataclass
class Agent:
    """Counts the calls and the text bytes a model reads through one MCP session."""

    session: Any
    show: bool = False
    cost: Cost = field(default_factory=Cost)
    texts: list[str] = field(default_factory=list)

    async def call(self, tool: str, **args: Any) -> Answer:
        res = await self.session.call_tool(tool, args)
        text = "".join(c.text for c in res.content if getattr(c, "type", None) == "text")
        self.cost.calls += 1
        self.cost.bytes += len(text.encode())
        self.texts.append(text)
        if self.show:
            print(f"  -> {tool} {json.dumps(args)}\n{_indent(text)}", file=sys.stderr)
        return Answer(tool, text, res.structured_content, bool(res.is_error))

    def structured(self, answer: Answer, why: str) -> dict[str, Any]:
        """The answer's structured content, counted as read (the text lacked ``why``)."""
        data = answer.structured or {}
        self.cost.bytes += len(json.dumps(data, ensure_ascii=False).encode())
        note = f"{why} not in the text: read from structuredContent (its JSON counted)"
        if note not in self.cost.notes:
            self.cost.notes.append(note)
        return data

    async def search_all(self, query: str, **opts: Any) -> tuple[str | None, list[Hit], Answer]:
        """Every page of a search: (result id, hits, first answer), without context lines (the
        agent asks for none: the match lines and captures say what it needs)."""
        opts.setdefault("context", 0)
        first = answer = await self.call("search", query=query, **opts)
        rid = _result_id(answer.text)
        hits = parse_hits(answer.text)
        while not answer.error and (cursor := _CURSOR.search(answer.text)):
            answer = await self.call("search", query=query, cursor=cursor.group(1), **opts)
            hits += parse_hits(answer.text)
        return rid, hits, first

    @property
    def text(self) -> str:
        return "\n".join(self.texts)


def _result_id(text: str) -> str | None:
    m = _RESULT.search(text)
    return m.group(1) if m else None


def _indent(text: str) -> str:
    return "\n".join("     " + line for line in text.splitlines())


def _fail(agent: Agent, answer: Answer) -> bool:
    if answer.error:
        agent.cost.notes.append(f"{answer.tool} failed: {answer.text[:200]}")
    return answer.error


# -- the sleuth agent's tasks -------------------------------------------------------------------


async def sleuth_definition(agent: Agent, t: Targets, _orig: Path, _copy: Path) -> bool:
    f = t.function
    rid, hits, first = await agent.search_all(f"symbols:{f.name}")
    if _fail(agent, first) or not hits:
        return False
    hit = hits[0]
    found = (hit.path, hit.line) == (f.path, f.line)
    if not found:
        agent.cost.notes.append(f"first symbols: hit {hit.path}:{hit.line}")
    sid = re.search(r"\bid=([0-9a-f]{12})\b", hit.rest)
    if sid is None:
        agent.cost.notes.append("no declaration id in the symbols: text")
        return False
    body = await agent.call("search", query=f"symbol:#{sid.group(1)}", context=0)
    if _fail(agent, body):
        return False
    seen = body.text
    if any(line.rstrip().endswith("…") for line in body.text.splitlines()):
        rid2 = _result_id(body.text)
        read = await agent.call("read", target=f"{rid2}:1:match")
        if _fail(agent, read):
            return False
        seen = read.text
        agent.cost.notes.append("symbol:# text cut short: read its match")
    whole = f.last_line in seen
    if not whole:
        agent.cost.notes.append("the definition's last line was not shown")
    return found and whole


async def sleuth_uses(agent: Agent, t: Targets, _orig: Path, _copy: Path) -> bool:
    _rid, hits, first = await agent.search_all(
        f"symbols:{t.function.name}", navigation="references", output="locations"
    )
    if _fail(agent, first):
        return False
    got = {(h.path, h.line) for h in hits}
    want = {(u.path, u.line) for u in t.uses}
    if got != want:
        agent.cost.notes.append(f"missing {sorted(want - got)[:3]}, extra {sorted(got - want)[:3]}")
    return got == want


async def sleuth_rename(agent: Agent, t: Targets, orig: Path, copy: Path) -> bool:
    rid, hits, first = await agent.search_all(f"symbols:{t.function.name}")
    if _fail(agent, first) or not hits or rid is None:
        return False
    answer = await agent.call("rename", ref=f"{rid}:{hits[0].n}:match", new_name=t.new_name)
    if _fail(agent, answer):
        return False
    problems = check_tree(orig, copy, rename_edits(t))
    agent.cost.notes += problems[:3]
    return not problems


async def sleuth_keyword(agent: Agent, t: Targets, orig: Path, copy: Path) -> bool:
    g, text = t.callee.name, f"{t.param}="
    query = f"ast:{g}($A, $B)"
    edited: dict[str, int] = {}
    while True:
        before = len(agent.texts)
        rid, hits, answer = await agent.search_all(query)
        if _fail(agent, answer) or rid is None:
            return False
        pages = "\n".join(agent.texts[before:])
        shown = {
            (int(n) if n != "all" else 0): f"RESULT#{h}:{n}:{name}"
            for h, n, name in _CAPTURE.findall(pages)
            if name == "B"
        }
        if 0 in shown:  # an all-matches capture reference: one edit
            done = await agent.call("insert", ref=shown[0], text=text)
            if _fail(agent, done):
                return False
            break
        if not all(h.n in shown for h in hits):
            data = agent.structured(answer, "capture references")
            shown = {
                m["n"]: m["captures"]["B"]["ref"]
                for m in data.get("matches", [])
                if m.get("captures") and "B" in m["captures"]
            }
        per_file: dict[str, list[Hit]] = {}
        for h in hits:
            per_file.setdefault(h.path, []).append(h)
        remaining = False
        for path, file_hits in per_file.items():
            k = edited.get(path, 0)
            if k >= len(file_hits):
                continue
            done = await agent.call("insert", ref=shown[file_hits[k].n], text=text)
            if _fail(agent, done):
                return False
            edited[path] = k + 1
            remaining |= k + 1 < len(file_hits)
        if not remaining:
            break
    problems = check_tree(orig, copy, keyword_edits(t))
    agent.cost.notes += problems[:3]
    return not problems


async def sleuth_orient(agent: Agent, t: Targets, _orig: Path, _copy: Path) -> bool:
    answer = await agent.call("search", query="graph:", limit=10, context=0)
    if _fail(agent, answer):
        return False
    seen = hub_names_seen(answer.text, t.hubs)
    agent.cost.notes.append(f"hubs named: {len(seen)}/{len(t.hubs)}")
    return len(seen) >= HUBS_NEEDED


SLEUTH: dict[str, Callable[[Agent, Targets, Path, Path], Awaitable[bool]]] = {
    "definition": sleuth_definition,
    "uses": sleuth_uses,
    "rename": sleuth_rename,
    "keyword": sleuth_keyword,
    "orient": sleuth_orient,
}


# -- the baseline's tasks -----------------------------------------------------------------------


def baseline(task: str, tree: Path, sd: Sdist, t: Targets) -> Cost:
    b = Baseline(tree)
    f = t.function
    if task == "definition":
        hits = b.rg("-n", rf"def {f.name}\b")
        found = (f.path, f.line) in hits
        offset = f.line
        while found and not b.covered(f.path, f.line, f.end_line):
            b.read(f.path, offset, WINDOW)
            offset += WINDOW
        b.cost.correct = found
    elif task == "uses":
        hits = b.rg("-n", "-w", f.name)
        b.cost.correct = {(u.path, u.line) for u in t.uses} <= set(hits)
    elif task in ("rename", "keyword"):
        name = f.name if task == "rename" else t.callee.name
        hits = b.rg("-n", "-w", name) if task == "rename" else b.rg("-n", rf"\b{name}\(")
        b.read_around(hits)
        where = t.uses if task == "rename" else t.calls
        for path in sorted({n.path for n in where}):
            b.edit(path)
        b.cost.correct = {(n.path, n.line) for n in where} <= set(hits)
    elif task == "orient":
        b.rg("--files")
        readmes = sorted(p.name for p in tree.glob("README*"))
        if readmes:
            b.read(readmes[0], 1, WINDOW)
        b.read(f"{sd.package}/__init__.py")
        seen = hub_names_seen(b.text, t.hubs)
        b.cost.notes.append(f"hubs named: {len(seen)}/{len(t.hubs)}")
        b.cost.correct = len(seen) >= HUBS_NEEDED
    return b.cost


# -- running ------------------------------------------------------------------------------------


def _server_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SLEUTH_DEBUG")}
    env["PYTHONPATH"] = str(REPO)
    return env


@asynccontextmanager
async def mcp_session(root: Path) -> AsyncIterator[tuple[Any, float]]:
    """An initialised session with ``sleuth mcp --root ROOT`` and the initialize time."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "sleuth", "mcp", "--root", str(root)],
        env=_server_env(),
        cwd=root,
    )
    t0 = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session, time.perf_counter() - t0


@dataclass
class Row:
    sdist: str
    task: str
    target: str
    sleuth: Cost
    base: Cost
    seconds: float

    @property
    def ratio(self) -> float:
        return self.sleuth.bytes / self.base.bytes if self.base.bytes else float("inf")

    @property
    def missed(self) -> list[str]:
        out = []
        if not self.sleuth.correct:
            out.append("correct")
        if self.ratio > BYTES_TARGET:
            out.append("bytes")
        if self.sleuth.calls > self.base.calls:
            out.append("calls")
        return out


def _target(task: str, t: Targets) -> str:
    if task == "keyword":
        return f"{t.callee.name}(a, {t.param}=b) x{len(t.calls)}"
    if task == "orient":
        return ", ".join(t.hubs)
    if task == "rename":
        return f"{t.function.name} -> {t.new_name}"
    return t.function.name


async def run_task(task: str, sd: Sdist, tree: Path, t: Targets, show: bool) -> Row:
    work = Path(tempfile.mkdtemp(prefix=f"sleuth-agent-{sd.name}-"))
    copy = work / tree.name
    try:
        shutil.copytree(tree, copy, symlinks=True)
        t0 = time.perf_counter()
        agent = Agent(None, show=show)
        try:
            async with mcp_session(copy) as (session, _init):
                agent.session = session
                agent.cost.correct = await SLEUTH[task](agent, t, tree, copy)
        except Exception as exc:  # a server that died: the row says so, the run goes on
            agent.cost.correct = False
            agent.cost.notes.append(f"the session failed: {_first_error(exc)}")
        seconds = time.perf_counter() - t0
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return Row(sd.label, task, _target(task, t), agent.cost, baseline(task, tree, sd, t), seconds)


async def measure_server(tree: Path, runs: int) -> tuple[list[float], dict[str, int], int]:
    """initialize times of ``runs`` fresh servers, tools/list sizes, instructions bytes."""
    work = Path(tempfile.mkdtemp(prefix="sleuth-agent-init-"))
    copy = work / tree.name
    shutil.copytree(tree, copy, symlinks=True)
    times: list[float] = []
    sizes: dict[str, int] = {}
    instructions = 0
    try:
        for i in range(runs + 1):  # run 0 warms the page cache and the workspace state
            from mcp.client.session import ClientSession
            from mcp.client.stdio import StdioServerParameters, stdio_client

            params = StdioServerParameters(
                command=sys.executable,
                args=["-m", "sleuth", "mcp", "--root", str(copy)],
                env=_server_env(),
                cwd=copy,
            )
            t0 = time.perf_counter()
            async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
                init = await session.initialize()
                elapsed = time.perf_counter() - t0
                if i:
                    times.append(elapsed)
                if not sizes:
                    instructions = len((init.instructions or "").encode())
                    listed = await session.list_tools()
                    for tool in listed.tools:
                        one = {
                            "name": tool.name,
                            "description": tool.description,
                            "inputSchema": tool.input_schema,
                        }
                        sizes[tool.name] = len(json.dumps(one, separators=(",", ":")).encode())
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return times, sizes, instructions


def _first_error(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"[:200]


def _yn(ok: bool) -> str:
    return "yes" if ok else "NO"


def print_table(rows: list[Row], markdown: bool) -> None:
    head = [
        "sdist",
        "task",
        "target",
        "calls s/b",
        "text bytes s/b",
        "ratio",
        "correct s/b",
        "targets missed",
        "notes",
    ]
    body = []
    for r in rows:
        notes = "; ".join(r.sleuth.notes + [f"baseline: {n}" for n in r.base.notes])
        body.append(
            [
                r.sdist,
                r.task,
                r.target,
                f"{r.sleuth.calls}/{r.base.calls}",
                f"{r.sleuth.bytes:,}/{r.base.bytes:,}",
                f"{r.ratio:.2f}",
                f"{_yn(r.sleuth.correct)}/{_yn(r.base.correct)}",
                ", ".join(r.missed) or "none",
                notes,
            ]
        )
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for line in body:
            print("| " + " | ".join(c.replace("|", "\\|") for c in line) + " |")
        return
    widths = [max(len(h), *(len(line[i]) for line in body)) for i, h in enumerate(head[:-1])]
    print("  ".join(h.ljust(w) for h, w in zip(head, widths, strict=False)))
    for line in body:
        print("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=False)) + "  " + line[-1])


def main(argv: list[str] | None = None) -> int:
    import anyio

    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    parser.add_argument("--only", action="append", choices=[s.name for s in SDISTS])
    parser.add_argument("--task", action="append", choices=TASKS)
    parser.add_argument("--init-runs", type=int, default=5, help="fresh servers for initialize")
    parser.add_argument("--show", action="store_true", help="print every answer (stderr)")
    args = parser.parse_args(argv)
    sdists = [s for s in SDISTS if not args.only or s.name in args.only]
    tasks = [t for t in TASKS if not args.task or t in args.task]
    started = time.time()
    rows: list[Row] = []
    trees: list[Path] = []
    for sd in sdists:
        tree = sdist_tree(sd)
        trees.append(tree)
        t = select_targets(tree, sd)
        print(f"# {sd.label}: {tree}", file=sys.stderr)
        for task in tasks:
            row = anyio.run(run_task, task, sd, tree, t, args.show)
            print(f"#   {task}: {row.seconds:.1f} s", file=sys.stderr)
            rows.append(row)
    times, sizes, instructions = anyio.run(measure_server, trees[0], args.init_runs)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started))
    print(f"sleuth agent tasks, {when}, {time.time() - started:.0f} s, load {load}")
    print()
    print_table(rows, args.markdown)
    met = sum(not r.missed for r in rows)
    print()
    print(f"tasks meeting every target: {met}/{len(rows)}")
    total = sum(sizes.values())
    init = statistics.median(times)
    print()
    print(
        f"initialize (spawn -> answer, median of {len(times)} fresh servers on {trees[0].name}): "
        f"{init * 1000:.0f} ms (min {min(times) * 1000:.0f} ms; target < "
        f"{INIT_TARGET_S * 1000:.0f} ms: {'met' if init < INIT_TARGET_S else 'MISSED'})"
    )
    print(
        f"tools/list ({len(sizes)} tools; name + description + inputSchema, compact JSON): "
        f"{total:,} bytes (target <= {TOOLS_TARGET_BYTES:,}: "
        f"{'met' if total <= TOOLS_TARGET_BYTES else 'MISSED'}); per tool: "
        + ", ".join(f"{k} {v}" for k, v in sizes.items())
    )
    print(f"initialize instructions: {instructions:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
