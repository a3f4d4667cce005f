"""The corpora, targets, ground truth and grep+read baseline of ``benchmarks/agent.py``.

Nothing here runs sleuth: the targets are chosen and the ground truth is computed with
``ast-grep`` and ``rg`` (the venv's copies, ``benchmarks/tools.py``) and plain Python, and the
baseline is what a grep+read agent would be shown, byte for byte.

Corpora: three pure-Python sdists that are no test fixture of this repository (those are
Django, psutil, rxjs and tokio), pinned, fetched with ``pip download --no-deps --no-binary
:all:`` into the shared corpus cache (``tests/corpus.py``: ``$SLEUTH_CORPUS_DIR`` or
``~/.cache/sleuth/corpora``) and unpacked once, under ``agent-<name>-<version>/``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.tools import find_tool

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from corpus import cache_dir, locked, publish_dir  # noqa: E402

__all__ = [
    "SDISTS",
    "Sdist",
    "Node",
    "Decl",
    "Targets",
    "Cost",
    "Baseline",
    "sdist_tree",
    "select_targets",
    "rename_edits",
    "keyword_edits",
    "check_tree",
    "WINDOW",
]

WINDOW = 40
"""Lines of one baseline read (the window an agent reads around a hit to edit it safely)."""

#: The hub declarations the orientation task looks for, and how many of them must be seen.
HUBS = 5
HUBS_NEEDED = 3


@dataclass(frozen=True)
class Sdist:
    name: str
    version: str
    package: str  # the package's source folder, relative to the unpacked tree

    @property
    def spec(self) -> str:
        return f"{self.name}=={self.version}"

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}"


SDISTS: tuple[Sdist, ...] = (
    Sdist("requests", "2.32.3", "src/requests"),
    Sdist("click", "8.1.7", "src/click"),
    Sdist("httpx", "0.27.2", "httpx"),
)


def _single_child(folder: Path) -> Path:
    children = [c for c in folder.iterdir() if c.is_dir()]
    if len(children) != 1:
        raise RuntimeError(f"expected one top folder in {folder}, found {children!r}")
    return children[0]


def sdist_tree(sd: Sdist) -> Path:
    """The unpacked sdist, downloaded with pip and unpacked on first use (under a lock)."""
    final = cache_dir() / f"agent-{sd.name}-{sd.version}"
    if final.is_dir():
        return _single_child(final)
    with locked(final.name):
        if final.is_dir():
            return _single_child(final)
        downloads = cache_dir() / "downloads"
        downloads.mkdir(parents=True, exist_ok=True)
        archives = sorted(downloads.glob(f"{sd.name}-{sd.version}.tar.gz"))
        if not archives:
            cmd = [sys.executable, "-m", "pip", "download", "--quiet"]
            cmd += ["--disable-pip-version-check", "--no-deps", "--no-binary", ":all:"]
            subprocess.run([*cmd, "--dest", str(downloads), sd.spec], check=True)
            archives = sorted(downloads.glob(f"{sd.name}-{sd.version}.tar.gz"))
        if not archives:
            raise RuntimeError(f"pip download {sd.spec} left no sdist in {downloads}")
        tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{final.name}-", dir=cache_dir()))
        try:
            with tarfile.open(archives[0]) as tar:
                tar.extractall(tmp, filter="data")
            _single_child(tmp)
            publish_dir(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return _single_child(final)


# -- ast-grep -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Node:
    """One ast-grep match (lines 1-based, byte offsets into the file)."""

    path: str
    line: int
    end_line: int
    start: int
    end: int
    text: str
    meta: dict[str, Node] = field(default_factory=dict, compare=False)


def _node(path: str, raw: dict[str, object]) -> Node:
    rng = raw["range"]
    assert isinstance(rng, dict)
    meta: dict[str, Node] = {}
    single = raw.get("metaVariables", {})
    assert isinstance(single, dict)
    for name, sub in (single.get("single") or {}).items():
        meta[name] = _node(path, sub)
    text = raw["text"]
    assert isinstance(text, str)
    return Node(
        path,
        rng["start"]["line"] + 1,
        rng["end"]["line"] + 1,
        rng["byteOffset"]["start"],
        rng["byteOffset"]["end"],
        text,
        meta,
    )


def _sg(tree: Path, args: Sequence[str]) -> list[Node]:
    proc = subprocess.run(
        [find_tool("ast-grep"), *args, "--json=stream", "."],
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"ast-grep {args}: {proc.stderr[-500:]}")
    nodes = []
    for line in proc.stdout.splitlines():
        if line.strip():
            raw = json.loads(line)
            nodes.append(_node(raw["file"], raw))
    nodes.sort(key=lambda n: (n.path, n.start))
    return nodes


def sg_pattern(tree: Path, pattern: str) -> list[Node]:
    return _sg(tree, ["run", "--lang", "python", "-p", pattern])


def sg_kind(tree: Path, kind: str) -> list[Node]:
    rule = f"id: k\nlanguage: python\nrule:\n  kind: {kind}\n"
    return _sg(tree, ["scan", "--inline-rules", rule])


def rg(tree: Path, *args: str) -> str:
    """rg's output as an agent's shell tool shows it (run in the tree, not a terminal)."""
    cmd = [find_tool("rg"), "--no-config", "--sort", "path", *args]
    proc = subprocess.run(cmd, cwd=tree, capture_output=True, text=True, check=False)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"rg {args}: {proc.stderr[-500:]}")
    return proc.stdout


# -- targets ------------------------------------------------------------------------------------

_DECL = re.compile(r"(?:async\s+)?(?:def|class)\s+(\w+)")


@dataclass(frozen=True)
class Decl:
    name: str
    path: str
    line: int
    end_line: int
    last_line: str  # the definition's last line, stripped (seen = the whole body was read)


@dataclass(frozen=True)
class Targets:
    function: Decl  # find the definition, all uses, rename
    uses: tuple[Node, ...]  # every identifier token of its name (the ground truth of uses)
    new_name: str
    callee: Decl  # change one argument of every call
    param: str  # its second parameter: f(a, b) becomes f(a, param=b)
    calls: tuple[Node, ...]  # every f($A, $B), with the capture B in meta
    hubs: tuple[str, ...]  # the most-used public declarations of the package


def _name(node: Node) -> str:
    m = _DECL.match(node.text)
    assert m is not None, node.text[:80]
    return m.group(1)


def _decl(node: Node) -> Decl:
    last = node.text.rstrip().splitlines()[-1].strip()
    return Decl(_name(node), node.path, node.line, node.end_line, last)


def _positional(node: Node) -> bool:
    return not re.match(r"\*|\w+\s*=", node.text)


def select_targets(tree: Path, sd: Sdist) -> Targets:
    """The task targets of one sdist, by fixed rules (see ``benchmarks/agent.py``)."""
    defs = sg_kind(tree, "function_definition")
    classes = sg_kind(tree, "class_definition")
    declared = Counter(_name(n) for n in defs + classes)
    top = [n for n in defs if n.path.startswith(sd.package + "/") and _column0(tree, n)]
    unique = [n for n in top if not _name(n).startswith("_") and declared[_name(n)] == 1]
    words: Counter[str] = Counter()
    for line in rg(tree, "-o", "-w", "--no-filename", r"[A-Za-z_]\w*").splitlines():
        words[line] += 1
    ids = sg_kind(tree, "identifier")
    by_name: defaultdict[str, list[Node]] = defaultdict(list)
    for n in ids:
        by_name[n.text].append(n)

    # 1-3: the function with the most uses among those whose every word occurrence in the
    # tree (rg -w, every file) is a Python identifier token, used in >= 2 files.
    def uses_key(n: Node) -> tuple[int, str]:
        return (-len(by_name[_name(n)]), _name(n))

    clean = [
        n
        for n in unique
        if words[_name(n)] == len(by_name[_name(n)])
        and len({u.path for u in by_name[_name(n)]}) >= 2
    ]
    function = min(clean, key=uses_key)
    new_name = f"{_name(function)}_v2"
    if words[new_name]:
        raise RuntimeError(f"{new_name} already occurs in {tree}")

    # 4: the function with the most calls f($A, $B), all with positional arguments, at least 3,
    # whose second parameter is an ordinary one; ties: more files, then the name.
    best: tuple[tuple[int, int, str], Node, str, list[Node]] | None = None
    for n in unique:
        calls = sg_pattern(tree, f"{_name(n)}($A, $B)")
        if len(calls) < 3 or not all(
            _positional(c.meta["A"]) and _positional(c.meta["B"]) for c in calls
        ):
            continue
        param = _second_param(n.text)
        if param is None or _nested(calls):
            continue
        key = (-len(calls), -len({c.path for c in calls}), _name(n))
        if best is None or key < best[0]:
            best = (key, n, param, calls)
    if best is None:
        raise RuntimeError(f"no function with three two-argument calls in {tree}")
    _key, callee, param, calls = best

    # 5: the public module-level declarations of the package (declared once in it) imported
    # by the most other files (``from ... import NAME`` of the package, or ``PKG.NAME``).
    pkg_decls = [
        n
        for n in defs + classes
        if n.path.startswith(sd.package + "/") and _column0(tree, n) and _name(n)[0] != "_"
    ]
    in_package = Counter(_name(n) for n in pkg_decls)
    importers = _importers(tree, sd.package.rsplit("/", 1)[-1])
    spread: list[tuple[int, str]] = []
    for n in pkg_decls:
        name = _name(n)
        if in_package[name] == 1:
            spread.append((-len(importers[name] - {n.path}), name))
    hubs = tuple(name for _n, name in sorted(spread)[:HUBS])
    return Targets(
        _decl(function),
        tuple(by_name[_name(function)]),
        new_name,
        _decl(callee),
        param,
        tuple(calls),
        hubs,
    )


def _importers(tree: Path, package: str) -> defaultdict[str, set[str]]:
    """name -> the .py files that import it from ``package`` or read it as ``package.name``."""
    import ast

    found: defaultdict[str, set[str]] = defaultdict(set)
    for path in sorted(tree.rglob("*.py")):
        rel = path.relative_to(tree).as_posix()
        try:
            module = ast.parse(path.read_bytes())
        except SyntaxError:
            continue
        for node in ast.walk(module):
            if isinstance(node, ast.ImportFrom) and (
                node.level or (node.module or "").split(".")[0] == package
            ):
                for alias in node.names:
                    found[alias.name].add(rel)
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == package
            ):
                found[node.attr].add(rel)
    return found


def _column0(tree: Path, n: Node) -> bool:
    """True if the definition starts a line of its own at column 0 (module level)."""
    data = (tree / n.path).read_bytes()
    return n.start == 0 or data[n.start - 1 : n.start] == b"\n"


def _second_param(source: str) -> str | None:
    import ast

    fn = ast.parse(source).body[0]
    assert isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
    args = fn.args
    if len(args.posonlyargs) >= 2 or len(args.posonlyargs) + len(args.args) < 2:
        return None
    return (args.posonlyargs + args.args)[1].arg


def _nested(calls: Sequence[Node]) -> bool:
    spans = sorted((c.path, c.start, c.end) for c in calls)
    return any(a[0] == b[0] and b[1] < a[2] for a, b in zip(spans, spans[1:], strict=False))


# -- ground truth -------------------------------------------------------------------------------

Edit = tuple[str, int, int, bytes]  # path, start byte, end byte, replacement


def rename_edits(t: Targets) -> list[Edit]:
    """Every identifier token of the old name becomes the new name."""
    return [(n.path, n.start, n.end, t.new_name.encode()) for n in t.uses]


def keyword_edits(t: Targets) -> list[Edit]:
    """``f(a, b)`` becomes ``f(a, param=b)`` at every call."""
    b = f"{t.param}=".encode()
    return [(c.path, c.meta["B"].start, c.meta["B"].start, b) for c in t.calls]


def expected_files(tree: Path, edits: Iterable[Edit]) -> dict[str, bytes]:
    per_file: defaultdict[str, list[Edit]] = defaultdict(list)
    for e in edits:
        per_file[e[0]].append(e)
    out: dict[str, bytes] = {}
    for path, items in per_file.items():
        data = (tree / path).read_bytes()
        for _p, start, end, text in sorted(items, key=lambda e: e[1], reverse=True):
            data = data[:start] + text + data[end:]
        out[path] = data
    return out


def _files(root: Path) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for dirpath, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (".sleuth", "__pycache__")]
        for name in names:
            p = Path(dirpath, name)
            found[p.relative_to(root).as_posix()] = p
    return found


def check_tree(original: Path, edited: Path, edits: Iterable[Edit]) -> list[str]:
    """What differs between ``edited`` and ``original`` with ``edits`` applied (empty: equal),
    and every edited Python file compiled (what ``python -m py_compile`` checks)."""
    expected = expected_files(original, edits)
    before, after = _files(original), _files(edited)
    problems = [f"{p}: deleted" for p in sorted(set(before) - set(after))]
    problems += [f"{p}: created" for p in sorted(set(after) - set(before))]
    for rel in sorted(set(before) & set(after)):
        want = expected.get(rel) or before[rel].read_bytes()
        got = after[rel].read_bytes()
        if got != want:
            problems.append(f"{rel}: differs from the expected file ({_first_diff(want, got)})")
    for rel in sorted(expected):
        if rel.endswith(".py") and rel in after:
            try:
                compile(after[rel].read_bytes(), rel, "exec")
            except SyntaxError as exc:
                problems.append(f"{rel}: does not compile: {exc}")
    return problems


def _first_diff(want: bytes, got: bytes) -> str:
    w, g = want.splitlines(), got.splitlines()
    for i, (a, b) in enumerate(zip(w, g, strict=False), 1):
        if a != b:
            return f"line {i}: expected {a.decode(errors='replace').strip()!r}, got {b.decode(errors='replace').strip()!r}"
    return f"{len(w)} lines expected, {len(g)} found"


# -- the grep+read baseline ---------------------------------------------------------------------


@dataclass
class Cost:
    """Tool calls and bytes of tool output one agent saw for one task."""

    calls: int = 0
    bytes: int = 0
    correct: bool = False
    notes: list[str] = field(default_factory=list)


_HIT = re.compile(r"^(?P<path>[^:\n]+):(?P<line>\d+):", re.M)


class Baseline:
    """A grep+read agent: ``rg`` in a shell, a ``cat -n`` style read tool (``WINDOW`` lines
    from an offset, the whole file without a limit) and a str_replace-style edit tool that
    answers one short line, one call per file."""

    def __init__(self, tree: Path) -> None:
        self.tree = tree
        self.cost = Cost()
        self.seen: list[str] = []
        self._read: defaultdict[str, set[int]] = defaultdict(set)

    def rg(self, *args: str) -> list[tuple[str, int]]:
        out = rg(self.tree, *args)
        self._count(out)
        return [(m["path"], int(m["line"])) for m in _HIT.finditer(out)]

    def read(self, path: str, offset: int = 1, limit: int | None = None) -> None:
        lines = (self.tree / path).read_text(encoding="utf-8", errors="replace").splitlines()
        last = len(lines) if limit is None else min(len(lines), offset - 1 + limit)
        shown = [f"{i:6}\t{lines[i - 1]}\n" for i in range(offset, last + 1)]
        self._read[path].update(range(offset, last + 1))
        self._count("".join(shown))

    def read_around(self, hits: Iterable[tuple[str, int]]) -> None:
        """A ``WINDOW``-line read centred on every hit not already inside an earlier read."""
        for path, line in hits:
            if line not in self._read[path]:
                self.read(path, max(1, line - WINDOW // 2), WINDOW)

    def covered(self, path: str, first: int, last: int) -> bool:
        return all(i in self._read[path] for i in range(first, last + 1))

    def edit(self, path: str) -> None:
        self._count(f"The file {path} has been updated.\n")

    def _count(self, text: str) -> None:
        self.cost.calls += 1
        self.cost.bytes += len(text.encode())
        self.seen.append(text)

    @property
    def text(self) -> str:
        return "".join(self.seen)


def hub_names_seen(text: str, hubs: Sequence[str]) -> list[str]:
    return [h for h in hubs if re.search(rf"\b{re.escape(h)}\b", text)]
