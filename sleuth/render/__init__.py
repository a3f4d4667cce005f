"""Renderings of the JSON answers (docs/json.md) for people (CLI) and for models (MCP text content).

Faces are thin (docs/architecture.md#faces-are-thin): every function here is pure and reads only
the JSON dict a verb returned, so a field the engine adds shows up in ``--json`` and
``structuredContent`` without any change here, and the renderings can be tested without an
engine.

- ``search_human`` builds a ripgrep-like ``rich.text.Text``: a header, matches grouped under
  their path with context lines, then hints (references, next cursor, skipped files, suggestions).
  Styles are attached as spans; the CLI prints ``.plain`` when colour is off.
- ``search_compact`` is the MCP text content (docs/faces.md#mcp-server): one header line, then one
  line per match ``path:line:col #n  text`` so ``SEARCH#H:n:match`` is derivable without repeating
  it.
- Matches in files that are not UTF-8 (``"encoding": "binary-safe"``,
  docs/faces.md#which-files-are-searched) are marked once per file: ``[binary-safe: …]`` after
  the path (CLI), one hint line naming the files (MCP).
- ``read_human`` / ``read_compact`` render a ``read``/``select`` answer
  (docs/json.md#read-and-select): a header with the ``RESULT#`` id and its source, then the selected
  text with line numbers, sparse ranges of one file kept apart by a gap marker (CLI) or by their
  line numbers (``path:line| text``, MCP).
- Symbol matches (``symbols:``, ``symbol:#``; docs/query.md#symbols-and-symbolid-declarations) are
  listed one per line instead, as ``#1 pkg/a.py:5:5  function get_user  [semantic] id=aac9e3052f59`` (a reference:
  ``reference get_user -> aac9e3052f59  [semantic]``) with the code below it; the compact form
  puts the same phrase between ``path:line:col #n`` and the text.
- ``find_human`` / ``find_compact`` render a ``find`` answer (docs/json.md#find): a header
  (result id, mode, count, the next offset), then one line per match (a path in files mode,
  ``path:line:col #n  text`` in grep mode), the note, the warning and, for an empty page, its
  diagnostics.
- ``index_human`` is the one line ``sleuth index`` prints.
- ``edit_human`` / ``edit_compact`` render an edit's answer (docs/json.md#edits): a header
  ``RESULT#… replace: 2 files changed``, then the unified diff (``+`` green, ``-`` red when
  colour is on); the CLI adds the ``sleuth undo RESULT#…`` hint.
- ``rename_human`` / ``rename_compact``: a rename's header and diff, then the occurrences of
  the old name it left alone (``untouched``), listed for review.
- ``doctor_human`` / ``doctor_compact``: the language-server table of ``sleuth doctor``;
  ``daemon_human`` the status line of ``sleuth daemon``.
- ``error_line`` is the one-line form of an error object (docs/errors.md); ``printable`` makes any
  answer encodable as UTF-8 (a lone surrogate written out as ``\\udcff`` text); ``visible``
  and ``visible_text`` write control characters out (``\\x1b``) in every human and MCP text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sleuth.render.common import error_line, printable, visible, visible_text
    from sleuth.render.compact import search_compact
    from sleuth.render.doctor import daemon_human, doctor_compact, doctor_human
    from sleuth.render.edits import (
        edit_compact,
        edit_header,
        edit_human,
        rename_compact,
        rename_header,
        rename_human,
    )
    from sleuth.render.find import find_compact, find_human
    from sleuth.render.read import index_human, read_compact, read_human
    from sleuth.render.search import search_human
    from sleuth.render.search_phrases import (
        count_phrase,
        status_phrase,
        suggestion_phrase,
        symbol_phrase,
    )

_HOME = {
    **dict.fromkeys(("error_line", "printable", "visible", "visible_text"), "common"),
    **dict.fromkeys(("daemon_human", "doctor_compact", "doctor_human"), "doctor"),
    **dict.fromkeys(
        (
            "edit_compact",
            "edit_header",
            "edit_human",
            "rename_compact",
            "rename_header",
            "rename_human",
        ),
        "edits",
    ),
    **dict.fromkeys(("find_compact", "find_human"), "find"),
    **dict.fromkeys(("index_human", "read_compact", "read_human"), "read"),
    "search_compact": "compact",
    "search_human": "search",
    **dict.fromkeys(
        ("count_phrase", "status_phrase", "suggestion_phrase", "symbol_phrase"),
        "search_phrases",
    ),
}
"""Where each rendering lives: a module is imported when one of its functions is first used
(a ``--json`` call renders nothing, a search renders only search answers)."""


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'sleuth.render' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"sleuth.render.{home}"), name)
    globals()[name] = value
    return value


__all__ = [
    "daemon_human",
    "search_human",
    "search_compact",
    "read_human",
    "read_compact",
    "find_human",
    "find_compact",
    "index_human",
    "edit_header",
    "edit_human",
    "edit_compact",
    "rename_header",
    "rename_human",
    "rename_compact",
    "doctor_human",
    "doctor_compact",
    "symbol_phrase",
    "error_line",
    "printable",
    "visible",
    "visible_text",
    "count_phrase",
    "status_phrase",
    "suggestion_phrase",
]
