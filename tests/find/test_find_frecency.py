"""The frecency store and the ranking it boosts (sleuth/find/frecency.py, ranking.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sleuth.find.frecency import FILE_NAME, HALF_LIFE_S, MAX_PATHS_PER_USE, FrecencyStore
from sleuth.find.ranking import FRECENCY_WEIGHT, combined_frecency, rank_paths
from sleuth.workspace.state_folder import make_state_dir

NOW = 1_700_000_000.0


def store_in(tmp_path: Path) -> FrecencyStore:
    return FrecencyStore(lambda: make_state_dir(tmp_path / ".sleuth"))


def test_uses_add_up_and_decay_with_the_half_life(tmp_path: Path) -> None:
    store = store_in(tmp_path)
    assert store.scores(now=NOW) == {}
    assert not (tmp_path / ".sleuth" / FILE_NAME).exists()  # asking records nothing
    store.record(["a.py"], "read", now=NOW)
    assert store.scores(now=NOW) == {"a.py": pytest.approx(0.5)}
    store.record(["a.py", "b.py"], "replace", now=NOW)  # an edit weighs 2
    scores = store.scores(now=NOW)
    assert scores["a.py"] == pytest.approx(3 / 4) and scores["b.py"] == pytest.approx(2 / 3)
    later = store.scores(now=NOW + HALF_LIFE_S)  # weights halve: a 1.5, b 1
    assert later["a.py"] == pytest.approx(1.5 / 2.5) and later["b.py"] == pytest.approx(0.5)
    store.record(["c.py"], "select", now=NOW)
    assert store.scores(now=NOW)["c.py"] == pytest.approx(1.5 / 2.5)
    store.close()


def test_it_persists_and_survives_a_deleted_state_folder(tmp_path: Path) -> None:
    first = store_in(tmp_path)
    first.record(["a.py"], "read", now=NOW)
    first.close()
    second = store_in(tmp_path)
    assert set(second.scores(now=NOW)) == {"a.py"}
    shutil.rmtree(tmp_path / ".sleuth")
    second.record(["b.py"], "read", now=NOW)
    assert set(second.scores(now=NOW)) == {"b.py"}
    second.close()


def test_a_use_of_very_many_files_is_not_a_choice(tmp_path: Path) -> None:
    store = store_in(tmp_path)
    store.record([f"f{i}.py" for i in range(MAX_PATHS_PER_USE + 1)], "read", now=NOW)
    assert store.scores(now=NOW) == {}
    store.record([f"f{i}.py" for i in range(MAX_PATHS_PER_USE)], "read", now=NOW)
    assert len(store.scores(now=NOW)) == MAX_PATHS_PER_USE
    store.close()


def test_frecency_breaks_near_ties_but_not_a_clearly_better_match() -> None:
    paths = ["a/users.py", "b/users.py", "lib/abusers_list.py"]
    plain = rank_paths("users", paths, {})
    assert [p for p, _, _ in plain][:2] == ["a/users.py", "b/users.py"]  # a tie: by path
    boosted = rank_paths("users", paths, {"b/users.py": 1.0})
    assert [p for p, _, _ in boosted][:2] == ["b/users.py", "a/users.py"]
    assert boosted[0][1] == pytest.approx(plain[1][1] + FRECENCY_WEIGHT) and boosted[0][2] == 1.0
    weak = rank_paths("users", paths, {"lib/abusers_list.py": 1.0})
    assert weak[-1][0] == "lib/abusers_list.py"  # still last: a clearly weaker match


def test_an_empty_needle_lists_by_frecency_then_path_and_case_can_be_exact() -> None:
    ranked = rank_paths("", ["b.py", "a.py", "c.py"], {"c.py": 0.5})
    assert [p for p, _, _ in ranked] == ["c.py", "a.py", "b.py"]
    paths = ["src/GetUser.ts", "src/getuser.py"]
    assert [p for p, _, _ in rank_paths("getuser", paths, {})] == paths  # smart: both, a tie
    assert [p for p, _, _ in rank_paths("getuser", paths, {}, case_sensitive=True)] == [
        "src/getuser.py"
    ]
    assert {p for p, _, _ in rank_paths("GetUser", paths, {})} == {"src/GetUser.ts"}


def test_git_history_counts_half_beside_use() -> None:
    assert combined_frecency({"a": 0.5}, {"a": 1.0, "b": 0.4}) == {"a": 1.0, "b": 0.2}
