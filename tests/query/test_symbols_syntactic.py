"""symbols: / symbol:# without a language server: tags-based, marked syntactic
(docs/query.md#symbols-and-symbolid-declarations)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sleuth.api import Workbench
from sleuth.errors import InvalidQuery, NotFound
from tests.conftest import MakeWorkspace

PKG = {
    "pkg/a.py": (
        "class Store:\n"
        "    def get_user(self, uid):\n"
        "        return uid\n"
        "\n"
        "def get_user(uid):\n"
        "    return Store().get_user(uid)\n"
    ),
    "pkg/b.py": "from pkg.a import get_user\n\nprint(get_user(1))\n",
    "pkg/c.py": "def unrelated():\n    GetUsers = 1\n    return GetUsers\n",
    "web/app.ts": "export function getUser(id: number) { return id; }\nconst u = getUser(2);\n",
}


@pytest.fixture
def wb(make_workspace: MakeWorkspace) -> Workbench:
    return Workbench(make_workspace(PKG), servers=False, build_index=False)


def _syms(res: dict[str, Any]) -> list[tuple[str, int, str, str | None]]:
    return [
        (m["path"], m["line"], m["symbol"]["kind"], m["symbol"].get("container"))
        for m in res["matches"]
    ]


def test_exact_declarations(wb: Workbench) -> None:
    res = wb.search("symbols:get_user").to_json()
    assert res["mode"] == "symbols" and res["fallback"] is None
    assert _syms(res) == [("pkg/a.py", 2, "method", "Store"), ("pkg/a.py", 5, "function", None)]
    m = res["matches"][0]
    assert m["text"].strip() == "def get_user(self, uid):"
    assert (m["start_byte"], m["end_byte"]) == (
        len("class Store:\n    def "),
        len("class Store:\n    def get_user"),
    )
    assert m["symbol"]["precision"] == "syntactic"
    assert m["symbol"]["range"]["end_line"] == 3
    assert len(m["symbol"]["id"]) == 12


def test_tiers_case_then_fuzzy(wb: Workbench) -> None:
    res = wb.search("symbols:GET_USER").to_json()
    assert res["fallback"] == "case-insensitive" and res["total"] == 2
    res = wb.search("symbols:gtusr").to_json()
    assert res["fallback"] == "fuzzy"
    assert {m["symbol"]["name"] for m in res["matches"]} >= {"get_user", "getUser"}


def test_scope_limits_declarations(wb: Workbench) -> None:
    assert wb.search("symbols:getUser", path="web").to_json()["total"] == 1
    assert wb.search("symbols:get_user", path="web").to_json()["total"] == 0


def test_symbol_body_is_a_reference(wb: Workbench) -> None:
    sid = wb.search("symbols:get_user").to_json()["matches"][1]["symbol"]["id"]
    res = wb.search(f"symbol:#{sid}").to_json()
    assert res["mode"] == "symbol" and res["total"] == 1
    body = wb.read(f"{res['result']}:1:match").to_json()["ranges"][0]["text"]
    assert body == "def get_user(uid):\n    return Store().get_user(uid)"
    # found again from a fresh process too (the registry remembers where the id lives)
    with Workbench(wb.root, servers=False, build_index=False) as again:
        assert again.search(f"symbol:#{sid}").to_json()["total"] == 1


def test_unknown_symbol_id(wb: Workbench) -> None:
    with pytest.raises(NotFound):
        wb.search("symbol:#0123456789ab")
    with pytest.raises(InvalidQuery):
        wb.search("symbol:#not-an-id!")


def test_references_are_syntactic_and_never_guess(wb: Workbench) -> None:
    res = wb.search("symbols:get_user", navigation="references").to_json()
    refs = [m for m in res["matches"] if m["symbol"]["kind"] == "reference"]
    assert {(m["path"], m["line"]) for m in refs} == {
        ("pkg/a.py", 6),
        ("pkg/b.py", 1),
        ("pkg/b.py", 3),
    }
    for m in refs:
        assert m["symbol"]["precision"] == "syntactic"
        # two declarations share the name: a syntactic answer lists both, it never picks one
        assert m["symbol"]["reference_of"] is None and len(m["symbol"]["candidates"]) == 2
    # the unrelated local GetUsers is not a reference of get_user
    assert all(m["path"] != "pkg/c.py" for m in res["matches"])


def test_one_declaration_resolves_references(wb: Workbench) -> None:
    res = wb.search("symbols:getUser", navigation="references").to_json()
    decl = res["matches"][0]["symbol"]["id"]
    refs = [m for m in res["matches"] if m["symbol"]["kind"] == "reference"]
    assert [(m["line"], m["symbol"]["reference_of"]) for m in refs] == [(2, decl)]


def test_declarations_inside_a_reference_scope(wb: Workbench) -> None:
    window = wb.read("pkg/a.py", offset=1, limit=3).to_json()["result"]
    res = wb.search("symbols:get_user", path=window).to_json()
    assert _syms(res) == [("pkg/a.py", 2, "method", "Store")]


def test_language_without_tags_is_incomplete(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"a.kt": "fun getUser() = 1\n", "b.py": "def getUser(): pass\n"})
    with Workbench(root, servers=False, build_index=False) as wb:
        res = wb.search("symbols:getUser", lang="kotlin").to_json()
        assert res["total"] == 0 and res["complete"] is False
        assert "kotlin" in res["incomplete_reason"]
        both = wb.search("symbols:getUser").to_json()
        assert both["total"] == 1 and both["complete"] is False


def test_rename_of_nothing_and_bad_names(wb: Workbench) -> None:
    with pytest.raises(InvalidQuery):
        wb.search("symbols:get user")
    assert isinstance(Path(wb.root), Path)
