"""A copy within one file copies what the file holds when it is written (docs/edits.md#copy-and-move):
the source's bytes and the target's are the same bytes, or nothing is written.

Seen (a write landing between the two reads of one call, made here by wrapping the target's
read): ``copy SEARCH#H:1:line --to a.py:3`` read the source line from the bytes of the search,
then the target from bytes an outside write had changed since; the commit checked only the
target's bytes, so it wrote a line the file no longer held, into the new bytes. A ``move`` in
the same case was refused already (``conflict``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sleuth import Workbench
from sleuth.edit.operations import Editor
from sleuth.errors import SleuthError
from tests.conftest import MakeWorkspace

SOURCE = b"alpha = 1\nbeta = 2\n"
CHANGED = b"gamma = 3\nbeta = 2\n"


@pytest.mark.parametrize("verb", ["copy", "move"])
def test_a_file_changed_between_the_source_and_the_target_is_not_written(
    make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch, verb: str
) -> None:
    root = make_workspace({"a.py": SOURCE})
    read_target = Editor._target

    def outside_write_first(self: Editor, to: str) -> tuple[str, int, object, bool]:
        Path(root / "a.py").write_bytes(CHANGED)  # an outside write, same size
        return read_target(self, to)  # type: ignore[return-value]

    with Workbench(root, servers=False) as wb:
        ref = str(wb.search("alpha").to_json()["matches"][0]["ref"]["line"])
        monkeypatch.setattr(Editor, "_target", outside_write_first)
        with pytest.raises(SleuthError):
            getattr(wb, verb)(ref, to="a.py:3")
    assert (root / "a.py").read_bytes() == CHANGED
