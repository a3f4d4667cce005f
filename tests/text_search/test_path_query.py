"""Tests for ``files:`` globs and fuzzy path ranking (docs/query.md#files-paths)."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from sleuth.errors import InvalidQuery
from sleuth.text_search.path_query import (
    FRECENCY_BONUS,
    PathQuery,
    compile_path_query,
    match_paths,
)

PATHS = sorted(
    [
        ".env",
        ".github/workflows/ci.yml",
        "README.md",
        "docs/guide/intro.md",
        "sleuth/text_search/path_query.py",
        "sleuth/workbench/search.py",
        "src/app/getUser.ts",
        "src/lib/util.rs",
        "src/main.rs",
        "tests/text_search/test_path_query.py",
        "vendor/src/x.rs",
    ]
)


def globbed(q: str, **kw: bool) -> list[str]:
    pq = compile_path_query(q, **kw)
    assert pq.kind == "glob"
    result = match_paths(pq, PATHS)
    assert all(score is None for _, score in result)
    return [p for p, _ in result]


def fuzzy(q: str, paths: list[str] = PATHS, **kw: object) -> list[str]:
    pq = compile_path_query(q)
    assert pq.kind == "fuzzy"
    return [p for p, _ in match_paths(pq, paths, **kw)]  # type: ignore[arg-type]


def test_basename_glob_matches_at_any_depth() -> None:
    assert globbed("*.rs") == ["src/lib/util.rs", "src/main.rs", "vendor/src/x.rs"]
    assert globbed("intro.m?") == ["docs/guide/intro.md"]


def test_slash_glob_matches_whole_path_anchored_at_root() -> None:
    assert globbed("src/*.rs") == ["src/main.rs"]  # not vendor/src/x.rs, not src/lib/util.rs
    assert globbed("/src/*.rs") == ["src/main.rs"]
    assert globbed("./src/*.rs") == ["src/main.rs"]


def test_double_star_crosses_folders() -> None:
    assert globbed("src/**/*.rs") == ["src/lib/util.rs", "src/main.rs"]
    assert globbed("**/src/*.rs") == ["src/main.rs", "vendor/src/x.rs"]
    assert globbed("docs/**") == ["docs/guide/intro.md"]
    assert globbed("docs/*/") == ["docs/guide/intro.md"]  # a trailing "/" means "below"


def test_alternation_and_classes() -> None:
    assert globbed("*.{md,yml}") == [".github/workflows/ci.yml", "README.md", "docs/guide/intro.md"]
    assert globbed("{src/{main,lib/util},docs/*/intro}.*") == [
        "docs/guide/intro.md",
        "src/lib/util.rs",
        "src/main.rs",
    ]
    assert globbed("[a-m]*.rs") == ["src/main.rs"]
    assert globbed("[!a-m]*.rs") == ["src/lib/util.rs", "vendor/src/x.rs"]
    assert globbed("?.rs") == ["vendor/src/x.rs"]


def test_hidden_files_are_matched() -> None:
    assert ".env" in globbed("*")
    assert globbed("*.yml") == [".github/workflows/ci.yml"]
    assert globbed(".github/**/*.yml") == [".github/workflows/ci.yml"]


def test_star_does_not_cross_slash_and_case_option() -> None:
    assert globbed("src/*") == ["src/main.rs"]
    assert globbed("readme.*") == []
    assert globbed("readme.*", case_sensitive=False) == ["README.md"]


def test_glob_keeps_input_order() -> None:
    pq = compile_path_query("*.rs")
    assert match_paths(pq, ["z.rs", "a.rs"]) == [("z.rs", None), ("a.rs", None)]


@pytest.mark.parametrize(
    ("query", "position"),
    [("src/[abc", 4), ("{a,b", 0), ("*.{rs,md", 2), ("  [x", 2), ("main *.{a", 7)],
)
def test_bad_globs_report_position(query: str, position: int) -> None:
    with pytest.raises(InvalidQuery) as info:
        compile_path_query(query)
    assert info.value.details == {"position": position}
    assert "close it" in info.value.message


def test_empty_query_is_invalid() -> None:
    with pytest.raises(InvalidQuery):
        compile_path_query("   ")


def test_classification() -> None:
    assert compile_path_query("*.py") == PathQuery("glob", "*.py")
    assert compile_path_query("wbsearch").kind == "fuzzy"
    assert compile_path_query("search *.py").kind == "fuzzy"
    assert compile_path_query("src/").kind == "fuzzy"


def test_fuzzy_subsequence_and_ranking() -> None:
    ranked = fuzzy("pathquery")
    assert ranked == ["sleuth/text_search/path_query.py", "tests/text_search/test_path_query.py"]
    # a contiguous basename match beats letters scattered over folder names
    paths = ["sleuth/workbench/search.py", "scripts/each/archive/x.py"]
    assert fuzzy("search", paths) == paths
    # segment starts and camel humps beat mid-word letters
    assert fuzzy("gu", ["src/app/getUser.ts", "src/app/bug.ts"])[0] == "src/app/getUser.ts"
    assert fuzzy("zzz") == []


def test_fuzzy_prefers_basename_and_shorter_paths() -> None:
    paths = ["util/misc.py", "misc/util.py"]
    assert fuzzy("util", paths) == ["misc/util.py", "util/misc.py"]
    assert fuzzy("util", ["a/b/util.py", "a/util.py"]) == ["a/util.py", "a/b/util.py"]


def test_fuzzy_smart_case() -> None:
    assert fuzzy("GETUSER") == []  # an upper-case term is case-sensitive
    assert fuzzy("getuser") == ["src/app/getUser.ts"]
    pq = compile_path_query("GETUSER", case_sensitive=False)
    assert [p for p, _ in match_paths(pq, PATHS)] == ["src/app/getUser.ts"]


def test_inline_constraints() -> None:
    assert set(fuzzy("rs src/")) == {
        "src/main.rs",
        "src/lib/util.rs",
        "vendor/src/x.rs",
        "src/app/getUser.ts",
    }
    assert fuzzy("rs *.rs src/") == ["vendor/src/x.rs", "src/main.rs", "src/lib/util.rs"]
    assert fuzzy("*.py query") == [
        "sleuth/text_search/path_query.py",
        "tests/text_search/test_path_query.py",
    ]
    assert fuzzy("search .py")[0] == "sleuth/workbench/search.py"
    assert "README.md" not in fuzzy("r .py")
    assert fuzzy("tests/ query") == ["tests/text_search/test_path_query.py"]
    assert fuzzy("lib/ src/") == ["src/lib/util.rs"]
    assert fuzzy("docs/") == ["docs/guide/intro.md"]  # constraints alone: shortest first


def test_frecency_breaks_ties_but_does_not_override() -> None:
    tied = ["a/util.py", "b/util.py"]
    assert fuzzy("util", tied) == tied
    assert fuzzy("util", tied, frecency={"b/util.py": 1.0}) == ["b/util.py", "a/util.py"]
    # a clearly better match keeps its place against a maximal frecency bonus
    paths = ["src/config.py", "scripts/old/notes_on_figures.txt"]
    plain = match_paths(compile_path_query("config"), paths)
    assert [p for p, _ in plain] == ["src/config.py", "scripts/old/notes_on_figures.txt"]
    assert plain[0][1] is not None and plain[1][1] is not None
    assert plain[0][1] - plain[1][1] > FRECENCY_BONUS
    boosted = fuzzy("config", paths, frecency={paths[1]: 1.0})
    assert boosted == ["src/config.py", "scripts/old/notes_on_figures.txt"]


def test_fuzzy_is_deterministic_and_sorted() -> None:
    pq = compile_path_query("s")
    first = match_paths(pq, PATHS)
    assert first == match_paths(pq, list(reversed(PATHS)))
    keys = [(-(s or 0.0), p) for p, s in first]
    assert keys == sorted(keys)


def test_a_glob_compiles_once_and_costs_one_match_per_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What keeps 100k paths at tens of milliseconds (no wall clock here: speed is for
    ``benchmarks/``): one compiled pattern per query, one ``fullmatch`` per path, a compiled
    form linear in the glob (no brace expansion), RE2 once stars could make ``re`` backtrack,
    and fuzzy scoring only for the paths the subsequence prefilter lets through."""
    import random
    import string

    from sleuth.text_search import path_query
    from sleuth.workspace.user_globs import LINEAR_FROM, glob_matcher, glob_to_regex

    rnd = random.Random(7)
    paths = sorted(
        "/".join(
            "".join(rnd.choices(string.ascii_lowercase, k=rnd.randint(3, 9)))
            for _ in range(rnd.randint(1, 5))
        )
        + rnd.choice([".py", ".rs", ".md"])
        for _ in range(2_000)
    )
    compiled: list[str] = []
    matched: list[str] = []

    def counting(glob: str, *, ignore_case: bool = False) -> Callable[[str], object]:
        compiled.append(glob)
        match = glob_matcher(glob, ignore_case=ignore_case)

        def counted(path: str) -> object:
            matched.append(path)
            return match(path)

        return counted

    monkeypatch.setattr(path_query, "glob_matcher", counting)
    path_query._compiled.cache_clear()
    first = match_paths(compile_path_query("**/a*/*.py"), paths)
    again = match_paths(compile_path_query("**/a*/*.py"), paths)
    assert first == again and first  # the query matches something, the same both times
    assert compiled == ["**/a*/*.py"] and matched == paths + paths
    path_query._compiled.cache_clear()  # drop the counting matcher it now holds

    groups = "{a,b}" * 12  # expanded, 4096 alternatives; translated, a dozen small groups
    assert len(glob_to_regex(groups + ".py")) < 20 * len(groups)
    star_heavy = glob_matcher("*a" * LINEAR_FROM + "*b")
    assert type(star_heavy.__self__).__module__.startswith("re2")  # type: ignore[attr-defined]
    assert star_heavy("a" * 200) is None and star_heavy("a" * 200 + "b") is not None
    assert type(glob_matcher("**/a*/*.py").__self__) is re.Pattern  # type: ignore[attr-defined]

    scored: list[str] = []
    real_score = path_query._score_term

    def counting_score(needle: str, hay: str, original: str, base: int) -> float:
        scored.append(original)
        return real_score(needle, hay, original, base)

    monkeypatch.setattr(path_query, "_score_term", counting_score)
    hits = [p for p, _ in match_paths(compile_path_query("abc"), paths)]
    assert hits and len(hits) < len(paths) // 2
    assert sorted(scored) == sorted(hits)  # one term, scored once for each path kept
