"""User globs mean what ripgrep's ``--glob`` means: checked against ``rg --files --glob G``.

One tree (below) is listed by the real ripgrep 14.1.0 of the project venv for every glob of a
table and for random globs (hypothesis); sleuth's answer is ``PathGlobs([G]).match`` over the
same files (what ``include`` and ``deny`` use) and, for a glob a ``files:`` query would take as
one, ``match_paths`` of that query. Where rg refuses a glob, sleuth raises. The few places where
sleuth deliberately answers differently are pinned, each with rg's answer, in ``DIFFERENCES``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sleuth.api import Workbench
from sleuth.errors import InvalidQuery
from sleuth.text_search.path_query import GLOB_CHARS, compile_path_query, match_paths
from sleuth.workspace import Workspace
from sleuth.workspace.paths import PathGlobs
from sleuth.workspace.user_globs import GlobSyntaxError, glob_matcher, parse_glob

MakeWs = Callable[[dict[str, str | bytes]], Path]

TREE = [
    "#h",
    ".env",
    ".github/workflows/ci.yml",
    ".hidden/h.py",
    ".py",
    "-.c",
    "!.c",
    "A.PY",
    "^.c",
    "a,b.py",
    "a.c",
    "a.py",
    "a/b",
    "a].py",
    "ab",
    "abc",
    "axb",
    "ab.py",
    "b",
    "b.rs",
    "c",
    "b\\c",
    "bang",
    "br[a].c",
    "data",
    "docs/README.md",
    "docs/guide/intro.md",
    "foo/foo",
    "lib/ab.c",
    "lib/x.py",
    "lib/y.rs",
    "q?.md",
    "sp ace",
    "src/A.Py",
    "src/a.py",
    "src/b.py",
    "src/sub/c.py",
    "src/sub/deep/d.py",
    "star*.txt",
    "vendor/src/v.py",
    "we{ird}.py",
    "x-y.c",
    "x/a/b/c.txt",
    "x/b.py",
    "x/ab",
    "x/data",
    "x]y.c",
    "{a}",
]

# Valid globs: sleuth and rg list the same files.
GLOBS = [
    # the issue: both faces used to disagree here
    "{src,lib}/*.py",
    "{src,lib}/**",
    # basename at any depth vs anchored path
    "*.py",
    "a.py",
    "ab",
    "foo",
    "data",
    "src/*.py",
    "/src/*.py",
    "/ab",
    "*/b",
    "src/*",
    # `**`
    "**",
    "**/*.py",
    "**/b",
    "**/src/*.py",
    "**/src/**/*.py",
    "src/**",
    "src/**/*.py",
    "x/**",
    "x/**/c.txt",
    "a/**",
    "/**/ab",
    "**/**",
    "a**b",
    "**a",
    "*a",
    "x/**b",
    "src**/a.py",
    "x/a**/c.txt",
    # `?`, classes
    "?.py",
    "?py",
    "?.c",
    "[ab].py",
    "[!a]*.py",
    "[^a]*.py",
    "[a-c].py",
    "[!a-z].PY",
    "[]]y.c",
    "x[]]y.c",
    "x[!]]y.c",
    "[-a].c",
    "[a-].c",
    "[!-].c",
    "[\\]c",
    "[[:alpha:]].py",
    "br[[]a].c",
    "src[/]a.py",
    "src[!x]a.py",
    "?[!x]b",
    # alternation
    "*.{py,rs}",
    "*.{py}",
    "{a,b}.{py,rs}",
    "{a,b}{.py,.rs}",
    "*{a,b}.py",
    "{,a}.py",
    "{a,}.py",
    "{}.py",
    "{*.py,*.rs}",
    "{x/ab,bang}",
    "src/{a,b}.py",
    "{**/a.py,b.rs}",
    "x{/ab,/data}",
    "{src/**,lib/*.rs}",
    "a,b.py",
    # escapes and literal specials
    "\\*",
    "star\\*.txt",
    "q\\?.md",
    "br\\[a\\].c",
    "we\\{ird\\}.py",
    "\\{a\\}",
    "{a\\,b}.py",
    "b\\\\c",
    "\\a.py",
    "\\!.c",
    "^.c",
    "sp ace",
    "a.py   ",
    "nothing*",
    # enough stars to run on RE2 (user_globs.LINEAR_FROM)
    "*a*b*.*",
    "**/x/**/*.*",
    "{src,lib}/**/*?*.*",
]

# Globs rg refuses; sleuth raises GlobSyntaxError (InvalidQuery from PathGlobs and files:).
REFUSED = ["[abc", "[!]", "[]", "[z-a]", "a[c-a]", "{a,b", "*.{py,rs", "x\\", "src/[", "{a,[b}"]

# Where sleuth answers differently, on purpose: glob -> (sleuth's files, rg 14.1.0's files).
DIFFERENCES: dict[str, tuple[set[str], set[str]]] = {
    # a trailing "/": rg lists nothing (folders only); sleuth takes everything below the folder
    # (at any depth, as for any glob without another "/")
    "src/": (
        {
            "src/A.Py",
            "src/a.py",
            "src/b.py",
            "src/sub/c.py",
            "src/sub/deep/d.py",
            "vendor/src/v.py",
        },
        set(),
    ),
    "/src/": ({"src/A.Py", "src/a.py", "src/b.py", "src/sub/c.py", "src/sub/deep/d.py"}, set()),
    "sub/": ({"src/sub/c.py", "src/sub/deep/d.py"}, set()),
    # a leading "./": rg matches nothing; sleuth anchors it at the root like "/"
    "./src/*.py": ({"src/a.py", "src/b.py"}, set()),
    # a leading "#": rg drops the glob as a gitignore comment (so lists everything); a glob here
    "#h": ({"#h"}, set(TREE)),
    # nested alternates: rg 14.1.0 refuses them, rg 14.1.1+ takes them (as sleuth does)
    "{src/{a,b},lib/x}.py": ({"src/a.py", "src/b.py", "lib/x.py"}, {"error"}),
}


def _rg() -> str:
    """The venv's ripgrep 14.1.0 (pinned in pyproject), next to this interpreter."""
    local = Path(sys.executable).with_name("rg")
    found = str(local) if local.exists() else shutil.which("rg")
    assert found is not None, "ripgrep is not installed (pip install -e '.[test]')"
    return found


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("globs")
    for rel in TREE:
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("x\n")
    return root


def rg_files(root: Path, glob: str, option: str = "--glob") -> set[str] | None:
    """What ``rg --files --glob G`` lists (every file visible to it); None when rg refuses G."""
    proc = subprocess.run(
        [_rg(), "--files", "--no-config", "--hidden", "--no-ignore", option, glob],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode == 2 and "error parsing glob" in proc.stderr:
        return None
    assert proc.returncode in (0, 1), proc.stderr
    return set(proc.stdout.splitlines())


def sleuth_files(glob: str) -> set[str] | None:
    """What ``PathGlobs([G])`` matches among the files of the tree; None when sleuth refuses G."""
    try:
        globs = PathGlobs([glob])
    except InvalidQuery:
        return None
    return {p for p in TREE if globs.match(p)}


def files_query(glob: str, *, case_sensitive: bool = True) -> set[str] | None:
    """``files:G`` on the same paths, when ``files:`` takes G as one glob (else None)."""
    if not GLOB_CHARS & set(glob) or len(glob.split()) != 1 or glob != glob.strip():
        return None
    pq = compile_path_query(glob, case_sensitive=case_sensitive)
    assert pq.kind == "glob"
    return {p for p, _ in match_paths(pq, TREE)}


def test_rg_sees_the_whole_tree(tree: Path) -> None:
    assert rg_files(tree, "*") == set(TREE)  # the oracle lists every file of the tree


@pytest.mark.parametrize("glob", GLOBS)
def test_glob_lists_what_rg_lists(tree: Path, glob: str) -> None:
    expected = rg_files(tree, glob)
    assert expected is not None, f"rg refuses {glob!r}: move it to REFUSED"
    assert sleuth_files(glob) == expected
    via_files = files_query(glob)
    assert via_files is None or via_files == expected


def test_the_table_is_not_vacuous(tree: Path) -> None:
    listed = [rg_files(tree, g) for g in GLOBS]
    assert sum(1 for found in listed if found) >= len(GLOBS) * 3 // 4
    assert {"lib/x.py", "src/a.py", "src/b.py"} == rg_files(tree, "{src,lib}/*.py")
    on_re2 = [g for g in GLOBS if type(glob_matcher(g).__self__).__module__.startswith("re2")]  # type: ignore[attr-defined]
    assert len(on_re2) >= 3  # both engines are held to rg's answers


@pytest.mark.parametrize("glob", REFUSED)
def test_what_rg_refuses_is_refused(tree: Path, glob: str) -> None:
    assert rg_files(tree, glob) is None
    with pytest.raises(GlobSyntaxError):
        parse_glob(glob)
    with pytest.raises(InvalidQuery) as info:
        PathGlobs([glob])
    assert info.value.details["glob"] == glob
    if GLOB_CHARS & set(glob):
        with pytest.raises(InvalidQuery):
            compile_path_query(glob)


@pytest.mark.parametrize("glob", sorted(DIFFERENCES))
def test_deliberate_differences(tree: Path, glob: str) -> None:
    ours, theirs = DIFFERENCES[glob]
    assert sleuth_files(glob) == ours
    listed = rg_files(tree, glob)
    assert (listed if listed is not None else {"error"}) == theirs


def test_a_stray_closing_brace_is_refused(tree: Path) -> None:
    # rg 14.1.0 drops a `}` that closes nothing (`a}` lists what `a` lists); 14.1.1+ refuses it
    assert rg_files(tree, "ab}") == rg_files(tree, "ab") == {"ab", "x/ab"}
    with pytest.raises(GlobSyntaxError) as info:
        parse_glob("ab}")
    assert (info.value.problem, info.value.position) == ("unopened `}`", 2)


def test_question_mark_is_one_character_not_one_byte(tmp_path: Path) -> None:
    (tmp_path / "é.txt").write_text("x\n")
    assert rg_files(tmp_path, "?.txt") == set()  # rg's `?` matches one byte of the UTF-8 name
    assert rg_files(tmp_path, "??.txt") == {"é.txt"}
    assert PathGlobs(["?.txt"]).match("é.txt")  # sleuth's matches one character


@pytest.mark.parametrize(
    "glob", ["*.py", "src/*.py", "[a-b].py", "{A,x}.py", "*.{PY,RS}", "*A*b*.P*"]
)
def test_case_insensitive_like_iglob(tree: Path, glob: str) -> None:
    assert files_query(glob, case_sensitive=False) == rg_files(tree, glob, "--iglob")


def test_negated_include_is_an_exclusion_like_rg(tree: Path) -> None:
    listed = {f.path for f in Workspace(tree).list_files(include=["!*.py"]).files}
    assert listed == rg_files(tree, "!*.py")
    assert "a.py" not in listed and "b.rs" in listed


def test_files_query_and_include_agree_through_the_api(make_workspace: MakeWs) -> None:
    """Regression: ``files:{src,lib}/*.py`` found 2 files where ``include`` found 0."""
    root = make_workspace({"src/a.py": "x\n", "lib/b.py": "x\n", "doc/c.py": "x\n"})
    with Workbench(root) as wb:
        by_files = {m["path"] for m in wb.search("files:{src,lib}/*.py").to_json()["matches"]}
        by_include = {
            m["path"] for m in wb.search("x", include=["{src,lib}/*.py"]).to_json()["matches"]
        }
    assert by_files == by_include == {"src/a.py", "lib/b.py"}


# --- random globs ----------------------------------------------------------------------------

_ALPHABET = "ab.x/*?[]!^-{},\\"
# pieces that make globs which match something in TREE more often than single characters do
_PIECES = ["a", "b", "x", "src", "py", "c", ".", ".py", "/", "*", "**", "**/", "/**", "?"]
_PIECES += ["[", "]", "[ab]", "[!a]", "[a-c]", "[/]", "{", "}", ",", "{a,b}", "{src,lib}", "{,a}"]
_PIECES += ["{*.py,b}", "\\", "\\*", "-", "!", "^"]
_GLOBS = st.text(alphabet=_ALPHABET, min_size=1, max_size=8) | st.lists(
    st.sampled_from(_PIECES), min_size=1, max_size=6
).map("".join)


def _compared(glob: str) -> bool:
    """Whether rg's answer is the one sleuth must give (not one of the DIFFERENCES kinds)."""
    body = glob[1:] if glob.startswith("/") else glob
    return not (
        body.startswith(("/", "./"))
        or glob.rstrip().endswith("/")
        or glob.startswith(("!", "#"))
        or glob != glob.rstrip()
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(glob=_GLOBS.filter(_compared))
def test_random_globs_list_what_rg_lists(tree: Path, glob: str) -> None:
    expected = rg_files(tree, glob)
    try:
        parse_glob(glob)
    except GlobSyntaxError as exc:
        if exc.problem == "unopened `}`":
            return  # rg 14.1.0 drops it, 14.1.1+ refuses it (test_a_stray_closing_brace_is_refused)
        assert expected is None, f"sleuth refuses {glob!r} ({exc}), rg lists {expected}"
        return
    if expected is None:  # rg 14.1.0 refuses nested groups, which sleuth reads as 14.1.1+ does
        assert glob.count("{") >= 2, f"rg refuses {glob!r}, sleuth accepts it"
        return
    assert sleuth_files(glob) == expected, glob
    via_files = files_query(glob)
    assert via_files is None or via_files == expected, glob


def test_a_deny_glob_a_tree_brings_runs_in_linear_time() -> None:
    # a tree's own .sleuth.toml can name deny globs, checked against every listed path: three
    # `**` took 4.6 s a check against a path 1,000 folders deep under the backtracking re
    from sleuth.workspace.user_globs import LINEAR_FROM

    glob = "a/**/" * 3 + "b"
    assert LINEAR_FROM <= 3
    matcher = glob_matcher(glob)
    assert type(getattr(matcher, "__self__", None)).__module__ == "re2"  # RE2's automaton
    assert matcher("a/" * 1000 + "x") is None
    assert matcher("a/" * 10 + "b")
