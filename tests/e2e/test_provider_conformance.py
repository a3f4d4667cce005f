"""Provider conformance, written from the provider contract (SPEC §10, docs/faces.md#provider-api),
not from the code: ``manifest()`` declaring ``search.modes``; ``search(query, opts)`` with a
string (an exact, case-sensitive substring, no fallback chain), ``{"regex", "flags"}`` or
``{"semantic", "threshold"}``; ``opts`` = ``path`` (a subtree, default ``/``), ``limit``
(default 100, capped), ``cursor``; the answer ``{matches, next_cursor?}`` with ``next_cursor``
present iff more exist; the error codes; and cloaked paths dropped before pagination.

Everything runs on real workspaces through the real engine (``Provider``) and the real CLI.
"""

from __future__ import annotations

import importlib
import json
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sleuth.api import Workbench
from sleuth.provider import Provider
from tests.e2e.conftest import run_cli

MakeWorkspace = Callable[[dict[str, str | bytes]], Path]

DENY = '[tool.sleuth]\ndeny = ["b_secret/**"]\n'
TREE: dict[str, str | bytes] = {
    "pyproject.toml": DENY,
    "a.py": "needle one\nneedle two\n",
    "b_secret/s.py": "needle s1\nneedle s2\nneedle s3\n",
    "b_secret/deep/t.py": "needle t\n",
    "c.py": "x = 1\nneedle three\nNEEDLE upper\n",
    "d/e.py": "needle four\nneedle five\nneedle six\n",
    "d/f.py": "needle seven\n",
}
VISIBLE = [
    ("a.py", 1),
    ("a.py", 2),
    ("c.py", 2),
    ("d/e.py", 1),
    ("d/e.py", 2),
    ("d/e.py", 3),
    ("d/f.py", 1),
]
ERROR_KEYS = {"code", "message", "retry_after", "details"}
REF = re.compile(r"SEARCH#[0-9a-f]+:\d+:(match|line)")


@pytest.fixture
def root(make_workspace: MakeWorkspace) -> Path:
    return make_workspace(dict(TREE))


@pytest.fixture
def provider(root: Path) -> Iterator[Provider]:
    with Provider(root) as p:
        yield p


def error_of(answer: dict[str, Any]) -> dict[str, Any]:
    """The error object of an answer that must be one (exactly its four keys)."""
    assert set(answer) == {"error"}, answer
    assert set(answer["error"]) == ERROR_KEYS
    return answer["error"]  # type: ignore[no-any-return]


def walk(p: Provider, query: object, opts: dict[str, Any]) -> list[dict[str, Any]]:
    """Every page of ``query``, following ``next_cursor``."""
    pages = [p.search(query, opts)]
    while "next_cursor" in pages[-1]:
        assert "error" not in pages[-1]
        pages.append(p.search(query, {**opts, "cursor": pages[-1]["next_cursor"]}))
        assert len(pages) < 1000
    return pages


def located(pages: list[dict[str, Any]]) -> list[tuple[str, int]]:
    return [(m["path"], m["line"]) for page in pages for m in page["matches"]]


def semantic_installed() -> bool:
    try:
        module = importlib.import_module("sleuth.semantic")
    except ImportError:
        return False
    return bool(module.available())


# -- manifest -------------------------------------------------------------------------------


def test_manifest_declares_the_search_modes(provider: Provider) -> None:
    manifest = provider.manifest()
    assert set(manifest) == {"search"}
    search = manifest["search"]
    assert search["modes"][:2] == ["exact", "regex"]
    assert ("semantic" in search["modes"]) == semantic_installed()
    assert set(search["modes"]) <= {"exact", "regex", "semantic"}
    assert set(search["x-ordering"]) == set(search["modes"])
    assert search["x-ordering"]["exact"] == search["x-ordering"]["regex"][:3]
    assert search["limits"]["default_limit"] == 100
    assert search["limits"]["max_limit"] >= 100
    assert search["limits"]["rate"] is None  # off by default


# -- exact ----------------------------------------------------------------------------------


def test_a_string_is_an_exact_case_sensitive_substring(provider: Provider) -> None:
    page = provider.search("needle")
    assert located([page]) == VISIBLE  # NEEDLE (upper case) is not a match
    assert "next_cursor" not in page
    upper = provider.search("NEEDLE")
    assert located([upper]) == [("c.py", 3)]


def test_a_string_never_takes_the_fallback_chain(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"a.py": 'needle one\nneedles two\nx = get(1)\nsay "hi" (a+b\n'})
    with Provider(root) as p:
        # plain text would fall back to the regex needle.one, or to each word of the query
        assert p.search("needle.one")["matches"] == []
        assert p.search("needle zzz")["matches"] == []
        assert p.search("get(1")["matches"][0]["line"] == 3  # regex syntax taken literally
        assert p.search('say "hi" (a+b')["matches"][0]["line"] == 4
        assert p.search('"hi"')["matches"][0]["column"] == 5


# -- matches --------------------------------------------------------------------------------


def test_every_field_of_a_match(make_workspace: MakeWorkspace) -> None:
    long_line = "pad " * 100 + "needle" + " tail" * 100
    root = make_workspace({"m.py": f"before\nalpha needle beta\nafter\n{long_line}\n"})
    with Provider(root) as p, Workbench(root, build_index=False) as wb:
        page = p.search("needle")
        first, second = page["matches"]
        assert first["path"] == "m.py"
        assert (first["line"], first["end_line"]) == (2, 2)
        assert first["text"] == "alpha needle beta"
        assert first["context"] == {"before": ["before"], "after": ["after"]}
        assert first["score"] is None  # only semantic matches are scored
        assert REF.fullmatch(first["ref"]["match"]) and REF.fullmatch(first["ref"]["line"])
        # the references are those of every answer: read gives the match and its line
        assert wb.read(first["ref"]["match"]).to_json()["ranges"][0]["text"] == "needle"
        assert wb.read(first["ref"]["line"]).to_json()["ranges"][0]["text"] == "alpha needle beta"
        assert len(second["text"]) <= 256 and "needle" in second["text"]
        assert second["line"] == 4


def test_a_multi_line_match_has_its_line_range(provider: Provider) -> None:
    page = provider.search("one\nneedle two")
    (match,) = page["matches"]
    assert (match["path"], match["line"], match["end_line"]) == ("a.py", 1, 2)


# -- opts -----------------------------------------------------------------------------------


def test_path_is_a_subtree_and_defaults_to_the_root(provider: Provider) -> None:
    assert located([provider.search("needle", {"path": "/"})]) == VISIBLE
    assert located([provider.search("needle", None)]) == VISIBLE
    under_d = [loc for loc in VISIBLE if loc[0].startswith("d/")]
    for path in ("/d", "d", "d/", "/d/"):
        assert located([provider.search("needle", {"path": path})]) == under_d
    assert located([provider.search("needle", {"path": "/d/f.py"})]) == [("d/f.py", 1)]


def test_limit_defaults_to_100_and_is_capped(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"many.txt": "hit\n" * 700})
    with Provider(root) as p:
        first = p.search("hit")
        assert len(first["matches"]) == 100 and "next_cursor" in first
        capped = p.search("hit", {"limit": 10_000})
        cap = p.manifest()["search"]["limits"]["max_limit"]
        assert len(capped["matches"]) == cap < 700
        assert "next_cursor" in capped


def test_next_cursor_is_present_iff_more_exist(provider: Provider) -> None:
    total = len(VISIBLE)
    exact = provider.search("needle", {"limit": total})
    assert len(exact["matches"]) == total and "next_cursor" not in exact
    short = provider.search("needle", {"limit": total - 1})
    assert "next_cursor" in short
    last = provider.search("needle", {"limit": total - 1, "cursor": short["next_cursor"]})
    assert located([last]) == VISIBLE[-1:] and "next_cursor" not in last
    assert provider.search("no such text")["matches"] == []
    assert "next_cursor" not in provider.search("no such text")


def test_a_cursor_walk_yields_every_match_once_in_path_line_order(provider: Provider) -> None:
    pages = walk(provider, "needle", {"limit": 2})
    assert [len(p["matches"]) for p in pages] == [2, 2, 2, 1]
    assert located(pages) == VISIBLE
    regex_pages = walk(provider, {"regex": r"needle \w+"}, {"limit": 3})
    assert located(regex_pages) == VISIBLE
    keys = [(m["path"], m["line"], m["column"]) for p in regex_pages for m in p["matches"]]
    assert keys == sorted(keys)


# -- regex and its flags --------------------------------------------------------------------


def test_regex_without_flags_is_case_sensitive(provider: Provider) -> None:
    assert located([provider.search({"regex": "^NEEDLE"})]) == [("c.py", 3)]
    assert located([provider.search({"regex": "^needle th[a-z]+", "flags": ""})]) == [("c.py", 2)]


def test_flag_i_ignores_case(provider: Provider) -> None:
    found = located([provider.search({"regex": "^needle", "flags": "i"})])
    assert found == sorted([*VISIBLE, ("c.py", 3)])


def test_flag_s_lets_dot_match_a_newline(provider: Provider) -> None:
    assert provider.search({"regex": "one.needle"})["matches"] == []
    (match,) = provider.search({"regex": "one.needle", "flags": "s"})["matches"]
    assert (match["path"], match["line"], match["end_line"]) == ("a.py", 1, 2)


def test_flag_m_keeps_line_anchors(provider: Provider) -> None:
    with_m = located([provider.search({"regex": "^needle f", "flags": "m"})])
    assert with_m == [("d/e.py", 1), ("d/e.py", 2)]
    assert located([provider.search({"regex": "five$", "flags": "m"})]) == [("d/e.py", 2)]
    assert located([provider.search({"regex": "^needle f"})]) == with_m  # documented: always on


def test_flag_u_matches_by_code_point(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"u.py": "name = 'café'\nplain = 'cafe'\n"})
    with Provider(root) as p:
        found = p.search({"regex": r"caf\p{L}'", "flags": "u"})["matches"]
        assert [m["line"] for m in found] == [1, 2]
        (one,) = p.search({"regex": "caf.'", "flags": "u"})["matches"][:1]
        assert one["end_column"] - one["column"] == 5  # é is one character
        combined = p.search({"regex": "CAFÉ", "flags": "iu"})["matches"]
        assert [m["line"] for m in combined] == [1]


@pytest.mark.parametrize("flags", ["g", "x", "I", "iy"])
def test_an_unknown_flag_is_unsupported(provider: Provider, flags: str) -> None:
    error = error_of(provider.search({"regex": "needle", "flags": flags}))
    assert error["code"] == "unsupported"


# -- semantic -------------------------------------------------------------------------------


def test_semantic_is_unsupported_exactly_when_the_manifest_omits_it(provider: Provider) -> None:
    answer = provider.search({"semantic": "a needle", "threshold": 0.0}, {"limit": 3})
    if "semantic" in provider.manifest()["search"]["modes"]:
        if "error" in answer:  # the engine may refuse the query itself, never the mode
            assert (
                answer["error"]["code"] != "unsupported" or "mode" not in answer["error"]["details"]
            )
        else:
            scores = [m["score"] for m in answer["matches"]]
            assert all(0.0 <= s <= 1.0 for s in scores)
            assert scores == sorted(scores, reverse=True)
    else:
        error = error_of(answer)
        assert error["code"] == "unsupported"
        assert "pip install" in error["message"]  # it names the install line


# -- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize("query", [{"fuzzy": "needle"}, {"ast": "$X"}])
def test_a_mode_not_in_the_manifest_is_unsupported(provider: Provider, query: object) -> None:
    assert error_of(provider.search(query))["code"] == "unsupported"


@pytest.mark.parametrize("path", ["../x", "d/../../x", "a/../../../etc", 7])
def test_a_malformed_or_escaping_path_is_invalid_path(provider: Provider, path: object) -> None:
    assert error_of(provider.search("needle", {"path": path}))["code"] == "invalid_path"


@pytest.mark.parametrize(
    ("denied", "missing"),
    [
        ("b_secret", "b_nothing"),
        ("/b_secret", "/b_nothing"),
        ("b_secret/s.py", "b_nothing/s.py"),
        ("b_secret/deep", "b_nothing/deep"),
    ],
)
def test_a_denied_path_and_a_missing_path_give_identical_errors(
    provider: Provider, root: Path, denied: str, missing: str
) -> None:
    # the same folder name for both: the missing one is made by renaming the denied one
    shown = error_of(provider.search("needle", {"path": denied}))
    assert shown["code"] == "not_found"
    shutil.rmtree(root / "b_secret")
    gone = error_of(provider.search("needle", {"path": denied}))
    assert gone == shown
    other = error_of(provider.search("needle", {"path": missing}))
    assert other["code"] == "not_found"
    assert other["message"].replace("b_nothing", "b_secret") == shown["message"]
    assert json.dumps(other["details"]).replace("b_nothing", "b_secret") == json.dumps(
        shown["details"]
    )


def test_rate_limited_carries_retry_after(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {
            "pyproject.toml": "[tool.sleuth]\nprovider_rate = {per_second = 2, burst = 3}\n",
            "a.py": "needle\n",
        }
    )
    now = [100.0]
    with Provider(root, clock=lambda: now[0]) as p:
        assert p.manifest()["search"]["limits"]["rate"] == {"per_second": 2, "burst": 3}
        for _ in range(3):
            assert "matches" in p.search("needle")
        limited = error_of(p.search("needle"))
        assert limited["code"] == "rate_limited"
        assert limited["retry_after"] == pytest.approx(0.5)
        now[0] += 0.25
        assert error_of(p.search("needle"))["retry_after"] == pytest.approx(0.25)
        now[0] += 0.25
        assert "matches" in p.search("needle")
        assert error_of(p.search("needle"))["code"] == "rate_limited"


def test_the_rate_limit_is_off_by_default(root: Path) -> None:
    # a clock that never moves: with any limit on, a burst would run out
    with Provider(root, clock=lambda: 0.0) as p:
        answers = [p.search("needle", {"limit": 1}) for _ in range(40)]
    assert all("matches" in a for a in answers)


def test_an_unexpected_exception_is_internal_and_not_raised(
    provider: Provider, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(Workbench, "search", broken)
    error = error_of(provider.search("needle"))
    assert error["code"] == "internal" and "boom" in error["message"]


@pytest.mark.parametrize(
    ("query", "opts"),
    [
        (5, None),
        (None, None),
        ("", None),
        ({"regex": "("}, None),
        ({"regex": 3}, None),
        ({"regex": "x", "flags": 1}, None),
        ({"regex": "x", "semantic": "y"}, None),
        ({}, None),
        ("needle", "not an object"),
        ("needle", {"limit": 0}),
        ("needle", {"limit": "ten"}),
        ("needle", {"paht": "/"}),
        ("needle", {"cursor": "bm90IGEgY3Vyc29y"}),
    ],
)
def test_bad_input_is_answered_never_raised(
    provider: Provider, query: object, opts: object
) -> None:
    error = error_of(provider.search(query, opts))
    assert error["code"] == "invalid_query"
    assert error["retry_after"] is None


def test_a_cursor_belongs_to_its_query_and_path(provider: Provider) -> None:
    first = provider.search("needle", {"limit": 2})
    cursor = first["next_cursor"]
    assert error_of(provider.search("needle t", {"cursor": cursor}))["code"] == "invalid_query"
    assert error_of(provider.search("needle", {"path": "d", "cursor": cursor}))["code"] == (
        "invalid_query"
    )
    assert error_of(provider.search({"regex": "needle"}, {"cursor": cursor}))["code"] == (
        "invalid_query"
    )


# -- cloaking before pagination -------------------------------------------------------------


def _walks(p: Provider) -> list[list[dict[str, Any]]]:
    return [
        walk(p, "needle", {"limit": 2}),
        walk(p, {"regex": "needle [st]", "flags": "i"}, {"limit": 1}),
        walk(p, "needle", {"path": "/", "limit": 3}),
    ]


def test_a_walk_over_a_denied_folder_equals_the_walk_without_it(root: Path) -> None:
    with Provider(root) as p:
        cloaked = _walks(p)
        shutil.rmtree(root / "b_secret")
        deleted = _walks(p)
    assert cloaked == deleted  # pages, references and cursors alike
    for pages in cloaked:
        assert not any(m["path"].startswith("b_secret") for page in pages for m in page["matches"])
    assert located(cloaked[0]) == VISIBLE


def _normalised(walks: list[list[dict[str, Any]]]) -> str:
    """The walks with result ids and cursors replaced by their order of appearance."""
    text = json.dumps(walks, sort_keys=True)
    names: dict[str, str] = {}
    for found in re.findall(r"SEARCH#[0-9a-f]+|\"next_cursor\": \"[^\"]+\"", text):
        names.setdefault(found, f"<{len(names)}>")
    for found, name in names.items():
        text = text.replace(found, name)
    return text


def test_a_walk_equals_the_walk_of_a_workspace_that_never_had_the_folder(
    make_workspace: MakeWorkspace,
) -> None:
    with_folder = make_workspace(dict(TREE))
    without = make_workspace({k: v for k, v in TREE.items() if not k.startswith("b_secret")})
    with Provider(with_folder) as p, Provider(without) as q:
        assert _normalised(_walks(p)) == _normalised(_walks(q))


# -- the command line -----------------------------------------------------------------------


def test_the_cli_answers_the_same_json(root: Path) -> None:
    manifest = run_cli(["provider", "manifest", "--root", str(root)])
    assert manifest.returncode == 0, manifest.stderr
    with Provider(root) as p:
        assert json.loads(manifest.stdout) == p.manifest()
        python_pages = walk(p, "needle", {"limit": 3})
    opts: dict[str, Any] = {"limit": 3}
    cli_pages: list[dict[str, Any]] = []
    while True:
        done = run_cli(
            [
                "provider",
                "search",
                "--root",
                str(root),
                "--query-json",
                json.dumps("needle"),
                "--opts-json",
                json.dumps(opts),
            ]
        )
        assert done.returncode == 0, done.stderr
        cli_pages.append(json.loads(done.stdout))
        if "next_cursor" not in cli_pages[-1]:
            break
        opts["cursor"] = cli_pages[-1]["next_cursor"]
    assert located(cli_pages) == located(python_pages) == VISIBLE
    assert [m["ref"] for pg in cli_pages for m in pg["matches"]] == [
        m["ref"] for pg in python_pages for m in pg["matches"]
    ]


def test_the_cli_prints_errors_as_the_error_object(root: Path) -> None:
    denied = run_cli(
        [
            "provider",
            "search",
            "--root",
            str(root),
            "--query-json",
            '"needle"',
            "--opts-json",
            '{"path": "b_secret"}',
        ]
    )
    assert denied.returncode == 4
    assert error_of(json.loads(denied.stdout))["code"] == "not_found"
    assert "error[not_found]" in denied.stderr
    flag = run_cli(
        ["provider", "search", "--root", str(root), "--query-json", '{"regex": "a", "flags": "q"}']
    )
    assert flag.returncode == 2
    assert error_of(json.loads(flag.stdout))["code"] == "unsupported"
    bad = run_cli(["provider", "search", "--root", str(root), "--query-json", "{nope"])
    assert bad.returncode == 2
    assert error_of(json.loads(bad.stdout))["code"] == "invalid_query"
