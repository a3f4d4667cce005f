"""Pattern-compilation benchmark: how long an ``ast:`` pattern that does not parse takes to be
answered ``invalid_query`` (issue 15), as its size grows.

Each row is one ``Workbench(root).search("ast:" + PATTERN)`` in this process over a small tree
holding one file of each of several languages, with ``lang`` set (one candidate language) and
without (every language of the tree is a candidate), plus the number of tree-sitter parses the
compiler ran (counted through ``sleuth.ast_search.pattern``'s ``Parser``). The pattern is
``{$K: $V}*`` repeated, the shape the issue reported, and one just under the query cap.
Compilation should cost time linear in the size: the seconds per KiB column should stay flat.

Usage (from the repository root)::

    python -m benchmarks.pattern_compile                     # 320, 640 and 16 KiB
    python -m benchmarks.pattern_compile --reps 40 80 160 320 --lang javascript
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any
from unittest import mock

from tree_sitter import Parser

from sleuth.api import Workbench
from sleuth.ast_search import pattern as pattern_module
from sleuth.errors import SleuthError
from sleuth.query.request import MAX_QUERY_CHARS

UNIT = "{$K: $V}*"
FILES = {
    "a.js": "const a = {k: 1};\n",
    "a.ts": "let a: number = 1;\n",
    "a.py": 'x = {"k": 1}\n',
    "a.go": "package main\nfunc f() { g(1) }\n",
    "a.rs": "fn main() { let a = 1; }\n",
    "a.c": "int main() { return 0; }\n",
    "A.java": "class A { void f() {} }\n",
    "a.rb": "puts 1\n",
}


class _CountingParser:
    """Wraps tree-sitter's ``Parser`` to count ``parse`` calls."""

    calls = 0

    def __init__(self, *args: Any) -> None:
        self._inner = Parser(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def parse(self, *args: Any, **kwargs: Any) -> Any:
        type(self).calls += 1
        return self._inner.parse(*args, **kwargs)


def run_one(root: Path, pattern: str, lang: str | None) -> tuple[float, int, str]:
    """(seconds, parses, error code or "ok") of one search for ``pattern``."""
    bench = Workbench(root, build_index=False, servers=False)
    _CountingParser.calls = 0
    kwargs = {"lang": lang} if lang else {}
    start = time.perf_counter()
    with mock.patch.object(pattern_module, "Parser", _CountingParser):
        try:
            bench.search("ast:" + pattern, **kwargs)  # type: ignore[arg-type]
            outcome = "ok"
        except SleuthError as exc:
            outcome = exc.code
    return time.perf_counter() - start, _CountingParser.calls, outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    cap = (MAX_QUERY_CHARS - len("ast:")) // len(UNIT)
    parser.add_argument("--reps", type=int, nargs="*", default=[320, 640, cap])
    parser.add_argument("--lang", nargs="*", default=["javascript", ""])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name, text in FILES.items():
            (root / name).write_text(text)
        Workbench(root, build_index=False, servers=False).search("ast:foo($A)")  # warm imports
        print("| reps | chars | lang | seconds | s/KiB | parses | answer |")
        print("|---:|---:|---|---:|---:|---:|---|")
        for reps in args.reps:
            pattern = UNIT * reps
            for lang in args.lang:
                seconds, parses, outcome = run_one(root, pattern, lang or None)
                per_kib = seconds / (len(pattern) / 1024)
                print(
                    f"| {reps} | {len(pattern)} | {lang or '(all)'} | {seconds:.2f} | "
                    f"{per_kib:.3f} | {parses} | {outcome} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
