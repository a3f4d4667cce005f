"""Cloaking (docs/faces.md#access-policy-denied-files-are-cloaked) and bad input
(docs/errors.md) through the API: codes, never tracebacks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sleuth.api import Workbench
from sleuth.errors import InvalidPath, InvalidQuery, NotFound, SleuthError, Unsupported
from tests.conftest import MakeWorkspace

SECRET = "TOKEN_8c1f_do_not_leak"


@pytest.fixture
def cloaked(make_workspace: MakeWorkspace) -> Path:
    return make_workspace(
        {
            "pyproject.toml": '[tool.sleuth]\ndeny = ["secrets/**", "*.pem"]\n',
            "secrets/keys.txt": f"api = {SECRET}\n",
            "certs/server.pem": f"{SECRET}\n",
            "src/app.py": "print('TOKEN_ public')\n",
        }
    )


def test_denied_content_never_appears(cloaked: Path) -> None:
    with Workbench(cloaked, build_index=False) as wb:
        for query in (
            SECRET,
            "TOKEN_",
            "regex:TOKEN_\\w+",
            "files:*.pem",
            "files:keys",
            "files:secrets/*",
        ):
            res = wb.search(query, limit=500).to_json()
            del res["query"]  # the caller's own words are echoed back
            blob = repr(res)
            assert SECRET not in blob and "secrets/" not in blob and ".pem" not in blob, query
        res = wb.search("TOKEN_").to_json()
        assert res["total"] == 1 and res["matches"][0]["path"] == "src/app.py"


def test_denied_scope_is_not_found_like_a_missing_path(cloaked: Path) -> None:
    with Workbench(cloaked, build_index=False) as wb:
        with pytest.raises(NotFound) as denied:
            wb.search("x", path="secrets/keys.txt")
        with pytest.raises(NotFound) as missing:
            wb.search("x", path="secrets/nothing.txt")
        assert denied.value.message.replace("keys", "X") == missing.value.message.replace(
            "nothing", "X"
        )
        with pytest.raises(NotFound):
            wb.search("x", path="secrets")


@pytest.mark.parametrize("path", ["/etc", "/etc/passwd", "../outside", "src/../../x"])
def test_paths_leaving_the_root_are_invalid(cloaked: Path, path: str) -> None:
    with Workbench(cloaked, build_index=False) as wb, pytest.raises(InvalidPath):
        wb.search("x", path=path)


def test_outward_symlink_is_invalid(cloaked: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("x\n")
    os.symlink(outside, cloaked / "link.txt")
    with Workbench(cloaked, build_index=False) as wb:
        with pytest.raises(InvalidPath):
            wb.search("x", path="link.txt")
        assert all(m["path"] != "link.txt" for m in wb.search("x").to_json()["matches"])


@pytest.mark.parametrize(
    ("query", "error"),
    [
        ("", InvalidQuery),
        ("regex:foo(", InvalidQuery),
        ("regex:[a-", InvalidQuery),
        ("regex:(?=x)", Unsupported),
        ("regex:(?<!x)y", Unsupported),
        ("regex:(a)\\1", Unsupported),
        ("a" * 1_000_000, InvalidQuery),
        ("a\x00b", InvalidQuery),
        ("semantic:   ", InvalidQuery),
        ("regex:a{2,1}", InvalidQuery),
    ],
)
def test_bad_queries_raise_spec_codes(
    make_workspace: MakeWorkspace, query: str, error: type[SleuthError]
) -> None:
    root = make_workspace({"a.txt": "foo\n"})
    with Workbench(root, build_index=False) as wb, pytest.raises(error) as err:
        wb.search(query)
    assert err.value.to_json()["error"]["code"] == error.code


def test_invalid_regex_reports_position(make_workspace: MakeWorkspace) -> None:
    root = make_workspace({"a.txt": "foo\n"})
    with Workbench(root, build_index=False) as wb, pytest.raises(InvalidQuery) as err:
        wb.search("regex:ab[c")
    assert isinstance(err.value.details.get("position"), int)


def test_binary_large_and_broken_files_are_counted(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {
            "bin.dat": b"needle\x00\x01\x02needle",
            "bad.txt": b"caf\xe9 needle \xff\xfe\n",
            "bom.txt": b"\xef\xbb\xbfneedle first\n",
            "ok.txt": "needle\n",
        }
    )
    big = root / "big.txt"
    with big.open("wb") as fh:
        fh.write(b"needle\n" + b"x" * (50 * 1024 * 1024) + b"\n")
    with Workbench(root, build_index=False) as wb:
        res = wb.search("needle").to_json()
    paths = [m["path"] for m in res["matches"]]
    assert paths == ["bad.txt", "bom.txt", "ok.txt"]
    assert res["skipped"]["binary"] == 1 and res["skipped"]["too_large"] == 1
    assert res["complete"] is False and "size cap" in res["incomplete_reason"]
    bom = next(m for m in res["matches"] if m["path"] == "bom.txt")
    assert (bom["line"], bom["column"], bom["start_byte"]) == (1, 1, 3)
    bad = next(m for m in res["matches"] if m["path"] == "bad.txt")
    assert bad["column"] == 6 and bad["start_byte"] == 5


def test_unreadable_file_is_counted_not_fatal(
    make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_workspace({"a.txt": "needle\n", "b.txt": "needle\n"})
    real_open = os.open

    def fake_open(path: str | os.PathLike[str], flags: int, *args: int, **kw: int) -> int:
        if str(path).endswith("b.txt"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args, **kw)

    monkeypatch.setattr(os, "open", fake_open)
    with Workbench(root, build_index=False) as wb:
        res = wb.search("needle").to_json()
    assert [m["path"] for m in res["matches"]] == ["a.txt"]
    assert res["complete"] is False and res["incomplete_reason"]
