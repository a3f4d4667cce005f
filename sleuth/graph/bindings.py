"""The import half of name resolution, and the memoised session both halves run in.

``ImportResolver`` follows a file's imports to the module's file (``ModuleIndex``) and through
re-exports: what each import binds (``_bindings``: the names, the files it star-imports, each
import's target) and what a module exports under a name (``_exported``: its own top-level
declaration, else what it imports under that name, else what its star imports export).
``resolve.Resolver`` adds scopes and receivers on top of it.

Every read of another file notes the key it depended on (``file_index``), and every answer is
memoised with the keys read below it (``_cached``), so work reused by another file carries its
dependencies along.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from sleuth.graph.file_index import FileIndex, name_key
from sleuth.graph.modules import ModuleIndex, child_module
from sleuth.graph.records import FileRecord

__all__ = ["ImportResolver", "Target"]

Target = tuple[str, str]
"""(path, declaration id); an empty id means the file node itself."""
T = TypeVar("T")


@dataclass
class _Bindings:
    names: dict[str, Target | None]
    stars: list[str]
    imports: list[Target | None]  # per import ref, in order


class ImportResolver:
    """The memo and dependency bookkeeping of one resolution session over ``records``, and the
    imports followed in it (see ``resolve.Resolver``, which is one)."""

    def __init__(
        self,
        records: Mapping[str, FileRecord],
        index: Callable[[str], FileIndex],
        modules: ModuleIndex,
    ) -> None:
        self._records = records
        self._index = index
        self._modules = modules
        self._stack: list[tuple[set[str], set[tuple[str, ...]]]] = []
        self._memo: dict[tuple[str, ...], tuple[object, frozenset[str]]] = {}
        self._busy: set[tuple[str, ...]] = set()
        self._own: str | None = None  # the file being resolved (its bindings: ``_own_binds``)
        self._own_binds: _Bindings | None = None

    # -- dependency bookkeeping ---------------------------------------------------------------

    def _note(self, key: str) -> None:
        if self._stack:
            self._stack[-1][0].add(key)

    def _foreign(self, path: str) -> bool:
        """Whether a read of ``path`` must be noted (see ``resolve.Resolver``)."""
        return len(self._stack) > 1 or self._own != path

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
                    self._stack[-1][1].add(key)
                return default
            self._busy.add(key)
            self._stack.append((set(), set()))
            try:
                value: object = compute()
            finally:
                keys, cuts = self._stack.pop()
                self._busy.discard(key)
            cuts.discard(key)
            hit = (value, frozenset(keys))
            if cuts:
                if self._stack:
                    self._stack[-1][1].update(cuts)
            else:
                self._memo[key] = hit
        if self._stack and hit[1]:
            self._stack[-1][0].update(hit[1])
        return hit[0]  # type: ignore[return-value]

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
        if self._own == path and len(self._stack) == 1:
            # the file being resolved, for itself: once, then without the memo's key merge
            # (memoised work must merge them: it is not here)
            if self._own_binds is None:
                self._own_binds = self._cached(
                    ("bindings", path), lambda: self._compute_bindings(path), _Bindings({}, [], [])
                )
            return self._own_binds
        return self._cached(
            ("bindings", path), lambda: self._compute_bindings(path), _Bindings({}, [], [])
        )

    def _compute_bindings(self, path: str) -> _Bindings:
        idx = self._index(path)
        out = _Bindings({}, [], [])
        for name, module, alias in idx.imports:
            out.imports.append(self._import_target(path, idx.family, name, module, alias, out))
        return out

    def _import_target(
        self,
        path: str,
        family: str,
        name: str,
        module: str | None,
        alias: str | None,
        out: _Bindings,
    ) -> Target | None:
        module = module or name
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
