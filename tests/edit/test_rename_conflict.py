"""The rename's edit layer without a language server (docs/edits.md#rename; issue 15).

``find_clashes`` implements the name-clash rule of ``sleuth/edit/rename.py``'s docstring: a new
name written as an identifier token in an edited file clashes (never inside a string or a
comment); after a dot, as a field or a keyword argument's name, or as a module path in an
import only when the renamed symbol is a member. ``Renamer`` is driven by a stand-in pool whose
``rename_plan`` answers what a server would (every whole-word occurrence in the files it is
given), to check what the Renamer does with the answer: it writes nothing on a clash unless
``force``, builds every file change from the bytes the server saw (so a file that changed
since is ``stale_reference``, never edited at old offsets), and drops edits of denied files.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from sleuth import Workbench
from sleuth.edit.rename import Renamer, find_clashes
from sleuth.errors import Conflict, StaleReference
from sleuth.lsp_bridge.pool import RenamePlan
from sleuth.lsp_bridge.results import LspEdit
from sleuth.workspace import FileText, encoding_of, stamp_bytes
from tests.conftest import MakeWorkspace


def clashes(files: dict[str, str], old: str, new: str, spans: Any = None) -> list[tuple[str, int]]:
    """``(path, line)`` of each clash; the rename edits every whole-word ``old`` unless
    ``spans`` gives the edited byte ranges per file."""
    texts = {
        p: FileText(p, t.encode(), stamp_bytes(t.encode()), encoding_of(t.encode()))
        for p, t in files.items()
    }
    word = re.compile(rf"(?<![\w$]){re.escape(old)}(?![\w$])")
    if spans is None:
        spans = {p: [m.span() for m in word.finditer(t)] for p, t in files.items()}
    return [(c["path"], c["line"]) for c in find_clashes(texts, spans, old, new)]


def test_an_imported_name_and_a_definition_clash() -> None:
    files = {
        "pkg/utils.py": "def old(s):\n    return s\n\n\ndef new(s):\n    return s\n",
        "pkg/models.py": "from .utils import old, new\n\nx = old(new(1))\n",
    }
    assert clashes(files, "old", "new") == [
        ("pkg/models.py", 1),
        ("pkg/models.py", 3),
        ("pkg/utils.py", 5),
    ]


def test_strings_comments_and_longer_names_never_clash() -> None:
    files = {"a.py": 'def old():\n    # new is coming\n    return "new" + newer + f"{x}"\n'}
    assert clashes(files, "old", "new") == []


def test_names_inside_an_f_string_are_code() -> None:
    files = {"a.py": 'def old():\n    return f"{new}"\n'}
    assert clashes(files, "old", "new") == [("a.py", 2)]


def test_a_parameter_or_a_local_of_the_new_name_clashes() -> None:
    files = {
        "a.py": "def old():\n    pass\n\n\ndef g(new):\n    return old()\n\n\n"
        "def h():\n    new = 1\n    return new\n"
    }
    assert clashes(files, "old", "new") == [("a.py", 5), ("a.py", 10), ("a.py", 11)]


def test_member_positions_clash_only_for_a_member_rename() -> None:
    uses = "import new.sub\nfrom pkg.new import x\ny = obj.new + f(new=1)\n"
    function = {"a.py": "def old():\n    pass\n", "b.py": "from a import old\n" + uses}
    # ``import new.sub`` binds ``new``; the module path, the attribute and the keyword do not
    assert clashes(function, "old", "new") == [("b.py", 2)]
    method = {
        "a.py": "class C:\n    def old(self):\n        return self.old\n",
        "b.py": "def f(c):\n    return c.old()\n" + uses,
    }
    assert clashes(method, "old", "new") == [("b.py", 3), ("b.py", 4), ("b.py", 5)]


def test_a_class_attribute_is_a_member_a_module_function_is_not() -> None:
    member = {"a.py": "class C:\n    old = 1\n\n\ndef f(c):\n    return c.new\n"}
    assert clashes(member, "old", "new") == [("a.py", 6)]
    nested = {"a.py": "def outer():\n    def old():\n        pass\n    return x.new\n"}
    assert clashes(nested, "old", "new") == []


def test_a_whole_file_edit_still_finds_the_clash() -> None:
    """pylsp answers a rename with one edit replacing the whole file."""
    text = "from u import old, new\n\nold(new)\n"
    assert clashes({"a.py": text}, "old", "new", {"a.py": [(0, len(text))]}) == [
        ("a.py", 1),
        ("a.py", 3),
    ]


def test_typescript_properties_are_members() -> None:
    files = {
        "src/a.ts": "export function old() {}\nconst o = { newName: 1 };\n"
        "o.newName;\nconst newName = 2;\n// newName\n"
    }
    assert clashes(files, "old", "newName") == [("src/a.ts", 4)]


def test_a_file_without_a_grammar_is_checked_by_text() -> None:
    files = {"a.unknownlang": "old here\n# new in a comment\n"}
    assert clashes(files, "old", "new") == [("a.unknownlang", 2)]


# -- the Renamer with a stand-in pool ------------------------------------------------------


@dataclass
class Pool:
    """A stand-in server: renames every whole-word ``word`` in ``files`` as held in ``seen``
    (the bytes it computed against; the disk's bytes by default)."""

    root: Path
    word: str
    files: list[str]
    seen: dict[str, bytes] = field(default_factory=dict)
    asked: list[str] = field(default_factory=list)

    def language_of(self, path: str) -> str:
        return "python"

    def serving(self, lang: str) -> bool:
        return True

    def rename_plan(
        self, path: str, offset: int, new_name: str, *, expect: bytes | None = None
    ) -> RenamePlan:
        self.asked.append(path)
        pattern = re.compile(rf"(?<![\w$]){self.word}(?![\w$])".encode())
        edits, sources = [], {}
        for rel in self.files:
            data = self.seen.get(rel) or (self.root / rel).read_bytes()
            sources[rel] = data
            edits += [LspEdit(rel, m.start(), m.end(), new_name) for m in pattern.finditer(data)]
        return RenamePlan(sorted(edits), sources)


@pytest.fixture
def bench(make_workspace: MakeWorkspace) -> Iterator[Any]:
    opened: list[Workbench] = []

    def build(files: Mapping[str, str]) -> tuple[Path, Workbench, str]:
        root = make_workspace(dict(files))
        wb = Workbench(root, servers=False)
        opened.append(wb)
        match = wb.search("old", path="pkg/core.py").to_json()["matches"][0]
        return root, wb, str(match["ref"]["match"])

    yield build
    for wb in opened:
        wb.close()


FILES = {
    "pkg/core.py": "def old(x):\n    return x\n",
    "pkg/use.py": "from .core import old\n\nVALUE = old(2)\n",
}


def renamer(wb: Workbench) -> Renamer:
    return Renamer(wb.workspace, wb._resolver, wb._views, wb._editor)


def on_disk(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".sleuth" not in p.parts
    }


def test_a_clash_writes_nothing_unless_forced(bench: Any) -> None:
    root, wb, ref = bench({**FILES, "pkg/use.py": "from .core import old\nfresh = 1\n"})
    pool = Pool(root, "old", ["pkg/core.py", "pkg/use.py"])
    before = on_disk(root)
    with pytest.raises(Conflict) as caught:
        renamer(wb).rename(ref, "fresh", pool)
    assert caught.value.details["conflicts"] == [
        {"path": "pkg/use.py", "line": 2, "text": "fresh = 1"}
    ]
    assert on_disk(root) == before
    answer = renamer(wb).rename(ref, "fresh", pool, force=True)
    assert answer.changed == ["pkg/core.py", "pkg/use.py"]
    assert (root / "pkg/use.py").read_text() == "from .core import fresh\nfresh = 1\n"


def test_changes_are_built_from_the_bytes_the_server_saw(bench: Any) -> None:
    """The server computed its edit against ``use.py`` before an outside edit moved the text:
    the edit's offsets belong to those bytes, so the rename is stale and writes nothing."""
    root, wb, ref = bench(FILES)
    seen = (root / "pkg/use.py").read_bytes()
    pool = Pool(root, "old", ["pkg/core.py", "pkg/use.py"], seen={"pkg/use.py": seen})
    (root / "pkg/use.py").write_bytes(b"# a new first line\n" + seen)
    before = on_disk(root)
    with pytest.raises(StaleReference) as caught:
        renamer(wb).rename(ref, "renamed", pool)
    assert caught.value.details["files"] == ["pkg/use.py"]
    assert on_disk(root) == before


def test_edits_of_a_denied_file_are_dropped(bench: Any) -> None:
    files = {
        **FILES,
        ".sleuth.toml": 'deny = ["pkg/secret.py"]\n',
        "pkg/secret.py": "from .core import old\nold(3)\n",
    }
    root, wb, ref = bench(files)
    # a stand-in that (unlike the real pool) answers with the denied file's edits
    secret = (root / "pkg/secret.py").read_bytes()
    pool = Pool(
        root, "old", ["pkg/core.py", "pkg/secret.py", "pkg/use.py"], seen={"pkg/secret.py": secret}
    )
    answer = renamer(wb).rename(ref, "renamed", pool).to_json()
    assert answer["changed"] == ["pkg/core.py", "pkg/use.py"]
    assert {r["path"] for r in answer["ranges"]} == {"pkg/core.py", "pkg/use.py"}
    assert "secret" not in repr(answer)
    assert (root / "pkg/secret.py").read_bytes() == secret


def test_undo_of_a_multi_file_rename_selects_the_restored_names_only(bench: Any) -> None:
    """Issue 20: undoing a 7-file rename answered the 7 whole files (173 KB). The rename keeps
    the ranges it replaced, so the undo selects the old names and its diff is bounded."""
    filler = "".join(f"# line {i} of padding that nobody renames\n" for i in range(600))
    files = {"pkg/core.py": "def old(x):\n    return x\n" + filler}
    users = [f"pkg/use{i}.py" for i in range(6)]
    for path in users:
        files[path] = "from .core import old\n" + filler + "VALUE = old(2)\n"
    root, wb, ref = bench(files)
    before = on_disk(root)
    pool = Pool(root, "old", ["pkg/core.py", *users])
    renamed = renamer(wb).rename(ref, "renamed", pool).to_json()
    assert len(renamed["changed"]) == 7
    undone = wb.undo(renamed["result"]).to_json()
    assert on_disk(root) == before
    assert undone["changed"] == sorted(["pkg/core.py", *users])
    assert [(r["path"], r["text"]) for r in undone["ranges"]] == sorted(
        [("pkg/core.py", "old")] + [(p, "old") for p in users for _ in range(2)]
    )
    for r in undone["ranges"]:
        assert (root / r["path"]).read_bytes()[r["start_byte"] : r["end_byte"]] == b"old"
    # the whole answer is far below the files it touched (each over 20 KB)
    assert len(json.dumps(undone)) < 16 * 1024 < sum(len(d) for d in before.values()) // 10
    assert [r["text"] for r in wb.read(undone["result"]).to_json()["ranges"]] == ["old"] * 13


def test_undo_of_a_rename_from_character_hunks_selects_whole_names(bench: Any) -> None:
    """A server answering with a hunk inside the name (jedi: ``old`` -> ``older`` as an
    insertion of ``er``) still gives an undo that selects the whole old name."""

    @dataclass
    class Hunks(Pool):
        def rename_plan(
            self, path: str, offset: int, new_name: str, *, expect: bytes | None = None
        ) -> RenamePlan:
            plan = super().rename_plan(path, offset, new_name, expect=expect)
            tail = new_name.removeprefix(self.word)
            edits = [LspEdit(e.path, e.end_byte, e.end_byte, tail) for e in plan.edits]
            return RenamePlan(edits, plan.sources)

    root, wb, ref = bench(FILES)
    before = on_disk(root)
    answer = renamer(wb).rename(ref, "older", Hunks(root, "old", sorted(FILES))).to_json()
    assert [r["text"] for r in answer["ranges"]] == ["older"] * 3
    undone = wb.undo(answer["result"]).to_json()
    assert on_disk(root) == before
    assert [r["text"] for r in undone["ranges"]] == ["old"] * 3
