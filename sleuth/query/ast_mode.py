"""``ast:`` queries as a structured span source (SPEC §6).

The pattern is compiled once per language present in the scope (or only ``lang``); files of
other languages are not read. A file is parsed only when it contains the pattern's literal
tokens (checked on its bytes first), and in long-running faces its tree comes from a bounded
``TreeCache`` that reparses incrementally after a change.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from sleuth.ast_search import (
    AstPattern,
    TreeCache,
    compile_pattern,
    get_lang_spec,
    language_for_path,
)
from sleuth.errors import SleuthError
from sleuth.prefilter import Literals, file_may_match, fold
from sleuth.query.request import SearchRequest
from sleuth.query.scan import Found
from sleuth.workspace import FileEntry, FileText

__all__ = ["AstSource", "plan_ast"]


class AstSource:
    """Runs one compiled pattern per language over the files of that language."""

    def __init__(self, patterns: dict[str, AstPattern], trees: TreeCache | None) -> None:
        self._patterns = patterns
        self._trees = trees
        only = next(iter(patterns.values())) if len(patterns) == 1 else None
        self._literals = only.literals if only is not None else None

    @property
    def literals(self) -> Literals | None:
        return self._literals

    @property
    def prefilter(self) -> bool:
        return True  # a bytes check is far cheaper than a parse

    @property
    def languages(self) -> list[str]:
        return sorted(self._patterns)

    def spans(self, data: bytes, start: int) -> list[tuple[int, int]]:
        raise NotImplementedError("ast patterns need the file's path: use find_in_file")

    def find_in_file(self, ft: FileText) -> list[Found]:
        lang = language_for_path(ft.path)
        pattern = self._patterns.get(lang) if lang else None
        if pattern is None:
            return []
        if self._literals is None and pattern.literals and not file_may_match(pattern.literals, fold(ft.data)):
            return []
        tree = self._trees.get(ft.path, ft.stamp, ft.data, pattern.lang) if self._trees else None
        found: list[Found] = []
        for m in pattern.find(ft.data, tree):
            caps = {name: (c.nodes, c.start_byte, c.end_byte) for name, c in m.captures.items()}
            found.append((m.start_byte, m.end_byte, caps, None))
        return found


def plan_ast(
    body: str, req: SearchRequest, files: Sequence[FileEntry], trees: TreeCache | None
) -> tuple[AstSource, list[FileEntry]]:
    """Compile ``body`` for ``req.lang`` or every language in ``files``; the files to parse.

    Without ``lang``, a language whose grammar cannot read the pattern is left out; only if it
    reads in none of them is the error raised (for the language with the most files).
    """
    strictness = req.strictness or "smart"
    if req.lang:
        langs = [get_lang_spec(req.lang).name]
    else:
        counts = Counter(lang for f in files if (lang := language_for_path(f.path)))
        langs = [lang for lang, _ in counts.most_common()]
        if not langs:
            langs = []
    patterns: dict[str, AstPattern] = {}
    first_error: SleuthError | None = None
    for lang in langs:
        try:
            patterns[lang] = compile_pattern(body, lang, selector=req.selector, strictness=strictness)
        except SleuthError as exc:
            if req.lang:
                raise
            first_error = first_error or exc
    if not patterns and first_error is not None:
        raise first_error
    wanted = set(patterns)
    kept = [f for f in files if language_for_path(f.path) in wanted]
    return AstSource(patterns, trees), kept
