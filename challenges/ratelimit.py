"""Per-connection rate limit: a token bucket that refuses, a wider one that closes.

A phone sends a few actions a minute and a heartbeat every few seconds; a
flood (a stuck key, a script) must not slow the other phones. Each websocket
connection has its own :class:`Limiter`. An action costs one token, a
heartbeat (ping/sync) a quarter.

The limiter measures a frame when the consumer reads it, not when the phone
sent it, and an overloaded server reads late and bunched: a narrator tapping
8 rulings a second, read after a 5-second stall, arrives as 40 frames at once
(issue 14's ``reconnect_stale`` bench row). So an empty bucket is not taken
for a flood:

- the *answer* bucket (``rate`` tokens a second, up to ``burst``) decides
  whether a frame is handled now; a frame it cannot pay for is **refused**
  (the action gets an error frame, :data:`REFUSED_MESSAGE`; nothing changes);
- the *flood* bucket has the same rate but room for ``late`` more seconds of
  it (``burst + rate × late`` tokens); every frame read pays it, refused or
  not. Reading late never makes a phone look as if it had *sent* more, so a
  phone that keeps to ``rate`` (with ``burst``) is never found here as long
  as the server reads its frames at most ``late`` seconds late; a phone that
  empties it is a real flood and its socket is **closed** (4429).

A refused frame costs the server one parse and one short answer, so a flood
slows no one while it lasts; the close only ends it.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable
from dataclasses import dataclass, field

ACTION_COST = 1.0  # tokens
HEARTBEAT_COST = 0.25  # tokens

#: The answer to an action refused for want of tokens (app.js shows it; the
#: action changed nothing and is not resent).
REFUSED_MESSAGE = "Too many messages: wait a moment and try again."
#: The last answer before a flood's socket is closed with 4429.
FLOOD_MESSAGE = "Too many messages at once: this connection is closed and will reconnect."

#: Seconds before a heartbeat the answer bucket refused is answered after all
#: (a refused ping or sync is owed, not dropped: the phone hears from the
#: server within its answer deadline and a stale screen is repaired). Later
#: heartbeats refused meanwhile join the one owed, so a ping flood gets at
#: most one such answer a second.
OWED_HEARTBEAT_SECONDS = 1.0


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


class Verdict(enum.Enum):
    """What the consumer does with a frame (:meth:`Limiter.check`)."""

    ANSWER = "answer"  # handle it
    REFUSE = "refuse"  # answer with an error (an action) or later (a heartbeat); change nothing
    CLOSE = "close"  # a flood: close the socket with 4429


@dataclass
class Limiter:
    """One connection's limit: ``rate`` tokens a second (sustained), ``burst``
    tokens at once, and ``late`` seconds the server may read its frames late
    before a phone keeping to them could be taken for a flood (module
    docstring). ``clock`` returns seconds (monotonic); tests pass their own."""

    rate: float = 10.0
    burst: float = 20.0
    late: float = 60.0
    clock: Callable[[], float] = time.monotonic
    answer: TokenBucket = field(init=False)
    flood: TokenBucket = field(init=False)

    def __post_init__(self) -> None:
        if self.late < 0:
            raise ValueError("A limiter's lateness is a number of seconds, 0 or more.")
        self.answer = TokenBucket(rate=self.rate, burst=self.burst, clock=self.clock)
        self.flood = TokenBucket(
            rate=self.rate, burst=self.burst + self.rate * self.late, clock=self.clock
        )

    def check(self, cost: float = ACTION_COST) -> Verdict:
        """Charge a frame of ``cost`` tokens, read now: CLOSE if the flood
        bucket cannot pay it, else REFUSE if the answer bucket cannot (it keeps
        its tokens), else ANSWER."""
        if not self.flood.take(cost):
            return Verdict.CLOSE
        if not self.answer.take(cost):
            return Verdict.REFUSE
        return Verdict.ANSWER


class FailedLogins:
    """Websocket logins that failed, counted per client address: a token
    bucket per address (``rate`` a second, ``burst`` at once), so that a
    script opening sockets without a valid login is refused at the handshake,
    before it costs a trip to the database thread that every phone's moves
    wait on. Only failures are charged: a venue's phones behind one address
    (a NAT, a proxy's ``X-Forwarded-For`` read by the ASGI server) reconnect
    as often as they need while their logins hold.

    At most ``most`` addresses are remembered; past that the one least
    recently charged is forgotten (its bucket would be full again soon).
    ``clock`` returns seconds (monotonic); tests pass their own."""

    def __init__(
        self,
        rate: float = 0.5,
        burst: float = 20.0,
        most: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rate, self.burst, self.most, self.clock = rate, burst, most, clock
        self.buckets: dict[str, TokenBucket] = {}

    def allowed(self, address: str) -> bool:
        """True if ``address`` may try to log in now (it has a failure to
        spare); charges nothing."""
        bucket = self.buckets.get(address)
        if bucket is None:
            return True
        if not bucket.take(0.0):  # refills it to now
            return False
        return bucket.tokens + 1e-9 >= ACTION_COST

    def failed(self, address: str) -> None:
        """Charge one failed login to ``address``."""
        bucket = self.buckets.pop(address, None)
        if bucket is None:
            bucket = TokenBucket(rate=self.rate, burst=self.burst, clock=self.clock)
        bucket.take(ACTION_COST)
        self.buckets[address] = bucket  # the most recently charged last
        while len(self.buckets) > self.most:
            del self.buckets[next(iter(self.buckets))]
