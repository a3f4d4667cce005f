"""Rename is safe against outside edits, name clashes and cloaking (issue 15, docs/edits.md#rename).

A small copy of the shape of the requests package (``to_native_string`` declared in
``_internal_utils.py``, imported by five other modules, ``models.py`` also importing
``unicode_is_ascii``) renamed with the real servers (ty, jedi-language-server) in a
``Workbench(watch=True)``, as the MCP server runs it:

* a file the rename touches (not the declaration's) edited on disk just before ``rename``, or
  between the server's answer and the write: the answer is a correct rename of the new bytes or
  ``stale_reference`` with nothing written, never the new name written at the old offsets;
* renaming onto ``unicode_is_ascii``, which ``models.py`` already imports: ``conflict`` naming
  where the name is, nothing written; ``force=True`` renames anyway;
* a denied file using the symbol changes nothing in the answer: the same rename in a workspace
  without that file answers the same, and the denied file is never edited.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from sleuth.api import Workbench
from sleuth.errors import Conflict, StaleReference
from sleuth.lsp_bridge.pool import ServerPool
from tests.e2e.test_rename_e2e import snapshot
from tests.e2e.test_symbols_e2e import JEDI_CONFIG, write_tree
from tests.lsp_bridge.conftest import require_server

OLD = "to_native_string"
NEW = "as_native"
WORD_RE = re.compile(rf"(?<![\w$]){OLD}(?![\w$])")

FILES: dict[str, str] = {
    "reqs/__init__.py": '"""A tiny HTTP library."""\n',
    "reqs/_internal_utils.py": '''"""Helpers shared inside the package."""


def to_native_string(string, encoding="ascii"):
    """The native string type of ``string``."""
    if isinstance(string, str):
        return string
    return string.decode(encoding)


def unicode_is_ascii(u_string):
    """Whether ``u_string`` is all ASCII."""
    try:
        u_string.encode("ascii")
        return True
    except UnicodeEncodeError:
        return False
''',
    "reqs/auth.py": '''"""Authentication headers."""

from base64 import b64encode

from ._internal_utils import to_native_string


def basic_auth_str(username, password):
    """The value of a Basic ``Authorization`` header."""
    token = b64encode(b":".join((username, password))).strip()
    return "Basic " + to_native_string(token)


def proxy_auth_str(username, password):
    return "Proxy " + to_native_string(basic_auth_str(username, password))
''',
    "reqs/models.py": '''"""Requests as sent."""

from ._internal_utils import to_native_string, unicode_is_ascii


class Request:
    def __init__(self, method, host):
        self.method = to_native_string(method.upper())
        self.host = host if unicode_is_ascii(host) else host.encode("idna").decode()
''',
    "reqs/cookies.py": '''"""Cookie jars."""

from ._internal_utils import to_native_string


def cookie_header(name, value):
    return to_native_string(name) + "=" + to_native_string(value)
''',
    "reqs/utils.py": '''"""Utilities."""

from ._internal_utils import to_native_string


def header_value(value):
    return to_native_string(value).strip()
''',
    "reqs/sessions.py": '''"""Sessions."""

from ._internal_utils import to_native_string


def method_name(method):
    return to_native_string(method).upper()
''',
}
TOUCHED = sorted(p for p, t in FILES.items() if OLD in t)
CONFIGS: dict[str, dict[str, str]] = {"ty": {}, "jedi": {"pyproject.toml": JEDI_CONFIG}}
SERVER_NAMES = {"ty": "ty", "jedi": "jedi-language-server"}


def make_root(tmp_path: Path, server: str, extra: dict[str, str] | None = None) -> Path:
    require_server("python", SERVER_NAMES[server])
    return write_tree(tmp_path, {**FILES, **CONFIGS[server], **(extra or {})})


def declaration_ref(wb: Workbench) -> str:
    data = wb.search(f"symbols:{OLD}").to_json()
    (match,) = [m for m in data["matches"] if m["path"] == "reqs/_internal_utils.py"]
    assert match["symbol"]["precision"] == "semantic"
    return str(match["ref"]["match"])


def renamed(files: dict[str, bytes], new: str = NEW) -> dict[str, bytes]:
    """``files`` with every whole-word old name replaced (no file here mentions it in text)."""
    return {p: WORD_RE.sub(new, t.decode()).encode() for p, t in files.items()}


def warm(wb: Workbench, ref: str) -> None:
    """Let the server read every file once, so a later outside edit is one it has not seen,
    once the watcher is trusted (its generation then lags an edit by its debounce)."""
    for _ in range(400):
        if wb.workspace.generation is not None:
            break
        time.sleep(0.02)
    assert wb.workspace.generation is not None, "the file watcher never settled"
    data = wb.search(f"symbols:{OLD}", navigation="references").to_json()
    assert {m["path"] for m in data["matches"]} == set(TOUCHED)
    assert ref


@contextmanager
def lagging_watcher(wb: Workbench) -> Iterator[None]:
    """Hold the watcher's events back for the block: its generation (and the listing cache)
    then lag every edit made inside, as they do for a few milliseconds after any edit."""
    watcher = wb.workspace._watcher
    assert watcher is not None and watcher._on_change is not None
    real = watcher._on_change
    release = threading.Event()

    def late(changes: set[tuple[str, str]], generation: int) -> None:
        release.wait(120)
        real(changes, generation)

    watcher._on_change = late
    try:
        yield
    finally:
        release.set()
        watcher._on_change = real


@pytest.mark.parametrize("server", ["ty", "jedi"])
def test_outside_edit_just_before_rename_is_renamed_at_its_new_offsets(
    server: str, tmp_path: Path
) -> None:
    root = make_root(tmp_path, server)
    with Workbench(root, watch=True) as wb:
        ref = declaration_ref(wb)
        warm(wb, ref)
        before = snapshot(root)
        edited = b"# moved down by one line\n" + before["reqs/auth.py"]
        before["reqs/auth.py"] = edited
        with lagging_watcher(wb):
            (root / "reqs/auth.py").write_bytes(edited)
            answer = wb.rename(ref, NEW).to_json()
    assert snapshot(root) == {**before, **renamed({p: before[p] for p in TOUCHED})}
    assert answer["changed"] == TOUCHED
    if server == "ty":  # jedi's edits are character hunks, not whole names
        count = sum(len(WORD_RE.findall(FILES[p])) for p in TOUCHED)
        assert [r["text"] for r in answer["ranges"]] == [NEW] * count
        auth_lines = [r["line"] for r in answer["ranges"] if r["path"] == "reqs/auth.py"]
        assert auth_lines == [6, 12, 16]  # one line further down than in FILES


def _writer_after_rename_answers(
    monkeypatch: pytest.MonkeyPatch, root: Path, times: int | None
) -> list[bytes]:
    """After the server answers ``textDocument/rename`` (the first ``times`` answers, every
    one for None), ``auth.py`` gets a new first line; returns the bytes written, in order."""
    written: list[bytes] = []
    real_ask = ServerPool._ask

    async def ask(self: ServerPool, session: Any, method: str, params: Any) -> Any:
        result = await real_ask(self, session, method, params)
        if method == "textDocument/rename" and (times is None or len(written) < times):
            path = root / "reqs/auth.py"
            data = f"# outside edit {len(written) + 1}\n".encode() + path.read_bytes()
            path.write_bytes(data)
            written.append(data)
        return result

    monkeypatch.setattr(ServerPool, "_ask", ask)
    return written


@pytest.mark.parametrize("server", ["ty", "jedi"])
def test_write_after_every_server_answer_is_stale_and_nothing_is_written(
    server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_root(tmp_path, server)
    with Workbench(root, watch=True) as wb:
        ref = declaration_ref(wb)
        warm(wb, ref)
        written = _writer_after_rename_answers(monkeypatch, root, None)
        with pytest.raises(StaleReference) as caught:
            wb.rename(ref, NEW)
    assert caught.value.details["files"] == ["reqs/auth.py"]
    assert written  # the writes happened, after the server's answers
    files = snapshot(root)
    assert files.pop("reqs/auth.py") == written[-1]
    assert files == {p: t.encode() for p, t in FILES.items() if p != "reqs/auth.py"} | {
        p: t.encode() for p, t in CONFIGS[server].items()
    }


def test_write_after_the_first_answer_renames_the_new_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_root(tmp_path, "ty")
    with Workbench(root, watch=True) as wb:
        ref = declaration_ref(wb)
        warm(wb, ref)
        written = _writer_after_rename_answers(monkeypatch, root, 1)
        try:
            answer: dict[str, Any] | None = wb.rename(ref, NEW).to_json()
        except StaleReference:
            answer = None
    files = snapshot(root)
    (edited,) = written
    if answer is None:  # refusing is allowed: then nothing at all is written
        assert files == {**{p: t.encode() for p, t in FILES.items()}, "reqs/auth.py": edited}
        return
    expected = renamed({**{p: FILES[p].encode() for p in TOUCHED}, "reqs/auth.py": edited})
    assert files == {**{p: t.encode() for p, t in FILES.items()}, **expected}
    assert answer["changed"] == TOUCHED


@pytest.mark.parametrize("server", ["ty", "jedi"])
def test_rename_onto_a_name_in_scope_is_a_conflict_unless_forced(
    server: str, tmp_path: Path
) -> None:
    root = make_root(tmp_path, server)
    with Workbench(root, watch=True) as wb:
        ref = declaration_ref(wb)
        before = snapshot(root)
        with pytest.raises(Conflict) as caught:
            wb.rename(ref, "unicode_is_ascii")
        assert snapshot(root) == before
        where = {(c["path"], c["line"]) for c in caught.value.details["conflicts"]}
        assert where == {
            ("reqs/_internal_utils.py", 11),
            ("reqs/models.py", 3),
            ("reqs/models.py", 9),
        }
        assert "reqs/models.py:3" in caught.value.message
        assert "force" in caught.value.message
        answer = wb.rename(ref, "unicode_is_ascii", force=True)
        assert answer.changed == TOUCHED
    models = (root / "reqs/models.py").read_text()
    assert "import unicode_is_ascii, unicode_is_ascii" in models  # what force asked for


SECRET = '''"""Deployment secrets."""

from reqs._internal_utils import to_native_string

TOKEN = to_native_string(b"s3cr3t")
'''
DENY = 'deny = ["config/secret.py"]\n'


def _rename_answer(root: Path, new_name: str) -> dict[str, Any]:
    """The rename's JSON answer or error (code, message, details), result ids left out."""
    with Workbench(root, watch=True) as wb:
        ref = declaration_ref(wb)
        try:
            data = wb.rename(ref, new_name).to_json()
        except (Conflict, StaleReference) as exc:
            data = {"error": exc.code, "message": exc.message, "details": exc.details}
        except Exception as exc:  # any other answer must be the same on both sides too
            data = {"error": type(exc).__name__, "message": str(exc)}
        pool = wb._engines.servers
        assert isinstance(pool, ServerPool)
        sent = {rel for session in pool._sessions.values() for rel in session.documents()}
        assert sent and not any(rel.startswith("config/") for rel in sent)
    if "error" in data:
        return data
    data.pop("result")
    data.pop("source")
    return data


@pytest.mark.parametrize("new_name", [NEW, "unicode_is_ascii"])
def test_a_denied_use_changes_nothing_in_the_answer(new_name: str, tmp_path: Path) -> None:
    plain = make_root(tmp_path / "plain", "ty", {".sleuth.toml": DENY})
    cloaked = make_root(
        tmp_path / "cloaked", "ty", {".sleuth.toml": DENY, "config/secret.py": SECRET}
    )
    answers = [_rename_answer(plain, new_name), _rename_answer(cloaked, new_name)]
    assert answers[0] == answers[1]
    assert "secret" not in repr(answers[0])
    assert (cloaked / "config/secret.py").read_text() == SECRET
    if new_name == NEW:
        assert answers[0]["changed"] == TOUCHED
    else:
        assert answers[0]["error"] == "conflict"
