"""Workspace-relative paths, and the sets of user globs workspace rules are written in.

* ``normalize_rel`` turns user input (``"./src//a.py"``, ``"/"``, ``"src/../a.py"``) into the
  canonical relative POSIX form of docs/faces.md#paths, or raises ``InvalidPath`` for input that
  leaves the root lexically (absolute paths, ``..`` past the root, NUL bytes).
* ``PathGlobs`` compiles a set of user globs (``include``, ``exclude``, ``deny``), each with rg's
  ``--glob`` meaning as ``user_globs.py`` translates it; ``split_globs`` reads ``!glob`` includes
  as exclusions. Ignore files keep git's meaning instead (``wildmatch.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence

from sleuth.errors import InvalidPath
from sleuth.workspace.user_globs import GlobSyntaxError, compile_bodies, parse_glob

__all__ = [
    "normalize_rel",
    "ancestors",
    "PathGlobs",
    "split_globs",
    "reportable_name",
    "EDIT_TEMP_PREFIX",
]

EDIT_TEMP_PREFIX = ".sleuth-tmp-"
"""The name of an edit's temporary file starts so (``.sleuth-tmp-<id>-<n>``, in the folder of
the file it replaces): sleuth's own, never listed (docs/faces.md#which-files-are-searched)."""

_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
"""Characters that would break a line of an answer's text (newlines, the separators
``str.splitlines`` honours) or drive a terminal (escape sequences)."""


def reportable_name(name: str) -> bool:
    """Whether a file or folder name can be shown in an answer: UTF-8 text without control
    characters. Any other is left out of listings and refused as a path
    (docs/faces.md#which-files-are-searched): a name holding a newline could forge a match
    line of the text an agent reads, and a path is text in every face."""
    if name.isascii():
        return name.isprintable()
    if _UNPRINTABLE.search(name):
        return False
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_SEGMENT = r"(?!\.\.?(?:/|\Z))[^/\x00]+"
_CANONICAL = re.compile(rf"{_SEGMENT}(?:/{_SEGMENT})*")
"""A path ``normalize_rel`` gives back unchanged: segments that are neither empty, ``.``,
``..`` nor hold a NUL, and no leading or trailing slash."""


def normalize_rel(path: str) -> str:
    """The canonical workspace-relative form of ``path`` ("" is the root).

    Purely lexical: no file system access. Raises ``InvalidPath`` for NUL bytes, absolute paths
    (except the bare ``"/"``, which docs/faces.md#paths uses for the root) and ``..`` that leaves
    the root.
    """
    if _CANONICAL.fullmatch(path):  # a listed path: every read of a scan passes one
        return path
    return _normalized(path)


def _normalized(path: str) -> str:
    if "\x00" in path:
        raise InvalidPath(
            "path contains a NUL byte; give a plain relative path such as 'src/app.py'",
            details={"path": path.replace("\x00", "\\0")},
        )
    if path in ("", ".", "/"):
        return ""
    if path.startswith("/"):
        raise InvalidPath(
            f"absolute paths are not accepted: {path}; give the path relative to the workspace "
            "root, e.g. 'src/app.py' (use '/' or '' for the root itself)",
            details={"path": path},
        )
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                raise InvalidPath(
                    f"path leaves the workspace root: {path}; only paths inside the root can be "
                    "used",
                    details={"path": path},
                )
            parts.pop()
            continue
        parts.append(part)
    return "/".join(parts)


def ancestors(rel: str) -> Iterator[str]:
    """``rel`` and every folder above it, deepest first, root ("") excluded."""
    while rel:
        yield rel
        cut = rel.rfind("/")
        rel = rel[:cut] if cut >= 0 else ""


def _alternation(bodies: list[str]) -> Callable[[str], object] | None:
    return compile_bodies(bodies) if bodies else None


def _folder_variant(glob: str, whole_folder: bool) -> str | None:
    """The folder itself of ``X/`` (whose files the walker then takes or drops as one), and
    with ``whole_folder`` (a deny list) of ``X/**``: a folder named ``X`` at any depth, as the
    deny list always cloaked it — a deny rule errs on the side of hiding (docs/SAFETY.md)."""
    text = glob if glob.endswith("\\ ") else glob.rstrip()
    if text.endswith("/") and text.strip("/."):
        return text.rstrip("/")
    if whole_folder and text.endswith("/**") and len(text) > 3:
        return text[:-3]
    return None


_WILDCARDS = frozenset("*?[{\\")


class _Matcher:
    """Compiled globs: a path regex, a base-name regex and exact base names."""

    __slots__ = ("path_re", "base_re", "names")

    def __init__(self, globs: Sequence[str], named: Sequence[str]) -> None:
        self.path_re, self.base_re, self.names = _compiled(globs, named)

    def match(self, rel: str) -> bool:
        if self.path_re is not None and self.path_re(rel):
            return True
        if self.base_re is None and self.names is None:
            return False
        base = rel[rel.rfind("/") + 1 :]
        if self.names is not None and base in self.names:
            return True
        return self.base_re is not None and self.base_re(base) is not None


class PathGlobs:
    """A set of user globs (``include``, ``exclude``, ``deny``) compiled into two regexes.

    Each glob has rg's ``-g`` meaning (``parse_glob``); one that rg refuses is ``InvalidQuery``
    naming it, so a mistyped glob never silently matches nothing (nor a deny list cloak less).
    A glob ending in ``/`` also matches the folder itself (so the walker prunes or takes it
    whole), and with ``whole_folder=True`` so does one ending in ``/**``: ``secrets/**`` cloaks
    ``secrets`` as well as what is inside it. Those folder readings match folders only when
    the caller says what ``rel`` is (``folder``): an exclude ``lib/`` keeps a file named
    ``lib``, as rg does; a deny list asks without saying, and hides such a file too. An include
    takes a folder whole (``takes_any_level``) only by a glob without wildcards (``src``,
    ``src/utils``) or one ending in ``/``; ``a*`` keeps the files it matches, not what lies
    below a folder ``a.py``, as in rg (docs/query.md#options).
    """

    __slots__ = ("globs", "_all", "_folders", "_plain")

    def __init__(self, globs: Sequence[str], *, whole_folder: bool = False) -> None:
        self.globs = tuple(globs)
        folders: list[str] = []
        raws: list[str] = []  # the glob each folder reading comes from (for its errors)
        for raw in self.globs:
            folder = _folder_variant(raw, whole_folder)
            if folder is not None:
                folders.append(folder)
                raws.append(raw)
        self._all = _Matcher(self.globs, self.globs)
        self._folders = _Matcher(folders, raws) if folders else None
        plain = [g for g in self.globs if not _WILDCARDS.intersection(g)]
        self._plain = _Matcher(plain, plain) if plain else None  # globs without wildcards

    def __bool__(self) -> bool:
        m = self._all
        return m.path_re is not None or m.base_re is not None or bool(m.names)

    def match(self, rel: str, folder: bool | None = None) -> bool:
        """True when one glob matches ``rel`` itself (not its folders); ``folder`` says
        whether ``rel`` is a folder (None: not known, and the folder readings count)."""
        if self._all.match(rel):
            return True
        return folder is not False and self._folders is not None and self._folders.match(rel)

    def literal_names(self) -> frozenset[str] | None:
        """The base names these globs match when every glob is one exact name (``vendor``,
        ``__init__.py``), else None: such globs match a path only by its last part."""
        if self._all.path_re is not None or self._all.base_re is not None:
            return None
        return self._all.names or frozenset()

    def match_any_level(self, rel: str, folder: bool | None = None) -> bool:
        """True when one glob matches ``rel`` (a folder or not, as ``folder`` says) or any
        folder above it."""
        return any(self.match(p, folder if p == rel else True) for p in ancestors(rel))

    def takes_whole(self, folder: str) -> bool:
        """Whether an include glob takes ``folder`` whole (every file below it): one without
        wildcards names it, or one ending in ``/``."""
        if self._plain is not None and self._plain.match(folder):
            return True
        return self._folders is not None and self._folders.match(folder)

    def takes_any_level(self, rel: str, folder: bool) -> bool:
        """Whether an include glob keeps ``rel``: a folder above it (or ``rel``, a folder)
        taken whole, or ``rel``, a file, matched."""
        if folder and self.takes_whole(rel):
            return True
        if not folder and self.match(rel, False):
            return True
        return any(self.takes_whole(p) for p in ancestors(rel) if p != rel)


def _compiled(
    globs: Sequence[str], named: Sequence[str]
) -> tuple[Callable[[str], object] | None, Callable[[str], object] | None, frozenset[str] | None]:
    """(path regex, base-name regex, exact base names) of ``globs``; an error names the
    user's glob it came from (``named``, index for index)."""
    path_bodies: list[str] = []
    base_bodies: list[str] = []
    names: set[str] = set()  # globs that are one exact base name: a set lookup
    for glob, raw in zip(globs, named, strict=True):
        try:
            pattern = parse_glob(glob)
        except GlobSyntaxError as exc:
            raise exc.invalid_query(raw) from None
        if pattern is None:
            continue
        if pattern.name is not None:
            names.add(pattern.name)
        elif pattern.name_regex is not None:
            base_bodies.append(pattern.name_regex)
        else:
            path_bodies.append(pattern.regex)
    return _alternation(path_bodies), _alternation(base_bodies), frozenset(names) or None


def split_globs(include: Sequence[str], exclude: Sequence[str]) -> tuple[PathGlobs, PathGlobs]:
    """``include`` entries written ``!glob`` are exclusions (as in rg's ``-g '!glob'``)."""
    inc = [g for g in include if not g.startswith("!")]
    exc = list(exclude) + [g[1:] for g in include if g.startswith("!")]
    return PathGlobs(inc), PathGlobs(exc)
