"""Module paths to files: which workspace file an import statement names.

Python: ``pkg.mod`` -> ``pkg/mod.py`` or ``pkg/mod/__init__.py`` (also ``.pyi``), found under the
workspace root or under any source root (a folder that is not itself a package, such as
``src/``); relative ``.mod``/``..pkg.mod`` from the importing file's package. TypeScript and
JavaScript: ``./mod`` -> ``mod.ts|.tsx|.d.ts|.js|.jsx|.mjs|.cjs`` or ``mod/index.*``; a bare
specifier (``react``) is a package outside the workspace and stays unresolved.

Every lookup reports the *keys* it depended on through ``note``: ``file:PATH`` for a path whose
existence was checked and ``py:DOTTED`` for a dotted module looked up by suffix. A file provides
the keys ``provided_keys(path)``; when a file appears or disappears the graph re-resolves the
files that noted one of its keys — which is what makes incremental updates equal full rebuilds.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable

__all__ = ["ModuleIndex", "provided_keys", "python_module_of", "child_module"]

PY_EXTS = (".py", ".pyi")
JS_EXTS = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
_STRIP_EXTS = tuple(sorted({*JS_EXTS, *PY_EXTS, ".json"}, key=len, reverse=True))

Note = Callable[[str], None]


def python_module_of(path: str) -> str | None:
    """The dotted module a Python file defines relative to the root (``a/b/__init__.py`` -> ``a.b``)."""
    for ext in PY_EXTS:
        if path.endswith(ext):
            stem = path[: -len(ext)]
            break
    else:
        return None
    parts = [p for p in stem.split("/") if p]
    if parts and parts[-1] == "__init__":
        parts.pop()
    if not parts or any(not p.isidentifier() for p in parts):
        return None
    return ".".join(parts)


def provided_keys(path: str) -> set[str]:
    """The lookup keys a file satisfies: its own path, and every dotted suffix for Python."""
    keys = {"file:" + path}
    dotted = python_module_of(path)
    if dotted:
        parts = dotted.split(".")
        keys.update("py:" + ".".join(parts[i:]) for i in range(len(parts)))
    return keys


def child_module(module: str, name: str) -> str:
    """``pkg`` + ``mod`` -> ``pkg.mod``; ``.`` + ``mod`` -> ``.mod`` (for ``from pkg import mod``)."""
    return module + name if module.endswith(".") else f"{module}.{name}"


class ModuleIndex:
    """The set of files in the graph, with Python files indexed by every dotted suffix."""

    def __init__(self) -> None:
        self.paths: set[str] = set()
        self._py: dict[str, set[str]] = {}

    def add(self, path: str) -> None:
        """Register ``path`` (idempotent)."""
        if path in self.paths:
            return
        self.paths.add(path)
        for key in provided_keys(path):
            if key.startswith("py:"):
                self._py.setdefault(key[3:], set()).add(path)

    def remove(self, path: str) -> None:
        """Forget ``path`` (no error when absent)."""
        if path not in self.paths:
            return
        self.paths.discard(path)
        for key in provided_keys(path):
            if key.startswith("py:"):
                bucket = self._py.get(key[3:])
                if bucket is not None:
                    bucket.discard(path)
                    if not bucket:
                        del self._py[key[3:]]

    def resolve(self, importer: str, family: str, module: str, note: Note) -> str | None:
        """The file ``module`` (as written in ``importer``) names, or None when not in the graph."""
        if not module:
            return None
        if family == "python":
            if module.startswith("."):
                return self._first(self._python_relative(importer, module), note)
            return self._python_absolute(importer, module, note)
        if module.startswith((".", "/")):
            return self._first(self._js_candidates(importer, module), note)
        return None

    def _first(self, candidates: list[str], note: Note) -> str | None:
        for cand in candidates:
            note("file:" + cand)
            if cand in self.paths:
                return cand
        return None

    @staticmethod
    def _python_relative(importer: str, module: str) -> list[str]:
        level = len(module) - len(module.lstrip("."))
        rest = module[level:]
        base = posixpath.dirname(importer)
        for _ in range(level - 1):
            if not base:
                return []
            base = posixpath.dirname(base)
        parts = [p for p in rest.split(".") if p]
        stem = "/".join([base, *parts]) if base else "/".join(parts)
        if not parts:
            return [posixpath.join(base, "__init__.py"), posixpath.join(base, "__init__.pyi")]
        return [stem + ".py", stem + ".pyi", stem + "/__init__.py", stem + "/__init__.pyi"]

    def _python_absolute(self, importer: str, module: str, note: Note) -> str | None:
        note("py:" + module)
        found = self._py.get(module)
        if not found:
            return None
        mod_path = module.replace(".", "/")
        endings = [mod_path + ext for ext in PY_EXTS]
        endings += [mod_path + "/__init__" + ext for ext in PY_EXTS]
        ranked: list[tuple[int, int, str]] = []
        for cand in found:
            prefix = None
            for ending in endings:
                if cand == ending:
                    prefix = ""
                elif cand.endswith("/" + ending):
                    prefix = cand[: -len(ending) - 1]
                if prefix is not None:
                    break
            if prefix is None:
                continue
            if prefix:
                # A source root (src/, a script folder) is not a package itself.
                init = prefix + "/__init__.py"
                note("file:" + init)
                if init in self.paths:
                    continue
                rank = 1 if importer.startswith(prefix + "/") else 2
            else:
                rank = 0
            ranked.append((rank, len(cand), cand))
        return min(ranked)[2] if ranked else None

    @staticmethod
    def _js_candidates(importer: str, module: str) -> list[str]:
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(importer), module))
        if joined.startswith("..") or joined.startswith("/"):
            return []
        out: list[str] = []
        stem = joined
        for ext in _STRIP_EXTS:
            if joined.endswith(ext):
                out.append(joined)
                stem = joined[: -len(ext)]
                break
        out += [stem + ext for ext in JS_EXTS]
        out += [stem + "/index" + ext for ext in JS_EXTS]
        return out
