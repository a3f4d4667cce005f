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
reports what the answer depended on — the other files it read (``deps``) and the module keys it
looked up (``keys``) — so the graph knows exactly which files to re-resolve after a change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from sleuth.graph.modules import ModuleIndex, child_module
from sleuth.graph.records import FileRecord, language_family
from sleuth.model import SymbolDef, SymbolRef

__all__ = [
    "FileIndex",
    "Resolution",
    "Resolver",
    "Target",
    "EDGE_KIND",
    "CLASS_KINDS",
    "Occ",
    "name_key",
    "changed_keys",
    "shape_of",
]

EDGE_KIND = {"call": "calls", "reference": "references", "import": "imports", "inherit": "inherits"}
"""Ref kind -> edge kind; an unknown ref kind gives ``references``."""

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
_SELF = frozenset({"self", "this", "cls"})
_MAX_HOPS = 8

Target = tuple[str, str]
"""(path, declaration id); an empty id means the file node itself."""
Occ = tuple[int, int, int]
"""An occurrence in the owning file: (start_byte, end_byte, line)."""
EdgeKey = tuple[str, str, str]
T = TypeVar("T")


@dataclass
class FileIndex:
    """Lookup tables over one file's declarations."""

    by_id: dict[str, SymbolDef]
    by_qualified: dict[str, SymbolDef]
    scope: dict[tuple[str, str], str]
    family: str
    imported: dict[str, list[tuple[str, str]]]  # local name -> [(module, imported name)]
    stars: list[str]  # modules star-imported

    @classmethod
    def of(cls, rec: FileRecord) -> FileIndex:
        by_qualified: dict[str, SymbolDef] = {}
        scope: dict[tuple[str, str], str] = {}
        for d in rec.defs:
            by_qualified.setdefault(d.qualified, d)
            scope.setdefault((d.container, d.name), d.id)
        imported: dict[str, list[tuple[str, str]]] = {}
        stars: list[str] = []
        for ref, alias in zip(rec.refs, rec.receivers, strict=True):
            if ref.kind != "import" or not ref.module:
                continue
            if ref.name == "*":
                stars.append(ref.module)
            else:
                imported.setdefault(alias or ref.name, []).append((ref.module, ref.name))
        family = language_family(rec.lang, rec.path)
        return cls({d.id: d for d in rec.defs}, by_qualified, scope, family, imported, stars)


def shape_of(rec: FileRecord) -> tuple[object, ...]:
    """What resolving *another* file can read of ``rec``: its declarations (id, name, kind,
    container), its imports and its ``inherit`` uses — never a position. An edit that keeps
    the shape (a change inside bodies) cannot change any other file's edges."""
    defs = tuple(sorted((d.id, d.name, d.kind, d.container, d.qualified) for d in rec.defs))
    uses = tuple(
        (r.kind, r.name, r.module, r.enclosing, recv)
        for r, recv in zip(rec.refs, rec.receivers, strict=True)
        if r.kind in ("import", "inherit")
    )
    return (rec.lang, defs, uses)


def name_key(path: str, name: str) -> str:
    """The key of "what ``path`` binds to top-level ``name``" (a declaration or an import)."""
    return f"name:{path}\0{name}"


def changed_keys(path: str, old: FileIndex | None, new: FileIndex | None) -> set[str]:
    """The ``name:``/``stars:`` keys of ``path`` whose answer differs between two versions."""

    def binding(idx: FileIndex | None, name: str) -> tuple[object, object]:
        return (None, None) if idx is None else (idx.scope.get(("", name)), idx.imported.get(name))

    names: set[str] = set()
    for idx in (old, new):
        if idx is not None:
            names.update(n for c, n in idx.scope if not c)
            names.update(idx.imported)
    out = {name_key(path, n) for n in names if binding(old, n) != binding(new, n)}
    if (old.stars if old else []) != (new.stars if new else []):
        out.add("stars:" + path)
    return out


@dataclass
class Resolution:
    """What resolving one file produced: its edges (with occurrences) and its dependencies."""

    edges: dict[EdgeKey, list[Occ]] = field(default_factory=dict)
    deps: frozenset[str] = frozenset()
    keys: frozenset[str] = frozenset()
    unresolved: int = 0


@dataclass
class _Bindings:
    names: dict[str, Target | None]
    stars: list[str]
    imports: list[Target | None]  # per import ref, in order


class Resolver:
    """One resolution session over ``records`` (memoised; drop it after the update)."""

    def __init__(
        self,
        records: Mapping[str, FileRecord],
        index: Callable[[str], FileIndex],
        modules: ModuleIndex,
    ) -> None:
        self._records = records
        self._index = index
        self._modules = modules
        self._stack: list[tuple[set[str], set[str], set[tuple[str, ...]]]] = []
        self._memo: dict[tuple[str, ...], tuple[object, frozenset[str], frozenset[str]]] = {}
        self._busy: set[tuple[str, ...]] = set()
        self._own: tuple[str, _Bindings] | None = None

    # -- dependency bookkeeping ---------------------------------------------------------------

    def _touch(self, path: str) -> None:
        if self._stack:
            self._stack[-1][0].add(path)

    def _note(self, key: str) -> None:
        if self._stack:
            self._stack[-1][1].add(key)

    def _cached(self, key: tuple[str, ...], compute: Callable[[], T], default: T) -> T:
        """Memoise ``compute`` under ``key``, carrying its dependencies to every caller.

        A cycle (``class A(B)``/``class B(A)``, two modules star-importing each other) is cut
        where it closes; a result computed below such a cut depends on where the walk entered
        the cycle, so it is not memoised — this keeps answers independent of resolution order,
        which incremental updates rely on.
        """
        hit = self._memo.get(key)
        if hit is None:
            if key in self._busy:
                if self._stack:
                    self._stack[-1][2].add(key)
                return default
            self._busy.add(key)
            self._stack.append((set(), set(), set()))
            try:
                value: object = compute()
            finally:
                deps, keys, cuts = self._stack.pop()
                self._busy.discard(key)
            cuts.discard(key)
            hit = (value, frozenset(deps), frozenset(keys))
            if cuts:
                if self._stack:
                    self._stack[-1][2].update(cuts)
            else:
                self._memo[key] = hit
        if self._stack:
            self._stack[-1][0].update(hit[1])
            self._stack[-1][1].update(hit[2])
        return hit[0]  # type: ignore[return-value]

    def _file(self, path: str) -> tuple[FileRecord, FileIndex] | None:
        self._touch(path)
        rec = self._records.get(path)
        return None if rec is None else (rec, self._index(path))

    # -- one file -----------------------------------------------------------------------------

    def resolve_file(self, path: str) -> Resolution:
        """Resolve every use in ``path`` to edges (source node, target node, kind)."""
        rec = self._records[path]
        idx = self._index(path)
        self._stack.append((set(), set(), set()))
        out = Resolution()
        try:
            binds = self._bindings(path)
            self._own = (path, binds)  # skip the memo (and its dependency merge) per use
            n_import = 0
            for ref, recv in zip(rec.refs, rec.receivers, strict=True):
                if ref.kind == "import":
                    target = binds.imports[n_import] if n_import < len(binds.imports) else None
                    n_import += 1
                    source = path
                else:
                    target = self.lookup(path, ref.enclosing, ref.name, recv)
                    source = ref.enclosing if ref.enclosing in idx.by_id else path
                if target is None:
                    out.unresolved += 1
                    continue
                key = (source, target[1] or target[0], EDGE_KIND.get(ref.kind, "references"))
                out.edges.setdefault(key, []).append((ref.start_byte, ref.end_byte, ref.line))
        finally:
            self._own = None
            deps, keys, _ = self._stack.pop()
        deps.discard(path)
        out.deps, out.keys = frozenset(deps), frozenset(keys)
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
        owner = self._bindings(path).names.get(recv)
        if owner is None:
            head, _, last = recv.rpartition(".")
            owner = self.lookup(path, enclosing, last, head or None)
        if owner is None:
            return None
        if not owner[1]:
            return self._exported(owner[0], name)
        got = self._file(owner[0])
        if got and got[1].by_id[owner[1]].kind in CLASS_KINDS:
            return self._member(owner, name, frozenset())
        return None

    def _bare(self, path: str, enclosing: str | None, name: str) -> Target | None:
        idx = self._index(path)
        d = idx.by_id.get(enclosing) if enclosing else None
        if d is not None:
            strict = idx.family in ("python", "js")
            q: str | None = d.qualified
            while q:
                owner = idx.by_qualified.get(q)
                is_class = owner is not None and owner.kind in CLASS_KINDS
                if not (strict and is_class and q != d.qualified):
                    hit = idx.scope.get((q, name))
                    if hit:
                        return (path, hit)
                q = owner.container if owner is not None else q.rpartition(".")[0]
        hit = idx.scope.get(("", name))
        if hit:
            return (path, hit)
        binds = self._bindings(path)
        if name in binds.names:
            return binds.names[name]
        for star in binds.stars:
            found = self._exported(star, name)
            if found:
                return found
        return None

    def _enclosing_class(self, path: str, enclosing: str | None) -> Target | None:
        idx = self._index(path)
        d = idx.by_id.get(enclosing) if enclosing else None
        while d is not None:
            if d.kind in CLASS_KINDS:
                return (path, d.id)
            d = idx.by_qualified.get(d.container) if d.container else None
        return None

    def _member(self, cls: Target, name: str, seen: frozenset[Target]) -> Target | None:
        got = self._file(cls[0])
        if got is None or cls in seen or len(seen) > _MAX_HOPS:
            return None
        d = got[1].by_id.get(cls[1])
        if d is None:
            return None
        hit = got[1].scope.get((d.qualified, name))
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
            got = self._file(cls[0])
            if got is None:
                return []
            rec = got[0]
            out: list[Target] = []
            for ref, recv in zip(rec.refs, rec.receivers, strict=True):
                if ref.kind == "inherit" and ref.enclosing == cls[1]:
                    t = self.lookup(cls[0], cls[1], ref.name, recv)
                    if t and t[1] and t != cls and t not in out:
                        out.append(t)
            return out

        return self._cached(("bases", *cls), compute, [])

    # -- imports ------------------------------------------------------------------------------

    def _module(self, importer: str, module: str) -> str | None:
        family = self._index(importer).family

        def compute() -> str | None:
            # Depends on which files exist (the noted keys), not on the found file's content.
            return self._modules.resolve(importer, family, module, self._note)

        return self._cached(("module", importer, module), compute, None)

    def _exported(self, path: str, name: str) -> Target | None:
        """``name`` at the top level of ``path``: its own declaration, else a re-export."""
        return self._cached(("exported", path, name), lambda: self._find_export(path, name), None)

    def _find_export(self, path: str, name: str) -> Target | None:
        # Reads only what ``path`` binds to ``name`` (and its star list), so it depends on
        # those keys rather than on the whole file: editing elsewhere in a hub module such as
        # a package __init__ does not re-resolve every file importing through it.
        if path not in self._records:
            return None
        idx = self._index(path)
        self._note(name_key(path, name))
        hit = idx.scope.get(("", name))
        if hit:
            return (path, hit)
        for module, imported in idx.imported.get(name, ()):
            target = self._module(path, module)
            found = self._exported(target, imported) if target else None
            if found:
                return found
        self._note("stars:" + path)
        for module in idx.stars:  # ``from .sub import *`` in a package's __init__
            target = self._module(path, module)
            found = self._exported(target, name) if target else None
            if found:
                return found
        return None

    def _bindings(self, path: str) -> _Bindings:
        """The names ``path``'s imports bind, the files it star-imports, each import's target."""
        if self._own is not None and self._own[0] == path:
            return self._own[1]
        return self._cached(
            ("bindings", path), lambda: self._compute_bindings(path), _Bindings({}, [], [])
        )

    def _compute_bindings(self, path: str) -> _Bindings:
        rec = self._records[path]
        family = self._index(path).family
        out = _Bindings({}, [], [])
        for ref, alias in zip(rec.refs, rec.receivers, strict=True):
            if ref.kind != "import":
                continue
            target = self._import_target(path, family, ref, alias, out)
            out.imports.append(target)
        return out

    def _import_target(
        self, path: str, family: str, ref: SymbolRef, alias: str | None, out: _Bindings
    ) -> Target | None:
        module, name = ref.module or ref.name, ref.name
        file = self._module(path, module)
        if name == "*":
            if file:
                out.stars.append(file)
            return (file, "") if file else None
        bound: Target | None = None
        if file:
            bound = self._exported(file, name)
        is_self = name == module or module.endswith(("." + name, "/" + name))
        if bound is None and file and is_self:
            bound = (file, "")
        if bound is None and name.isidentifier():
            sub = self._module(path, child_module(module, name)) if family == "python" else None
            if sub:
                bound = (sub, "")
        if bound is None and file and family != "python":
            bound = (file, "")  # namespace or default import: the module itself
        out.names[alias or name] = bound  # a later import rebinds the name, as at run time
        if bound is None and file:
            return (file, "")
        return bound
