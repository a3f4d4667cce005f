"""A result registry that arrives with the tree (a ``.sleuth/`` committed to a repository or
unpacked from an archive) or is damaged is trusted no further than its stamps and its types:
a stored range must fit the bytes its stamp names, a row of other types is no result, and a
file this sleuth cannot use is a clear error (docs/SAFETY.md#damaged-or-planted-state)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sleuth import Workbench
from sleuth.errors import Conflict, Internal, NotFound, SleuthError, StaleReference
from tests.conftest import MakeWorkspace

TEXT = "x = 'é'\nprint(x)\nend\n"


def _registry(root: Path) -> sqlite3.Connection:
    return sqlite3.connect(root / ".sleuth" / "registry.sqlite3", isolation_level=None)


def _searched(make_workspace: MakeWorkspace) -> tuple[Path, str]:
    """A workspace, and the id of a search with one match ("print", bytes 9-14)."""
    root = make_workspace({"a.py": TEXT})
    with Workbench(root) as wb:
        rid = wb.search("print").result
    return root, rid


def _forge(root: Path, rid: str, column: str, value: object) -> None:
    with _registry(root) as db:
        db.execute(f"UPDATE matches SET {column} = ? WHERE result_id = ?", (value, rid))


@pytest.mark.parametrize(
    ("start", "end", "lines"),
    [
        (10, 5000, False),  # past the end: the edit cut the file short
        (-5, 3, False),  # negative: the edit wrote the file's head twice
        (8, 2, False),  # reversed: likewise
        (6, 7, False),  # inside é
        (10, 12, True),  # "whole lines" in the middle of one: a delete took the line
    ],
)
def test_a_stored_range_that_does_not_fit_its_bytes_is_refused(
    make_workspace: MakeWorkspace, start: int, end: int, lines: bool
) -> None:
    root, rid = _searched(make_workspace)
    _forge(root, rid, "start_byte", start)
    _forge(root, rid, "end_byte", end)
    if lines:
        _forge(root, rid, "body", '{"lines": true}')
    with Workbench(root) as wb:
        for use in (
            lambda: wb.replace(f"{rid}:1:match", "ZZ"),
            lambda: wb.delete(f"{rid}:1:match"),
            lambda: wb.read(f"{rid}:all:match"),
            *([] if lines else [lambda: wb.read(f"{rid}:1:line")]),  # (lines widen anyway)
            lambda: wb.search("x", path=f"{rid}:1:match"),
        ):
            with pytest.raises(StaleReference, match="does not fit"):
                use()
    assert (root / "a.py").read_text() == TEXT


def test_a_forged_line_number_is_not_shown(make_workspace: MakeWorkspace) -> None:
    root, rid = _searched(make_workspace)
    _forge(root, rid, "line", -99)
    _forge(root, rid, "end_line", 10**12)
    with Workbench(root) as wb:
        (got,) = wb.read(f"{rid}:1:match").ranges
    assert (got["line"], got["end_line"], got["text"]) == (2, 2, "print")


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    start=st.integers(-30, 40),
    end=st.integers(-30, 40),
    lines=st.booleans(),
    unit=st.sampled_from(["match", "line"]),
    edit=st.sampled_from(["replace", "delete", "insert"]),
)
def test_an_edit_through_any_forged_range_writes_only_inside_the_file(
    make_workspace: MakeWorkspace, start: int, end: int, lines: bool, unit: str, edit: str
) -> None:
    """Whatever offsets a row with the right stamp holds, an edit through it is refused or
    replaces one in-file range of whole characters; the rest of the file is kept as it was."""
    root, rid = _searched(make_workspace)
    _forge(root, rid, "start_byte", start)
    _forge(root, rid, "end_byte", end)
    _forge(root, rid, "body", '{"lines": true}' if lines else "{}")
    data = TEXT.encode()
    ref = f"{rid}:1:{unit}"
    with Workbench(root) as wb:
        try:
            if edit == "replace":
                wb.replace(ref, "ZZ")
            elif edit == "delete":
                wb.delete(ref)
            else:
                wb.insert(ref, "ZZ")
        except SleuthError as exc:
            assert isinstance(exc, (StaleReference, Conflict))  # (conflict: changes nothing)
            assert (root / "a.py").read_bytes() == data
            return
    after = (root / "a.py").read_bytes()
    after.decode("utf-8")  # no character cut
    assert 0 <= start <= end <= len(data)
    if edit == "replace" and unit == "match":
        assert after == data[:start] + b"ZZ" + data[end:]


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("body", "not json"),
        ("body", "[1, 2]"),
        ("start_byte", "x"),
        ("start_byte", 1.5),
        ("end_line", "x"),
    ],
)
def test_a_match_row_of_other_types_is_no_result(
    make_workspace: MakeWorkspace, column: str, value: object
) -> None:
    root, rid = _searched(make_workspace)
    _forge(root, rid, column, value)
    with Workbench(root) as wb:
        with pytest.raises(NotFound):
            wb.read(f"{rid}:1:match")
        with pytest.raises(NotFound):  # forgotten: an unknown reference from now on
            wb.replace(f"{rid}:all:match", "ZZ")
        again = wb.search("print")  # stored anew, the right answer
        assert [m["text"] for m in again.to_json()["matches"]] == ["print(x)"]
    assert (root / "a.py").read_text() == TEXT


@pytest.mark.parametrize("column", ["request", "skipped", "extra"])
def test_a_result_row_of_other_types_is_no_result(
    make_workspace: MakeWorkspace, column: str
) -> None:
    root, rid = _searched(make_workspace)
    with _registry(root) as db:
        db.execute(f"UPDATE results SET {column} = '{{' WHERE id = ?", (rid,))
    with Workbench(root) as wb:
        with pytest.raises(NotFound):
            wb.read(f"{rid}:1:match")
        assert wb.search("print").to_json()["total"] == 1


def test_a_forged_capture_span_is_no_capture(make_workspace: MakeWorkspace) -> None:
    root, rid = _searched(make_workspace)
    _forge(root, rid, "body", '{"capture_spans": {"A": [1]}}')
    ref = rid.replace("SEARCH#", "RESULT#")
    with Workbench(root) as wb:
        for text in (f"{ref}:1:A", f"{ref}:all:A"):
            with pytest.raises(NotFound):
                wb.read(text)


@pytest.mark.parametrize(
    "damage",
    [
        "UPDATE meta SET value = 'abc' WHERE key = 'schema'",
        "UPDATE meta SET value = 'zz' WHERE key = 'secret'",
        "DELETE FROM meta WHERE key = 'secret'",
        "DROP TABLE results; CREATE TABLE results (id TEXT)",
    ],
)
def test_a_registry_of_another_shape_is_a_clear_error(
    make_workspace: MakeWorkspace, damage: str
) -> None:
    root, _ = _searched(make_workspace)
    with _registry(root) as db:
        db.executescript(damage)
    with Workbench(root) as wb:
        for use in (lambda: wb.search("print"), lambda: wb.read("a.py")):
            with pytest.raises(Internal, match="delete the .sleuth/ folder"):
                use()
