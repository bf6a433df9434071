"""A websocket action's broadcasts leave from the event loop, after its commit
and before its ack (challenges.realtime.collecting)."""

from __future__ import annotations

import uuid

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer

from challenges import services
from challenges.realtime import (
    CHALLENGE_UPDATED,
    character_group,
    collecting,
    narrators_group,
    send_collected,
)
from challenges.rules import RulesError

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


def _open(game, bid="Ferocious"):
    return services.challenge_open(
        session=game["session"],
        challenger=game["helen"],
        defender=game["grady"],
        category="physical",
        bids=[bid],
        user=game["helen_player"],
        msg_id=uuid.uuid4().hex,
    )


async def _listener(group: str) -> str:
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(group, channel)
    return channel


async def test_a_move_in_a_database_thread_fills_the_outbox_and_sends_nothing(game):
    layer = get_channel_layer()
    grady = await _listener(character_group(game["grady"].pk))
    with collecting() as outbox:
        challenge = await database_sync_to_async(_open)(game)
    # The two phones' groups come in no set order (a set of the two ids).
    assert [(sorted(groups), event) for groups, event in outbox] == [
        (
            sorted(
                [
                    character_group(game["helen"].pk),
                    character_group(game["grady"].pk),
                    narrators_group(game["session"].pk),
                ]
            ),
            {
                "type": CHALLENGE_UPDATED,
                "challenge_id": challenge.pk,
                "session_id": game["session"].pk,
                "version": challenge.version,
            },
        )
    ]
    assert layer.channels.get(grady) is None or layer.channels[grady].empty()
    await send_collected(outbox)
    assert (await layer.receive(grady))["challenge_id"] == challenge.pk


async def test_a_refused_move_collects_nothing(game):
    with collecting() as outbox, pytest.raises(RulesError):
        await database_sync_to_async(_open)(game, bid="Witty")  # not hers
    assert outbox == []


async def test_outside_an_action_a_move_broadcasts_at_once(game):
    layer = get_channel_layer()
    grady = await _listener(character_group(game["grady"].pk))
    challenge = await database_sync_to_async(_open)(game)
    assert (await layer.receive(grady))["challenge_id"] == challenge.pk


async def test_a_group_event_does_not_queue_for_the_database_thread(game, monkeypatch):
    """Channels' dispatch would hop into the database thread per message."""
    from channels import consumer

    from challenges.realtime import SESSION_UPDATED, session_group
    from tests.faults.phones import Phone

    hops = []

    async def recorded():
        hops.append(1)

    monkeypatch.setattr(consumer, "aclose_old_connections", recorded)
    phone = Phone(f"/ws/play/{game['grady'].pk}/", game["grady_player"])
    await phone.connect()
    event = {"type": SESSION_UPDATED, "session_id": game["session"].pk, "time_out": True}
    await get_channel_layer().group_send(session_group(game["session"].pk), event)
    await phone.settle()
    assert 'class="time-out active"' in phone.view
    assert hops == []
    await phone.close()
