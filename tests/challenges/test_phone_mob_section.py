"""Issue 13 polish: mob scenes are MET challenges (``Ruleset.met_challenges``),
so only a phone of a chronicle that plays them has the "Mob scenes" section,
on its page, in its whole view (a reconnect, a resync) and in a mob scene's
redraw; a ``bns`` or storytelling phone has none of them."""

from io import StringIO

import pytest
from asgiref.sync import sync_to_async
from bs4 import BeautifulSoup
from channels.layers import get_channel_layer
from django.core.management import call_command
from django.template.loader import render_to_string
from django.test import Client
from django.urls import reverse

from challenges import views
from challenges.realtime import MOB_UPDATED, character_group
from characters.management.commands.demo import BNS_CHRONICLE, CHRONICLE, STORY_CHRONICLE
from characters.models import Chronicle
from tests.challenges.wsutil import connect, drain

pytestmark = pytest.mark.django_db(transaction=True)

CHRONICLES = [(CHRONICLE, True), (BNS_CHRONICLE, False), (STORY_CHRONICLE, False)]


def _player_character(name: str):
    call_command("demo", stdout=StringIO())
    chronicle = Chronicle.objects.get(name=name)
    character = chronicle.characters.filter(player__isnull=False).order_by("pk").first()
    return character, chronicle.open_session()


@pytest.mark.parametrize(("chronicle", "has_mobs"), CHRONICLES)
def test_only_a_phone_of_a_met_chronicle_has_the_mob_scenes_section(chronicle, has_mobs):
    character, _ = _player_character(chronicle)
    client = Client()
    client.force_login(character.player)
    page = BeautifulSoup(client.get(reverse("play", args=[character.pk])).content, "html.parser")
    assert (page.find(id="mob-scenes") is not None) is has_mobs
    assert ("Mob scenes" in str(page)) is has_mobs


@pytest.mark.parametrize(("chronicle", "has_mobs"), CHRONICLES)
def test_only_a_met_phones_whole_view_redraws_its_mob_scenes(chronicle, has_mobs):
    character, session = _player_character(chronicle)
    context = views.play_context(character, session, with_opponents=False)
    assert context["met_challenges"] is has_mobs
    whole = render_to_string("challenges/play_live.html", context)
    assert ('id="mob-scenes"' in whole) is has_mobs


@pytest.mark.parametrize(("chronicle", "has_mobs"), CHRONICLES)
async def test_a_mob_scene_redraw_reaches_only_a_phone_with_the_section(chronicle, has_mobs):
    character, session = await sync_to_async(_player_character)(chronicle)
    phone, _ = await connect(f"/ws/play/{character.pk}/", await _player(character))
    await drain(phone)
    await get_channel_layer().group_send(
        character_group(character.pk),
        {"type": MOB_UPDATED, "mob_id": 0, "session_id": session.pk, "version": 1},
    )
    frames = await drain(phone)
    assert any('id="mob-scenes"' in frame for frame in frames) is has_mobs
    await phone.disconnect()


@sync_to_async
def _player(character):
    return type(character).objects.select_related("player").get(pk=character.pk).player
