"""The provider API's rate limit (docs/faces.md#provider-api): a token bucket per workspace.

``[tool.sleuth] provider_rate = {per_second = 5, burst = 10}`` turns it on (it is off without
the key): the bucket holds at most ``burst`` tokens (default: ``per_second`` rounded up, at
least 1), starts full, and refills at ``per_second`` tokens a second; each provider search
takes one. A search finding the bucket empty is ``rate_limited`` with ``retry_after``, the
seconds until the next token (rounded up to the millisecond). The bucket lives in the process,
one per ``Provider``: two processes (two CLI calls) each have their own, so one CLI call never
waits. The clock is injectable, so tests never sleep.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sleuth.errors import InvalidPath, RateLimited

__all__ = ["Rate", "TokenBucket", "RateLimiter", "rate_of"]

RATE_KEY = "provider_rate"


@dataclass(frozen=True)
class Rate:
    """A bucket's refill rate (tokens a second) and size."""

    per_second: float
    burst: int

    def to_json(self) -> dict[str, Any]:
        return {"per_second": self.per_second, "burst": self.burst}


def _bad(reason: str) -> InvalidPath:
    return InvalidPath(
        f"cannot use the sleuth configuration: [tool.sleuth] {RATE_KEY} {reason}, e.g. "
        f"{RATE_KEY} = {{per_second = 5, burst = 10}}; fix the file (or remove the key) and run "
        "again",
        details={"key": RATE_KEY, "reason": reason},
    )


def _number(value: object) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


def rate_of(config: Mapping[str, Any]) -> Rate | None:
    """The configured rate of a workspace configuration, None when off; ``invalid_path`` for
    a malformed one (a bad configuration file, docs/errors.md)."""
    table = config.get(RATE_KEY)
    if table is None:
        return None
    if not isinstance(table, dict):
        raise _bad("must be a table")
    unknown = sorted(set(table) - {"per_second", "burst"})
    if unknown:
        raise _bad(f"has unknown key(s) {', '.join(unknown)} (it takes per_second and burst)")
    per_second = table.get("per_second")
    if not isinstance(per_second, (int, float)) or not _number(per_second) or per_second <= 0:
        raise _bad("needs per_second, a positive number of searches a second")
    burst = table.get("burst", max(1, math.ceil(per_second)))
    if isinstance(burst, bool) or not isinstance(burst, int) or burst < 1:
        raise _bad("burst must be a positive integer")
    return Rate(float(per_second), burst)


class TokenBucket:
    """``burst`` tokens, refilled at ``per_second``; ``take`` spends one or says how long to
    wait for it."""

    def __init__(self, rate: Rate, clock: Callable[[], float]) -> None:
        self.rate = rate
        self._clock = clock
        self._tokens = float(rate.burst)
        self._at = clock()

    def take(self) -> float | None:
        """Spend a token: None when there was one, else the seconds until there is."""
        now = self._clock()
        elapsed = max(0.0, now - self._at)  # a clock that went back refills nothing
        self._tokens = min(float(self.rate.burst), self._tokens + elapsed * self.rate.per_second)
        self._at = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return None
        wait = (1.0 - self._tokens) / self.rate.per_second
        # up to the millisecond (less a float's noise: 0.15000000001 s is 0.15)
        return max(0.001, math.ceil(wait * 1000 - 1e-6) / 1000)


class RateLimiter:
    """The bucket of one workspace, following its configuration: a changed ``provider_rate``
    starts a new, full bucket; no ``provider_rate`` lets every search through."""

    def __init__(self, config: Callable[[], Mapping[str, Any]], clock: Callable[[], float]):
        self._config = config
        self._clock = clock
        self._bucket: TokenBucket | None = None

    def rate(self) -> Rate | None:
        """The configured rate (None: off)."""
        return rate_of(self._config())

    def check(self) -> None:
        """Spend a token; ``rate_limited`` with ``retry_after`` when none is left."""
        rate = self.rate()
        if rate is None:
            self._bucket = None
            return
        if self._bucket is None or self._bucket.rate != rate:
            self._bucket = TokenBucket(rate, self._clock)
        wait = self._bucket.take()
        if wait is not None:
            raise RateLimited(
                f"rate limited: this workspace allows {rate.per_second:g} provider searches a "
                f"second (bursts of {rate.burst}); retry in {wait:g} s",
                retry_after=wait,
                details=rate.to_json(),
            )
