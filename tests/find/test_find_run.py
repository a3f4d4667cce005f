"""``Workbench.find`` (sleuth/service/find.py, finder.py) against a tree with known answers:
every parameter, both pagination schemes, every diagnostics field, the warning and the aliases,
and grep pages equal to ``search`` results."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sleuth.api import Workbench
from sleuth.errors import InvalidQuery, NotFound, SleuthError
from sleuth.service.find import MAX_RESULTS, FindRequest

TREE: dict[str, str | bytes] = {
    "pyproject.toml": '[tool.sleuth]\ndeny = ["secret/**"]\n',
    "src/app.py": "from src.users import get_user\n\n\ndef handler(uid):\n"
    "    user = get_user(uid)\n    return user\n",
    "src/users.py": 'USERS = {1: "ada"}\n\n\ndef get_user(uid):\n    return USERS.get(uid)\n\n\n'
    "def GetUser(uid):\n    return get_user(uid)\n",
    "src/lib/core.rs": "fn get_user() {}\n// TODO: cache get_user\n",
    "src/lib/view.ts": "export function getUser() {}\n",
    "tests/test_users.py": "from src.users import get_user\n\n\ndef test_get_user():\n"
    '    assert get_user(1) == "ada"\n',
    "docs/notes.md": "Call get_user with an id.\nTODO: write more\n",
    "secret/keys.py": "get_user = 'hidden'\n",
}
LISTED = [  # what find may see, in listing order (secret/ is denied)
    "docs/notes.md",
    "pyproject.toml",
    "src/app.py",
    "src/lib/core.rs",
    "src/lib/view.ts",
    "src/users.py",
    "tests/test_users.py",
]
GET_USER = [  # every get_user, as (path, line, column)
    ("docs/notes.md", 1, 6),
    ("src/app.py", 1, 23),
    ("src/app.py", 5, 12),
    ("src/lib/core.rs", 1, 4),
    ("src/lib/core.rs", 2, 16),
    ("src/users.py", 4, 5),
    ("src/users.py", 9, 12),
    ("tests/test_users.py", 1, 23),
    ("tests/test_users.py", 4, 10),
    ("tests/test_users.py", 5, 12),
]
POSITION = ("path", "line", "column", "end_line", "end_column", "start_byte", "end_byte", "text")


@pytest.fixture
def wb(make_workspace: Callable[[dict[str, str | bytes]], Path]) -> Iterator[Workbench]:
    with Workbench(make_workspace(TREE), build_index=False) as bench:
        yield bench


def where(matches: list[dict[str, Any]]) -> list[tuple[str, int, int]]:
    return [(m["path"], m["line"], m["column"]) for m in matches]


def paths(matches: list[dict[str, Any]]) -> list[str]:
    return [m["path"] for m in matches]


# -- files mode --------------------------------------------------------------------------------


def test_files_mode_ranks_fuzzy_paths_with_references(wb: Workbench) -> None:
    found = wb.find("users")
    assert (found.mode, found.grep_mode, found.total_matched) == ("files", None, 2)
    assert paths(found.matches) == ["src/users.py", "tests/test_users.py"]
    assert found.matches[0]["score"] > found.matches[1]["score"]
    assert [m["n"] for m in found.matches] == [1, 2] and found.next_offset is None
    assert found.result is not None and found.diagnostics is None
    assert wb.find("users").result == found.result  # the same find, the same id
    ref = found.matches[0]["ref"]["match"]
    assert ref == f"{found.result}:1:match"
    assert wb.read(ref).ranges[0]["path"] == "src/users.py"
    assert wb.find("users").result != found.result  # the read moved its frecency: a new ranking


def test_files_mode_inline_constraints_path_and_ext(wb: Workbench) -> None:
    assert paths(wb.find("user *.py").matches) == ["src/users.py", "tests/test_users.py"]
    assert paths(wb.find("user !tests/").matches) == ["src/users.py"]
    assert paths(wb.find("src/ user").matches) == ["src/users.py"]
    assert paths(wb.find("", ext="rs").matches) == ["src/lib/core.rs"]
    assert paths(wb.find("", path="src/lib").matches) == ["src/lib/core.rs", "src/lib/view.ts"]
    assert paths(wb.find("*.{rs,ts} !view").matches) == ["src/lib/core.rs"]


def test_denied_files_never_appear(wb: Workbench) -> None:
    assert "secret/keys.py" not in paths(wb.find("", max_results=MAX_RESULTS).matches)
    assert wb.find("keys").total_matched == 0
    grep = wb.find("hidden", mode="grep")
    assert grep.matches == [] and grep.diagnostics is not None
    with pytest.raises(NotFound):
        wb.find("", path="secret")


def test_an_empty_needle_lists_every_file_and_item_offsets_page_it(wb: Workbench) -> None:
    pages, offset = [], 0
    while True:
        page = wb.find("", max_results=3, offset=offset)
        assert page.offset == offset and page.max_results == 3 and page.total_matched == 7
        pages.append(page)
        if page.next_offset is None:
            break
        assert page.next_offset == offset + 3
        offset = page.next_offset
    assert [len(p.matches) for p in pages] == [3, 3, 1]
    assert [m["n"] for p in pages for m in p.matches] == list(range(1, 8))
    assert [path for p in pages for path in paths(p.matches)] == LISTED
    assert len({p.result for p in pages}) == 1


def test_reads_and_edits_through_sleuth_rank_files_first(
    make_workspace: Callable[[dict[str, str | bytes]], Path],
) -> None:
    root = make_workspace({"a/users.py": "A = 1\n", "b/users.py": "B = 1\n"})
    with Workbench(root, build_index=False) as bench:
        assert paths(bench.find("users").matches) == ["a/users.py", "b/users.py"]
        assert [m["frecency"] for m in bench.find("users").matches] == [0.0, 0.0]
        bench.read("b/users.py")
        ranked = bench.find("users").matches
        assert paths(ranked) == ["b/users.py", "a/users.py"] and ranked[0]["frecency"] == 0.5
        line = bench.search('"A = 1"').matches[0]["ref"]["match"]
        bench.replace(line, "A = 2")  # an edit weighs more than a read
        assert paths(bench.find("users").matches) == ["a/users.py", "b/users.py"]
    with Workbench(root, build_index=False) as again:  # kept in .sleuth/ between processes
        assert paths(again.find("users").matches) == ["a/users.py", "b/users.py"]


def test_files_mode_zero_results_carry_diagnostics(wb: Workbench) -> None:
    empty = wb.find("*.rs zzzq")
    assert empty.matches == [] and empty.result is None and empty.next_offset is None
    assert empty.diagnostics == {
        "total_files": 7,
        "total_files_searched": 1,
        "filtered_file_count": 1,
        "files_with_matches": 0,
        "constraints": {"path": None, "globs": ["*.rs"], "folders": [], "ext": [], "exclude": []},
        "offset": 0,
        "limit": 50,
        "next_file_offset": None,
    }
    past = wb.find("users", offset=5)
    assert past.matches == [] and past.total_matched == 2
    assert past.diagnostics is not None and past.diagnostics["files_with_matches"] == 2
    assert past.diagnostics["offset"] == 5


# -- grep mode ---------------------------------------------------------------------------------


def test_plain_text_grep_finds_every_occurrence_with_search_references(wb: Workbench) -> None:
    found = wb.find("get_user", mode="grep")
    assert (found.grep_mode, found.total_matched, found.files_with_matches) == ("plain_text", 10, 5)
    assert where(found.matches) == GET_USER and found.next_offset is None
    assert all(m["ref"]["line"] == f"{found.result}:{m['n']}:line" for m in found.matches)
    assert wb.read(found.matches[3]["ref"]["match"]).ranges[0]["text"] == "get_user"


@pytest.mark.parametrize(
    ("needle", "grep_mode", "query"),
    [
        ("get_user", "plain_text", '"get_user"'),
        ("get_user", "plain_text", "get_user"),
        ("USERS.get(", "plain_text", '"USERS.get("'),
        ('"ada"', "plain_text", 'regex:"ada"'),
        (r"get_\w+\(", "regex", r"regex:get_\w+\("),
        (r"^def \w+", "regex", r"regex:^def \w+"),
    ],
)
def test_grep_equals_search_for_the_same_literal_or_regex(
    wb: Workbench, needle: str, grep_mode: str, query: str
) -> None:
    found = wb.find(needle, mode="grep", grep_mode=grep_mode, max_results=MAX_RESULTS)
    searched = wb.search(query, limit=MAX_RESULTS, context=0)
    assert found.matches, needle
    assert [[m[k] for k in POSITION] for m in found.matches] == [
        [m[k] for k in POSITION] for m in searched.matches
    ]


def test_smart_case_and_case_sensitive(wb: Workbench) -> None:
    assert where(wb.find("GetUser", mode="grep").matches) == [("src/users.py", 8, 5)]
    lower = wb.find("getuser", mode="grep")
    assert lower.case_sensitive is False
    assert where(lower.matches) == [("src/lib/view.ts", 1, 17), ("src/users.py", 8, 5)]
    exact = wb.find("getuser", mode="grep", case_sensitive=True)
    assert exact.matches == [] and exact.case_sensitive is True and exact.diagnostics is not None
    # a regex's escapes are no upper-case letters: \W keeps smart case insensitive
    assert wb.find(r"getuser\W", mode="grep", grep_mode="regex").case_sensitive is False


def test_context_lines(wb: Workbench) -> None:
    (match,) = wb.find("def get_user", mode="grep", context_lines=1).matches
    assert match["context"] == {"before": [""], "after": ["    return USERS.get(uid)"]}
    (bare,) = wb.find("def get_user", mode="grep").matches
    assert bare["context"] == {"before": [], "after": []}
    assert FindRequest.build("x", context_lines=99).context_lines == 20


def test_file_based_offsets_page_whole_files(wb: Workbench) -> None:
    pages, offset = [], 0
    while offset is not None:
        page = wb.find("get_user", mode="grep", max_results=3, offset=offset)
        assert page.offset == offset and page.total_matched == len(page.matches) <= 3
        pages.append(page)
        offset = page.next_offset
    assert [p.next_offset for p in pages] == [3, 5, 6, None]
    assert [sorted(set(paths(p.matches))) for p in pages] == [
        ["docs/notes.md", "src/app.py"],
        ["src/lib/core.rs"],
        ["src/users.py"],
        ["tests/test_users.py"],
    ]
    assert [w for p in pages for w in where(p.matches)] == GET_USER
    assert [p.files_with_matches for p in pages] == [2, 1, 1, 1]


def test_a_file_alone_over_max_results_is_cut_with_a_note(wb: Workbench) -> None:
    page = wb.find("get_user", mode="grep", max_results=2, offset=6)
    assert where(page.matches) == GET_USER[7:9] and page.total_matched == 3
    assert page.note is not None and "tests/test_users.py alone has 3 matches" in page.note
    assert page.next_offset is None


def test_a_page_shows_every_match_of_its_files_whatever_their_text_size(
    make_workspace: Callable[[dict[str, str | bytes]], Path],
) -> None:
    # 300 long matching lines in 3 files: far more text than a search page's default budget
    # (16 KiB), yet within max_results, so the page holds them all and no note claims a cut
    line = "token = '" + "x" * 150 + "'\n"
    tree: dict[str, str | bytes] = {f"f{i}.py": line * 100 for i in range(3)}
    with Workbench(make_workspace(tree), build_index=False) as wb:
        page = wb.find("token", mode="grep", max_results=500)
        assert page.total_matched == 300
        assert len(page.matches) == 300
        assert page.note is None and page.next_offset is None
        assert {m["path"] for m in page.matches} == {"f0.py", "f1.py", "f2.py"}


@pytest.mark.parametrize("regex", ["(?=get)user", "get(?!x)", "(?<=get_)user", "(?<!x)user"])
def test_lookaround_is_an_error(wb: Workbench, regex: str) -> None:
    with pytest.raises(InvalidQuery) as info:
        wb.find(regex, mode="grep", grep_mode="regex")
    assert info.value.code == "invalid_query" and "not supported" in info.value.message


def test_an_invalid_regex_falls_back_to_plain_text_with_a_note(wb: Workbench) -> None:
    fallback = wb.find("get_user(", mode="grep", grep_mode="regex")
    assert fallback.grep_mode == "plain_text"
    assert fallback.note is not None and "searched as plain text" in fallback.note
    plain = wb.find("get_user(", mode="grep")
    assert (
        where(fallback.matches)
        == where(plain.matches)
        == [
            ("src/app.py", 5, 12),
            ("src/lib/core.rs", 1, 4),
            ("src/users.py", 4, 5),
            ("src/users.py", 9, 12),
            ("tests/test_users.py", 4, 10),
            ("tests/test_users.py", 5, 12),
        ]
    )
    assert plain.note is None


def test_fuzzy_grep_tolerates_typos_ranks_and_references(wb: Workbench) -> None:
    found = wb.find("get_usr", mode="grep", grep_mode="fuzzy")
    assert found.total_matched == 10 and found.files_with_matches == 5
    assert sorted(where(found.matches)) == GET_USER
    scores = [m["score"] for m in found.matches]
    assert scores == sorted(scores, reverse=True)
    assert where(found.matches)[-1] == ("tests/test_users.py", 4, 10)  # inside test_get_user
    assert [m["n"] for m in found.matches] == list(range(1, 11))
    for match in found.matches:
        assert wb.read(match["ref"]["match"]).ranges[0]["text"] == "get_user"
    assert wb.find("get_usr", mode="grep", grep_mode="fuzzy").result == found.result
    assert where(wb.find("retrun", mode="grep", grep_mode="fuzzy").matches) == [
        ("src/app.py", 6, 5),  # every "return": one swap away
        ("src/users.py", 5, 5),
        ("src/users.py", 9, 5),
    ]
    paged = wb.find("get_usr", mode="grep", grep_mode="fuzzy", max_results=3)
    assert paged.next_offset == 3 and sorted(set(paths(paged.matches))) == [
        "docs/notes.md",
        "src/app.py",
    ]


def test_grep_zero_results_carry_every_diagnostics_field(wb: Workbench) -> None:
    empty = wb.find("*.rs src/ nothing_here", mode="grep", path="src", ext="rs")
    assert empty.matches == [] and empty.total_matched == 0 and empty.result is None
    assert empty.diagnostics == {
        "total_files": 7,
        "total_files_searched": 1,
        "filtered_file_count": 1,
        "files_with_matches": 0,
        "constraints": {
            "path": "src",
            "globs": ["*.rs"],
            "folders": ["src/"],
            "ext": ["rs"],
            "exclude": [],
        },
        "offset": 0,
        "limit": 50,
        "next_file_offset": None,
    }
    past = wb.find("get_user", mode="grep", offset=7, max_results=5)
    assert past.diagnostics is not None
    assert (past.diagnostics["offset"], past.diagnostics["limit"]) == (7, 5)
    assert past.diagnostics["total_files_searched"] == 0


def test_grep_scope_and_inline_constraints(wb: Workbench) -> None:
    assert (
        paths(wb.find("get_user", mode="grep", path="src/lib").matches) == ["src/lib/core.rs"] * 2
    )
    assert set(paths(wb.find("*.md get_user", mode="grep").matches)) == {"docs/notes.md"}
    assert set(paths(wb.find("!tests/ !src/ get_user", mode="grep").matches)) == {"docs/notes.md"}
    todo = wb.find("TODO src/", mode="grep")  # constraints only before the text
    assert todo.matches == [] and todo.needle == "TODO src/"
    with pytest.raises(InvalidQuery, match="needs text to search for"):
        wb.find("*.py", mode="grep")


# -- arguments ---------------------------------------------------------------------------------


def test_unknown_arguments_are_a_warning_naming_the_valid_ones(wb: Workbench) -> None:
    found = wb.find(pattern="get_user", mode="grep", maxResults=2, bogus=1, output_mode="x")  # type: ignore[call-arg]
    assert found.warning is not None
    assert found.warning.startswith("Unrecognized parameter(s): bogus, output_mode")
    assert (
        "valid: query, mode, grep_mode, case_sensitive, context_lines, max_results, offset, "
        "path, ext" in found.warning
    )
    assert found.query == "get_user" and found.max_results == 2 and len(found.matches) == 1
    assert wb.find("get_user").warning is None
    assert found.to_json()["warning"] == found.warning


def test_the_request_itself_stays_strict_and_validates(wb: Workbench) -> None:
    with pytest.raises(InvalidQuery, match="no_such"):
        FindRequest.build("x", no_such=1)
    lenient = FindRequest.canonical({"pattern": "x", "grepMode": "regex", "what": 1}, lenient=True)
    assert lenient == {"query": "x", "grep_mode": "regex", "unrecognized": ("what",)}
    assert FindRequest.build("x", max_results=10_000).max_results == MAX_RESULTS
    for bad in ({"mode": "dirs"}, {"grep_mode": "glob"}, {"max_results": 0}, {"offset": -1}):
        with pytest.raises(SleuthError) as info:
            wb.find("x", **bad)  # type: ignore[arg-type]
        assert info.value.code == "invalid_query"
    with pytest.raises(SleuthError, match="twice"):
        FindRequest.canonical({"pattern": "a", "query": "b"}, lenient=True)
