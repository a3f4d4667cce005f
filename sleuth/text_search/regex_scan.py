"""The token scan behind ``regex_syntax.translate``: one pass over the user's pattern.

The scanner walks the pattern by code point, rewrites the spellings RE2 rejects (see
``regex_syntax``), rejects lookaround and backreferences with ``Unsupported``, and catches the
structural errors whose position RE2 cannot report well (unclosed groups and classes, bad
repetition bounds, malformed escapes, unknown flags, raw NUL). Alongside the rewritten text it
keeps, per output character, the position in the user's pattern it came from (to place RE2's own
errors), whether the pattern can match a newline, the group names, and the top-level atoms that
the prefilter hint (``regex_syntax.required_literals``) is computed from.
"""

from __future__ import annotations

from sleuth.text_search.regex_checks import caret_message, invalid, nul_error, unsupported_error
from sleuth.text_search.regex_escapes import EscapeReader, Scan

__all__ = ["Scan", "scan", "caret_message", "invalid"]

_FLAGS = frozenset("imsuU")
_PAIRS = (("s", "S"), ("d", "D"), ("w", "W"))
_UNSUPPORTED_GROUPS = (
    ("(?<=", "lookbehind"),
    ("(?<!", "negative lookbehind"),
    ("(?=", "lookahead"),
    ("(?!", "negative lookahead"),
    ("(?>", "atomic group"),
    ("(?P=", "backreference"),
)


class _Scanner(EscapeReader):
    """One left-to-right pass over the user's pattern (code points, not bytes)."""

    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0
        self.r = Scan()
        self.stack: list[tuple[int, bool]] = []  # (position of "(", dotall before the group)
        self.dotall = False
        self.property_newline = False  # the last \\p{...} escape holds U+000A
        self.flags_end = -1  # where the last flag-only group `(?i)` ended: nothing to repeat

    # -- output helpers -------------------------------------------------------------------
    def emit(self, text: str, origin: int) -> None:
        self.r.out.append(text)
        self.r.origin.extend([origin] * len(text))

    def atom(self, kind: str, value: str = "") -> None:
        if not self.stack:
            self.r.atoms.append((kind, value))

    def run(self) -> Scan:
        p = self.p
        while self.i < len(p):
            c, start = p[self.i], self.i
            if c == "\\":
                text, value = self.escape(in_class=False)
                if value == "\x00":
                    raise nul_error(p, start)
                self.emit(text, start)
                if text in ("\\A", "\\z"):
                    self.r.text_anchors.append(len(self.r.out) - 1)
                self.r.multiline |= value == "\n" or self.property_newline
                if value in ("zero", "other"):
                    self.atom(value)
                else:
                    self.atom("lit", value)
            elif c == "[":
                self.char_class()
            elif c == "(":
                self.group_open()
            elif c == ")":
                if not self.stack:
                    raise invalid(p, start, "unmatched `)`", "Remove it or escape it as \\).")
                _, self.dotall = self.stack.pop()
                self.emit(")", start)
                self.i += 1
                self.atom("other")
            elif c in "*+?":
                self.repeatable(start)
                self.i += 1
                if self.i < len(p) and p[self.i] == "?":
                    self.i += 1
                self.emit(p[start : self.i], start)
                self.atom("quant", "1" if c == "+" else "0")
            elif c == "{":
                self.brace()
            else:
                self.i += 1
                if c == "|":
                    self.atom("alt")
                elif c in "^$":
                    self.atom("zero")
                elif c == ".":
                    self.r.multiline |= self.dotall
                    self.atom("other")
                else:
                    self.atom("lit", c)
                if c == "\n":
                    self.r.multiline = True
                    c = "\\n"
                self.emit(c, start)
        if self.stack:
            pos = self.stack[-1][0]
            raise invalid(p, pos, "missing `)`: this group is never closed", "Close it with ).")
        return self.r

    # -- pieces ---------------------------------------------------------------------------
    def repeatable(self, start: int) -> None:
        """Refuse a repetition of a flag group (``(?i)+``), which matches no text (as rg)."""
        if start == self.flags_end:
            raise invalid(
                self.p, start, "repetition operator missing expression",
                "A flag group such as (?i) matches no text: repeat a group, e.g. (?i:ab)+.",
            )  # fmt: skip

    def brace(self) -> None:
        p, start = self.p, self.i
        end = p.find("}", start)
        body = p[start + 1 : end] if end > 0 else ""
        lo, sep, hi = body.partition(",")
        if end > 0 and not lo and sep and hi.isdecimal():
            raise invalid(
                p, start, f"ambiguous repetition `{{{body}}}`",
                f"Write {{0,{hi}}} for up to {hi}, or \\{{{body}}} for the text (ripgrep refuses "
                f"`{{,n}}`; other dialects read it either way).",
            )  # fmt: skip
        if end < 0 or not lo.isdecimal() or not (hi == "" or hi.isdecimal()):
            self.i += 1  # a literal "{", as in RE2 and Rust
            self.emit("\\{", start)
            self.atom("lit", "{")
            return
        self.repeatable(start)
        if int(lo) > 1000 or (hi and int(hi) > 1000) or (hi and int(hi) < int(lo)):
            raise invalid(
                p,
                start,
                f"invalid repetition `{{{body}}}`",
                "Use {n}, {n,} or {n,m} with n <= m <= 1000.",
            )
        self.i = end + 1
        if self.i < len(p) and p[self.i] == "?":
            self.i += 1
        self.emit(p[start : self.i], start)
        self.atom("quant", lo)

    def group_open(self) -> None:
        p, start = self.p, self.i
        for spelling, construct in _UNSUPPORTED_GROUPS:
            if p.startswith(spelling, start):
                raise unsupported_error(p, start, construct, spelling)
        if not p.startswith("(?", start):
            self.push(start, "(")
            return
        rest = p[start + 2 :]
        if rest.startswith(("<", "P<")):
            lt = start + (3 if rest[0] == "<" else 4)
            gt = p.find(">", lt)
            name = p[lt:gt] if gt > 0 else ""
            if (
                not name
                or not (name[0].isalpha() or name[0] == "_")
                or not all(ch.isalnum() or ch == "_" for ch in name)
            ):
                raise invalid(
                    p, start, "invalid group name", "Write (?<name>...) with a word name."
                )
            if name in self.r.names:
                raise invalid(p, start, f"duplicate group name `{name}`", "Rename one group.")
            self.r.names.append(name)
            self.i = gt + 1
            self.stack.append((start, self.dotall))
            self.emit(f"(?P<{name}>", start)
            return
        if rest.startswith(":"):
            self.push(start, "(?:", skip=3)
            return
        self.flags(start)

    def push(self, start: int, text: str, skip: int = 1) -> None:
        self.stack.append((start, self.dotall))
        self.i = start + skip
        self.emit(text, start)

    def flags(self, start: int) -> None:
        p = self.p
        j, negate = start + 2, False
        on: list[str] = []
        off: list[str] = []
        dotall = self.dotall
        while j < len(p) and p[j] not in ":)":
            ch = p[j]
            if ch == "-" and not negate:
                negate = True
            elif ch not in _FLAGS:
                what = f"unknown flag `{ch}`" if ch.isalpha() else "unknown group syntax"
                raise invalid(
                    p, j, what, "Inline flags are i, m, s, U and u, e.g. (?i) or (?s:...)."
                )
            elif ch == "u" and negate:
                raise invalid(p, j, "Unicode mode cannot be turned off", "Remove `-u`.")
            elif ch != "u":
                (off if negate else on).append(ch)
                self.r.icase |= ch == "i" and not negate
                dotall = (not negate) if ch == "s" else dotall
            j += 1
        if j >= len(p) or j == start + 2 or p[j - 1] == "-":
            raise invalid(
                p, start, "unterminated or empty flag group", "Write e.g. (?i) or (?i:...)."
            )
        text = "".join(on) + ("-" + "".join(off) if off else "")
        scoped = p[j] == ":"
        if scoped:
            self.stack.append((start, self.dotall))
        self.dotall = dotall
        self.i = j + 1
        if not scoped:
            self.flags_end = self.i
        if text or scoped:
            self.emit(f"(?{text}{p[j]}", start)

    def char_class(self) -> None:
        p, start = self.p, self.i
        negated = p.startswith("[^", start)
        j = start + (2 if negated else 1)
        if negated and p.startswith("]", j) and p.find("]", j + 1) < 0:
            # [^] with no `]` after it: any character (ECMAScript); with one, `[^]a]` is the
            # class of neither `]` nor `a`, as in ripgrep, PCRE and Python
            self.i = j + 1
            self.emit("[\\s\\S]", start)
            self.r.multiline = True
            self.atom("other")
            return
        self.emit(p[start:j], start)
        # members as code-point ranges (None: a named class such as \\d or [:alpha:])
        members: list[tuple[int, int] | None] = []
        if p.startswith("]", j):
            self.emit("\\]", j)
            members.append((0x5D, 0x5D))
            j += 1
        self.i = j
        letters: set[str] = set()
        newline = False
        ranging = False  # the last member was a character followed by `-`: this one ends a range
        while self.i < len(p) and p[self.i] != "]":
            at = self.i
            value: int | None = None
            if p.startswith(("&&", "~~"), at) or (
                p.startswith("--", at) and members and not p.startswith("]", at + 2)
            ):
                raise invalid(
                    p, at, f"class set operation `{p[at : at + 2]}`",
                    "ripgrep reads && (and), -- (minus) and ~~ (either) in a class as set "
                    "operations, other dialects as characters: write the class out, or escape "
                    "them (\\&\\&, \\-\\-, \\~\\~) for the characters.",
                )  # fmt: skip
            if p[at] == "\\":
                text, lit = self.escape(in_class=True)
                newline |= self.property_newline
                if self.i - at == 2:  # a shorthand as written (\\s may be spelled out)
                    letters.add(p[at + 1])
                value = ord(lit) if len(lit) == 1 else None
                self.emit(text, at)
            elif p.startswith("[:", at) and p.find(":]", at + 2) > 0:
                self.i = p.find(":]", at + 2) + 2
                self.emit(p[at : self.i], at)
            else:
                value = ord(p[at])
                self.emit("\\n" if p[at] == "\n" else p[at], at)
                self.i += 1
                last = members[-1] if members else None
                dash = p[at] == "-" and not ranging and last is not None and last[0] == last[1]
                if dash and self.i < len(p) and p[self.i] != "]":
                    ranging = True
                    continue
            if ranging and value is not None and members[-1] is not None:
                members[-1] = (members[-1][0], value)
            else:
                members.append(None if value is None else (value, value))
            ranging = False
        if self.i >= len(p):
            raise invalid(p, start, "missing `]`: this class is never closed", "Close it with ].")
        self.emit("]", self.i)
        self.i += 1
        newline |= any(m is not None and m[0] <= 0x0A <= m[1] for m in members)
        pair = any(a in letters and b in letters for a, b in _PAIRS)
        self.r.multiline |= not negated and (newline or pair)
        if not negated and members and all(m == (0, 0) for m in members):
            raise nul_error(p, start)  # a class of NUL alone is a NUL (ripgrep's rule)
        self.atom("other")


def scan(pattern: str) -> Scan:
    """Run the token scan (rewriting + checks) on ``pattern``; raises like ``translate``."""
    if "\x00" in pattern:
        raise invalid(
            pattern.replace("\x00", " "),
            pattern.index("\x00"),
            "raw NUL character",
            "Write a NUL as the escape \\x00.",
        )
    return _Scanner(pattern).run()
