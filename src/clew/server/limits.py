"""A token bucket per key: each key may make `burst` requests at once, then `rate` a second.

Pure: the caller passes the time, so the limit is tested without sleeping.
"""

from __future__ import annotations

import math
import threading

MAX_BUCKETS = 100_000  # past this many, buckets that have filled up again are forgotten


class RateLimit:
    """Token buckets by key prefix (or client address), refilled at `rate` tokens a second up
    to `burst`. A full bucket is the same as none, so when there are many (a client behind a
    listed proxy may come from any address) the full ones are dropped: memory stays bounded
    and no limit is lifted early."""

    def __init__(self, rate: float, burst: int, most: int = MAX_BUCKETS) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("a rate limit needs rate > 0 and burst >= 1")
        self.rate = rate
        self.burst = burst
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, at)
        self._most = most  # buckets kept before the full ones are dropped
        self._limit = most  # twice what a drop left, so dropping costs O(1) a request
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._buckets)

    def take(self, key: str, now: float) -> float:
        """Spend one token of `key`'s bucket at time `now` (seconds): 0 when the request
        may go, else the seconds until a token is there (the request is refused)."""
        with self._lock:
            if len(self._buckets) >= self._limit and key not in self._buckets:
                self._buckets = {
                    k: (tokens, at)
                    for k, (tokens, at) in self._buckets.items()
                    if tokens + max(0.0, now - at) * self.rate < self.burst
                }
                self._limit = max(self._most, 2 * len(self._buckets))
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
