"""``ServerPool.rename_plan`` against a scripted server that caches files it was never told
about (issue 15): the plan's edits are byte ranges of the exact bytes the server held, every
edited file is opened from bytes read for it (and the server asked again), and a denied file's
edits are dropped without a word, its text never sent.

The fake server answers ``textDocument/rename`` with an edit for each whole-word ``old`` in
``a.py``, ``b.py`` and ``config/secret.py``, in the text of the open document if it has one,
else in the file as it was on disk when the server started (a cache nothing refreshes).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from sleuth.lsp_bridge import ServerPool
from sleuth.workspace import Workspace
from tests.conftest import UserServers

from .conftest import LSP_STDIO, write_tree

FAKE_SERVER = (
    LSP_STDIO
    + r"""
import re
from urllib.parse import quote
root, log = sys.argv[1], sys.argv[2]
files = ["a.py", "b.py", "config/secret.py"]
uri = {rel: "file://" + quote(os.path.join(root, rel)) for rel in files}
cached = {rel: open(os.path.join(root, rel)).read() for rel in files}
opened = {}

def note(entry):
    with open(log, "a") as fh:
        fh.write(json.dumps(entry) + "\n")

def edits(text, new):
    out = []
    for n, line in enumerate(text.split("\n")):
        for m in re.finditer(r"\bold\b", line):
            rng = {"start": {"line": n, "character": m.start()},
                   "end": {"line": n, "character": m.end()}}
            out.append({"range": rng, "newText": new})
    return out

while True:
    msg = read()
    method, params = msg.get("method"), msg.get("params") or {}
    doc = params.get("textDocument") or {}
    note({"method": method, "uri": doc.get("uri")})
    if method in ("textDocument/didOpen", "textDocument/didChange"):
        text = doc.get("text") if method.endswith("didOpen") else params["contentChanges"][0]["text"]
        opened[doc["uri"]] = text
    if method == "exit":
        sys.exit(0)
    if "id" not in msg:
        continue
    if method == "initialize":
        send(msg["id"], {"capabilities": {"renameProvider": True}})
    elif method == "textDocument/rename":
        changes = {}
        for rel in files:
            text = opened.get(uri[rel], cached[rel])
            if edits(text, params["newName"]):
                changes[uri[rel]] = edits(text, params["newName"])
        send(msg["id"], {"changes": changes})
    else:
        send(msg["id"], None)
"""
)

FILES = {
    "a.py": "def old():\n    return 1\n",
    "b.py": "from a import old\n\nx = old()\n",
    "config/secret.py": "from a import old\nTOKEN = old()\n",
    ".sleuth.toml": 'deny = ["config/secret.py"]\n',
}


def fake_project(root: Path, user_servers: UserServers) -> tuple[Path, Path]:
    write_tree(root, FILES)
    script, log = root.parent / "fake_rename_server.py", root.parent / "fake.log"
    script.write_text(FAKE_SERVER)
    user_servers({"python": [sys.executable, str(script), str(root), str(log)]})
    return root, log


def test_an_edit_the_server_has_not_seen_is_opened_and_asked_again(
    tmp_path: Path, user_servers: UserServers
) -> None:
    root, log = fake_project(tmp_path / "ws", user_servers)
    with ServerPool(Workspace(root), timeout=20) as pool:
        assert pool.definition("a.py", 4) == []  # starts the server: it caches b.py now
        (root / "b.py").write_text("# moved\nfrom a import old\n\nx = old()\n")
        edits = pool.rename("a.py", 4, "fresh")
        b = (root / "b.py").read_bytes()
        at = [i for i in range(len(b)) if b.startswith(b"old", i)]
        spans = [(e.path, e.start_byte, e.end_byte) for e in edits]
        assert spans == [("a.py", 4, 7), *(("b.py", i, i + 3) for i in at)]
        plan = pool.rename_plan("a.py", 4, "fresh")
    assert plan.edits == edits
    assert plan.sources == {"a.py": (root / "a.py").read_bytes(), "b.py": b}
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    sent = [e for e in entries if e["method"] != "textDocument/rename"]
    assert not any("secret" in str(e["uri"]) for e in sent)  # never opened, never asked
    methods = [(e["method"], str(e["uri"]).rsplit("/", 1)[-1]) for e in entries]
    renames = [i for i, m in enumerate(methods) if m[0] == "textDocument/rename"]
    # the first rename came from the stale cache, so b.py was opened and the server asked again
    assert len(renames) == 3
    assert methods.index(("textDocument/didOpen", "b.py")) in range(renames[0], renames[1])
