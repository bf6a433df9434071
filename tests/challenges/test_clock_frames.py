"""Health clocks through the real router: a Mortally Wounded character's phone
shows the countdown to her next lost Physical Trait, a dashboard's heartbeat
applies the clock when it runs out and raises an alert there, a narrator's
"Medical aid given" stops it, and forged or refused frames change nothing."""

from __future__ import annotations

import json
import re

import pytest
from channels.db import database_sync_to_async
from django.db import transaction

from challenges.models import Event, TraitLoss
from challenges.services import clocks
from challenges.services._writes import _wound
from characters.models import Presence
from tests.challenges.wsutil import act, connect, expect
from tests.factories import evening

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


@database_sync_to_async
def _mortally_wounded_grady() -> dict:
    game = evening()
    with transaction.atomic():
        for _ in range(4):
            _wound(game["session"].pk, game["grady"].pk)
    clocks.clocks_apply(game["session"].pk)
    return game


@database_sync_to_async
def _ten_minutes_pass(game) -> None:
    """Ten minutes and a second of play pass (the stored instants move back)."""
    presence = Presence.objects.get(session=game["session"], character=game["grady"])
    Presence.objects.filter(pk=presence.pk).update(
        clock_start=presence.clock_start - 601, clock_due=presence.clock_due - 601
    )
    clocks._last_tick.clear()


@database_sync_to_async
def _state(game) -> tuple[int, bool, int]:
    presence = Presence.objects.get(session=game["session"], character=game["grady"])
    lost = TraitLoss.objects.filter(character=game["grady"], challenge=None).count()
    return presence.health, presence.aid_given, lost


def _remaining(frame: str) -> int:
    found = re.search(r'id="clock"[^>]*>[^<]*<time class="countdown" data-remaining="(\d+)"', frame)
    assert found, frame[:400]
    return int(found.group(1))


async def test_a_countdown_on_the_phone_and_an_alert_on_the_dashboard() -> None:
    game = await _mortally_wounded_grady()
    phone, first = await connect(f"/ws/play/{game['grady'].pk}/", game["grady_player"])
    assert "Mortally Wounded: next Physical Trait lost in" in first
    assert 595 <= _remaining(first) <= 600
    dashboard, view = await connect(f"/ws/narrate/{game['session'].pk}/", game["narrator"])
    assert "clock-tag clock-trait_lost" in view  # the roster row's countdown

    await _ten_minutes_pass(game)
    await dashboard.send_to(text_data=json.dumps({"action": "ping", "v": "0" * 16}))
    seen = await expect(dashboard, ("clock-alert", "lost a Physical Trait"))
    alert = next(f for f in seen if "clock-alert" in f)
    assert "Grady" in alert and 'hx-swap-oob="afterbegin"' in alert
    frames = await expect(phone, lambda f: 'id="clock"' in f and "data-remaining" in f)
    assert 590 <= _remaining(frames[-1]) <= 600  # the next Trait, ten minutes on
    assert await _state(game) == (4, False, 1)

    reply, _ = await act(dashboard, action="clock.aid", character=str(game["grady"].pk))
    assert reply["status"] == "ok", reply
    await expect(phone, "Medical aid given: you lose no more Traits.")
    assert await _state(game) == (4, True, 1)
    await phone.disconnect()
    await dashboard.disconnect()


async def test_refused_and_forged_clock_frames_change_nothing() -> None:
    game = await _mortally_wounded_grady()
    dashboard, _ = await connect(f"/ws/narrate/{game['session'].pk}/", game["narrator"])
    events = await database_sync_to_async(Event.objects.count)()
    cases = [
        ({"action": "clock.rest", "character": str(game["grady"].pk), "form": "wolf"}, "form"),
        ({"action": "clock.rest", "character": str(game["grady"].pk), "form": "crinos"}, "Garou"),
        ({"action": "clock.aggravated", "character": str(game["grady"].pk), "count": 9}, "range"),
        ({"action": "clock.heal", "character": "999999"}, "character"),
        ({"action": "clock.aid", "character": str(game["grady"].pk), "extra": 1}, "not part"),
    ]
    for message, words in cases:
        reply, _ = await act(dashboard, **message)
        assert reply["type"] == "error" and words in reply["message"], (message, reply)
    assert await _state(game) == (4, False, 0)
    assert await database_sync_to_async(Event.objects.count)() == events
    phone, _ = await connect(f"/ws/play/{game['grady'].pk}/", game["grady_player"])
    reply, _ = await act(phone, action="clock.aid", character=str(game["grady"].pk))
    assert reply["type"] == "error" and "Unknown action" in reply["message"]
    await phone.disconnect()
    await dashboard.disconnect()
