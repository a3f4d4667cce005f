"""The ``.sleuth/graph.db`` cache and ``sync``."""

from __future__ import annotations

from pathlib import Path

from sleuth.graph import Graph, load, save
from tests.graph.fixtures import Tags, py_tags
from tests.graph.helpers import build, build_py, node_id
from tests.graph.project import PY, py_project


def test_save_load_round_trip_keeps_everything(tmp_path: Path) -> None:
    graph = build(py_project())
    helper = node_id(graph, "pkg/util.py", "helper")
    run = node_id(graph, "app/main.py", "run")
    graph.mark_semantic(run, helper)
    cache = tmp_path / ".sleuth" / "graph.db"
    save(graph, str(cache))
    loaded = load(str(cache))
    assert loaded.snapshot() == graph.snapshot()
    assert loaded.g.edges[run, helper, "calls"]["precision"] == "semantic"
    assert loaded.file_view("pkg/models.py").to_json() == graph.file_view("pkg/models.py").to_json()
    assert [r.node.id for r in loaded.rank(5)] == [r.node.id for r in graph.rank(5)]
    assert loaded.record("pkg/util.py") == graph.record("pkg/util.py")
    # The loaded graph keeps updating incrementally, like the original.
    text = PY["pkg/util.py"].replace("helper", "helper3")
    for g in (graph, loaded):
        g.update_file(py_tags("pkg/util.py", text), text.encode())
    assert loaded.snapshot() == graph.snapshot()


def test_a_missing_or_broken_cache_loads_empty(tmp_path: Path) -> None:
    assert load(str(tmp_path / "none.json")).files() == []
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert load(str(bad)).files() == []
    old = tmp_path / "old.json"
    old.write_text('{"version": 0, "files": []}')
    assert load(str(old)).files() == []


def _stamps(files: dict[str, str]) -> dict[str, str]:
    from sleuth.workspace.reader import stamp_bytes

    return {p: stamp_bytes(t.encode()) for p, t in files.items()}


def test_sync_retags_only_changed_files(tmp_path: Path) -> None:
    files = dict(PY)
    asked: list[str] = []

    def get_tags(path: str) -> tuple[Tags, bytes]:
        asked.append(path)
        return py_tags(path, files[path]), files[path].encode()

    graph = Graph()
    report = graph.sync(_stamps(files), get_tags)
    assert report.added == sorted(PY) and report.updated == [] and report.removed == []
    assert graph.snapshot() == build_py(files).snapshot()

    cache = str(tmp_path / "graph.db")
    save(graph, cache)
    graph = load(cache)
    asked.clear()
    report = graph.sync(_stamps(files), get_tags)
    assert asked == [] and report.unchanged == len(PY)

    files["pkg/util.py"] = PY["pkg/util.py"] + "\n\ndef more():\n    return helper(0)\n"
    del files["other/tools.py"]
    files["new.py"] = "from pkg.util import more\n\nmore()\n"
    report = graph.sync(_stamps(files), get_tags)
    assert sorted(asked) == ["new.py", "pkg/util.py"]
    assert (report.added, report.updated, report.removed) == (
        ["new.py"],
        ["pkg/util.py"],
        ["other/tools.py"],
    )
    assert graph.snapshot() == build_py(files).snapshot()
    assert graph.record("pkg/util.py").stamp == _stamps(files)["pkg/util.py"]
