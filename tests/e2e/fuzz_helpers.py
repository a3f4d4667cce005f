"""Shared pieces of the fuzz and race end-to-end tests (issue 15, "Must show" 3 and 4).

* ``SPEC_CODES`` / ``ANSWER_CODES``: the error codes of docs/errors.md, and those a fuzzed call may
  answer (every one but ``internal``).
* ``Outcome`` and ``mcp_call``: one MCP tool call through the official client, classified as a
  result, a tool error carrying a code, a protocol error, or no answer within the hang guard.
* ``RawMcp``: ``sleuth mcp`` driven by hand-written JSON-RPC lines, for what the official client
  refuses to send (lone surrogates: its JSON writer raises and closes the connection).
* ``QueryFuzzer``: a seeded generator of queries, search options, forged references and edit
  texts across every mode prefix and every kind of hostile input the issue lists.
* ``build_fuzz_workspace``: the tiny workspace they run over, with a FIFO, symlinks to outside
  and inside, a symlinked folder, a denied folder, a binary and an undecodable file.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp.client.session import ClientSession

SPEC_CODES = frozenset(
    {
        "invalid_query",
        "invalid_path",
        "not_found",
        "unsupported",
        "stale_reference",
        "unsafe_selection",
        "conflict",
        "server_unavailable",
        "rate_limited",
        "timeout",
        "cancelled",
        "internal",
    }
)
ANSWER_CODES = SPEC_CODES - {"internal"}

HANG_GUARD_S = 60.0
"""No single call may take longer than this: a hang guard, not a speed target (generous, so a
loaded CI machine never trips it; speed is measured in benchmarks/)."""


# --- one MCP call through the official client ----------------------------------------------


@dataclass
class Outcome:
    """How one call was answered.

    ``kind`` is ``ok`` (a result), ``error`` (a tool error; ``code`` is its error code or None
    when it carried none), ``protocol`` (a JSON-RPC error instead of a tool answer), ``hang``
    (no answer within the guard) or ``closed`` (the connection died)."""

    kind: str
    elapsed: float
    code: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    text: str = ""

    @property
    def acceptable(self) -> bool:
        """A result, or a tool error carrying an error code other than ``internal``, in time."""
        if self.elapsed > HANG_GUARD_S:
            return False
        return self.kind == "ok" or (self.kind == "error" and self.code in ANSWER_CODES)


async def mcp_call(
    session: ClientSession, tool: str, arguments: Mapping[str, Any], guard: float = HANG_GUARD_S
) -> Outcome:
    """Call ``tool`` and classify its answer; never raises for what the server does."""
    started = time.perf_counter()
    try:
        with anyio.fail_after(guard):
            result = await session.call_tool(tool, dict(arguments))
    except TimeoutError:
        return Outcome("hang", time.perf_counter() - started)
    except Exception as exc:  # a JSON-RPC error or a dead connection, not a tool answer
        kind = "closed" if "closed" in str(exc).lower() else "protocol"
        return Outcome(kind, time.perf_counter() - started, text=f"{type(exc).__name__}: {exc}")
    elapsed = time.perf_counter() - started
    text = "".join(getattr(block, "text", "") for block in result.content)
    data = result.structured_content or {}
    if not result.is_error:
        return Outcome("ok", elapsed, data=data, text=text)
    error = data.get("error") if isinstance(data, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    if not (isinstance(code, str) and text.startswith(f"error[{code}]")):
        code = None  # a tool error must carry its code in both forms (docs/faces.md#mcp-server)
    return Outcome("error", elapsed, code=code, data=data, text=text)


# --- raw JSON-RPC over stdio ----------------------------------------------------------------


class RawMcp:
    """``sleuth mcp --root ROOT`` spoken to in raw JSON-RPC lines (no client library)."""

    def __init__(self, root: Path, env: Mapping[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "sleuth", "mcp", "--root", str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=dict(env),
        )
        self._buffer = b""
        self.send_line(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "raw-fuzz", "version": "0"},
                    },
                }
            )
        )
        answers = self.collect({0}, time.monotonic() + 30)
        if 0 not in answers:
            raise RuntimeError("sleuth mcp did not answer initialize")
        self.send_line(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def send_line(self, line: str) -> None:
        """Write one JSON-RPC message (``line`` may hold ``\\ud800`` escapes: valid JSON)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode("ascii") + b"\n")
        self.proc.stdin.flush()

    def call_line(self, ident: int, tool: str, arguments: Mapping[str, Any]) -> str:
        """A ``tools/call`` line; ``json.dumps`` escapes a lone surrogate as ``\\udXXX``."""
        return json.dumps(
            {
                "jsonrpc": "2.0",
                "id": ident,
                "method": "tools/call",
                "params": {"name": tool, "arguments": dict(arguments)},
            }
        )

    def collect(self, wanted: set[int], deadline: float) -> dict[int, tuple[float, Any]]:
        """Answers to the ids in ``wanted`` read until all came or ``deadline`` passed."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        got: dict[int, tuple[float, Any]] = {}
        while wanted - set(got):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                break
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break  # the server exited
            self._buffer += chunk
            *lines, self._buffer = self._buffer.split(b"\n")
            for line in lines:
                if not line.strip():
                    continue
                message = json.loads(line)
                if isinstance(message, dict) and isinstance(message.get("id"), int):
                    got[message["id"]] = (time.monotonic(), message)
        return got

    def close(self) -> None:
        assert self.proc.stdin is not None
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)


def raw_answer_code(message: Mapping[str, Any]) -> tuple[str, str | None]:
    """(kind, code) of a raw JSON-RPC answer: ``ok``, ``error`` with its error code, or
    ``protocol`` for a JSON-RPC error object instead of a tool result."""
    if "error" in message:
        return "protocol", None
    result = message.get("result") or {}
    if not result.get("isError"):
        return "ok", None
    structured = result.get("structuredContent") or {}
    error = structured.get("error") if isinstance(structured, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return "error", code if isinstance(code, str) else None


# --- the workspace ----------------------------------------------------------------------------

FUZZ_FILES: dict[str, str | bytes] = {
    "src/app.py": (
        "import json\n\n\ndef get_user(uid):\n    return {'id': uid}\n\n\n"
        "def encode(params):\n    if isinstance(params, (str, bytes)):\n"
        "        params = str(params)\n    return json.dumps(params)\n\n\n"
        "class Handler:\n    def handle(self, uid):\n        user = get_user(uid)\n"
        "        return encode(user)\n"
    ),
    "src/lib.rs": "pub fn get_user(id: u32) -> u32 {\n    id + 1\n}\n\nfn main() {\n"
    '    println!("{}", get_user(1));\n}\n',
    "src/main.go": 'package main\n\nimport "fmt"\n\nfunc getUser(id int) error {\n'
    '\treturn fmt.Errorf("user %d", id)\n}\n',
    "web/app.ts": "import { a, b } from './x';\nexport function getUser(id: number): number "
    "{\n  return id;\n}\n",
    "docs/notes.md": "# Notes 😀\n\nשלום עולם — get_user é e\u0301 \u202etxt\u202c\n"
    "Call `get_user` with an id.\n",
    "crlf.txt": "one\r\ntwo get_user\r\nthree\r\n",
    "data/blob.bin": b"\x00\x01get_user\x00\xff",
    "data/latin1.txt": b"caf\xe9 get_user \xff\xfe\n",
    "secret/keys.py": "API_KEY = 'get_user'\n",
    ".sleuth.toml": 'deny = ["secret/**"]\n',
}
MUTABLE = "src/mut.py"
MUTABLE_TEXT = "def alpha(x):\n    return beta(x)\n\n\ndef beta(y):\n    return y + 1\n"


def build_fuzz_workspace(root: Path, outside: Path) -> None:
    """Write ``FUZZ_FILES`` (plus ``MUTABLE``) under ``root`` and the special entries: a FIFO,
    a symlink to a file outside, one to a file inside, and a symlinked folder."""
    for rel, content in {**FUZZ_FILES, MUTABLE: MUTABLE_TEXT}.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    outside.write_text("def get_user():\n    return 'outside'\n")
    os.mkfifo(root / "pipe.fifo")
    os.mkfifo(root / "src" / "queue.py")  # a FIFO with a source file's name
    os.symlink(outside, root / "link_out.py")
    os.symlink(root / "src" / "app.py", root / "link_in.py")
    os.symlink(root / "src", root / "linkdir")


def restore_workspace(root: Path) -> None:
    """Put every regular file back as ``build_fuzz_workspace`` wrote it (edits undone)."""
    for rel, content in {**FUZZ_FILES, MUTABLE: MUTABLE_TEXT}.items():
        target = root / rel
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        elif target.is_symlink() or (target.exists() and not target.is_file()):
            target.unlink()
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))


# --- the generators ---------------------------------------------------------------------------

# fmt: off
PREFIXES = ("", "", "regex:", "regex:", "files:", "ast:", "ast:", "symbol:#", "graph:", "graph:#",
            "semantic:", "foo:", "REGEX:", " regex:", "regex:(?i)", "files:src/", "ast:$")
WORDS = ("get_user", "getUser", "handler", "Handler", "params", "isinstance", "encode", "json",
         "main", "fn", "def", "return", "uid", "user", "id", "Notes", "שלום", "é", "e\u0301",
         "API_KEY", "outside", "alpha", "beta", "zzz_nothing", "get", "_")
BOOLEAN = (" AND ", " OR ", " NOT ", "AND", "OR", "NOT", " || ", " | ", "|", "(", ")", "((", "))",
           '"', '"get_user"', '"a b"', '""', "NOT NOT", "AND OR", "( )", "()", "\\")
REGEX = ("\\d", "\\w+", "\\s*", "\\b", "[a-z]+", "[^x]", "(?<n>get)", "(?P<n>user)", "(?=a)",
         "(?!a)", "(?<=a)", "(?<!a)", "\\1", "\\k<n>", "a{99999}", "a{1,99999}", "a{2147483648}",
         "(a|b)*", "[", "(", ")", "*", "+?", "(?i)", "(?s).", "\\n", "\\p{L}", "\\p{Greek}",
         "\\pX", "\\p{Nope}", "(?u)", "\\x00", "\\u{10FFFF}", "\\x{110000}", "$", "^", ".*", "a**",
         "(?x)", "(?m)^", "[[:alpha:]]", "[[:nope:]]", "\\Q.\\E", "(?#c)", "\\z", "\\Z", "\\G",
         "(?>a)", "a++", "(?R)", "\\", "[z-a]", "(?<>x)", "(?<1>x)", "{", "}", "{1,", "a{,5}")
AST = ("$A", "$$$ARGS", "$_", "$$$", "$a", "def $F($$$A): $$$B", "get_user($A)", "{$K: $V}",
       "fn $N() { $$$ }", "func $F($$$) error { $$$ }", "class $C:", "$A.$B($$$)", "if $C:",
       "<div>", "$A + $A", "$$$A $$$B", "import { $$$A } from $S", "fmt.Errorf($$$A)",
       "$", "$$", "$$$$", "$1", "$-", "(", "def", ":", "$A = $B", "println!($$$)", "'$A'",
       "\"$A\"", "#", "/* $A */", "$A\n$B", "\t$A")
GLOBS = ("*", "**", "?", "[!a]", "{a,b}", "src/", "*.py", "../", "/etc/passwd", "**/*.rs", "[",
         "\\", "src/**/", "!x", ".*")
UNICODE = ("😀", "👨\u200d👩\u200d👧", "שלום", "\u202e", "\u200f", "e\u0301", "\u0301", "\u200b",
           "\ufeff", "\U0010ffff", "\uffff", "\ufffe", "Ω", "ß", "İ", "\u2028", "\u0085", "𝔘",
           "\x00", "\x01", "\x07", "\x1b[31m", "\x7f", "\r", "\n", "\t", "\x0b", "\x0c", "\r\n")
SURROGATES = ("\ud800", "\udfff", "\udc80", "\ud83d", "a\ud800b", "\udcff\udcfe")
HEX = "0123456789abcdef"

LANGS: tuple[object, ...] = (None, None, None, "python", "py", "rust", "rs", "go", "ts", "tsx",
                             "typescript", "javascript", "PYTHON", "nosuchlang", "", "c++", 3)
OPTION_VALUES: dict[str, tuple[object, ...]] = {
    "limit": (1, 2, 5, 100, 500, 501, 0, -1, 10**12, 2**63, True, False, "10", "lots", 1.5, None),
    "context": (0, 1, 3, 50, -1, 10**9, True, "2", 1.5, None),
    "navigation": ("references", "definitions", "", "REFERENCES", 1, None),
    "case_sensitive": (True, False, "yes", 0, 1, None),
    "selector": ("call", "call_expression", "identifier", "nosuch", "", 7),
    "strictness": ("cst", "smart", "ast", "relaxed", "signature", "template", "bogus", "", 1),
    "depth": (0, 1, 2, -1, 10**9, "2", True, 1.5),
}
PATHS: tuple[object, ...] = (
    "/", "/", "src", "src/app.py", "src/", "./src", "src//app.py", "docs/notes.md", "..",
    "../x", "src/../..", "src/../src", "/etc", "/tmp", "/etc/passwd", "a\x00b", "pipe.fifo",
    "src/queue.py", "link_out.py", "link_in.py", "linkdir", "linkdir/app.py", "secret",
    "secret/keys.py", "missing", "missing/deeper.py", "", " ", "~", "data/blob.bin",
    "data/latin1.txt", ".sleuth", ".sleuth/registry.db", ".git", "crlf.txt", "src/app.py/x",
    "*.py", "src\\app.py", "C:\\x", "\u202esrc", "😀", 5, None, ["src"],
)
# fmt: on


def _hexes(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(HEX) for _ in range(n))


@dataclass
class QueryFuzzer:
    """Seeded generator of hostile inputs.

    ``python_values=False`` leaves out what JSON through the official MCP client cannot carry
    (lone surrogates, bytes).

    ``real_refs`` collects real references seen in earlier answers (fed back by the caller) so
    forged references also mutate real ids."""

    rng: random.Random
    python_values: bool = True
    real_refs: list[str] = field(default_factory=list)
    real_cursors: list[str] = field(default_factory=list)
    real_symbols: list[str] = field(default_factory=list)

    # -- pieces -------------------------------------------------------------------------------

    def _unicode(self) -> str:
        pool = UNICODE + SURROGATES if self.python_values else UNICODE
        return self.rng.choice(pool)

    def _random_chars(self, n: int) -> str:
        rng = self.rng
        out = []
        for _ in range(n):
            roll = rng.random()
            if roll < 0.5:
                out.append(chr(rng.randint(0x20, 0x7E)))
            elif roll < 0.6:
                out.append(chr(rng.randint(0, 0x1F)))
            elif roll < 0.9:
                cp = rng.randint(0x80, 0x10FFFF)
                if 0xD800 <= cp <= 0xDFFF and not self.python_values:
                    cp = 0xFFFD
                out.append(chr(cp))
            else:
                out.append(self._unicode())
        return "".join(out)

    def _huge(self) -> str:
        rng = self.rng
        size = rng.choice((10_000, 70_000, 200_000)) if rng.random() < 0.97 else 1_000_000
        unit = rng.choice(
            (
                "a",
                "(",
                "a|",
                "$A ",
                "get_user ",
                "\\w",
                "é",
                "😀",
                "AND ",
                "[a-",
                "x" * 63 + "\n",
                "\x00",
            )
        )
        return (unit * (size // len(unit) + 1))[:size]

    def atom(self) -> str:
        rng = self.rng
        table = rng.choice((WORDS, WORDS, BOOLEAN, REGEX, REGEX, AST, GLOBS))
        roll = rng.random()
        if roll < 0.10:
            return self._unicode()
        if roll < 0.14:
            return self._random_chars(rng.randint(1, 40))
        return rng.choice(table)

    # -- queries ------------------------------------------------------------------------------

    def query(self) -> str:
        """A query: a prefix (or none) and a body of atoms, sometimes huge or empty."""
        rng = self.rng
        prefix = rng.choice(PREFIXES)
        roll = rng.random()
        if roll < 0.012:
            body = self._huge()
        elif roll < 0.03:
            body = ""
        elif prefix == "symbol:#" and self.real_symbols and rng.random() < 0.5:
            body = rng.choice(self.real_symbols) + rng.choice(("", "", "x", " ", "\x00", "#"))
        elif prefix in ("symbol:#", "graph:#"):
            body = rng.choice((_hexes(rng, rng.randint(0, 20)), self.atom(), "../../etc"))
        elif prefix == "graph:" and rng.random() < 0.5:
            picked = rng.choice(PATHS[:35]) if rng.random() < 0.8 else self.atom()
            body = picked if isinstance(picked, str) else ""
        else:
            sep = rng.choice(("", " ", " ", "\n"))
            body = sep.join(self.atom() for _ in range(rng.randint(1, 5)))
        return prefix + body

    def symbols_query(self) -> str:
        rng = self.rng
        body = rng.choice(
            (
                "get_user",
                "getUser",
                "Handler",
                "handle",
                "main",
                "encode",
                "",
                "get",
                "*",
                "(",
                "é",
                "😀",
                "a" * 5000,
                "\x00",
                "Handler.handle",
                "zzz",
                "g_u",
            )
        )
        if rng.random() < 0.2:
            body += self._unicode()
        return "symbols:" + body

    def options(self, *, lsp: bool = False) -> dict[str, object]:
        """Keyword options for ``search``: mostly valid, often wrong in type or value."""
        rng = self.rng
        opts: dict[str, object] = {}
        if rng.random() < 0.35:
            path = rng.choice(PATHS)
            if path in ("", None) or rng.random() < 0.1:
                path = rng.choice(self.real_refs) if self.real_refs else path
            if isinstance(path, str) and rng.random() < 0.05:
                path += self._unicode()
            opts["path"] = path
        for name, values in OPTION_VALUES.items():
            if rng.random() < (0.12 if name != "navigation" or lsp else 0.03):
                opts[name] = rng.choice(values)
        if rng.random() < 0.15:
            opts["lang"] = rng.choice(LANGS)
        if rng.random() < 0.1:
            opts[rng.choice(("include", "exclude"))] = rng.choice(
                (
                    ["*.py"],
                    ["**"],
                    [""],
                    ["["],
                    "*.py",
                    [1],
                    ["\x00"],
                    ["src/**", "!x"],
                    [],
                    ["../*"],
                    ["/abs/*"],
                    [self._unicode()],
                )
            )
        if rng.random() < 0.08:
            opts["cursor"] = self.cursor()
        return opts

    def cursor(self) -> object:
        rng = self.rng
        if self.real_cursors and rng.random() < 0.4:
            real = rng.choice(self.real_cursors)
            return rng.choice(
                (real, real[:-1], real + "x", real[::-1], real.upper(), real[: len(real) // 2])
            )
        return rng.choice(
            (
                "",
                "x",
                "0",
                "-1",
                "null",
                "{}",
                "AAAA",
                "=" * 20,
                "c" * 10_000,
                _hexes(rng, 32),
                self._random_chars(12),
                17,
                None,
            )
        )

    # -- references ---------------------------------------------------------------------------

    def forged_ref(self) -> str:
        """A reference string: wrong lengths, unknown ids, bad numbers and units, junk."""
        rng = self.rng
        roll = rng.random()
        if self.real_refs and roll < 0.35:
            base = rng.choice(self.real_refs)
            head = base.split(":", 1)[0]
            return rng.choice(
                (
                    base,
                    base + rng.choice(("x", ":", " ", "\n", "\x00", "#new", ":all")),
                    head + ":0:match",
                    head + ":-1:line",
                    head + f":{10**9}:match",
                    head + f":{10**20}:line",
                    head + ":999999999:match",
                    head + ":01:match",
                    head + ":all",
                    head + ":all:all",
                    head + ":all:word",
                    head + ":1:LINE",
                    head + ":1:match:extra",
                    head + ":1:NAME",
                    head + ":1:A",
                    head.replace("SEARCH#", "RESULT#") + ":1:A",
                    head.replace("SEARCH#", "RESULT#"),
                    head.upper(),
                    head[:-1],
                    head + "0",
                    base + "#renamed",
                    " " + base,
                    base.replace(":", "\uff1a"),
                    head + ":1:" + "A" * 161,
                    head + ":1:" + rng.choice(("a", "$A", "A-B", "Ä", "😀")),
                )
            )
        kind = rng.choice(("SEARCH#", "RESULT#", "SEARCH#", "search#", "RESULT", "SEARCH##", ""))
        ident = rng.choice(
            (
                _hexes(rng, 8),
                _hexes(rng, rng.randint(0, 16)),
                "ZZZZZZZZ",
                _hexes(rng, 8).upper(),
                "0" * 8,
                "f" * 8,
                "-1234567",
            )
        )
        tail = rng.choice(
            (
                "",
                ":1:match",
                ":1:line",
                ":0:match",
                ":all:line",
                ":all:match",
                ":all",
                ":2:NAME",
                ":1:A",
                ":99999999999999999999:match",
                ":x:line",
                ":1:",
                ":",
                "::",
                ":1:match:",
                ":1:unit",
                "#new_name",
            )
        )
        ref = kind + ident + tail
        extra = rng.random()
        if extra < 0.06:
            ref += "x" * 10_240  # 10 KB long
        elif extra < 0.14:
            ref += self._unicode()
        elif extra < 0.18:
            ref = self._unicode() + ref
        return ref

    def edit_text(self) -> object:
        rng = self.rng
        roll = rng.random()
        if roll < 0.6:
            return rng.choice(
                (
                    "x",
                    "",
                    "new_name",
                    "line\n",
                    "\r\n",
                    "é😀",
                    "a\x00b",
                    "\t",
                    "    # note\n",
                    "\ufeff",
                )
            )
        if roll < 0.8:
            return self._random_chars(rng.randint(1, 50))
        if roll < 0.85:
            return "y" * rng.choice((5000, 70_000))
        if roll < 0.93 and self.python_values:
            return rng.choice(SURROGATES)
        if self.python_values:
            return rng.choice((None, 5, b"bytes", ["x"]))
        return rng.choice((None, 5, ["x"], {"text": "x"}))

    def target(self) -> object:
        rng = self.rng
        if self.real_refs and rng.random() < 0.3:
            return rng.choice(self.real_refs)
        return rng.choice(
            (
                "src/app.py:1",
                "src/app.py:0",
                "src/app.py:99999",
                "src/app.py",
                "../x.py:1",
                "/etc/passwd:1",
                "pipe.fifo:1",
                "link_out.py:1",
                "secret/keys.py:1",
                "missing.py:1",
                "src/app.py:-1",
                "a\x00b:1",
                "src/app.py:1:2",
                ":1",
                "",
                "crlf.txt:2",
                "data/blob.bin:1",
                "linkdir/app.py:1",
                self.forged_ref(),
                7,
                None,
            )
        )

    def items(self) -> object:
        rng = self.rng
        return rng.choice(
            (
                [1],
                [1],
                [2, 1],
                [0],
                [-1],
                [10**12],
                [],
                [1, 1],
                ["1"],
                [True],
                [1.5],
                None,
                "1",
                list(range(1, 1200)),
                [2**63],
            )
        )

    def where(self) -> object:
        return self.rng.choice(("before", "before", "after", "after", "middle", "", None, 1))

    def ref_call(self, ref: object) -> tuple[str, dict[str, object]]:
        """One verb through ``ref``: (verb, its arguments by name, as in every face)."""
        rng = self.rng
        verb = rng.choice(
            (
                "read",
                "read",
                "select",
                "replace",
                "replace",
                "insert",
                "delete",
                "copy",
                "move",
                "undo",
                "rename",
                "search",
            )
        )
        if verb == "read":
            args: dict[str, object] = {"target": ref}
            if rng.random() < 0.3:
                args["offset"] = rng.choice((1, 2, 0, -1, 10**9, "1", None, 1.5))
            if rng.random() < 0.3:
                args["limit"] = rng.choice((1, 5, 0, -1, 10**9, "1", None, True))
            return verb, args
        if verb == "select":
            return verb, {"ref": ref, "items": self.items()}
        if verb == "replace":
            return verb, {"ref": ref, "text": self.edit_text()}
        if verb == "insert":
            return verb, {"ref": ref, "text": self.edit_text(), "where": self.where()}
        if verb == "delete":
            return verb, {"ref": ref}
        if verb in ("copy", "move"):
            return verb, {"ref": ref, "to": self.target()}
        if verb == "undo":
            return verb, {"result": ref}
        if verb == "rename":
            new_name = rng.choice(("fetch_user", "", "a b", "1x", "\x00", None, "é", "x" * 500))
            return verb, {"ref": ref, "new_name": new_name}
        return verb, {"query": rng.choice(("get_user", "regex:\\w+", "ast:$A", "x")), "path": ref}

    def feed(self, data: Mapping[str, Any]) -> None:
        """Keep real references, cursors and symbol ids from an answer (bounded pools)."""
        found: list[str] = []
        if isinstance(data.get("result"), str):
            found.append(data["result"])
        for key in ("line", "match"):
            value = (data.get("all") or {}).get(key)
            if isinstance(value, str):
                found.append(value)
        for match in data.get("matches") or []:
            found.extend(v for v in (match.get("ref") or {}).values() if isinstance(v, str))
            for capture in (match.get("captures") or {}).values():
                if isinstance(capture, dict) and isinstance(capture.get("ref"), str):
                    found.append(capture["ref"])
            symbol = match.get("symbol") or {}
            if isinstance(symbol.get("id"), str):
                self.real_symbols.append(symbol["id"])
        if isinstance(data.get("next_cursor"), str):
            self.real_cursors.append(data["next_cursor"])
        self.real_refs.extend(self.rng.sample(found, min(len(found), 4)))
        for pool in (self.real_refs, self.real_cursors, self.real_symbols):
            del pool[:-200]


def call_summary(verb: str, args: Sequence[object], kwargs: Mapping[str, object]) -> str:
    """A short printable description of a call (huge strings cut) for failure reports."""

    def short(value: object) -> str:
        text = repr(value)
        return text if len(text) <= 160 else f"{text[:120]}...<{len(text)} chars>"

    parts = [short(a) for a in args] + [f"{k}={short(v)}" for k, v in kwargs.items()]
    return f"{verb}({', '.join(parts)})"
