"""Name resolution by scope and import rules alone (``precision: "syntactic"``).

A use resolves (1) to a declaration of that name in its file's enclosing scopes, innermost
first — nested functions, then the module; class scopes count only for the class body itself
in Python and JavaScript/TypeScript (a bare name in a method does not see the class's members
there), and at every level in the other languages; (2) to a name the file imports, followed to
the module's file (and through re-exports); (3) otherwise it stays unresolved. Never a global
match by name: another file's declaration is reached only through an import. A use with a
receiver resolves only when the receiver is known: ``self``/``this``/``cls`` (the enclosing
class, then its bases), ``super()`` (the bases), an imported module (its top level) or a class
name (its members); ``obj.m()`` on an unknown receiver stays unresolved.

A ``Resolver`` is one session over the graph's current records. Besides the edges of a file it
reports what the answer depended on: the keys of what it read of other files (``keys``, see
``file_index``: a top-level binding, a class as seen from outside, a star list, a module
lookup) and, for inspection, the files those keys name (``deps``) — so the graph re-resolves
after a change exactly the files that read something that changed. Following imports, and the
memo the session keeps, are ``bindings.ImportResolver``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from sleuth.graph.bindings import ImportResolver, Target
from sleuth.graph.carry import Carry
from sleuth.graph.file_index import (
    CLASS_KINDS,
    FileIndex,
    changed_keys,
    class_key,
    key_paths,
    member_key,
    name_key,
)
from sleuth.graph.modules import ModuleIndex
from sleuth.graph.records import FileRecord, RefRow, ref_rows

__all__ = [
    "FileIndex",
    "Resolution",
    "Resolver",
    "Target",
    "EDGE_KIND",
    "CLASS_KINDS",
    "Occ",
    "name_key",
    "class_key",
    "changed_keys",
]

EDGE_KIND = {"call": "calls", "reference": "references", "import": "imports", "inherit": "inherits"}
"""Ref kind -> edge kind; an unknown ref kind gives ``references``."""

_SELF = frozenset({"self", "this", "cls"})
_MAX_HOPS = 8

Occ = tuple[int, int, int]
"""An occurrence in the owning file: (start_byte, end_byte, line)."""
EdgeKey = tuple[str, str, str]


@dataclass
class Resolution:
    """What resolving one file produced: its edges (with occurrences) and its dependencies
    (``keys``; ``deps`` are the other files they name)."""

    edges: dict[EdgeKey, list[Occ]] = field(default_factory=dict)
    deps: frozenset[str] = frozenset()
    keys: frozenset[str] = frozenset()
    unresolved: int = 0


class Resolver(ImportResolver):
    """One resolution session over ``records`` (memoised; drop it after the update).

    Reading another file notes the key of what was read (``file_index``): a class's bases and
    scope chain (``class:``), one name in one of its scopes (``member:``: a member looked up, a
    base name looked up around a class), a top-level binding (``name:``), a star list
    (``stars:``), a module lookup (``file:``/``py:``). Reads of the file being resolved are not noted when made for
    it directly — it is resolved again whenever it changes — but are inside memoised work,
    which another file may reuse.
    """

    def __init__(
        self,
        records: Mapping[str, FileRecord],
        index: Callable[[str], FileIndex],
        modules: ModuleIndex,
        uses: Callable[[str], Iterable[RefRow]] | None = None,
    ) -> None:
        super().__init__(records, index, modules)
        # a file's uses as rows (``RecordTable.uses`` reads a cached row without decoding it)
        self._uses = uses if uses is not None else lambda path: ref_rows(records[path])

    def _class(self, target: Target) -> FileIndex | None:
        """The index of ``target``'s file, noting that the declaration was read as a class."""
        if self._foreign(target[0]):
            self._note(class_key(*target))
        return self._index(target[0]) if target[0] in self._records else None

    # -- one file -----------------------------------------------------------------------------

    def resolve_file(self, path: str, carry: Carry | None = None) -> Resolution:
        """Resolve every use in ``path`` to edges (source node, target node, kind); with
        ``carry``, a use whose previous target still holds keeps it (``carry``)."""
        idx = self._index(path)
        by_id = idx.by_id
        self._stack.append((set(), set()))
        out = Resolution()
        edges = out.edges
        try:
            self._own, self._own_binds = path, None  # its bindings: computed once, if needed
            n_import = 0
            for name, kind, start, end, line, enclosing, _, _, recv in self._uses(path):
                if kind == "import":
                    source = path
                    if carry is not None and n_import < len(carry.imports):
                        node = carry.imports[n_import]
                        n_import += 1
                        if node is None:
                            out.unresolved += 1
                        else:
                            edges.setdefault((path, node, "imports"), []).append((start, end, line))
                        continue
                    imports = self._bindings(path).imports
                    target = imports[n_import] if n_import < len(imports) else None
                    n_import += 1
                else:
                    source = enclosing if enclosing in by_id else path
                    if carry is not None:
                        known, node = carry.target(idx, enclosing, name, recv)
                        if known:
                            if node is None:
                                out.unresolved += 1
                            else:
                                key = (source, node, EDGE_KIND.get(kind, "references"))
                                edges.setdefault(key, []).append((start, end, line))
                            continue
                    target = self.lookup(path, enclosing, name, recv)
                if target is None:
                    out.unresolved += 1
                    continue
                key = (source, target[1] or target[0], EDGE_KIND.get(kind, "references"))
                edges.setdefault(key, []).append((start, end, line))
        finally:
            self._own = self._own_binds = None
            keys, _ = self._stack.pop()
        out.keys = frozenset(keys) | carry.keys if carry is not None else frozenset(keys)
        out.deps = frozenset(key_paths(keys)) - {path}
        return out

    # -- names --------------------------------------------------------------------------------

    def lookup(
        self, path: str, enclosing: str | None, name: str, recv: str | None
    ) -> Target | None:
        """The declaration (or file) a use of ``name`` with receiver ``recv`` resolves to."""
        if "." in name:
            head, _, name = name.rpartition(".")
            recv = head if recv is None else f"{recv}.{head}"
        if not name:
            return None
        if recv is None:
            return self._bare(path, enclosing, name)
        if recv == "?":
            return None
        if recv in _SELF or recv in ("super()", "super"):
            cls = self._enclosing_class(path, enclosing)
            if cls is None:
                return None
            if recv in _SELF:
                return self._member(cls, name, frozenset())
            for base in self._bases(cls):
                found = self._member(base, name, frozenset())
                if found:
                    return found
            return None
        if self._foreign(path):
            self._note(name_key(path, recv))
        owner = self._bindings(path).names.get(recv)
        if owner is None:
            head, _, last = recv.rpartition(".")
            owner = self.lookup(path, enclosing, last, head or None)
        if owner is None:
            return None
        if not owner[1]:
            return self._exported(owner[0], name)
        idx = self._class(owner)
        if idx is not None and idx.by_id[owner[1]].kind in CLASS_KINDS:
            return self._member(owner, name, frozenset())
        return None

    def _bare(self, path: str, enclosing: str | None, name: str) -> Target | None:
        idx = self._index(path)
        foreign = self._foreign(path)
        d = idx.by_id.get(enclosing) if enclosing else None
        if d is not None:
            if foreign:
                self._note(class_key(path, d.id))  # its scope chain is part of that key
            strict = idx.family in ("python", "js")
            q: str | None = d.qualified
            while q:
                owner = idx.by_qualified.get(q)
                is_class = owner is not None and owner.kind in CLASS_KINDS
                if not (strict and is_class and q != d.qualified):
                    if foreign:
                        self._note(member_key(path, q, name))
                    hit = idx.scope.get((q, name))
                    if hit:
                        return (path, hit)
                q = owner.container if owner is not None else q.rpartition(".")[0]
        if foreign:
            self._note(name_key(path, name))
        hit = idx.scope.get(("", name))
        if hit:
            return (path, hit)
        binds = self._bindings(path)
        if name in binds.names:
            return binds.names[name]
        if foreign:
            self._note("stars:" + path)  # even when empty: a star import may come
        for star in binds.stars:
            found = self._exported(star, name)
            if found:
                return found
        return None

    def _enclosing_class(self, path: str, enclosing: str | None) -> Target | None:
        idx = self._index(path)
        d = idx.by_id.get(enclosing) if enclosing else None
        if d is not None and self._foreign(path):
            self._note(class_key(path, d.id))
        while d is not None:
            if d.kind in CLASS_KINDS:
                return (path, d.id)
            d = idx.by_qualified.get(d.container) if d.container else None
        return None

    def _member(self, cls: Target, name: str, seen: frozenset[Target]) -> Target | None:
        idx = self._class(cls)
        if idx is None or cls in seen or len(seen) > _MAX_HOPS:
            return None
        d = idx.by_id.get(cls[1])
        if d is None:
            return None
        if self._foreign(cls[0]):
            self._note(member_key(cls[0], d.qualified, name))
        hit = idx.scope.get((d.qualified, name))
        if hit:
            return (cls[0], hit)
        for base in self._bases(cls):
            found = self._member(base, name, seen | {cls})
            if found:
                return found
        return None

    def _bases(self, cls: Target) -> list[Target]:
        """The declarations a class's ``inherit`` uses resolve to (memoised per class)."""

        def compute() -> list[Target]:
            idx = self._class(cls)
            if idx is None:
                return []
            out: list[Target] = []
            for name, recv in idx.bases.get(cls[1], ()):
                t = self.lookup(cls[0], cls[1], name, recv)
                if t and t[1] and t != cls and t not in out:
                    out.append(t)
            return out

        return self._cached(("bases", *cls), compute, [])
