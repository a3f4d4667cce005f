"""What every rendering shares: the styles, the lazy ``rich`` text, error lines, printable JSON."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.text import Text

Json = Mapping[str, Any]

STYLE_HEADER = "bold"
STYLE_PATH = "bold magenta"
STYLE_LINENO = "green"
STYLE_REF = "cyan"
STYLE_MATCH = "bold red"
STYLE_CONTEXT = "dim"
STYLE_WARN = "yellow"
STYLE_DIFF_ADD = "green"
STYLE_DIFF_DEL = "red"
STYLE_DIFF_HUNK = "cyan"
STYLE_DIFF_FILE = "bold"
BINARY_SAFE = "binary-safe"
BINARY_SAFE_NOTE = "not UTF-8, searched as bytes"


def styled(text: str = "", style: str = "") -> Text:
    """A new ``rich`` text, imported on first use: a ``--json`` call never renders (~30 ms)."""
    from rich.text import Text

    return Text(text, style=style)


# What a terminal or a reader takes for something other than text (docs/faces.md#control-
# characters): C0 controls but tab and newline, DEL, C1 controls (U+0085 too), the Unicode line
# and paragraph separators, and the bidi embeddings, overrides and isolates (Trojan Source).
_INVISIBLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def _escaped(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with every control, separator and bidi character written out as ``\\x1b`` or
    ``\\u202e``: file contents are shown, never obeyed (a human or MCP rendering; ``--json``
    and structured content keep the exact text). Idempotent."""
    return text if text.isprintable() else _INVISIBLE.sub(_escaped, text)


def visible_text(text: Text) -> Text:
    """A ``rich`` text with its control characters written out as ``visible`` does, its
    styles kept (``rich`` itself drops only BEL, backspace, CR, VT and FF, and keeps ESC)."""
    plain = text.plain
    if plain.isprintable() or not _INVISIBLE.search(plain):
        return text
    out = text.blank_copy()
    at = 0
    for m in _INVISIBLE.finditer(plain):
        out.append_text(text[at : m.start()])
        out.append(_escaped(m), style=STYLE_WARN)
        at = m.end()
    out.append_text(text[at:])
    return out


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}es" if word.endswith("ch") else f"{n} {word}s"


def error_line(error: Json) -> str:
    """``error[CODE]: message`` (plus ``retry after Ns``) from an error object (docs/errors.md)."""
    body = error.get("error", error)
    text = f"error[{body.get('code', 'internal')}]: {body.get('message', '')}"
    if body.get("retry_after") is not None:
        text += f" (retry after {body['retry_after']}s)"
    return text


def printable(value: Any) -> Any:
    """The JSON ``value`` with each lone surrogate in its strings written out as ``\\udcff``
    text, so it encodes as UTF-8: an error may quote input that is not Unicode, and an answer
    must still be printed (or sent) whole rather than fail half-way."""
    if isinstance(value, str):
        if value.isascii():
            return value
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, Mapping):
        return {printable(k): printable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [printable(v) for v in value]
    return value
