"""A listing filtered from the whole tree's equals the walk it stands for
(sleuth/workspace/listing_filter.py): same files, same files over the size cap counted."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sleuth.workspace import Workspace
from sleuth.workspace.listing_filter import derive_listing, excludes_nothing, names_of
from sleuth.workspace.paths import PathGlobs
from sleuth.workspace.walker import FileList

CAP = 64

TREE: dict[str, bytes] = {
    "a.py": b"x = 1\n",
    "big.py": b"#" * (CAP + 1),
    "README.md": b"hi\n",
    ".gitignore": b"build/\n*.log\n!keep.log\n",
    "keep.log": b"kept\n",
    "drop.log": b"dropped\n",
    "build/out.py": b"ignored\n",
    "src/app.py": b"app\n",
    "src/big.c": b"#" * (CAP + 5),
    "src/util/helpers.py": b"help\n",
    "src/util/tests/test_helpers.py": b"t\n",
    "src/vendor/lib.js": b"lib\n",
    "docs/guide.md": b"guide\n",
    "docs/api/index.md": b"api\n",
    "tests/test_a.py": b"t\n",
    "tests/data/x.json": b"{}\n",
}

GLOBS = [
    "*.py", "*.md", "src", "src/", "src/**", "tests", "**/tests/**", "util", "*.{py,md}",
    "vendor/", "src/util/*.py", "big.*", "!*.md", "docs/**/*.md", "[ab]*", "*.log", "x.json",
    "nothing-here",
]  # fmt: skip
SCOPES = ["", "src", "src/util", "docs", "tests"]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    root = tmp_path_factory.mktemp("tree")
    for rel, data in TREE.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    os.symlink("a.py", root / "link.py")
    ws = Workspace(root, max_filesize=CAP)
    yield ws
    ws.close()


def _shape(listing: FileList) -> tuple[list[tuple[str, int]], int]:
    return [(f.path, f.size) for f in listing.files], listing.skipped.too_large


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    scope=st.sampled_from(SCOPES),
    include=st.lists(st.sampled_from(GLOBS), max_size=3),
    exclude=st.lists(st.sampled_from(GLOBS), max_size=3),
    any_size=st.booleans(),
)
def test_a_filtered_listing_is_the_walk_of_its_scope_and_globs(
    workspace: Workspace, scope: str, include: list[str], exclude: list[str], any_size: bool
) -> None:
    base = workspace.walker((), (), True).walk("")
    walked = workspace.walker(include, exclude, any_size).walk(scope)
    inc = PathGlobs([g for g in include if not g.startswith("!")])
    exc = PathGlobs(list(exclude) + [g[1:] for g in include if g.startswith("!")])
    derived = derive_listing(base, scope, inc, exc, None if any_size else CAP)
    assert derived is not None
    assert _shape(derived) == _shape(walked)


def test_a_file_scope_or_a_folder_without_listed_files_is_left_to_the_walk(
    workspace: Workspace,
) -> None:
    base = workspace.walker((), (), True).walk("")
    none = PathGlobs([])
    assert derive_listing(base, "a.py", none, none, CAP) is None
    assert derive_listing(base, "build", none, none, CAP) is None  # ignored: a walk lists it
    assert workspace.walker((), (), False).walk("build").paths == ["build/out.py"]


def test_a_watched_workspace_answers_globbed_listings_as_its_walks_do(tmp_path: Path) -> None:
    for rel, data in TREE.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    ws = Workspace(tmp_path, max_filesize=CAP)
    ws.watch()
    try:
        deadline = time.monotonic() + 10.0
        while ws.generation is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert ws.generation is not None
        for scope in SCOPES:
            for globs in ([], ["*.py"], ["src/"], ["nothing-here"]):
                got = ws.list_files(scope, (), globs)
                want = ws.walker((), globs, False).walk(scope)
                assert _shape(got) == _shape(want), (scope, globs)
                got = ws.list_files(scope, globs, ())
                want = ws.walker(globs, (), False).walk(scope)
                assert _shape(got) == _shape(want), (scope, globs)
        before = ws.generation
        (tmp_path / "src" / "new.py").write_bytes(b"new\n")  # a change the next listing sees
        deadline = time.monotonic() + 10.0
        while ws.generation == before and time.monotonic() < deadline:
            time.sleep(0.02)
        assert ws.generation != before
        assert "src/new.py" in ws.list_files("", (), ["*.md"]).paths
    finally:
        ws.close()


def test_an_exclude_of_names_no_file_or_folder_has_drops_nothing(workspace: Workspace) -> None:
    base = workspace.walker((), (), True).walk("")
    names = names_of(base)
    assert {"a.py", "src", "util", "tests", "test_helpers.py"} <= names
    assert excludes_nothing(names, PathGlobs(["nothing-here", "also-not"]))
    assert not excludes_nothing(names, PathGlobs(["nothing-here", "util"]))  # a folder's name
    assert not excludes_nothing(names, PathGlobs(["app.py"]))
    assert not excludes_nothing(names, PathGlobs(["*.none"]))  # not a name: only a pass knows
    assert not excludes_nothing(names, PathGlobs(["src/nothing"]))  # a path, not a name
