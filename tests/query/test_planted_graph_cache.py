"""A graph cache row with the right stamp but other names, text or offsets is not believed
(docs/SAFETY.md#damaged-or-planted-state): the stamp is a hash anyone can compute, so a row
the keeper meets with bytes in hand is kept only if it fits them, else the file is tagged
again. Seen: a planted ``.sleuth/graph.db`` made ``graph:`` show a declaration named after a
denied file's secret, a signature that was not in the file, a container naming the denied
path, and crash (``internal``) on offsets past the end."""

from __future__ import annotations

import json
import marshal
import os
import sqlite3
import time
from pathlib import Path

import pytest

from sleuth import Workbench
from sleuth.ast_search.tags import extract_tag_tuples
from sleuth.graph.fits import row_fits
from sleuth.graph.records import record_row
from tests.conftest import MakeWorkspace

A = "def alpha(x):\n    return helper(x) + 1\n\n\nclass Widget:\n    def spin(self):\n        return alpha(2)\n"
B = "def helper(y):\n    return y * 2\n"
SECRET = "hunter2-XYZZY"


def _forge(root: Path, keep_stat: bool) -> None:
    """Rewrite src/a.py's row: alpha renamed, its signature and spin's container made up,
    Widget's offsets past the end; the stamp left as it is."""
    db = sqlite3.connect(root / ".sleuth" / "graph.db")
    (rec_blob,) = db.execute("SELECT record FROM files WHERE path = 'src/a.py'").fetchone()
    rec = list(marshal.loads(rec_blob))
    defs = [list(d) for d in rec[4]]
    by_name = {d[1]: d for d in defs}
    by_name["alpha"][1] = SECRET + "\x1b[2J"
    by_name["alpha"][10] = f'TOKEN = "{SECRET}"'
    by_name["Widget"][4:10] = [9000, 9100, 400, 401, 9006, 9012]
    by_name["spin"][3] = "secret/keys.py"
    rec[4] = tuple(tuple(d) for d in defs)
    stat = "" if keep_stat else ", size = NULL, mtime_ns = NULL, ctime_ns = NULL"
    db.execute(
        f"UPDATE files SET record = ?{stat} WHERE path = 'src/a.py'",
        (marshal.dumps(tuple(rec)),),
    )
    db.commit()
    db.close()


@pytest.mark.parametrize("query", ["graph:src/a.py", "graph:", "graph:src"])
def test_a_planted_row_with_the_right_stamp_is_tagged_again(
    make_workspace: MakeWorkspace, query: str
) -> None:
    root = make_workspace({"src/a.py": A, "src/b.py": B})
    old = time.time() - 100
    for name in ("a.py", "b.py"):
        os.utime(root / "src" / name, (old, old))
    with Workbench(root, build_index=False) as wb:
        wb.search("graph:", context=0)  # builds .sleuth/graph.db
    # as an unpacked or cloned tree carries it: no stored stat matches the files (ctime)
    _forge(root, keep_stat=False)
    with Workbench(root, build_index=False) as wb:
        page = wb.search(query, context=0).to_json()
    text = json.dumps(page)
    assert SECRET not in text and "secret/keys.py" not in text
    names = set()
    for m in page["matches"]:
        data = (root / m["path"]).read_bytes()
        assert data[m["start_byte"] : m["end_byte"]].decode() in m["text"]
        names.add(m["graph"]["name"])
    assert names == {"alpha", "Widget", "spin", "helper"} - (
        {"helper"} if "a.py" in query else set()
    )


def test_row_fits_the_bytes_it_was_made_from_and_no_others() -> None:
    data = A.encode()
    lang, defs, refs, complete, reason = extract_tag_tuples("src/a.py", data, "python")
    row = record_row(lang, "s", complete, reason, defs, refs, data)
    assert row_fits("src/a.py", row, None, data)
    assert not row_fits("src/b.py", row, None, data)  # ids are of another path
    assert not row_fits("src/a.py", row, None, data.replace(b"alpha", b"omega"))
    assert not row_fits("src/a.py", row, None, data[:-10])
    first = list(row[4][0])
    first[10] = "def alpha(x, secret):"
    assert not row_fits("src/a.py", (*row[:4], (tuple(first), *row[4][1:]), row[5]), None, data)
    assert not row_fits("src/a.py", ("python",), None, data)  # another shape


def test_a_planted_edge_into_a_file_that_leaves_the_graph_is_not_ranked(
    make_workspace: MakeWorkspace,
) -> None:
    """A true record with a planted resolution edge into a planted row of a denied file: the
    denied row is dropped at the sync, and ``graph:`` answered ``internal`` (KeyError) on the
    edge's rank weight, at every call."""
    root = make_workspace({"src/a.py": A, "src/b.py": B, ".sleuth.toml": 'deny = ["secret/**"]\n'})
    (root / "secret").mkdir()
    (root / "secret" / "keys.py").write_text(f'TOKEN = "{SECRET}"\n')
    with Workbench(root, build_index=False) as wb:
        honest = wb.search("graph:", context=0).to_json()
    db = sqlite3.connect(root / ".sleuth" / "graph.db")
    (res_blob,) = db.execute("SELECT resolution FROM files WHERE path = 'src/a.py'").fetchone()
    res = list(marshal.loads(res_blob))
    source, _, _, occurrences = res[0][0]
    res[0] = (*res[0], (source, "sec1", "calls", occurrences))
    db.execute(
        "UPDATE files SET resolution = ?, size = NULL WHERE path = 'src/a.py'",
        (marshal.dumps(tuple(res)),),
    )
    planted = (
        "python",
        "x",
        True,
        None,
        (("sec1", SECRET, "function", "", 0, 5, 1, 1, 0, 5, ""),),
        (),
    )
    db.execute(
        "INSERT INTO files VALUES ('secret/keys.py', NULL, NULL, NULL, ?, ?)",
        (marshal.dumps(planted), marshal.dumps(((), (), (), 0))),
    )
    db.commit()
    db.close()
    for _ in range(2):
        with Workbench(root, build_index=False) as wb:
            page = wb.search("graph:", context=0).to_json()
        assert SECRET not in json.dumps(page) and "secret/" not in json.dumps(page)
        assert [m["graph"]["id"] for m in page["matches"]] == [
            m["graph"]["id"] for m in honest["matches"]
        ]
