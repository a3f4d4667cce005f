"""Normalising raw LSP JSON: locations, symbols and every WorkspaceEdit shape (``results.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from sleuth.errors import Unsupported
from sleuth.lsp_bridge.positions import LineIndex
from sleuth.lsp_bridge.results import (
    LspEdit,
    LspLocation,
    edits_of,
    flatten_symbols,
    iter_locations,
    normal_kind,
)
from sleuth.model import symbol_id
from sleuth.workspace.text import FileText

FILES = {
    "a.py": "x = 1  # 😀\nvalue = x\n".encode(),
    "b.py": b"def f():\n    return 2\n",
}


def rel_of(uri: str) -> str | None:
    name = uri.removeprefix("file:///ws/")
    return name if name in FILES else None


def index_of(rel: str) -> LineIndex | None:
    return LineIndex(FILES[rel]) if rel in FILES else None


def rng(l1: int, c1: int, l2: int, c2: int) -> dict[str, Any]:
    return {"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}}


def test_locations_and_links_outside_dropped_sorted_unique() -> None:
    result = [
        {"uri": "file:///ws/b.py", "range": rng(0, 4, 0, 5)},
        {"targetUri": "file:///ws/a.py", "targetRange": rng(0, 0, 1, 0),
         "targetSelectionRange": rng(0, 0, 0, 1)},
        {"uri": "file:///elsewhere/c.py", "range": rng(0, 0, 0, 1)},
        {"uri": "file:///ws/b.py", "range": rng(0, 4, 0, 5)},
    ]  # fmt: skip
    assert iter_locations(result, rel_of, index_of, "utf-16") == [
        LspLocation("a.py", 0, 1),
        LspLocation("b.py", 4, 5),
    ]
    assert iter_locations(None, rel_of, index_of, "utf-16") == []
    single = {"uri": "file:///ws/a.py", "range": rng(1, 0, 1, 5)}
    assert iter_locations(single, rel_of, index_of, "utf-8") == [LspLocation("a.py", 14, 19)]


def test_flatten_document_symbols_and_symbol_information() -> None:
    tree = [
        {"name": "f", "kind": 12, "range": rng(0, 0, 1, 12), "selectionRange": rng(0, 4, 0, 5),
         "children": [{"name": "inner", "kind": 13, "range": rng(1, 4, 1, 12),
                       "selectionRange": rng(1, 4, 1, 10)}]},
    ]  # fmt: skip
    syms = flatten_symbols(tree, "b.py", LineIndex(FILES["b.py"]), "utf-16")
    assert [(s.name, s.kind, s.container) for s in syms] == [
        ("f", "function", ""),
        ("inner", "variable", "f"),
    ]
    assert (syms[0].start_byte, syms[0].name_start, syms[0].name_end) == (0, 4, 5)
    flat = [{"name": "f", "kind": 12, "containerName": "mod",
             "location": {"uri": "file:///ws/b.py", "range": rng(0, 0, 1, 12)}}]  # fmt: skip
    (sym,) = flatten_symbols(flat, "b.py", LineIndex(FILES["b.py"]), "utf-16")
    assert (sym.container, sym.start_byte, sym.name_start, sym.name_end) == ("mod", 0, 4, 5)


def test_symbols_are_declarations_in_the_tags_vocabulary_with_ids_and_lines() -> None:
    tree = [
        {"name": "C", "kind": 23, "range": rng(0, 0, 1, 12), "selectionRange": rng(0, 4, 0, 5),
         "children": [{"name": "f", "kind": 12, "range": rng(1, 4, 1, 12),
                       "selectionRange": rng(1, 4, 1, 5)}]},
    ]  # fmt: skip
    struct, method = flatten_symbols(tree, "b.py", LineIndex(FILES["b.py"]), "utf-16")
    assert (struct.kind, method.kind, method.qualified) == ("class", "method", "C.f")
    assert method.id == symbol_id("b.py", "C.f", "method")
    assert (struct.line, struct.end_line, method.line, method.end_line) == (1, 2, 2, 2)
    assert normal_kind("enum_member", "") == "constant" and normal_kind("symbol", "") == "symbol"


def test_symbol_lines_are_spec_lines_where_lsp_lines_differ() -> None:
    # a lone "\r" ends an LSP line but not a docs/faces.md#positions one (nor ``FileText``'s)
    data = b"# a\rdef g():\n    pass\n"
    tree = [{"name": "g", "kind": 12, "range": rng(1, 0, 2, 8), "selectionRange": rng(1, 4, 1, 5)}]
    (g,) = flatten_symbols(tree, "c.py", LineIndex(data), "utf-16")
    text = FileText("c.py", data, "")
    assert data[g.name_start : g.name_end] == b"g"
    assert (g.line, g.end_line) == (text.line_of(g.start_byte), text.line_of(g.end_byte - 1))
    assert (g.line, g.end_line) == (1, 2)


def test_changes_map_with_identifier_ranges() -> None:
    edit = {"changes": {"file:///ws/a.py": [{"range": rng(1, 8, 1, 9), "newText": "y"},
                                            {"range": rng(0, 0, 0, 1), "newText": "y"}]}}  # fmt: skip
    assert edits_of(edit, rel_of, index_of, "utf-16") == [
        LspEdit("a.py", 0, 1, "y"),
        LspEdit("a.py", 22, 23, "y"),
    ]


def test_document_changes_with_diff_hunks_annotations_and_snippets() -> None:
    edit = {"documentChanges": [
        {"textDocument": {"uri": "file:///ws/b.py", "version": 1},
         "edits": [{"range": rng(0, 4, 0, 5), "newText": "g", "annotationId": "x"},
                   {"range": rng(1, 11, 1, 12), "snippet": {"kind": "snippet", "value": "3"}}]},
    ], "changes": {"file:///ws/a.py": [{"range": rng(0, 0, 0, 1), "newText": "ignored"}]}}  # fmt: skip
    assert edits_of(edit, rel_of, index_of, "utf-16") == [
        LspEdit("b.py", 4, 5, "g"),
        LspEdit("b.py", 20, 21, "3"),
    ]


def test_inserts_at_one_position_keep_the_array_order_and_all_apply() -> None:
    # LSP: the order in the array defines the order the inserted strings appear in; two equal
    # inserts are two insertions (a set collapsed them, a sort by text reordered them)
    edit = {"changes": {"file:///ws/a.py": [{"range": rng(0, 0, 0, 0), "newText": "z"},
                                            {"range": rng(0, 0, 0, 0), "newText": "a"},
                                            {"range": rng(0, 0, 0, 0), "newText": "a"}]}}  # fmt: skip
    assert edits_of(edit, rel_of, index_of, "utf-16") == [
        LspEdit("a.py", 0, 0, "z"),
        LspEdit("a.py", 0, 0, "a"),
        LspEdit("a.py", 0, 0, "a"),
    ]


def test_the_same_replacement_twice_is_one() -> None:
    once = {"range": rng(0, 0, 0, 1), "newText": "y"}
    edit = {"changes": {"file:///ws/a.py": [once, dict(once)]}}
    assert edits_of(edit, rel_of, index_of, "utf-16") == [LspEdit("a.py", 0, 1, "y")]


def test_a_document_changed_in_two_steps_is_refused() -> None:
    # the second step's positions are of the bytes the first left, not of the file sleuth holds
    step = {"textDocument": {"uri": "file:///ws/a.py", "version": 1},
            "edits": [{"range": rng(0, 0, 0, 1), "newText": "yy"}]}  # fmt: skip
    with pytest.raises(Unsupported, match="two steps"):
        edits_of({"documentChanges": [step, step]}, rel_of, index_of, "utf-16")


def test_whole_file_replacement_is_clamped_to_the_current_bytes() -> None:
    edit = {"changes": {"file:///ws/b.py": [{"range": rng(0, 0, 99, 0), "newText": "new\n"}]}}
    assert edits_of(edit, rel_of, index_of, "utf-16") == [
        LspEdit("b.py", 0, len(FILES["b.py"]), "new\n")
    ]


def test_utf16_columns_after_astral_characters() -> None:
    # "x = 1  # 😀" then "\n": the emoji is 2 UTF-16 units, 4 bytes.
    edit = {"changes": {"file:///ws/a.py": [{"range": rng(0, 9, 0, 11), "newText": "!"}]}}
    (e,) = edits_of(edit, rel_of, index_of, "utf-16")
    assert FILES["a.py"][e.start_byte : e.end_byte] == "😀".encode()


@pytest.mark.parametrize("kind", ["create", "rename", "delete"])
def test_file_operations_are_unsupported(kind: str) -> None:
    edit = {"documentChanges": [{"kind": kind, "uri": "file:///ws/a.py"}]}
    with pytest.raises(Unsupported, match="by hand"):
        edits_of(edit, rel_of, index_of, "utf-16")


def test_edits_outside_the_workspace_are_unsupported() -> None:
    edit = {"changes": {"file:///usr/lib/x.py": [{"range": rng(0, 0, 0, 1), "newText": "y"}]}}
    with pytest.raises(Unsupported, match="outside the workspace"):
        edits_of(edit, rel_of, index_of, "utf-16")
