"""The one exception tree of sleuth (docs/errors.md).

Every failure a user can see is a ``SleuthError`` carrying an error code (docs/errors.md) and the
CLI exit code that goes with it. Faces map these to JSON, exit codes and MCP errors in one function
each; foreign errors (OS, re2, SQLite) are translated where they are caught, ``raise ... from exc``.

    SleuthError (code, exit_code)
    ├── InvalidQuery       invalid_query       exit 2
    ├── InvalidPath        invalid_path        exit 2
    ├── Unsupported        unsupported         exit 2
    ├── StaleReference     stale_reference     exit 3
    ├── UnsafeSelection    unsafe_selection    exit 3
    ├── Conflict           conflict            exit 3
    ├── NotFound           not_found           exit 4
    ├── ServerUnavailable  server_unavailable  exit 5
    ├── RateLimited        rate_limited        exit 5
    ├── Timeout            timeout             exit 5
    ├── Cancelled          cancelled           exit 5
    └── Internal           internal            exit 1
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = [
    "locked_error",
    "SleuthError",
    "InvalidQuery",
    "InvalidPath",
    "Unsupported",
    "StaleReference",
    "UnsafeSelection",
    "Conflict",
    "NotFound",
    "ServerUnavailable",
    "RateLimited",
    "Timeout",
    "Cancelled",
    "Internal",
    "ERROR_CODES",
]


class SleuthError(Exception):
    """Root of every error sleuth reports; ``code`` is a code of docs/errors.md."""

    code: ClassVar[str] = "internal"
    exit_code: ClassVar[int] = 1

    def __init__(
        self,
        message: str,
        *,
        details: dict[str, Any] | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = dict(details or {})
        self.retry_after = retry_after

    def to_json(self) -> dict[str, Any]:
        """The error object (docs/errors.md#the-error-object)."""
        return {
            "error": {
                "code": self.code,
                "message": self.message,
                "retry_after": self.retry_after,
                "details": self.details,
            }
        }


class InvalidQuery(SleuthError):
    code = "invalid_query"
    exit_code = 2


class InvalidPath(SleuthError):
    code = "invalid_path"
    exit_code = 2


class Unsupported(SleuthError):
    code = "unsupported"
    exit_code = 2


class StaleReference(SleuthError):
    code = "stale_reference"
    exit_code = 3


class UnsafeSelection(SleuthError):
    code = "unsafe_selection"
    exit_code = 3


class Conflict(SleuthError):
    code = "conflict"
    exit_code = 3


class NotFound(SleuthError):
    code = "not_found"
    exit_code = 4


class ServerUnavailable(SleuthError):
    code = "server_unavailable"
    exit_code = 5


class RateLimited(SleuthError):
    code = "rate_limited"
    exit_code = 5


class Timeout(SleuthError):
    code = "timeout"
    exit_code = 5


class Cancelled(SleuthError):
    code = "cancelled"
    exit_code = 5


class Internal(SleuthError):
    code = "internal"
    exit_code = 1


ERROR_CODES: dict[str, type[SleuthError]] = {
    cls.code: cls
    for cls in (
        InvalidQuery,
        InvalidPath,
        Unsupported,
        StaleReference,
        UnsafeSelection,
        Conflict,
        NotFound,
        ServerUnavailable,
        RateLimited,
        Timeout,
        Cancelled,
        Internal,
    )
}


_LOCKED = ("database is locked", "database table is locked", "database is busy")


def locked_error(exc: BaseException, what: str = "a state file in .sleuth/") -> Timeout | None:
    """``timeout`` for SQLite's "database is locked" (another process held a write lock on one
    of the state files past the wait; nothing was damaged, so the remedy is to try again, not
    to delete anything: docs/SAFETY.md#damaged-or-planted-state); None for any other error."""
    import sqlite3  # late: most callers never meet it

    if not isinstance(exc, sqlite3.OperationalError) or not str(exc).startswith(_LOCKED):
        return None
    return Timeout(
        f"{what} is locked by another process ({exc}): nothing was changed; try again once it "
        "is done",
        details={"locked": what},
    )
