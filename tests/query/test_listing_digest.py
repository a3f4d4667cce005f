"""The listing digest re-hashes only replaced entries, and equals a digest made from scratch."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sleuth.query import listing_digest as ld
from sleuth.workspace import FileEntry


def _fresh(files: list[FileEntry]) -> str:
    return ld.listing_digest(list(files))  # no memo: from scratch


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(min_value=1, max_value=40),
    edits=st.lists(
        st.tuples(st.integers(min_value=0, max_value=39), st.integers(0, 3)), max_size=6
    ),
)
def test_a_patched_listing_hashes_like_a_fresh_one(n: int, edits: list[tuple[int, int]]) -> None:
    files = [FileEntry(f"d/f{i}.py", i, 1000 + i) for i in range(n)]
    memo = ld.ListingDigests()
    assert memo.digest(files) == _fresh(files)
    patched = list(files)  # the watcher's patch: same objects except the replaced entries
    for i, kind in edits:
        i %= n
        old = patched[i]
        patched[i] = (
            FileEntry(old.path, old.size + kind, old.mtime_ns + 1)
            if kind
            else FileEntry(old.path, old.size, old.mtime_ns)
        )
    incremental = memo.digest(patched)
    assert incremental == _fresh(patched)
    changed = any(
        a.size != b.size or a.mtime_ns != b.mtime_ns for a, b in zip(files, patched, strict=True)
    )
    assert (incremental != _fresh(files)) == changed


def test_order_and_paths_count() -> None:
    a, b = FileEntry("a", 1, 1), FileEntry("b", 1, 1)
    assert _fresh([a, b]) != _fresh([b, a])
    assert _fresh([a]) != _fresh([a, b])
    assert _fresh([FileEntry("a\0", 1, 1)]) != _fresh([FileEntry("a", 1, 1)])
