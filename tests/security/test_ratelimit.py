"""The per-connection rate limit (``challenges.ratelimit``), pure: a fake
clock, no sockets. The consumer's side is in ``test_entry.py``."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from challenges.ratelimit import ACTION_COST, HEARTBEAT_COST, Limiter, TokenBucket, Verdict

RATE, BURST, LATE = 10.0, 20.0, 60.0


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_allows_its_burst_then_its_rate():
    clock = FakeClock()
    bucket = TokenBucket(rate=10, burst=20, clock=clock)
    assert all(bucket.take() for _ in range(20))
    assert not bucket.take()
    clock.now += 0.1  # one token back
    assert bucket.take() and not bucket.take()
    clock.now += 60  # refills to the burst, no further
    assert sum(bucket.take() for _ in range(30)) == 20


def test_a_heartbeat_costs_a_quarter_of_an_action():
    bucket = TokenBucket(rate=1, burst=1, clock=FakeClock())
    assert all(bucket.take(0.25) for _ in range(4))
    assert not bucket.take(0.25)


def test_a_bucket_refuses_nonsense_settings():
    with pytest.raises(ValueError, match="positive rate"):
        TokenBucket(rate=0, burst=5)
    with pytest.raises(ValueError, match="lateness"):
        Limiter(late=-1)


def test_a_bunch_beyond_the_burst_is_refused_not_closed():
    """40 frames read at once (8 a second for 5 s, read after a stall): the
    burst is answered, the rest refused, none closed; the refused ones keep
    no tokens, so the rate answers again a tenth of a second later."""
    clock = FakeClock()
    limiter = Limiter(rate=RATE, burst=BURST, late=LATE, clock=clock)
    verdicts = [limiter.check() for _ in range(40)]
    assert verdicts == [Verdict.ANSWER] * 20 + [Verdict.REFUSE] * 20
    clock.now += 0.1
    assert limiter.check() is Verdict.ANSWER


def test_a_flood_is_closed_once_it_sent_more_than_lateness_explains():
    """Read all at once, a connection is closed on the first frame beyond
    ``burst + rate × late`` tokens (620 actions, or four times as many pings)."""
    limiter = Limiter(rate=RATE, burst=BURST, late=LATE, clock=FakeClock())
    room = int(BURST + RATE * LATE)
    assert Verdict.CLOSE not in {limiter.check() for _ in range(room)}
    assert limiter.check() is Verdict.CLOSE
    pings = Limiter(rate=RATE, burst=BURST, late=LATE, clock=FakeClock())
    assert Verdict.CLOSE not in {pings.check(HEARTBEAT_COST) for _ in range(4 * room)}
    assert pings.check(HEARTBEAT_COST) is Verdict.CLOSE


def _conforming(gaps_ms: list[int], costs: list[float]) -> list[tuple[float, float]]:
    """(send time, cost) of the frames a phone keeping to RATE and BURST
    sends: each wanted frame ``gaps_ms`` after the last wish, left out if its
    own bucket (as the phone would measure on the wire) cannot pay for it."""
    clock = FakeClock()
    own = TokenBucket(rate=RATE, burst=BURST, clock=clock)
    sent = []
    for gap, cost in zip(gaps_ms, costs, strict=True):
        clock.now += gap / 1000
        if own.take(cost):
            sent.append((clock.now, cost))
    return sent


_frames = st.integers(min_value=1, max_value=700).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(min_value=0, max_value=300), min_size=n, max_size=n),
        st.lists(st.sampled_from([ACTION_COST, HEARTBEAT_COST]), min_size=n, max_size=n),
        st.lists(st.integers(min_value=0, max_value=int(LATE * 1000)), min_size=n, max_size=n),
    )
)


# The worst case: the whole burst, then the rate for LATE seconds, all read at
# the end (the first frame LATE seconds late, the others queued behind it).
_WORST = int(BURST + RATE * LATE)
_FULL_RATE = [0] * int(BURST) + [int(1000 / RATE)] * int(RATE * LATE)


@given(_frames)
@example(([*_FULL_RATE], [ACTION_COST] * _WORST, [int(LATE * 1000)] + [0] * (_WORST - 1)))
def test_a_phone_keeping_to_the_rate_is_never_closed_however_late_it_is_read(frames):
    """Whatever the delays (up to LATE seconds each, in order: a socket's
    frames are read in the order sent), a phone that keeps to the rate on the
    wire is refused at worst, never closed; read on time, never refused."""
    gaps, costs, delays_ms = frames
    sent = _conforming(gaps, costs)
    clock = FakeClock()
    late = Limiter(rate=RATE, burst=BURST, late=LATE, clock=clock)
    on_time = Limiter(rate=RATE, burst=BURST, late=LATE, clock=clock)
    read_at = 0.0
    verdicts = []
    for (at, cost), delay in zip(sent, delays_ms, strict=False):
        read_at = max(read_at, at + delay / 1000)  # no earlier than the one before
        clock.now = at
        assert on_time.check(cost) is Verdict.ANSWER
        verdicts.append((read_at, cost))
    for at, cost in verdicts:
        clock.now = at
        assert late.check(cost) is not Verdict.CLOSE


@given(
    st.floats(min_value=2 * RATE, max_value=10_000),
    st.sampled_from([ACTION_COST, HEARTBEAT_COST]),
)
def test_a_flood_at_twice_the_rate_or_more_is_closed_within_twice_the_room(tokens, cost):
    """Frames of ``cost`` sent and read at ``tokens`` ≥ 2 × RATE tokens a
    second: the flood is closed within 2 × (BURST + RATE × LATE) tokens'
    worth of frames (1,240 actions at the defaults), having been answered no
    more than BURST + RATE × its seconds."""
    clock = FakeClock()
    limiter = Limiter(rate=RATE, burst=BURST, late=LATE, clock=clock)
    bound = int(2 * (BURST + RATE * LATE) / cost) + 1
    answered = 0
    for n in range(1, bound + 1):
        clock.now = 100.0 + n * cost / tokens
        verdict = limiter.check(cost)
        if verdict is Verdict.CLOSE:
            break
        answered += verdict is Verdict.ANSWER
    else:
        pytest.fail(f"not closed within {bound} frames at {tokens:.0f} tokens/s")
    assert answered * cost <= BURST + RATE * n * cost / tokens + 1e-6
