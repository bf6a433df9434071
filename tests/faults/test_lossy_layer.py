"""A channel layer that drops 5% of broadcasts: one heartbeat brings every
screen to the current state, and a healthy screen's ping costs no render.

Three pairs of phones and a narrator play challenges on ``LossyChannelLayer``
(seeded). Then every screen pings with the stamp of the last view it got, as
``static/narrator/app.js`` does every 10 s. The server must answer ``pong``
exactly when the screen is current (its view equals a fresh render) and the full
view otherwise, after which every screen equals a fresh render.
"""

from __future__ import annotations

import asyncio
import os
import random
from collections import Counter

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer

from challenges.models import Challenge
from tests.faults.phones import Phone, current_dashboard_stamp, split_stamp
from tests.screen import rendered

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

PAIRS = 3
ROUNDS = 6  # challenges per pair
DROP = 0.05
HEARTBEAT_SECONDS = 10  # static/narrator/app.js HEARTBEAT_MS
SEED = int(os.getenv("NARRATOR_FAULT_SEED", "5"))


@pytest.fixture
def lossy_layer(settings):
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "tests.faults.layers.LossyChannelLayer",
            "CONFIG": {"drop": DROP, "seed": SEED},
        }
    }


async def _fresh(phone: Phone) -> tuple[str | None, str]:
    other = Phone(phone.path, phone.user)
    first = await other.connect()
    await other.close()
    stamp, html = split_stamp(first)
    return stamp, rendered(html)


async def _heartbeat_everywhere(phones, narrator, session) -> Counter:
    """Ping every screen once; check pong exactly when current; count repairs."""
    repaired: Counter[str] = Counter()
    layer = get_channel_layer()
    while any(not queue.empty() for queue in layer.channels.values()):
        await asyncio.sleep(0.01)  # broadcasts not yet taken by their consumers
    await asyncio.gather(*(phone.settle(quiet=0.3) for phone in [*phones, narrator]))
    for phone in phones:
        fresh_stamp, fresh_view = await _fresh(phone)
        was_current = phone.view == fresh_view
        answer = await phone.heartbeat()
        assert (answer == {"type": "pong"}) == was_current, (phone.path, answer)
        assert phone.view == fresh_view and phone.stamp == fresh_stamp
        repaired["phones"] += not was_current
    stamp = narrator.stamp
    answer = await narrator.heartbeat()
    dashboard_stamp = await current_dashboard_stamp(session)
    assert (answer == {"type": "pong"}) == (stamp == dashboard_stamp)
    assert narrator.stamp == dashboard_stamp
    if answer is None:  # it was stale: the full view it got is a fresh render
        assert narrator.view == (await _fresh(narrator))[1]
        repaired["dashboard"] += 1
    return repaired


async def test_one_heartbeat_repairs_every_broadcast_a_lossy_layer_dropped(
    table, lossy_layer, heartbeat_clock
):
    game = await database_sync_to_async(table)(PAIRS)
    session = game["session"]
    rng = random.Random(SEED)
    pairs = []
    for agnes, boris in game["pairs"]:
        players = await database_sync_to_async(lambda a=agnes, b=boris: (a.player, b.player))()
        pair = (
            Phone(f"/ws/play/{agnes.pk}/", players[0]),
            Phone(f"/ws/play/{boris.pk}/", players[1]),
        )
        pairs.append((agnes, boris, *pair))
    narrator = Phone(f"/ws/narrate/{session.pk}/", game["narrator"])
    phones = [p for _, _, *pair in pairs for p in pair]
    for phone in [*phones, narrator]:
        await phone.connect()

    repaired: Counter[str] = Counter()
    for n in range(ROUNDS):
        for index, (_, boris, agnes_phone, boris_phone) in enumerate(pairs):
            tag = f"{n}-{index}"
            await agnes_phone.act(
                f"{tag}-open", action="challenge.open", defender=boris.pk, bid="physical:Strong"
            )
            challenge = await database_sync_to_async(lambda: Challenge.objects.latest("id").pk)()
            if rng.random() < 0.2:  # some defenders relent: a shorter challenge
                await boris_phone.act(
                    f"{tag}-relent", action="challenge.relent", challenge=challenge
                )
                continue
            await boris_phone.act(
                f"{tag}-bid", action="challenge.bid", challenge=challenge, bid="Tough"
            )
            throws = rng.sample(["rock", "paper", "scissors"], 2)
            await agnes_phone.act(
                f"{tag}-a", action="challenge.throw", challenge=challenge, throw=throws[0]
            )
            await boris_phone.act(
                f"{tag}-b", action="challenge.throw", challenge=challenge, throw=throws[1]
            )
        # About one heartbeat later (app.js pings every 10 s, so every
        # heartbeat snapshot of the worker is older than SNAPSHOT_SECONDS):
        # every screen pings with its last stamp.
        heartbeat_clock.advance(HEARTBEAT_SECONDS)
        repaired += await _heartbeat_everywhere(phones, narrator, session)
    for phone in [*phones, narrator]:
        assert await phone.heartbeat() == {"type": "pong"}  # all current: no render
        await phone.close()

    layer = get_channel_layer()
    to_narrator = sum(1 for group, _, _ in layer.dropped if group.startswith("narrators."))
    assert layer.dropped, "the lossy layer must have dropped something"
    print(
        f"\n[faults] lossy layer: dropped {len(layer.dropped)} of "
        f"{len(layer.dropped) + layer.delivered} deliveries ({DROP:.0%} seeded); "
        f"{repaired['phones']} stale phone screens and {repaired['dashboard']} stale dashboard "
        f"screens over {ROUNDS} heartbeats ({to_narrator} dashboard deliveries lost), "
        "each current after one heartbeat; healthy screens got pong"
    )
    assert repaired["phones"] >= 1 and repaired["dashboard"] >= 1
