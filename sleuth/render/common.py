"""What every rendering shares: the styles, the lazy ``rich`` text, error lines, printable JSON."""

from __future__ import annotations

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
