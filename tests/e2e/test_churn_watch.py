"""Outside churn under a watching workbench, with a fresh one-shot ``Workbench`` as the oracle.

A seeded run of outside mutations (new files, appends, truncations, same-size rewrites with
the mtime put back, renames, deletions, folders made, removed and swapped for symlinks, ignore
rules added, removed and rewritten to the same size, deny globs added and removed, files made
binary or too large) interleaved with searches. After each mutation:

* at once, before the watcher reports, no match is in a file the deny list cloaks now
  (docs/SAFETY.md#cloaking-and-the-root: the deny list is checked before every call);
* once the watcher caught up (``catch_up``), every query answers exactly what a fresh
  workbench answers: the same matches, byte ranges, ``total`` and ``complete``.
"""

from __future__ import annotations

import os
import random
import shutil
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from sleuth.api import Workbench
from sleuth.tuning import Tuning
from sleuth.workspace.policy import AccessPolicy
from tests.conftest import MakeWorkspace

SETTLED = replace(Tuning(), watch_settle_s=0.3)
CAP = 2048
WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "TODO", "x = 1"]
QUERIES: list[tuple[str, dict[str, Any]]] = [
    ("alpha", {}),
    ("BETA", {"case_sensitive": False}),
    ("regex:gam+a\\w*", {}),
    ("regex:delta\\nepsilon", {}),
    ("alpha AND TODO", {}),
    ("files:*.py", {}),
]


def _text(rng: random.Random, lines: int) -> str:
    rows = (" ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 4))) for _ in range(lines))
    return "\n".join(rows) + "\n"


class Churn:
    def __init__(self, root: Path, rng: random.Random) -> None:
        self.root, self.rng, self.deny = root, rng, ["secret/**"]

    def files(self) -> list[Path]:
        found = [p for p in self.root.rglob("*") if ".sleuth" not in p.parts]
        keep = (p for p in found if p.is_file() and not p.is_symlink())
        return sorted(p for p in keep if not p.name.startswith("."))  # not the rule files

    def config(self) -> None:
        deny = ", ".join(f'"{g}"' for g in self.deny)
        (self.root / ".sleuth.toml").write_text(f"max_filesize = {CAP}\ndeny = [{deny}]\n")

    def mutate(self) -> str:
        rng, root = self.rng, self.root
        files = self.files()
        f = rng.choice(files) if files else root / "new.py"
        kind = rng.choice(
            ["new", "append", "truncate", "same", "rename", "delete", "dir", "symdir",
             "ignore", "ignore_same", "deny", "undeny", "binary", "large"]
        )  # fmt: skip
        if kind == "new" or not f.exists():
            folder = root / rng.choice(["", "a", "a/b", "c", "secret"])
            folder.mkdir(parents=True, exist_ok=True)
            f = folder / f"n{rng.randint(0, 9)}{rng.choice(['.py', '.c', '.txt'])}"
            f.write_text(_text(rng, 5))
        elif kind == "append":
            with f.open("a") as fh:
                fh.write(_text(rng, 2))
        elif kind == "truncate":
            f.write_bytes(f.read_bytes()[: rng.randint(0, f.stat().st_size)])
        elif kind == "same":
            st, size = f.stat(), f.stat().st_size
            f.write_bytes(_text(rng, 20).encode()[:size].ljust(size))
            os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
        elif kind == "rename":
            os.replace(f, root / "a" / f"r{rng.randint(0, 3)}.py")
        elif kind == "delete":
            f.unlink()
        elif kind in ("dir", "symdir"):
            folder = root / rng.choice(["c", "a/b", "d"])
            if folder.is_symlink():
                folder.unlink()
            elif folder.exists():
                shutil.rmtree(folder)
            if kind == "symdir":
                folder.symlink_to(root / "a")
            else:
                folder.mkdir()
                (folder / "m.py").write_text(_text(rng, 4))
        elif kind == "ignore":
            rule = rng.choice(["*.txt\n", "a/b/\n", "n1*\n", ""])
            (root / rng.choice(["", "a"]) / ".gitignore").write_text(rule)
        elif kind == "ignore_same":
            ignore = root / ".gitignore"
            st = ignore.stat()
            ignore.write_text(rng.choice(["*.py\n", "*.c\n", "n*.\n", "*.tx\n"]))  # all 5 bytes
            os.utime(ignore, ns=(st.st_atime_ns, st.st_mtime_ns))
        elif kind == "deny":
            self.deny.append(rng.choice(["a/**", "*.txt", "c/**", "n1*"]))
            self.config()
        elif kind == "undeny":
            self.deny = self.deny[:1]
            self.config()
        elif kind == "binary":
            f.write_bytes(b"\0" + f.read_bytes())
        else:
            with f.open("a") as fh:
                fh.write("alpha beta\n" * (CAP // 11 + 1))
        return f"{kind} {f.relative_to(root)}"


def _answer(wb: Workbench, query: str, options: dict[str, Any]) -> dict[str, Any]:
    page = wb.search(query, context=0, limit=500, **options).to_json()
    rows = [
        (m["path"], m["line"], m["column"], m["start_byte"], m["end_byte"], m["text"])
        for m in page["matches"]
    ]
    return {"rows": sorted(rows, key=str), "total": page["total"], "complete": page["complete"]}


@pytest.mark.parametrize("seed", [1, 2])
def test_watched_answers_follow_outside_churn(make_workspace: MakeWorkspace, seed: int) -> None:
    rng = random.Random(seed)
    tree = {
        f"{d}n{i}.py": _text(rng, 6) for d in ("", "a/", "a/b/", "c/", "secret/") for i in (0, 1)
    }
    root = make_workspace({**tree, ".gitignore": "*.tx\n"})
    churn = Churn(root, rng)
    churn.config()
    with Workbench(root, watch=True, build_index=False, servers=False, tuning=SETTLED) as wb:
        deadline = time.monotonic() + 10
        while wb.workspace.generation is None and time.monotonic() < deadline:
            time.sleep(0.02)  # the watcher's settle time
        for step in range(20):
            what = churn.mutate()
            policy = AccessPolicy(churn.deny)
            query, options = QUERIES[step % len(QUERIES)]
            early = _answer(wb, query, options)["rows"]
            assert not [r for r in early if policy.is_denied(r[0])], (step, what)
            assert wb.workspace.catch_up(10.0), "the watcher stopped confirming"
            for query, options in QUERIES:
                with Workbench(root, build_index=False, servers=False) as fresh:
                    want = _answer(fresh, query, options)
                assert _answer(wb, query, options) == want, (step, what, query)
