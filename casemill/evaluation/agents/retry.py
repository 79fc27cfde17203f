"""Bounded retries with exponential backoff and seeded jitter, honouring `Retry-After`."""

from __future__ import annotations

import email.utils
import random
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class RetryPolicy:
    """`attempts` tries in all (1 = no retry); the n-th retry waits `base_s * 2**(n-1)` plus up
    to `jitter` of that (drawn from a `random.Random` seeded by the caller), at most `max_s`; a
    server's `Retry-After` is honoured up to `max_retry_after_s`."""

    attempts: int = 4
    base_s: float = 0.5
    max_s: float = 8.0
    jitter: float = 0.5
    max_retry_after_s: float = 60.0

    def delay(self, retry: int, rng: random.Random, retry_after_s: float | None = None) -> float:
        backoff = min(self.max_s, self.base_s * 2 ** max(0, retry - 1))
        backoff += backoff * self.jitter * rng.random()
        if retry_after_s is not None:
            return min(self.max_retry_after_s, max(retry_after_s, 0.0))
        return backoff


NO_RETRY = RetryPolicy(attempts=1)


def not_retried(message: str, wait_s: float) -> str:
    """`message` of an error an adapter gives up retrying because the case's time limit would
    end during the `wait_s` back-off before the next attempt."""
    return f"{message} (not retried: the case's time limit ends within the {wait_s:.1f}s wait)"


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a `Retry-After` header (seconds or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def status_kind(status: int) -> str:
    if status == 429:
        return "http_429"
    if status >= 500:
        return "http_5xx"
    return "http_4xx"
