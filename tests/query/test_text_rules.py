"""Every rule of docs/query.md#plain-text, through the API: quoting, Boolean, fallbacks,
possible_names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sleuth.api import Workbench
from tests.conftest import MakeWorkspace


def _search(root: Path, query: str, **kw: Any) -> dict[str, Any]:
    with Workbench(root, build_index=False) as wb:
        return wb.search(query, **kw).to_json()


def _spots(res: dict[str, Any]) -> list[tuple[str, int, str]]:
    out = []
    for m in res["matches"]:
        line = m["text"]
        out.append((m["path"], m["line"], line[m["column"] - 1 : m["end_column"] - 1]))
    return out


def test_plain_literal(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"a.py": "x = get_user(1)\ny = get_user_id\n", "b.py": "nothing\n"})
    res = _search(root, "get_user")
    assert res["mode"] == "literal" and res["fallback"] is None
    assert _spots(res) == [("a.py", 1, "get_user"), ("a.py", 2, "get_user")]
    assert res["total"] == 2 and res["complete"] is True and res["possible_names"] is None


def test_literal_is_case_sensitive_unless_asked(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"a.txt": "Error\nerror\nERROR\n"})
    assert [m["line"] for m in _search(root, "error")["matches"]] == [2]
    assert [m["line"] for m in _search(root, "error", case_sensitive=False)["matches"]] == [1, 2, 3]


def test_quoted_stays_literal_and_never_falls_back(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"a.txt": "foo.bar\nfooXbar\nfoo bar baz\n"})
    res = _search(root, '"foo.bar"')
    assert res["mode"] == "literal" and [m["line"] for m in res["matches"]] == [1]
    none = _search(root, '"fo+ zzz"')
    assert none["matches"] == [] and none["mode"] == "literal" and none["fallback"] is None
    assert none["possible_names"] is None


def test_code_with_quotes_is_a_literal(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"a.py": 'print("hello")\n'})
    res = _search(root, 'print("hello")')
    assert res["mode"] == "literal" and res["total"] == 1


def test_regex_fallback_reported(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"a.txt": "foo123\nbar\n"})
    res = _search(root, r"foo\d+")
    assert (res["mode"], res["fallback"]) == ("regex", "regex")
    assert _spots(res) == [("a.txt", 1, "foo123")]


def test_literal_hit_wins_over_regex_reading(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"a.txt": "a.c\nabc\n"})
    res = _search(root, "a.c")
    assert res["mode"] == "literal" and [m["line"] for m in res["matches"]] == [1]


def test_broadened_fallback_reported(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"a.txt": "alpha here\n", "b.txt": "and beta there\n"})
    res = _search(root, "alpha beta")
    assert (res["mode"], res["fallback"]) == ("broadened", "broadened")
    assert _spots(res) == [("a.txt", 1, "alpha"), ("b.txt", 1, "beta")]


def test_boolean_is_per_file(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {
            "both.py": "import os\n\nimport sys\n",
            "os_only.py": "import os\n",
            "sys_only.py": "import sys\n",
        }
    )
    res = _search(root, "os AND sys")
    assert res["mode"] == "boolean"
    assert {m["path"] for m in res["matches"]} == {"both.py"}
    assert [m["line"] for m in res["matches"]] == [1, 3]
    res = _search(root, "os NOT sys")
    assert {m["path"] for m in res["matches"]} == {"os_only.py"}
    for q in ("os OR sys", "os || sys", "os | sys"):
        res = _search(root, q)
        assert {m["path"] for m in res["matches"]} == {"both.py", "os_only.py", "sys_only.py"}, q
    res = _search(root, "(os OR sys) NOT both")
    assert {m["path"] for m in res["matches"]} == {"both.py", "os_only.py", "sys_only.py"}


def test_unspaced_pipe_stays_regex(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"a.txt": "cat\ndog\nbird\n"})
    res = _search(root, "cat|dog")
    assert res["mode"] == "regex" and res["fallback"] == "regex"
    assert [m["line"] for m in res["matches"]] == [1, 2]


def test_possible_names_groups(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {
            "a.py": "def get_user(uid):\n    return GetUsers(uid)\n",
            "b.js": "const u = getUser(1); getUser(2);\n",
        }
    )
    res = _search(root, "getUsr")
    assert res["matches"] == [] and res["total"] == 0 and res["complete"] is True
    groups = {g["name"]: g for g in res["possible_names"]}
    assert "getUser" in groups
    assert groups["getUser"]["count"] == 2 and groups["getUser"]["complete"] is True
    assert groups["getUser"]["result"].startswith("SEARCH#")
    assert groups["getUser"]["all"]["match"] == groups["getUser"]["result"] + ":all:match"
    res2 = _search(root, "get_usr")
    assert "get_user" in {g["name"] for g in res2["possible_names"]}


def test_no_possible_names_for_explicit_modes(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"a.py": "getUser()\n"})
    assert _search(root, "regex:getUsr")["possible_names"] is None
    assert _search(root, '"getUsr"')["possible_names"] is None
    assert _search(root, "getUsr AND x")["possible_names"] is None


def test_regex_mode_multiline_reports_end_line(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"a.txt": "one\ntwo\nthree\n"})
    res = _search(root, r"regex:one\ntwo")
    (m,) = res["matches"]
    assert (m["line"], m["end_line"]) == (1, 2)


def test_match_json_shape(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {"src/app.py": "def handler(uid):\n    user = get_user(uid)\n    return user\n"}
    )
    res = _search(root, "get_user")
    assert list(res) == [
        "query",
        "mode",
        "fallback",
        "result",
        "complete",
        "incomplete_reason",
        "total",
        "matches",
        "all",
        "next_cursor",
        "skipped",
        "possible_names",
    ]
    (m,) = res["matches"]
    rid = res["result"]
    assert m == {
        "n": 1,
        "path": "src/app.py",
        "line": 2,
        "column": 12,
        "end_line": 2,
        "end_column": 20,
        "start_byte": 29,
        "end_byte": 37,
        "text": "    user = get_user(uid)",
        "context": {"before": ["def handler(uid):"], "after": ["    return user"]},
        "ref": {"line": f"{rid}:1:line", "match": f"{rid}:1:match"},
        "captures": None,
        "score": None,
    }
    assert res["all"] == {"line": f"{rid}:all:line", "match": f"{rid}:all:match"}
    assert res["skipped"] == {"binary": 0, "too_large": 0, "undecodable": 0}


def test_long_line_snippet_is_cut_around_match(make_workspace: MakeWorkspace) -> None:
    line = "a" * 1000 + "NEEDLE" + "b" * 1000
    root = make_workspace({"min.js": line + "\n"})
    (m,) = _search(root, "NEEDLE")["matches"]
    assert len(m["text"]) <= 256 and "NEEDLE" in m["text"]
    assert m["text"].startswith("…") and m["text"].endswith("…")
    assert m["column"] == 1001


def test_files_mode_glob_and_fuzzy(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {"src/app.py": "", "src/util/helpers.py": "", "docs/a.md": "", "setup.py": ""}
    )
    res = _search(root, "files:*.py")
    assert res["mode"] == "files"
    assert [m["path"] for m in res["matches"]] == ["setup.py", "src/app.py", "src/util/helpers.py"]
    assert all(m["line"] is None and m["start_byte"] is None for m in res["matches"])
    assert [m["path"] for m in _search(root, "files:src/*.py")["matches"]] == ["src/app.py"]
    fuzzy = _search(root, "files:helpers")
    assert fuzzy["matches"][0]["path"] == "src/util/helpers.py"
    assert fuzzy["matches"][0]["score"] is not None


def test_files_mode_lists_binary_and_large_files(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"logo.png": b"\x89PNG\x00\x00", "data/dump.sql": "x"})
    (root / "data/dump.sql").write_bytes(b"-- sql\n" * (9 * 1024 * 1024 // 7 + 10))
    res = _search(root, "files:*")
    assert [m["path"] for m in res["matches"]] == ["data/dump.sql", "logo.png"]
    assert res["complete"] is True and res["skipped"]["too_large"] == 0


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["a", "AND", "OR", "NOT", "and", "|", "||", " ", '"', "(", ")", "x|y", "\\"]
        ),
        max_size=8,
    ).map("".join)
)
def test_a_query_without_operator_text_is_never_boolean(query: str) -> None:
    """``plan_text`` skips the Boolean parser (and its import) when no operator's text is in
    the query: that shortcut must never miss a Boolean query."""
    from sleuth.query.text_mode import _may_be_boolean
    from sleuth.text_search.boolean import is_boolean

    if is_boolean(query):
        assert _may_be_boolean(query)


def test_boolean_queries_still_plan_as_boolean() -> None:
    from sleuth.query.text_mode import plan_text

    for query in ("a AND b", "a || b", "a | b", "NOT a", "x OR (y AND z)"):
        stages, _ = plan_text(query, case_sensitive=True)
        assert [s.mode for s in stages] == ["boolean"], query
    stages, _ = plan_text("a|b", case_sensitive=True)  # not spaced: a literal, then a regex
    assert stages[0].mode == "literal"
