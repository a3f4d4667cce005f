"""The bulk trigram build (numpy batches, forked workers) answers exactly as the one-file path."""

from __future__ import annotations

import random
import struct
import zlib
from pathlib import Path

import pytest

from sleuth.prefilter import Literals, file_may_match, fold
from sleuth.text_search.trigram import MAX_INDEXED_BYTES, BuildPlan, TrigramIndex, trigrams_of
from sleuth.text_search.trigram_postings import GramExtractor, Postings

WORDS = ["get_user", "Repository", "fetch", "lazy dog", "kmalloc", "ÉTÉ", "x\x01y", "zz"]
NEEDLES = [b"get_user", b"repository", b"fetch", b"lazy", b"kmalloc", "été".encode(), b"x\x01y"]

# every file through forked workers, in chunks of 3 (more chunks than workers)
FORKED = BuildPlan(workers=2, min_bulk_files=1, min_parallel_files=1, chunk_files=3, batch_pairs=50)
IN_PROCESS = BuildPlan(workers=1, min_bulk_files=1, chunk_files=4, batch_pairs=50)
ONE_BY_ONE = BuildPlan(min_bulk_files=10**9)


def _files(n: int = 40, seed: int = 7) -> dict[str, bytes]:
    rnd = random.Random(seed)
    files = {}
    for i in range(n):
        words = rnd.choices(WORDS, k=rnd.randrange(0, 12))
        files[f"d{i % 4}/f{i:03}.txt"] = " ".join(words).encode()
    files["bin/blob.bin"] = b"\x00binary"
    files["big/huge.txt"] = b"a" * (MAX_INDEXED_BYTES + 1)
    return files


def _read(files: dict[str, bytes]):  # type: ignore[no-untyped-def]
    def read(path: str) -> bytes | None:
        data = files[path]
        return None if data.startswith(b"\x00") else data

    return read


def _index(files: dict[str, bytes], plan: BuildPlan) -> TrigramIndex:
    idx = TrigramIndex()
    entries = [(p, len(d), 1) for p, d in files.items()]
    assert idx.sync(entries, _read(files), plan=plan) == len(files)
    return idx


def _answers(idx: TrigramIndex) -> list[set[str] | None]:
    queries: list[Literals] = [((n,),) for n in NEEDLES]
    queries += [((b"fetch", b"lazy"),), ((b"get_user",), (b"kmalloc",)), ((b"nowhere",),)]
    return [idx.candidates(q) for q in queries]


@pytest.mark.parametrize("chunk", [1 << 20, 5])
def test_gram_extractor_matches_trigrams_of(chunk: int) -> None:
    extract = GramExtractor(chunk)
    datas = [b"", b"ab", b"abc", b"Hello, World!\n\x00\xff\xfeabc", bytes(range(256)) * 3]
    for data in datas + [b"ABCabc" * 7, b"xyz"]:  # later files reuse the grown buffers
        got = set(extract.grams(data).tolist())
        assert sorted(got) == list(trigrams_of(data)), data


@pytest.mark.parametrize("plan", [FORKED, IN_PROCESS], ids=["forked", "in-process"])
def test_bulk_build_equals_one_by_one_and_a_scan(plan: BuildPlan) -> None:
    files = _files()
    bulk, single = _index(files, plan), _index(files, ONE_BY_ONE)
    assert _answers(bulk) == _answers(single)
    for needle in NEEDLES:
        truth = {p for p, d in files.items() if file_may_match(((needle,),), fold(d))}
        found = bulk.candidates(((needle,),))
        assert found is not None and truth <= found
        # exact up to the files that are always candidates (declined, oversize)
        assert found - truth <= {"bin/blob.bin", "big/huge.txt"}
    assert {"bin/blob.bin", "big/huge.txt"} <= (bulk.candidates(((b"nowhere",),)) or set())


@pytest.mark.parametrize("plan", [FORKED, IN_PROCESS, ONE_BY_ONE])
def test_progress_counts_rise_to_the_total(plan: BuildPlan) -> None:
    files = _files(25)
    seen: list[tuple[int, int]] = []
    idx = TrigramIndex()
    entries = [(p, len(d), 1) for p, d in files.items()]
    idx.sync(entries, _read(files), plan=plan, on_progress=lambda d, t: seen.append((d, t)))
    done = [d for d, _ in seen]
    assert done == sorted(done) and len(set(done)) == len(done)
    assert seen[-1] == (len(files), len(files)) and {t for _, t in seen} == {len(files)}
    if plan is not ONE_BY_ONE:
        assert len(seen) > 1  # one call per chunk


def test_a_failing_read_surfaces_and_leaves_no_half_build() -> None:
    files = _files(12)

    def read(path: str) -> bytes | None:
        if path.endswith("f007.txt"):
            raise RuntimeError("disk on fire")
        return files[path]

    idx = TrigramIndex()
    with pytest.raises(RuntimeError, match="disk on fire"):
        idx.sync([(p, len(d), 1) for p, d in files.items()], read, plan=FORKED)
    assert len(idx) == 0 and idx.candidates(((b"fetch",),)) == set()


def test_dead_ids_are_masked_then_compacted_away() -> None:
    files = _files(30)
    idx = _index(files, IN_PROCESS)
    expected = _answers(_index({p: d for p, d in files.items() if "d1/" not in p}, ONE_BY_ONE))
    entries = [(p, len(d), 1) for p, d in files.items() if "d1/" not in p]
    idx.sync(entries, _read(files), plan=IN_PROCESS)
    assert _answers(idx) == expected  # dead ids' pairs are still there, never answered
    idx._compact(0)
    assert idx._dead == 0 and idx._next_id == len(idx._paths)
    assert _answers(idx) == expected
    idx.update("new.txt", (3, 9), b"kmalloc fetch")
    assert "new.txt" in (idx.candidates(((b"kmalloc",), (b"fetch",))) or set())


def test_relayout_to_wider_ids_keeps_every_posting() -> None:
    import numpy as np

    postings = Postings()
    grams = trigrams_of(b"the quick brown fox")
    for fid in (0, 5, 131_071):
        postings.add_file(fid, grams)
    fid_map = np.arange(131_072, dtype=np.int64) * 3  # ids up to 393,213 need 19 bits
    fid_map[5] = -1
    wider = postings.relayout(fid_map, 19)
    for gram in grams:
        assert list(wider.get(gram)) == [0, 393_213]
    view = memoryview(b"".join(wider.blobs()))
    assert [list(Postings.from_buffer(view).get(g)) for g in grams] == [[0, 393_213]] * len(grams)


def test_a_version_1_snapshot_is_not_read(tmp_path: Path) -> None:
    # the version-1 layout (a JSON file table, then per-file and per-trigram bitmaps) with a
    # valid CRC: a loader that did not check the version would misread it
    meta = b'{"files": [["a.py", 0, 9, 1]], "next_id": 1, "unindexed": []}'
    body = struct.pack("<QQ", 0, 0)
    header = struct.pack("<8sIBQQI", b"SLTRIGRM", 1, 1, len(meta), len(body), 0)
    header = header[:-4] + struct.pack("<I", zlib.crc32(body, zlib.crc32(meta)))
    snap = tmp_path / "trigram.idx"
    snap.write_bytes(header + meta + body)
    assert TrigramIndex.load(snap) is None
