"""A limit on failed sign-ins to the web review app, per client address.

A client that fails `max_failures` sign-ins within `window_seconds` is refused (429, with a
`Retry-After`) until its oldest failure in the window is older than the window; while refused,
the token it sends is not even checked, so guessing cannot go on behind the refusals. A
successful sign-in does not count. Each failure is logged with the client's address and its
count, never with the token sent.

In process, in memory: the review app is one process (`casemill review serve`), and a restart
forgetting the failures only lets a client start over at the same slow rate. Behind a reverse
proxy every client has the proxy's address, so they share one limit; the limit is on failures
only, so a reviewer who signs in right is never refused unless someone else is guessing.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

MAX_FAILURES = 5
WINDOW_SECONDS = 60.0
MAX_CLIENTS = 10_000  # clients tracked at once; the one failing least recently is forgotten


@dataclass
class SignInThrottle:
    """The failed sign-ins of each client in the last `window_seconds` (`clock`: seconds, as
    `time.monotonic` gives them; a test passes its own)."""

    max_failures: int = MAX_FAILURES
    window_seconds: float = WINDOW_SECONDS
    clock: Callable[[], float] = time.monotonic
    _failures: OrderedDict[str, deque[float]] = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _recent(self, client: str, now: float) -> deque[float]:
        """The client's failures still in the window (older ones dropped)."""
        times = self._failures.get(client, deque())
        while times and times[0] <= now - self.window_seconds:
            times.popleft()
        if not times:
            self._failures.pop(client, None)
        return times

    def retry_after(self, client: str) -> int | None:
        """Whole seconds until `client` may try again, or None when it may now."""
        with self._lock:
            now = self.clock()
            times = self._recent(client, now)
            if len(times) < self.max_failures:
                return None
            return max(1, math.ceil(times[-self.max_failures] + self.window_seconds - now))

    def failed(self, client: str) -> int:
        """Count a failed sign-in of `client`, log it, and return its failures in the window."""
        with self._lock:
            now = self.clock()
            times = self._recent(client, now)
            times.append(now)
            self._failures[client] = times
            self._failures.move_to_end(client)
            while len(self._failures) > MAX_CLIENTS:
                self._failures.popitem(last=False)
            count = len(times)
        log.warning(
            "failed sign-in from %s (%d in the last %gs; refused for a while from %d)",
            client,
            count,
            self.window_seconds,
            self.max_failures,
        )
        return count
