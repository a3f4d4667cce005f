"""Structural search (``ast:`` queries, docs/query.md#ast-structural-patterns): tree-sitter patterns
with metavariables.

``compile_pattern(pattern, lang)`` gives an ``AstPattern`` whose ``find(data)`` lists every
``AstMatch`` (byte range + captures) in document order, following ast-grep's matching rules;
``literals`` is the prefilter hint the caller uses to skip files before parsing them.
``LANGUAGES`` is the per-language table; ``TreeCache`` keeps parse trees warm for the
long-running faces; ``open_pool`` gives a one-shot process's session worker processes to parse
in. The syntactic symbol extractor is ``sleuth.ast_search.tags`` (not imported here: an ``ast:``
call never needs it).
"""

from __future__ import annotations

from sleuth.ast_search.engine import AstMatch, AstPattern, Capture, Literals, compile_pattern
from sleuth.ast_search.languages import LANGUAGES, LangSpec, get_lang_spec, language_for_path
from sleuth.ast_search.matcher import STRICTNESS
from sleuth.ast_search.pattern import MAX_PATTERN_CHARS
from sleuth.ast_search.trees import TreeCache, parse
from sleuth.ast_search.workers import Answer, MatchPool, PatternArgs, Records, find_raw, open_pool

__all__ = [
    "LANGUAGES",
    "LangSpec",
    "language_for_path",
    "get_lang_spec",
    "compile_pattern",
    "AstPattern",
    "AstMatch",
    "Capture",
    "Literals",
    "STRICTNESS",
    "MAX_PATTERN_CHARS",
    "TreeCache",
    "parse",
    "MatchPool",
    "PatternArgs",
    "Records",
    "Answer",
    "find_raw",
    "open_pool",
]
