"""``Workspace.read`` and ``stamp``: decoding tags, skip accounting, the content cache."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import xxhash

from sleuth.errors import InvalidPath, NotFound
from sleuth.model import SkipCounts
from sleuth.workspace import FileText, Workspace, stamp_bytes
from sleuth.workspace.reader import UNWANTED, ContentCache

MakeWs = Callable[[dict[str, str | bytes]], Path]


def _age(path: Path, seconds: int = 60) -> None:
    """Backdate a file so the cache treats it as settled (not racily clean)."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - seconds * 1_000_000_000))


def test_read_utf8_bom_and_binary_safe(make_workspace: MakeWs) -> None:
    root = make_workspace(
        {
            "a.py": "héllo\n",
            "bom.py": b"\xef\xbb\xbfx = 1\n",
            "latin.txt": b"caf\xe9\n",
            "ascii.txt": "plain",
        }
    )
    ws = Workspace(root)
    a = ws.read("a.py")
    assert isinstance(a, FileText)
    assert (a.path, a.data, a.encoding) == ("a.py", "héllo\n".encode(), "utf-8")
    assert a.stamp == xxhash.xxh3_64("héllo\n".encode()).hexdigest() == stamp_bytes(a.data)
    bom = ws.read("bom.py")
    assert bom is not None and bom.encoding == "utf-8-bom"
    latin = ws.read("latin.txt")
    assert latin is not None and latin.encoding == "binary-safe" and latin.data == b"caf\xe9\n"
    assert ws.read("./ascii.txt") is not None


def test_binary_and_too_large_counted(make_workspace: MakeWs) -> None:
    root = make_workspace(
        {"bin.dat": b"ab\x00cd", "late.dat": b"x" * 9000 + b"\x00", "big.txt": "y" * 50}
    )
    ws = Workspace(root, max_filesize=20_000)
    skipped = SkipCounts()
    assert ws.read("bin.dat", skipped) is None
    assert skipped.binary == 1
    late = ws.read("late.dat", skipped)  # NUL after the first 8 KiB: text
    assert late is not None and skipped.binary == 1
    small = Workspace(root, max_filesize=10)
    assert small.read("big.txt", skipped) is None
    assert skipped.too_large == 1 and skipped.unreadable == 0


def test_unreadable_and_vanished_counted(
    make_workspace: MakeWs, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_workspace({"locked.txt": "x", "gone.txt": "y"})
    ws = Workspace(root)
    real_open = os.open

    def deny_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if str(path).endswith("locked.txt"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", deny_open)
    skipped = SkipCounts()
    assert ws.read("locked.txt", skipped) is None
    (root / "gone.txt").unlink()
    assert ws.read("gone.txt", skipped) is None
    assert skipped.unreadable == 2 and skipped.to_json()["unreadable"] == 2
    assert ws.read("locked.txt") is None  # no counter given: still no exception


def test_cache_reuses_until_file_changes(
    make_workspace: MakeWs, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_workspace({"a.py": "one\n"})
    _age(root / "a.py")
    ws = Workspace(root)
    first = ws.read("a.py")
    opens: list[str] = []
    real_open = os.open

    def counting_open(path: Any, flags: int, *args: Any) -> int:
        opens.append(str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", counting_open)
    assert ws.read("a.py") is first and opens == []
    (root / "a.py").write_text("two!\n")
    _age(root / "a.py", 30)
    second = ws.read("a.py")
    assert second is not None and second.data == b"two!\n" and len(opens) == 1
    assert second.stamp != (first.stamp if first else "")


def test_recent_files_not_cached(make_workspace: MakeWs) -> None:
    root = make_workspace({"fresh.py": "x"})
    ws = Workspace(root)
    assert ws.read("fresh.py") is not None
    assert len(ws.cache) == 0


def test_cache_is_bounded_by_bytes() -> None:
    cache = ContentCache(max_bytes=10)
    for i in range(5):
        cache.put(f"f{i}", (4, i, i), FileText(f"f{i}", b"abcd", "s"))
    assert cache.total <= 10 and len(cache) == 2
    assert cache.get("f4", (4, 4, 4)) is not None and cache.get("f0", (4, 0, 0)) is None
    assert cache.get("f4", (4, 5, 4)) is None and cache.total == 4


def test_stamp_matches_read_and_errors(make_workspace: MakeWs) -> None:
    root = make_workspace({"a.py": "abc", "bin.dat": b"\x00\x01", "d/x": ""})
    ws = Workspace(root, max_filesize=2)
    assert ws.stamp("a.py") == stamp_bytes(b"abc")  # over the cap: still stamped
    assert ws.stamp("bin.dat") == stamp_bytes(b"\x00\x01")
    with pytest.raises(NotFound) as info:
        ws.stamp("nope.py")
    assert info.value.message.startswith("path not found: nope.py")
    with pytest.raises(InvalidPath) as err:
        ws.stamp("d")
    assert "files only" in err.value.message


def test_a_bom_before_bytes_that_do_not_decode_is_binary_safe() -> None:
    from sleuth.workspace.reader import encoding_of

    assert encoding_of(b"\xef\xbb\xbfok\n") == "utf-8-bom"
    assert encoding_of(b"\xef\xbb\xbfbad \xff\n") == "binary-safe"
    assert encoding_of(b"plain\n") == "utf-8"


def test_a_rewrite_that_restores_size_and_mtime_is_still_seen(tmp_path: Path) -> None:
    """Seen: swapping two tokens in place and putting the old mtime back (``os.utime``) left
    every search answering the old bytes: the cache and listings were keyed by (size, mtime)."""
    from sleuth import Workbench

    (tmp_path / "a.py").write_bytes(b"x = alpha_mode\ny = omega_mode\n")
    past = time.time_ns() - 3_600_000_000_000
    os.utime(tmp_path / "a.py", ns=(past, past))
    with Workbench(tmp_path, servers=False, watch=True) as wb:
        assert wb.search("alpha_mode").matches[0]["line"] == 1
        st = os.stat(tmp_path / "a.py")
        with open(tmp_path / "a.py", "r+b") as fh:
            fh.write(b"x = omega_mode\ny = alpha_mode\n")
        os.utime(tmp_path / "a.py", ns=(st.st_atime_ns, st.st_mtime_ns))
        assert os.stat(tmp_path / "a.py").st_mtime_ns == st.st_mtime_ns
        time.sleep(0.3)  # the watcher's event lands; without one the listing is walked
        found = wb.search("alpha_mode")
        assert found.matches[0]["line"] == 2
        wb.replace(found.to_json()["all"]["match"], "beta_mode")
    assert (tmp_path / "a.py").read_bytes() == b"x = omega_mode\ny = beta_mode\n"


def test_read_if_turns_down_without_caching_and_counts_skips_as_read_does(
    make_workspace: MakeWs,
) -> None:
    root = make_workspace(
        {
            "hit.py": "token\n",
            "miss.py": "nothing\n",
            "bom.py": "\ufefftoken\n",
            "bin.dat": b"token\x00",
            "big.py": "token " * 10,
            ".sleuth.toml": "max_filesize = 40\n",
        }
    )
    for name in ("hit.py", "miss.py", "bom.py", "bin.dat", "big.py"):
        _age(root / name)
    ws = Workspace(root)
    offsets: list[int] = []

    def wanted(data: bytes, start: int) -> bool:
        offsets.append(start)
        return data.startswith(b"token", start)

    counts = SkipCounts()
    got = {n: ws.read_if(n, counts, wanted) for n in ("hit.py", "miss.py", "bom.py", "bin.dat")}
    got["big.py"] = ws.read_if("big.py", counts, wanted)
    assert isinstance(got["hit.py"], FileText) and isinstance(got["bom.py"], FileText)
    assert got["miss.py"] == UNWANTED and got["bin.dat"] is None and got["big.py"] is None
    assert sorted(offsets) == [0, 0, 3]  # the test sees the text's start after a BOM
    assert (counts.binary, counts.too_large) == (1, 1)
    cached = len(ws.cache)  # hit.py, bom.py and bin.dat's binary marker: not miss.py
    assert cached == 3
    plain = SkipCounts()
    for name in ("hit.py", "miss.py", "bom.py", "bin.dat", "big.py"):
        ws.read(name, plain)
    assert (plain.binary, plain.too_large) == (counts.binary, counts.too_large)
    assert len(ws.cache) == cached + 1  # a plain read of miss.py caches it
