"""Ignore semantics checked against git itself (``git ls-files -o --exclude-standard``).

Each test builds a tree in a fresh repository and asserts that ``Workspace.list_files`` lists
exactly what git lists (benchmarks/RESULTS.md#measured-constraints), then pins a few expected
survivors so that a broken oracle cannot make a test pass vacuously.
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sleuth.workspace import Workspace

from .conftest import git_init, git_listed, needs_git, sleuth_listed, write_tree
from .test_ignore_parents import rg_files

GitTree = Callable[..., Path]

PITFALL_TREE: dict[str, str | bytes] = {
    ".gitignore": (
        "*.log\n!keep.log\n/anchored.txt\nbuild/\n**/deep/x.txt\na/**/b.txt\n"
        "\\#literal\ntrail.txt   \nesc\\ \nnode_modules\ncache/\n# comment\n\n\\!bang\n"
        "docs/*.md\n!docs/keep.md\nout/**\n!out/top.txt\n"
    ),
    "app.log": "x",
    "keep.log": "x",
    "sub/keep.log": "x",
    "sub/other.log": "x",
    "anchored.txt": "x",
    "sub/anchored.txt": "x",
    "build/o.bin": "x",
    "sub/build/o.bin": "x",
    "build.txt": "x",
    "deep/x.txt": "x",
    "q/deep/x.txt": "x",
    "q/deep/y.txt": "x",
    "a/b.txt": "x",
    "a/m/n/b.txt": "x",
    "a/c.txt": "x",
    "#literal": "x",
    "#other": "x",
    "trail.txt": "x",
    "esc ": "x",
    "esc": "x",
    "!bang": "x",
    "node_modules/pkg/index.js": "x",
    "sub/node_modules": "a file named like a folder pattern",
    "cache/c.dat": "x",
    "sub/cache": "a file: cache/ is dir-only",
    "docs/a.md": "x",
    "docs/keep.md": "x",
    "docs/inner/a.md": "x",
    "out/top.txt": "x",
    "out/sub/deep.txt": "x",
    # the pathspec pitfall (benchmarks/RESULTS.md#measured-constraints): "*", "!*/",
    # "!*.keep" keeps neg/d/one.keep
    "neg/.gitignore": "*\n!*/\n!*.keep\n",
    "neg/d/one.keep": "x",
    "neg/d/two.txt": "x",
    "neg/top.keep": "x",
    # nested .gitignore overriding its parent, and re-inclusion inside an excluded folder
    "nest/.gitignore": "!*.log\n*.txt\n",
    "nest/n.log": "x",
    "nest/n.txt": "x",
    "nest/m.md": "x",
    "excl/.gitignore": "skip/\n!skip/back.txt\n",
    "excl/skip/back.txt": "x",
    "excl/keep.txt": "x",
    ".hidden/h.py": "x",
    ".env": "x",
    "crlf/.gitignore": "*.tmp\r\n!x.tmp\r\n",
    "crlf/a.tmp": "x",
    "crlf/x.tmp": "x",
    "cls/.gitignore": "[ab].c\n[!x]y.c\n?.q\n[[:digit:]]*.d\n",
    "cls/a.c": "x",
    "cls/c.c": "x",
    "cls/zy.c": "x",
    "cls/xy.c": "x",
    "cls/1.q": "x",
    "cls/12.q": "x",
    "cls/7x.d": "x",
    "cls/x7.d": "x",
}


@needs_git
def test_pitfall_tree_equals_git(git_tree: GitTree) -> None:
    root = git_tree(PITFALL_TREE)
    expected = git_listed(root)
    assert sleuth_listed(root) == expected
    # pin the notable survivors and casualties, so an empty oracle cannot pass
    for kept in (
        "neg/d/one.keep",
        "keep.log",
        "nest/n.log",
        "docs/keep.md",
        "#other",
        "esc",
        "sub/cache",
        "sub/anchored.txt",
        "out/top.txt",
        ".env",
        ".hidden/h.py",
        "crlf/x.tmp",
    ):
        assert kept in expected
    for dropped in (
        "neg/d/two.txt",
        "excl/skip/back.txt",
        "anchored.txt",
        "#literal",
        "esc ",
        "trail.txt",
        "out/sub/deep.txt",
        "a/m/n/b.txt",
        "cls/a.c",
        "sub/node_modules",
    ):
        assert dropped not in expected


@needs_git
def test_info_exclude_equals_git(git_tree: GitTree) -> None:
    root = git_tree(
        {
            "a.secret": "x",
            "b.txt": "x",
            "sub/c.secret": "x",
            ".gitignore": "!keep.secret\n",
            "keep.secret": "x",
        },
        exclude="*.secret\n",
    )
    expected = git_listed(root)
    assert sleuth_listed(root) == expected
    assert "b.txt" in expected and "a.secret" not in expected and "keep.secret" in expected


@needs_git
def test_workspace_below_repo_top_uses_parent_gitignore(git_tree: GitTree) -> None:
    root = git_tree(
        {
            ".gitignore": "*.gen\nproj/local/\n/proj/top.txt\n",
            "proj/a.gen": "x",
            "proj/a.py": "x",
            "proj/local/x.py": "x",
            "proj/top.txt": "x",
            "proj/sub/top.txt": "x",
        },
        exclude="proj/sub/*.txt\n",
    )
    expected = sorted(p.removeprefix("proj/") for p in git_listed(root) if p.startswith("proj/"))
    assert sorted(f.path for f in Workspace(root / "proj").list_files().files) == expected
    assert expected == ["a.py"]


@needs_git
def test_dot_ignore_beats_gitignore(git_tree: GitTree) -> None:
    # rg's precedence: a .ignore match decides before any .gitignore match (git ignores .ignore)
    root = git_tree(
        {
            ".gitignore": "*.txt\n",
            ".ignore": "!a.txt\nb.md\n",
            "a.txt": "x",
            "b.md": "x",
            "c.txt": "x",
            "d.md": "x",
        }
    )
    assert sleuth_listed(root) == [".gitignore", ".ignore", "a.txt", "d.md"]


@needs_git
def test_no_ignore_lists_everything_but_internal(git_tree: GitTree) -> None:
    root = git_tree({".gitignore": "*\n", "a.txt": "x", "sub/b.txt": "x"})
    assert sleuth_listed(root) == []
    assert sleuth_listed(root, no_ignore=True) == [".gitignore", "a.txt", "sub/b.txt"]


@needs_git
def test_symlink_to_file_listed_like_git(git_tree: GitTree) -> None:
    root = git_tree({"real.py": "x", ".gitignore": "ign.py\n"})
    (root / "link.py").symlink_to("real.py")
    (root / "ign.py").symlink_to("real.py")
    expected = git_listed(root)
    assert sleuth_listed(root) == expected == [".gitignore", "link.py", "real.py"]


NAMES = ["a", "b", "c.txt", "d.log", ".h", "e f"]
PATTERNS = [
    "*",
    "!*",
    "*.txt",
    "!*.txt",
    "a",
    "a/",
    "/a",
    "!a/",
    "b/*",
    "**/c.txt",
    "a/**",
    "!a/**",
    "a/**/c.txt",
    "*.log",
    "!d.log",
    "[ab]",
    "?",
    ".h",
    "e\\ f",
    "c.txt ",
    "!*/",
    "b/c.txt",
    "/b/",
    "**/a/",
    "a*",
    "\\!x",
    # shapes the matcher answers from tables (prefix, suffix, literal path) or by depth
    "c.*",
    "*xt",
    "!*g",
    "*/c.txt",
    "/a/b",
    "a/*/c.txt",
    # two or more unbounded repeats: run on RE2 (ignore_match.WILD_FROM)
    "*a*",
    "*.t*t",
    "!c*t*",
    "[ab]*x*",
    "**/a/**/c*t",
    "a/*/*.*",
    "**/c*t*",
    "**/b*",
    "b**/*",
]

files_strategy = st.lists(
    st.lists(st.sampled_from(NAMES), min_size=1, max_size=3).map("/".join),
    min_size=1,
    max_size=10,
    unique=True,
)
ignore_strategy = st.lists(st.sampled_from(PATTERNS), max_size=6).map("\n".join)


def _consistent(paths: list[str]) -> dict[str, str | bytes]:
    """Drop paths that would need a name to be both a file and a folder."""
    files: dict[str, str | bytes] = {}
    folders: set[str] = set()
    for p in paths:
        parts = p.split("/")
        dirs = {"/".join(parts[:i]) for i in range(1, len(parts))}
        if p in folders or dirs & files.keys() or p.endswith(("/.gitignore", "/.git")):
            continue
        files[p] = "x"
        folders |= dirs
    return files


@needs_git
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    files=files_strategy,
    top=ignore_strategy,
    nested=ignore_strategy,
    where=st.sampled_from(["a", "b", "a/b"]),
)
def test_random_trees_equal_git(files: list[str], top: str, nested: str, where: str) -> None:
    assert_lists_as_git(files, top, nested, where)


def assert_lists_as_git(files: list[str], top: str, nested: str, where: str) -> None:
    """In a fresh repository of ``files`` with ``top`` as its ``.gitignore`` (and ``nested``
    as ``where``'s, when that is a folder of the tree), sleuth lists what git lists."""
    tree = _consistent(files)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        git_init(root)
        write_tree(root, tree)
        (root / ".gitignore").write_text(top + "\n", encoding="utf-8")
        if nested and (root / where).is_dir():
            (root / where / ".gitignore").write_text(nested + "\n", encoding="utf-8")
        assert sleuth_listed(root) == git_listed(root)


def test_a_line_that_backtracks_without_end_is_answered_as_rg_answers_it(tmp_path: Path) -> None:
    # an ignore file arrives with the tree: under a backtracking matcher this line and this name
    # hung the listing for minutes; rg's automata answer at once (git's wildmatch backtracks
    # too, so rg is the oracle here)
    long = "a" * 200
    root = tmp_path / "ws"
    write_tree(
        root,
        {
            long: "x",
            long + "b": "x",
            "d/" + long + ".c": "x",
            "d/x" + long + "b.c": "x",
            ".gitignore": "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b\nd/**/x*a*a*a*a*a*a*a*a*b*.c\n",
        },
    )
    listed: list[list[str]] = []
    lister = threading.Thread(target=lambda: listed.append(sleuth_listed(root)), daemon=True)
    lister.start()
    lister.join(120)  # a regression backtracks for minutes: the daemon thread is left behind
    assert listed == [rg_files(root, "--no-require-git")]
    assert long + "b" not in listed[0] and long in listed[0]


@needs_git
def test_a_leading_any_depth_group_lends_no_slash_to_the_literal_prefilter(
    git_tree: GitTree,
) -> None:
    # a line on RE2 is tried only on entries holding its longest literal: "/a" was taken from
    # ``**/a*b*c``, whose ``**/`` may match nothing, so ``axbyc`` at the top was listed
    gitignore = "**/a*b*c\n**/d/**/c*t\n"
    files = {"axbyc": "x", "sub/axbyc": "x", "d/c.txt": "x", "sub/d/x/c.txt": "x", "keep": "x"}
    root = git_tree({".gitignore": gitignore, **files})
    assert sleuth_listed(root) == git_listed(root) == [".gitignore", "keep"]


@needs_git
def test_stars_right_after_the_literal_prefix_are_any_depth_as_in_git(git_tree: GitTree) -> None:
    # git compares a path line's literal prefix as a string and runs wildmatch on the rest, so
    # ``**`` right after it is a leading one: ``b**/*`` is ``b`` then ``**/*`` (matches ``b``)
    gitignore = "b**/*\n.**/**[!a]\nc**/d*e*\n"
    files = {"b": "x", "ba": "x", "ab": "x", "cde": "x", "c1/x/dxe": "x", "keep": "x"}
    root = git_tree({".gitignore": gitignore, **files})
    assert sleuth_listed(root) == git_listed(root) == ["ab", "keep"]


@needs_git
def test_a_line_that_can_never_match_runs_on_re2_too(git_tree: GitTree) -> None:
    # a class of only "/" matches nothing under git's rules; its regex was a lookahead, which
    # RE2 refuses, so with two repeats beside it every listing failed (error "internal")
    gitignore = "*[/]*x*\n*a*[/]*\n*y*z*\n"
    root = git_tree({".gitignore": gitignore, "bx": "x", "a": "x", "yz": "x", "keep": "x"})
    assert sleuth_listed(root) == git_listed(root) == [".gitignore", "a", "bx", "keep"]


@needs_git
def test_lines_on_re2_equal_git_with_bytes_that_are_no_utf8(git_tree: GitTree) -> None:
    # a line holding a byte that is no UTF-8 (read as a lone surrogate) cannot be RE2 text
    gitignore = b"*\xff*x*\n*\xc3\xa9*x*\n*q*r*\n"
    root = git_tree({".gitignore": gitignore, "\u00e9ax": "x", "ok": "x", "qzr": "x", "qz": "x"})
    assert sleuth_listed(root) == git_listed(root) == [".gitignore", "ok", "qz"]
