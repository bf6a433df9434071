"""The admin's "Start a new session": a confirmation names the session that
ends and what it stops; only the confirmed request starts the next one."""

import uuid

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from challenges import services
from challenges.models import Challenge, Combat, StoryCombat
from challenges.rules import Stage
from characters.models import GameSession
from tests.factories import (
    bns_combat_evening,
    evening,
    opposed_challenge,
    story_fight_evening,
)

pytestmark = pytest.mark.django_db

CHANGELIST = "admin:characters_chronicle_changelist"


def open_challenge() -> tuple[dict, str]:
    game = evening()
    opposed_challenge(game["session"], game["helen"], game["grady"], bid="Ferocious")
    return game, "1 open challenge"


def _started(game: dict, service, names: tuple[str, str]) -> dict:
    """``game`` after its narrator started ``service`` (combat or fight) of two."""
    service(
        session=game["session"],
        characters=[game[name] for name in names],
        user=game["narrator"],
        msg_id=uuid.uuid4().hex,
    )
    return game


def live_combat() -> tuple[dict, str]:
    return _started(bns_combat_evening(), services.combat_start, ("rosa", "jack")), "1 combat"


def live_fight() -> tuple[dict, str]:
    return _started(story_fight_evening(), services.fight_start, ("ada", "bram")), "1 fight"


def start(client, chronicle, **confirm):
    return client.post(
        reverse(CHANGELIST),
        {"action": "start_new_session", "_selected_action": [chronicle.pk], **confirm},
    )


@pytest.mark.parametrize("play", [open_challenge, live_combat, live_fight])
def test_the_first_request_names_what_ends_and_changes_nothing(admin_client, play):
    game, ending = play()

    response = start(admin_client, game["chronicle"])

    assert response.status_code == 200
    page = response.content.decode()
    assert f"<strong>{game['chronicle'].name}</strong>: start session 2." in page
    assert f"Tonight ends, and with it {ending}." in page
    assert 'name="post" value="yes"' in page
    assert game["chronicle"].open_session() == game["session"]
    assert GameSession.objects.filter(chronicle=game["chronicle"]).count() == 1


def test_a_session_with_nothing_unfinished_says_so(admin_client):
    game = evening()

    page = start(admin_client, game["chronicle"]).content.decode()

    assert "Tonight ends; nothing in it is unfinished." in page


@pytest.mark.parametrize("play", [open_challenge, live_fight])
def test_the_confirmed_request_starts_the_next_session_and_ends_the_open_one(admin_client, play):
    game, _ = play()

    response = start(
        admin_client,
        game["chronicle"],
        post="yes",
        name="The Masquerade Ball",
        **{f"number_{game['chronicle'].pk}": "2"},
    )

    assert response.status_code == 302
    new = game["chronicle"].open_session()
    assert (new.number, new.name) == (2, "The Masquerade Ball")
    assert not Challenge.objects.exclude(stage=Stage.RESOLVED).exists()
    assert not StoryCombat.objects.filter(ended_at__isnull=True).exists()


def test_a_confirmation_overtaken_by_another_narrator_starts_nothing_more(admin_client):
    game, _ = live_combat()
    services.session_start(chronicle=game["chronicle"], user=game["narrator"])  # session 2

    response = start(
        admin_client, game["chronicle"], post="yes", **{f"number_{game['chronicle'].pk}": "2"}
    )

    assert response.status_code == 302
    assert game["chronicle"].open_session().number == 2
    assert [str(m) for m in get_messages(response.wsgi_request)] == [
        "By Night: Session 2 has already started."
    ]
    assert not Combat.objects.filter(ended_at__isnull=True).exists()


def test_a_confirmation_without_its_session_number_starts_nothing(admin_client):
    game = evening()

    start(admin_client, game["chronicle"], post="yes")

    assert game["chronicle"].open_session() == game["session"]
