"""The walker on a real tree against git: this repository's own ``sleuth/`` package copied into
a fresh repository, with ignore files at several depths in the shapes real projects use (the
Linux kernel's ``.*`` + ``!.gitignore``, ``*`` + ``!*/`` + ``!*.py`` re-inclusion, anchored and
``**`` lines, ``*.ext`` and literal names that the matcher answers from tables).

The listing must equal ``git ls-files -o --exclude-standard`` (docs/faces.md#which-files-are-
searched), and a deny list only removes what it names (docs/faces.md#access-policy-denied-files-
are-cloaked); pinned survivors and casualties keep an empty oracle from passing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from sleuth.workspace import Workspace

from .conftest import git_init, git_listed, needs_git, sleuth_listed, write_tree

PACKAGE = Path(__file__).resolve().parents[2] / "sleuth"

IGNORES: dict[str, str | bytes] = {
    # the kernel's top-level shape: hide dot files but keep the ignore files themselves
    ".gitignore": (
        ".*\n!.gitignore\n!.ignore\n*.o\n*.mod.c\nmodules.order\n/vmlinux\n"
        "cscope.*\n*~\n\\#*#\n/include/generated/\n**/tmp/**\n!**/tmp/keep.py\n"
    ),
    # whitelist a folder: ignore everything, re-enter folders, keep Python files only
    "sleuth/workspace/.gitignore": "*\n!*/\n!*.py\n",
    # re-include under a parent's line, and a deeper file re-ignoring what its parent kept
    "sleuth/text_search/.gitignore": "*.py\n!trigram.py\n!/index*.py\n",
    "sleuth/text_search/deep/.gitignore": "!*.py\nskip.py\n",
    # a re-include inside an ignored folder cannot work (git prunes the folder)
    "sleuth/edit/.gitignore": "journal*\nbuild/\n!build/keep.py\n",
    # anchored paths with a slash, and a character class
    "sleuth/query/.gitignore": "/parse*.py\nsub/x.py\n[a-c]*.py\n!b*.py\n",
    # dot files that the top level hides, and one that a nested negation brings back
    "sleuth/.gitignore": "!.keep.cfg\n",
}

EXTRA: dict[str, str | bytes] = {
    "sleuth/text_search/deep/a.py": "x",
    "sleuth/text_search/deep/skip.py": "x",
    "sleuth/text_search/deep/notes.md": "x",
    "sleuth/edit/build/keep.py": "x",
    "sleuth/edit/build/out.o": "x",
    "sleuth/edit/journal.txt": "x",
    "sleuth/query/sub/x.py": "x",
    "sleuth/query/sub/y.py": "x",
    "sleuth/query/sub/parse_me.py": "x",
    "sleuth/workspace/notes.md": "x",
    "sleuth/workspace/data/blob.bin": "x",
    "sleuth/workspace/data/inner.py": "x",
    "sleuth/.keep.cfg": "x",
    "sleuth/.hidden.cfg": "x",
    "sleuth/a.o": "x",
    "sleuth/x.mod.c": "x",
    "sleuth/modules.order": "x",
    "sleuth/cscope.out": "x",
    "sleuth/backup.py~": "x",
    "sleuth/#autosave#": "x",
    "sleuth/tmp/gone.py": "x",
    "sleuth/tmp/keep.py": "x",
    "sleuth/deep/er/tmp/keep.py": "x",
    "vmlinux": "x",
    "sub/vmlinux": "x",
    "include/generated/autoconf.h": "x",
    "include/linux/kernel.h": "x",
}


def _real_tree(root: Path) -> None:
    shutil.copytree(PACKAGE, root / "sleuth", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    write_tree(root, {**EXTRA, **IGNORES})


@needs_git
def test_real_tree_with_nested_negations_equals_git(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    git_init(root)
    _real_tree(root)
    expected = git_listed(root)
    assert sleuth_listed(root) == expected
    assert len(expected) > 100  # the copied package is really there
    for kept in (
        ".gitignore",
        "sleuth/workspace/walker.py",
        "sleuth/workspace/data/inner.py",
        "sleuth/text_search/trigram.py",
        "sleuth/text_search/deep/a.py",
        "sleuth/query/sub/y.py",
        "sleuth/query/sub/parse_me.py",
        "sleuth/.keep.cfg",
        "sleuth/tmp/keep.py",
        "sleuth/deep/er/tmp/keep.py",
        "sub/vmlinux",
        "include/linux/kernel.h",
    ):
        assert kept in expected, kept
    for dropped in (
        "sleuth/workspace/notes.md",
        "sleuth/workspace/data/blob.bin",
        "sleuth/text_search/literal.py",
        "sleuth/text_search/deep/skip.py",
        "sleuth/edit/build/keep.py",
        "sleuth/edit/journal.txt",
        "sleuth/query/sub/x.py",
        "sleuth/query/parse.py",
        "sleuth/.hidden.cfg",
        "sleuth/a.o",
        "sleuth/x.mod.c",
        "sleuth/modules.order",
        "sleuth/cscope.out",
        "sleuth/backup.py~",
        "sleuth/#autosave#",
        "sleuth/tmp/gone.py",
        "vmlinux",
        "include/generated/autoconf.h",
    ):
        assert dropped not in expected, dropped


@needs_git
def test_real_tree_scoped_and_denied(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    git_init(root)
    _real_tree(root)
    write_tree(root, {".sleuth.toml": 'deny = ["sleuth/query/**", "walker.py"]\n'})
    expected = git_listed(root)
    denied = [p for p in expected if p.startswith("sleuth/query/") or p.endswith("/walker.py")]
    assert denied  # the deny list names files git lists
    ws = Workspace(root)
    assert ws.list_files().paths == sorted(set(expected) - set(denied))
    # a scope lists what the whole listing holds under it, with the ignore files above it
    scoped = ws.list_files("sleuth/text_search").paths
    assert scoped == [p for p in expected if p.startswith("sleuth/text_search/")]
    assert "sleuth/text_search/deep/a.py" in scoped
