"""``index_now`` reports progress and replaces an old-format snapshot (the bar: tests/e2e/test_progress_e2e.py)."""

from __future__ import annotations

import struct
import zlib
from typing import Any

from sleuth.api import Workbench
from sleuth.query.index import IndexKeeper
from sleuth.text_search.trigram import BuildPlan, TrigramIndex
from sleuth.workspace import Workspace
from tests.conftest import MakeWorkspace

QUERIES = ["alpha", "regex:gam+a", "regex:(?i)DELTA|zeta", "alpha AND beta", "nowhere"]


def _tree(n: int = 40) -> dict[str, str | bytes]:
    words = ["alpha", "beta", "gamma", "delta", "zeta"]
    files: dict[str, str | bytes] = {
        f"src/m{i:02}.txt": " ".join(words[(i + j) % 5] for j in range(i % 4 + 1)) + "\n"
        for i in range(n)
    }
    files["img/logo.png"] = b"\x89PNG\x00\x00alpha"
    return files


def _answers(wb: Workbench) -> dict[str, Any]:
    out = {}
    for q in QUERIES:
        res = wb.search(q, limit=500).to_json()
        out[q] = sorted((m["path"], m["line"], m["column"]) for m in res["matches"])
    return out


def test_index_now_reports_rising_counts(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(_tree())
    seen: list[tuple[int, int]] = []
    ws = Workspace(root)
    # every file through the bulk path (forked workers where there are cores), in chunks
    keeper = IndexKeeper(
        ws, build=False, plan=BuildPlan(min_bulk_files=1, min_parallel_files=1, chunk_files=7)
    )
    files = ws.list_files().files
    assert keeper.build_now(files, lambda done, total: seen.append((done, total))) == 41
    done = [d for d, _ in seen]
    assert len(seen) > 1 and done == sorted(done) and len(set(done)) == len(done)
    assert seen[-1] == (41, 41) and {t for _, t in seen} == {41}
    assert keeper.ready and keeper.candidates(((b"gamma",),)) is not None
    ws.close()
    # the foreground path of ``sleuth index`` passes the hook through
    calls: list[tuple[int, int]] = []
    with Workbench(root, build_index=False) as wb:
        assert wb.index_now(on_progress=lambda done, total: calls.append((done, total))) == 0
    assert calls == [(0, 0)]  # nothing changed since the build above


def test_an_old_format_snapshot_is_rebuilt_and_answers_equal_a_scan(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace(_tree())
    with Workbench(root, build_index=False) as plain:
        expected = _answers(plain)
    # a version-1 snapshot (valid CRC, per-trigram layout) naming a file that holds nothing
    meta = b'{"files": [["src/m00.txt", 0, 1, 1]], "next_id": 1, "unindexed": []}'
    body = struct.pack("<QQ", 0, 0)
    crc = zlib.crc32(body, zlib.crc32(meta))
    snap = root / ".sleuth" / "trigram.idx"
    snap.parent.mkdir(exist_ok=True)
    snap.write_bytes(struct.pack("<8sIBQQI", b"SLTRIGRM", 1, 1, len(meta), len(body), crc))
    with snap.open("ab") as fh:
        fh.write(meta + body)
    with Workbench(root) as wb:
        assert not wb.index.ready  # not misread as the new layout
        assert wb.index_now() == 41
        assert _answers(wb) == expected
    assert TrigramIndex.load(snap) is not None  # rewritten in the current format
    with Workbench(root) as again:
        assert again.index.ready and _answers(again) == expected
