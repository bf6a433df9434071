"""Worker CPU per reconnect that gets only the Time out banner (issue 14: the
stale reconnect storm's 1,124 phones that missed only a Time out), in
process: ``PAIRS`` pairs of phones through the real router, each round all
drop, a narrator calls Time out (or lifts it), all reconnect naming the stamp
they showed. Prints ms of this process's CPU per reconnect (the test client's
share included: compare runs, not absolute figures). For where it goes, run
it under ``py-spy record``.
Run: ``.venv/bin/python -m pytest tests/challenges/measure_resume.py -q -s -p no:cacheprovider``
Not part of the suite (no ``test_`` prefix)."""

from __future__ import annotations

import os
import time
import uuid

import pytest
from channels.db import database_sync_to_async

from challenges import services
from tests.factories import paired_chronicle
from tests.faults.phones import Phone

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

PAIRS = int(os.getenv("PAIRS", "40"))
ROUNDS = int(os.getenv("ROUNDS", "10"))


async def _round(phones: list[Phone], game: dict, time_out: bool) -> float:
    for phone in phones:
        await phone.drop()
    call = services.session_time_out if time_out else services.session_resume
    await database_sync_to_async(call)(
        session=game["session"], user=game["narrator"], msg_id=uuid.uuid4().hex
    )
    start = time.process_time()
    for phone in phones:
        stamp, path = phone.stamp, phone.path
        phone.path = f"{path}?v={stamp}"
        try:
            first = await phone.connect()
        finally:
            phone.path = path
        assert 'class="time-out"' in first or "time-out" in first, first[:200]
    return time.process_time() - start


async def test_measure_resume_cpu():
    game = await database_sync_to_async(paired_chronicle)(PAIRS, copies=50)
    phones = []
    for agnes, boris in game["pairs"]:
        users = await database_sync_to_async(lambda a=agnes, b=boris: (a.player, b.player))()
        phones += [
            Phone(f"/ws/play/{agnes.pk}/", users[0]),
            Phone(f"/ws/play/{boris.pk}/", users[1]),
        ]
    for phone in phones:
        await phone.connect()
    await _round(phones, game, True)  # warm up
    await _round(phones, game, False)
    rounds = sorted(
        [1000 * await _round(phones, game, n % 2 == 0) / len(phones) for n in range(ROUNDS)]
    )
    print(
        f"\n[resume] {ROUNDS} rounds of {len(phones)} phones reconnecting to the banner, "
        f"ms CPU per reconnect: min {rounds[0]:.3f}, median {rounds[len(rounds) // 2]:.3f}"
    )
    for phone in phones:
        await phone.close()
