"""sleuth — one engine, one query language, hash-stamped references (see docs/README.md).

``from sleuth import Workbench``; errors are ``SleuthError`` subclasses (``sleuth.errors``).
"""

from __future__ import annotations

# Not ``typing.TYPE_CHECKING``: every ``sleuth`` process runs this file first, the thin client
# (sleuth.client) included, and ``typing`` alone is ~10 ms of its start (docs/faces.md#the-daemon).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from sleuth.api import Workbench
    from sleuth.errors import SleuthError

__all__ = ["Workbench", "SleuthError"]


def __getattr__(name: str) -> object:
    # Lazy so that importing an engine module (or the thin client) does not load every face.
    if name == "Workbench":
        from sleuth.api import Workbench

        return Workbench
    if name == "SleuthError":
        from sleuth.errors import SleuthError

        return SleuthError
    raise AttributeError(name)
