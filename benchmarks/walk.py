"""Walker benchmark: sleuth's listing against ``rg --files`` and ``git ls-files`` on one tree.

Each round times, interleaved so that all see the same machine load (round 0 is a warm-up and
is not counted):

* ``sleuth`` -- ``Workspace(tree).list_files()`` in this process, a new ``Workspace`` per round
  (ignore files compiled afresh, as in a one-shot CLI call), and the same split between two
  processes (``Tuning.walk_processes=2``, as the CLI's listing child walks);
* ``rg --files (same rules)`` -- ``--hidden --no-require-git -g !.git/ -g !.sleuth/``, the
  walking rules sleuth follows (docs/faces.md#which-files-are-searched);
* ``rg --files`` -- rg's defaults (hidden files skipped; ``.gitignore`` only inside git);
* ``git ls-files`` -- ``-o --exclude-standard`` (``-co`` when the tree is a repository); a tree
  outside git gets a throw-away git folder elsewhere, so nothing is written into it;
* with ``--bindings``, the ``ignore``-crate bindings that are installed (``rignore``,
  ``ignore-python``), each with the ``lstat`` per file that a listing needs.

Then it checks the listing against git's: sleuth lists every file git lists except symlinks
that do not name a regular file inside the root (sleuth never follows those; git lists every
link); the size cap is lifted for the check (``any_size``). Cells are medians; ``ratio`` is
sleuth / rg with the same rules.

Usage::

    python -m benchmarks.walk --tree ~/.cache/sleuth/corpora/linux-6.1/linux-source-6.1
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.tools import find_tool

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sleuth.tuning import Tuning  # noqa: E402
from sleuth.workspace import Workspace  # noqa: E402

RG_SAME = ("--no-config", "--files", "--hidden", "--no-require-git", "-g", "!.git/")


def _git_env(home: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(HOME=home, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    return env


def _git_command(tree: Path, scratch: str) -> list[str]:
    inside = subprocess.run(
        ["git", "-C", str(tree), "rev-parse", "--show-toplevel"],
        capture_output=True,
        env=_git_env(scratch),
    )
    if inside.returncode == 0:
        return ["git", "-C", str(tree), "ls-files", "-co", "--exclude-standard", "-z"]
    gitdir = os.path.join(scratch, "git")
    subprocess.run(["git", "init", "-q", "--bare", gitdir], check=True, env=_git_env(scratch))
    return [
        "git",
        f"--git-dir={gitdir}",
        f"--work-tree={tree}",
        "-C",
        str(tree),
        "ls-files",
        "-o",
        "--exclude-standard",
        "-z",
    ]


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> bytes:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, check=True, env=env).stdout


def _bindings(tree: Path) -> dict[str, Callable[[], int]]:
    """The installed ignore-crate bindings, each listing files with an lstat per file."""
    found: dict[str, Callable[[], int]] = {}
    root = str(tree)
    try:
        import rignore

        def with_rignore() -> int:
            n = 0
            for p in rignore.walk(
                root,
                ignore_hidden=False,
                read_global_git_ignore=False,
                require_git=False,
                overrides=["!.git", "!/.sleuth"],
            ):
                st = os.lstat(str(p))
                n += not (st.st_mode & 0o040000)
            return n

        found["rignore + lstat"] = with_rignore
    except ImportError:
        pass
    try:
        import ignore
        import ignore.overrides

        def with_ignore_python() -> int:
            ov = ignore.overrides.OverrideBuilder(tree).add("!.git").add("!/.sleuth").build()
            walk = ignore.WalkBuilder(tree).hidden(False).git_global(False).require_git(False)
            n = 0
            for entry in walk.overrides(ov).build():
                st = os.lstat(str(entry.path()))
                n += not (st.st_mode & 0o040000)
            return n

        found["ignore-python + lstat"] = with_ignore_python
    except ImportError:
        pass
    return found


def _compare(tree: Path, git_out: bytes) -> tuple[bool, list[str], list[str], int]:
    """(equal, only sleuth, only git, git's links sleuth leaves out by its symlink rule)."""
    ours = set(Workspace(tree).list_files(any_size=True).paths)
    theirs = {p for p in git_out.decode("utf-8", "surrogateescape").split("\0") if p}
    theirs = {p for p in theirs if not p.startswith(".sleuth/")}
    links = set()
    for p in theirs - ours:
        full = tree / p
        real = os.path.realpath(full)
        if full.is_symlink() and not (real.startswith(str(tree) + "/") and os.path.isfile(real)):
            links.add(p)
    only_ours = sorted(ours - theirs)
    only_git = sorted(theirs - ours - links)
    return not only_ours and not only_git, only_ours, only_git, len(links)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--tree", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--bindings", action="store_true", help="also time rignore/ignore-python")
    args = ap.parse_args()
    tree = args.tree.resolve()
    rg = find_tool("rg")
    if shutil.which("git") is None:
        raise SystemExit("git not found")
    with tempfile.TemporaryDirectory() as scratch:
        git_cmd = _git_command(tree, scratch)
        env = _git_env(scratch)
        split = Tuning(walk_processes=2)
        runs: dict[str, Callable[[], object]] = {
            "sleuth": lambda: Workspace(tree).list_files(),
            "sleuth, split in 2 (the CLI's child)": lambda: Workspace(
                tree, tuning=split
            ).list_files(),
            "rg --files (same rules)": lambda: _run([rg, *RG_SAME, "-g", "!.sleuth/"], tree),
            "rg --files": lambda: _run([rg, "--files"], tree),
            "git ls-files": lambda: _run(git_cmd, tree, env),
        }
        if args.bindings:
            runs.update(_bindings(tree))
        times: dict[str, list[float]] = {name: [] for name in runs}
        for rnd in range(args.rounds + 1):
            for name, fn in runs.items():
                t0 = time.perf_counter()
                fn()
                if rnd:
                    times[name].append(time.perf_counter() - t0)
        equal, only_ours, only_git, links = _compare(tree, _run(git_cmd, tree, env))
    n_files = len(Workspace(tree).list_files().files)
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"tree: {tree} ({n_files:,} files listed), rounds: {args.rounds}, load {load}")
    print(f"listing equal to git's: {'yes' if equal else 'no'}", end="")
    print(f" (git's {links} symlinks to folders or outside the root left out, as the rules say)")
    for label, diff in (("only sleuth", only_ours), ("only git", only_git)):
        if diff:
            print(f"  {label}: {len(diff)}, e.g. {diff[:5]}")
    rg_same = statistics.median(times["rg --files (same rules)"])
    print("\n| walker | median (s) | ratio to rg --files (same rules) |\n|---|---|---|")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"| {name} | {med:.3f} | {med / rg_same:.2f}x |")


if __name__ == "__main__":
    main()
