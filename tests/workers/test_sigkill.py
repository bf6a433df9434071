"""A worker killed with SIGKILL while phones play over two workers.

Phones behave like ``static/narrator/app.js``: each keeps every action until
its ack and resends the unacknowledged ones after reconnecting (to whichever
worker answers). While challenges flow, one worker and then the other is killed
without warning and restarted. The database must hold no half-written move,
every challenge must resolve exactly once and no action may apply twice.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter

import pytest
from channels.db import database_sync_to_async

from challenges.consistency import find_inconsistencies
from challenges.models import Challenge, ClientAction, Event
from tests.workers.conftest import session_cookie, strong_pairs
from tests.workers.phone import Phone

pytestmark = [
    pytest.mark.workers,
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.asyncio,
]

PAIRS = 4  # pairs of phones playing side by side
CHALLENGES_PER_PAIR = 4
KILLS = 4  # SIGKILLs; odd ones at a random moment, even ones just after a commit
COMMIT_WATCH = 3.0  # seconds to watch for a committed, unacknowledged action
THROWS = ("rock", "paper", "scissors")


@pytest.fixture
def players(transactional_db):
    """An open session and PAIRS pairs of characters with their players."""
    return strong_pairs(PAIRS, 50)


@database_sync_to_async
def _challenge(challenger_id: int, defender_id: int, number: int) -> Challenge:
    """The pair's ``number``-th challenge (1-based); it must exist."""
    rows = list(
        Challenge.objects.filter(challenger_id=challenger_id, defender_id=defender_id).order_by(
            "pk"
        )
    )
    assert len(rows) == number, (len(rows), number)
    return rows[-1]


@database_sync_to_async
def _applied(msg_ids: list[str]) -> set[str]:
    return set(ClientAction.objects.filter(msg_id__in=msg_ids).values_list("msg_id", flat=True))


async def _committed_unacked(phones: list[Phone]) -> Phone | None:
    """A connected phone one of whose actions is committed but not yet acknowledged."""
    waiting = {msg_id: phone for phone in phones for msg_id in list(phone.pending)}
    if not waiting:
        return None
    for msg_id in await _applied(list(waiting)):
        phone = waiting[msg_id]
        if msg_id in phone.pending and phone.connected:
            return phone
    return None


async def _play_pair(challenger_phone, defender_phone, challenger, defender, replies, rng):
    for number in range(1, CHALLENGES_PER_PAIR + 1):
        reply = await challenger_phone.act(
            action="challenge.open", defender=str(defender.pk), bid="physical:Strong"
        )
        replies[reply.get("status", reply["type"])] += 1
        assert reply["type"] == "ack", reply
        challenge = await _challenge(challenger.pk, defender.pk, number)
        reply = await defender_phone.act(
            action="challenge.bid", challenge=challenge.pk, bid="Strong"
        )
        replies[reply.get("status", reply["type"])] += 1
        assert reply["type"] == "ack", reply
        while True:
            challenge = await _challenge(challenger.pk, defender.pk, number)
            if challenge.stage == "resolved":
                break
            if challenge.stage == "throws":
                moves = [
                    phone.act(action="challenge.throw", challenge=challenge.pk, throw=throw)
                    for phone, throw in (
                        (challenger_phone, rng.choice(THROWS)),
                        (defender_phone, rng.choice(THROWS)),
                    )
                ]
            else:
                phone = {
                    "declare_challenger": challenger_phone,
                    "declare_defender": defender_phone,
                }[challenge.stage]
                moves = [phone.act(action="challenge.declare", challenge=challenge.pk)]
            for reply in await asyncio.gather(*moves):
                replies[reply.get("status", reply["type"])] += 1
                assert reply["type"] == "ack", reply


async def test_a_worker_killed_mid_resolution_leaves_nothing_half_written(players, start_workers):
    rng = random.Random(20261122)
    workers = start_workers(2)
    phones = []
    for n, (challenger, defender) in enumerate(players["pairs"]):
        pair = []
        for side, (character, player) in enumerate((challenger, defender)):
            phone = Phone(
                character.name, f"/ws/play/{character.pk}/", await session_cookie(player), workers
            )
            pair.append(await phone.connect(workers[(n + side) % 2]))
        phones.append(pair)

    replies: Counter[str] = Counter()
    began = time.monotonic()
    games = [
        asyncio.create_task(_play_pair(cp, dp, c[0], d[0], replies, rng))
        for (cp, dp), (c, d) in zip(phones, players["pairs"], strict=True)
    ]
    all_phones = [phone for pair in phones for phone in pair]
    kills = []
    try:
        for kill in range(KILLS):
            await asyncio.sleep(rng.uniform(0.2, 0.8))
            victim, moment = workers[kill % 2], "random"
            if kill % 2:
                # Just after a commit: a move is in the database, its ack not yet
                # on the phone. Kill the worker that phone is talking to.
                watch_until = time.monotonic() + COMMIT_WATCH
                while time.monotonic() < watch_until and not all(g.done() for g in games):
                    if phone := await _committed_unacked(all_phones):
                        victim, moment = phone.worker, "after a commit"
                        break
                    await asyncio.sleep(0.005)
            if all(game.done() for game in games):
                break
            in_flight = sum(len(phone.pending) for phone in all_phones)
            victim.kill()
            kills.append((round(time.monotonic() - began, 2), victim.name, moment, in_flight))
            await asyncio.to_thread(victim.start, victim.port)
        await asyncio.wait_for(asyncio.gather(*games), 120)
    finally:
        for game in games:
            game.cancel()
        for pair in phones:
            for phone in pair:
                await phone.close()
    elapsed = time.monotonic() - began
    resent = sum(
        1 for pair in phones for phone in pair for times in phone.sent.values() if times > 1
    )
    reconnects = sum(phone.reconnects for pair in phones for phone in pair)
    print(
        f"{PAIRS * CHALLENGES_PER_PAIR} challenges over 2 workers in {elapsed:.1f}s; "
        f"kills (s, worker, moment, actions awaiting ack): {kills}; reconnects {reconnects}; "
        f"actions resent {resent}; replies {dict(replies)}"
    )
    assert kills, "the games ended before any worker was killed"

    @database_sync_to_async
    def history():
        challenges = list(Challenge.objects.filter(session=players["session"]))
        resolved = Counter(
            Event.objects.filter(kind="resolved").values_list("challenge_id", flat=True)
        )
        applied = list(ClientAction.objects.values_list("msg_id", flat=True))
        return challenges, resolved, applied, find_inconsistencies()

    challenges, resolved, applied, problems = await history()
    assert problems == []
    assert len(challenges) == PAIRS * CHALLENGES_PER_PAIR
    assert all(c.stage == "resolved" for c in challenges)
    assert all(resolved[c.pk] == 1 for c in challenges)
    # Every action a phone made was applied exactly once: one row per id (a
    # unique constraint), the events to match (the consistency check), and an
    # action committed just before a kill, its ack lost, was answered "already
    # done" when resent.
    made = {msg_id for phone in all_phones for msg_id in phone.replies}
    assert len(applied) == len(set(applied)) == len(made)
    assert set(applied) == made
    assert replies["ok"] + replies["already_done"] == len(made)
    assert not any(phone.pending for phone in all_phones)
