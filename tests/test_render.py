"""Unit tests of ``sleuth.render``: pure functions over the JSON dicts of docs/json.md and
docs/errors.md."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from sleuth import render
from sleuth.render import common as render_common

RID = "SEARCH#7f3a9c21"


def _match(
    n: int,
    path: str,
    line: int,
    column: int,
    text: str,
    length: int = 8,
    before: tuple[str, ...] = (),
    after: tuple[str, ...] = (),
    end_line: int | None = None,
) -> dict[str, Any]:
    return {
        "n": n,
        "path": path,
        "line": line,
        "column": column,
        "end_line": line if end_line is None else end_line,
        "end_column": column + length,
        "start_byte": 0,
        "end_byte": length,
        "text": text,
        "context": {"before": list(before), "after": list(after)},
        "ref": {"line": f"{RID}:{n}:line", "match": f"{RID}:{n}:match"},
        "captures": None,
        "score": None,
    }


def sample(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "query": "get_user",
        "mode": "literal",
        "fallback": None,
        "result": RID,
        "complete": True,
        "incomplete_reason": None,
        "total": 3,
        "matches": [
            _match(
                1,
                "src/app.py",
                12,
                12,
                "    user = get_user(uid)",
                before=("def handler(uid):",),
                after=("    return get_user(1)",),
            ),
            _match(
                2,
                "src/app.py",
                13,
                12,
                "    return get_user(1)",
                before=("    user = get_user(uid)",),
                after=("",),
            ),
            _match(3, "src/b.py", 40, 1, "get_user()"),
        ],
        "all": {"line": f"{RID}:all:line", "match": f"{RID}:all:match"},
        "next_cursor": None,
        "skipped": {"binary": 0, "too_large": 0, "undecodable": 0},
        "possible_names": None,
    }
    data.update(changes)
    return data


def empty(**changes: Any) -> dict[str, Any]:
    return sample(matches=[], total=0, **changes)


def human(data: dict[str, Any]) -> str:
    return render.search_human(data).plain


# --- phrases ---------------------------------------------------------------------------------


def test_count_phrase_exact_and_lower_bound() -> None:
    assert render.count_phrase(sample()) == "3 matches"
    assert render.count_phrase(sample(total=1)) == "1 match"
    assert render.count_phrase(sample(total=None, total_at_least=100)) == "at least 100 matches"


def test_status_phrase_names_the_reason() -> None:
    assert render.status_phrase(sample()) == "complete"
    assert render.status_phrase(sample(complete=False, incomplete_reason="timeout")) == (
        "incomplete (timeout)"
    )


def test_suggestion_phrase_lists_groups_with_counts() -> None:
    groups = [
        {"name": "get_user", "count": 3, "complete": True, "result": "SEARCH#aa"},
        {"name": "GetUsers", "count": 1, "complete": False},
    ]
    data = empty(possible_names=groups)
    assert render.suggestion_phrase(data) == "did you mean: get_user (3), GetUsers (1+)"
    with_refs = render.suggestion_phrase(data, with_refs=True)
    assert with_refs == "did you mean: get_user (3, SEARCH#aa), GetUsers (1+)"
    assert render.suggestion_phrase(empty()) is None


# --- human -----------------------------------------------------------------------------------


def test_human_header_carries_id_mode_count_and_completeness() -> None:
    first = human(sample()).splitlines()[0]
    assert first == f"{RID}  literal  3 matches  complete"
    fallback = human(sample(mode="regex", fallback="regex", total=None, total_at_least=100))
    assert (
        fallback.splitlines()[0] == f"{RID}  regex  fallback=regex  at least 100 matches  complete"
    )


def test_human_groups_by_file_with_refs_and_positions() -> None:
    lines = human(sample()).splitlines()
    assert "src/app.py" in lines and "src/b.py" in lines
    assert lines.index("src/app.py") < lines.index("src/b.py")
    assert "#1  12:12:     user = get_user(uid)" in lines
    assert "#2  13:12:     return get_user(1)" in lines
    assert "#3  40:1: get_user()" in lines


def test_human_context_lines_are_numbered_deduplicated_and_dimmed() -> None:
    text = render.search_human(sample())
    lines = text.plain.splitlines()
    assert "    11- def handler(uid):" in lines
    assert "    14-" in lines
    # Line 13 is a match line, so match 1's after-context must not repeat it as context.
    assert not any(line.strip().startswith("13-") for line in lines)
    start = text.plain.index("11- def handler")
    assert any(
        span.style == render_common.STYLE_CONTEXT and span.start <= start < span.end
        for span in text.spans
    )


def test_human_gap_between_distant_matches_is_marked() -> None:
    data = sample(
        matches=[_match(1, "a.py", 1, 1, "x = 1"), _match(2, "a.py", 30, 1, "x = 2")], total=2
    )
    lines = human(data).splitlines()
    assert lines[lines.index("#1  1:1: x = 1") + 1] == "--"


def test_human_highlights_exactly_the_match() -> None:
    text = render.search_human(sample())
    start = text.plain.index("get_user(uid)")
    styled = [s for s in text.spans if s.style == render_common.STYLE_MATCH]
    assert any(s.start == start and s.end == start + len("get_user") for s in styled)


def test_human_multiline_match_keeps_every_line() -> None:
    data = sample(matches=[_match(1, "a.py", 3, 5, "def f(\n    x)", end_line=4)], total=1)
    lines = human(data).splitlines()
    i = lines.index("#1  3:5: def f(")
    assert lines[i + 1].strip() == "x)"


def test_human_footer_shows_refs_all_once_cursor_and_skips() -> None:
    data = sample(next_cursor="CUR123", skipped={"binary": 2, "too_large": 1, "undecodable": 0})
    out = human(data)
    assert f"refs: {RID}:<n>:match  {RID}:<n>:line" in out
    assert out.count(f"{RID}:all:match") == 1 and out.count(f"{RID}:all:line") == 1
    assert "more: --cursor CUR123" in out
    assert "skipped files: 2 binary, 1 too large" in out
    assert "undecodable" not in out
    assert "showing #1-#3" in out.splitlines()[0]


def test_human_no_skip_line_when_nothing_was_skipped() -> None:
    assert "skipped" not in human(sample())


def test_human_empty_result_with_suggestions() -> None:
    groups = [
        {"name": "get_user", "count": 3, "complete": True},
        {"name": "GetUsers", "count": 1, "complete": True},
    ]
    out = human(empty(query="getUser", possible_names=groups))
    assert "no matches; did you mean: get_user (3), GetUsers (1)" in out
    assert "not proof of absence" not in out
    assert "refs:" not in out


def test_human_empty_incomplete_result_says_it_is_not_proof() -> None:
    out = human(empty(complete=False, incomplete_reason="time budget"))
    assert "incomplete (time budget)" in out.splitlines()[0]
    assert "no matches" in out
    assert "not proof of absence" in out


def test_human_files_mode_lists_paths_with_scores() -> None:
    m = _match(1, "src/app.py", 0, 0, "src/app.py")
    m.update(line=None, column=None, end_line=None, end_column=None, score=0.93)
    out = human(sample(mode="files", matches=[m], total=1))
    assert "#1  src/app.py  score 0.93" in out.splitlines()


def test_human_does_not_mutate_its_input() -> None:
    data = sample(next_cursor="X")
    before = copy.deepcopy(data)
    render.search_human(data)
    render.search_compact(data)
    assert data == before


# --- compact (MCP text) ----------------------------------------------------------------------


def _no_context(data: dict[str, Any]) -> dict[str, Any]:
    for match in data["matches"]:
        match["context"] = {"before": [], "after": []}
    return data


def test_compact_one_line_per_match_with_derivable_refs() -> None:
    lines = render.search_compact(_no_context(sample())).splitlines()
    assert lines[0] == f"{RID}  literal  3 matches  complete"
    assert lines[1:] == [
        "src/app.py:12:12 #1  user = get_user(uid)",
        "src/app.py:13:12 #2  return get_user(1)",
        "src/b.py:40:1 #3  get_user()",
    ]
    for line, match in zip(lines[1:], sample()["matches"], strict=True):
        n = re.search(r" #(\d+)  ", line)
        assert n is not None
        assert f"{lines[0].split()[0]}:{n.group(1)}:match" == match["ref"]["match"]


def test_compact_context_lines_are_numbered_and_shown_once() -> None:
    lines = render.search_compact(sample()).splitlines()
    assert lines[1:6] == [
        "  11- def handler(uid):",
        "src/app.py:12:12 #1  user = get_user(uid)",
        "src/app.py:13:12 #2  return get_user(1)",
        "  14-",
        "src/b.py:40:1 #3  get_user()",
    ]


def test_compact_never_says_complete_for_a_page_with_more() -> None:
    header = render.search_compact(sample(next_cursor="CUR")).splitlines()[0]
    assert "complete" not in header.split("  ") and header.endswith("more")
    cut = render.search_compact(sample(next_cursor="CUR", cut="max_bytes"))
    assert "page cut to fit max_bytes" in cut


def test_compact_hints_cursor_suggestions_and_absence() -> None:
    out = render.search_compact(sample(next_cursor="CUR"))
    assert out.splitlines()[-1] == "next_cursor: CUR"
    groups = [{"name": "get_user", "count": 2, "complete": True, "result": "SEARCH#bb"}]
    out = render.search_compact(
        empty(possible_names=groups, complete=False, incomplete_reason="timeout")
    )
    assert "no matches; did you mean: get_user (2, SEARCH#bb)" in out
    assert "not proof of absence" in out


def test_compact_multiline_match_shows_its_first_line_and_its_end() -> None:
    data = sample(matches=[_match(1, "a.py", 3, 5, "def f(\n    x)", end_line=4)], total=1)
    lines = render.search_compact(_no_context(data)).splitlines()
    assert lines[1] == "a.py:3:5 #1  def f(  … (to line 4)"


def test_compact_captures_carry_their_value_and_reference() -> None:
    match = _match(1, "a.py", 3, 1, "f(a, b)")
    match["captures"] = {
        "F": {"text": "f", "ref": "RESULT#aa:1:F", "nodes": 1},
        "ARGS": {"text": "a, b", "ref": "RESULT#aa:1:ARGS", "nodes": 2},
        "LONG": {"text": "x" * 200, "ref": "RESULT#aa:1:LONG", "nodes": 1},
    }
    lines = render.search_compact(_no_context(sample(matches=[match], total=1))).splitlines()
    assert lines[2] == '  $F = "f"  -> RESULT#aa:1:F'
    assert lines[3] == '  $ARGS (2 nodes) = "a, b"  -> RESULT#aa:1:ARGS'
    assert lines[4].endswith('…"  -> RESULT#aa:1:LONG') and len(lines[4]) < 120


def _node(name: str, container: str = "", kind: str = "function") -> dict[str, Any]:
    return {"id": name[:4], "name": name, "kind": kind, "container": container}


def test_compact_graph_uses_show_direction_edge_and_other_end() -> None:
    used = _match(1, "zoo/run.py", 8, 5, "    dog.speak()")
    used["graph"] = {
        "edge": "calls",
        "direction": "in",
        "precision": "syntactic",
        "node": _node("speak", "Dog", "method"),
    }
    uses = _match(2, "zoo/run.py", 9, 5, "    print(x)")
    uses["graph"] = {"edge": "calls", "direction": "out", "precision": "semantic", "node": {}}
    uses["graph"]["node"] = _node("print")
    data = _no_context(sample(query="graph:#abcd", mode="graph", matches=[used, uses], total=2))
    lines = render.search_compact(data).splitlines()
    assert lines[1] == "zoo/run.py:8:5 #1  <- calls Dog.speak  dog.speak()"
    assert lines[2] == "zoo/run.py:9:5 #2  -> calls print  [semantic]  print(x)"


def test_compact_graph_path_lists_edges_and_ranked_map_ranks() -> None:
    decl = _match(1, "a.py", 1, 1, "def f():")
    neighbors = [{"node": _node(f"g{i}")} for i in range(6)]
    decl["graph"] = {
        **_node("f"),
        "signature": "def f():",
        "incoming": {"calls": {"count": 6, "uses": 7, "neighbors": neighbors}},
        "outgoing": {"references": {"count": 1, "uses": 1, "neighbors": [{"node": _node("X")}]}},
    }
    data = _no_context(sample(query="graph:a.py", mode="graph", matches=[decl], total=1))
    lines = render.search_compact(data).splitlines()
    assert lines[1] == "a.py:1:1 #1  function f  id=f  def f():"
    assert lines[2] == "    <- calls: g0, g1, g2, g3 (+2 more)"
    assert lines[3] == "    -> references: X"
    ranked = dict(decl, score=0.25, graph={**_node("f"), "signature": "def f():"})
    data = _no_context(sample(query="graph:", mode="graph", matches=[ranked], total=1))
    assert render.search_compact(data).splitlines()[1] == (
        "a.py:1:1 #1  rank 1 (0.2500)  function f  id=f  def f():"
    )


def test_compact_fit_counts_whole_matches_within_the_budget() -> None:
    data = _no_context(sample())
    whole = len(render.search_compact(data).encode())
    from sleuth.render.page_fit import compact_fit

    assert compact_fit(data, whole + 200) == 3
    assert compact_fit(data, 10) == 1  # a page always moves on
    two = compact_fit(data, whole + 121 - len(b"src/b.py:40:1 #3  get_user()\n"))
    assert two == 2


# --- errors ----------------------------------------------------------------------------------


def test_error_line_from_error_object() -> None:
    obj = {
        "error": {
            "code": "invalid_path",
            "message": "outside the root",
            "retry_after": None,
            "details": {},
        }
    }
    assert render.error_line(obj) == "error[invalid_path]: outside the root"
    obj["error"].update(code="rate_limited", retry_after=2.5)
    assert render.error_line(obj) == "error[rate_limited]: outside the root (retry after 2.5s)"


# --- read / select ---------------------------------------------------------------------------


def _range(path: str, line: int, text: str, end_line: int | None = None) -> dict[str, Any]:
    return {
        "path": path,
        "line": line,
        "end_line": line if end_line is None else end_line,
        "start_byte": 0,
        "end_byte": len(text.encode()),
        "text": text,
    }


def read_sample(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "result": "RESULT#0badcafe",
        "source": f"{RID}:all:line",
        "refreshed": False,
        "complete": True,
        "ranges": [
            _range("src/app.py", 9, "def handler(uid):\n    user = get_user(uid)", 10),
            _range("src/app.py", 11, "    return user"),
            _range("src/app.py", 120, "get_user(7)"),
            _range("src/b.py", 3, "x = get_user(1)"),
        ],
    }
    data.update(changes)
    return data


def test_read_human_numbers_lines_and_marks_gaps_only_between_distant_ranges() -> None:
    assert render.read_human(read_sample()).plain.splitlines() == [
        f"RESULT#0badcafe from {RID}:all:line  4 ranges  complete",
        "",
        "src/app.py",
        "   9 | def handler(uid):",
        "  10 |     user = get_user(uid)",
        "  11 |     return user",
        "   … |",
        " 120 | get_user(7)",
        "",
        "src/b.py",
        "   3 | x = get_user(1)",
    ]


def test_read_human_wide_line_numbers_stay_aligned() -> None:
    data = read_sample(ranges=[_range("a.py", 99998, "a\nb\nc", 100000)])
    lines = render.read_human(data).plain.splitlines()
    assert lines[-3:] == [" 99998 | a", " 99999 | b", "100000 | c"]


def test_read_human_trailing_eol_crlf_and_empty_lines() -> None:
    data = read_sample(ranges=[_range("a.py", 1, "one\r\n\r\nthree\n", 3)])
    assert render.read_human(data).plain.splitlines()[-3:] == [
        "   1 | one",
        "   2 |",
        "   3 | three",
    ]


def test_read_human_notes_refreshed_and_incomplete() -> None:
    data = read_sample(
        refreshed=True, complete=False, incomplete_reason="only the first 2000 lines were read"
    )
    lines = render.read_human(data).plain.splitlines()
    assert lines[0] == f"RESULT#0badcafe from {RID}:all:line  4 ranges  incomplete  refreshed"
    assert lines[1].startswith("refreshed: ")
    assert lines[2] == "incomplete: only the first 2000 lines were read"


def test_read_human_styles() -> None:
    text = render.read_human(read_sample())
    styles = {text.plain[s.start : s.end]: s.style for s in text.spans}
    assert styles["src/app.py"] == render_common.STYLE_PATH
    assert styles["   … |"] == render_common.STYLE_CONTEXT
    assert styles["   9 |"] == render_common.STYLE_LINENO
    assert styles[text.plain.splitlines()[0]] == render_common.STYLE_HEADER


def test_read_human_empty_selection() -> None:
    lines = render.read_human(read_sample(ranges=[])).plain.splitlines()
    assert lines == [f"RESULT#0badcafe from {RID}:all:line  0 ranges  complete", "nothing selected"]


def test_read_compact_names_each_path_once() -> None:
    assert render.read_compact(read_sample()).splitlines() == [
        f"RESULT#0badcafe from {RID}:all:line  4 ranges  complete",
        "src/app.py",
        "9| def handler(uid):",
        "10|     user = get_user(uid)",
        "11|     return user",
        "…",
        "120| get_user(7)",
        "src/b.py",
        "3| x = get_user(1)",
    ]
    assert render.read_compact(read_sample(next_offset=12)).endswith("more: read with offset=12")


def test_read_compact_keeps_header_first_and_notes_refresh() -> None:
    lines = render.read_compact(read_sample(refreshed=True)).splitlines()
    assert lines[0].startswith("RESULT#0badcafe ") and lines[0].endswith("refreshed")
    assert lines[1].startswith("refreshed: ")


def test_read_renderings_do_not_mutate_input() -> None:
    data = read_sample(refreshed=True)
    before = copy.deepcopy(data)
    render.read_human(data)
    render.read_compact(data)
    assert data == before


def test_index_human() -> None:
    assert render.index_human({"indexed": 1, "path": ".sleuth/trigram.idx"}).plain == (
        "indexed 1 file into .sleuth/trigram.idx"
    )
    assert render.index_human({"indexed": 0, "path": "p"}).plain == "indexed 0 files into p"


# --- edits -----------------------------------------------------------------------------------

EDIT_DIFF = (
    "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,3 +1,3 @@\n def f():\n"
    "-    return old(1)\n+    return new(1)\n x = 1\n"
    "--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1 @@\n--- header comment\n select 1\n"
    "\\ No newline at end of file\n"
)


def edit_sample(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "result": "RESULT#5eed0001",
        "source": f"{RID}:all:match",
        "refreshed": False,
        "complete": True,
        "ranges": [_range("src/app.py", 2, "new")],
        "changed": ["q.sql", "src/app.py"],
        "diff": EDIT_DIFF,
    }
    data.update(changes)
    return data


def test_edit_header_counts_changed_files() -> None:
    assert (
        render.edit_header(edit_sample(), "replace") == "RESULT#5eed0001 replace: 2 files changed"
    )
    one = edit_sample(changed=["a.py"])
    assert render.edit_header(one, "delete") == "RESULT#5eed0001 delete: 1 file changed"
    assert render.edit_header(edit_sample(refreshed=True), "move").endswith("changed  refreshed")


def test_edit_human_is_header_diff_and_undo_hint() -> None:
    lines = render.edit_human(edit_sample(), verb="replace").plain.splitlines()
    assert lines[0] == "RESULT#5eed0001 replace: 2 files changed"
    assert lines[1:-1] == EDIT_DIFF.splitlines()
    assert lines[-1] == "undo: sleuth undo RESULT#5eed0001"


def test_edit_human_styles_follow_the_hunks() -> None:
    text = render.edit_human(edit_sample(), verb="replace")
    assert not text.style  # only the header is bold, not the whole text
    styles = {text.plain[s.start : s.end]: s.style for s in text.spans}
    assert styles["RESULT#5eed0001 replace: 2 files changed"] == render_common.STYLE_HEADER
    assert styles["--- a/src/app.py"] == styles["+++ b/q.sql"] == render_common.STYLE_DIFF_FILE
    assert styles["@@ -1,3 +1,3 @@"] == render_common.STYLE_DIFF_HUNK
    assert styles["-    return old(1)"] == render_common.STYLE_DIFF_DEL
    assert styles["+    return new(1)"] == render_common.STYLE_DIFF_ADD
    # a removed line that starts with "--" is a removal, not a file header
    assert styles["--- header comment"] == render_common.STYLE_DIFF_DEL
    assert styles["\\ No newline at end of file"] == render_common.STYLE_CONTEXT
    assert " def f():" not in styles and " select 1" not in styles  # context stays plain
    assert styles["undo: sleuth undo RESULT#5eed0001"] == render_common.STYLE_CONTEXT


def test_edit_human_crlf_shown_without_carriage_returns() -> None:
    data = edit_sample(diff="--- a/w.txt\r\n+++ b/w.txt\n@@ -1 +1 @@\n-a\r\n+b\r\n")
    plain = render.edit_human(data, verb="replace").plain
    assert "\r" not in plain and "\n-a\n+b\n" in plain


def test_undo_rendering_has_no_undo_hint_and_refresh_is_noted() -> None:
    lines = render.edit_human(edit_sample(), verb="undo").plain.splitlines()
    assert lines[0] == "RESULT#5eed0001 undo: 2 files changed" and "undo:" not in lines[-1]
    lines = render.edit_human(edit_sample(refreshed=True), verb="replace").plain.splitlines()
    assert lines[1].startswith("refreshed: ")


def test_edit_compact_is_header_then_diff() -> None:
    assert render.edit_compact(edit_sample(), verb="insert").splitlines() == [
        "RESULT#5eed0001 insert: 2 files changed",
        *EDIT_DIFF.splitlines(),
    ]


def test_edit_renderings_do_not_mutate_input() -> None:
    data = edit_sample(refreshed=True)
    before = copy.deepcopy(data)
    render.edit_human(data, verb="move")
    render.edit_compact(data, verb="move")
    assert data == before


# --- symbols, rename, doctor (docs/json.md#symbol-matches) -----------------------------------

DECL_ID = "f0ea30790afb"


def _symbol_match(
    n: int, path: str, line: int, column: int, text: str, symbol: dict[str, Any]
) -> dict[str, Any]:
    return dict(_match(n, path, line, column, text, length=5), symbol=symbol)


def symbols_sample(precision: str = "semantic", **changes: Any) -> dict[str, Any]:
    decl = {
        "name": "total",
        "kind": "method",
        "container": "Cart",
        "id": DECL_ID,
        "precision": precision,
        "range": {
            "path": "shop/models.py",
            "start_byte": 0,
            "end_byte": 90,
            "line": 16,
            "end_line": 18,
        },
    }
    ref = {"name": "total", "kind": "reference", "reference_of": DECL_ID, "precision": precision}
    ambiguous = {
        "name": "total",
        "kind": "reference",
        "reference_of": None,
        "candidates": [DECL_ID, "0a73ecacf4b2"],
        "precision": precision,
    }
    return sample(
        mode="symbols",
        query="symbols:total",
        total=3,
        matches=[
            _symbol_match(1, "shop/models.py", 16, 9, "    def total(self) -> float:", decl),
            _symbol_match(2, "shop/service.py", 9, 19, '    return f"pay {cart.total():.2f}"', ref),
            _symbol_match(3, "shop/util.py", 4, 12, "    return total(x)", ambiguous),
        ],
        **changes,
    )


def test_symbol_phrase_declaration_reference_and_candidates() -> None:
    matches = symbols_sample()["matches"]
    assert render.symbol_phrase(matches[0]["symbol"]) == (
        f"method Cart.total  [semantic] id={DECL_ID}"
    )
    assert render.symbol_phrase(matches[1]["symbol"]) == f"reference total -> {DECL_ID}  [semantic]"
    assert render.symbol_phrase(matches[2]["symbol"]) == (
        f"reference total -> one of {DECL_ID}, 0a73ecacf4b2  [semantic]"
    )
    top = {
        "name": "get_user",
        "kind": "function",
        "container": None,
        "id": "aac9e3052f59",
        "precision": "syntactic",
    }
    assert render.symbol_phrase(top) == "function get_user  [syntactic] id=aac9e3052f59"
    lost = {"name": "x", "kind": "reference", "reference_of": None, "precision": "syntactic"}
    assert render.symbol_phrase(lost) == "reference x -> (unresolved)  [syntactic]"


def test_human_symbols_one_line_per_match_with_code_below() -> None:
    lines = human(symbols_sample()).splitlines()
    assert lines[0] == f"{RID}  symbols  3 matches  complete"
    assert lines[2:8] == [
        f"#1 shop/models.py:16:9  method Cart.total  [semantic] id={DECL_ID}",
        "        def total(self) -> float:",
        f"#2 shop/service.py:9:19  reference total -> {DECL_ID}  [semantic]",
        '        return f"pay {cart.total():.2f}"',
        f"#3 shop/util.py:4:12  reference total -> one of {DECL_ID}, 0a73ecacf4b2  [semantic]",
        "        return total(x)",
    ]
    assert lines[9] == (
        f"body: sleuth search 'symbol:#<id>'   rename: sleuth rename {RID}:<n>:match NEW"
    )
    assert "syntactic:" not in human(symbols_sample())


def test_human_syntactic_symbols_warn_and_offer_no_rename() -> None:
    text = human(symbols_sample("syntactic"))
    assert "[syntactic]" in text and "rename:" not in text
    assert (
        "syntactic: names from tree-sitter, not resolved by a language server (see sleuth doctor)"
    ) in text.splitlines()


def test_human_symbol_body_keeps_every_line() -> None:
    decl = symbols_sample()["matches"][0]["symbol"]
    body = "def total(self) -> float:\n    return 1.0"
    data = sample(
        mode="symbol",
        query=f"symbol:#{DECL_ID}",
        total=1,
        matches=[dict(_match(1, "shop/models.py", 16, 1, body, end_line=17), symbol=decl)],
    )
    lines = human(data).splitlines()
    assert lines[2:5] == [
        f"#1 shop/models.py:16:1  method Cart.total  [semantic] id={DECL_ID}",
        "    def total(self) -> float:",
        "        return 1.0",
    ]
    assert not any(line.startswith("body:") for line in lines)


def test_compact_symbols_carry_the_phrase_between_position_and_text() -> None:
    lines = render.search_compact(symbols_sample()).splitlines()
    assert lines[1] == (
        f"shop/models.py:16:9 #1  method Cart.total  [semantic] id={DECL_ID}  "
        "def total(self) -> float:"
    )
    assert lines[2] == (
        f"shop/service.py:9:19 #2  reference total -> {DECL_ID}  [semantic]  "
        'return f"pay {cart.total():.2f}"'
    )


RENAME_DIFF = (
    "--- a/shop/models.py\n+++ b/shop/models.py\n@@ -1 +1 @@\n-def total():\n+def grand_total():\n"
)


def rename_sample(**changes: Any) -> dict[str, Any]:
    data = edit_sample(
        ranges=[
            _range("shop/models.py", 1, "grand_total"),
            _range("shop/service.py", 4, "grand_total"),
        ],
        changed=["shop/models.py", "shop/service.py"],
        diff=RENAME_DIFF,
        untouched=[
            {"path": "shop/report.py", "line": 5, "text": "    total = 0"},
            {"path": "shop/report.py", "line": 8, "text": "    return total"},
        ],
    )
    data.update(changes)
    return data


def test_rename_human_header_diff_and_untouched_for_review() -> None:
    text = render.rename_human(rename_sample())
    assert text.plain.splitlines() == [
        "RESULT#5eed0001 rename: 2 occurrences in 2 files",
        *RENAME_DIFF.splitlines(),
        "not renamed (text matches, review them):",
        "  shop/report.py:5  total = 0",
        "  shop/report.py:8  return total",
    ]
    styles = {text.plain[s.start : s.end]: s.style for s in text.spans}
    assert styles["not renamed (text matches, review them):"] == render_common.STYLE_WARN
    assert styles["+def grand_total():"] == render_common.STYLE_DIFF_ADD


def test_rename_without_untouched_occurrences_lists_nothing() -> None:
    plain = render.rename_human(rename_sample(untouched=[])).plain
    assert "not renamed" not in plain and plain.splitlines()[-1] == "+def grand_total():"
    one = rename_sample(ranges=[_range("a.py", 1, "b")], changed=["a.py"])
    assert render.rename_header(one) == "RESULT#5eed0001 rename: 1 occurrence in 1 file"


def test_rename_compact_is_header_diff_untouched() -> None:
    assert render.rename_compact(rename_sample()).splitlines() == [
        "RESULT#5eed0001 rename: 2 occurrences in 2 files",
        *RENAME_DIFF.splitlines(),
        "not renamed (text matches, review them):",
        "  shop/report.py:5  total = 0",
        "  shop/report.py:8  return total",
    ]


DOCTOR_ROWS: list[dict[str, Any]] = [
    {
        "language": "python",
        "server": "ty",
        "command": ["/v/bin/ty", "server"],
        "found": True,
        "version": "ty 0.0.108",
        "install": "pip install ty",
    },
    {
        "language": "rust",
        "server": "rust-analyzer",
        "command": ["rust-analyzer"],
        "found": False,
        "version": None,
        "install": "rustup component add rust-analyzer",
    },
]


def test_doctor_human_table_and_summary() -> None:
    text = render.doctor_human(DOCTOR_ROWS)
    assert text.plain.splitlines() == [
        "language  server         found  version     install",
        "python    ty             yes    ty 0.0.108  pip install ty",
        "rust      rust-analyzer  no     -           rustup component add rust-analyzer",
        "no server for rust: symbols: answers there are syntactic and rename is unsupported",
    ]
    styles = {text.plain[s.start : s.end]: s.style for s in text.spans}
    assert styles[text.plain.splitlines()[2]] == render_common.STYLE_WARN
    assert text.plain.splitlines()[1] not in styles
    assert render.doctor_human(DOCTOR_ROWS[:1]).plain.splitlines()[-1] == (
        "every language has its server: symbols: answers are semantic"
    )
    assert render.doctor_human([]).plain.splitlines()[-1] == (
        "language servers are off in this workbench"
    )


def test_doctor_compact_reads_the_wrapped_rows() -> None:
    assert render.doctor_compact({"servers": DOCTOR_ROWS}).splitlines() == (
        render.doctor_human(DOCTOR_ROWS).plain.splitlines()
    )


def test_symbol_rename_doctor_renderings_do_not_mutate_input() -> None:
    for data in (symbols_sample(), rename_sample()):
        before = copy.deepcopy(data)
        render.search_human(data)
        render.search_compact(data)
        render.rename_human(data)
        render.rename_compact(data)
        assert data == before
    rows = copy.deepcopy(DOCTOR_ROWS)
    render.doctor_human(rows)
    assert rows == DOCTOR_ROWS


def test_human_graph_lines_carry_the_edges_too() -> None:
    decl = _match(1, "a.py", 1, 1, "def f():")
    decl["graph"] = {
        **_node("f"),
        "signature": "def f():",
        "incoming": {"calls": {"count": 1, "uses": 1, "neighbors": [{"node": _node("g")}]}},
        "outgoing": {},
    }
    out = human(_no_context(sample(query="graph:a.py", mode="graph", matches=[decl], total=1)))
    assert "a.py:1:1 #1  function f  id=f  def f():\n    <- calls: g" in out


def test_a_recovered_patterns_warning_is_said_in_both_renderings() -> None:
    said = "the ast: pattern does not parse cleanly as cpp; the missing ';' is left out"
    for data in (sample(pattern_warning=said), sample(pattern_warning=said, matches=[], total=0)):
        assert f"warning: {said}" in render.search_human(data).plain
        assert f"warning: {said}" in render.search_compact(data)
    assert "warning:" not in render.search_human(sample()).plain
    assert "warning:" not in render.search_compact(sample())


@given(st.text(alphabet='ab"\\\n\té😀 \x00', max_size=200), st.integers(3, 100))
def test_a_quoted_capture_is_the_head_of_its_whole_json_string(text: str, most: int) -> None:
    from sleuth.render.compact import _quoted

    whole = json.dumps(text, ensure_ascii=False)
    expected = whole if len(whole) <= most else whole[: most - 2] + '…"'
    assert _quoted(text, most) == expected


@st.composite
def _pages(draw: Any) -> dict[str, Any]:
    """Pages of nearby matches in two files, with context that other matches may cover."""
    matches = []
    spots = draw(
        st.lists(
            st.tuples(st.sampled_from(["a.py", "b/c.py"]), st.integers(1, 30), st.integers(0, 2)),
            min_size=1,
            max_size=12,
            unique_by=lambda s: (s[0], s[1]),
        )
    )
    for n, (path, line, span) in enumerate(sorted(spots), start=1):
        before = tuple(f"b{line - k}" for k in range(min(draw(st.integers(0, 2)), line - 1), 0, -1))
        after = tuple(f"a{line + span + k}" for k in range(1, draw(st.integers(0, 2)) + 1))
        m = _match(n, path, line, 1, f"x{line}" + "\nmore" * span, 4, before, after, line + span)
        if draw(st.booleans()):
            m["captures"] = {"A": {"text": "é" * draw(st.integers(0, 40)), "ref": f"{RID}:{n}:A"}}
        matches.append(m)
    return sample(matches=matches, total=len(matches))


@given(_pages(), st.integers(1, 12), st.integers(200, 1200))
def test_a_cut_pages_added_up_size_is_its_rendered_size(
    window: dict[str, Any], keep: int, budget: int
) -> None:
    """The budget check adds up the fit's per-match sizes instead of rendering the cut page
    again; whenever it answers, it must be the rendering's exact size."""
    from sleuth.render.page_fit import compact_cut_size, compact_fit_sizes

    _fit, sizes = compact_fit_sizes(window, 10**9)
    keep = min(keep, len(window["matches"]))
    cut = dict(window, matches=window["matches"][:keep], cut="max_bytes", next_cursor="C" * 40)
    size = compact_cut_size(window, cut, sizes)
    if size is not None:
        assert size == len(render.search_compact(cut).encode())
    fit, fit_sizes = compact_fit_sizes(window, budget)
    assert fit_sizes[:fit] == sizes[:fit]
