"""Lookup tables over one file's declarations and imports, and what other files read of them.

``FileIndex`` is what name resolution consults about a file: declarations by id, by qualified
name and by (container, name) scope, its imports (in order, and by the local name they bind),
its star imports and each class's base uses. It is built from a decoded ``FileRecord`` or
straight from the cache's ``RecordRow`` (``of_row``): resolving one file reads the indexes of
the files it imports from, and building those from rows spares decoding their every use into
``SymbolRef`` objects (most of a first resolution's time after a cache load).

The keys other files depend on (``Resolver`` notes them; ``Graph`` re-resolves their users when
one changes):

- ``name:PATH\\0NAME`` — what ``PATH`` binds to top-level ``NAME`` (declaration or imports);
- ``stars:PATH`` — the modules ``PATH`` star-imports;
- ``class:PATH\\0ID`` — a declaration read as a class from outside ``PATH``: the declaration, its
  base uses, and the chain of scopes around it (which declaration each is, of what kind);
- ``member:PATH\\0SCOPE\\0NAME`` — what ``NAME`` declared in scope ``SCOPE`` (a qualified name,
  e.g. a class) of ``PATH`` is: a member looked up from outside (``obj.m()`` on a class of
  ``PATH``, through ``self`` in a subclass), or a name looked up in a scope around a class
  (its base names are).

``changed_keys`` compares two versions of a file and returns exactly the keys whose answer
differs, so an edit re-resolves the files that read something that moved — a function appended
to a hub module re-resolves nobody, a new member of a class re-resolves the files that looked
that name up on it (found elsewhere, through a base, or not at all), not every reader.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from sleuth.graph.records import FileRecord, RecordRow, language_family
from sleuth.model import SymbolDef

__all__ = [
    "FileIndex",
    "ImportUse",
    "CLASS_KINDS",
    "name_key",
    "class_key",
    "member_key",
    "key_paths",
    "changed_keys",
]

ImportUse = tuple[str, str | None, str | None]
"""One import use: (imported name, module as written, local alias)."""

# Kinds a reader treats as classes (members, bases); the resolver's CLASS_KINDS.
CLASS_KINDS = frozenset(
    {
        "class",
        "interface",
        "struct",
        "trait",
        "enum",
        "impl",
        "object",
        "protocol",
        "record",
        "type",
        "module",
        "namespace",
    }
)


@dataclass
class FileIndex:
    """Lookup tables over one file's declarations and imports."""

    by_id: dict[str, SymbolDef]
    by_qualified: dict[str, SymbolDef]
    scope: dict[tuple[str, str], str]
    family: str
    imported: dict[str, list[tuple[str, str]]]  # local name -> [(module, imported name)]
    stars: list[str]  # modules star-imported
    bases: dict[str, list[tuple[str, str | None]]]  # class id -> its inherit uses (name, recv)
    imports: list[ImportUse]  # every import use, in order
    members: dict[str, list[tuple[str, str]]]  # container -> [(name, id)] declared in it
    _qualified_ids: dict[str, str] | None = field(default=None, repr=False, compare=False)
    _facts: tuple[object, ...] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def of(cls, rec: FileRecord) -> FileIndex:
        """The index of a decoded record."""
        uses = (
            (r.kind, r.name, r.module, r.enclosing, recv)
            for r, recv in zip(rec.refs, rec.receivers, strict=True)
            if r.kind in ("import", "inherit")
        )
        return cls._build(rec.path, rec.lang, rec.defs, uses)

    @classmethod
    def of_row(cls, path: str, row: RecordRow) -> FileIndex:
        """The index of a cached row, without decoding its uses."""
        lang, _, _, _, def_rows, ref_rows = row
        defs = [
            SymbolDef(i, n, k, c, path, s, e, ln, el, ns, ne)
            for i, n, k, c, s, e, ln, el, ns, ne, _ in def_rows
        ]
        uses = ((r[1], r[0], r[7], r[5], r[8]) for r in ref_rows if r[1] in ("import", "inherit"))
        return cls._build(path, lang, defs, uses)

    @classmethod
    def _build(
        cls,
        path: str,
        lang: str,
        defs: Iterable[SymbolDef],
        uses: Iterable[tuple[str, str, str | None, str | None, str | None]],
    ) -> FileIndex:
        by_id: dict[str, SymbolDef] = {}
        by_qualified: dict[str, SymbolDef] = {}
        scope: dict[tuple[str, str], str] = {}
        members: dict[str, list[tuple[str, str]]] = {}
        for d in defs:
            by_id[d.id] = d
            by_qualified.setdefault(d.qualified, d)
            if (d.container, d.name) not in scope:
                scope[(d.container, d.name)] = d.id
                members.setdefault(d.container, []).append((d.name, d.id))
        imported: dict[str, list[tuple[str, str]]] = {}
        stars: list[str] = []
        bases: dict[str, list[tuple[str, str | None]]] = {}
        imports: list[ImportUse] = []
        for kind, name, module, enclosing, recv in uses:
            if kind == "inherit":
                if enclosing is not None:
                    bases.setdefault(enclosing, []).append((name, recv))
                continue
            imports.append((name, module, recv))
            if not module:
                continue
            if name == "*":
                stars.append(module)
            else:
                imported.setdefault(recv or name, []).append((module, name))
        family = language_family(lang, path)
        return cls(by_id, by_qualified, scope, family, imported, stars, bases, imports, members)

    def qualified_ids(self) -> dict[str, str]:
        """Qualified name -> the id of its first declaration (memoised)."""
        if self._qualified_ids is None:
            self._qualified_ids = {q: d.id for q, d in self.by_qualified.items()}
        return self._qualified_ids

    def facts(self) -> tuple[object, ...]:
        """Everything other files and the resolution of this one read of it, positions
        aside (memoised): two versions with equal facts resolve everything the same."""
        if self._facts is None:
            decls = {i: (d.name, d.kind, d.container) for i, d in self.by_id.items()}
            self._facts = (
                self.family,
                decls,
                self.scope,
                self.qualified_ids(),
                self.bases,
                self.imports,
                self.members,
            )
        return self._facts

    def class_view(self, decl_id: str) -> tuple[object, ...] | None:
        """What a reader outside the file sees of declaration ``decl_id`` as a class: its kind
        and name, its base uses, and every scope a name is looked up in from it (the chain of
        containers: which declaration each is) — the value of its ``class:`` key. What those
        scopes declare is read name by name (``member:`` keys)."""
        d = self.by_id.get(decl_id)
        if d is None:
            return None
        chain = []
        q = d.qualified
        while q:
            owner = self.by_qualified.get(q)
            head = (owner.id, owner.kind, owner.container) if owner is not None else None
            chain.append((q, head))
            q = owner.container if owner is not None else q.rpartition(".")[0]
        return (self.family, d.name, d.kind, d.container, self.bases.get(decl_id), chain)


def name_key(path: str, name: str) -> str:
    """The key of "what ``path`` binds to top-level ``name``" (a declaration or an import)."""
    return f"name:{path}\0{name}"


def class_key(path: str, class_id: str) -> str:
    """The key of "class ``class_id`` of ``path`` as other files see it"."""
    return f"class:{path}\0{class_id}"


def member_key(path: str, scope: str, name: str) -> str:
    """The key of "what ``name`` declared in scope ``scope`` (qualified) of ``path`` is"."""
    return f"member:{path}\0{scope}\0{name}"


def key_paths(keys: Iterable[str]) -> set[str]:
    """The files that ``name:``/``class:``/``member:``/``stars:`` keys are about."""
    out = set()
    for key in keys:
        kind, _, rest = key.partition(":")
        if kind in ("name", "class", "member"):
            out.add(rest.partition("\0")[0])
        elif kind == "stars":
            out.add(rest)
    return out


def _binding(idx: FileIndex | None, name: str) -> tuple[object, ...]:
    if idx is None:
        return (None, None, None)
    bound = [(n, m) for n, m, alias in idx.imports if (alias or n) == name]
    return (idx.scope.get(("", name)), idx.imported.get(name), bound)


def changed_keys(
    path: str,
    old: FileIndex | None,
    new: FileIndex | None,
    used: Callable[[str], bool] | None = None,
) -> set[str]:
    """The ``name:``/``stars:``/``class:``/``member:`` keys of ``path`` whose answer differs
    between two versions (None: the file is absent). ``used`` says whether anyone depends on a
    key: class and member keys nobody noted are not compared (a class's value costs a walk)."""
    if old is not None and new is not None:
        if old.family != new.family:
            return changed_keys(path, old, None, used) | changed_keys(path, None, new, used)
        if old.facts() == new.facts():
            return set()  # an edit inside bodies: every key reads the same
    names: set[str] = set()
    decls: set[str] = set()
    for idx in (old, new):
        if idx is not None:
            names.update(n for c, n in idx.scope if not c)
            names.update(alias or n for n, _, alias in idx.imports)
            decls.update(idx.by_id)
    if old is not None and new is not None and old.imports == new.imports:
        # imports unchanged (e.g. a function appended): only declarations can bind differently
        out = {name_key(path, n) for n in names if old.scope.get(("", n)) != new.scope.get(("", n))}
    else:
        out = {name_key(path, n) for n in names if _binding(old, n) != _binding(new, n)}
    for i in decls:
        key = class_key(path, i)
        if used is not None and not used(key):
            continue
        if (old.class_view(i) if old else None) != (new.class_view(i) if new else None):
            out.add(key)
    scoped: set[tuple[str, str]] = set()
    for idx in (old, new):
        if idx is not None:
            scoped.update(k for k in idx.scope if k[0])
    for scope, name in scoped:
        key = member_key(path, scope, name)
        if used is not None and not used(key):
            continue
        if (old.scope.get((scope, name)) if old else None) != (
            new.scope.get((scope, name)) if new else None
        ):
            out.add(key)
    if _stars(old) != _stars(new):
        out.add("stars:" + path)
    return out


def _stars(idx: FileIndex | None) -> tuple[object, ...]:
    if idx is None:
        return ()
    return (idx.stars, [m or n for n, m, _ in idx.imports if n == "*"])
