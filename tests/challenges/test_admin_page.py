"""The admin's challenge page shows no throw before its test is revealed, in
the state JSON and the test rows alike (the dashboard's rule)."""

from __future__ import annotations

import uuid

import pytest
from django.urls import reverse

from challenges import services
from challenges.views import state_shown
from tests.factories import opposed_challenge

pytestmark = pytest.mark.django_db


def _page(client, challenge) -> str:
    response = client.get(reverse("admin:challenges_challenge_change", args=[challenge.pk]))
    assert response.status_code == 200
    return response.content.decode()


@pytest.fixture
def narrator_client(client, game):
    game["narrator"].is_staff = True
    game["narrator"].is_superuser = True
    game["narrator"].save()
    client.force_login(game["narrator"])
    return client


def test_an_unrevealed_throw_is_hidden_and_a_revealed_test_shows_both(narrator_client, game):
    challenge = opposed_challenge(
        game["session"],
        game["helen"],
        game["grady"],
        bid="Quick",
        answer="Tough",
        throws=("scissors",),
    )
    page = _page(narrator_client, challenge)
    assert "scissors" not in page.lower()
    assert "&quot;challenger_throw&quot;: &quot;hidden&quot;" in page
    assert "&quot;defender_throw&quot;: null" in page
    services.challenge_throw(
        challenge_id=challenge.pk,
        character=game["grady"],
        throw="scissors",
        user=game["grady_player"],
        msg_id=uuid.uuid4().hex,
    )
    page = _page(narrator_client, challenge)
    assert "&quot;challenger_throw&quot;: &quot;scissors&quot;" in page
    assert "&quot;defender_throw&quot;: &quot;scissors&quot;" in page


def test_a_static_challenges_preset_narrator_throw_is_hidden(narrator_client, game):
    challenge = services.static_open(
        session=game["session"],
        character=game["helen"],
        category="physical",
        difficulty=2,
        narrator_throw="paper",
        user=game["narrator"],
        msg_id=uuid.uuid4().hex,
    )
    page = _page(narrator_client, challenge)
    assert "paper" not in page.lower()
    assert "hidden" in page


@pytest.mark.parametrize(
    "test, shown",
    [
        ({"challenger_throw": "rock", "defender_throw": None}, ("hidden", None)),
        ({"challenger_throw": None, "defender_throw": "paper"}, (None, "hidden")),
        ({"challenger_throw": None, "defender_throw": None}, (None, None)),
        ({"challenger_throw": "rock", "defender_throw": "paper"}, ("rock", "paper")),
        ({"challenger_throw": "rock", "defender_throw": "spock"}, ("hidden", "hidden")),
    ],
)
def test_state_shown_hides_each_throw_of_an_unrevealed_test(test, shown):
    row = {"challenger_declared": None, "defender_declared": None, "winner": None, "tie": False}
    state = {"stage": "throws", "tests": [{**row, **test}]}
    got = state_shown(state)["tests"][0]
    assert (got["challenger_throw"], got["defender_throw"]) == shown
    assert state["tests"][0] == {**row, **test}  # the stored state is left alone
