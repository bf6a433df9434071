"""The same message resent a thousand times, and from a second tab: applied once.

A phone resends every unacknowledged action after a reconnect, and a player may
have the same character open in two tabs; the server keeps each message id of a
user once (``ClientAction``), so every repeat is answered "already_done".
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from channels.db import database_sync_to_async

from challenges.models import Challenge, ClientAction, Event, Test, TraitLoss
from tests.faults.phones import Phone

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

REPEATS = 1000


@pytest.fixture(autouse=True)
def _no_rate_limit(settings):
    """A thousand frames in a few seconds is a flood the rate limit closes
    (tests/security); here only the idempotency of message ids is tested."""
    settings.WS_RATE = settings.WS_BURST = 10**6


@database_sync_to_async
def _state(challenge_id: int) -> tuple:
    challenge = Challenge.objects.get(pk=challenge_id)
    return (
        challenge.stage,
        challenge.version,
        Event.objects.filter(challenge=challenge).count(),
        list(
            Test.objects.filter(challenge=challenge).values_list(
                "challenger_throw", "defender_throw"
            )
        ),
        TraitLoss.objects.filter(challenge=challenge).count(),
    )


async def _replies(phone: Phone, count: int) -> list[dict]:
    replies = []
    while len(replies) < count:
        frame = await phone.socket.receive_from(timeout=30)
        if frame.startswith("{"):
            replies.append(json.loads(frame))
    return replies


async def test_a_message_resent_a_thousand_times_and_from_a_second_tab_applies_once(table):
    game = await database_sync_to_async(table)(1)
    agnes, boris = game["pairs"][0]
    agnes_player = await database_sync_to_async(lambda: agnes.player)()
    boris_player = await database_sync_to_async(lambda: boris.player)()
    tab1 = Phone(f"/ws/play/{agnes.pk}/", agnes_player)
    tab2 = Phone(f"/ws/play/{agnes.pk}/", agnes_player)
    boris_phone = Phone(f"/ws/play/{boris.pk}/", boris_player)
    for phone in (tab1, tab2, boris_phone):
        await phone.connect()
    reply = await tab1.act(
        "open", action="challenge.open", defender=boris.pk, bid="physical:Strong"
    )
    assert reply["status"] == "ok"
    challenge_id = await database_sync_to_async(lambda: Challenge.objects.latest("id").pk)()
    assert (
        await boris_phone.act("bid", action="challenge.bid", challenge=challenge_id, bid="Tough")
    )["status"] == "ok"
    throw = {
        "id": "throw-1",
        "action": "challenge.throw",
        "challenge": challenge_id,
        "throw": "rock",
    }
    assert (await tab1.act("throw-1", **{k: v for k, v in throw.items() if k != "id"}))[
        "status"
    ] == "ok"
    before = await _state(challenge_id)

    started = time.monotonic()
    frame = json.dumps(throw)
    for _ in range(REPEATS):
        await tab1.socket.send_to(text_data=frame)
    replies = await _replies(tab1, REPEATS)
    elapsed = time.monotonic() - started
    assert replies == [{"type": "ack", "id": "throw-1", "status": "already_done"}] * REPEATS

    # The second tab of the same player: the same id is already done; a new id
    # for the same throw is refused by the rules (she has thrown), not applied.
    assert (await tab2.act("throw-1", **{k: v for k, v in throw.items() if k != "id"}))[
        "status"
    ] == "already_done"
    other = await tab2.act(
        "throw-2", action="challenge.throw", challenge=challenge_id, throw="paper"
    )
    assert other["type"] == "error"
    assert await _state(challenge_id) == before

    # Both tabs of Agnes race one new id at once: one applies it, the other is told.
    await boris_phone.close()
    race = {
        "id": "race",
        "action": "challenge.open",
        "defender": boris.pk,
        "bid": "physical:Strong",
    }
    await asyncio.gather(
        tab1.socket.send_to(text_data=json.dumps(race)),
        tab2.socket.send_to(text_data=json.dumps(race)),
    )
    raced = [r for r in await _replies(tab1, 1) + await _replies(tab2, 1) if r.get("id") == "race"]
    assert sorted(r["status"] for r in raced) == ["already_done", "ok"]
    opened = await database_sync_to_async(Challenge.objects.filter(session=game["session"]).count)()
    assert opened == 2
    assert await database_sync_to_async(ClientAction.objects.filter(msg_id="throw-1").count)() == 1
    await tab1.close()
    await tab2.close()
    print(
        f"\n[faults] resend: {REPEATS} repeats of one throw answered already_done in "
        f"{elapsed:.2f} s ({REPEATS / elapsed:.0f}/s); second tab: repeat already_done, "
        "new id refused; a race of one id from two tabs applied once; 0 double-applied"
    )
