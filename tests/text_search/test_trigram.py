"""Tests for the file-level trigram index (benchmarks/RESULTS.md#measured-constraints)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sleuth.prefilter import Literals, file_may_match, fold
from sleuth.text_search.trigram import MAX_INDEXED_BYTES, TrigramIndex, trigrams_of

FILES = {
    "a.py": b"def get_user(user_id):\n    return USERS[user_id]\n",
    "b.py": b"class Repository:\n    def fetch(self): ...\n",
    "c.txt": b"the quick brown fox\njumps over the lazy dog\n",
    "d.py": b"x",
}


def build(files: dict[str, bytes] = FILES) -> TrigramIndex:
    idx = TrigramIndex()
    for path, data in files.items():
        idx.update(path, (len(data), 1), data)
    return idx


def test_trigrams_of_matches_the_naive_windows() -> None:
    data = b"Hello, World!\n\x00\xff\xfeabc"
    naive = {fold(data)[i : i + 3] for i in range(len(data) - 2)}
    assert len(trigrams_of(data)) == len(naive)
    for short in (b"", b"a", b"ab"):
        assert len(trigrams_of(short)) == 0


def test_candidates_narrow() -> None:
    idx = build()
    assert idx.candidates(((b"get_user",),)) == {"a.py"}
    assert idx.candidates(((b"GET_USER".lower(),),)) == {"a.py"}
    assert idx.candidates(((b"fetch",), (b"repository",))) == {"b.py"}  # AND across groups
    assert idx.candidates(((b"fetch", b"lazy dog"),)) == {"b.py", "c.txt"}  # OR inside
    assert idx.candidates(((b"nowhere",),)) == set()
    assert idx.candidates(((b"fetch",), (b"lazy dog",))) == set()


def test_candidates_cannot_narrow() -> None:
    idx = build()
    assert idx.candidates(None) is None
    assert idx.candidates(()) is None
    assert idx.candidates(((b"ab",),)) is None  # every group too short
    assert idx.candidates(((b"fetch", b"x"),)) is None  # a short alternative spoils its group
    assert idx.candidates(((b"fetch", b"x"), (b"repository",))) == {"b.py"}


def test_update_remove_and_known() -> None:
    idx = build()
    assert idx.known("a.py") == (len(FILES["a.py"]), 1)
    idx.update("a.py", (len(FILES["a.py"]), 1), b"completely different")  # same key: no-op
    assert idx.candidates(((b"get_user",),)) == {"a.py"}
    idx.update("a.py", (20, 2), b"completely different")
    assert idx.candidates(((b"get_user",),)) == set()
    assert idx.candidates(((b"different",),)) == {"a.py"}
    idx.remove("a.py")
    assert idx.known("a.py") is None
    assert idx.candidates(((b"different",),)) == set()
    idx.remove("never-there")


def test_oversize_files_are_always_candidates() -> None:
    idx = build()
    idx.update("big.bin", (MAX_INDEXED_BYTES + 1, 1), b"z" * (MAX_INDEXED_BYTES + 1))
    assert idx.candidates(((b"get_user",),)) == {"a.py", "big.bin"}


def test_sync_adds_changes_and_drops() -> None:
    idx = TrigramIndex()
    disk = dict(FILES)
    reads: list[str] = []

    def read(path: str) -> bytes | None:
        reads.append(path)
        return None if path.endswith(".bin") else disk[path]

    entries = [(p, len(d), 1) for p, d in disk.items()] + [("x.bin", 3, 1)]
    assert idx.sync(entries, read) == 5
    assert idx.known("x.bin") == (3, 1)
    # declined files stay candidates, so the scan counts them as skipped
    # (docs/faces.md#which-files-are-searched)
    assert "x.bin" in (idx.candidates(((b"get",),)) or set())
    reads.clear()
    assert idx.sync(entries, read) == 0 and reads == []
    disk["b.py"] = b"class Changed: pass"
    entries = [(p, len(d), 2 if p == "b.py" else 1) for p, d in disk.items() if p != "c.txt"]
    assert idx.sync(entries, read) == 1 and reads == ["b.py"]
    assert idx.candidates(((b"changed",),)) == {"b.py"}
    assert idx.candidates(((b"lazy",),)) == set()
    assert idx.known("c.txt") is None and idx.known("x.bin") is None
    assert len(idx) == 3


def test_save_load_roundtrip(tmp_path: Path) -> None:
    idx = build()
    idx.update("big.bin", (MAX_INDEXED_BYTES + 1, 1), b"z" * (MAX_INDEXED_BYTES + 1))
    idx.update("skip.bin", (1, 1), None)
    snap = tmp_path / ".sleuth" / "trigram.idx"
    idx.save(snap)
    assert [p.name for p in snap.parent.iterdir()] == ["trigram.idx"]  # no temp file left
    loaded = TrigramIndex.load(snap)
    assert loaded is not None
    for query in ([b"get_user"], [b"fetch", b"lazy dog"], [b"nowhere"]):
        lits: Literals = (tuple(query),)
        assert loaded.candidates(lits) == idx.candidates(lits)
    assert loaded.known("skip.bin") == (1, 1)
    loaded.update("e.py", (5, 1), b"fresh get_user")  # keeps working after a load
    assert loaded.candidates(((b"get_user",),)) == {"a.py", "e.py", "big.bin", "skip.bin"}


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty", "version"])
def test_corrupt_snapshot_loads_as_none(tmp_path: Path, damage: str) -> None:
    snap = tmp_path / "trigram.idx"
    build().save(snap)
    raw = bytearray(snap.read_bytes())
    if damage == "truncate":
        raw = raw[: len(raw) // 2]
    elif damage == "flip":
        raw[-5] ^= 0xFF
    elif damage == "garbage":
        raw = bytearray(b"not an index at all" * 10)
    elif damage == "empty":
        raw = bytearray()
    else:
        raw[8] += 1  # version field follows the 8-byte magic
    snap.write_bytes(bytes(raw))
    assert TrigramIndex.load(snap) is None
    assert TrigramIndex.load(tmp_path / "missing.idx") is None


ALPHABET = b"abcAB_\n "
texts = st.binary(max_size=60).map(lambda b: bytes(ALPHABET[x % len(ALPHABET)] for x in b))
needles = st.binary(min_size=1, max_size=6).map(
    lambda b: bytes(ALPHABET[x % len(ALPHABET)] for x in b).lower()
)


@settings(max_examples=60, deadline=None)
@given(
    files=st.lists(texts, min_size=1, max_size=8),
    groups=st.lists(st.lists(needles, min_size=1, max_size=3), min_size=1, max_size=3),
)
def test_candidates_are_a_superset_of_true_matches(
    files: list[bytes], groups: list[list[bytes]]
) -> None:
    idx = TrigramIndex()
    for i, data in enumerate(files):
        idx.update(f"f{i}", (len(data), 0), data)
    literals: Literals = tuple(tuple(g) for g in groups)
    truth = {f"f{i}" for i, data in enumerate(files) if file_may_match(literals, fold(data))}
    found = idx.candidates(literals)
    if found is not None:
        assert truth <= found
        # narrowing is exact when every literal is one trigram long
        if all(len(lit) == 3 for g in literals for lit in g):
            assert found == truth


def test_a_planted_fifo_or_symlink_is_no_snapshot(tmp_path: Path) -> None:
    # .sleuth/ can arrive with the tree: a FIFO at the snapshot's name blocked every watching
    # face's start in open(), and a symlink to /dev/zero would be read without end
    fifo = tmp_path / "fifo.idx"
    os.mkfifo(fifo)
    link = tmp_path / "link.idx"
    link.symlink_to("/dev/zero")
    loaded: list[object] = []
    worker = threading.Thread(
        target=lambda: loaded.extend([TrigramIndex.load(fifo), TrigramIndex.load(link)]),
        daemon=True,
    )
    worker.start()
    worker.join(60)  # a regression blocks: the daemon thread is left behind
    assert loaded == [None, None]
