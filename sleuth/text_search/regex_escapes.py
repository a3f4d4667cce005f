"""The escapes of the regex scan (``regex_scan``): ``\\x``, ``\\u``, ``\\c``, octal, ``\\p{...}``,
ripgrep's word edges, and the shorthands RE2 reads otherwise (``\\s`` is spelled out as Unicode
White_Space), each rewritten for RE2 with its literal value or atom kind; and ``Scan``, what
the scan learns besides the rewritten text."""

from __future__ import annotations

from dataclasses import dataclass, field

from sleuth.text_search.regex_checks import (
    invalid,
    property_has_newline,
    unsupported_error,
    word_edge_error,
)

__all__ = ["EscapeReader", "Scan"]

_HEX = frozenset("0123456789abcdefABCDEF")
_SPACE = "\\t-\\r\\x{85}\\p{Z}"
"""Unicode White_Space as class members: U+0009-U+000D, U+0085 and the separators
(U+0020, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000)."""
_SCRIPT_KEYS = ("Script=", "sc=", "General_Category=", "gc=")


@dataclass
class Scan:
    """What the token scan learned besides the rewritten text.

    ``atoms`` lists the top-level items in order: ``("lit", ch)``, ``("other", "")``,
    ``("zero", "")`` (assertions), ``("alt", "")`` and ``("quant", "min")``.
    """

    out: list[str] = field(default_factory=list)
    origin: list[int] = field(default_factory=list)
    atoms: list[tuple[str, str]] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    multiline: bool = False
    icase: bool = False
    text_anchors: list[int] = field(default_factory=list)
    """Indexes in ``out`` of ``\\A`` and ``\\z``: line anchors unless the pattern is multi-line."""


class EscapeReader:
    """The escape readers of ``regex_scan._Scanner``: ``p`` is the pattern, ``i`` the
    position read up to, ``r`` the scan's findings."""

    p: str
    i: int
    r: Scan
    property_newline: bool

    def escape(self, *, in_class: bool) -> tuple[str, str]:
        """Rewrite the escape at ``self.i``; returns (RE2 text, literal value or atom kind)."""
        p, start = self.p, self.i
        self.property_newline = False
        if start + 1 >= len(p):
            raise invalid(p, start, "trailing backslash", "Escape a backslash as \\\\.")
        e = p[start + 1]
        self.i = start + 2
        if e == "u":
            return self.code_point(self.unicode_escape(start))
        if e == "x":
            m = p[start + 2 : start + 4]
            if len(m) == 2 and set(m) <= _HEX:
                self.i = start + 4
                return self.code_point(int(m, 16))
            close, digits = p.find("}", start), p[start + 3 : p.find("}", start)]
            if p.startswith("{", start + 2) and close > 0 and digits and set(digits) <= _HEX:
                self.i = close + 1
                if int(digits, 16) <= 0x10FFFF:
                    return self.code_point(int(digits, 16))
            raise invalid(p, start, "invalid \\x escape", "Write \\xHH or \\x{HHHH}.")
        if e == "c":
            if start + 2 < len(p) and p[start + 2].isascii() and p[start + 2].isalpha():
                self.i = start + 3
                return self.code_point(ord(p[start + 2]) % 32)
            raise invalid(p, start, "invalid \\c escape", "Write \\c followed by a letter.")
        if e == "0":
            j = self.i
            while j < len(p) and j < start + 4 and p[j] in "01234567":
                j += 1
            self.i = j
            return self.code_point(int(p[start + 1 : j], 8))
        if e.isdecimal() and not in_class:
            raise unsupported_error(p, start, "backreference", p[start : start + 2])
        if e == "k":
            raise unsupported_error(p, start, "backreference", "\\k<name>")
        if e == "C":
            raise invalid(p, start, "\\C (any byte) is not supported", "Use . instead.")
        if e == "Q":
            end = p.find("\\E", self.i)
            self.i = len(p) if end < 0 else end + 2
            self.r.multiline |= "\n" in p[start:end]
            return p[start : self.i], "other"
        if e in "pP":
            return self.property(start, e), "other"
        if e == "s":  # Unicode White_Space, as ripgrep's and ECMAScript's (RE2's is ASCII)
            return (_SPACE if in_class else f"[{_SPACE}]"), "other"
        if e == "S" and not in_class:  # inside a class RE2's ASCII \\S stays (no nesting)
            return f"[^{_SPACE}]", "other"
        if e == "b" and in_class:
            return self.code_point(8)
        if not in_class and (e in "<>" or (e in "bB" and p.startswith("{", self.i))):
            return self.word_edge(start, e), "zero"
        if e in "bBAz":
            return p[start : self.i], "zero"
        simple = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}
        if e in simple:
            return p[start : self.i], simple[e]
        if e.isalnum() or not e.isascii():
            return p[start : self.i], "other"  # \d \w \s ... (or invalid: RE2 decides)
        return p[start : self.i], e

    def word_edge(self, start: int, e: str) -> str:
        """ripgrep's word start and end (``\\<``, ``\\>``, ``\\b{start}``, ``\\b{end}``) as
        the ``\\b`` they equal beside a word character (``\\<foo``, ``foo\\>``); elsewhere RE2
        has no way to say them."""
        p = self.p
        spelling = p[start : self.i]
        side = {"<": "start", ">": "end"}.get(e)
        if side is None:
            close = p.find("}", self.i)
            name = p[self.i + 1 : close] if close > 0 else ""
            spelling = p[start : close + 1] if close > 0 else spelling
            if e == "B" or name not in ("start", "end", "start-half", "end-half"):
                raise invalid(
                    p, start, f"unknown word boundary `{spelling}`",
                    "Write \\b, \\B, \\b{start} or \\b{end} (or \\{ for the text `{`).",
                )  # fmt: skip
            self.i = close + 1
            side = name
        k = start  # step back over a `+` or `+?` that repeats the character before
        if start >= 2 and p[start - 2 : start] == "+?":
            k = start - 2
        elif start >= 1 and p[start - 1] == "+":
            k = start - 1
        before = p[k - 1] if k > 0 else ""  # the word character (or \\w) before any `+`
        escaped = k > 1 and p[k - 2] == "\\"
        after = p[self.i] if self.i < len(p) else ""
        # ASCII word characters only: RE2's \\b is ASCII (ripgrep's is Unicode)
        word_before = (_ascii_word(before) and not escaped) or (escaped and before == "w")
        word_after = _ascii_word(after) or p.startswith("\\w", self.i)
        if (side == "start" and word_after) or (side == "end" and word_before):
            return "\\b"
        raise word_edge_error(p, start, spelling)

    def code_point(self, value: int) -> tuple[str, str]:
        return f"\\x{{{value:x}}}", chr(value)

    def unicode_escape(self, start: int) -> int:
        p = self.p
        if p.startswith("{", start + 2):
            close = p.find("}", start)
            digits = p[start + 3 : close] if close > 0 else ""
            self.i = close + 1
        else:
            digits = p[start + 2 : start + 6]
            self.i = start + 6
            if len(digits) != 4:
                digits = ""
        if not digits or not set(digits) <= _HEX or int(digits, 16) > 0x10FFFF:
            raise invalid(p, start, "invalid \\u escape", "Write \\uXXXX or \\u{X...} (hex).")
        value = int(digits, 16)
        low = p[self.i + 2 : self.i + 6]
        pair = p.startswith("\\u", self.i) and len(low) == 4 and set(low) <= _HEX
        if 0xD800 <= value < 0xDC00 and pair and 0xDC00 <= int(low, 16) < 0xE000:
            self.i += 6
            return 0x10000 + ((value - 0xD800) << 10) + (int(low, 16) - 0xDC00)
        if 0xD800 <= value < 0xE000:
            raise invalid(p, start, "lone surrogate", "Write the code point as \\u{X...}.")
        return value

    def property(self, start: int, e: str) -> str:
        p = self.p
        if not p.startswith("{", self.i):
            self.i = min(self.i + 1, len(p))
            self.property_newline = e == "p" and property_has_newline(p[start : self.i])
            return p[start : self.i]
        close = p.find("}", self.i)
        if close < 0:
            raise invalid(p, start, "unclosed \\p{...}", "Close it with }.")
        name = p[self.i + 1 : close]
        for key in _SCRIPT_KEYS:
            if name.startswith(key):
                name = name[len(key) :]
        self.i = close + 1
        self.property_newline = e == "p" and property_has_newline(f"\\p{{{name}}}")
        return f"\\{e}{{{name}}}"


def _ascii_word(ch: str) -> bool:
    return ch.isascii() and (ch.isalnum() or ch == "_")
