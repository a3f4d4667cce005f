"""The CLI parser and the MCP tool schemas are generated from the verbs' request types: a
field added to one request appears in both faces, with its help, type and default, and a
``Workbench`` method takes exactly its request's fields."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
from dataclasses import dataclass
from typing import Any

import pytest

from sleuth import mcp
from sleuth.api import Workbench
from sleuth.errors import SleuthError
from sleuth.fields import arg, request_fields
from sleuth.service import argv, verbs
from sleuth.service.requests import ReadRequest


@dataclass(frozen=True)
class _ReadWithBudget(ReadRequest):
    tab_width: int | None = arg(None, metavar="N", help="spaces per tab")


class _Engine:
    def __init__(self, root: str, no_ignore: bool) -> None:
        self.calls: list[dict[str, Any]] = []

    def close(self) -> None:
        pass


def _with_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    grown = dataclasses.replace(verbs.VERBS["read"], request=_ReadWithBudget)
    monkeypatch.setitem(verbs.VERBS, "read", grown)


def _tool_schema(name: str) -> dict[str, Any]:
    engine = mcp.EngineThread(_Engine, ".", False)
    try:
        listed = asyncio.run(mcp.build_server(engine).list_tools())
    finally:
        engine.close()
    (tool,) = [t for t in listed if t.name == name]
    schema: dict[str, Any] = tool.input_schema
    return schema


def test_a_field_added_to_a_request_appears_in_both_faces(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before_cli = argv.build_parser().format_help()
    assert "tab_width" not in str(_tool_schema("read"))
    _with_budget(monkeypatch)

    parsed = argv.parse_args(["read", "a.py", "--tab-width", "40"])
    assert parsed.request == _ReadWithBudget("a.py", tab_width=40)
    assert argv.parse_args(["read", "a.py"]).request.tab_width is None
    read_help = argv._verb_parser(argv.build_parser(), "read").format_help()
    assert "--tab-width N" in read_help and "spaces per tab" in read_help
    assert argv.build_parser().format_help() == before_cli  # the verb list is unchanged

    prop = _tool_schema("read")["properties"]["tab_width"]
    assert prop["description"] == "spaces per tab"
    assert "default" not in prop  # a null default is left out of the lean schema
    assert prop["type"] == ["integer", "null"]


def test_a_generated_tool_builds_the_same_request_as_the_cli(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[Any] = []
    _with_budget(monkeypatch)
    grown = verbs.VERBS["read"]

    def run(engine: Any, request: Any) -> dict[str, Any]:
        seen.append(request)
        return {"result_id": "RESULT#1", "ranges": []}

    monkeypatch.setitem(verbs.VERBS, "read", dataclasses.replace(grown, run=run))
    engine = mcp.EngineThread(_Engine, ".", False)
    try:
        server = mcp.build_server(engine)
        asyncio.run(
            server.call_tool("read", {"target": "a.py", "offset": 2, "tab_width": 40}, None)
        )
    finally:
        engine.close()
    assert seen == [argv.parse_args(["read", "a.py", "--offset", "2", "--tab-width", "40"]).request]


@pytest.mark.parametrize(
    "name", [name for name in verbs.VERBS if name not in ("index", "doctor", "provider")]
)
def test_workbench_methods_take_their_requests_fields(name: str) -> None:
    """``Workbench.<verb>`` has one parameter per request field, with the field's default."""
    method = getattr(Workbench, name)
    params = list(inspect.signature(method).parameters.values())[1:]
    fields = request_fields(verbs.VERBS[name].request_type())
    assert [p.name for p in params] == [f.name for f in fields]
    for param, field in zip(params, fields, strict=True):
        expected = inspect.Parameter.empty if field.required else field.default
        assert param.default == expected, name


@pytest.mark.parametrize("name", list(verbs.VERBS))
def test_every_request_refuses_unknown_arguments(name: str) -> None:
    with pytest.raises(SleuthError) as info:
        verbs.VERBS[name].request_type().build(no_such_argument=1)
    assert info.value.code == "invalid_query"
    assert "no_such_argument" in info.value.message
