"""The server table, configuration overrides, doctor data and clangd's compile database."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from sleuth.errors import InvalidPath, InvalidQuery, Unsupported
from sleuth.lsp_bridge import SERVERS, ServerPool, server_status
from sleuth.lsp_bridge.compile_db import prepare_compile_db
from sleuth.lsp_bridge.servers import language_of, resolve_spec
from sleuth.workspace import Workspace
from tests.conftest import UserServers

from .conftest import write_tree


@pytest.mark.parametrize(
    ("path", "lang"),
    [("a/b.py", "python"), ("x.pyi", "python"), ("m.ts", "typescript"), ("v.tsx", "typescript"),
     ("w.mjs", "javascript"), ("c.c", "c"), ("h.h", "c"), ("k.cpp", "cpp"), ("g.go", "go"),
     ("r.rs", "rust"), ("README.md", None)],
)  # fmt: skip
def test_language_of(path: str, lang: str | None) -> None:
    assert language_of(path) == lang


def test_every_language_has_a_server_with_an_install_hint() -> None:
    assert set(SERVERS) == {"python", "typescript", "javascript", "c", "cpp", "go", "rust"}
    assert [s.name for s in SERVERS["python"]] == ["ty", "jedi-language-server", "basedpyright"]
    for specs in SERVERS.values():
        assert all(spec.install for spec in specs)


def test_overrides_keep_known_quirks_and_default_arguments(user_servers: UserServers) -> None:
    spec = resolve_spec("python", {"servers": {"python": ["jedi-language-server"]}})
    assert spec.name == "jedi-language-server" and spec.encodings == ("utf-32",)
    assert resolve_spec("python", {"servers": {"python": "ty"}}).command == ("ty", "server")
    assert resolve_spec("python", {"servers": {"python": ["ty", "server"]}}).command == (
        "ty",
        "server",
    )
    based = resolve_spec("python", {"servers": {"python": "basedpyright"}})
    assert based.command == ("basedpyright-langserver", "--stdio")
    with pytest.raises(InvalidQuery, match=r"\[tool.sleuth.servers\] \(pyproject.toml"):
        resolve_spec("python", {"servers": {"python": []}})
    user_servers({"go": ["/opt/my-gopls", "-rpc.trace"], "python": ["/opt/ty"]})
    custom = resolve_spec("go", {"servers": {"go": "gopls"}})  # the user's own file wins
    assert custom.command == ("/opt/my-gopls", "-rpc.trace") and custom.languages == ("go",)
    assert resolve_spec("python", {}).command == ("/opt/ty", "server")


@pytest.mark.parametrize(
    "command",
    [
        ["sh", "-c", "touch PWNED"],
        "sh -c 'touch PWNED'",
        ["/opt/my-gopls"],
        ["./ty"],
        ["bash"],
        ["ty", "server", "--config-file", "x.toml"],
        ["clangd", "--query-driver=**"],
        "jedi-language-server --log-file /tmp/x",
    ],
)
def test_a_workspace_may_not_name_a_command(command: str | list[str]) -> None:
    """A repository's own configuration picks a known server by its bare name, nothing more:
    a command there would run when an agent opens the workspace (docs/SAFETY.md#what-runs)."""
    with pytest.raises(Unsupported, match=r"may only pick a known server by its bare name"):
        resolve_spec("python", {"servers": {"python": command}})


def test_the_user_configuration_is_read_from_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SLEUTH_CONFIG")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    (tmp_path / "sleuth").mkdir()
    (tmp_path / "sleuth" / "config.toml").write_text('[servers]\npython = ["my-server"]\n')
    assert resolve_spec("python", {}).command == ("my-server",)
    (tmp_path / "sleuth" / "config.toml").write_text("[servers\n")
    with pytest.raises(InvalidQuery, match=r"config.toml: not valid TOML"):
        resolve_spec("python", {})


def test_status_rows_for_doctor(tmp_path: Path) -> None:
    rows = server_status()
    assert [r["language"] for r in rows] == list(SERVERS)
    for row in rows:
        assert set(row) == {"language", "server", "command", "found", "version", "install"}
        assert isinstance(row["found"], bool)
    pool = ServerPool(Workspace(tmp_path))
    try:
        assert pool.status() == rows
        assert pool.language_of("x.ts") == "typescript"
        with pytest.raises(Unsupported):
            pool.server_name("cobol")
    finally:
        pool.close()


def test_generated_compile_database(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path,
        {
            "src/a.c": "int a;\n",
            "lib/b.cpp": "int b;\n",
            "inc/x.h": "",
            "compile_flags.txt": "-DX=1\n",
        },
    )
    folder = prepare_compile_db(Workspace(root))
    assert folder == root / ".sleuth" / "clangd"
    entries = json.loads((folder / "compile_commands.json").read_text())
    by_file = {Path(e["file"]).relative_to(root).as_posix(): e["arguments"] for e in entries}
    assert set(by_file) == {"src/a.c", "lib/b.cpp"}
    assert by_file["src/a.c"][:2] == ["clang", "-xc"]
    assert by_file["lib/b.cpp"][:2] == ["clang++", "-xc++"]
    assert f"-I{root / 'inc'}" in by_file["src/a.c"] and "-DX=1" in by_file["src/a.c"]
    assert not (root / "compile_commands.json").exists()


def test_the_projects_own_compile_database_is_copied(tmp_path: Path) -> None:
    own = [{"directory": str(tmp_path), "file": str(tmp_path / "a.c"), "command": "cc -c a.c"}]
    root = write_tree(tmp_path, {"a.c": "int a;\n", "build/compile_commands.json": json.dumps(own)})
    folder = prepare_compile_db(Workspace(root))
    assert json.loads((folder / "compile_commands.json").read_text()) == own


def test_a_planted_state_folder_never_sends_the_database_out_of_the_root(tmp_path: Path) -> None:
    # .sleuth/ can arrive with the tree (docs/SAFETY.md#damaged-or-planted-state): a symlink at
    # the temporary file's name wrote the database over the file it named
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    root = write_tree(tmp_path / "ws", {"a.c": "int a;\n", ".sleuth/.gitignore": "*\n"})
    (root / ".sleuth" / "clangd").mkdir()
    (root / ".sleuth" / "clangd" / "compile_commands.tmp").symlink_to(victim)
    os.mkfifo(root / ".sleuth" / "clangd" / "compile_commands.json")  # never opened
    made: list[Path] = []
    ws = Workspace(root)
    worker = threading.Thread(target=lambda: made.append(prepare_compile_db(ws)), daemon=True)
    worker.start()
    worker.join(60)  # a regression blocks in open(): the daemon thread is left behind
    (folder,) = made
    assert victim.read_text() == "precious\n"
    entries = json.loads((folder / "compile_commands.json").read_text())
    assert [Path(e["file"]).name for e in entries] == ["a.c"]


def test_a_planted_symlink_where_clangd_writes_its_index_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = write_tree(tmp_path / "ws", {"a.c": "int a;\n", ".sleuth/.gitignore": "*\n"})
    (root / ".sleuth" / "clangd" / ".cache").mkdir(parents=True)
    (root / ".sleuth" / "clangd" / ".cache" / "clangd").symlink_to(outside)
    with pytest.raises(InvalidPath, match="symlink"):
        prepare_compile_db(Workspace(root))
    assert list(outside.iterdir()) == []


def test_root_build_files_are_read_as_searched_files_are(tmp_path: Path) -> None:
    # a FIFO never opened (it would hang the server's start), a link out of the root not read
    secret = tmp_path / "secret.json"
    secret.write_text('[{"directory": "/", "file": "/etc/x.c", "command": "cc"}]')
    root = write_tree(tmp_path / "ws", {"a.c": "int a;\n"})
    os.mkfifo(root / "compile_flags.txt")
    (root / "compile_commands.json").symlink_to(secret)
    made: list[Path] = []
    ws = Workspace(root)
    worker = threading.Thread(target=lambda: made.append(prepare_compile_db(ws)), daemon=True)
    worker.start()
    worker.join(60)
    (folder,) = made
    entries = json.loads((folder / "compile_commands.json").read_text())
    assert [Path(e["file"]).name for e in entries] == ["a.c"]
