"""The inline constraints of a ``find`` query (docs/faces.md#find-constraints).

A ``find`` query may carry, besides what it looks for, tokens that narrow the files searched,
as fff and VS Code's quick-open read them:

- a glob: a token starting with ``*`` (``*.rs``, ``*.{ts,tsx}``, ``**/test_*.py``), or one
  holding a ``/`` and a glob character (``src/**/*.py``), with the meaning of an ``include``
  glob (``sleuth.workspace.user_globs``: without ``/`` it matches the base name at any depth);
- a folder: a token ending with ``/`` (``src/``, ``pkg/core/``): the path must hold that folder
  (a segment run anywhere in it, not only at the root);
- an exclusion: ``!`` before a glob or a folder (``!*.spec.ts``, ``!tests/``); in files mode also
  before a plain word (``!test``: no path containing it, case-insensitively).

Several globs (or folders, or extensions) are alternatives; the kinds combine with AND. In files
mode every token is looked at and the others form the fuzzy needle. In grep mode only the
tokens *before* the text count (``*.py TODO`` searches ``TODO`` in Python files) and the text
after them is kept exactly as written, so ``TODO src/`` searches for ``TODO src/``. The ``path``
argument is a scope (a folder or file, checked by the workspace); ``ext`` is an extension list
(``rs``, ``.rs``, ``rs,ts``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sleuth.errors import InvalidQuery
from sleuth.workspace.user_globs import GlobSyntaxError, glob_matcher

__all__ = ["Constraints", "parse_constraints", "parse_ext"]

_GLOB_CHARS = frozenset("*?[{")
_TOKEN = re.compile(r"\S+")


@dataclass(frozen=True)
class Constraints:
    """A ``find`` query split into its needle and the constraints on the files searched."""

    needle: str
    globs: tuple[str, ...] = ()
    folders: tuple[str, ...] = ()
    exts: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    """Exclusions as written, without the ``!``."""
    path: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The constraints as docs/json.md#find shows them (``diagnostics.constraints``)."""
        return {
            "path": self.path,
            "globs": list(self.globs),
            "folders": list(self.folders),
            "ext": list(self.exts),
            "exclude": list(self.exclude),
        }

    def matcher(self) -> Callable[[str], bool]:
        """A predicate on workspace-relative paths: does the path pass every constraint?"""
        globs = [_glob(g) for g in self.globs]
        folders = [_folder(f) for f in self.folders]
        exts = tuple("." + e.lower() for e in self.exts)
        dropped = [_exclusion(x) for x in self.exclude]

        def keep(path: str) -> bool:
            if globs and not any(g(path) for g in globs):
                return False
            if folders and not any(f(path) for f in folders):
                return False
            if exts and not path.lower().endswith(exts):
                return False
            return not any(x(path) for x in dropped)

        return keep


def _kind(token: str) -> str | None:
    """``"glob"``, ``"folder"`` or None for a token that is not a constraint."""
    if token.startswith("*") or ("/" in token and _GLOB_CHARS & set(token)):
        return "glob"
    if token.endswith("/") and token.strip("/"):
        return "folder"
    return None


def _glob(glob: str) -> Callable[[str], bool]:
    try:
        match = glob_matcher(glob)
    except GlobSyntaxError as exc:
        raise exc.invalid_query(glob, " in the find query") from None
    return lambda path: bool(match(path))


def _folder(folder: str) -> Callable[[str], bool]:
    search = re.compile(r"(?:^|/)" + re.escape(folder.strip("/")) + "/").search
    return lambda path: search(path) is not None


def _exclusion(token: str) -> Callable[[str], bool]:
    kind = _kind(token)
    if kind == "glob":
        return _glob(token)
    if kind == "folder":
        return _folder(token)
    word = token.lower()
    return lambda path: word in path.lower()


def parse_ext(ext: str | Sequence[str] | None) -> tuple[str, ...]:
    """``rs``, ``.rs``, ``*.rs``, ``rs,ts`` or a list of them -> ``("rs", "ts")``."""
    if ext is None:
        return ()
    items = [ext] if isinstance(ext, str) else list(ext)
    out: list[str] = []
    for item in items:
        for part in re.split(r"[,\s]+", item):
            name = part.removeprefix("*").lstrip(".")
            if not name:
                continue
            if "/" in name or _GLOB_CHARS & set(name):
                raise InvalidQuery(
                    f"ext is a file extension such as 'rs' or 'py,pyi', got {part!r}",
                    details={"argument": "ext"},
                )
            if name not in out:
                out.append(name)
    return tuple(out)


def parse_constraints(
    query: str, *, grep: bool, path: str | None = None, ext: str | None = None
) -> Constraints:
    """Split ``query`` into its needle and constraints (module docstring); globs are checked."""
    found: dict[str, list[str]] = {"glob": [], "folder": [], "exclude": []}
    needle_parts: list[str] = []
    rest = 0
    for token in _TOKEN.finditer(query):
        text = token.group()
        negated = text.startswith("!") and len(text) > 1
        kind = _kind(text[1:] if negated else text)
        if negated and (kind is not None or not grep):
            found["exclude"].append(text[1:])
        elif kind is not None:
            found[kind].append(text)
        elif grep:
            break  # the text starts here and is kept as written
        else:
            needle_parts.append(text)
            continue
        rest = token.end()
    needle = " ".join(needle_parts)
    if grep:  # the text as written, from the first token that is not a constraint
        needle = query[rest:].lstrip() if rest else query
    cons = Constraints(
        needle=needle,
        globs=tuple(found["glob"]),
        folders=tuple(found["folder"]),
        exts=parse_ext(ext),
        exclude=tuple(found["exclude"]),
        path=path or None,
    )
    cons.matcher()  # a bad glob is invalid_query now, before any file is listed
    return cons
