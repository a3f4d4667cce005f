"""Differential parity runs against the peers, on real files: what found this stage's bugs.

Three runs, each printing every disagreement and a summary line per target:

``ast``
    Patterns cut from the named trees' own code (``tests/e2e/test_ast_generated_parity.py``'s
    generator: named nodes of 4-120 bytes, about half of their identifiers turned into
    metavariables, sometimes ``$$$ARGS``), run by ``ast-grep run`` and by sleuth's ``ast:``
    over every page; the sets of ``(path, start, end)`` must be equal. ``--options`` adds a
    seeded strictness or a selector (the pattern then cut from the node's parent or
    grandparent); ``--warned`` also compares the patterns sleuth reads with a
    ``pattern_warning`` (where it differs from ast-grep on purpose, docs/query.md).
``regex``
    Random regexes over a fixed mix of atoms (literals, classes, anchors, groups, repetitions,
    flags, ripgrep-only spellings), by ``rg`` and by sleuth's ``regex:``; the sets of
    ``(path, line)`` must be equal, or both must refuse the pattern. sleuth's deliberate
    refusals (rg's word edges away from a word, class set operations, ``a{,3}``) are counted
    apart; ``\\w \\d \\b`` (ASCII in sleuth, Unicode in rg) and ``\\cA`` (accepted by
    sleuth, refused by rg) are left out of the mix (docs/query.md).
``globs``
    Random trees listed with random ``include``/``exclude`` globs, against ``rg --files -g``
    (the includes sleuth reads its own way on purpose, without wildcards or ending in ``/``,
    are left out).
``ignore``
    Random trees with random ignore files; sleuth's listing against ``git ls-files -o
    --exclude-standard`` (``--mode git``) or ``rg --files`` (``--mode rg``; POSIX classes such as
    ``[[:alpha:]]`` are left out there: rg does not read them, git does).

Usage::

    python -m benchmarks.parity_fuzz ast --target go:<dir> --target cpp:<dir> --seed 3
    python -m benchmarks.parity_fuzz regex --tree <dir> --seed 1 --count 800
    python -m benchmarks.parity_fuzz ignore --mode git --seed 2 --count 400
    python -m benchmarks.parity_fuzz globs --seed 1 --count 400

Results of this stage's runs are in benchmarks/RESULTS.md ("Parity runs").
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from sleuth.api import Workbench
from sleuth.ast_search import compile_pattern
from sleuth.errors import SleuthError
from sleuth.languages import TABLE
from sleuth.text_search.matchers import regex_matcher
from sleuth.workspace.workspace import Workspace

BIN = Path(sys.executable).parent
Hit = tuple[str, int, int]


# -- ast --------------------------------------------------------------------------------------


def _ast_grep(root: Path, pattern: str, lang: str, options: dict[str, str]) -> set[Hit] | None:
    flags = [arg for key, value in options.items() for arg in (f"--{key}", value)]
    proc = subprocess.run(
        [str(BIN / "ast-grep"), "run", "-p", pattern, "-l", lang, *flags, "--json=compact", "."],
        cwd=root, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    if proc.returncode not in (0, 1) or proc.stderr.strip():
        return None
    return {
        (m["file"].removeprefix("./"), m["range"]["byteOffset"]["start"],
         m["range"]["byteOffset"]["end"])
        for m in json.loads(proc.stdout or "[]")
    }  # fmt: skip


def _sleuth_ast(wb: Workbench, pattern: str, lang: str, options: dict[str, str]) -> set[Hit]:
    hits: set[Hit] = set()
    cursor: str | None = None
    while True:
        page = wb.search(
            f"ast:{pattern}", lang=lang, limit=500, cursor=cursor, context=0, **options
        ).to_json()
        hits |= {(m["path"], m["start_byte"], m["end_byte"]) for m in page["matches"]}
        cursor = page.get("next_cursor")
        if cursor is None:
            return hits


def _sample(lang: str, tree: Path, files: int, rng: random.Random) -> tuple[Path, list[Path]]:
    exts = next(entry.extensions for entry in TABLE if entry.name == lang)
    found = sorted(
        p
        for p in tree.rglob("*")
        if p.is_file() and not p.is_symlink() and p.suffix[1:] in exts
        and 200 < p.stat().st_size < 60_000
    )  # fmt: skip
    root = Path(tempfile.mkdtemp(prefix="parity-ast-"))
    copies = []
    for i, path in enumerate(rng.sample(found, min(files, len(found)))):
        copies.append(root / f"f{i}{path.suffix}")
        shutil.copyfile(path, copies[-1])
    return root, copies


def run_ast(args: argparse.Namespace) -> int:
    from tests.e2e.test_ast_generated_parity import _candidates, _pattern

    strictness = ["cst", "smart", "ast", "relaxed", "signature", "template"]
    total = 0
    for target in args.target:
        lang, _, where = target.partition(":")
        rng = random.Random(f"{target}-{args.seed}")
        root, copies = _sample(lang, Path(where), args.files, rng)
        kept = differ = 0
        with Workbench(root, build_index=False) as wb:
            for data, node in _candidates(lang, copies, rng):
                if kept >= args.patterns:
                    break
                options: dict[str, str] = {}
                if args.options and node.parent is not None and node.parent.parent is not None:
                    if rng.random() < 0.5:
                        options["selector"] = node.type
                        node = node.parent if rng.random() < 0.6 else node.parent.parent
                        if node.end_byte - node.start_byte > 200:
                            continue  # a pattern of a whole class or file: not the point
                    else:
                        options["strictness"] = rng.choice(strictness)
                pattern = _pattern(data, node, rng)
                if not pattern.strip() or pattern.startswith("$"):
                    continue
                try:
                    warned = compile_pattern(pattern, lang, selector=options.get("selector"))
                except SleuthError:
                    warned = None
                theirs = _ast_grep(root, pattern, lang, options)
                if theirs is None or (warned is not None and warned.warning and not args.warned):
                    continue
                kept += 1
                if warned is None:
                    differ += 1
                    print(f"[{lang}] refused by sleuth, ast-grep {len(theirs)}: {pattern!r}")
                    continue
                ours = _sleuth_ast(wb, pattern, lang, options)
                if ours != theirs:
                    differ += 1
                    print(
                        f"[{lang}] {pattern!r} {options} sleuth {len(ours)} ast-grep {len(theirs)}"
                        f"\n    only sleuth {sorted(ours - theirs)[:3]}"
                        f"\n    only ast-grep {sorted(theirs - ours)[:3]}  (tree {root})"
                    )
        print(f"== {target}: {kept} patterns, {differ} differ", flush=True)
        total += differ
    return 1 if total else 0


# -- regex ------------------------------------------------------------------------------------

WORDS = ["foo", "bar", "line", "return", "Foo", "x", "é", "σ", "Σ", "ß", "k", "K", "ı", "д"]
WORDS += ["日本", "1", "42", "\\.", "_", " ", "TODO", "end", "a", "=", ";", "\\$", "\\(", "#"]
ATOMS = [
    ".",
    "\\s",
    "\\S",
    "[\\s]",
    "[^\\s]",
    "[a-z]",
    "[A-Z]",
    "[^ ]",
    "[0-9]",
    "[[:alpha:]]",
    "^",
    "$",
    "[^\\n]",
    "\\p{L}",
]
ATOMS += ["\\pL", "[α-ω]", "\\x41", "\\t", "\\r", "[é]", "(?i)", "(?-i)", "(?s)", "(?U)"]
ATOMS += ["[[:^alpha:]]", "\\pN", "\\x{1F600}", "(|a)", "(?P<n>o)", "(?<m>o)", "[]a]", "[^]a]"]
ATOMS += ["\\<", "\\>", "\\b{start}", "\\b{end}", "a{,3}", "[a-z&&[^aeiou]]", "x{2,1}", "\\A"]
REPEATS = ["", "", "", "*", "+", "?", "{2}", "{1,3}", "*?", "+?"]
RG_WALK = ["--no-config", "--hidden", "--no-require-git", "-g", "!.sleuth/"]
RG_PRINT = ["-n", "--no-heading", "--with-filename", "--null", "--color", "never"]


def _regex(rng: random.Random, depth: int = 0) -> str:
    roll = rng.random()
    if depth < 2 and roll < 0.15:
        branches = "|".join(_regex(rng, depth + 1) for _ in range(rng.randint(2, 3)))
        return f"({branches}){rng.choice(REPEATS)}"
    parts = []
    for _ in range(rng.randint(1, 3)):
        atom = rng.choice(WORDS) if rng.random() < 0.55 else rng.choice(ATOMS)
        parts.append(atom + (rng.choice(REPEATS) if atom not in ("^", "$") else ""))
    return "".join(parts)


def _rg_lines(root: Path, args: list[str]) -> set[tuple[str, int]] | None:
    proc = subprocess.run([str(BIN / "rg"), *RG_WALK, *RG_PRINT, *args, "."], cwd=root,
                          capture_output=True, check=False)  # fmt: skip
    if proc.returncode == 2:
        return None
    out = set()
    for raw in proc.stdout.split(b"\n"):
        if raw:
            name, _, rest = raw.partition(b"\0")
            out.add((name.decode().removeprefix("./"), int(rest.partition(b":")[0])))
    return out


def run_regex(args: argparse.Namespace) -> int:
    root = Path(args.tree)
    shutil.rmtree(root / ".sleuth", ignore_errors=True)
    rng = random.Random(args.seed)
    bad = refused = 0
    with Workbench(root, build_index=False) as wb:
        for _ in range(args.count):
            pattern, folded = _regex(rng), rng.random() < 0.3
            multiline = False
            ours: set[tuple[str, int]] | None = set()
            try:
                multiline = regex_matcher(pattern).multiline
                cursor: str | None = None
                while ours is not None:
                    page = wb.search(f"regex:{pattern}", case_sensitive=not folded, limit=500,
                                     context=0, cursor=cursor, max_bytes=None).to_json()  # fmt: skip
                    for m in page["matches"]:
                        ours.update((m["path"], n) for n in range(m["line"], m["end_line"] + 1))
                    cursor = page.get("next_cursor")
                    if cursor is None:
                        break
            except SleuthError:
                ours = None
            flags = [*(["-i"] if folded else []), *(["-U"] if multiline else [])]
            theirs = _rg_lines(root, [*flags, "-e", pattern])
            if ours is None and theirs is not None:
                refused += 1  # on purpose (docs/query.md#regex-regular-expressions)
                if args.refusals:
                    print(f"{pattern!r} -i={folded}: sleuth refused, rg {len(theirs)} lines")
            elif ours != theirs:
                bad += 1
                say = "refused" if theirs is None else f"{len(theirs)} lines"
                print(f"{pattern!r} -i={folded}: sleuth {ours and len(ours)} lines, rg {say}")
    print(f"== {bad} of {args.count} differ; {refused} refused by sleuth where rg answers")
    return 1 if bad else 0


# -- ignore -----------------------------------------------------------------------------------

NAMES = ["a", "b", "foo", "x.log", "y.txt", "z.py", "build", ".hidden", "a b", "[ab]", "#c"]
NAMES += ["!d", "café", "A", "deep", "sub", "x.LOG", "trail ", "*star", "q?"]
LINES = ["*.log", "/a", "a/", "/a/", "build/", "**/foo", "foo/**", "a/**/b", "*", "!*.log"]
LINES += ["!a", "!/a/b", "[ab]", "[!a]", "\\#c", "\\!d", "#comment", "", "x.*", "**", "/*/b"]
LINES += ["?", "sub/*", "!sub/x.log", "deep/**/z.py", "*/", "\\[ab\\]", "trail\\ ", "trail "]
LINES += ["[a-c]", "*.LOG", "a/b/", "!build/", "/**/c", "**/", "!**/foo", "\\*star", "q\\?"]
LINES += ["[]]", "[!]]", "a[", "\\", "**/*.py", "[[:alpha:]]"]
GIT_ENV = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, HOME="/")


def _tree(root: Path, rng: random.Random, mode: str) -> None:
    files: set[str] = set()
    for _ in range(rng.randint(5, 25)):
        rel = "/".join(rng.choice(NAMES) for _ in range(rng.randint(1, 4)))
        if not any(rel.startswith(f + "/") or f.startswith(rel + "/") for f in files):
            files.add(rel)
    for rel in files:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n")
    folders = sorted({str(Path(f).parent) for f in files})
    lines = [line for line in LINES if mode == "git" or "[[:" not in line]
    for folder in rng.sample(folders, min(len(folders), rng.randint(1, 3))):
        name = rng.choice([".gitignore", ".ignore"]) if mode == "rg" else ".gitignore"
        body = "\n".join(rng.choice(lines) for _ in range(rng.randint(1, 5)))
        (root / folder / name).write_text(body + rng.choice(["\n", ""]))


def _listings_differ(root: Path, ours: set[str], listed: bytes, peer: str) -> int:
    """1 (and say how) when sleuth's listing of ``root`` is not the peer's NUL-separated
    ``listed``; 0, the tree removed, when they agree."""
    theirs = {p.decode().removeprefix("./") for p in listed.split(b"\0") if p}
    if ours == theirs:
        shutil.rmtree(root, ignore_errors=True)
        return 0
    print(
        f"{root}: only sleuth {sorted(ours - theirs)[:5]}, only {peer} {sorted(theirs - ours)[:5]}"
    )
    return 1


def run_ignore(args: argparse.Namespace) -> int:
    rng = random.Random(args.seed)
    bad = 0
    for _ in range(args.count):
        root = Path(tempfile.mkdtemp(prefix="parity-ignore-"))
        _tree(root, rng, args.mode)
        if args.mode == "git":
            subprocess.run(["git", "init", "-q"], cwd=root, env=GIT_ENV, check=True)
            argv = ["git", "ls-files", "-o", "--exclude-standard", "-z"]
        else:
            argv = [str(BIN / "rg"), "--files", *RG_WALK, "-g", "!.git/", "-0"]
        proc = subprocess.run(argv, cwd=root, env=GIT_ENV, capture_output=True, check=False)
        assert proc.returncode in (0, 1), proc.stderr  # rg: 1 when every file is ignored
        ours = set(Workspace(root).list_files("").paths)
        bad += _listings_differ(root, ours, proc.stdout, args.mode)
    print(f"== {bad} of {args.count} trees differ")
    return 1 if bad else 0


# -- include/exclude globs ----------------------------------------------------------------------

GLOB_NAMES = ["a.py", "b.txt", "test_x.py", "x_test.go", "README.md", "Makefile", ".hidden"]
GLOB_NAMES += ["src", "lib", "tests", "docs", "a b.py", "c.PY", "d.tar.gz", "e[1].txt", "{f}.js"]
GLOB_POOL = ["*.py", "*.txt", "test_*", "**/test_*", "src/**", "src/*", "**/*.md", "*.{py,md}"]
GLOB_POOL += ["{a,b}*", "[ab]*", "[!a]*", "?.py", "lib", "lib/", "/lib", "tests/**/*.py", "**"]
GLOB_POOL += ["*", "docs/*.md", "*.PY", "*.tar.gz", "e\\[1\\].txt", "*[0-9]*", "**/lib/**", "a*"]
GLOB_POOL += ["*/a.py", "src/*/a.py", "*.{go,rs}"]


def _takes_whole(glob: str) -> bool:
    """An include sleuth reads its own way on purpose: no wildcards, or a trailing `/`
    (every file below a folder it names; rg keeps only files of that name)."""
    return glob.endswith("/") or not set("*?[{\\").intersection(glob)


def run_globs(args: argparse.Namespace) -> int:
    rng = random.Random(args.seed)
    includes = [g for g in GLOB_POOL if not _takes_whole(g)]
    bad = 0
    for _ in range(args.count):
        root = Path(tempfile.mkdtemp(prefix="parity-globs-"))
        for _ in range(rng.randint(5, 20)):
            target = root.joinpath(*(rng.choice(GLOB_NAMES) for _ in range(rng.randint(1, 3))))
            with contextlib.suppress(OSError):  # a name already taken by a file or folder
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text("x\n")
        inc = rng.sample(includes, rng.randint(0, 2))
        exc = rng.sample(GLOB_POOL, rng.randint(0, 2))
        flags = [a for g in inc for a in ("-g", g)] + [a for g in exc for a in ("-g", f"!{g}")]
        argv = [str(BIN / "rg"), "--files", *RG_WALK, "-g", "!.git/", *flags, "-0"]
        proc = subprocess.run(argv, cwd=root, capture_output=True, check=False)
        assert proc.returncode in (0, 1), proc.stderr
        ours = set(Workspace(root).list_files("", include=inc, exclude=exc).paths)
        bad += _listings_differ(root, ours, proc.stdout, f"rg (include {inc} exclude {exc})")
    print(f"== {bad} of {args.count} trees differ")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="run", required=True)
    a = sub.add_parser("ast")
    a.add_argument("--target", action="append", required=True, help="LANG:DIR (repeatable)")
    a.add_argument("--seed", type=int, default=0)
    a.add_argument("--patterns", type=int, default=40, help="kept patterns per target")
    a.add_argument("--files", type=int, default=12, help="sampled files per target")
    a.add_argument("--options", action="store_true", help="seeded strictness or selector")
    a.add_argument("--warned", action="store_true", help="also patterns read with a warning")
    r = sub.add_parser("regex")
    r.add_argument("--tree", required=True)
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--count", type=int, default=500)
    r.add_argument("--refusals", action="store_true", help="print sleuth's deliberate refusals")
    i = sub.add_parser("ignore")
    i.add_argument("--mode", choices=["git", "rg"], default="git")
    i.add_argument("--seed", type=int, default=0)
    i.add_argument("--count", type=int, default=200)
    gl = sub.add_parser("globs")
    gl.add_argument("--seed", type=int, default=0)
    gl.add_argument("--count", type=int, default=200)
    args = ap.parse_args(argv)
    runs = {"ast": run_ast, "regex": run_regex, "ignore": run_ignore, "globs": run_globs}
    return runs[args.run](args)


if __name__ == "__main__":
    raise SystemExit(main())
