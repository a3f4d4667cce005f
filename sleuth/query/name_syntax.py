"""The door through which the edit layer asks the syntax engine about name tokens.

Only ``query`` names the engines (docs/architecture.md); a rename's clash check
(``sleuth.edit.rename``) needs to know whether a place is an identifier and whether it is a
member (``sleuth.ast_search.name_syntax``), so it asks here.
"""

from __future__ import annotations

from sleuth.ast_search.name_syntax import NameKind, NameSyntax, name_syntax

__all__ = ["NameKind", "NameSyntax", "name_syntax"]
