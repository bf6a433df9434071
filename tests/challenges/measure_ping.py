"""Worker CPU per heartbeat ping (issue 14 part 2), in process: ``PAIRS`` pairs of
phones and a dashboard through the real router, a few challenges played, then
every phone pings ``ROUNDS`` times with its current stamp. Prints ms of this
process's CPU (every thread: the event loop and the database thread) per ping.
Run: ``.venv/bin/python -m pytest tests/challenges/measure_ping.py -q -s -p no:cacheprovider``
(``MEASURE_REDIS=1 REDIS_URL=redis://127.0.0.1:6379/15``: on channels-redis).
Not part of the suite (no ``test_`` prefix)."""

from __future__ import annotations

import json
import os
import time

import pytest
from channels.db import database_sync_to_async

from challenges import heartbeat
from challenges.consumers.base import BaseConsumer
from challenges.models import Challenge
from challenges.services import clocks
from tests.factories import crowded_session, paired_chronicle
from tests.faults.phones import Phone

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]
if os.getenv("MEASURE_REDIS"):  # channels-redis at REDIS_URL (tests/conftest.py)
    pytestmark.append(pytest.mark.redis)

PAIRS = 20
ROUNDS = int(os.getenv("ROUNDS", "40"))
#: ``CROWD=1500,2000``: that many more characters and challenges in the session.
CROWD = os.getenv("CROWD")
#: ``SKIP=rejoin,tick``: make those steps of a ping no-ops (to cost each step).
SKIP = os.getenv("SKIP", "")


async def _nothing(self) -> None:
    return None


async def _ping_all(phones) -> float:
    for phone in phones:
        phone.take_waiting()
    start = time.process_time()
    for phone in phones:
        await phone.socket.send_to(text_data=json.dumps({"action": "ping", "v": phone.stamp}))
    for phone in phones:
        answer = phone._take(await phone.socket.receive_from(timeout=30))
        assert answer == {"type": "pong"}, answer
    return time.process_time() - start


async def test_measure_ping_cpu(monkeypatch):
    game = await database_sync_to_async(paired_chronicle)(PAIRS, copies=50)
    if CROWD:
        characters, challenges = (int(n) for n in CROWD.split(","))
        await database_sync_to_async(crowded_session)(
            game["session"], characters=characters, challenges=challenges
        )
    phones, pairs = [], []
    for agnes, boris in game["pairs"]:
        users = await database_sync_to_async(lambda a=agnes, b=boris: (a.player, b.player))()
        pair = (Phone(f"/ws/play/{agnes.pk}/", users[0]), Phone(f"/ws/play/{boris.pk}/", users[1]))
        pairs.append((boris, *pair))
        phones += pair
    for phone in phones:
        await phone.connect()
    for n, (boris, a, b) in enumerate(pairs[:5]):
        await a.act(f"o{n}", action="challenge.open", defender=boris.pk, bid="physical:Strong")
        pk = await database_sync_to_async(lambda: Challenge.objects.latest("id").pk)()
        await b.act(f"b{n}", action="challenge.bid", challenge=pk, bid="Tough")
    for phone in phones:
        await phone.settle(0.2)
    if "rejoin" in SKIP:  # after connecting: joining the groups is rejoin's first call
        monkeypatch.setattr(BaseConsumer, "rejoin", _nothing)
    if "tick" in SKIP:
        monkeypatch.setattr(BaseConsumer, "tick_clocks", _nothing)
    await _ping_all(phones)  # warm up
    rounds = sorted([1000 * await _ping_all(phones) / len(phones) for _ in range(ROUNDS)])
    print(
        f"\n[ping] {ROUNDS} rounds of {len(phones)} phones pinging, ms CPU per ping: "
        f"min {rounds[0]:.3f}, median {rounds[len(rounds) // 2]:.3f}"
    )
    for phone in phones:
        await phone.close()
    await database_sync_to_async(_queries)(game)


def _queries(game) -> None:
    """CPU and wall time of one snapshot query against one phone's exact query."""
    session, (agnes, _) = game["session"], game["pairs"][0]
    for name, call in (
        ("snapshot (heartbeat._play_rows)", lambda: heartbeat._play_rows(session.pk)[1]),
        ("exact (play_parts)", lambda: heartbeat.play_parts(agnes.pk, session.pk)),
        ("clocks_tick", lambda: [clocks.clocks_tick(session.pk)]),
    ):
        call()
        cpu, wall = time.process_time(), time.perf_counter()
        for _ in range(10):
            size = len(call())
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        print(f"[query] {name}: {size} entries, {100 * cpu:.2f} ms CPU, {100 * wall:.2f} ms wall")
