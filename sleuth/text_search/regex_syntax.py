"""Translation of sleuth's regex dialect (docs/query.md#regex-regular-expressions) into google-re2
syntax.

sleuth accepts ECMAScript syntax as far as it is shared with Rust's regex crate and Go's regexp,
and runs it on RE2 (linear time). RE2 rejects a few spellings that users type every day, so this
module rewrites them before compiling (what RE2 rejects:
benchmarks/RESULTS.md#measured-constraints):

    (?<n>...)          -> (?P<n>...)          (?P<n>...) is kept
    \\uXXXX, \\u{X...}   -> \\x{X...}            (surrogate pairs are combined)
    \\cX                -> \\x{..}               control character
    \\0                 -> \\x{0}                (a pattern that must match a NUL is refused)
    [^]                -> [\\s\\S]               any character, newline included (JS meaning),
                                             unless a ``]`` follows: ``[^]a]`` is ``[^\\]a]``
    \\< \\> \\b{start}    -> \\b                   beside a word character (else ``Unsupported``)
    [\\b]               -> [\\x{8}]              backspace inside a class
    \\p{Script=Greek}   -> \\p{Greek}            also sc=, gc=, General_Category=
    (?u) (?iu:...)     -> u dropped             Unicode is always on

Spellings the dialects read differently (``a{,3}``, ``(?i)+``, ``&&``/``--``/``~~`` in a class)
are ``InvalidQuery`` with a hint (docs/query.md#regex-regular-expressions).

Lookaround, backreferences and atomic groups raise ``Unsupported`` naming the construct; every
other pattern RE2 rejects raises ``InvalidQuery`` with the 0-based code-point position of the
error and a caret line. Nothing falls back silently.

Semantics chosen (and why): ``\\w \\d \\b`` are ASCII, as in ECMAScript and RE2 (ripgrep's
are Unicode); ``\\s`` is Unicode White_Space, as in ripgrep and ECMAScript (RE2's is ASCII); ``^``/``$`` are always line anchors, as in ripgrep (the pattern is compiled in
multi-line mode), and so are ``\\A``/``\\z`` unless the pattern is multi-line (ripgrep matches
each line on its own). ``Translated.multiline`` says whether the pattern can match a newline:
only an explicit ``\\n`` (or an escape spelling U+000A), a class holding one (listed, in a range such as
``[\\x00-\\x7f]``, or in a Unicode class such as ``\\p{Any}`` or ``\\p{Cc}``), ``[\\s\\S]``-style
classes, ``[^]``, or ``.`` under the ``s`` flag count — like ripgrep, ``\\s``, ``\\D``, ``\\P{L}`` or
``[^a]`` (shorthands and negations) never match a newline unless the pattern is multi-line.
A pattern that must match a NUL (``foo\\x00?``, ``[\\x00]``; not ``[\\x00-\\x08]``) is
``InvalidQuery``, as ripgrep refuses it: binary detection never lets a NUL match.

``required_literals`` turns the scan's top-level atoms into the prefilter hint (``Literals``):
runs of literal characters every match must contain, or one alternative per top-level branch.
Under case-insensitive matching, runs are cut at ``k``, ``s`` and non-ASCII characters, whose
Unicode case variants (K U+212A, ſ U+017F, ...) ASCII folding would miss.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import re2

from sleuth.prefilter import Literals, fold
from sleuth.text_search.regex_scan import Scan, invalid, scan

__all__ = ["Translated", "translate", "translate_scan", "compile_re2", "required_literals"]


@dataclass(frozen=True)
class Translated:
    """A pattern rewritten for RE2: ``re2`` is the full pattern (flags included)."""

    re2: str
    multiline: bool
    names: tuple[str, ...]


def compile_re2(pattern: str, *, multiline: bool, capture: bool = True) -> Any:
    """Compile a translated pattern; returns the raw ``_re2.RE2`` (``ok()`` may be False).

    Line-oriented patterns get ``never_nl``: no match ever contains a newline (ripgrep without
    ``-U``), whatever ``\\s``, ``[^a]`` or ``\\D`` would otherwise allow.
    """
    options = re2.Options()
    options.log_errors = False
    options.never_nl = not multiline
    options.never_capture = not capture
    return re2._re2.RE2(pattern.encode("utf-8"), options)


def translate(pattern: str, *, case_sensitive: bool = True) -> Translated:
    """Rewrite ``pattern`` for RE2 and check that RE2 accepts it
    (docs/query.md#regex-regular-expressions)."""
    return translate_scan(pattern, case_sensitive=case_sensitive)[0]


def translate_scan(pattern: str, *, case_sensitive: bool = True) -> tuple[Translated, Scan]:
    """``translate`` plus the scan it came from (atoms for ``required_literals``)."""
    result = scan(pattern)
    if result.text_anchors and not result.multiline:
        _line_anchors(result)
    prefix = "(?m)" if case_sensitive else "(?mi)"
    body = "".join(result.out)
    text = prefix + body
    compiled = compile_re2(text, multiline=result.multiline)
    if not compiled.ok():
        error = compiled.error().decode("utf-8", "replace")
        what, _, arg = error.partition(": ")
        found = body.find(arg) if arg else -1
        position = result.origin[found] if 0 <= found < len(result.origin) else 0
        raise invalid(pattern, position, error if what == error else f"{what} `{arg}`")
    return Translated(text, result.multiline, tuple(result.names)), result


def _line_anchors(result: Scan) -> None:
    """``\\A`` and ``\\z`` of a line-oriented pattern as the start and end of a line: ripgrep
    matches such a pattern against each line on its own, so they anchor at its ends there
    (``rg '\\Anext'`` finds line 2 ``next line``); a multi-line pattern keeps them as the ends
    of the file, as ``rg -U`` does. ``origin`` is rebuilt to stay aligned with ``out``."""
    origin: list[int] = []
    at = 0
    anchors = set(result.text_anchors)
    for index, text in enumerate(result.out):
        piece = result.origin[at : at + len(text)]
        at += len(text)
        if index in anchors:
            result.out[index] = "(?m:^)" if text == "\\A" else "(?m:$)"
            piece = piece[:1] * len(result.out[index])
        origin.extend(piece)
    result.origin = origin


def _breaks_run(ch: str, icase: bool) -> bool:
    return icase and (not ch.isascii() or ch in "kKsS")


def required_literals(atoms: list[tuple[str, str]], *, icase: bool) -> Literals | None:
    """The prefilter hint for a scanned pattern's top-level ``atoms`` (None: no hint)."""
    branches: list[list[str]] = []
    runs: list[str] = []
    current: list[str] = []
    last_was_literal = False

    def close() -> None:
        if current:
            runs.append("".join(current))
            current.clear()

    for kind, value in atoms:
        if kind == "lit" and not _breaks_run(value, icase):
            current.append(value)
            last_was_literal = True
            continue
        if kind == "quant" and last_was_literal:
            if value == "0":
                current.pop()  # x* / x? / x{0,n}: x is optional
            close()  # x+ / x{2}: the run up to one x is required, what follows may not be
        elif kind == "alt":
            close()
            branches.append(runs)
            runs = []
        elif kind != "zero":  # assertions consume nothing, so a run may continue across them
            close()
        last_was_literal = False
    close()
    branches.append(runs)
    best = [max(branch, key=len) if branch else "" for branch in branches]
    if not all(best):
        return None
    if len(branches) > 1:
        return (tuple(dict.fromkeys(fold(b.encode("utf-8")) for b in best)),)
    chosen = [run for run in runs if len(run) >= 2] or best
    return tuple((fold(run.encode("utf-8")),) for run in dict.fromkeys(chosen))
