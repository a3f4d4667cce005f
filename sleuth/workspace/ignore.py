"""Ignore files with git's semantics: ``.gitignore``, ``.ignore`` and ``.git/info/exclude``.

Each ignore file compiles once into ``IgnoreRules``: one ``ignore_match.LineMatcher`` per entry
kind (files, folders) answers the number of the file's last matching line — git's "last line
wins" — from tables for the literal shapes (names, ``*.ext``, prefixes, suffixes, paths) and
regex alternations for the rest; a table says whether that line was a ``!`` re-include. The
walker asks once per folder which tables can match there (``folder_levels``), then once per
entry (``ignored_name``).

``IgnoreStack`` is the ordered list of rule sets that apply inside one folder, in the order they
are consulted (ripgrep's precedence, which equals git's for git's own files):

1. ``.ignore`` files, deepest folder first,
2. ``.gitignore`` files, deepest folder first,
3. ``.git/info/exclude`` of the repository.

The folders above the root contribute too (``base_stack``: every ``.ignore``; ``.gitignore`` up
to the repository top, or up to ``/`` outside git), as ripgrep reads them. A line ending in
``\\/`` is a folder pattern (ripgrep's reading; git's never matches).

The first rule set with a matching line decides (ignored, or re-included by ``!``); inside one
file the last matching line decides. Folders that are ignored are pruned by the walker, so a file
inside an ignored folder cannot be re-included, as in git. We deliberately do not use pathspec's
tree semantics: it keeps ``neg/d/`` ignored under ``*`` + ``!*/``
(benchmarks/RESULTS.md#measured-constraints).
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterator

from sleuth.workspace.ignore_match import IgnoreLine, LineMatcher, View, is_empty, last_line
from sleuth.workspace.wildmatch import wildmatch_to_regex

__all__ = [
    "IgnoreRules",
    "IgnoreLevel",
    "IgnoreStack",
    "RulesCache",
    "RulesKey",
    "rules_key",
    "parse_lines",
    "find_repo",
    "base_stack",
    "outside_signature",
    "FolderLevels",
    "folder_levels",
    "ignored_name",
]

_BOM = "\ufeff"
_GITFILE_MAX = 4096  # a `.git` file or `commondir` holds one path


def _trim_trailing_spaces(line: str) -> str:
    """git's ``trim_trailing_spaces``: drop trailing blanks unless backslash-escaped."""
    last_space = -1
    i = 0
    n = len(line)
    while i < n:
        c = line[i]
        if c == " ":
            if last_space < 0:
                last_space = i
        elif c == "\\":
            i += 1
            if i >= n:
                return line
            last_space = -1
        else:
            last_space = -1
        i += 1
    return line[:last_space] if last_space >= 0 else line


def parse_lines(text: str) -> list[IgnoreLine]:
    """Each effective line of an ignore file, in file order."""
    if text.startswith(_BOM):
        text = text[1:]
    rules: list[IgnoreLine] = []
    for raw in text.split("\n"):
        if raw.endswith("\r"):
            raw = raw[:-1]
        if not raw or raw.startswith("#"):
            continue
        line = _trim_trailing_spaces(raw)
        negated = line.startswith("!")
        if negated:
            line = line[1:]
        dir_only = line.endswith("/")
        if dir_only:
            line = line[:-1]
            if line.endswith("\\"):
                line = line[:-1]  # `foo\/` is the folder pattern `foo/` (ripgrep; git: no match)
        if not line:
            continue
        anchored = "/" in line
        if line.startswith("/"):
            line = line[1:]
        body = wildmatch_to_regex(line)
        if body is None:
            continue
        rules.append(IgnoreLine(line, body, negated, dir_only, anchored))
    return rules


class IgnoreRules:
    """The compiled lines of one ignore file (``ignore_match.LineMatcher``, one per entry kind)."""

    __slots__ = ("source", "_files", "_dirs", "_neg")

    def __init__(self, rules: list[IgnoreLine], source: str = "") -> None:
        self.source = source
        numbered = list(enumerate(rules, 1))
        self._files = LineMatcher([(n, r) for n, r in numbered if not r.dir_only])
        self._dirs = LineMatcher(numbered)
        self._neg = (False, *(r.negated for r in rules))

    def __bool__(self) -> bool:
        return bool(self._dirs)

    def views(self, prefix: str) -> tuple[View, View, tuple[bool, ...]] | None:
        """(files' view, folders' view, ``!`` per line number) for the entries of the folder
        ``prefix`` (its path from this file's folder); None when no line can match there."""
        files, dirs = self._files.view(prefix), self._dirs.view(prefix)
        if is_empty(dirs):  # the folders' lines include the files'
            return None
        return files, dirs, self._neg

    def decide(self, path: str, is_dir: bool, name: str | None = None) -> bool | None:
        """True if ignored, False if re-included with ``!``, None if no line matches.

        ``path`` is relative to the ignore file's folder; ``name`` is its base name when the
        caller already has it.
        """
        if name is None:
            name = path.rpartition("/")[2]
        no = (self._dirs if is_dir else self._files).last_line(path, name)
        if not no:
            return None
        return not self._neg[no]


RulesKey = tuple[int, int, int, int]
"""What a compiled ignore file is kept under: (size, mtime_ns, ctime_ns, inode)."""

_RACY_NS = 2_000_000_000


def rules_key(st: os.stat_result) -> RulesKey:
    """``RulesCache``'s key of an ignore file stat'ed as ``st``. The ctime is in it because a
    rewrite that keeps the size and restores the mtime (``cp -p``, ``touch -r``) moves only the
    ctime: without it a long-running face kept the old rules (docs/SAFETY.md#what-a-watching-
    face-may-answer-late: listings and caches compare size, mtime and ctime)."""
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


class RulesCache:
    """Compiled ignore files by path, reused across walks while the file is unchanged.

    One per workspace (``Workspace`` owns it; docs/architecture.md#no-process-state-in-modules);
    it is dropped whole past ``max_files`` (``Tuning.ignore_cache_max``). A file changed in
    the last two seconds is compiled but not kept (the content cache's "racily clean" rule,
    ``reader.py``): two writes within one timestamp tick leave the same key.
    """

    def __init__(self, max_files: int) -> None:
        self.max_files = max_files
        self._rules: dict[str, tuple[RulesKey, IgnoreRules]] = {}

    def load(self, path: str, key: RulesKey | None = None) -> IgnoreRules | None:
        """Compiled rules of the ignore file at ``path`` (None when absent, empty or unreadable).

        ``key`` is ``rules_key`` of the file when the caller has already stat'ed it; compiled
        rules are reused while the key is unchanged.
        """
        try:
            if key is None:
                key = rules_key(os.stat(path))
            hit = self._rules.get(path)
            if hit is not None and hit[0] == key:
                return hit[1]
            with open(path, "rb") as fh:
                text = fh.read().decode("utf-8", errors="surrogateescape")
        except OSError:
            return None
        rules = IgnoreRules(parse_lines(text), source=path)
        if time.time_ns() - max(key[1], key[2]) <= _RACY_NS:
            self._rules.pop(path, None)
            return rules
        if len(self._rules) >= self.max_files:
            self._rules.clear()
        self._rules[path] = (key, rules)
        return rules


class IgnoreLevel:
    """One rule set and how to turn a workspace-relative path into a path relative to its file.

    The path handed to the rules is ``lead + rel[strip:]``: ``strip`` drops the folder of the
    ignore file inside the workspace; ``lead`` prepends the way from an ignore file *above* the
    workspace root (a parent ``.gitignore`` of the same repository) down to the root.
    """

    __slots__ = ("rules", "strip", "lead")

    def __init__(self, rules: IgnoreRules, strip: int = 0, lead: str = "") -> None:
        self.rules = rules
        self.strip = strip
        self.lead = lead


class IgnoreStack:
    """The rule sets in force inside one folder, in precedence order (module docstring)."""

    __slots__ = ("dot_ignore", "git_ignore", "exclude", "levels")

    def __init__(
        self,
        dot_ignore: tuple[IgnoreLevel, ...] = (),
        git_ignore: tuple[IgnoreLevel, ...] = (),
        exclude: tuple[IgnoreLevel, ...] = (),
    ) -> None:
        self.dot_ignore = dot_ignore
        self.git_ignore = git_ignore
        self.exclude = exclude
        self.levels = dot_ignore + git_ignore + exclude

    def push(
        self, folder: str, dot_ignore: IgnoreRules | None, git_ignore: IgnoreRules | None
    ) -> IgnoreStack:
        """The stack for the files of ``folder`` given that folder's own ignore files."""
        strip = len(folder) + 1 if folder else 0
        di, gi = self.dot_ignore, self.git_ignore
        if dot_ignore:
            di = (IgnoreLevel(dot_ignore, strip),) + di
        if git_ignore:
            gi = (IgnoreLevel(git_ignore, strip),) + gi
        if di is self.dot_ignore and gi is self.git_ignore:
            return self
        return IgnoreStack(di, gi, self.exclude)


FolderLevels = tuple[tuple[View, View, tuple[bool, ...], str], ...]
"""The levels in force in one folder, in precedence order, each as (files' view, folders' view,
``!`` per line number, the folder's path from the level's folder with a trailing ``/`` or "");
an entry's path for a level is that prefix + its name. Levels with no line that can match
there are left out."""


def folder_levels(levels: tuple[IgnoreLevel, ...], prefix: str) -> FolderLevels:
    """``levels`` prepared for the entries of the folder ``prefix`` ("" or ``"a/b/"``)."""
    out = []
    for lv in levels:
        pre = lv.lead + prefix[lv.strip :]
        views = lv.rules.views(pre)
        if views is not None:
            out.append((*views, pre))
    return tuple(out)


def ignored_name(levels: FolderLevels, name: str, is_dir: bool) -> bool:
    """Whether the entry ``name`` of the folder ``levels`` were prepared for is ignored."""
    for files, dirs, neg, pre in levels:
        no = last_line(dirs if is_dir else files, pre + name if pre else name, name)
        if no:
            return not neg[no]
    return False


def find_repo(root: str, max_up: int = 64) -> tuple[str, str] | None:
    """(work tree top, git dir) of the repository holding ``root``, or None outside git."""
    here = root
    for _ in range(max_up):
        dotgit = os.path.join(here, ".git")
        if os.path.isdir(dotgit):
            return here, dotgit
        if os.path.isfile(dotgit):
            try:
                with open(dotgit, encoding="utf-8") as fh:
                    first = fh.readline(_GITFILE_MAX).strip()
            except (OSError, UnicodeDecodeError):
                return None
            if not first.startswith("gitdir:"):
                return None
            gitdir = os.path.join(here, first[len("gitdir:") :].strip())
            common = os.path.join(gitdir, "commondir")
            try:  # the tree names this file: a FIFO there would block the open for ever
                if stat.S_ISREG(os.stat(common).st_mode):
                    with open(common, encoding="utf-8") as fh:
                        gitdir = os.path.join(gitdir, fh.read(_GITFILE_MAX).strip())
            except (OSError, UnicodeDecodeError):
                pass
            return here, os.path.normpath(gitdir)
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
    return None


def _load_regular(rules: RulesCache, path: str) -> IgnoreRules | None:
    """The compiled ignore file at ``path`` when it is a regular file (a FIFO is never opened)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return rules.load(path, rules_key(st))


def _outside_files(root: str, repo: tuple[str, str] | None) -> Iterator[tuple[str, str, str]]:
    """(kind, path, lead) of every ignore file ``base_stack`` reads outside the root's own tree,
    whether it exists or not: the repository's ``info/exclude``, then each folder above the root,
    nearest first, with its ``.ignore`` and, where git's rule reads it, its ``.gitignore``."""
    top = repo[0] if repo is not None else None
    if repo is not None:
        lead_top = "" if top == root else os.path.relpath(root, top).replace(os.sep, "/") + "/"
        yield "exclude", os.path.join(repo[1], "info", "exclude"), lead_top
    in_repo = top is not None and top != root
    here = root
    while True:
        folder = os.path.dirname(here)
        if folder == here:
            return
        here = folder
        lead = os.path.relpath(root, folder).replace(os.sep, "/") + "/"
        yield "ignore", os.path.join(folder, ".ignore"), lead
        if top is None or in_repo:
            yield "gitignore", os.path.join(folder, ".gitignore"), lead
        in_repo = in_repo and folder != top


def base_stack(root: str, rules: RulesCache) -> IgnoreStack:
    """The stack in force at the workspace root, before the root's own ignore files.

    ``root`` is absolute. The ignore files of the folders above it apply to it, as in ripgrep
    (docs/faces.md#which-files-are-searched): every ``.ignore`` up to the file system root, and
    the ``.gitignore`` files up to the repository top inside git (git's rule; beyond the top git
    reads none) or up to the file system root outside git (``rg --no-require-git``), plus the
    repository's ``info/exclude``. A line of a parent's file is matched against the path from
    that parent's folder (``/a/b`` in the parent of ``a/`` hides ``a/b``). Compiled through
    ``rules``.
    """
    levels: dict[str, list[IgnoreLevel]] = {"exclude": [], "ignore": [], "gitignore": []}
    for kind, path, lead in _outside_files(root, find_repo(root)):
        found = _load_regular(rules, path)  # a FIFO planted as one is never opened
        if found:
            levels[kind].append(IgnoreLevel(found, 0, lead))
    return IgnoreStack(
        tuple(levels["ignore"]), tuple(levels["gitignore"]), tuple(levels["exclude"])
    )


def outside_signature(root: str) -> tuple[object, ...] | None:
    """What the ignore files outside the root's tree are now (one ``stat`` each, absent ones
    included, so one made there counts too). No watch reaches them, so a watching face keeps
    its listings only while this is unchanged
    (docs/SAFETY.md#what-a-watching-face-may-answer-late). None, equal to nothing, while one of
    them changed in the last two seconds."""
    repo = find_repo(root)
    now = time.time_ns()
    out: list[object] = [repo]
    for _kind, path, _lead in _outside_files(root, repo):
        try:
            key = rules_key(os.stat(path))
        except OSError as exc:
            out.append(exc.errno)
            continue
        if now - max(key[1], key[2]) <= _RACY_NS:
            return None
        out.append(key)
    return tuple(out)
