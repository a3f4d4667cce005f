"""Tests for ``possible_names`` suggestions (docs/query.md#name-suggestions) and frecency from
git."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from sleuth.text_search.frecency import git_frecency, parse_git_log
from sleuth.text_search.names import edit_distance, name_variants, split_words, suggest_names

CODE = b"""
def get_user(user_id): return GetUsers()[user_id]
class GetUsers: pass
GET_USER = get_user
x = get_user(1) + get_user(2)
def fetch_user(): pass
def getUserName(): pass
entries = [entry for entry in range(3)]
"""


def test_case_and_separator_variants_rank_first() -> None:
    names, exhausted = suggest_names("getUser", [CODE])
    assert not exhausted
    # closeness 0 (get_user more frequent than GET_USER), then the plural
    assert names[:3] == ["get_user", "GET_USER", "GetUsers"]
    assert "getUser" not in names
    assert "getUserName" not in names  # too far


def test_query_itself_is_never_suggested() -> None:
    names, _ = suggest_names("get_user", [CODE])
    assert "get_user" not in names
    assert names[0] == "GET_USER"


def test_edit_distance_bounds() -> None:
    names, _ = suggest_names("fetch_usr", [CODE])  # one deletion on a long name
    assert "fetch_user" in names
    names, _ = suggest_names("fech_usr", [CODE])  # two edits on a long name
    assert "fetch_user" in names
    names, _ = suggest_names("entrx", [CODE])  # short names allow one edit only
    assert names == ["entry"]
    names, _ = suggest_names("entrs", [CODE])  # ... and "entries" is two away
    assert "entries" not in names
    assert edit_distance("kitten", "sitting", 5) == 3
    assert edit_distance("kitten", "sitting", 1) == 2  # stops early: limit + 1


def test_plural_and_multiword_query() -> None:
    names, _ = suggest_names("entry", [CODE])
    assert names[0] == "entries"
    names, _ = suggest_names("get user", [CODE])
    assert "get_user" in names


def test_limit_and_non_identifier_query() -> None:
    names, _ = suggest_names("getUser", [CODE], limit=1)
    assert names == ["get_user"]
    assert suggest_names("+-* ", [CODE]) == ([], False)


def test_budget_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading stops at the first text read after the budget ran out (on a fake clock: each
    text costs one second of it, so the answer cannot depend on the machine's speed)."""
    from sleuth.text_search import names as names_module

    clock = [0.0]
    monkeypatch.setattr(names_module, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    read = 0

    def texts() -> Iterator[bytes]:
        nonlocal read
        for _ in range(10_000):  # finite: a budget that never stops reading fails, not hangs
            read += 1
            clock[0] += 1.0
            yield b"get_user other_name " * 1000

    names, exhausted = suggest_names("getUser", texts(), budget_s=5.5)
    assert exhausted and read == 6  # 6 s > 5.5 s: the sixth text was the last one read
    assert names == ["get_user"]  # what it found before the budget ran out
    assert suggest_names("getUser", [CODE], budget_s=5.0)[1] is False


def test_name_variants() -> None:
    assert name_variants("getUserName") == [
        "get_user_name",
        "GetUserName",
        "GET_USER_NAME",
        "get-user-name",
    ]
    assert split_words("HTTPServerError2") == ["HTTP", "Server", "Error", "2"]
    assert name_variants("!!") == []


# --- frecency --------------------------------------------------------------------------------


def _git(repo: Path, *args: str, when: float | None = None) -> None:
    env = dict(os.environ)
    if when is not None:
        stamp = f"{int(when)} +0000"
        env.update(GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp)
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "config", "user.name", "Test")
    _git(tmp_path, "config", "user.email", "test@example.com")
    _git(tmp_path, "config", "commit.gpgsign", "false")
    now = time.time()
    day = 86400.0
    for name, age_days in [("old.py", 120), ("sub/mid.py", 30), ("new.py", 1)]:
        path = tmp_path / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(name)
        _git(tmp_path, "add", name)
        _git(tmp_path, "commit", "-q", "-m", name, when=now - age_days * day)
    return tmp_path


def test_git_frecency_ranks_recent_paths_higher(repo: Path) -> None:
    scores = git_frecency(repo)
    assert set(scores) == {"old.py", "sub/mid.py", "new.py"}
    assert scores["new.py"] == 1.0
    assert scores["new.py"] > scores["sub/mid.py"] > scores["old.py"] > 0.0
    assert git_frecency(repo / "sub") == {"mid.py": 1.0}  # relative to the workspace root
    assert git_frecency(repo, max_commits=1) == {"new.py": 1.0}


def test_git_frecency_outside_a_repo_is_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIT_CEILING_DIRECTORIES keeps git from finding a repository above tmp_path
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    assert git_frecency(tmp_path) == {}
    assert git_frecency(tmp_path / "missing") == {}


def test_git_frecency_without_git_is_empty(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(repo))  # no git executable there
    assert git_frecency(repo) == {}


def test_parse_git_log_sums_commits() -> None:
    now = 1_000_000_000.0
    log = f"\x00{int(now)}\n\na.py\nb.py\n\x00{int(now - 14 * 86400)}\n\na.py\n"
    scores = parse_git_log(log, now=now)
    assert scores == {"a.py": 1.0, "b.py": pytest.approx(1 / 1.5)}
