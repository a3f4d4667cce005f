"""The provider API face (docs/faces.md#provider-api): ``Provider(root)`` with ``manifest()`` and
``search(query, opts)``, answering JSON objects.

A thin face: the logic is ``sleuth.service.provider``. Every failure is answered, never raised:
the ``{"error": {...}}`` object of docs/errors.md, ``internal`` for an unexpected exception.

    >>> from sleuth.provider import Provider
    >>> with Provider(".") as p:
    ...     page = p.search("get_user", {"limit": 2})
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from sleuth.service.provider import ProviderService, answer
from sleuth.service.workbench import Workbench

__all__ = ["Provider"]


class Provider:
    """The provider API of one workspace, kept open (warm) between calls.

    ``clock``: the rate limit's clock (seconds, monotonic); tests pass a fake one."""

    def __init__(
        self,
        root: str | os.PathLike[str] = ".",
        *,
        no_ignore: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._root = os.fspath(root)
        self._no_ignore = no_ignore
        self._clock = clock
        self._service: ProviderService | None = None
        self._close: Callable[[], None] | None = None

    def _opened(self) -> ProviderService:
        # opened on the first call, so a workspace that cannot be opened is an answer too
        if self._service is None:
            # long-running, without language servers: the provider's modes never ask one
            bench = Workbench(self._root, no_ignore=self._no_ignore, servers=False)
            self._service = ProviderService(
                bench, config=lambda: bench.workspace.config, clock=self._clock
            )
            self._close = bench.close
        return self._service

    def manifest(self) -> dict[str, Any]:
        """``{"search": {"modes", "x-flags", "x-ordering", "limits"}}``, or the error object."""
        return answer(lambda: self._opened().manifest())

    def search(self, query: object, opts: object = None) -> dict[str, Any]:
        """One page ``{"matches", "next_cursor"?}`` of ``query`` (a string, ``{"regex",
        "flags"}`` or ``{"semantic", "threshold"}``), or the error object."""
        return answer(lambda: self._opened().search(query, opts))

    def close(self) -> None:
        """Close the workspace (its registry, index and caches)."""
        if self._close is not None:
            self._close()
        self._service = self._close = None

    def __enter__(self) -> Provider:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
