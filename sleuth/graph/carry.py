"""What a file's previous resolution carries over to its next one, after an edit of that file.

Resolving a use reads the other files through keys (``file_index``) and the file itself through
its own index. When a file is edited and none of the keys its previous resolution read changed
(the graph checks that), a use resolves to what it resolved to before unless what it reads of
the file itself moved. ``carry_over`` decides that per use, from the use's *signature* —
(enclosing declaration, name, receiver), all a lookup starts from — and two comparisons of the
file's old and new index:

- *changed names*: every name whose binding in some scope of the file changed (a declaration
  added, removed or renamed, a member of a class added): a use whose name, or a part of its
  receiver, is one of them is resolved again;
- *changed scopes*: every qualified name whose first declaration changed: a use enclosed by one
  of them is resolved again (its scope chain, or which scopes are classes, may differ);

and it applies only when the file's imports and base uses are unchanged. What a member lookup
reads through a class's bases (``self.m()``, ``Cls.m()``) is memoised work, which notes its
reads of the file itself as keys like any other file's: a base found elsewhere after the edit
shows among the changed keys, and the graph then resolves the whole file again. Uses with a signature the old version did
not have are resolved again. So an edit inside a body — every position moved — or a function
appended costs a dictionary lookup per use instead of a resolution, and still equals a full
rebuild (tests/graph/test_incremental*.py compare them over random edit sequences).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sleuth.graph.file_index import FileIndex
from sleuth.graph.records import FileRecord

__all__ = ["Carry", "carry_over"]

Signature = tuple[str | None, str, str | None]
"""(enclosing declaration id, name, receiver): what a lookup starts from."""
Occ = tuple[int, int, int]


@dataclass
class Carry:
    """Previous targets by signature (None: it stayed unresolved), and what moved."""

    targets: dict[Signature, str | None]
    imports: list[str | None]  # the target of each import use, in order
    names: set[str]
    scopes: set[str]
    keys: frozenset[str]
    _clean: dict[str, bool] = field(default_factory=dict)  # enclosing id -> no scope moved

    def target(
        self, idx: FileIndex, enclosing: str | None, name: str, recv: str | None
    ) -> tuple[bool, str | None]:
        """(known, target node) of a use (its enclosing declaration id, name and receiver):
        ``known`` False when it must be resolved again."""
        sig = (enclosing, name, recv)
        if sig not in self.targets:
            return False, None
        names = self.names
        if names:
            if any(part in names for part in name.split(".")):
                return False, None
            if recv is not None and any(part in names for part in recv.split(".")):
                return False, None
        if enclosing is not None:
            clean = self._clean.get(enclosing)
            if clean is None:
                d = idx.by_id.get(enclosing)
                clean = self._clean[enclosing] = d is not None and not _within(
                    d.qualified, self.scopes
                )
            if not clean:
                return False, None
        return True, self.targets[sig]


def _within(qualified: str, scopes: set[str]) -> bool:
    """Whether ``qualified`` or a scope around it is in ``scopes``."""
    q = qualified
    while q and scopes:
        if q in scopes:
            return True
        q = q.rpartition(".")[0]
    return False


def carry_over(
    old: FileRecord,
    old_idx: FileIndex,
    edges: dict[tuple[str, str, str], list[Occ]],
    keys: frozenset[str],
    new_idx: FileIndex,
) -> Carry | None:
    """What ``old``'s resolution (``edges``, ``keys``) lends to the file's new version (None
    when its imports, base uses or language changed)."""
    if (
        old_idx.family != new_idx.family
        or old_idx.imports != new_idx.imports
        or old_idx.bases != new_idx.bases
    ):
        return None
    at = {occ: target for (_, target, _), occs in edges.items() for occ in occs}
    targets: dict[Signature, str | None] = {}
    imports: list[str | None] = []
    for ref, recv in zip(old.refs, old.receivers, strict=True):
        found = at.get((ref.start_byte, ref.end_byte, ref.line))
        if ref.kind == "import":
            imports.append(found)
        else:
            targets.setdefault((ref.enclosing, ref.name, recv), found)
    names: set[str] = set()
    if old_idx.scope != new_idx.scope:
        for key in old_idx.scope.keys() | new_idx.scope.keys():
            if old_idx.scope.get(key) != new_idx.scope.get(key):
                names.add(key[1])
    scopes: set[str] = set()
    old_q, new_q = old_idx.qualified_ids(), new_idx.qualified_ids()
    if old_q != new_q:
        scopes = {q for q in old_q.keys() | new_q.keys() if old_q.get(q) != new_q.get(q)}
    return Carry(targets, imports, names, scopes, keys)
