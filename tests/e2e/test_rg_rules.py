"""The last text and ignore rules where sleuth differed from ripgrep, each with rg as the oracle.

Every test builds a small tree, runs ripgrep 14.1.0 (``.venv/bin/rg``) on it with sleuth's
walking rules spelled out (as ``test_rg_parity.py`` does: ``--no-config --hidden
--no-require-git``, ``.git/`` and ``.sleuth/`` never searched) and compares the set of
``(path, line)`` with what ``Workbench.search`` reports. Inside a git repository rg runs with its
default (``require-git``), which is git's own rule for ``.gitignore``, and ``git ls-files`` is
asked too. The rules (docs/faces.md#which-files-are-searched, docs/query.md):

* ignore files in the folders *above* the root apply to it, anchored at their own folder;
* ``foo\\/`` in an ignore file is the folder pattern ``foo/``;
* a UTF-8 BOM does not stop ``^`` from matching at the start of line 1;
* a class holding U+000A (``\\p{Any}``, ``[\\x00-\\x7f]``) makes a pattern multi-line (``rg -U``);
* ``\\A`` and ``\\z`` of a line-oriented pattern anchor at each line's ends (rg matches lines one
  by one), of a multi-line one at the file's;
* an include/exclude glob rg refuses (an unclosed ``[``) is ``invalid_query``;
* a pattern that must match a NUL (``foo\\x00?``) is ``invalid_query``, as rg refuses it;
* rg's word start and end (``\\<``, ``\\>``, ``\\b{start}``), ``(?U)``, ``[^]a]`` and ``\\s``
  (Unicode white space) find what rg finds; spellings the dialects read differently (``a{,3}``, ``[a&&b]``) are refused.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from sleuth.api import Workbench
from sleuth.errors import InvalidQuery
from sleuth.text_search.matchers import regex_matcher
from sleuth.workspace.ignore import find_repo

RG = Path(sys.executable).with_name("rg")
WALK = ("--no-config", "--hidden", "--no-require-git", "-g", "!.git/", "-g", "!.sleuth/")
IN_GIT = ("--no-config", "--hidden", "-g", "!.git/", "-g", "!.sleuth/")
PRINT = ("-n", "--no-heading", "--with-filename", "--null", "--color", "never")
Hit = tuple[str, int]
Tree = dict[str, str | bytes]


def write(root: Path, files: Tree) -> Path:
    for rel, content in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return root


def rg(
    root: Path, args: Sequence[str], walk: Sequence[str] = WALK
) -> subprocess.CompletedProcess[bytes]:
    assert RG.exists(), (
        f"ripgrep is not installed next to {sys.executable} (pip install -e '.[test]')"
    )
    return subprocess.run([str(RG), *walk, *args], cwd=root, capture_output=True, check=False)


def rg_hits(root: Path, args: Sequence[str], walk: Sequence[str] = WALK) -> set[Hit]:
    proc = rg(root, [*PRINT, *args, "--", "."], walk)
    assert proc.returncode in (0, 1), proc.stderr.decode()
    hits: set[Hit] = set()
    for raw in proc.stdout.split(b"\n"):
        if raw:
            name, _, rest = raw.partition(b"\0")
            path = os.fsdecode(name).removeprefix("./")
            hits.add((path, int(rest.partition(b":")[0])))
    return hits


def sleuth_hits(root: Path, query: str, **options: object) -> set[Hit]:
    page = Workbench(root).search(query, context=0, limit=500, **options).to_json()  # type: ignore[arg-type]
    assert page.get("next_cursor") is None, "the trees here fit one page"
    hits: set[Hit] = set()
    for m in page["matches"]:
        for line in range(m["line"], (m.get("end_line") or m["line"]) + 1):
            hits.add((m["path"], line))
    return hits


def git(root: Path, *args: str) -> str:
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, HOME=str(root))
    proc = subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, check=True)
    return proc.stdout.decode()


# --- ignore files above the root ----------------------------------------------------------

ABOVE: list[tuple[str, Tree, bool]] = [  # (name, files above the root, hides anything)
    ("gitignore_anchored", {".gitignore": "/a/b\n"}, True),
    ("ignore_anchored", {".ignore": "/a/b\n"}, True),
    ("unanchored_name", {".gitignore": "c\n*.log\n"}, True),
    ("anchored_at_its_own_folder", {".ignore": "/b\n/c/\n"}, False),  # no b/, c/ beside a/
    ("two_levels_up", {"up/.gitignore": "/p/a/b/\n", "up/p/.ignore": "z.txt\n"}, True),
    ("deeper_file_wins", {".gitignore": "*.log\n", "a/.ignore": "!k.log\n"}, True),
    ("dot_ignore_beats_gitignore", {".ignore": "!m.log\n", "a/.gitignore": "*.log\n"}, True),
]
INNER: Tree = {"b/x.txt": "tok\n", "c/y.txt": "tok\n", "z.txt": "tok\n", "k.log": "tok\n"}
INNER |= {"m.log": "tok\n", "b/deep/w.txt": "tok\n"}


@pytest.mark.parametrize(("name", "above", "hides"), ABOVE, ids=[n for n, _, _ in ABOVE])
def test_ignore_files_above_the_root_without_git(
    name: str, above: Tree, hides: bool, tmp_path: Path
) -> None:
    outer = write(tmp_path / "outer", above)
    base = outer / "up" / "p" if name == "two_levels_up" else outer
    root = write(base / "a", INNER)
    assert find_repo(str(root)) is None, "the tree must lie outside any git repository"

    expected = rg_hits(root, ["-e", "tok"])
    assert sleuth_hits(root, "tok") == expected
    assert expected and (expected != {(p, 1) for p in INNER}) == hides


def test_ignore_files_above_the_root_inside_git(tmp_path: Path) -> None:
    """Below the repository top, rg's default and git agree on ``.gitignore``: none above the
    top is read. rg still reads every ``.ignore`` above (git does not know the file)."""
    outer = write(tmp_path / "outer", {".ignore": "/repo/a/b\n", ".gitignore": "/repo/a/c\n"})
    repo = outer / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    write(repo, {".gitignore": "/a/k.log\n"})
    root = write(repo / "a", INNER)

    expected = rg_hits(root, ["-e", "tok"], walk=IN_GIT)
    assert sleuth_hits(root, "tok") == expected
    assert ("b/x.txt", 1) not in expected and ("k.log", 1) not in expected
    listed = set(git(repo, "ls-files", "-o", "--exclude-standard").split())
    assert "a/c/y.txt" in listed and "a/k.log" not in listed  # git: no .gitignore above the top
    assert ("c/y.txt", 1) in expected


# --- an escaped trailing slash --------------------------------------------------------------


@pytest.mark.parametrize("ignore_file", [".gitignore", ".ignore"])
def test_escaped_trailing_slash_is_a_folder_pattern(ignore_file: str, tmp_path: Path) -> None:
    root = write(
        tmp_path / "ws",
        {
            ignore_file: "foo\\/\nsub/bar\\/\n",
            "foo/x.txt": "tok\n",
            "deep/foo/y.txt": "tok\n",
            "file/foo": "tok\n",  # a file named foo: a folder pattern leaves it alone
            "sub/bar/z.txt": "tok\n",
            "bar/z.txt": "tok\n",
            "keep.txt": "tok\n",
        },
    )
    expected = rg_hits(root, ["-e", "tok"])
    assert sleuth_hits(root, "tok") == expected
    assert ("foo/x.txt", 1) not in expected and ("file/foo", 1) in expected


# --- a UTF-8 BOM and `^` -------------------------------------------------------------------

BOM_PATTERNS = ["^foo", "^f", r"^\S+$", "^", r"^[a-z]", "(?i)^FOO", r"\bfoo"]


@pytest.mark.parametrize("pattern", BOM_PATTERNS)
def test_bom_does_not_stop_a_line_anchor(pattern: str, tmp_path: Path) -> None:
    root = write(
        tmp_path / "ws",
        {
            "bom.txt": b"\xef\xbb\xbffoo\nfoo\n",
            "bom_only_line.txt": b"\xef\xbb\xbffoo",
            "plain.txt": b"foo\nbar\n",
        },
    )
    expected = rg_hits(root, ["-e", pattern])
    assert sleuth_hits(root, f"regex:{pattern}") == expected
    if pattern != r"\bfoo":
        assert ("bom.txt", 1) in expected


# --- classes holding a newline make a pattern multi-line -----------------------------------

MULTI = [r"a\p{Any}b", r"a[\x00-\x7f]b", r"a[\t-\r]+b", r"a\p{Cc}b", r"a[\p{Any}]b", r"a\pCb"]
SINGLE = [r"a\P{L}b", r"a[^x]b", r"a\sb", r"a[\x0b-\x7f]b", r"a\Db"]
NEWLINE_TEXT = "a\nb\naxb\na b\na\tb\n"


@pytest.mark.parametrize("pattern", MULTI + SINGLE)
def test_a_class_holding_a_newline_is_multiline(pattern: str, tmp_path: Path) -> None:
    root = write(tmp_path / "ws", {"t.txt": NEWLINE_TEXT})
    multiline = regex_matcher(pattern).multiline
    assert multiline == (pattern in MULTI)
    expected = rg_hits(root, [*(["-U"] if multiline else []), "-e", pattern])
    assert sleuth_hits(root, f"regex:{pattern}") == expected
    assert (("t.txt", 2) in expected) == multiline  # only a multi-line match reaches line 2


# --- `\A` and `\z`: the ends of each line, unless the pattern is multi-line ---------------

TEXT_ANCHORS = [r"\Anext", r"line\z", r"\A\z", r"\Astart", r"(\Anext|end\z)", r"\A\s+\z"]
TEXT_ANCHORS += [r"\Aa\nb", r"b\nend\z", r"\Astart\nnext"]
ANCHOR_TREE: Tree = {
    "lines.txt": "start here\nnext line\n\n  \nend",
    "crlf.txt": b"start\r\nnext line\r\n",
    "bom.txt": b"\xef\xbb\xbfnext line\nx\n",
    "ab.txt": "a\nb\nend",
}


@pytest.mark.parametrize("pattern", TEXT_ANCHORS)
def test_text_anchors_are_line_anchors_in_a_line_pattern(pattern: str, tmp_path: Path) -> None:
    root = write(tmp_path / "ws", ANCHOR_TREE)
    multiline = regex_matcher(pattern).multiline
    expected = rg_hits(root, [*(["-U"] if multiline else []), "-e", pattern])
    assert sleuth_hits(root, f"regex:{pattern}") == expected
    if pattern == r"\Anext":
        assert ("lines.txt", 2) in expected  # the premise: a line's start, not the file's


# --- include/exclude globs rg refuses -------------------------------------------------------

GLOBS = ["[abc", "a[bc", "*.[ch", "[]abc", "[!abc", "{[abc,x}", "x/[abc", "[a-", "[abc\\]", "[]a]"]
GLOBS += ["*.txt", "[ab]*", "[!a]*", "{a,b}*"]


@pytest.mark.parametrize("glob", GLOBS)
def test_a_glob_rg_refuses_is_invalid_query(glob: str, tmp_path: Path) -> None:
    root = write(tmp_path / "ws", {"a.txt": "tok\n", "[abc": "tok\n", "b.c": "tok\n"})
    for option, spelling in (("include", glob), ("exclude", "!" + glob)):
        proc = rg(root, ["-g", spelling, "-n", "-e", "tok", "."])
        refused = proc.returncode == 2
        assert not refused or b"error parsing glob" in proc.stderr
        if refused:
            with pytest.raises(InvalidQuery):
                sleuth_hits(root, "tok", **{option: [glob]})
        else:
            expected = rg_hits(root, ["-g", spelling, "-e", "tok"])
            assert sleuth_hits(root, "tok", **{option: [glob]}) == expected
        if glob == "[abc":
            assert refused  # the unclosed class of the issue


# --- a NUL in a pattern ---------------------------------------------------------------------

NUL_REFUSED = [r"foo\x00?", r"\x00", r"[\x00]", r"foo|\x00", r"(\x00)*", r"\u0000", r"\x{0}"]
NUL_PATTERNS = [*NUL_REFUSED, r"[\x00-\x01]", r"[\x00a]", r"[^\x00]o", r"foo"]


@pytest.mark.parametrize("pattern", NUL_PATTERNS)
def test_a_pattern_that_must_match_a_nul_is_refused(pattern: str, tmp_path: Path) -> None:
    root = write(tmp_path / "ws", {"t.txt": "foo\nbar\na\n", "u.txt": "\x01\n"})
    rg_pattern = pattern.replace(r"\u0000", r"\x{0}")  # rg spells \u0000 as \x{0}
    proc = rg(root, ["-e", rg_pattern, "."])
    refused = proc.returncode == 2
    assert not refused or b'contains "\\0"' in proc.stderr, proc.stderr.decode()
    if refused:
        with pytest.raises(InvalidQuery) as info:
            sleuth_hits(root, f"regex:{pattern}")
        assert "NUL" in info.value.message
    else:
        expected = rg_hits(root, ["-e", rg_pattern])
        assert sleuth_hits(root, f"regex:{pattern}") == expected
    assert refused == (pattern in NUL_REFUSED)  # rg refuses exactly the patterns named so


# --- regex spellings ripgrep reads its own way ------------------------------------------------

SPELLINGS = [r"\<foo", r"foo\>", r"\<foo\>", r"\b{start}bar\b{end}", r"\w+\>", "[^]a]+", "[^]]x"]
SPELLINGS += ["(?U)o+", "(?U:o+)b", "[]a]x", r"a\sb", r"^\S+$", r"[\s]b", r"a[^\s]b"]
SPELLING_TREE: Tree = {
    "w.txt": "foo bar\nfoobar\nbarfoo\n(foo)\nfoo_x\nxfoo\n]x\nax\nbx\noob\n",
    "s.txt": "a b\na\u00a0b\na\u3000b\na\u2028b\na\tb\na\x0bb\naxb\n",  # Unicode spaces
}


@pytest.mark.parametrize("pattern", SPELLINGS)
def test_ripgreps_regex_spellings_find_what_rg_finds(pattern: str, tmp_path: Path) -> None:
    root = write(tmp_path / "ws", SPELLING_TREE)
    expected = rg_hits(root, ["-e", pattern])
    assert expected  # the premise: rg finds something to agree on
    assert sleuth_hits(root, f"regex:{pattern}") == expected


REFUSED = ["a{,3}", "(?i)+", "x(?m){2}", "[a-z&&[^aeiou]]", "[a--b]", "[a~~b]", r"x\B{start}"]


@pytest.mark.parametrize("pattern", REFUSED)
def test_a_spelling_the_dialects_read_differently_is_refused(pattern: str, tmp_path: Path) -> None:
    # rg refuses some (a{,3}, (?i)+); reads others as set operations that other dialects read
    # as characters: sleuth says so rather than pick one reading silently
    root = write(tmp_path / "ws", SPELLING_TREE)
    with pytest.raises(InvalidQuery) as info:
        sleuth_hits(root, f"regex:{pattern}")
    assert info.value.details["position"] >= 0


# --- include and exclude globs on folders -----------------------------------------------------

FOLDER_TREE: Tree = {
    "a.py/inner.txt": "tok\n", "a.b": "tok\n", "lib/x.txt": "tok\n", "e/lib": "tok\n",
    "c.PY/d.txt": "tok\n", "top.txt": "tok\n", "src/a.py": "tok\n", "src/sub/b.txt": "tok\n",
}  # fmt: skip
FOLDER_GLOBS: list[tuple[list[str], list[str]]] = [
    (["a*"], []),  # a folder `a.py` matches, and its files do not: rg keeps files only
    (["[ab]*"], []),
    (["*.PY"], []),
    (["*.py"], ["src/*"]),
    (["src/*"], []),
    ([], ["lib/"]),  # a folder glob: the file `e/lib` stays
    ([], ["a*"]),  # an exclude prunes the folder `a.py`
    ([], ["src/**"]),
]


@pytest.mark.parametrize(("include", "exclude"), FOLDER_GLOBS)
def test_include_and_exclude_on_folders_list_what_rg_lists(
    include: list[str], exclude: list[str], tmp_path: Path
) -> None:
    root = write(tmp_path / "ws", FOLDER_TREE)
    args = [a for g in include for a in ("-g", g)] + [a for g in exclude for a in ("-g", f"!{g}")]
    expected = rg_hits(root, [*args, "-e", "tok"])
    assert sleuth_hits(root, "tok", include=include, exclude=exclude) == expected


def test_an_include_without_wildcards_takes_a_folder_whole(tmp_path: Path) -> None:
    # rg keeps only files named `lib` for `-g lib`; sleuth gives the spelling a use: every
    # file below a folder named `lib` too (docs/query.md#options)
    root = write(tmp_path / "ws", FOLDER_TREE)
    assert rg_hits(root, ["-g", "lib", "-e", "tok"]) == {("e/lib", 1)}
    assert sleuth_hits(root, "tok", include=["lib"]) == {("e/lib", 1), ("lib/x.txt", 1)}
