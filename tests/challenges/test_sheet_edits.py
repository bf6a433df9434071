"""A narrator's edit of a sheet outside a challenge reaches the phone and the
dashboards at once (challenges.signals), once per saved form."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from django.db import transaction

from characters.models import Presence, Trait
from tests.faults.phones import Phone, current_play_stamp

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


async def _screens(game) -> tuple[Phone, Phone]:
    phone = Phone(f"/ws/play/{game['grady'].pk}/", game["grady_player"])
    dashboard = Phone(f"/ws/narrate/{game['session'].pk}/", game["narrator"])
    await phone.connect()
    await dashboard.connect()
    return phone, dashboard


async def test_a_new_trait_shows_on_her_phone_and_the_roster(game):
    phone, dashboard = await _screens(game)
    assert "Stalwart" not in phone.view
    frames_before = phone.frames

    @database_sync_to_async
    def edit():
        with transaction.atomic():  # one admin form: several rows, one announcement
            Trait.objects.create(character=game["grady"], name="Stalwart", category="physical")
            Trait.objects.filter(character=game["grady"], name="Tough").update(count=4)
            Trait.objects.filter(character=game["grady"], name="Witty").get().save()

    await edit()
    await phone.settle()
    await dashboard.settle()
    assert phone.frames == frames_before + 1
    assert "Stalwart" in phone.view and "<bdi>Tough</bdi> ×4" in phone.view
    assert phone.stamp == await current_play_stamp(game["grady"], game["session"])
    row = dashboard.screen.doc.find(id=f"roster-{game['grady'].pk}")
    assert row.select_one(".counts").get_text().startswith("P 7 ·")  # 2 + 4 + 1
    await phone.close()
    await dashboard.close()


async def test_a_health_level_set_by_a_narrator_shows_on_her_phone(game):
    phone, dashboard = await _screens(game)

    @database_sync_to_async
    def wound():
        presence = Presence.objects.get(session=game["session"], character=game["grady"])
        presence.health = 2
        presence.save()

    await wound()
    await phone.settle()
    assert 'class="health health-2"' in phone.view
    await phone.close()
    await dashboard.close()


async def test_a_rolled_back_edit_announces_nothing(game):
    phone, dashboard = await _screens(game)
    frames_before = phone.frames

    @database_sync_to_async
    def edit_then_fail():
        with pytest.raises(RuntimeError), transaction.atomic():
            Trait.objects.create(character=game["grady"], name="Stalwart", category="physical")
            raise RuntimeError("the form did not validate")

    await edit_then_fail()
    await phone.settle()
    assert phone.frames == frames_before and "Stalwart" not in phone.view
    await phone.close()
    await dashboard.close()
