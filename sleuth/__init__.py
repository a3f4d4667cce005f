"""sleuth — one engine, one query language, hash-stamped references (see docs/README.md).

``from sleuth import Workbench``; errors are ``SleuthError`` subclasses (``sleuth.errors``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sleuth.errors import SleuthError

if TYPE_CHECKING:
    from sleuth.api import Workbench

__all__ = ["Workbench", "SleuthError"]


def __getattr__(name: str) -> Any:
    # Lazy so that importing an engine module does not load every face.
    if name == "Workbench":
        from sleuth.api import Workbench

        return Workbench
    raise AttributeError(name)
