"""An edit's temporary files (``.sleuth-tmp-<id>-<n>``, each file's new bytes until it is
renamed over the file) are never listed (docs/faces.md#which-files-are-searched), as
``.sleuth/`` is not: they are sleuth's own, for milliseconds.

Seen: a second face (another ``Workbench``, a CLI call, the daemon) searching while an edit
wrote its files answered matches in ``.sleuth-tmp-4640c3e531e8-0`` and ``-1`` — the new text
of both files a second time, with references to files that are gone a moment later — or, when
they went between its listing and its read, ``complete: false`` ("1 file(s) could not be
read"), so an ``:all`` edit of that face was refused.
"""

from __future__ import annotations

from sleuth import Workbench
from tests.conftest import MakeWorkspace


def test_a_search_while_another_face_edits_never_lists_its_temporary_files(
    make_workspace: MakeWorkspace,
) -> None:
    root = make_workspace({"a.py": "value = 1\n", "b.py": "value = 2\n"})
    seen: list[dict[str, object]] = []
    with Workbench(root, servers=False) as editing:
        ref = str(editing.search("value").to_json()["all"]["match"])

        def search_now(point: str, path: str) -> None:
            if point == "before-rename" and not seen:  # every temporary file is written
                assert any(p.name.startswith(".sleuth-tmp-") for p in root.iterdir())
                with Workbench(root, servers=False) as other:
                    seen.append(other.search("= ").to_json())
                    seen.append(other.search("files:tmp").to_json())

        editing.workspace.fault_hook = search_now
        editing.replace(ref, "VALUE")
    found, files = seen
    assert [m["path"] for m in found["matches"]] == ["a.py", "b.py"]  # type: ignore[index]
    assert found["complete"]
    assert files["total"] == 0
