"""``Workspace``: roots, path validation, cloaking, configuration, listing options, state."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sleuth.errors import InvalidPath, NotFound
from sleuth.workspace import FileEntry, FileList, Workspace

MakeWs = Callable[[dict[str, str | bytes]], Path]

BASE: dict[str, str | bytes] = {
    "src/app.py": "print(1)\n",
    "src/util/helpers.py": "x = 1\n",
    "README.md": "# hi\n",
    "a-b/x.py": "",
    "a/x.py": "",
}


def paths(listing: FileList) -> list[str]:
    return [f.path for f in listing.files]


def test_root_must_exist_and_be_a_folder(tmp_path: Path) -> None:
    with pytest.raises(NotFound):
        Workspace(tmp_path / "missing")
    (tmp_path / "f").write_text("x")
    with pytest.raises(InvalidPath):
        Workspace(tmp_path / "f")
    ws = Workspace(str(tmp_path / "." / ""))
    assert ws.root == tmp_path.resolve() and ws.root.is_absolute()


def test_validate_path_spellings(make_workspace: MakeWs) -> None:
    ws = Workspace(make_workspace(BASE))
    assert ws.validate_path("") == ws.validate_path(".") == ws.validate_path("/") == ""
    assert ws.validate_path("src/") == "src"
    assert ws.validate_path("./src//app.py") == "src/app.py"
    assert ws.validate_path("src/../README.md") == "README.md"


@pytest.mark.parametrize("bad", ["/etc/passwd", "../x", "src/../../x", "a\x00"])
def test_validate_path_invalid(make_workspace: MakeWs, bad: str) -> None:
    ws = Workspace(make_workspace(BASE))
    with pytest.raises(InvalidPath):
        ws.validate_path(bad)


def test_outward_symlink_is_invalid(make_workspace: MakeWs, tmp_path: Path) -> None:
    root = make_workspace(BASE)
    (tmp_path / "outside.txt").write_text("secret")
    (root / "out.txt").symlink_to(tmp_path / "outside.txt")
    (root / "outdir").symlink_to(tmp_path)
    ws = Workspace(root)
    for p in ("out.txt", "outdir", "outdir/outside.txt"):
        with pytest.raises(InvalidPath) as info:
            ws.validate_path(p)
        assert "symlink" in info.value.message
    assert "out.txt" not in paths(ws.list_files())
    with pytest.raises(InvalidPath):
        ws.read("out.txt")


def test_missing_and_denied_answer_alike(make_workspace: MakeWs) -> None:
    root = make_workspace(
        {
            **BASE,
            "secrets/key.txt": "k",
            "cert.pem": "p",
            "pyproject.toml": '[tool.sleuth]\ndeny = ["secrets/**", "*.pem"]\n',
        }
    )
    ws = Workspace(root)
    errors = []
    for p in ("nope.txt", "cert.pem", "secrets", "secrets/key.txt", "secrets/none.txt"):
        with pytest.raises(NotFound) as info:
            ws.validate_path(p)
        errors.append(info.value.message.replace(p, "X"))
    assert len(set(errors)) == 1
    assert errors[0].startswith("path not found: X")
    assert ws.is_denied("secrets/key.txt") and ws.is_denied("a/b/c.pem")
    assert not ws.is_denied("src/app.py")
    listed = paths(ws.list_files())
    assert "cert.pem" not in listed and not any(p.startswith("secrets") for p in listed)
    assert ws.list_files().skipped.to_json() == {"binary": 0, "too_large": 0, "undecodable": 0}
    with pytest.raises(NotFound):
        ws.read("secrets/key.txt")
    with pytest.raises(NotFound):
        ws.stamp("cert.pem")
    with pytest.raises(NotFound):
        ws.list_files("secrets")


def test_deny_from_sleuth_toml_and_union(make_workspace: MakeWs) -> None:
    root = make_workspace(
        {
            "a.key": "",
            "b.txt": "",
            "c.env": "",
            ".sleuth.toml": 'deny = ["*.key"]\n',
            "pyproject.toml": '[tool.sleuth]\ndeny = ["*.env"]\nmax_filesize = 100\n',
        }
    )
    ws = Workspace(root)
    assert ws.config["deny"] == ["*.env", "*.key"]
    assert ws.config["max_filesize"] == 100 and ws.max_filesize == 100
    assert paths(ws.list_files()) == [".sleuth.toml", "b.txt", "pyproject.toml"]


def test_symlink_into_denied_target_is_cloaked(make_workspace: MakeWs) -> None:
    root = make_workspace({"secrets/k": "k", ".sleuth.toml": 'deny = ["secrets"]\n'})
    (root / "alias").symlink_to("secrets/k")
    ws = Workspace(root)
    assert paths(ws.list_files()) == [".sleuth.toml"]
    with pytest.raises(NotFound):
        ws.validate_path("alias")


@pytest.mark.parametrize(
    "text", ["[tool.sleuth\n", '[tool.sleuth]\ndeny = "x"\n', "[tool.sleuth]\nmax_filesize = -1\n"]
)
def test_bad_config_says_which_file(make_workspace: MakeWs, text: str) -> None:
    root = make_workspace({"pyproject.toml": text})
    with pytest.raises(InvalidPath) as info:
        Workspace(root)
    assert "pyproject.toml" in info.value.message and "fix" in info.value.message


def test_list_files_sorted_by_code_points(make_workspace: MakeWs) -> None:
    ws = Workspace(make_workspace(BASE))
    listed = paths(ws.list_files())
    assert listed == sorted(listed)
    assert listed.index("a-b/x.py") < listed.index("a/x.py")
    entry = next(f for f in ws.list_files().files if f.path == "src/app.py")
    assert entry == FileEntry("src/app.py", 9, entry.mtime_ns, entry.ctime_ns)
    assert entry.mtime_ns > 0 and entry.ctime_ns >= entry.mtime_ns


def test_scope_folder_and_file(make_workspace: MakeWs) -> None:
    root = make_workspace(
        {**BASE, ".gitignore": "ignored.py\nbuild/\n", "src/ignored.py": "", "build/out.py": ""}
    )
    ws = Workspace(root)
    assert paths(ws.list_files("src")) == ["src/app.py", "src/util/helpers.py"]
    assert paths(ws.list_files("src/util")) == ["src/util/helpers.py"]
    # an explicit file or folder is listed even when ignored (rg's explicit paths)
    assert paths(ws.list_files("src/ignored.py")) == ["src/ignored.py"]
    assert paths(ws.list_files("build")) == ["build/out.py"]
    assert "build/out.py" not in paths(ws.list_files())
    with pytest.raises(NotFound):
        ws.list_files("nope")


def test_include_exclude(make_workspace: MakeWs) -> None:
    ws = Workspace(make_workspace(BASE))
    assert paths(ws.list_files(include=["*.py"], exclude=["util"])) == [
        "a-b/x.py",
        "a/x.py",
        "src/app.py",
    ]
    assert paths(ws.list_files(include=["src/*.py"])) == ["src/app.py"]
    assert paths(ws.list_files(include=["src/**"])) == ["src/app.py", "src/util/helpers.py"]
    assert paths(ws.list_files(include=["src"])) == ["src/app.py", "src/util/helpers.py"]
    assert paths(ws.list_files(exclude=["**/*.py"])) == ["README.md"]
    assert paths(ws.list_files(include=["*.py", "!a*/**"])) == ["src/app.py", "src/util/helpers.py"]
    assert paths(ws.list_files("src", exclude=["src"])) == []


def test_git_and_state_folders_never_listed(make_workspace: MakeWs) -> None:
    root = make_workspace(
        {
            "a.py": "",
            ".git/config": "",
            "sub/.git/HEAD": "",
            "sub/b.py": "",
            "sub/.sleuth/c.py": "",
            ".github/workflows/ci.yml": "",
        }
    )
    ws = Workspace(root)
    state = ws.state_dir
    assert state == root / ".sleuth" and (state / ".gitignore").read_text() == "*\n"
    (state / "index.db").write_bytes(b"x")
    assert paths(ws.list_files()) == [
        ".github/workflows/ci.yml",
        "a.py",
        "sub/.sleuth/c.py",
        "sub/b.py",
    ]
    with pytest.raises(InvalidPath, match="git's own data"):  # docs/SAFETY.md
        ws.list_files(".git")
    assert paths(ws.list_files("sub")) == ["sub/.sleuth/c.py", "sub/b.py"]


def test_no_ignore_still_cloaks_and_skips(make_workspace: MakeWs) -> None:
    root = make_workspace(
        {
            ".gitignore": "*.log\n",
            "a.log": "",
            "k.pem": "",
            ".sleuth.toml": 'deny = ["*.pem"]\n',
            ".git/x": "",
        }
    )
    listed = paths(Workspace(root, no_ignore=True).list_files())
    assert listed == [".gitignore", ".sleuth.toml", "a.log"]
    assert Workspace(root).list_files().ignored == 1


def test_too_large_counted_not_listed(make_workspace: MakeWs) -> None:
    root = make_workspace({"big.txt": "x" * 101, "ok.txt": "x" * 100})
    listing = Workspace(root, max_filesize=100).list_files()
    assert paths(listing) == ["ok.txt"] and listing.skipped.too_large == 1
    assert Workspace(root).max_filesize == 8 * 1024 * 1024


def test_symlinks_and_special_files(make_workspace: MakeWs) -> None:
    root = make_workspace({"src/real.py": "x", "d/inner.py": ""})
    (root / "link.py").symlink_to("src/real.py")
    (root / "linkdir").symlink_to("d")
    (root / "dangling").symlink_to("missing")
    os.mkfifo(root / "pipe")
    ws = Workspace(root)
    listing = ws.list_files()
    assert paths(listing) == ["d/inner.py", "link.py", "src/real.py"]
    assert next(f for f in listing.files if f.path == "link.py").size == 1
    assert paths(ws.list_files("pipe")) == []
    # never waits on a fifo (opening one for reading blocks until a writer comes): read it in a
    # thread whose deadline only turns a hang into a failure
    answers: list[object] = []
    reader = threading.Thread(target=lambda: answers.append(ws.read("pipe")), daemon=True)
    reader.start()
    reader.join(60)
    waited = reader.is_alive()
    if waited:  # give the blocked open() its writer, so the thread ends
        with contextlib.suppress(OSError):
            os.close(os.open(root / "pipe", os.O_WRONLY | os.O_NONBLOCK))
    assert not waited, "read() waited for a writer on the fifo"
    assert answers == [None]


def test_list_files_prunes_ignored_folders_on_this_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    """What makes listing this repository fast (its speed: ``benchmarks/text.py``, whose cold
    CLI runs list the tree): ignored folders (``.venv/``, caches) and ``.git/`` are pruned, not
    walked and filtered, and no folder is read twice."""
    repo = Path(__file__).resolve().parents[2]
    ws = Workspace(repo)
    scanned: list[str] = []
    real_open = os.open

    def recording(path: str, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & os.O_DIRECTORY:  # the walker scans each folder through a descriptor
            scanned.append(os.path.relpath(path, repo).replace(os.sep, "/"))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", recording)
    listing = ws.list_files()
    monkeypatch.undo()
    assert "sleuth/workspace/walker.py" in paths(listing)
    assert not any(p.startswith((".venv/", ".git/")) for p in paths(listing))
    pruned = (".venv", ".git", ".mypy_cache", ".ruff_cache", ".pytest_cache", ".hypothesis")
    assert "sleuth" in scanned and "tests/workspace" in scanned  # the recorder saw the walk
    assert not [f for f in scanned if f.split("/")[0] in pruned or "__pycache__" in f.split("/")]
    assert len(scanned) == len(set(scanned))


def test_unrelated_pyproject_is_not_parsed(make_workspace: MakeWs) -> None:
    # another tool's broken pyproject.toml must not stop sleuth; it cannot configure sleuth
    root = make_workspace({"pyproject.toml": "[tool.black\n", "a.py": ""})
    ws = Workspace(root)
    assert ws.config == {} and ws.max_filesize == 8 * 1024 * 1024
    assert paths(ws.list_files()) == ["a.py", "pyproject.toml"]


def test_sleuth_toml_tool_table_and_precedence(make_workspace: MakeWs) -> None:
    root = make_workspace(
        {
            ".sleuth.toml": "max_filesize = 5\n[tool.sleuth]\ndeny = ['x/**']\n",
            "pyproject.toml": "[tool.sleuth]\nmax_filesize = 50\nother = 1\n",
            "x/y.txt": "",
            "big.txt": "123456",
        }
    )
    ws = Workspace(root)
    assert ws.config["max_filesize"] == 5 and ws.config["other"] == 1
    listing = ws.list_files()
    assert paths(listing) == [] and listing.skipped.too_large == 3
    assert Workspace(root, max_filesize=10_000).list_files().paths == [
        ".sleuth.toml",
        "big.txt",
        "pyproject.toml",
    ]
