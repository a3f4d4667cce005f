"""A semantic index row with the right stamp but chunks that do not fit the file is not
answered from (docs/SAFETY.md#damaged-or-planted-state). Seen: a planted
``.sleuth/semantic.sqlite3`` row carrying the file's stamp showed a chunk name that was not in
the file (a denied file's secret, with terminal escapes), and a chunk past the end made every
``semantic:`` query answer ``internal`` (IndexError)."""

from __future__ import annotations

import json
import marshal
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from sleuth.api import Workbench

SECRET = "hunter2-XYZZY"
FILES = {
    "src/config.py": (
        "import json\n\n\ndef parse_config(path):\n"
        '    """Load the configuration file from disk."""\n'
        "    with open(path) as fh:\n        return json.load(fh)\n"
    ),
    "secret/keys.py": f'TOKEN = "{SECRET}"\n',
    ".sleuth.toml": 'deny = ["secret/**"]\n',
}


def _forge(root: Path, stat: bool, how: str) -> None:
    db = sqlite3.connect(root / ".sleuth" / "semantic.sqlite3")
    (blob,) = db.execute("SELECT chunks FROM files WHERE path = 'src/config.py'").fetchone()
    chunks = [list(c) for c in marshal.loads(blob)]
    for c in chunks:
        if how == "title" and c[5] == "parse_config":
            c[5] = SECRET + "\x1b[2J"
        if how == "range" and c[4] == "window":
            c[0:4] = [5000, 5100, 300, 301]
    moved = "" if stat else ", size = -1"  # as an unpacked tree: the stat signature differs
    db.execute(
        f"UPDATE files SET chunks = ?{moved} WHERE path = 'src/config.py'",
        (marshal.dumps([tuple(c) for c in chunks]),),
    )
    db.commit()
    db.close()


@pytest.mark.parametrize("how", ["title", "range"])
@pytest.mark.parametrize("stat", [True, False])
def test_a_planted_row_with_the_right_stamp_is_indexed_again(
    make_workspace: Any, how: str, stat: bool
) -> None:
    root = make_workspace(FILES)
    with Workbench(root, build_index=False) as wb:
        wb.search("semantic:load the configuration")  # builds the index
    _forge(root, stat, how)
    with Workbench(root, build_index=False) as wb:
        page = wb.search("semantic:load the configuration hunter2", context=0).to_json()
    assert SECRET not in json.dumps(page)
    assert "src/config.py" in {m["path"] for m in page["matches"]}
    for m in page["matches"]:
        data = (root / m["path"]).read_bytes()
        assert 0 <= m["start_byte"] <= m["end_byte"] <= len(data)
        if "chunk" in m:
            assert m["chunk"]["name"] in data.decode()
