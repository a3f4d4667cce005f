"""The SQLite cache writes one row per file and only the rows an update changed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sleuth.graph import Graph, GraphStore, load, save
from sleuth.graph.store import CACHE_VERSION
from tests.graph.fixtures import py_tags
from tests.graph.helpers import build_py, node_id
from tests.graph.project import PY
from tests.graph.test_incremental import PATHS, VARIANTS, _apply, _current


def _rows(cache: Path) -> dict[str, tuple[bytes, bytes]]:
    with sqlite3.connect(cache) as db:
        return {p: (a, b) for p, a, b in db.execute("SELECT path, record, resolution FROM files")}


def _ranked(graph: Graph, paths: list[str] | None = None) -> list[tuple[str, float]]:
    return [(r.node.id, round(r.score, 9)) for r in graph.rank(100, personalize_paths=paths)]


def test_a_leaf_edit_writes_only_that_files_row(tmp_path: Path) -> None:
    cache = tmp_path / "graph.db"
    graph = build_py(PY)
    store = GraphStore(str(cache))
    assert store.write(graph) == len(PY)  # the first write holds every file
    before = _rows(cache)
    # app/main.py is read by no other file: its edit re-resolves only itself.
    text = PY["app/main.py"] + "\n\ndef extra():\n    return run()\n"
    graph.update_file(py_tags("app/main.py", text), text.encode())
    assert store.write(graph) == 1
    after = _rows(cache)
    assert {p for p in after if after[p] != before[p]} == {"app/main.py"}
    assert store.write(graph) == 0  # nothing new since
    assert load(str(cache)).snapshot() == build_py({**PY, "app/main.py": text}).snapshot()


def test_an_edit_rewrites_the_file_and_the_files_it_re_resolved_only(tmp_path: Path) -> None:
    cache = tmp_path / "graph.db"
    graph = build_py(PY)
    store = GraphStore(str(cache))
    store.write(graph)
    before = _rows(cache)
    renamed = VARIANTS["pkg/util.py"][1]
    assert renamed is not None
    graph.update_file(py_tags("pkg/util.py", renamed), renamed.encode())
    written = store.write(graph)
    after = _rows(cache)
    rewritten = {p for p in after if after[p] != before[p]}
    assert "pkg/util.py" in rewritten and len(rewritten) <= written < len(PY)
    assert "other/tools.py" not in rewritten  # it neither imports nor reads pkg/util.py
    assert load(str(cache)).snapshot() == build_py({**PY, "pkg/util.py": renamed}).snapshot()


def test_removed_files_lose_their_rows(tmp_path: Path) -> None:
    cache = tmp_path / "graph.db"
    graph = build_py(PY)
    store = GraphStore(str(cache))
    store.write(graph)
    graph.remove_file("other/tools.py")
    store.write(graph)
    assert "other/tools.py" not in _rows(cache)
    rest = {p: t for p, t in PY.items() if p != "other/tools.py"}
    assert load(str(cache)).snapshot() == build_py(rest).snapshot()


def test_stat_signatures_round_trip_and_touch_updates_only_them(tmp_path: Path) -> None:
    cache = tmp_path / "graph.db"
    graph = build_py(PY)
    store = GraphStore(str(cache))
    stats0 = {p: (len(t), 1000 + i, 2000 + i) for i, (p, t) in enumerate(sorted(PY.items()))}
    store.write(graph, stats0)
    before = _rows(cache)
    store.write(graph, {"pkg/util.py": (1, 2, 3)}, touched=["pkg/util.py"])
    _, stats = GraphStore(str(cache)).load()
    assert stats["pkg/util.py"] == (1, 2, 3)
    assert stats["app/main.py"] == (len(PY["app/main.py"]), 1000, 2000)
    assert _rows(cache) == before  # the record and resolution rows are untouched


@pytest.mark.parametrize("damage", ["garbage", "truncated", "old_format", "bad_row"])
def test_a_damaged_or_old_cache_loads_empty_and_is_rebuilt(tmp_path: Path, damage: str) -> None:
    cache = tmp_path / "graph.db"
    graph = build_py(PY)
    save(graph, str(cache))
    if damage == "garbage":
        cache.write_bytes(b"this is not a database" * 100)
    elif damage == "truncated":
        data = cache.read_bytes()
        cache.write_bytes(data[: len(data) // 3])
    else:
        with sqlite3.connect(cache) as db:
            if damage == "old_format":
                db.execute(
                    "UPDATE meta SET value = ? WHERE key = 'format'", (f"{CACHE_VERSION - 1}/x",)
                )
            else:
                db.execute("UPDATE files SET record = ? WHERE path = 'pkg/util.py'", (b"\x00\x01",))
    store = GraphStore(str(cache))
    loaded, stats = store.load()
    assert loaded.files() == [] and stats == {}
    # The next write replaces whatever was there with a usable cache.
    assert store.write(graph) == len(PY)
    store.close()
    assert load(str(cache)).snapshot() == graph.snapshot()


@pytest.mark.parametrize("behind", [False, True])
def test_another_writer_forces_a_full_rewrite(tmp_path: Path, behind: bool) -> None:
    cache = str(tmp_path / "graph.db")
    save(build_py(PY), cache)
    first, second = GraphStore(cache), GraphStore(cache)
    mine, _ = first.load()
    theirs, _ = second.load()
    text = "def helper(x):\n    return 0\n"
    theirs.update_file(py_tags("pkg/util.py", text), text.encode())
    assert second.write(theirs) >= 1
    second.close()
    extra = "x = 1\n"
    mine.update_file(py_tags("new.py", extra), extra.encode())
    if behind:  # made behind, the write finds the other's epoch and stores nothing of its own
        first.write(mine, behind=True)
        first.wait()
        assert load(cache).snapshot() == build_py({**PY, "pkg/util.py": text}).snapshot()
    assert first.write(mine) == len(PY) + 1  # its state replaces the other's as a whole
    assert load(cache).snapshot() == build_py({**PY, "new.py": extra}).snapshot()


def test_the_rank_is_cached_per_version_and_an_edit_invalidates_it() -> None:
    graph = build_py(PY)
    first = _ranked(graph)
    cache = graph.rank_cache
    assert _ranked(graph) == first and graph.rank_cache is cache  # warm: the same matrix
    assert _ranked(graph, ["other/tools.py"]) != first
    text = PY["other/tools.py"] + "\n\ndef more():\n    return unrelated() + helper(1)\n"
    graph.update_file(py_tags("other/tools.py", text), text.encode())
    assert graph.rank_cache is cache  # rebuilt lazily, on the next rank
    fresh = build_py({**PY, "other/tools.py": text})
    assert _ranked(graph) == _ranked(fresh) != first
    assert graph.rank_cache is not cache
    assert _ranked(graph, ["other/tools.py"]) == _ranked(fresh, ["other/tools.py"])


def test_a_loaded_graph_ranks_like_the_one_saved(tmp_path: Path) -> None:
    graph = build_py(PY)
    helper = node_id(graph, "pkg/util.py", "helper")
    cache = str(tmp_path / "graph.db")
    save(graph, cache)
    loaded = load(cache)
    assert _ranked(loaded) == _ranked(graph) and _ranked(loaded)[0][0] == helper
    assert loaded.decl_ids("pkg/util.py") == [d.id for d in graph.record("pkg/util.py").defs]


edit = st.tuples(st.sampled_from(PATHS), st.integers(min_value=0, max_value=3))


@pytest.mark.parametrize("behind", [False, True])
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(edit, min_size=1, max_size=6))
def test_incremental_writes_load_as_a_full_rebuild(
    behind: bool, steps: list[tuple[str, int]]
) -> None:
    """Each write stores only what changed, and the cache loads as a full rebuild's graph.
    ``behind=True`` (a watching face's edits): each write's rows are taken at once and stored
    by a thread while the next edit changes the graph; closing the store waits for them."""
    import tempfile

    state: dict[str, str | None] = {p: v[0] for p, v in VARIANTS.items()}
    with tempfile.TemporaryDirectory() as tmp:
        cache = str(Path(tmp) / "graph.db")
        graph = build_py(_current(state))
        store = GraphStore(cache)
        store.write(graph, behind=behind)  # the first write holds every row
        for path, choice in steps:
            versions = VARIANTS[path]
            state[path] = versions[choice % len(versions)]
            _apply(graph, path, state[path])
            store.write(graph, behind=behind)
            if behind:
                continue
            expected = build_py(_current(state))
            loaded = load(cache)
            assert loaded.snapshot() == expected.snapshot()
            assert _ranked(graph) == _ranked(expected) == _ranked(loaded)
        store.close()  # waits for a write made behind
        assert load(cache).snapshot() == build_py(_current(state)).snapshot()


def test_a_confirmation_alone_is_written_and_survives_a_load(tmp_path: Path) -> None:
    cache = str(tmp_path / "graph.db")
    graph = build_py(PY)
    store = GraphStore(cache)
    store.write(graph)
    run, helper = node_id(graph, "app/main.py", "run"), node_id(graph, "pkg/util.py", "helper")
    graph.mark_semantic(run, helper)
    assert store.write(graph) == 0  # no file row changes, only the confirmed edges
    assert load(cache).g.edges[run, helper, "calls"]["precision"] == "semantic"


def test_a_write_behind_stores_the_graph_as_it_was_when_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The rows are taken at once and encoded by the writer thread: an edit made before the
    # writer runs must not leak into what it stores.
    import threading

    cache = str(tmp_path / "graph.db")
    graph = build_py(PY)
    store = GraphStore(cache)
    store.write(graph)
    gate = threading.Event()
    real = store._store

    def held(rows_of: object) -> int:
        gate.wait(10)
        return real(rows_of)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "_store", held)
    first = PY["app/main.py"] + "\n\ndef extra():\n    return run()\n"
    graph.update_file(py_tags("app/main.py", first), first.encode())
    assert store.write(graph, behind=True) == 1
    second = PY["app/main.py"] + "\n\ndef other():\n    return 2\n"
    graph.update_file(py_tags("app/main.py", second), second.encode())  # not written
    gate.set()
    store.wait()
    assert load(cache).snapshot() == build_py({**PY, "app/main.py": first}).snapshot()
    store.close()


@pytest.mark.parametrize("behind", [False, True])
def test_a_cache_deleted_with_its_folder_is_written_whole_again(
    tmp_path: Path, behind: bool
) -> None:
    """``.sleuth/`` deleted while the store holds its file open: the next write goes to a new
    file in a folder made again (with its ``.gitignore``), and holds every file — not the one
    edit's row into the deleted file, lost, as before. (A write behind had taken only the
    edit's rows: it finds a file without this process's epoch and leaves them to the next
    write, which rewrites every row, as after another writer.)"""
    import shutil

    folder = tmp_path / ".sleuth"
    cache = folder / "graph.db"
    graph = build_py(PY)
    store = GraphStore(str(cache))
    assert store.write(graph) == len(PY)
    shutil.rmtree(folder)
    text = PY["app/main.py"] + "\n\ndef extra():\n    return run()\n"
    graph.update_file(py_tags("app/main.py", text), text.encode())
    store.write(graph, behind=behind)
    store.wait()
    if behind:
        assert store.write(graph) == len(PY)
    assert (folder / ".gitignore").read_text() == "*\n"
    assert set(_rows(cache)) == set(PY)
    assert load(str(cache)).snapshot() == build_py({**PY, "app/main.py": text}).snapshot()
    store.close()
