"""ast-grep parity on patterns cut from real code: sleuth's ``ast:`` finds what ast-grep finds.

``test_ast_parity.py`` holds patterns written by hand; this module makes its patterns from the
corpora themselves, as the differential runs that found the nested-match paging and the
line-anchor bugs did: from a fixed sample of each corpus's files, named nodes of 4 to 120
bytes (comments left out), with about half of their identifier leaves turned into
metavariables (one name per distinct identifier, so a repeated one must repeat) and sometimes
an argument list's inside into ``$$$ARGS``. A pattern is kept when both engines read it the
same way: ast-grep prints no warning and sleuth compiles it cleanly at the top level
(``pattern_warning`` empty: no recovery, no function-body reading, which differ from ast-grep
on purpose, docs/query.md#patterns-that-do-not-parse-cleanly). Then the sets of ``(path,
start_byte, end_byte)`` over every page (``limit`` 500) must be equal.

Everything is seeded by the corpus's name, and the corpora are pinned, so the patterns are the
same on every run. The corpora are the ones whose grammar is ast-grep's (Kotlin's is not);
HCL's fixtures are too small to sample.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tree_sitter import Node, Parser

from sleuth.api import Workbench
from sleuth.ast_search import compile_pattern
from sleuth.ast_search.languages import get_lang_spec, get_ts_language
from sleuth.errors import SleuthError
from tests.e2e.conftest import tool
from tests.e2e.test_ast_parity import ast_corpora, source_files

pytestmark = pytest.mark.corpus

CORPORA = ["django", "rxjs", "django-html", "ansible", "openzeppelin", "elixir", "aeson"]
CORPORA += ["nix", "nix-manual", "scala", "django-css", "tokio", "psutil", "zig-std"]
FILES = 12  # sampled files per corpus
PATTERNS = 20  # kept patterns per corpus
Hit = tuple[str, int, int]


def _sample(name: str, dest: Path) -> tuple[str, list[Path]]:
    """A seeded sample of the corpus's source files (``test_ast_parity``'s list of them:
    the language's extensions, UTF-8, no symlink), copied into ``dest``."""
    entry = ast_corpora.CORPORA[name]
    tree: Path = entry.fetch()
    files = [
        rel
        for rel in source_files(tree, entry.scope, entry.lang)
        if 200 < (tree / rel).stat().st_size < 60_000
        and not any(part.startswith(".") for part in rel.split("/"))
    ]
    picked = random.Random(name).sample(files, min(FILES, len(files)))
    out = []
    for i, rel in enumerate(picked):
        target = dest / f"f{i}{Path(rel).suffix}"
        shutil.copyfile(tree / rel, target)
        out.append(target)
    return entry.lang, out


def _leaves(node: Node) -> Iterator[Node]:
    stack = [node]
    while stack:
        cur = stack.pop()
        if cur.child_count == 0:
            yield cur
        stack.extend(reversed(cur.children))


def _pattern(data: bytes, node: Node, rng: random.Random) -> str:
    pieces, pos, names = [], node.start_byte, {}
    for leaf in _leaves(node):
        if "identifier" in leaf.type and leaf.end_byte > leaf.start_byte and rng.random() < 0.5:
            var = names.setdefault(data[leaf.start_byte : leaf.end_byte], f"$V{len(names)}")
            pieces += [data[pos : leaf.start_byte], var.encode()]
            pos = leaf.end_byte
    pieces.append(data[pos : node.end_byte])
    text = b"".join(pieces).decode("utf-8")
    if rng.random() < 0.25 and "(" in text:
        i = text.find("(")
        j = text.find(")", i)
        if j > i + 1 and "\n" not in text[i:j]:
            text = f"{text[: i + 1]}$$$ARGS{text[j:]}"
    return text


def _candidates(lang: str, files: list[Path], rng: random.Random) -> list[tuple[bytes, Node]]:
    parser = Parser(get_ts_language(get_lang_spec(lang).name))
    out: list[tuple[bytes, Node]] = []
    for path in files:
        data = path.read_bytes()
        stack = [parser.parse(data).root_node]
        while stack:
            node = stack.pop()
            stack.extend(node.children)
            if (
                node.is_named
                and not node.has_error
                and not node.is_extra
                and "comment" not in node.type
                and node.child_count > 0
                and 4 <= node.end_byte - node.start_byte <= 120
            ):
                out.append((data, node))
    rng.shuffle(out)
    return out


Options = dict[str, str]
"""``strictness`` and ``selector`` when set: the same for both engines."""


def _ast_grep(
    root: Path, pattern: str, lang: str, options: Options | None = None
) -> set[Hit] | None:
    flags = [arg for key, value in (options or {}).items() for arg in (f"--{key}", value)]
    proc = subprocess.run(
        [tool("ast-grep"), "run", "-p", pattern, "-l", lang, *flags, "--json=compact", "."],
        cwd=root, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    if proc.returncode not in (0, 1) or proc.stderr.strip():
        return None  # refused, or read with a warning: not a parity pattern
    found = json.loads(proc.stdout or "[]")
    return {
        (m["file"].removeprefix("./"), m["range"]["byteOffset"]["start"],
         m["range"]["byteOffset"]["end"])
        for m in found
    }  # fmt: skip


def _sleuth(wb: Workbench, pattern: str, lang: str, options: Options | None = None) -> set[Hit]:
    hits: set[Hit] = set()
    cursor: str | None = None
    for _ in range(1000):
        page = wb.search(
            f"ast:{pattern}", lang=lang, limit=500, cursor=cursor, context=0, **(options or {})
        ).to_json()
        hits |= {(m["path"], m["start_byte"], m["end_byte"]) for m in page["matches"]}
        cursor = page.get("next_cursor")
        if cursor is None:
            return hits
    raise AssertionError(f"more than 1000 pages for {pattern!r}")


Chooser = Callable[[Node, random.Random], tuple[Node, Options] | None]
"""What a run cuts its pattern from and with which options (None: skip the node)."""


def _compare(name: str, root: Path, seed: str, count: int, choose: Chooser) -> None:
    """Cut ``count`` patterns both engines read cleanly from a sample of corpus ``name``
    and assert that every one matches the same nodes in both."""
    lang, files = _sample(name, root)
    assert len(files) >= FILES // 2, f"{name}: too few files sampled"
    rng = random.Random(f"{name}-{seed}")
    kept: list[str] = []
    differ: list[str] = []
    with Workbench(root, build_index=False) as wb:
        for data, candidate in _candidates(lang, files, rng):
            if len(kept) >= count:
                break
            chosen = choose(candidate, rng)
            if chosen is None:
                continue
            node, options = chosen
            pattern = _pattern(data, node, rng)
            if pattern in kept or not pattern.strip() or pattern.startswith("$"):
                continue
            try:
                if compile_pattern(pattern, lang, selector=options.get("selector")).warning:
                    continue
            except SleuthError:
                continue
            theirs = _ast_grep(root, pattern, lang, options)
            if theirs is None:
                continue
            kept.append(pattern)
            ours = _sleuth(wb, pattern, lang, options)
            if ours != theirs:
                differ.append(
                    f"{pattern!r} {options}: sleuth {len(ours)}, ast-grep {len(theirs)}; only "
                    f"sleuth {sorted(ours - theirs)[:3]}, only ast-grep {sorted(theirs - ours)[:3]}"
                )
    assert len(kept) == count, f"{name}: only {len(kept)} patterns both engines read"
    assert not differ, f"{name} ({lang}): " + "\n".join(differ)


@pytest.mark.parametrize("name", CORPORA)
def test_generated_patterns_match_what_ast_grep_matches(
    name: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = tmp_path_factory.mktemp(f"gen-{name}")
    _compare(name, root, "patterns", PATTERNS, lambda node, _rng: (node, {}))


STRICTNESS = ["cst", "smart", "ast", "relaxed", "signature", "template"]
OPTION_CORPORA = ["django", "rxjs", "tokio", "psutil", "django-css", "scala"]
OPTION_PATTERNS = 12


def _with_options(node: Node, rng: random.Random) -> tuple[Node, Options] | None:
    """A seeded strictness, or the node's kind as the selector of a pattern cut from its
    parent or grandparent (ast-grep's contextual patterns)."""
    parent = node.parent
    if rng.random() < 0.5 and parent is not None and parent.parent is not None:
        outer = parent if rng.random() < 0.6 else parent.parent
        if outer.end_byte - outer.start_byte > 200:
            return None
        return outer, {"selector": node.type}
    return node, {"strictness": rng.choice(STRICTNESS)}


@pytest.mark.parametrize("name", OPTION_CORPORA)
def test_generated_patterns_with_a_strictness_or_a_selector_match_ast_grep(
    name: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = tmp_path_factory.mktemp(f"opt-{name}")
    _compare(name, root, "options", OPTION_PATTERNS, _with_options)
