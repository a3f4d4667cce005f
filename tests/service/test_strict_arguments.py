"""Strict arguments in the Python API (docs/faces.md#strict-arguments): an unknown or missing
argument is ``invalid_query`` naming the valid ones, never a ``TypeError``; aliases work."""

from __future__ import annotations

from pathlib import Path

import pytest

from sleuth.api import Workbench
from sleuth.errors import InvalidQuery
from sleuth.fields import Request
from sleuth.query.request import SearchRequest
from sleuth.service.edit_requests import InsertRequest
from sleuth.service.requests import RenameRequest


@pytest.fixture
def wb(tmp_path: Path) -> Workbench:
    (tmp_path / "a.py").write_text("x = 1\ny = 2\n")
    bench = Workbench(tmp_path, build_index=False, servers=False)
    yield bench
    bench.close()


def test_unknown_keyword_is_invalid_query_with_the_closest_name(wb: Workbench) -> None:
    with pytest.raises(InvalidQuery) as caught:
        wb.search("x", paht="a.py")  # type: ignore[call-arg]
    message = str(caught.value)
    assert "'paht' (did you mean 'path'?)" in message
    assert "its arguments are query, path, include" in message
    assert caught.value.details["unknown"] == ["paht"]


def test_missing_argument_is_invalid_query(wb: Workbench) -> None:
    with pytest.raises(InvalidQuery) as caught:
        wb.replace("SEARCH#00ff:1:match")  # type: ignore[call-arg]
    assert "'text'" in str(caught.value) and "ref, text" in str(caught.value)


def test_aliases_name_fields(wb: Workbench) -> None:
    by_alias = wb.search(pattern="x = 1")  # type: ignore[call-arg]
    assert by_alias.total == 1 and by_alias.query == "x = 1"
    ref = by_alias.matches[0]["ref"]["line"]
    wb.insert(ref, "z = 3", position="after")  # type: ignore[call-arg]
    assert (Path(wb.root) / "a.py").read_text() == "x = 1\nz = 3\ny = 2\n"


@pytest.mark.parametrize(
    ("request_type", "alias", "field"),
    [
        (SearchRequest, "pattern", "query"),
        (SearchRequest, "caseSensitive", "case_sensitive"),
        (InsertRequest, "position", "where"),
        (RenameRequest, "newName", "new_name"),
    ],
)
def test_canonical_renames_aliases(request_type: type[Request], alias: str, field: str) -> None:
    assert request_type.canonical({alias: "v"}) == {field: "v"}


def test_canonical_refuses_an_alias_beside_its_field() -> None:
    with pytest.raises(InvalidQuery, match="twice"):
        SearchRequest.canonical({"pattern": "a", "query": "b"})


def test_canonical_limits_to_the_face_names() -> None:
    with pytest.raises(InvalidQuery) as caught:
        SearchRequest.canonical({"cursor": "c"}, ("query", "path"))
    assert caught.value.details["valid"] == ["query", "path"]
