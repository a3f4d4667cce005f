"""The examples in ``docs/*.md`` are executed, and their output must match (docs/README.md).

A page's fenced blocks are read in order:

- ```` ```files ```` starts a fresh workspace holding the files it lists, each introduced by a
  ``==> PATH <==`` line (the format of ``head a b``); ``==> PATH (bytes) <==`` takes Python
  bytes escapes (``\\xe9``, ``\\x00``). The blocks after it run in that workspace.
- ```` ```console ```` holds ``$ COMMAND`` lines, each followed by the output it prints.
  ``sleuth ...`` runs in-process (``sleuth.cli.main``), exactly as the command line does;
  ``printf 'TEXT' | sleuth ...`` feeds stdin, ``2>/dev/null`` drops stderr, ``; echo $?``
  prints the exit code (a command that fails without it fails the test), and ``cat PATH``,
  ``printf 'TEXT' >> PATH`` / ``> PATH`` and ``rm PATH`` read and change the workspace.
- ```` ```pycon ```` holds ``>>>`` lines run as an interactive session (one namespace per
  workspace), each followed by what it prints.
- ```` ```mcp ```` holds ``→ REQUEST`` lines (one JSON-RPC message) sent to one ``sleuth mcp``
  process per workspace (started, and initialised, on the page's first such block), each
  followed by ``← ANSWER``.

Matching. Output is compared line by line (trailing blanks ignored). Result ids
(``SEARCH#``/``RESULT#`` + 8 hex digits) and cursors vary from run to run: the id a page shows
stands for the one this run printed at that place, consistently — the same page id always for
the same real id and different page ids for different ones — and a later command using the page
id is given the real one. ``…`` in a line matches any characters, a line holding only ``…`` any
number of lines. The output of a ``--json`` command (and a ``←`` answer) is compared as JSON:
objects must have exactly the keys shown unless one key is ``"…"``, a list ending in ``"…"`` may
go on, the string ``"…"`` stands for any value. Everything else must be equal.

Run ``python tests/docs/test_examples.py --update docs/PAGE.md`` to write each failing
expected output back into the page from this run (then review the diff and trim it).
"""

from __future__ import annotations

import codecs
import contextlib
import io
import json
import os
import re
import select
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from sleuth import cli

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES_WITH_EXAMPLES = ("query.md", "json.md", "references.md", "errors.md", "faces.md", "edits.md")
"""Pages that must hold executed examples (the test fails if one has none)."""

ELLIPSIS = "…"
_ID = re.compile(r"(?P<kind>SEARCH|RESULT)#(?P<hex>[0-9a-f]{8})(?![0-9a-f])")
_CURSOR = re.compile(r"U0VBUkNI[A-Za-z0-9_-]{16,}")  # base64url of "SEARCH#…": a next_cursor
_VOLATILE = re.compile(rf"{_ID.pattern}|(?P<cursor>{_CURSOR.pattern})|(?P<any>{ELLIPSIS})")
SERVER_EXTENSIONS = {
    **dict.fromkeys((".py", ".pyi"), "python"),
    **dict.fromkeys((".js", ".jsx", ".mjs", ".cjs"), "javascript"),
    **dict.fromkeys((".ts", ".tsx", ".mts", ".cts"), "typescript"),
    **dict.fromkeys((".c", ".h"), "c"),
    **dict.fromkeys((".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++", ".ipp"), "cpp"),
    ".go": "go",
    ".rs": "rust",
}
"""Files a language server would be started for (``sleuth/lsp_bridge/servers.py``): symbol
examples run where there are none."""
SERVER_QUERIES = ("symbols:", "symbol:#", "graph:#")


# --- the page ----------------------------------------------------------------------------


@dataclass
class Block:
    kind: str
    first: int  # index of the first content line in the page's lines
    lines: list[str]


def read_blocks(lines: list[str]) -> list[Block]:
    """The fenced blocks of a page whose info string is one this test runs."""
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = re.match(r"^(`{3,})(\S*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        fence, kind = m.group(1), m.group(2)
        end = i + 1
        while end < len(lines) and lines[end].rstrip() != fence:
            end += 1
        if kind in ("files", "console", "pycon", "mcp"):
            blocks.append(Block(kind, i + 1, lines[i + 1 : end]))
        i = end + 1
    return blocks


def files_of(block: Block) -> dict[str, bytes]:
    """``==> PATH <==`` sections; the blank line before the next header separates them."""
    files: dict[str, list[str]] = {}
    raw: set[str] = set()
    current: str | None = None
    for line in block.lines:
        m = re.fullmatch(r"==> (.+?)( \(bytes\))? <==", line)
        if m:
            current = m.group(1)
            files[current] = []
            if m.group(2):
                raw.add(current)
        elif current is None:
            if line.strip():
                raise AssertionError(f"text before the first ==> PATH <== header: {line!r}")
        else:
            files[current].append(line)
    out: dict[str, bytes] = {}
    for path, body in files.items():
        if body and body[-1] == "":
            body = body[:-1]
        text = "".join(f"{line}\n" for line in body)
        if path in raw:
            out[path] = codecs.escape_decode(text.encode("utf-8"))[0]
        else:
            out[path] = text.encode("utf-8")
    return out


@dataclass
class Step:
    """One command (or request, or statement) and the output the page shows for it."""

    command: str
    expected: list[str]
    line: int  # 1-based line of the command in the page
    out_first: int = 0  # index of the first expected line
    out_end: int = 0


def console_steps(block: Block, prompt: str = "$ ", more: str | None = None) -> list[Step]:
    steps: list[Step] = []
    for k, line in enumerate(block.lines):
        at = block.first + k
        if line.startswith(prompt):
            steps.append(Step(line[len(prompt) :], [], at + 1, at + 1, at + 1))
        elif (
            more is not None and (line + " ").startswith(more) and steps and not steps[-1].expected
        ):
            steps[-1].command += "\n" + line[len(more) :]
            steps[-1].out_first = steps[-1].out_end = at + 1
        elif steps:
            steps[-1].expected.append(line)
            steps[-1].out_end = at + 1
        elif line.strip():
            raise AssertionError(f"output before the first {prompt.strip()} line: {line!r}")
    return steps


# --- matching ----------------------------------------------------------------------------


@dataclass
class Ids:
    """Page ids <-> the ids this run printed: one to one."""

    real: dict[str, str] = field(default_factory=dict)  # page token -> real token
    page: dict[str, str] = field(default_factory=dict)  # real token -> page token

    def copy(self) -> Ids:
        return Ids(dict(self.real), dict(self.page))

    def bind(self, page: str, real: str) -> bool:
        if self.real.get(page, real) != real or self.page.get(real, page) != page:
            return False
        self.real[page] = real
        self.page[real] = page
        return True

    def align(self, expected: list[str], actual: str) -> None:
        """After a mismatch: bind the page's ids to the output's, in order of appearance, when
        both show as many (so later commands still find their results)."""

        def tokens(text: str) -> list[str]:
            found = []
            for m in _VOLATILE.finditer(text):
                if m.group("any") is None:
                    found.append(m.group("hex") or m.group(0))
            return list(dict.fromkeys(found))

        page, real = tokens("\n".join(expected)), tokens(actual)
        if len(page) == len(real):
            for p, r in zip(page, real, strict=True):
                if p not in self.real and r not in self.page:
                    self.bind(p, r)

    def to_real(self, text: str) -> str:
        """A command as it is run: each page id bound so far replaced by its real id."""

        def sub(m: re.Match[str]) -> str:
            token = m.group(0)
            if token == ELLIPSIS:
                return token
            key = m.group("hex") or token
            real = self.real.get(key)
            if real is None:
                self.bind(key, key)  # an id no output showed (e.g. a made-up one): as written
                return token
            return token.replace(key, real)

        return _VOLATILE.sub(sub, text)

    def to_page(self, text: str) -> str:
        """Output as the page would show it: each real id bound so far replaced by its page id."""

        def sub(m: re.Match[str]) -> str:
            token = m.group(0)
            if token == ELLIPSIS:
                return token
            key = m.group("hex") or token
            page = self.page.get(key)
            if page is None:
                self.bind(key, key)
                return token
            return token.replace(key, page)

        return _VOLATILE.sub(sub, text)


def match_text(expected: str, actual: str, ids: Ids) -> bool:
    """One line (or JSON string): literal text, ``…`` wildcards and ids bound one to one."""
    pattern: list[str] = []
    slots: list[str] = []  # the page token of each capture group, in order
    pos = 0
    for m in _VOLATILE.finditer(expected):
        pattern.append(re.escape(expected[pos : m.start()]))
        pos = m.end()
        if m.group("any"):
            pattern.append(".*?")
        elif m.group("cursor"):
            slots.append(m.group(0))
            pattern.append(f"({_CURSOR.pattern})")
        else:
            slots.append(m.group("hex"))
            pattern.append(f"{m.group('kind')}#([0-9a-f]{{8}})(?![0-9a-f])")
    pattern.append(re.escape(expected[pos:]))
    found = re.fullmatch("".join(pattern), actual, re.DOTALL)
    if found is None:
        return False
    trial = ids.copy()
    for page, real in zip(slots, found.groups(), strict=True):
        if not trial.bind(page, real):
            return False
    ids.real, ids.page = trial.real, trial.page
    return True


def match_lines(expected: list[str], actual: list[str], ids: Ids) -> bool:
    """Line by line, a line holding only ``…`` standing for any number of lines."""
    exp = [line.rstrip() for line in expected]
    act = [line.rstrip() for line in actual]
    while exp and not exp[-1]:
        exp.pop()
    while act and not act[-1]:
        act.pop()

    def go(i: int, j: int, state: Ids) -> Ids | None:
        if i == len(exp):
            return state if j == len(act) else None
        if exp[i] == ELLIPSIS:
            for k in range(j, len(act) + 1):
                found = go(i + 1, k, state.copy())
                if found is not None:
                    return found
            return None
        if j == len(act) or not match_text(exp[i], act[j], state):
            return None
        return go(i + 1, j + 1, state)

    found = go(0, 0, ids.copy())
    if found is None:
        return False
    ids.real, ids.page = found.real, found.page
    return True


def match_json(expected: Any, actual: Any, ids: Ids) -> bool:
    """``expected`` as shown on the page against the real JSON value."""
    if expected == ELLIPSIS:
        return True
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return False
        keys = set(expected) - {ELLIPSIS}
        if not keys <= set(actual) or (ELLIPSIS not in expected and keys != set(actual)):
            return False
        return all(match_json(expected[k], actual[k], ids) for k in expected if k != ELLIPSIS)
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return False
        open_end = bool(expected) and expected[-1] == ELLIPSIS
        items = expected[:-1] if open_end else expected
        if len(actual) < len(items) or (not open_end and len(actual) != len(items)):
            return False
        return all(match_json(e, a, ids) for e, a in zip(items, actual, strict=False))
    if isinstance(expected, str):
        return isinstance(actual, str) and match_text(expected, actual, ids)
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    return bool(expected == actual)


def split_json(lines: list[str]) -> tuple[Any, list[str]] | None:
    """The JSON value the lines start with, and the lines after it (None: not JSON)."""
    text = "\n".join(lines)
    start = len(text) - len(text.lstrip())
    if not text[start:].startswith(("{", "[")):
        return None
    try:
        value, end = json.JSONDecoder().raw_decode(text, start)
    except json.JSONDecodeError as exc:
        raise AssertionError(f"the expected JSON does not parse: {exc}") from None
    rest = text[end:].split("\n")
    return value, [line for line in rest[1:]] if rest and not rest[0].strip() else rest


# --- running -----------------------------------------------------------------------------


class _Terminal(io.BytesIO):
    """stdin when nothing is piped: a terminal, which ``replace`` refuses to wait on."""

    def isatty(self) -> bool:
        return True


@dataclass
class Output:
    stdout: str
    stderr: str
    code: int


def printf_text(fmt: str) -> str:
    """What ``printf FMT`` (no arguments) prints."""
    escapes = {"n": "\n", "t": "\t", "\\": "\\", "'": "'", '"': '"', "0": "\0", "r": "\r"}
    out: list[str] = []
    i = 0
    while i < len(fmt):
        ch = fmt[i]
        if ch == "\\" and i + 1 < len(fmt) and fmt[i + 1] in escapes:
            out.append(escapes[fmt[i + 1]])
            i += 2
        elif ch == "%" and fmt[i + 1 : i + 2] == "%":
            out.append("%")
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def run_sleuth(args: list[str], stdin: bytes | None) -> Output:
    out, err = io.StringIO(), io.StringIO()
    stream = io.BytesIO(stdin) if stdin is not None else _Terminal()
    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(stream, encoding="utf-8")
    try:
        code = cli.main(args, stdout=out, stderr=err)
    finally:
        sys.stdin = saved
    return Output(out.getvalue(), err.getvalue(), code)


def _inside(root: Path, rel: str) -> Path:
    target = (root / rel).resolve()
    assert target.is_relative_to(root.resolve()), f"{rel} leaves the workspace"
    return target


def would_start_server(root: Path) -> str | None:
    """A file a language server would be started for, unless the workspace configures that
    language's server (``[tool.sleuth.servers]``) as a command that is not installed."""
    config: dict[str, Any] = {}
    for name, table in (("pyproject.toml", ("tool", "sleuth")), (".sleuth.toml", ())):
        if (root / name).is_file():
            data: Any = tomllib.loads((root / name).read_text("utf-8"))
            for key in table:
                data = data.get(key, {})
            config.update(data.get("servers", {}))
    for path in sorted(root.rglob("*")):
        lang = SERVER_EXTENSIONS.get(path.suffix)
        if lang is None or ".sleuth" in path.parts:
            continue
        command = config.get(lang)
        argv = shlex.split(command) if isinstance(command, str) else command
        if not argv or shutil.which(argv[0]) is not None or os.path.exists(argv[0]):
            return path.name
    return None


def run_command(command: str, root: Path) -> tuple[Output, bool, bool]:
    """(output, whether it is sleuth's ``--json``, whether ``echo $?`` follows)."""
    show_code = False
    text = command.strip()
    if text.endswith("; echo $?"):
        text, show_code = text[: -len("; echo $?")].rstrip(), True
    drop_stderr = False
    if text.endswith(" 2>/dev/null"):
        text, drop_stderr = text[: -len(" 2>/dev/null")], True
    words = shlex.split(text)
    stdin: bytes | None = None
    if words[:1] == ["printf"] and "|" in words:
        bar = words.index("|")
        assert bar == 2, f"printf takes one argument: {command}"
        stdin = printf_text(words[1]).encode("utf-8")
        words = words[bar + 1 :]
    as_json = False
    if words[:1] == ["sleuth"]:
        args = words[1:]
        if args[:1] == ["rename"] or any(a.startswith(SERVER_QUERIES) for a in args):
            busy = would_start_server(root)
            assert busy is None, (
                f"{command}: would start a language server for {busy}; run symbol examples "
                "in a workspace without such files (or whose configured server is not installed)"
            )
        assert args[:1] not in (["mcp"], ["doctor"]) or "--recover" in args, (
            f"{command}: not run by this test (it depends on the machine)"
        )
        as_json = "--json" in args
        output = run_sleuth(args, stdin)
    elif words[:1] == ["cat"]:
        output = Output("".join(_inside(root, p).read_text("utf-8") for p in words[1:]), "", 0)
    elif words[:1] == ["printf"] and len(words) == 4 and words[2] in (">", ">>"):
        mode = "a" if words[2] == ">>" else "w"
        with _inside(root, words[3]).open(mode, encoding="utf-8", newline="") as fh:
            fh.write(printf_text(words[1]))
        output = Output("", "", 0)
    elif words[:1] == ["rm"] and len(words) == 2:
        _inside(root, words[1]).unlink()
        output = Output("", "", 0)
    else:
        raise AssertionError(f"this test cannot run {command!r}")
    if drop_stderr:
        output.stderr = ""
    return output, as_json, show_code


def check_console(step: Step, root: Path, ids: Ids) -> tuple[bool, str]:
    """Run one ``$`` line; (matched, its real output as the page would show it)."""
    output, as_json, show_code = run_command(ids.to_real(step.command), root)
    assert show_code or output.code == 0, (
        f"exit code {output.code}: write `; echo $?` after the command to show it\n"
        f"{output.stdout}{output.stderr}"
    )
    tail = output.stderr.splitlines() + ([str(output.code)] if show_code else [])
    parsed = split_json(step.expected) if as_json else None
    if as_json and output.stdout.strip():
        actual_json = json.loads(output.stdout)
        ok = parsed is not None and match_json(parsed[0], actual_json, ids)
        ok = ok and parsed is not None and match_lines(parsed[1], tail, ids)
        shown = json.dumps(actual_json, indent=2, ensure_ascii=False).splitlines() + tail
        return ok, "\n".join(shown)
    lines = output.stdout.splitlines() + tail
    return match_lines(step.expected, lines, ids), "\n".join(lines)


class Session:
    """An interactive Python session for ``pycon`` blocks."""

    def __init__(self) -> None:
        self.namespace: dict[str, Any] = {"__name__": "__docs__"}

    def run(self, source: str) -> str:
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            try:
                code = compile(source + "\n", "<docs>", "single")
                exec(code, self.namespace)
            except Exception as exc:
                name = type(exc).__module__ + "." + type(exc).__qualname__
                if type(exc).__module__ == "builtins":
                    name = type(exc).__qualname__
                print("Traceback (most recent call last):")
                print("  ...")
                print(f"{name}: {exc}")
        return buffer.getvalue()


class McpServer:
    """``sleuth mcp`` in a workspace, spoken to in JSON-RPC lines."""

    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "sleuth", "mcp"],
            cwd=root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._buffer = b""
        hello = {
            "jsonrpc": "2.0",
            "id": "docs-init",
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "docs", "version": "0"},
            },
        }
        self.ask(json.dumps(hello))
        self.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode("utf-8") + b"\n")
        self.proc.stdin.flush()

    def ask(self, line: str, timeout: float = 60.0) -> Any:
        """Send one request and wait for the answer carrying its id."""
        try:
            rid = json.loads(line).get("id")
        except ValueError:
            rid = None  # not JSON: the answer is a parse error with a null id
        self.send(line)
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while True:
            while b"\n" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\n", 1)
                if raw.strip():
                    message = json.loads(raw)
                    if message.get("id") == rid:
                        return message
            left = deadline - time.monotonic()
            ready, _, _ = select.select([fd], [], [], max(left, 0))
            chunk = os.read(fd, 1 << 16) if ready else b""
            assert chunk, f"sleuth mcp did not answer {line}"
            self._buffer += chunk

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def check_mcp(step: Step, server: McpServer, ids: Ids) -> tuple[bool, str]:
    answer = server.ask(ids.to_real(step.command))
    expected = list(step.expected)
    if expected and expected[0].startswith("← "):
        expected[0] = expected[0][2:]
    parsed = split_json(expected)
    ok = parsed is not None and not any(x.strip() for x in parsed[1])
    ok = ok and parsed is not None and match_json(parsed[0], answer, ids)
    shown = json.dumps(answer, indent=2, ensure_ascii=False)
    return ok, "← " + shown


@dataclass
class Failure:
    step: Step
    actual: str


@contextlib.contextmanager
def in_folder(path: Path) -> Iterator[None]:
    saved = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(saved)


def run_page(page: Path, base: Path) -> tuple[list[Failure], int]:
    """Run every example of ``page`` in order; (failures, number of steps run)."""
    lines = page.read_text("utf-8").split("\n")
    ids = Ids()
    failures: list[Failure] = []
    root: Path | None = None
    session = Session()
    server: McpServer | None = None
    steps = 0

    def check(step: Step, run: Callable[[], tuple[bool, str]]) -> None:
        nonlocal steps
        steps += 1
        try:
            ok, actual = run()
        except AssertionError as exc:
            failures.append(Failure(step, f"(not run: {exc})"))
            return
        if not ok:
            ids.align(step.expected, actual)
            failures.append(Failure(step, ids.to_page(actual)))

    def pycon(step: Step) -> tuple[bool, str]:
        actual = session.run(ids.to_real(step.command))
        return match_lines(step.expected, actual.splitlines(), ids), actual

    try:
        for number, block in enumerate(read_blocks(lines)):
            if block.kind == "files":
                if server is not None:
                    server.close()
                    server = None
                root = base / f"ws{number}"
                root.mkdir()
                for rel, data in files_of(block).items():
                    target = root / rel
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(data)
                session = Session()
                continue
            assert root is not None, f"{page.name}:{block.first}: a block before any files block"
            here = root
            with in_folder(root):
                if block.kind == "console":
                    for step in console_steps(block):
                        check(step, partial(check_console, step, here, ids))
                elif block.kind == "pycon":
                    for step in console_steps(block, ">>> ", "... "):
                        check(step, partial(pycon, step))
                else:
                    if server is None:
                        server = McpServer(root)
                    mcp = server
                    for step in console_steps(block, "→ "):
                        check(step, partial(check_mcp, step, mcp, ids))
    finally:
        if server is not None:
            server.close()
    return failures, steps


def report(page: Path, failures: list[Failure]) -> str:
    parts = []
    for f in failures:
        expected = "\n".join(f.step.expected)
        parts.append(
            f"{page.name}:{f.step.line}: {f.step.command}\n"
            f"--- expected (page)\n{expected}\n--- actual (page ids)\n{f.actual}\n"
        )
    return "\n".join(parts)


# --- the tests ---------------------------------------------------------------------------


def _pages() -> list[Path]:
    return sorted(p for p in DOCS.glob("*.md") if read_blocks(p.read_text("utf-8").split("\n")))


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p.name)
def test_page_examples(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    monkeypatch.delenv("SLEUTH_DEBUG", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    failures, steps = run_page(page, tmp_path)
    assert steps > 0
    assert not failures, report(page, failures)


def test_every_reference_page_has_examples() -> None:
    for name in PAGES_WITH_EXAMPLES:
        blocks = read_blocks((DOCS / name).read_text("utf-8").split("\n"))
        assert any(b.kind == "console" for b in blocks), f"docs/{name} has no console example"


def test_ids_are_bound_one_to_one() -> None:
    ids = Ids()
    assert match_text("SEARCH#00000001:1:match", "SEARCH#abcdef12:1:match", ids)
    assert match_text("RESULT#00000001:1:A", "RESULT#abcdef12:1:A", ids)  # same hex, same id
    assert not match_text("SEARCH#00000001", "SEARCH#99999999", ids)  # bound to another
    assert not match_text("SEARCH#00000002", "SEARCH#abcdef12", ids)  # taken by another
    assert ids.to_real("sleuth read SEARCH#00000001:2:line") == "sleuth read SEARCH#abcdef12:2:line"


def test_changed_output_fails() -> None:
    ids = Ids()
    assert match_lines(["a", "…", "d  …"], ["a", "b", "c", "d  x"], ids)
    assert not match_lines(["a", "b"], ["a", "b", "c"], ids)
    assert not match_lines(["a 1 match"], ["a 2 matches"], ids)
    assert match_json({"a": 1, "…": "…"}, {"a": 1, "b": 2}, ids)
    assert not match_json({"a": 1}, {"a": 1, "b": 2}, ids)
    assert not match_json({"a": [1, "…"]}, {"a": [2, 3]}, ids)
    assert not match_json({"a": True}, {"a": 1}, ids)
    assert match_json({"a": [1, "…"]}, {"a": [1, 3]}, ids)


def heading_anchors(text: str) -> set[str]:
    """GitHub's anchors for the headings of a page (outside fenced blocks)."""
    anchors: set[str] = set()
    fence = False
    for line in text.split("\n"):
        if line.startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"^#{1,6} (.+)$", line)
        if m:
            base = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            anchor, n = base, 0
            while anchor in anchors:
                n += 1
                anchor = f"{base}-{n}"
            anchors.add(anchor)
    return anchors


def test_links_between_pages_resolve() -> None:
    pages = {p.name: p.read_text("utf-8") for p in DOCS.glob("*.md")}
    checked = 0
    for name, text in pages.items():
        prose = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
        for target, anchor in re.findall(r"\]\(([\w.-]*\.md)?(?:#([\w-]+))?\)", prose):
            page = target or name
            assert page in pages, f"{name}: link to missing {page}"
            if anchor:
                assert anchor in heading_anchors(pages[page]), f"{name}: no #{anchor} in {page}"
            checked += 1
    assert checked > 20


def test_files_block() -> None:
    block = Block("files", 0, ["==> a.py <==", "x = 1", "", "==> b.bin (bytes) <==", "\\x00é"])
    assert files_of(block) == {"a.py": b"x = 1\n", "b.bin": b"\x00\xc3\xa9\n"}


# --- writing outputs back (authoring) ----------------------------------------------------


def update(page: Path) -> int:
    """Write each failing step's actual output into ``page``; the number of steps changed."""
    with tempfile.TemporaryDirectory() as base:
        os.environ["NO_COLOR"] = "1"
        failures, _ = run_page(page, Path(base))
    lines = page.read_text("utf-8").split("\n")
    for f in sorted(failures, key=lambda f: f.step.out_first, reverse=True):
        if f.actual.startswith("(not run: "):
            print(f"{page.name}:{f.step.line}: {f.actual}")
            continue
        shown = f.actual.rstrip("\n").split("\n") if f.actual.strip() else []
        lines[f.step.out_first : f.step.out_end] = shown
    page.write_text("\n".join(lines), "utf-8")
    return len(failures)


if __name__ == "__main__":
    if sys.argv[1:2] != ["--update"] or len(sys.argv) < 3:
        sys.exit("usage: python tests/docs/test_examples.py --update docs/PAGE.md ...")
    for name in sys.argv[2:]:
        try:
            print(f"{name}: {update(Path(name))} step(s) written")
        except Exception:
            traceback.print_exc()
