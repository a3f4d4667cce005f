"""Edits through references at the API level, on real files (docs/edits.md, docs/references.md).

Every operation is checked byte for byte: ``replace`` of a ``:match``, of an ``:all:match``
over several files and of an ``ast:`` capture; ``insert`` before/after a ``:line``; ``delete``
of a ``:line`` (its line break goes too) and of a ``:match``; ``copy`` to ``PATH:LINE`` and to
a reference; ``move`` across files. The ``RESULT#`` an edit answers selects exactly the
resulting text (a delete: the empty position), is a search scope and can be edited again;
older references into the changed files are stale afterwards, never rebound.

Safety: a file changed by one byte, or by a trailing newline only, makes every operation
``stale_reference`` with nothing written; one stale file of five leaves all five untouched
(also when it changes between the stamp check of the reference and the write). Encodings:
CRLF, BOM, Latin-1 bytes, a missing final newline and the file mode survive; an edit that
would put invalid UTF-8 into a UTF-8 file is refused. ``undo`` restores exact bytes; bad input
(forged references, cloaked files, targets outside the root, oversized text, overlapping or
unsafe selections) is refused with its error code (docs/errors.md) and nothing written.

Tests named ``test_regression_*`` expose engine bugs reported to the lead; they fail until the
engine is fixed.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sleuth import Workbench
from sleuth.edit import operations
from sleuth.errors import (
    Conflict,
    InvalidPath,
    InvalidQuery,
    NotFound,
    SleuthError,
    StaleReference,
    UnsafeSelection,
)
from tests.conftest import MakeWorkspace

Files = dict[str, str | bytes]
Bench = Callable[[Files], tuple[Path, Workbench]]


@pytest.fixture
def bench(make_workspace: MakeWorkspace) -> Iterator[Bench]:
    """``bench(files)`` -> (root, an open ``Workbench`` on it); closed after the test."""
    opened: list[Workbench] = []

    def build(files: Files) -> tuple[Path, Workbench]:
        root = make_workspace(files)
        opened.append(Workbench(root))
        return root, opened[-1]

    yield build
    for wb in opened:
        wb.close()


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every workspace file (outside ``.sleuth/``) -> (bytes, mode)."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(".sleuth/") or not path.is_file():
            continue
        out[rel] = (path.read_bytes(), stat.S_IMODE(path.stat().st_mode))
    return out


def search(wb: Workbench, query: str, **options: Any) -> dict[str, Any]:
    data = wb.search(query, **options).to_json()
    assert data["complete"] is True
    return data


def ref(wb: Workbench, query: str, n: int = 1, unit: str = "match", **options: Any) -> str:
    """The ``unit`` reference of match ``n`` of ``query``."""
    data = search(wb, query, **options)
    return str(data["matches"][n - 1]["ref"][unit])


def texts(answer: dict[str, Any]) -> list[tuple[str, str]]:
    return [(r["path"], r["text"]) for r in answer["ranges"]]


def read_back(wb: Workbench, result: str) -> list[tuple[str, int, int, str]]:
    """What a ``RESULT#`` selects now: (path, start_byte, end_byte, text) per range."""
    return [
        (r["path"], r["start_byte"], r["end_byte"], r["text"])
        for r in wb.read(result).to_json()["ranges"]
    ]


def check_answer(root: Path, wb: Workbench, answer: dict[str, Any]) -> None:
    """The answer's ranges are exactly the resulting bytes, and its RESULT# reads them back."""
    assert set(answer) >= {"result", "source", "refreshed", "complete", "ranges", "changed", "diff"}
    for r in answer["ranges"]:
        data = (root / r["path"]).read_bytes()
        assert data[r["start_byte"] : r["end_byte"]].decode("utf-8", "replace") == r["text"]
    assert read_back(wb, answer["result"]) == [
        (r["path"], r["start_byte"], r["end_byte"], r["text"]) for r in answer["ranges"]
    ]


# --- every operation, exact bytes ------------------------------------------------------------


def test_replace_one_match(bench: Bench) -> None:
    root, wb = bench({"app.py": "a = get_user(1)\nb = get_user(2)\n", "other.py": "get_user\n"})
    before = snapshot(root)
    answer = wb.replace(ref(wb, "get_user(2)"), "fetch_user(2)").to_json()
    assert (root / "app.py").read_bytes() == b"a = get_user(1)\nb = fetch_user(2)\n"
    assert snapshot(root)["other.py"] == before["other.py"]
    assert answer["changed"] == ["app.py"]
    assert answer["ranges"] == [
        {
            "path": "app.py",
            "line": 2,
            "end_line": 2,
            "start_byte": 20,
            "end_byte": 33,
            "text": "fetch_user(2)",
        }
    ]
    assert answer["diff"] == (
        "--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n a = get_user(1)\n-b = get_user(2)\n"
        "+b = fetch_user(2)\n"
    )
    check_answer(root, wb, answer)


def test_replace_all_matches_over_several_files(bench: Bench) -> None:
    root, wb = bench(
        {
            "a.py": "old_name()\nx = old_name\n",
            "pkg/b.py": "def f():\n    return old_name(old_name)\n",
            "c.txt": "no match here\n",
            "d.md": "see `old_name`",
        }
    )
    data = search(wb, "old_name")
    assert data["total"] == 5
    answer = wb.replace(data["all"]["match"], "new_name").to_json()
    assert (root / "a.py").read_bytes() == b"new_name()\nx = new_name\n"
    assert (root / "pkg/b.py").read_bytes() == b"def f():\n    return new_name(new_name)\n"
    assert (root / "d.md").read_bytes() == b"see `new_name`"
    assert (root / "c.txt").read_bytes() == b"no match here\n"
    assert answer["changed"] == ["a.py", "d.md", "pkg/b.py"]
    assert (
        texts(answer)
        == [("a.py", "new_name")] * 2 + [("d.md", "new_name")] + [("pkg/b.py", "new_name")] * 2
    )
    assert answer["refreshed"] is False
    check_answer(root, wb, answer)


FUNCS: Files = {
    "m.py": "def load(path, mode='r'):\n    return open(path, mode)\n\n\nx = load('a')\n",
    "n.py": "def save(data):\n    pass\n",
}


def test_replace_the_name_capture_of_an_ast_match(bench: Bench) -> None:
    root, wb = bench(FUNCS)
    data = search(wb, "ast:def $F($$$A): $$$B")
    assert [m["captures"]["F"]["text"] for m in data["matches"]] == ["load", "save"]
    answer = wb.replace(data["matches"][0]["captures"]["F"]["ref"], "read_file").to_json()
    assert (root / "m.py").read_bytes() == (
        b"def read_file(path, mode='r'):\n    return open(path, mode)\n\n\nx = load('a')\n"
    )
    assert (root / "n.py").read_bytes() == FUNCS["n.py"].encode()
    assert texts(answer) == [("m.py", "read_file")]
    check_answer(root, wb, answer)


def test_replace_a_multi_node_capture_keeps_its_punctuation_inside(bench: Bench) -> None:
    root, wb = bench(FUNCS)
    data = search(wb, "ast:def $F($$$A): $$$B")
    params = data["matches"][0]["captures"]["A"]
    assert (params["text"], params["nodes"]) == ("path, mode='r'", 2)
    wb.replace(params["ref"], "path, *, mode='rb'")
    assert (root / "m.py").read_bytes().startswith(b"def load(path, *, mode='rb'):\n")


@pytest.mark.parametrize(
    ("where", "text", "expected", "inserted"),
    [
        ("before", "# new\n", b"a = 1\n# new\nb = 2\nc = 3\n", "# new"),
        ("before", "# new", b"a = 1\n# new\nb = 2\nc = 3\n", "# new"),
        ("after", "b2 = 2", b"a = 1\nb = 2\nb2 = 2\nc = 3\n", "b2 = 2"),
        ("after", "b2 = 2\n", b"a = 1\nb = 2\nb2 = 2\nc = 3\n", "b2 = 2"),
        ("after", "x\ny", b"a = 1\nb = 2\nx\ny\nc = 3\n", "x\ny"),
        # the text is whole lines: a leading line break is an empty line of its own
        ("after", "\nb2 = 2", b"a = 1\nb = 2\n\nb2 = 2\nc = 3\n", "\nb2 = 2"),
        ("after", "\n", b"a = 1\nb = 2\n\nc = 3\n", ""),
    ],
)
def test_insert_through_a_line_inserts_whole_lines(
    bench: Bench, where: str, text: str, expected: bytes, inserted: str
) -> None:
    """docs/edits.md#insert: before the selected line, or after its line break, the text ending
    in one line break (added when missing, never doubled); the RESULT# selects the new lines as
    a ``:line`` reference would (without their last line break)."""
    root, wb = bench({"a.py": "a = 1\nb = 2\nc = 3\n"})
    answer = wb.insert(
        ref(wb, "b = 2", unit="line"), text, where="after" if where == "after" else "before"
    ).to_json()
    assert (root / "a.py").read_bytes() == expected
    assert texts(answer) == [("a.py", inserted)]
    check_answer(root, wb, answer)


def test_regression_insert_after_a_line_does_not_glue_the_text_onto_it(bench: Bench) -> None:
    """Issue 20: ``insert --after`` through ``SEARCH#H:n:line`` wrote ``b = 2c = 3``."""
    root, wb = bench({"a.py": "a = 1\nb = 2\n"})
    wb.insert(ref(wb, "b = 2", unit="line"), "c = 3", where="after")
    assert (root / "a.py").read_bytes() == b"a = 1\nb = 2\nc = 3\n"


def test_insert_through_a_match_goes_exactly_at_its_edge(bench: Bench) -> None:
    root, wb = bench({"a.py": "a = 1\nb = 2\n"})
    answer = wb.insert(ref(wb, "b = 2"), "  # note", where="after").to_json()
    assert (root / "a.py").read_bytes() == b"a = 1\nb = 2  # note\n"
    assert texts(answer) == [("a.py", "  # note")]
    wb.insert(ref(wb, "= 1"), "\n", where="before")
    assert (root / "a.py").read_bytes() == b"a \n= 1\nb = 2  # note\n"


@pytest.mark.parametrize(
    ("where", "expected", "inserted"),
    [
        ("after", b"a = 1\nb = 2\nnew", "new"),  # the file still ends without a line break
        ("before", b"a = 1\nnew\nb = 2", "new"),
    ],
)
@pytest.mark.parametrize("text", ["new", "new\n"])
def test_insert_at_a_last_line_without_a_line_break(
    bench: Bench, where: str, text: str, expected: bytes, inserted: str
) -> None:
    """After a last line that has no line break, the break goes before the text (and none is
    added at the end of the file, whether or not the text ends in one)."""
    root, wb = bench({"a.py": "a = 1\nb = 2"})
    answer = wb.insert(
        ref(wb, "b = 2", unit="line"), text, where="after" if where == "after" else "before"
    ).to_json()
    assert (root / "a.py").read_bytes() == expected
    assert texts(answer) == [("a.py", inserted)]
    check_answer(root, wb, answer)
    # deleting the RESULT# (whole lines) gives back the file as it was
    wb.delete(answer["result"])
    assert (root / "a.py").read_bytes() == b"a = 1\nb = 2"


def test_insert_whole_lines_into_a_crlf_file_adds_crlf(bench: Bench) -> None:
    root, wb = bench({"w.py": "a = 1\r\nb = 2\r\nc = 3"})
    answer = wb.insert(ref(wb, "a = 1", unit="line"), "x = 0", where="after").to_json()
    assert (root / "w.py").read_bytes() == b"a = 1\r\nx = 0\r\nb = 2\r\nc = 3"
    assert texts(answer) == [("w.py", "x = 0")]
    check_answer(root, wb, answer)
    wb.insert(ref(wb, "b = 2", unit="line"), "y = 0\r\n", where="before")  # not doubled
    wb.insert(ref(wb, "c = 3", unit="line"), "z = 0\n", where="after")
    assert (root / "w.py").read_bytes() == (b"a = 1\r\nx = 0\r\ny = 0\r\nb = 2\r\nc = 3\r\nz = 0")


def test_insert_around_a_multi_line_selection(bench: Bench) -> None:
    root, wb = bench({"a.py": "x\ndef f():\n    return 1\ny\n"})
    lines = search(wb, "regex:def f\\(\\):\\n    return")["matches"][0]["ref"]["line"]
    wb.insert(lines, "@cache", where="before")
    assert (root / "a.py").read_bytes() == b"x\n@cache\ndef f():\n    return 1\ny\n"
    lines = search(wb, "regex:def f\\(\\):\\n    return")["matches"][0]["ref"]["line"]
    wb.insert(lines, "f()", where="after")
    assert (root / "a.py").read_bytes() == b"x\n@cache\ndef f():\n    return 1\nf()\ny\n"


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ("before", b"# +\nf(1)\nkeep\n# +\ng(f(2))\n# +\nf(3)"),
        ("after", b"f(1)\n# +\nkeep\ng(f(2))\n# +\nf(3)\n# +"),
    ],
)
def test_insert_through_all_lines_of_a_file(bench: Bench, where: str, expected: bytes) -> None:
    """Several line ranges of one file: each gets its own whole line."""
    root, wb = bench({"a.py": "f(1)\nkeep\ng(f(2))\nf(3)"})
    answer = wb.insert(
        search(wb, "f(")["all"]["line"], "# +", where="after" if where == "after" else "before"
    ).to_json()
    assert (root / "a.py").read_bytes() == expected
    assert texts(answer) == [("a.py", "# +")] * 3
    check_answer(root, wb, answer)


def test_insert_whole_lines_through_a_read_and_into_an_empty_file(bench: Bench) -> None:
    root, wb = bench({"a.py": "one\ntwo\n", "e.py": ""})
    wb.insert(wb.read("a.py").result, "three", where="after")
    wb.insert(wb.read("a.py").result, "zero", where="before")
    assert (root / "a.py").read_bytes() == b"zero\none\ntwo\nthree\n"
    wb.insert(wb.read("e.py").result, "only", where="after")
    assert (root / "e.py").read_bytes() == b"only\n"


def test_inserting_empty_text_through_a_line_changes_nothing(bench: Bench) -> None:
    root, wb = bench({"a.py": "a = 1\n"})
    before = snapshot(root)
    with pytest.raises(Conflict):
        wb.insert(ref(wb, "a = 1", unit="line"), "", where="after")
    assert snapshot(root) == before


def test_the_result_of_a_whole_line_insert_is_whole_lines(bench: Bench) -> None:
    """Replacing it keeps the line break; inserting through it adds lines; undo is exact."""
    root, wb = bench({"a.py": "a = 1\nb = 2\n"})
    first = wb.insert(ref(wb, "a = 1", unit="line"), "x = 0", where="after").to_json()
    wb.replace(first["result"], "x = 9")
    assert (root / "a.py").read_bytes() == b"a = 1\nx = 9\nb = 2\n"
    again = wb.insert(ref(wb, "x = 9", unit="line"), "y = 0", where="after").to_json()
    wb.insert(again["result"], "z = 0", where="after")
    assert (root / "a.py").read_bytes() == b"a = 1\nx = 9\ny = 0\nz = 0\nb = 2\n"


def test_insert_before_every_match_of_a_result(bench: Bench) -> None:
    root, wb = bench({"a.py": "f(1)\ng(f(2))\n", "b.py": "f(3)"})
    wb.insert(search(wb, "f(")["all"]["match"], "self.")
    assert (root / "a.py").read_bytes() == b"self.f(1)\ng(self.f(2))\n"
    assert (root / "b.py").read_bytes() == b"self.f(3)"


def test_delete_a_line_removes_it_with_its_line_break(bench: Bench) -> None:
    root, wb = bench({"a.py": "keep1\ndrop me\nkeep2\n"})
    answer = wb.delete(ref(wb, "drop", unit="line")).to_json()
    assert (root / "a.py").read_bytes() == b"keep1\nkeep2\n"
    assert answer["ranges"] == [
        {"path": "a.py", "line": 2, "end_line": 2, "start_byte": 6, "end_byte": 6, "text": ""}
    ]
    check_answer(root, wb, answer)


def test_delete_every_matching_line(bench: Bench) -> None:
    root, wb = bench({"a.py": "import os\nx = 1\nimport sys\n", "b.py": "import re\n"})
    answer = wb.delete(search(wb, "import ")["all"]["line"]).to_json()
    assert (root / "a.py").read_bytes() == b"x = 1\n"
    assert (root / "b.py").read_bytes() == b""
    assert texts(answer) == [("a.py", ""), ("a.py", ""), ("b.py", "")]


def test_delete_a_match_leaves_the_rest_of_the_line(bench: Bench) -> None:
    root, wb = bench({"a.py": "total = price + tax + fee\n"})
    answer = wb.delete(ref(wb, " + tax")).to_json()
    assert (root / "a.py").read_bytes() == b"total = price + fee\n"
    assert answer["ranges"] == [
        {"path": "a.py", "line": 1, "end_line": 1, "start_byte": 13, "end_byte": 13, "text": ""}
    ]


def test_copy_a_line_to_path_line(bench: Bench) -> None:
    root, wb = bench({"a.py": "one\ntwo\nthree\n", "b.py": "B1\nB2\n"})
    answer = wb.copy(ref(wb, "two", unit="line"), to="b.py:2").to_json()
    assert (root / "a.py").read_bytes() == b"one\ntwo\nthree\n"
    assert (root / "b.py").read_bytes() == b"B1\ntwo\nB2\n"
    assert answer["changed"] == ["b.py"] and texts(answer) == [("b.py", "two")]
    check_answer(root, wb, answer)


def test_copy_a_match_to_a_line_inserts_a_whole_line(bench: Bench) -> None:
    """To a line (PATH:LINE or a :line reference) the text goes as whole lines, as an insert
    through a :line reference does; to a :match, exactly at its start."""
    root, wb = bench({"a.py": "x = compute(1)\n", "b.py": "B1\nB2", "c.py": "C1\r\nC2\r\n"})
    source = ref(wb, "compute(1)")
    answer = wb.copy(source, to="b.py:2").to_json()
    assert (root / "b.py").read_bytes() == b"B1\ncompute(1)\nB2"
    assert texts(answer) == [("b.py", "compute(1)")]
    check_answer(root, wb, answer)
    wb.copy(ref(wb, "compute(1)", path="a.py"), to="b.py:4")
    assert (root / "b.py").read_bytes() == b"B1\ncompute(1)\nB2\ncompute(1)"
    wb.copy(ref(wb, "compute(1)", path="a.py"), to=ref(wb, "C2", unit="line"))
    assert (root / "c.py").read_bytes() == b"C1\r\ncompute(1)\r\nC2\r\n"


def test_copy_to_the_line_after_the_last(bench: Bench) -> None:
    root, wb = bench({"a.py": "one\n", "b.py": "B1\nB2\n", "c.py": "C1\nC2"})
    wb.copy(ref(wb, "one", unit="line"), to="b.py:3")
    assert (root / "b.py").read_bytes() == b"B1\nB2\none\n"
    wb.copy(ref(wb, "one", unit="line", path="a.py"), to="c.py:3")
    assert (root / "c.py").read_bytes() == b"C1\nC2\none"  # still no final newline
    with pytest.raises(InvalidQuery):
        wb.copy(ref(wb, "one", unit="line", path="a.py"), to="b.py:5")


def test_copy_a_match_to_a_reference(bench: Bench) -> None:
    root, wb = bench({"a.py": "x = compute(1)\n", "b.py": "y = 2\nresult = y\n"})
    source = ref(wb, "compute(1)")
    answer = wb.copy(source, to=ref(wb, "y\n", path="b.py", n=1)).to_json()
    assert (root / "b.py").read_bytes() == b"y = 2\nresult = compute(1)y\n"
    assert texts(answer) == [("b.py", "compute(1)")]
    assert (root / "a.py").read_bytes() == b"x = compute(1)\n"


def test_move_lines_across_files(bench: Bench) -> None:
    root, wb = bench(
        {
            "a.py": "import os\ndef helper():\n    return 1\nx = 2\n",
            "b.py": "import sys\n\nmain()\n",
        }
    )
    data = search(wb, "regex:def helper\\(\\):\\n    return 1")
    answer = wb.move(data["matches"][0]["ref"]["line"], to="b.py:2").to_json()
    assert (root / "a.py").read_bytes() == b"import os\nx = 2\n"
    assert (root / "b.py").read_bytes() == b"import sys\ndef helper():\n    return 1\n\nmain()\n"
    assert answer["changed"] == ["a.py", "b.py"]
    assert texts(answer) == [("b.py", "def helper():\n    return 1")]
    check_answer(root, wb, answer)


def test_move_within_one_file(bench: Bench) -> None:
    root, wb = bench({"a.py": "first\nsecond\nthird\n"})
    wb.move(ref(wb, "third", unit="line"), to="a.py:1")
    assert (root / "a.py").read_bytes() == b"third\nfirst\nsecond\n"


# --- the RESULT# of an edit ------------------------------------------------------------------


def test_edit_result_is_a_scope_and_can_be_edited_again(bench: Bench) -> None:
    root, wb = bench({"a.py": "v = old(1)\nold(2)\n", "b.py": "w = old(3)\n"})
    first = wb.replace(search(wb, "old(")["all"]["match"], "mid(").to_json()
    assert read_back(wb, first["result"]) == [
        ("a.py", 4, 8, "mid("),
        ("a.py", 11, 15, "mid("),
        ("b.py", 4, 8, "mid("),
    ]
    # as a scope: only its exact ranges are searched
    scoped = search(wb, "regex:i", path=first["result"])
    assert [(m["path"], m["start_byte"]) for m in scoped["matches"]] == [
        ("a.py", 5),
        ("a.py", 12),
        ("b.py", 5),
    ]
    # and as the reference of a further edit
    second = wb.replace(first["result"], "new(").to_json()
    assert (root / "a.py").read_bytes() == b"v = new(1)\nnew(2)\n"
    assert (root / "b.py").read_bytes() == b"w = new(3)\n"
    check_answer(root, wb, second)
    # the first result's files changed: it is stale now, never rebound to the new text
    with pytest.raises(StaleReference):
        wb.read(first["result"])


def test_delete_result_is_the_empty_position_and_takes_an_insert(bench: Bench) -> None:
    root, wb = bench({"a.py": "call(a, b, c)\n"})
    gone = wb.delete(ref(wb, "b, ")).to_json()
    assert read_back(wb, gone["result"]) == [("a.py", 8, 8, "")]
    wb.insert(gone["result"], "x, ")
    assert (root / "a.py").read_bytes() == b"call(a, x, c)\n"


def test_older_references_into_changed_files_go_stale(bench: Bench) -> None:
    root, wb = bench({"a.py": "def f(x):\n    return g(x) + g(x)\n", "b.py": "g(1)\n"})
    data = search(wb, "g(x)", path="a.py")
    captures = search(wb, "ast:def $F($$$A): $$$B")["matches"][0]["captures"]
    other = ref(wb, "g(1)")
    wb.replace(data["matches"][0]["ref"]["match"], "h(x)")
    after = (root / "a.py").read_bytes()
    for old in (
        data["matches"][1]["ref"]["match"],
        data["matches"][0]["ref"]["line"],
        captures["B"]["ref"],
        captures["F"]["ref"],
    ):
        with pytest.raises(StaleReference) as info:
            wb.replace(old, "zzz")
        assert info.value.details["files"] == ["a.py"]
        with pytest.raises(StaleReference):
            wb.read(old)
    assert (root / "a.py").read_bytes() == after
    # a reference into a file the edit did not touch still works
    wb.replace(other, "g(2)")
    assert (root / "b.py").read_bytes() == b"g(2)\n"


# --- staleness: nothing is written -----------------------------------------------------------

STALE: Files = {"a.py": "alpha = 1\nbeta = 2\n", "b.py": "gamma = 3\n"}
OPERATIONS: dict[str, Callable[[Workbench, str], object]] = {
    "replace": lambda wb, r: wb.replace(r, "zeta = 9"),
    "insert-before": lambda wb, r: wb.insert(r, "# c\n", where="before"),
    "insert-after": lambda wb, r: wb.insert(r, "  # c", where="after"),
    "delete": lambda wb, r: wb.delete(r),
    "copy": lambda wb, r: wb.copy(r, to="b.py:1"),
    "move": lambda wb, r: wb.move(r, to="b.py:1"),
}
CHANGES: dict[str, Callable[[bytes], bytes]] = {
    "one-byte": lambda data: data.replace(b"2", b"3"),
    "trailing-newline": lambda data: data + b"\n",
    "newline-removed": lambda data: data[:-1],
}


@pytest.mark.parametrize("change", sorted(CHANGES))
@pytest.mark.parametrize("operation", sorted(OPERATIONS))
@pytest.mark.parametrize("unit", ["match", "line"])
def test_every_operation_refuses_a_stale_reference(
    bench: Bench, operation: str, change: str, unit: str
) -> None:
    root, wb = bench(STALE)
    reference = ref(wb, "beta = 2", unit=unit)
    target = root / "a.py"
    target.write_bytes(CHANGES[change](target.read_bytes()))
    before = snapshot(root)
    with pytest.raises(StaleReference) as info:
        OPERATIONS[operation](wb, reference)
    assert info.value.details["files"] == ["a.py"]
    assert snapshot(root) == before
    assert list((root / ".sleuth").glob("journal/*")) == []


@pytest.mark.parametrize("verb", ["copy", "move"])
def test_copy_and_move_refuse_a_stale_target(bench: Bench, verb: str) -> None:
    root, wb = bench(STALE)
    source = ref(wb, "alpha", unit="line")
    target = ref(wb, "gamma")
    (root / "b.py").write_bytes(b"gamma = 3\n\n")
    before = snapshot(root)
    with pytest.raises(StaleReference) as info:
        getattr(wb, verb)(source, to=target)
    assert info.value.details["files"] == ["b.py"]
    assert snapshot(root) == before


FIVE: Files = {f"src/f{i}.py": f"head_{i} = 0\nvalue = compute_{i}(needle)\n" for i in range(5)}


def five_selection(wb: Workbench) -> str:
    """A RESULT# holding the single match of ``needle`` in each of five files."""
    data = search(wb, "needle")
    assert data["total"] == 5 and len({m["path"] for m in data["matches"]}) == 5
    return str(wb.select(data["result"], [1, 2, 3, 4, 5]).result)


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
def test_one_stale_file_of_five_leaves_all_five_untouched(bench: Bench, operation: str) -> None:
    root, wb = bench(FIVE)
    selection = five_selection(wb)
    (root / "src/f3.py").write_bytes(FIVE["src/f3.py"].encode() + b"\n")  # a trailing newline
    before = snapshot(root)
    with pytest.raises(StaleReference) as info:
        OPERATIONS[operation](wb, selection)
    assert "src/f3.py" in info.value.details["files"]
    assert snapshot(root) == before


def test_a_file_changing_between_resolution_and_write_stops_the_whole_edit(
    bench: Bench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The journal checks every stamp again just before writing: a file that changes after the
    reference resolved (another editor, in the window) stops all five files."""
    root, wb = bench(FIVE)
    selection = five_selection(wb)
    real_commit = operations.commit

    def racing_commit(ws: Any, changes: Any, verify: Any = ()) -> None:
        (root / "src/f2.py").write_bytes(b"head_2 = 0\nvalue = compute_2(needle)  \n")
        (root / "src/f4.py").write_bytes(b"changed\n")
        real_commit(ws, changes, verify)

    monkeypatch.setattr(operations, "commit", racing_commit)
    before = {path: data for path, data in FIVE.items()}
    with pytest.raises(StaleReference) as info:
        wb.replace(selection, "other")
    assert info.value.details["files"] == ["src/f2.py", "src/f4.py"]
    after = snapshot(root)
    for i in (0, 1, 3):
        assert after[f"src/f{i}.py"][0] == before[f"src/f{i}.py"].encode()
    assert list((root / ".sleuth").glob("journal/*")) == []


def test_an_all_reference_of_changed_files_refreshes_instead(bench: Bench) -> None:
    """For contrast (docs/references.md#when-a-file-changes): ``:all`` re-runs its query instead of
    going stale, and the edit says ``"refreshed": true`` so the caller knows fresh matches were
    edited."""
    root, wb = bench(FIVE)
    data = search(wb, "needle")
    (root / "src/f3.py").write_bytes(b"needle needle\n")
    answer = wb.replace(data["all"]["match"], "pin").to_json()
    assert answer["refreshed"] is True
    assert (root / "src/f3.py").read_bytes() == b"pin pin\n"
    assert (root / "src/f0.py").read_bytes() == b"head_0 = 0\nvalue = compute_0(pin)\n"


# --- encodings, line endings and modes -------------------------------------------------------


def test_crlf_file_stays_crlf_with_multi_line_text(bench: Bench) -> None:
    root, wb = bench({"w.py": "a = 1\r\nb = 2\r\nc = 3\r\n"})
    wb.insert(ref(wb, "b = 2", unit="line"), "# one\n# two\n")
    assert (root / "w.py").read_bytes() == b"a = 1\r\n# one\r\n# two\r\nb = 2\r\nc = 3\r\n"
    answer = wb.replace(ref(wb, "c = 3"), "c = (\n    3\n)").to_json()
    assert (root / "w.py").read_bytes() == (
        b"a = 1\r\n# one\r\n# two\r\nb = 2\r\nc = (\r\n    3\r\n)\r\n"
    )
    assert texts(answer) == [("w.py", "c = (\r\n    3\r\n)")]
    wb.delete(ref(wb, "b = 2", unit="line"))
    assert (root / "w.py").read_bytes() == b"a = 1\r\n# one\r\n# two\r\nc = (\r\n    3\r\n)\r\n"
    # text that already has CRLF is not doubled
    wb.replace(ref(wb, "# two"), "# 2a\r\n# 2b")
    assert b"# 2a\r\n# 2b\r\n" in (root / "w.py").read_bytes()


def test_copy_from_lf_into_crlf_takes_the_target_line_endings(bench: Bench) -> None:
    root, wb = bench({"lf.py": "x = 1\ny = 2\n", "crlf.py": "a\r\nb\r\n"})
    wb.copy(search(wb, "regex:x = 1\\ny = 2")["matches"][0]["ref"]["line"], to="crlf.py:2")
    assert (root / "crlf.py").read_bytes() == b"a\r\nx = 1\r\ny = 2\r\nb\r\n"


def test_bom_is_kept(bench: Bench) -> None:
    root, wb = bench({"bom.py": "\ufeffname = 1\nother = 2\n", "src.py": "copied = 0\n"})
    wb.replace(ref(wb, "name"), "renamed")
    assert (root / "bom.py").read_bytes() == b"\xef\xbb\xbfrenamed = 1\nother = 2\n"
    wb.insert(ref(wb, "renamed", unit="line"), "# header\n")
    assert (root / "bom.py").read_bytes() == b"\xef\xbb\xbf# header\nrenamed = 1\nother = 2\n"
    wb.copy(ref(wb, "copied", unit="line"), to="bom.py:1")
    assert (root / "bom.py").read_bytes() == (
        b"\xef\xbb\xbfcopied = 0\n# header\nrenamed = 1\nother = 2\n"
    )
    wb.delete(ref(wb, "copied", unit="line", path="bom.py"))
    assert (root / "bom.py").read_bytes() == b"\xef\xbb\xbf# header\nrenamed = 1\nother = 2\n"


def test_latin1_bytes_outside_the_range_are_preserved(bench: Bench) -> None:
    data = b"# caf\xe9 cr\xe8me\nvalue = old\n# na\xefve\n"
    root, wb = bench({"legacy.py": data})
    answer = wb.replace(ref(wb, "old"), "new").to_json()
    assert (root / "legacy.py").read_bytes() == data.replace(b"old", b"new")
    assert texts(answer) == [("legacy.py", "new")]
    wb.delete(ref(wb, "value", unit="line"))
    assert (root / "legacy.py").read_bytes() == b"# caf\xe9 cr\xe8me\n# na\xefve\n"


def test_missing_final_newline_is_preserved(bench: Bench) -> None:
    root, wb = bench({"a.py": "x = 1\ny = old"})
    wb.replace(ref(wb, "old"), "new")
    assert (root / "a.py").read_bytes() == b"x = 1\ny = new"
    wb.insert(ref(wb, "y = new"), "  # end", where="after")
    assert (root / "a.py").read_bytes() == b"x = 1\ny = new  # end"
    wb.insert(ref(wb, "y = new", unit="line"), "z = 2", where="after")
    assert (root / "a.py").read_bytes() == b"x = 1\ny = new  # end\nz = 2"
    wb.delete(ref(wb, "x = 1", unit="line"))
    assert (root / "a.py").read_bytes() == b"y = new  # end\nz = 2"


def test_file_mode_is_preserved(bench: Bench) -> None:
    root, wb = bench({"run.sh": "#!/bin/sh\necho old\n", "rw.txt": "old\n"})
    os.chmod(root / "run.sh", 0o755)
    os.chmod(root / "rw.txt", 0o640)
    answer = wb.replace(search(wb, "old")["all"]["match"], "new").to_json()
    assert answer["changed"] == ["run.sh", "rw.txt"]
    assert snapshot(root) == {
        "rw.txt": (b"new\n", 0o640),
        "run.sh": (b"#!/bin/sh\necho new\n", 0o755),
    }


def test_a_read_only_file_is_never_written(bench: Bench) -> None:
    """A temporary file renamed over a 0444 file replaces it whatever its mode (only the
    folder's permission counts), so a file made read-only would be written silently, even by
    a user who could not open it for writing: refused like an editor refuses, nothing written."""
    root, wb = bench({"ro.txt": "old\n", "rw.txt": "old\n"})
    os.chmod(root / "ro.txt", 0o444)
    before = snapshot(root)
    with pytest.raises(InvalidPath, match="read-only"):
        wb.replace(search(wb, "old")["all"]["match"], "new")
    assert snapshot(root) == before
    os.chmod(root / "ro.txt", 0o644)
    assert wb.replace(search(wb, "old")["all"]["match"], "new").changed == ["ro.txt", "rw.txt"]


def test_invalid_utf8_into_a_utf8_file_is_refused(bench: Bench) -> None:
    """A Latin-1 range copied into a UTF-8 file would leave the byte 0xE9 alone in it: refused
    with ``unsafe_selection``, nothing written."""
    root, wb = bench({"legacy.py": b"name = 'caf\xe9'\n", "utf8.py": "x = 'd\u00e9j\u00e0'\n"})
    before = snapshot(root)
    for verb in ("copy", "move"):
        with pytest.raises(UnsafeSelection) as info:
            getattr(wb, verb)(ref(wb, "name", unit="line"), to="utf8.py:1")
        assert info.value.details["path"] == "utf8.py"
        assert snapshot(root) == before
    # into another Latin-1 (binary-safe) file it is fine: nothing new is broken there
    (root / "legacy2.py").write_bytes(b"# \xff\n")
    wb.copy(ref(wb, "name", unit="line", path="legacy.py"), to="legacy2.py:2")
    assert (root / "legacy2.py").read_bytes() == b"# \xff\nname = 'caf\xe9'\n"


def test_a_range_that_splits_a_character_is_refused(bench: Bench) -> None:
    """No search can produce a range that ends inside a UTF-8 character (regex runs in Unicode
    mode, ast ranges are node edges), so this registers one through the registry (private
    ``_views``): replacing the first byte of 'é' is refused, and since such a row is no range
    a search stored, already when the reference is resolved (docs/SAFETY.md#damaged-or-planted-state)."""
    from sleuth.resources.selection import Range, Selection

    root, wb = bench({"u.py": "s = '\u00e9'\n"})
    ft = wb.workspace.read("u.py")
    assert ft is not None
    split = Range("u.py", 5, 6, 1, 1, ft.stamp)  # the first of the two bytes of 'é'
    forged = wb._views.register(
        Selection("u.py", [split], "", texts={"u.py": ft}), "read", {}, None
    )
    before = snapshot(root)
    with pytest.raises(StaleReference, match="does not fit"):
        wb.replace(forged.result, "e")
    with pytest.raises(StaleReference, match="does not fit"):
        wb.delete(forged.result)
    assert snapshot(root) == before


# --- undo -------------------------------------------------------------------------------------


def test_undo_restores_exact_bytes_and_modes(bench: Bench) -> None:
    files: Files = {
        "crlf.py": "k = old\r\n",
        "bom.py": "\ufeffk = old\n",
        "latin.py": b"# \xe9\nk = old",
        "x.sh": "k=old\n",
    }
    root, wb = bench(files)
    os.chmod(root / "x.sh", 0o751)
    before = snapshot(root)
    edit = wb.replace(search(wb, "old")["all"]["match"], "brand\nnew").to_json()
    assert snapshot(root) != before
    undone = wb.undo(edit["result"]).to_json()
    assert snapshot(root) == before
    assert undone["changed"] == edit["changed"] == ["bom.py", "crlf.py", "latin.py", "x.sh"]
    assert [line for line in undone["diff"].splitlines() if line.startswith("--- ")] == [
        f"--- a/{path}" for path in undone["changed"]
    ]
    # the undo's own result selects the restored files
    assert [r["path"] for r in undone["ranges"]] == undone["changed"]


def test_undo_of_a_move_restores_both_files(bench: Bench) -> None:
    root, wb = bench({"a.py": "one\ntwo\n", "b.py": "three\n"})
    before = snapshot(root)
    edit = wb.move(ref(wb, "two", unit="line"), to="b.py:1")
    wb.undo(edit.result)
    assert snapshot(root) == before


def test_undo_after_a_further_change_is_a_conflict(bench: Bench) -> None:
    root, wb = bench({"a.py": "v = 1\n", "b.py": "v = 2\n"})
    edit = wb.replace(search(wb, "v = ")["all"]["match"], "w = ")
    wb.replace(ref(wb, "w = 2"), "w = 3")
    before = snapshot(root)
    with pytest.raises(Conflict) as info:
        wb.undo(edit.result)
    assert info.value.details["files"] == ["b.py"]
    assert snapshot(root) == before  # a.py, unchanged since, is not undone alone


def test_undo_twice_is_not_found(bench: Bench) -> None:
    root, wb = bench({"a.py": "v = 1\n"})
    edit = wb.replace(ref(wb, "1"), "2")
    wb.undo(edit.result)
    assert (root / "a.py").read_bytes() == b"v = 1\n"
    with pytest.raises(NotFound):
        wb.undo(edit.result)
    assert (root / "a.py").read_bytes() == b"v = 1\n"


@pytest.mark.parametrize(
    ("make", "error"),
    [
        (lambda wb: wb.read("a.py").result, NotFound),
        (lambda wb: "RESULT#0123abcd", NotFound),
        (lambda wb: ref(wb, "v"), InvalidQuery),
        (lambda wb: "RESULT#", InvalidQuery),
    ],
)
def test_undo_of_something_that_is_not_an_edit(
    bench: Bench, make: Callable[[Workbench], str], error: type[SleuthError]
) -> None:
    root, wb = bench({"a.py": "v = 1\n"})
    with pytest.raises(error):
        wb.undo(make(wb))
    assert (root / "a.py").read_bytes() == b"v = 1\n"


def test_regression_undo_of_a_redone_edit(bench: Bench) -> None:
    """Engine bug (reported): edit, undo, the same edit again (the old reference is valid again:
    its file holds the searched bytes), undo again -> the second edit gets the same RESULT# id,
    and the second undo restores the file but then crashes renaming the undo folder onto the
    existing ``<id>.undone`` (``OSError: Directory not empty``, reported as ``internal``)."""
    root, wb = bench({"a.py": "v = 1\n"})
    reference = ref(wb, "1")
    first = wb.replace(reference, "2")
    wb.undo(first.result)
    again = wb.replace(reference, "2")
    wb.undo(again.result)
    assert (root / "a.py").read_bytes() == b"v = 1\n"


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reference", "error"),
    [
        ("SEARCH#zz:1:match", InvalidQuery),
        ("SEARCH#deadbeef:1:match", NotFound),
        ("SEARCH#deadbeef:all:line", NotFound),
        ("RESULT#0123abcd", NotFound),
        ("RESULT#../../etc", InvalidQuery),
        ("a.py", InvalidQuery),
        ("", InvalidQuery),
    ],
)
def test_forged_references_are_refused(
    bench: Bench, reference: str, error: type[SleuthError]
) -> None:
    root, wb = bench({"a.py": "v = 1\n"})
    before = snapshot(root)
    for operation in OPERATIONS.values():
        with pytest.raises(error):
            operation(wb, reference)
    assert snapshot(root) == before


def test_a_match_number_past_the_result_is_not_found(bench: Bench) -> None:
    root, wb = bench({"a.py": "v = 1\n"})
    data = search(wb, "v")
    with pytest.raises(NotFound):
        wb.replace(f"{data['result']}:2:match", "w")
    assert (root / "a.py").read_bytes() == b"v = 1\n"


def test_a_file_cloaked_after_the_search_is_never_touched(bench: Bench) -> None:
    """A deny rule added after the search: the file is treated exactly as if it were missing
    (docs/faces.md#access-policy-denied-files-are-cloaked) — the single reference is refused the
    same way as a reference into a deleted file, an ``:all`` reference re-runs without it, and it
    cannot be a copy target."""
    root, wb = bench({"a.py": "token = 1\n", "secret.py": "token = 2\n", "gone.py": "token = 3\n"})
    data = search(wb, "token")
    secret_ref, gone_ref = (f"{data['result']}:{n}:match" for n in (3, 2))
    assert [m["path"] for m in data["matches"]] == ["a.py", "gone.py", "secret.py"]
    (root / ".sleuth.toml").write_text('deny = ["secret.py"]\n')
    (root / "gone.py").unlink()
    later = Workbench(root)  # a later call (CLI process, MCP server) reads the new policy
    try:
        before = snapshot(root)
        with pytest.raises(SleuthError) as missing:
            later.replace(gone_ref, "leak = ")
        with pytest.raises(SleuthError) as cloaked:
            later.replace(secret_ref, "leak = ")
        assert cloaked.value.code == missing.value.code
        assert cloaked.value.code in ("not_found", "stale_reference")
        assert snapshot(root) == before
        with pytest.raises(NotFound):
            later.copy(f"{data['result']}:1:line", to="secret.py:1")
        answer = later.replace(data["all"]["match"], "leak = ").to_json()
        assert answer["changed"] == ["a.py"]
        assert (root / "secret.py").read_bytes() == b"token = 2\n"
    finally:
        later.close()


@pytest.mark.parametrize(
    "target", ["../x.py:1", "/etc/passwd:1", "outside/passwd:1", "a.py/../../x.py:1"]
)
def test_a_target_outside_the_root_is_invalid_path(bench: Bench, target: str) -> None:
    root, wb = bench({"a.py": "v = 1\n"})
    (root / "outside").symlink_to("/etc")
    before = snapshot(root)
    for verb in ("copy", "move"):
        with pytest.raises(InvalidPath):
            getattr(wb, verb)(ref(wb, "v", unit="line"), to=target)
    assert snapshot(root) == before


@pytest.mark.parametrize("target", ["a.py", "a.py:0", "a.py:-1", "a.py:x", ""])
def test_a_malformed_target_is_invalid_query(bench: Bench, target: str) -> None:
    root, wb = bench({"a.py": "v = 1\n"})
    with pytest.raises(InvalidQuery):
        wb.copy(ref(wb, "v", unit="line"), to=target)
    assert (root / "a.py").read_bytes() == b"v = 1\n"


def test_a_200_mb_text_is_refused_before_anything_is_written(bench: Bench) -> None:
    root, wb = bench({"a.py": "v = 1\n"})
    huge = "x" * (200 * 1024 * 1024)  # built in memory, never sent anywhere
    for verb in ("replace", "insert"):
        with pytest.raises(InvalidQuery) as info:
            getattr(wb, verb)(ref(wb, "v"), huge)
        assert "nothing was written" in info.value.message
    assert snapshot(root) == {"a.py": (b"v = 1\n", 0o644)}
    assert list((root / ".sleuth").glob("undo/*")) == []


def test_two_matches_on_one_line_edit_that_line_once(bench: Bench) -> None:
    """``:all:line`` of two matches on one line selects that line once (overlapping ranges are
    merged when the reference resolves), so the edit cannot apply twice."""
    root, wb = bench({"a.py": "x = f(1) + f(2)\ny = 0\n"})
    data = search(wb, "f(")
    assert data["total"] == 2
    answer = wb.replace(data["all"]["line"], "x = g()").to_json()
    assert (root / "a.py").read_bytes() == b"x = g()\ny = 0\n"
    assert texts(answer) == [("a.py", "x = g()")]


def test_moving_text_into_itself_is_a_conflict(bench: Bench) -> None:
    root, wb = bench({"a.py": "def f():\n    body()\n    more()\n"})
    whole = search(wb, "regex:def f\\(\\):\\n    body\\(\\)")["matches"][0]["ref"]["match"]
    before = snapshot(root)
    with pytest.raises(Conflict):
        wb.move(whole, to=ref(wb, "body()"))
    assert snapshot(root) == before


def test_overlapping_splices_are_a_conflict(bench: Bench) -> None:
    """Moving a whole line (its line break goes with it) to a place that is that line break:
    the deletion and the insertion overlap -> ``conflict``, nothing written."""
    root, wb = bench({"a.py": "first\nsecond\n"})
    line = ref(wb, "first", unit="line")
    line_break = search(wb, "regex:\\n")["matches"][0]["ref"]["match"]
    before = snapshot(root)
    with pytest.raises(Conflict) as info:
        wb.move(line, to=line_break)
    assert "overlapping" in info.value.message
    assert snapshot(root) == before


def test_an_edit_that_changes_nothing_is_a_conflict(bench: Bench) -> None:
    root, wb = bench({"a.py": "v = 1\n"})
    with pytest.raises(Conflict):
        wb.replace(ref(wb, "v = 1"), "v = 1")
    assert list((root / ".sleuth").glob("undo/*")) == []


BROAD: Files = {"a.txt": "alpha beta\n", "b.txt": "gamma\n"}


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
def test_a_broadened_result_is_unsafe(bench: Bench, operation: str) -> None:
    root, wb = bench(BROAD)
    data = wb.search("alpha gamma").to_json()
    assert data["mode"] == "broadened" and data["total"] == 2
    before = snapshot(root)
    for reference in (
        data["matches"][0]["ref"]["match"],
        data["all"]["line"],
        str(wb.select(data["result"], [1, 2]).result),
    ):
        with pytest.raises(UnsafeSelection):
            OPERATIONS[operation](wb, reference)
    assert snapshot(root) == before


def test_all_of_an_incomplete_result_is_unsafe(bench: Bench) -> None:
    root, wb = bench(
        {
            ".sleuth.toml": "max_filesize = 200\n",
            "big.py": "needle = 1\n" + "# padding\n" * 40,
            "small.py": "needle = 2\n",
        }
    )
    data = wb.search("needle").to_json()
    assert data["complete"] is False and data["skipped"]["too_large"] == 1
    before = snapshot(root)
    for reference in (data["all"]["match"], data["all"]["line"]):
        with pytest.raises(UnsafeSelection):
            wb.replace(reference, "pin")
    assert snapshot(root) == before
    # a single match of it is still a safe, exact selection
    wb.replace(data["matches"][0]["ref"]["match"], "pin")
    assert (root / "small.py").read_bytes() == b"pin = 2\n"


def test_regression_text_that_cannot_be_utf8_is_invalid_query(bench: Bench) -> None:
    """Engine bug (reported): a lone surrogate in the text (possible from Python, and from MCP
    JSON such as ``"\\udcff"``) escapes as ``UnicodeEncodeError`` (an ``internal`` error)
    instead of ``invalid_query``."""
    root, wb = bench({"a.py": "v = 1\n"})
    with pytest.raises(InvalidQuery):
        wb.replace(ref(wb, "1"), "\udcff")
    assert (root / "a.py").read_bytes() == b"v = 1\n"


def test_regression_text_with_a_nul_is_invalid_query(bench: Bench) -> None:
    """Seen: ``replace REF "a\\x00b"`` was written; the file turned binary, dropped out of
    every search, and the edit's own RESULT# answered ``stale_reference``."""
    root, wb = bench({"a.py": "v = 1\n"})
    for call in (
        lambda: wb.replace(ref(wb, "1"), "a\x00b"),
        lambda: wb.insert(ref(wb, "1"), "\x00", where="after"),
    ):
        with pytest.raises(InvalidQuery, match="NUL"):
            call()
    assert (root / "a.py").read_bytes() == b"v = 1\n"


@pytest.mark.parametrize(
    ("text", "left"),
    [
        ("x\nfoo\nfoo", "x"),
        ("x\r\nfoo\r\nfoo", "x"),
        ("foo\nfoo", ""),
        ("foo\nfoo\nfoo", ""),
        ("x\nfoo\ny\nfoo", "x\ny"),
        ("x\nfoo\nfoo\n", "x\n"),
    ],
)
def test_regression_deleting_adjacent_last_lines_without_a_final_break(
    bench: Bench, text: str, left: str
) -> None:
    """Seen: ``delete SEARCH#H:all:line`` on ``x\\nfoo\\nfoo`` was refused as overlapping
    ranges: each line took a line break, and the last one took the break the line before it
    had taken already. A run of deleted lines reaching the end takes the break before it."""
    root, wb = bench({"a.py": text})
    wb.delete(wb.search("foo").result + ":all:line")
    assert (root / "a.py").read_bytes() == left.encode()


def test_regression_editing_through_a_symlinked_file_keeps_the_link(bench: Bench) -> None:
    """Engine bug (reported): the walker lists ``link.py -> real.py`` as a file; an edit
    through ``link.py`` renames a temporary file over the symlink, so the link becomes a
    regular file and ``real.py`` is not edited. Either write through to the target or refuse;
    the symlink must survive."""
    root, wb = bench({"real.py": "v = 1\n"})
    (root / "link.py").symlink_to("real.py")
    data = search(wb, "v = 1")
    link_ref = next(m["ref"]["match"] for m in data["matches"] if m["path"] == "link.py")
    with contextlib.suppress(SleuthError):  # refusing is a fix too
        wb.replace(link_ref, "v = 2")
    assert (root / "link.py").is_symlink()
