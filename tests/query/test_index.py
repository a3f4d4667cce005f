"""The trigram index narrows files but never changes answers (prefilter contract)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sleuth.api import Workbench
from tests.conftest import MakeWorkspace

QUERIES = ["alpha", "Beta", "regex:gam+a", "regex:(?i)DELTA|zeta", "alpha AND beta", "xyz", "ta"]


def _tree() -> dict[str, str | bytes]:
    words = ["alpha", "beta", "gamma", "delta", "zeta", "Beta", "gammma"]
    return {
        f"src/m{i:02}.txt": "\n".join(words[j % len(words)] + f" {i} {j}" for j in range(i % 5 + 1))
        + "\n"
        for i in range(30)
    }


def _answers(wb: Workbench) -> dict[str, Any]:
    out = {}
    for q in QUERIES:
        res = wb.search(q, limit=500).to_json()
        out[q] = [(m["path"], m["line"], m["column"]) for m in res["matches"]]
    return out


def test_index_gives_the_same_answers(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(_tree())
    with Workbench(root, build_index=False) as plain:
        expected = _answers(plain)
    with Workbench(root) as wb:
        assert wb.index_now() == 30
        assert wb.index.ready
        assert wb.index.candidates(((b"alpha",),)) is not None
        assert _answers(wb) == expected
    # a restarted long-running Workbench loads the index from .sleuth/ instead of rebuilding
    assert (root / ".sleuth" / "trigram.idx").is_file()
    with Workbench(root) as restarted:
        assert restarted.index.ready
        assert _answers(restarted) == expected


def test_index_follows_changes(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(_tree())
    with Workbench(root) as wb:
        wb.index_now()
        target = root / "src/m07.txt"
        # same size, new word: the index must not hide it
        target.write_text(
            target.read_text().replace("alpha", "omega", 1)
            if "alpha" in target.read_text()
            else "omega\n"
        )
        (root / "src/new.txt").write_text("omega new\n")
        res = wb.search("omega").to_json()
        assert {m["path"] for m in res["matches"]} == {"src/m07.txt", "src/new.txt"}
        (root / "src/new.txt").unlink()
        res = wb.search("omega").to_json()
        assert {m["path"] for m in res["matches"]} == {"src/m07.txt"}


def test_background_build(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(_tree())
    with Workbench(root) as wb:
        first = wb.search("gamma").to_json()
        assert wb.index.wait(30)
        assert wb.search("gamma", context=0).to_json()["total"] == first["total"]


def test_the_index_sees_a_rewrite_that_restores_size_and_mtime(tmp_path: Path) -> None:
    import os
    import time

    from sleuth import Workbench

    target = tmp_path / "a.py"
    target.write_bytes(b"x = alpha_mode\n")
    past = time.time_ns() - 3_600_000_000_000
    os.utime(target, ns=(past, past))
    with Workbench(tmp_path, servers=False) as wb:
        assert wb.search("alpha_mode").total == 1
        assert wb.index.wait(60)
        with open(target, "r+b") as fh:
            fh.write(b"x = gamma_mode\n")
        os.utime(target, ns=(past, past))
        assert wb.search("gamma_mode").total == 1
