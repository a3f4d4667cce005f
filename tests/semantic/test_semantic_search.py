"""``semantic:`` through the Workbench and the index itself: scores, order, threshold, the
index file, per-file updates, stale chunks, bad input and edits (docs/query.md#semantic-hybrid-retrieval).
Runs the real model (all-MiniLM-L6-v2 int8, onnxruntime, no network)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import sleuth.semantic
from sleuth.api import Workbench
from sleuth.errors import InvalidQuery, UnsafeSelection
from sleuth.query.semantic_mode import decls_of
from sleuth.semantic import SemanticIndex
from sleuth.workspace import Workspace

FILES: dict[str, str | bytes] = {
    "src/config.py": (
        "import json\n\n\ndef parse_config(path):\n"
        '    """Load the configuration file from disk."""\n'
        "    with open(path) as fh:\n        return json.load(fh)\n"
    ),
    "src/net.py": (
        "def retry_request(url, attempts=3):\n"
        '    """Send an HTTP request again until it succeeds, with backoff."""\n'
        "    for n in range(attempts):\n        pass\n"
    ),
    "src/users.py": (
        "class UserStore:\n    def getUserName(self, uid):\n        return self.names[uid]\n"
    ),
    "notes.txt": "Shopping list: apples, bread, milk.\n",
    "blob.bin": b"\x00\x01\x02semantic\x00" * 100,
}


def _search(wb: Workbench, query: str, **kw: Any) -> dict[str, Any]:
    result: dict[str, Any] = wb.search(query, **kw).to_json()
    return result


def test_scores_order_and_spans(make_workspace: Any) -> None:
    root = make_workspace(FILES)
    with Workbench(root, build_index=False) as wb:
        res = _search(wb, "semantic:load configuration from disk")
    assert res["mode"] == "semantic" and res["complete"]
    matches = res["matches"]
    assert matches[0]["path"] == "src/config.py"
    assert matches[0]["chunk"] == {"kind": "function", "name": "parse_config"}
    assert matches[0]["text"].startswith("def parse_config(path):")
    assert matches[0]["line"] == 4 and matches[0]["end_line"] == 7
    scores = [m["score"] for m in matches]
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert scores == sorted(scores, reverse=True)
    assert all(m["path"] != "blob.bin" for m in matches)
    assert (root / ".sleuth" / "semantic.sqlite3").is_file()


def test_identifier_split_finds_camel_case(make_workspace: Any) -> None:
    with Workbench(make_workspace(FILES), build_index=False) as wb:
        res = _search(wb, "semantic:user name")
    assert res["matches"][0]["chunk"]["name"] == "UserStore.getUserName"


def test_threshold_drops_lower_scores(make_workspace: Any) -> None:
    with Workbench(make_workspace(FILES), build_index=False) as wb:
        every = _search(wb, "semantic:retry an http request")["matches"]
        cut = (every[0]["score"] + every[1]["score"]) / 2
        kept = _search(wb, "semantic:retry an http request", threshold=cut)["matches"]
        none = _search(wb, "semantic:retry an http request", threshold=1.0)["matches"]
    assert len(every) > 1 and [m["path"] for m in kept] == [every[0]["path"]]
    assert kept[0]["score"] >= cut and none == []


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan"), "high", True])
def test_threshold_outside_zero_one_is_invalid(make_workspace: Any, bad: Any) -> None:
    with Workbench(make_workspace(FILES), build_index=False) as wb, pytest.raises(InvalidQuery):
        wb.search("semantic:config", threshold=bad)


@pytest.mark.parametrize("query", ["semantic:", "semantic:   ", "semantic:" + "x" * 100_000])
def test_empty_and_huge_queries_are_invalid(make_workspace: Any, query: str) -> None:
    with Workbench(make_workspace(FILES), build_index=False) as wb, pytest.raises(InvalidQuery):
        wb.search(query)


def test_a_long_query_within_bounds_answers(make_workspace: Any) -> None:
    with Workbench(make_workspace(FILES), build_index=False) as wb:
        res = _search(wb, "semantic:" + "configuration file loading " * 500)
    assert res["matches"][0]["path"] == "src/config.py"


def test_huge_file_is_chunked_within_limits(make_workspace: Any) -> None:
    huge = "".join(f"value_{i} = compute_total_price({i})\n" for i in range(60_000))
    root = make_workspace({**FILES, "gen/huge.py": huge})
    with Workbench(root, build_index=False) as wb:
        res = _search(wb, "semantic:compute total price", limit=3)
    assert res["matches"] and all(m["end_line"] - m["line"] < 40 for m in res["matches"])


def test_updates_per_changed_file_and_drops_vanished(make_workspace: Any) -> None:
    root = make_workspace(FILES)
    ws = Workspace(root)
    index = SemanticIndex(ws)
    assert index.sync(ws.list_files().files, decls_of) == 4  # the binary file is not indexed
    assert index.sync(ws.list_files().files, decls_of) == 0
    (root / "src" / "net.py").write_text("def send_email(to):\n    pass\n")
    (root / "notes.txt").unlink()
    ws.note_changed()
    assert index.sync(ws.list_files().files, decls_of) == 1
    index.close()
    db = sqlite3.connect(root / ".sleuth" / "semantic.sqlite3")
    paths = sorted(p for (p,) in db.execute("SELECT path FROM files"))
    db.close()
    assert paths == ["src/config.py", "src/net.py", "src/users.py"]
    again = SemanticIndex(Workspace(root))  # a new process loads the file: nothing to re-chunk
    assert again.sync(Workspace(root).list_files().files, decls_of) == 0
    hits = again.search("send an email", limit=1)
    assert hits[0].title == "send_email"
    again.close()


def test_never_answers_from_a_stale_chunk(make_workspace: Any) -> None:
    root = make_workspace(FILES)
    target = root / "src" / "net.py"
    with Workbench(root, build_index=False) as wb:
        _search(wb, "semantic:retry request")
    st = target.stat()
    old = target.read_bytes()
    new = old.replace(b"retry_request", b"resend_messag")
    assert len(new) == len(old)
    target.write_bytes(new)
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size and mtime: stat is fooled
    with Workbench(root, build_index=False) as wb:
        res = _search(wb, "semantic:resend messag")
        top = res["matches"][0]
        assert top["path"] == "src/net.py" and top["text"].startswith("def resend_messag(")
        assert top["chunk"]["name"] == "resend_messag"
        # its reference is stamped with the bytes on disk: an edit through it is accepted
        picked = wb.select(res["result"], [1]).to_json()
        wb.replace(picked["result"], "def resend_messag():\n    pass\n")
    assert target.read_text().startswith("def resend_messag():\n    pass\n")


def test_a_file_deleted_between_indexing_and_the_query(
    make_workspace: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_workspace(FILES)
    sync = SemanticIndex.sync

    def sync_then_delete(self: SemanticIndex, *args: Any, **kw: Any) -> int:
        done = sync(self, *args, **kw)
        (root / "src" / "config.py").unlink(missing_ok=True)
        return done

    monkeypatch.setattr(SemanticIndex, "sync", sync_then_delete)
    with Workbench(root, build_index=False) as wb:
        res = _search(wb, "semantic:load configuration from disk")
    assert res["matches"] and all(m["path"] != "src/config.py" for m in res["matches"])


def test_edits_through_hints_are_unsafe_unless_selected(make_workspace: Any) -> None:
    root = make_workspace(FILES)
    with Workbench(root, build_index=False) as wb:
        res = _search(wb, "semantic:retry an http request")
        ref = res["matches"][0]["ref"]["match"]
        with pytest.raises(UnsafeSelection, match="semantic"):
            wb.replace(ref, "pass")
        read = wb.read(ref).to_json()  # readable
        assert "def retry_request" in str(read)
        scoped = _search(wb, "attempts", path=ref)  # usable as a scope
        assert scoped["matches"] and all(m["path"] == "src/net.py" for m in scoped["matches"])
        picked = wb.select(res["result"], [1]).to_json()
        wb.replace(picked["result"], "def retry_request(url):\n    return url\n")
    assert "return url" in (root / "src" / "net.py").read_text()


def test_unsupported_without_the_model(
    make_workspace: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sleuth.errors import Unsupported

    monkeypatch.setattr(sleuth.semantic, "available", lambda: False)
    with (
        Workbench(make_workspace(FILES), build_index=False) as wb,
        pytest.raises(Unsupported, match="pip install"),
    ):
        wb.search("semantic:config")


def test_index_file_deleted_between_queries(make_workspace: Any) -> None:
    root = make_workspace(FILES)
    with Workbench(root, build_index=False) as wb:
        first = _search(wb, "semantic:user name")["matches"][0]["path"]
        for p in (root / ".sleuth").glob("semantic.sqlite3*"):
            p.unlink()
        second = _search(wb, "semantic:user name", limit=1)["matches"][0]["path"]
    assert first == second == "src/users.py"
    assert Path(root / ".sleuth" / "semantic.sqlite3").is_file()


def test_a_changed_file_encodes_only_its_changed_chunks(make_workspace: Any) -> None:
    body = "".join(f"def helper_{i}(x):\n    return x * {i}\n\n\n" for i in range(12))
    root = make_workspace({"m.py": body})
    ws = Workspace(root)
    index = SemanticIndex(ws)
    encoded: list[str] = []
    encode = index.encoder.encode

    def counting(texts: list[str]) -> Any:
        encoded.extend(texts)
        return encode(texts)

    index.encoder.encode = counting  # type: ignore[method-assign]
    assert index.sync(ws.list_files().files, decls_of) == 1
    first = len(encoded)
    assert first >= 12
    encoded.clear()
    (root / "m.py").write_text(body.replace("return x * 3\n", "return x * 333\n"))
    ws.note_changed()
    assert index.sync(ws.list_files().files, decls_of) == 1
    assert 1 <= len(encoded) < first and any("333" in t for t in encoded)
    hits = index.search("helper_3 multiplies by 333", limit=3)
    assert any(h.title == "helper_3" for h in hits)
    index.close()


def test_bm25_postings_follow_edits_and_deletions(make_workspace: Any) -> None:
    root = make_workspace(
        {
            "a.py": "def frobnicate_widget(x):\n    return x\n\n\ndef other(y):\n    return y\n",
            "b.py": "def frobnicate_gadget(z):\n    return z\n",
        }
    )
    ws = Workspace(root)
    index = SemanticIndex(ws)
    index.sync(ws.list_files().files, decls_of)
    both = {h.path for h in index.search("frobnicate", limit=10, alpha=0.0)}
    assert both == {"a.py", "b.py"}
    (root / "a.py").write_text("def other(y):\n    return y\n")
    (root / "b.py").unlink()
    (root / "c.py").write_text("class Frobnicate:\n    pass\n")
    ws.note_changed()
    index.sync(ws.list_files().files, decls_of)
    hits = index.search("frobnicate", limit=10, alpha=0.0)
    assert [(h.path, h.title) for h in hits] == [("c.py", "Frobnicate")]
    assert all(h.bm25 > 0 for h in hits)
    index.close()


def test_test_code_ranks_below_the_code_it_tests_unless_asked_for(make_workspace: Any) -> None:
    """A test shares its subject's words (``test_iri_to_uri``) and outranked it."""
    body = "    out = []\n    for ch in iri:\n        out.append(ch)\n    return ''.join(out)\n"
    root = make_workspace(
        {
            "pkg/urls.py": f"def iri_to_uri(iri):\n{body}",
            "tests/test_urls.py": f"def test_iri_to_uri_to_iri(iri):\n{body}    iri_to_uri(iri)\n",
        }
    )
    ws = Workspace(root)
    index = SemanticIndex(ws)
    index.sync(ws.list_files().files, decls_of)
    plain = {h.path: h for h in index.search("convert an iri to a uri", limit=5)}
    assert list(plain)[0] == "pkg/urls.py"
    asked = index.search("test converting an iri to a uri", limit=5)
    assert asked[0].path == "tests/test_urls.py"
    test_hit = plain["tests/test_urls.py"]
    # the score is the fused score times TEST_WEIGHT, still in [0, 1]
    fused = 0.5 * test_hit.dense + 0.5 * test_hit.bm25
    assert abs(test_hit.score - round(fused * sleuth.semantic.index.TEST_WEIGHT, 6)) < 1e-5
    index.close()


def test_first_line_and_name_weigh_more_than_the_body(make_workspace: Any) -> None:
    """The same words in a signature count more than in a body (``HEAD_WEIGHT``), and the
    dense part mixes the cosine of the chunk's name (``NAME_WEIGHT``)."""
    from sleuth.semantic.index import NAME_WEIGHT

    root = make_workspace(
        {"a.py": "def load(user, name):\n    pass\n", "b.py": "def load(a, b):\n    user, name\n"}
    )
    ws = Workspace(root)
    index = SemanticIndex(ws)
    index.sync(ws.list_files().files, decls_of)
    lexical = index.search("user name", limit=2, alpha=0.0)
    assert [h.path for h in lexical] == ["a.py", "b.py"] and lexical[0].bm25 > lexical[1].bm25
    hit = index.search("read the users", limit=1, alpha=1.0, paths={"b.py"})[0]
    q, text, name = index.encoder.encode(
        [
            "read the users",
            "function load\n" * 4 + "def load(a, b):\n    user, name",
            "function load",
        ]
    )
    expected = (max(float(q @ text), 0.0) + NAME_WEIGHT * max(float(q @ name), 0.0)) / (
        1 + NAME_WEIGHT
    )
    assert hit.dense == pytest.approx(expected, abs=2e-3)  # the vectors are stored as float16
    index.close()
