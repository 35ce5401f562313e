"""A token bucket per key: each key may make `burst` requests at once, then `rate` a second.

Pure: the caller passes the time, so the limit is tested without sleeping.
"""

from __future__ import annotations

import math
import threading


class RateLimit:
    """Token buckets by key prefix, refilled at `rate` tokens a second up to `burst`."""

    def __init__(self, rate: float, burst: int) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("a rate limit needs rate > 0 and burst >= 1")
        self.rate = rate
        self.burst = burst
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, at)
        self._lock = threading.Lock()

    def take(self, key: str, now: float) -> float:
        """Spend one token of `key`'s bucket at time `now` (seconds): 0 when the request
        may go, else the seconds until a token is there (the request is refused)."""
        with self._lock:
            tokens, at = self._buckets.get(key, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + max(0.0, now - at) * self.rate)
            if tokens >= 1:
                self._buckets[key] = (tokens - 1, now)
                return 0.0
            self._buckets[key] = (tokens, now)
            return (1 - tokens) / self.rate


def retry_after(wait: float) -> str:
    """The Retry-After header's whole seconds for a wait (at least 1)."""
    return str(max(1, math.ceil(wait)))
