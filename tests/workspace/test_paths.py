"""Path normalisation, the ignore-file (wildmatch) translation and ``PathGlobs``.

The user-glob translator (rg's ``--glob``) is checked against rg itself in ``test_glob_parity.py``.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sleuth.errors import InvalidPath, InvalidQuery
from sleuth.workspace.paths import PathGlobs, ancestors, normalize_rel
from sleuth.workspace.wildmatch import wildmatch_to_regex


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("", ""),
        (".", ""),
        ("/", ""),
        ("./", ""),
        ("src/", "src"),
        ("./src//a.py", "src/a.py"),
        ("src/../a.py", "a.py"),
        ("a/./b/../c", "a/c"),
    ],
)
def test_normalize_rel(given: str, expected: str) -> None:
    assert normalize_rel(given) == expected


@pytest.mark.parametrize("bad", ["/etc/passwd", "//x", "..", "../x", "a/../../x", "a\x00b"])
def test_normalize_rel_rejects(bad: str) -> None:
    with pytest.raises(InvalidPath) as info:
        normalize_rel(bad)
    assert info.value.code == "invalid_path"
    assert "relative" in info.value.message or "root" in info.value.message


def test_ancestors_deepest_first() -> None:
    assert list(ancestors("a/b/c")) == ["a/b/c", "a/b", "a"]
    assert list(ancestors("")) == []


def _m(glob: str, path: str) -> bool:
    body = wildmatch_to_regex(glob)
    return body is not None and re.fullmatch(body, path, re.DOTALL) is not None


@pytest.mark.parametrize(
    ("glob", "path", "hit"),
    [
        ("*.py", "a.py", True),
        ("*.py", "d/a.py", False),
        ("?.py", "a.py", True),
        ("?.py", "/.py", False),
        ("**/x", "x", True),
        ("**/x", "a/b/x", True),
        ("a/**/b", "a/b", True),
        ("a/**/b", "a/x/y/b", True),
        ("a/**/b", "ab", False),
        ("a/**", "a/x/y", True),
        ("a/**", "a", False),
        ("a**b", "axxb", True),
        ("a**b", "a/b", False),
        ("[ab].c", "b.c", True),
        ("[!ab].c", "c.c", True),
        ("[!ab].c", "/.c", False),
        ("[a-c]x", "bx", True),
        ("[]]x", "]x", True),
        ("[[:digit:]]", "7", True),
        ("\\#x", "#x", True),
        ("\\*", "*", True),
        ("\\*", "a", False),
        ("a[/]b", "a/b", False),
    ],
)
def test_wildmatch_to_regex(glob: str, path: str, hit: bool) -> None:
    assert _m(glob, path) is hit


@pytest.mark.parametrize("never", ["[abc", "x\\", "[[:nope:]]"])
def test_globs_git_never_matches(never: str) -> None:
    assert wildmatch_to_regex(never) is None


def test_pathglobs_base_name_and_path() -> None:
    globs = PathGlobs(["*.md", "src/*.py", "./docs/"])
    assert globs.match("a/b/readme.md")
    assert globs.match("src/a.py")
    assert not globs.match("src/sub/a.py")
    assert globs.match("docs")
    assert not PathGlobs([])
    assert globs.match_any_level("docs/x/y.txt")


def test_pathglobs_whole_folder() -> None:
    assert PathGlobs(["secrets/**"], whole_folder=True).match("secrets")
    assert not PathGlobs(["secrets/**"]).match("secrets")


@pytest.mark.parametrize(
    ("globs", "rel", "expected"),
    [
        (["notes.txt"], "notes.txt", True),
        (["notes.txt"], "a/b/notes.txt", True),
        (["notes.txt"], "a/notes.txt.bak", False),
        (["notes.txt"], "a/Notes.txt", False),  # case-sensitive, as the regex form
        (["notes.txt"], "notes.txt/inner.py", False),  # the name itself, not its folder
        (["notes.txt", "*.md"], "docs/readme.md", True),
        (["notes.txt", "src/*.py"], "src/app.py", True),
        (["a+b(c).py"], "x/a+b(c).py", True),  # regex metacharacters are literal in a glob
        (["a+b(c).py"], "x/aab(c).py", False),
    ],
)
def test_literal_base_names_match_like_their_glob(
    globs: list[str], rel: str, expected: bool
) -> None:
    """Globs without wildcards are looked up in a set; the answer is the regex's."""
    assert PathGlobs(globs).match(rel) is expected
    assert bool(PathGlobs(globs))


def test_pathglobs_whole_folder_cloaks_the_folder_at_any_depth() -> None:
    """A deny rule errs on the side of hiding: ``secrets/**`` also cloaks ``src/secrets``
    (and so everything the walker would find below it), as it always has."""
    deny = PathGlobs(["secrets/**", "keys/"], whole_folder=True)
    assert deny.match("secrets") and deny.match("secrets/a/b.pem")
    assert deny.match("src/secrets")
    assert not PathGlobs(["secrets/**"]).match("src/secrets/a.pem")  # include/exclude: rg's
    assert deny.match("keys") and deny.match("src/keys") and deny.match("src/keys/k.pem")


def test_pathglobs_rg_meaning() -> None:
    globs = PathGlobs(["{src,lib}/*.py", "./top.txt", "*.{md,rst}"])
    assert globs.match("src/a.py") and globs.match("lib/b.py")
    assert not globs.match("vendor/src/a.py")
    assert globs.match("top.txt") and not globs.match("d/top.txt")  # `./` anchors like `/`
    assert globs.match("docs/x.rst")


@pytest.mark.parametrize(
    ("glob", "position"), [("src/[abc", 4), ("{a,b", 0), ("a}", 1), ("x\\", 1), ("[z-a]", 0)]
)
def test_pathglobs_refuses_what_rg_refuses(glob: str, position: int) -> None:
    with pytest.raises(InvalidQuery) as info:
        PathGlobs(["*.py", glob])
    assert info.value.details == {"glob": glob, "position": position}
    assert repr(glob) in info.value.message


@given(st.text(alphabet="a./\x00", max_size=12))
def test_the_canonical_shortcut_answers_what_the_full_normalisation_does(path: str) -> None:
    """``normalize_rel`` returns a path that is already canonical unchanged, without splitting
    it: only where the full normalisation would return it unchanged too."""
    from sleuth.workspace.paths import _CANONICAL, _normalized

    if _CANONICAL.fullmatch(path):
        assert _normalized(path) == path
    try:
        full = _normalized(path)
    except InvalidPath:
        with pytest.raises(InvalidPath):
            normalize_rel(path)
        return
    assert normalize_rel(path) == full
