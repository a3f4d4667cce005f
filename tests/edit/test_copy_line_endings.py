"""Copied text takes the target file's line endings, both ways (SPEC §9: an edit keeps the
file's line endings; docs/edits.md#copy-and-move), as the text of ``replace``/``insert`` does.

Seen: a copy of a function (an ``ast:`` match, a read of lines) from a CRLF file into an LF file
kept its ``\\r\\n`` inside the new lines, leaving the target with mixed line endings, while a
copy the other way turned every ``\\n`` into ``\\r\\n``.
"""

from __future__ import annotations

import pytest

from sleuth import Workbench
from tests.conftest import MakeWorkspace

CRLF = b"def f():\r\n    return 1\r\n\r\nx = 2\r\n"
LF = b"a = 1\nb = 2\n"


@pytest.mark.parametrize("verb", ["copy", "move"])
@pytest.mark.parametrize("how", ["ast", "read"])
def test_lines_copied_from_a_crlf_file_into_an_lf_file_end_in_lf(
    make_workspace: MakeWorkspace, verb: str, how: str
) -> None:
    root = make_workspace({"crlf.py": CRLF, "lf.py": LF})
    with Workbench(root, servers=False) as wb:
        if how == "ast":
            found = wb.search("ast:def $F(): $$$B", path="crlf.py").to_json()
            ref = str(found["matches"][0]["ref"]["line"])
        else:
            ref = wb.read("crlf.py", offset=1, limit=2).result
        done = getattr(wb, verb)(ref, to="lf.py:2")
        assert (root / "lf.py").read_bytes() == b"a = 1\ndef f():\n    return 1\nb = 2\n"
        if verb == "move":
            assert (root / "crlf.py").read_bytes() == b"\r\nx = 2\r\n"
        wb.undo(done.result)
    assert (root / "lf.py").read_bytes() == LF
    assert (root / "crlf.py").read_bytes() == CRLF


def test_lines_copied_from_an_lf_file_into_a_crlf_file_end_in_crlf(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace({"crlf.py": CRLF, "lf.py": LF})
    with Workbench(root, servers=False) as wb:
        wb.copy(wb.read("lf.py").result, to="crlf.py:2")
    assert (
        root / "crlf.py"
    ).read_bytes() == b"def f():\r\na = 1\r\nb = 2\r\n    return 1\r\n\r\nx = 2\r\n"
