"""Edit answers are small (docs/json.md#edits, issue 20): the unified diff is cut at
``MAX_DIFF_LINES`` lines or ``MAX_DIFF_BYTES`` bytes with a marker line and ``diff_truncated``,
the renderings show the marker, and an undo answers the restored text, never whole files (also
for undo data that holds no ranges).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sleuth import Workbench
from sleuth.edit.diff import DIFF_CONTEXT, MAX_DIFF_BYTES, MAX_DIFF_LINES
from sleuth.render.edits import edit_compact, edit_human
from tests.conftest import MakeWorkspace

MARKER = re.compile(
    r"\u2026 (?P<n>\d+) more lines? \(diff truncated; read (?P<ref>RESULT#[0-9a-f]+) to see the "
    r"text\)"
)


@pytest.fixture
def wb_at(make_workspace: MakeWorkspace) -> Iterator[Any]:
    opened: list[Workbench] = []

    def build(files: dict[str, str | bytes]) -> tuple[Path, Workbench]:
        root = make_workspace(files)
        opened.append(Workbench(root))
        return root, opened[-1]

    yield build
    for wb in opened:
        wb.close()


def full_diff(path: str, old: bytes, new: bytes) -> list[str]:
    """The lines of the uncut unified diff, as the edit layer spells it."""
    lines = difflib.unified_diff(
        old.decode().splitlines(keepends=True),
        new.decode().splitlines(keepends=True),
        f"a/{path}",
        f"b/{path}",
        n=DIFF_CONTEXT,
    )
    return [line.removesuffix("\n") for line in lines]


def test_a_huge_replace_answers_a_bounded_diff_that_says_so(wb_at: Any) -> None:
    old = "".join(f"value_{i} = OLD + {i}\n" for i in range(3000)).encode()
    root, wb = wb_at({"big.py": old})
    ref = wb.search("OLD").to_json()["all"]["match"]
    answer = wb.replace(ref, "NEW").to_json()
    new = (root / "big.py").read_bytes()
    assert new == old.replace(b"OLD", b"NEW")
    assert answer["diff_truncated"] is True
    diff = answer["diff"]
    lines = diff.removesuffix("\n").split("\n")
    assert len(lines) <= MAX_DIFF_LINES + 1
    assert len(diff.encode()) <= MAX_DIFF_BYTES + 200
    marker = MARKER.fullmatch(lines[-1])
    assert marker is not None, lines[-1]
    assert marker["ref"] == answer["result"]
    # the kept lines are the start of the real diff, and the marker counts the rest exactly
    whole = full_diff("big.py", old, new)
    assert lines[:-1] == whole[: len(lines) - 1]
    assert int(marker["n"]) == len(whole) - (len(lines) - 1)
    # the RESULT# still selects every replaced range, readable in full
    assert len(answer["ranges"]) == 3000
    assert len(wb.read(answer["result"], max_bytes=None).to_json()["ranges"]) == 3000
    # so does the undo's answer (the restored text), with its own bounded diff
    undone = wb.undo(answer["result"]).to_json()
    assert (root / "big.py").read_bytes() == old
    assert undone["diff_truncated"] is True
    assert [r["text"] for r in undone["ranges"]] == ["OLD"] * 3000
    undo_marker = MARKER.fullmatch(undone["diff"].removesuffix("\n").split("\n")[-1])
    assert undo_marker is not None and undo_marker["ref"] == undone["result"]


def test_one_huge_line_is_cut_by_bytes(wb_at: Any) -> None:
    root, wb = wb_at({"min.js": "var a = 1;\n" + "x;" * 200_000 + "\n"})
    ref = wb.search("var a").to_json()["matches"][0]["ref"]["line"]
    answer = wb.insert(ref, "y;" * 100_000, where="after").to_json()
    assert answer["diff_truncated"] is True
    assert len(answer["diff"].encode()) <= MAX_DIFF_BYTES + 200
    assert MARKER.fullmatch(answer["diff"].removesuffix("\n").split("\n")[-1])
    assert answer["ranges"][0]["text"] == "y;" * 100_000  # the answer still selects all of it


def test_a_small_edit_has_its_whole_diff(wb_at: Any) -> None:
    root, wb = wb_at({"a.py": "x = OLD\n"})
    answer = wb.replace(wb.search("OLD").to_json()["matches"][0]["ref"]["match"], "NEW").to_json()
    assert answer["diff_truncated"] is False
    assert answer["diff"].splitlines() == full_diff("a.py", b"x = OLD\n", b"x = NEW\n")


def test_the_renderings_end_with_the_marker(wb_at: Any) -> None:
    old = "".join(f"OLD_{i}\n" for i in range(2000)).encode()
    root, wb = wb_at({"big.py": old})
    answer = wb.replace(wb.search("OLD").to_json()["all"]["match"], "NEW").to_json()
    marker = answer["diff"].removesuffix("\n").split("\n")[-1]
    assert MARKER.fullmatch(marker)
    human = edit_human(answer, verb="replace").plain.split("\n")
    assert human[-2:] == [marker, f"undo: sleuth undo {answer['result']}"]
    assert len(human) <= MAX_DIFF_LINES + 3
    compact = edit_compact(answer, verb="replace").split("\n")
    assert compact[-1] == marker and len(compact) <= MAX_DIFF_LINES + 2
    assert len(edit_compact(answer, verb="replace").encode()) <= MAX_DIFF_BYTES + 400


def test_undo_data_without_ranges_still_answers_only_what_changed(wb_at: Any) -> None:
    """Undo data written without the edit's ranges (an older sleuth) is answered with the one
    range where the restored file differs from what the edit left, not the whole file."""
    filler = "".join(f"line {i}\n" for i in range(5000))
    root, wb = wb_at({"a.py": filler + "x = OLD\n" + filler})
    edit = wb.replace(wb.search("OLD").to_json()["matches"][0]["ref"]["match"], "NEW").to_json()
    manifest = root / ".sleuth" / "undo" / edit["result"].removeprefix("RESULT#") / "undo.json"
    data = json.loads(manifest.read_bytes())
    for entry in data["files"]:
        del entry["spans"]
    manifest.write_bytes(json.dumps(data).encode())
    undone = wb.undo(edit["result"]).to_json()
    assert (root / "a.py").read_bytes() == (filler + "x = OLD\n" + filler).encode()
    assert [(r["line"], r["text"]) for r in undone["ranges"]] == [(5001, "OLD")]
