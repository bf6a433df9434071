"""What twelve dashboards cost the worker per challenge (issue 14), measured
in-process through the real router: ``PAIRS`` pairs of phones at once play
``CHALLENGES`` challenges each (open, bid, both throw), first with no
dashboard, then with ``DASHBOARDS`` dashboards, until each shows every result. The figures
(``time.process_time``: this process's CPU, the test client included on both
sides) are printed, not asserted: machines differ. What is asserted is that
every dashboard ends with the stamp a fresh one would carry. Run it with
``NARRATOR_MEASURE=1 pytest tests/challenges/test_dashboard_cost.py -s``.
"""

from __future__ import annotations

import asyncio
import os
import re
import statistics
import time

import pytest

from tests.challenges.wsutil import WAIT, act_ok, connect, newest_challenge
from tests.factories import crowded_session, paired_chronicle
from tests.faults.phones import Phone, current_dashboard_stamp, split_stamp

pytestmark = pytest.mark.django_db(transaction=True)

PAIRS = 4  # playing at once, so that several changes fall in one tick
CHALLENGES = 3  # per pair
DASHBOARDS = 12
ROUNDS = 5
ROSTER = 300  # characters present besides the players
RESOLVED = re.compile(r'id="challenge-(\d+)" class="row stage-resolved')


async def _watch(dashboard: Phone, resolved: set[int]) -> None:
    """Read ``dashboard``'s frames for ever, keeping only their stamp and the
    results shown (applying them to a screen would cost more than the server)."""
    while True:
        frame = await dashboard.socket.receive_from(timeout=3600)
        stamp, _ = split_stamp(frame)
        dashboard.stamp = stamp or dashboard.stamp
        resolved.update(int(pk) for pk in RESOLVED.findall(frame))


async def _pair(first, second, count: int) -> list[int]:
    """``first`` challenges ``second`` ``count`` times; the challenges' ids."""
    (a, a_char), (b, b_char) = first, second
    played = []
    for _ in range(count):
        await act_ok(a, action="challenge.open", defender=str(b_char.pk), bid="physical:Strong")
        pk = await newest_challenge(a_char)
        await act_ok(b, action="challenge.bid", challenge=pk, bid="Tough")
        await act_ok(a, action="challenge.throw", challenge=pk, throw="rock")
        await act_ok(b, action="challenge.throw", challenge=pk, throw="scissors")
        played.append(pk)
    return played


async def _play(pairs, shown: list[set[int]], count: int = CHALLENGES) -> float:
    """CPU seconds for ``count`` challenges per pair, all pairs at once, until
    every dashboard (``shown``: the results each has shown) shows every result."""
    start = time.process_time()
    played = set()
    for ids in await asyncio.gather(*(_pair(a, b, count) for a, b in pairs)):
        played.update(ids)
    async with asyncio.timeout(WAIT):
        while any(not played <= seen for seen in shown):
            await asyncio.sleep(0.01)
    return time.process_time() - start


@pytest.fixture
def crowd(db):
    table = paired_chronicle(PAIRS, copies=500)
    crowded_session(table["session"], characters=ROSTER, challenges=50)
    return table


async def _watched(game, pairs) -> float:
    """CPU seconds of one round with ``DASHBOARDS`` dashboards connected (not
    counted: their connecting), which end with the stamp of a fresh one."""
    dashboards = [
        Phone(f"/ws/narrate/{game['session'].pk}/", game["narrator"]) for _ in range(DASHBOARDS)
    ]
    shown = [set() for _ in dashboards]
    for dashboard in dashboards:
        await dashboard.connect()
    watchers = [
        asyncio.create_task(_watch(d, seen)) for d, seen in zip(dashboards, shown, strict=True)
    ]
    seconds = await _play(pairs, shown)
    await asyncio.sleep(0.5)  # the last roster rows
    stamp = await current_dashboard_stamp(game["session"])
    for watcher in watchers:
        watcher.cancel()
    for dashboard in dashboards:
        assert dashboard.stamp == stamp
        await dashboard.close()
    return seconds


@pytest.mark.skipif(not os.getenv("NARRATOR_MEASURE"), reason="a measurement: NARRATOR_MEASURE=1")
async def test_twelve_dashboards_cost_per_challenge(crowd):
    game = crowd
    pairs = []
    for first, second in game["pairs"]:
        a, _ = await connect(f"/ws/play/{first.pk}/", first.player)
        b, _ = await connect(f"/ws/play/{second.pk}/", second.player)
        pairs.append(((a, first), (b, second)))
    await _play(pairs, [], 1)  # templates loaded, caches warm
    alone, watched = [], []
    for _ in range(ROUNDS):  # alternating, each figure the median of its rounds
        alone.append(await _play(pairs, []))
        watched.append(await _watched(game, pairs))
    n = PAIRS * CHALLENGES
    alone_ms, watched_ms = (statistics.median(r) / n * 1000 for r in (alone, watched))
    rounds = " ".join(f"{(w - a) / n * 1000:.1f}" for a, w in zip(alone, watched, strict=True))
    print(
        f"\n[dashboards] {ROUNDS} rounds of {n} challenges ({PAIRS} pairs at once), "
        f"{ROSTER + 2 * PAIRS} on the roster, medians: {alone_ms:.1f} ms CPU each without "
        f"dashboards, {watched_ms:.1f} ms with {DASHBOARDS}: {watched_ms - alone_ms:.1f} ms "
        f"for the dashboards, {(watched_ms - alone_ms) / DASHBOARDS:.2f} ms each "
        f"(by round: {rounds})"
    )
    for (a, _), (b, _) in pairs:
        await a.disconnect()
        await b.disconnect()
