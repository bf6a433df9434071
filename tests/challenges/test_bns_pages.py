"""Issue 12: with a challenge of test pools in play, every page of the bns
demo still opens (phone, player's history, dashboard, character panel,
evening's history and its CSV/JSON, the admin's challenge), the admin hides
a throw until both are in, and the MET "Rule…" dialog is not a bns
challenge's (404)."""

import html
import uuid
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from challenges import services
from challenges.models import Challenge
from characters.management.commands.demo import BNS_CHRONICLE
from characters.models import Chronicle


@pytest.fixture
def demo(db) -> dict:
    call_command("demo", stdout=StringIO())
    chronicle = Chronicle.objects.get(name=BNS_CHRONICLE)
    session = chronicle.open_session()
    rosa = chronicle.characters.get(name="Rosa")
    vesper = chronicle.characters.get(name="Sister Vesper")
    challenge = services.bns_open(
        session=session,
        attacker=rosa,
        defender=vesper,
        attack="brawl",
        user=rosa.player,
        msg_id=uuid.uuid4().hex,
    )
    services.bns_answer(
        challenge_id=challenge.pk,
        character=vesper,
        user=vesper.player,
        msg_id=uuid.uuid4().hex,
    )
    services.bns_throw(
        challenge_id=challenge.pk,
        character=rosa,
        throw="scissors",
        user=rosa.player,
        msg_id=uuid.uuid4().hex,
    )
    return {
        "chronicle": chronicle,
        "session": session,
        "rosa": rosa,
        "challenge": Challenge.objects.get(pk=challenge.pk),
    }


def test_every_page_opens_with_a_bns_challenge_in_play(demo):
    chronicle, session, rosa = demo["chronicle"], demo["session"], demo["rosa"]
    narrator, player = Client(), Client()
    narrator.force_login(chronicle.narrators.get())
    player.force_login(rosa.player)
    for client, name, args, words in [
        (player, "play", [rosa.pk], "Brawl attack"),
        (player, "play_history", [rosa.pk], "Rosa attacks Sister Vesper (brawl)"),
        (narrator, "narrate", [session.pk], "Void or settle"),
        (narrator, "narrate_character", [session.pk, rosa.pk], "Brawl attack"),
        (narrator, "narrate_history", [session.pk], "Pools: Rosa"),
        (narrator, "narrate_history_download", [session.pk, "csv"], "Pools: Rosa"),
        (narrator, "narrate_history_download", [session.pk, "json"], "Pools: Rosa"),
    ]:
        response = client.get(reverse(name, args=args))
        assert response.status_code == 200, (name, response.status_code)
        assert words in response.content.decode(), name
    rule = reverse("narrate_rule", args=[session.pk, demo["challenge"].pk])
    assert narrator.get(rule).status_code == 404


def test_the_admin_hides_a_throw_until_both_are_in(demo):
    admin = Client()
    admin.force_login(type(demo["rosa"].player).objects.get(username="admin"))
    url = reverse("admin:challenges_challenge_change", args=[demo["challenge"].pk])
    page = html.unescape(admin.get(url).content.decode())
    assert '"attacker_throw": "hidden"' in page
    assert "scissors" not in page.lower()
