"""What the query and edit layers ask of language servers: the boundary to ``lsp_bridge``.

``sleuth.lsp_bridge.ServerPool`` is the real thing; unit tests pass doubles. ``SymbolServers``
is what ``symbols:``, ``symbol:#`` and ``graph:#`` confirmation ask (which server serves a
file, its declarations, references); ``LanguageServers`` adds the rename and the status rows
of ``doctor`` and is what a workbench owns and closes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Iterable

    from sleuth.lsp_bridge.pool import RenamePlan
    from sleuth.lsp_bridge.results import LspEdit as LspEdit  # what a rename plan holds
    from sleuth.lsp_bridge.results import LspLocation
    from sleuth.lsp_bridge.servers import ServerSpec
    from sleuth.model import SymbolDef

__all__ = ["SymbolServers", "LanguageServers"]


class SymbolServers(Protocol):
    """Declarations and references from the servers of a workspace's languages."""

    def language_of(self, path: str) -> str | None:
        """The language whose server would serve ``path`` (None: no server for it)."""
        ...

    def serving(self, lang: str) -> bool:
        """Whether ``lang``'s server runs (started on demand); raises when it cannot."""
        ...

    def spec(self, lang: str) -> ServerSpec: ...

    def document_symbols(self, path: str) -> list[SymbolDef]: ...

    def workspace_symbols(
        self, lang: str, query: str, *, fuzzy: bool = True
    ) -> list[SymbolDef]: ...

    def references(
        self, path: str, byte_offset: int, include_declaration: bool = False
    ) -> list[LspLocation]: ...


class LanguageServers(SymbolServers, Protocol):
    """The servers a workbench owns: symbols, renames, ``doctor``'s rows, and closing."""

    def rename_plan(
        self, path: str, byte_offset: int, new_name: str, *, expect: bytes | None = None
    ) -> RenamePlan: ...

    def warm(self, paths: Iterable[str]) -> None: ...

    def status(self) -> list[dict[str, Any]]: ...

    def close(self) -> None: ...
