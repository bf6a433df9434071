"""Per-connection rate limit: a token bucket.

A phone sends a few actions a minute and a heartbeat every few seconds; a
flood (a stuck key, a script) must not slow the other phones. Each websocket
connection has its own bucket: ``rate`` tokens a second refill it up to
``burst``; an action costs one token, a heartbeat (ping/sync) a quarter. When
the bucket is empty the consumer answers with an error and closes the socket
with code 4429 (see ``challenges.consumers``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

ACTION_COST = 1.0
HEARTBEAT_COST = 0.25


@dataclass
class TokenBucket:
    """``rate`` tokens per second (sustained), at most ``burst`` saved up.

    ``clock`` returns seconds (monotonic); tests pass their own.
    """

    rate: float = 10.0
    burst: float = 20.0
    clock: Callable[[], float] = time.monotonic
    tokens: float = field(init=False)
    updated: float = field(init=False)

    def __post_init__(self) -> None:
        if self.rate <= 0 or self.burst < 1:
            raise ValueError("A token bucket needs a positive rate and a burst of at least 1.")
        self.tokens = self.burst
        self.updated = self.clock()

    def take(self, cost: float = ACTION_COST) -> bool:
        """Spend ``cost`` tokens if there are enough; False (nothing spent) if not."""
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.rate)
        self.updated = now
        if self.tokens + 1e-9 < cost:  # float sums: 0.1 s at 10/s is one token
            return False
        self.tokens -= cost
        return True
