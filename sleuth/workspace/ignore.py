"""Ignore files with git's semantics: ``.gitignore``, ``.ignore`` and ``.git/info/exclude``.

Each ignore file compiles once into ``IgnoreRules``: one regex per entry kind (files, folders),
an alternation of its lines in *reverse* order, so the first alternative that matches is the
file's last matching line — git's "last line wins" in a single ``re`` call. ``m.lastindex`` names
the line, and a table says whether that line was a ``!`` re-include.

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
import re
import stat

from sleuth.workspace.paths import wildmatch_to_regex

__all__ = [
    "IgnoreRules",
    "IgnoreLevel",
    "IgnoreStack",
    "RulesCache",
    "parse_lines",
    "find_repo",
    "base_stack",
]

_BOM = "\ufeff"


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


def parse_lines(text: str) -> list[tuple[str, bool, bool]]:
    """(regex body, negated, folders only) for each effective line of an ignore file."""
    if text.startswith(_BOM):
        text = text[1:]
    rules: list[tuple[str, bool, bool]] = []
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
        if not anchored:
            body = "(?:.*/)?" + body  # a line without "/" matches the base name at any depth
        rules.append((body, negated, dir_only))
    return rules


def _compile(
    rules: list[tuple[str, bool, bool]],
) -> tuple[re.Pattern[str] | None, tuple[bool, ...]]:
    if not rules:
        return None, ()
    ordered = rules[::-1]  # first alternative that matches = last line that matches
    pattern = "|".join(f"({body})" for body, _, _ in ordered)
    return re.compile(pattern, re.DOTALL), (False,) + tuple(neg for _, neg, _ in ordered)


class IgnoreRules:
    """The compiled lines of one ignore file."""

    __slots__ = ("source", "_file_re", "_file_neg", "_dir_re", "_dir_neg")

    def __init__(self, rules: list[tuple[str, bool, bool]], source: str = "") -> None:
        self.source = source
        self._file_re, self._file_neg = _compile([r for r in rules if not r[2]])
        self._dir_re, self._dir_neg = _compile(rules)

    def __bool__(self) -> bool:
        return self._dir_re is not None

    def decide(self, path: str, is_dir: bool) -> bool | None:
        """True if ignored, False if re-included with ``!``, None if no line matches."""
        if is_dir:
            rx, neg = self._dir_re, self._dir_neg
        else:
            rx, neg = self._file_re, self._file_neg
        if rx is None:
            return None
        m = rx.fullmatch(path)
        if m is None:
            return None
        return not neg[m.lastindex or 0]


class RulesCache:
    """Compiled ignore files by path, reused across walks while the file is unchanged.

    One per workspace (``Workspace`` owns it; docs/architecture.md#no-process-state-in-modules);
    it is dropped whole past ``max_files`` (``Tuning.ignore_cache_max``).
    """

    def __init__(self, max_files: int) -> None:
        self.max_files = max_files
        self._rules: dict[str, tuple[tuple[int, int, int], IgnoreRules]] = {}

    def load(self, path: str, key: tuple[int, int, int] | None = None) -> IgnoreRules | None:
        """Compiled rules of the ignore file at ``path`` (None when absent, empty or unreadable).

        ``key`` is (size, mtime_ns, ino) when the caller has already stat'ed the file; compiled
        rules are reused while the key is unchanged.
        """
        try:
            if key is None:
                st = os.stat(path)
                key = (st.st_size, st.st_mtime_ns, st.st_ino)
            hit = self._rules.get(path)
            if hit is not None and hit[0] == key:
                return hit[1]
            with open(path, "rb") as fh:
                text = fh.read().decode("utf-8", errors="surrogateescape")
        except OSError:
            return None
        rules = IgnoreRules(parse_lines(text), source=path)
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

    def decide(self, rel: str, is_dir: bool) -> bool | None:
        path = rel[self.strip :] if self.strip else rel
        if self.lead:
            path = self.lead + path
        return self.rules.decide(path, is_dir)


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


def ignored(levels: tuple[IgnoreLevel, ...], rel: str, is_dir: bool) -> bool:
    """Whether ``rel`` is ignored under ``levels`` (the first level with a verdict decides)."""
    for level in levels:
        verdict = level.decide(rel, is_dir)
        if verdict is not None:
            return verdict
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
                    first = fh.readline().strip()
            except (OSError, UnicodeDecodeError):
                return None
            if not first.startswith("gitdir:"):
                return None
            gitdir = os.path.join(here, first[len("gitdir:") :].strip())
            common = os.path.join(gitdir, "commondir")
            try:
                with open(common, encoding="utf-8") as fh:
                    gitdir = os.path.join(gitdir, fh.read().strip())
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
    return rules.load(path, (st.st_size, st.st_mtime_ns, st.st_ino))


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
    repo = find_repo(root)
    top = repo[0] if repo is not None else None
    exclude: tuple[IgnoreLevel, ...] = ()
    if repo is not None:
        lead_top = "" if top == root else os.path.relpath(root, top).replace(os.sep, "/") + "/"
        info = rules.load(os.path.join(repo[1], "info", "exclude"))
        if info:
            exclude = (IgnoreLevel(info, 0, lead_top),)
    dot_ignore: list[IgnoreLevel] = []
    git_ignore: list[IgnoreLevel] = []
    in_repo = top is not None and top != root
    here = root
    while True:  # the folders above the root, nearest first (the order levels are consulted)
        folder = os.path.dirname(here)
        if folder == here:
            break
        here = folder
        lead = os.path.relpath(root, folder).replace(os.sep, "/") + "/"
        di = _load_regular(rules, os.path.join(folder, ".ignore"))
        if di:
            dot_ignore.append(IgnoreLevel(di, 0, lead))
        if top is None or in_repo:
            gi = _load_regular(rules, os.path.join(folder, ".gitignore"))
            if gi:
                git_ignore.append(IgnoreLevel(gi, 0, lead))
        in_repo = in_repo and folder != top
    return IgnoreStack(tuple(dot_ignore), tuple(git_ignore), exclude)
