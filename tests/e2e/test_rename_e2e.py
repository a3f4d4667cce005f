"""Native rename end to end through the CLI (and one MCP session), docs/edits.md#rename.

On the projects of ``test_symbols_e2e.py`` (Python with ty and with jedi-language-server,
TypeScript with tsc 7, C with clangd), every step is its own ``sleuth`` process: ``search
symbols:total`` gives the declaration's ``:match`` reference, ``rename`` (both spellings, ``REF
NEW`` and ``REF#NEW``, JSON and human output) renames the function in every file that uses it,
and then the project's own tests still pass — pytest, tsc + node, gcc — so a file the rename
missed (an import, a header prototype, the tests) fails them. The unrelated local variable
``total`` keeps its name and is listed in ``untouched`` for review. Without a semantic server
(Ruby; Python with its server forced missing) ``rename`` is exit 2 ``unsupported`` and nothing
is written.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from sleuth.api import Workbench
from sleuth.lsp_bridge.servers import find_binary
from tests.e2e.conftest import ERROR_KEYS, mcp_session, run_cli
from tests.e2e.test_symbols_e2e import (
    MISSING_CONFIG,
    NEW_NAME,
    PROJECTS,
    PY_FILES,
    RUBY_FILES,
    WORD,
    Project,
    occurrences,
    related,
    require_server,
    stray_clangd_state,
    write_tree,
)

RENAME_KEYS = {
    "result",
    "source",
    "refreshed",
    "complete",
    "ranges",
    "changed",
    "diff",
    "diff_truncated",
    "untouched",
}
WORD_RE = re.compile(rf"(?<![\w$]){WORD}(?![\w$])")
STYLE = {
    "ty": ("json", "two"),
    "jedi": ("human", "hash"),
    "typescript": ("json", "hash"),
    "c": ("human", "two"),
}
"""Per project: the output form of the CLI calls and the rename spelling (REF NEW / REF#NEW)."""


def sleuth(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``sleuth ARGS --root ROOT``; never a traceback."""
    proc = run_cli([*args, "--root", str(root)])
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


def ok(root: Path, *args: str) -> dict[str, Any]:
    proc = sleuth(root, *args, "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)
    assert isinstance(data, dict)
    return data


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file of the workspace outside ``.sleuth/``, by relative path."""
    out = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".sleuth"]
        for name in files:
            path = Path(folder, name)
            out[path.relative_to(root).as_posix()] = path.read_bytes()
    return out


def run_project_tests(project: Project, root: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """The project's own tests, with build output outside the workspace."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    out.mkdir(exist_ok=True)
    if project.language == "python":
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
        return subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=120)
    if project.language == "typescript":
        tsc = find_binary("tsc")
        assert tsc is not None, "tsc 7 is not installed: run scripts/install_tools.sh"
        built = subprocess.run(
            [tsc, "-p", "tsconfig.json", "--outDir", str(out)],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if built.returncode != 0:
            return built
        return subprocess.run(
            ["node", str(out / "shop.test.js")],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    binary = out / "test_cart"
    sources = sorted(p for p in project.files if p.endswith(".c"))
    built = subprocess.run(
        ["gcc", "-std=c99", "-Wall", "-Werror", "-Isrc", *sources, "-o", str(binary)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if built.returncode != 0:
        return built
    return subprocess.run(
        [str(binary)], cwd=root, env=env, capture_output=True, text=True, timeout=120
    )


def declaration_ref(project: Project, root: Path, form: str) -> str:
    """``SEARCH#H:n:match`` of the function's declaration, from a ``symbols:total`` search
    printed as JSON or for people (``#n path:line:col  function total  [semantic] id=…``)."""
    if form == "json":
        data = ok(root, "search", "symbols:total")
        (match,) = [m for m in data["matches"] if m["path"] == project.declaration]
        assert match["symbol"]["precision"] == "semantic"
        return str(match["ref"]["match"])
    proc = sleuth(root, "search", "symbols:total")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    result = lines[0].split()[0]
    assert re.fullmatch(r"SEARCH#[0-9a-f]+", result), lines[0]
    found = [
        re.match(r"#(\d+) ", line)
        for line in lines
        if re.fullmatch(
            rf"#\d+ {re.escape(project.declaration)}:\d+:\d+  "
            rf"{project.kind} {WORD}  \[semantic\] id=[0-9a-f]{{12}}",
            line,
        )
    ]
    assert len(found) == 1 and found[0] is not None, proc.stdout
    return f"{result}:{found[0].group(1)}:match"


@pytest.mark.parametrize("name", list(PROJECTS))
def test_rename_across_files_then_the_projects_own_tests_pass(name: str, tmp_path: Path) -> None:
    project = PROJECTS[name]
    require_server(project)
    root = write_tree(tmp_path / "ws", project.tree)
    form, spelling = STYLE[name]
    ref = declaration_ref(project, root, form)
    args = ["rename", f"{ref}#{NEW_NAME}"] if spelling == "hash" else ["rename", ref, NEW_NAME]
    renamed = {p: WORD_RE.sub(NEW_NAME, t) for p, t in related(project).items()}
    changed = sorted(p for p, t in renamed.items() if t != project.files[p])
    unrelated = sorted(occurrences({project.unrelated: project.files[project.unrelated]}))
    if form == "json":
        data = ok(root, *args)
        result = data["result"]
        assert set(data) == RENAME_KEYS
        assert (data["source"], data["complete"], data["refreshed"]) == (ref, True, False)
        assert data["changed"] == changed
        assert [r["text"] for r in data["ranges"]] == [NEW_NAME] * len(
            occurrences(related(project))
        )
        assert [(u["path"], u["line"]) for u in data["untouched"]] == [
            (p, line) for p, line, _ in unrelated
        ]
    else:
        proc = sleuth(root, *args)
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.splitlines()
        result = lines[0].split()[0]
        assert re.fullmatch(
            rf"RESULT#[0-9a-f]+ rename: {len(occurrences(related(project)))} "
            rf"occurrences in {len(changed)} files",
            lines[0],
        )
        assert f"--- a/{project.declaration}" in lines
        at = lines.index("not renamed (text matches, review them):")
        text = project.files[project.unrelated].split("\n")
        assert lines[at + 1 :] == [
            f"  {p}:{line}  {text[line - 1].strip()}" for p, line, _ in unrelated
        ]
    files = snapshot(root)
    for path, text in project.tree.items():
        expected = renamed.get(path, text)
        assert files.pop(path) == expected.encode(), path
    assert files == {}  # nothing else was written into the workspace
    after = run_project_tests(project, root, tmp_path / "out")
    assert after.returncode == 0, after.stdout + after.stderr
    if project.server == "clangd":
        assert stray_clangd_state(root) == []
    # undo (issue 20): the tree is back, and the answer selects the old names, not whole files
    undone = ok(root, "undo", result)
    files = snapshot(root)
    for path, text in project.tree.items():
        assert files.pop(path) == text.encode(), path
    assert undone["changed"] == changed
    assert [r["text"] for r in undone["ranges"]] == [WORD] * len(occurrences(related(project)))
    assert all(r["line"] == r["end_line"] for r in undone["ranges"])
    assert len(json.dumps(undone["ranges"])) < 200 * len(undone["ranges"])


@pytest.mark.parametrize("case", ["ruby", "python-configured-missing"])
def test_rename_without_a_semantic_server_writes_nothing(case: str, tmp_path: Path) -> None:
    """Ruby has no server: ``unsupported`` (exit 2). A Python server configured in
    ``[servers]`` but not installed: ``server_unavailable`` (exit 5) naming how to install it."""
    files = RUBY_FILES if case == "ruby" else {**PY_FILES, ".sleuth.toml": MISSING_CONFIG}
    root = write_tree(tmp_path, dict(files))
    with Workbench(root) as wb:  # its references are stored in .sleuth/ for the CLI
        if case == "ruby":
            data = wb.search("symbols:total").to_json()
            ref = next(m for m in data["matches"] if m["symbol"]["kind"] != "reference")
            assert ref["symbol"]["precision"] == "syntactic"
        else:
            ref = wb.search("def total", path="shop/models.py").to_json()["matches"][0]
    code, exit_code = ("unsupported", 2) if case == "ruby" else ("server_unavailable", 5)
    before = snapshot(root)
    for args in (
        ["rename", ref["ref"]["match"], NEW_NAME, "--json"],
        ["rename", f"{ref['ref']['match']}#{NEW_NAME}"],
    ):
        proc = sleuth(root, *args)
        assert proc.returncode == exit_code, proc.stdout + proc.stderr
        if "--json" in args:
            error = json.loads(proc.stdout)["error"]
            assert set(error) == ERROR_KEYS and error["code"] == code
            hint = "sleuth doctor" if case == "ruby" else "pip install basedpyright"
            assert hint in error["message"]
        else:
            assert proc.stdout == "" and proc.stderr.startswith(f"sleuth: error[{code}]: ")
    assert snapshot(root) == before


def test_mcp_rename_and_doctor_answer_the_cli_json(tmp_path: Path) -> None:
    project = PROJECTS["ty"]
    require_server(project)
    root = write_tree(tmp_path, project.tree)

    async def go() -> tuple[Any, Any, Any]:
        async with mcp_session(root) as session:
            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert tools["rename"].annotations.read_only_hint is False
            assert tools["doctor"].annotations.read_only_hint is True
            found = await session.call_tool("search", {"query": "symbols:total"})
            assert found.is_error is False
            (match,) = found.structured_content["matches"]
            assert f"function {WORD}  [semantic] id={match['symbol']['id']}" in (
                found.content[0].text
            )
            renamed = await session.call_tool(
                "rename", {"ref": f"{match['ref']['match']}#{NEW_NAME}"}
            )
            doctor = await session.call_tool("doctor", {})
            return found, renamed, doctor

    _, renamed, doctor = anyio.run(go)
    assert renamed.is_error is False
    data = renamed.structured_content
    assert set(data) == RENAME_KEYS
    assert data["changed"] == ["shop/models.py", "shop/service.py", "tests/test_shop.py"]
    text = renamed.content[0].text.splitlines()
    assert text[0] == f"{data['result']} rename: 7 occurrences in 3 files"
    assert "not renamed (text matches, review them):" in text
    for path, content in related(project).items():
        assert (root / path).read_text() == WORD_RE.sub(NEW_NAME, content)
    assert (root / project.unrelated).read_text() == project.files[project.unrelated]
    assert doctor.is_error is False
    assert doctor.structured_content == {
        "servers": json.loads(sleuth(root, "doctor", "--json").stdout),
        "recovered": json.loads(sleuth(root, "doctor", "--recover", "--json").stdout)["recovered"],
    }
    assert doctor.content[0].text.splitlines()[0].split() == [
        "language",
        "server",
        "found",
        "version",
        "install",
    ]
