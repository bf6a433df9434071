"""s11 rulings outside the sockets: where a called challenge goes on the
dashboard, what the "Rule…" dialog offers, and rulings during a Time out."""

from __future__ import annotations

import uuid

import pytest
from django.test import Client
from django.urls import reverse

from challenges import services, views
from challenges.models import Challenge, Event

pytestmark = pytest.mark.django_db


def _id() -> str:
    return uuid.uuid4().hex


def _open(game) -> Challenge:
    challenge = services.challenge_open(
        session=game["session"],
        challenger=game["helen"],
        defender=game["grady"],
        category="physical",
        bids=["Quick"],
        user=game["helen_player"],
        msg_id=_id(),
    )
    return services.challenge_bid(
        challenge_id=challenge.pk,
        character=game["grady"],
        bids=["Tough"],
        user=game["grady_player"],
        msg_id=_id(),
    )


def _call(game, challenge, who="grady") -> Challenge:
    return services.challenge_call_narrator(
        challenge_id=challenge.pk,
        character=game[who],
        reason="Was that late?",
        user=game[f"{who}_player"],
        msg_id=_id(),
    )


def test_a_called_challenge_goes_above_the_open_ones(game):
    waiting = _open(game)
    called = _call(game, _open(game))
    context = views.dashboard_context(game["session"])
    assert [r.pk for r in context["called_rows"]] == [called.pk]
    assert [r.pk for r in context["open_rows"]] == [waiting.pk]
    assert [r.pk for r in context["rows"]] == [called.pk, waiting.pk]
    html = Client()
    html.force_login(game["narrator"])
    page = html.get(reverse("narrate", args=[game["session"].pk])).content.decode()
    assert page.index(f'id="challenge-{called.pk}"') < page.index(f'id="challenge-{waiting.pk}"')
    assert "Narrator called</strong> by <bdi>Grady</bdi>" in page
    # Placed one change at a time: into its own section, then back when dismissed.
    places = views.Placement(
        {waiting.pk: views.dashboard_place(views.challenge_view(waiting, None))}
    )
    row = views.challenge_view(Challenge.objects.get(pk=called.pk), None)
    assert places.move(called.pk, views.dashboard_place(row)) == (
        [],
        "beforeend:#called-challenges",
    )
    dismissed = services.challenge_dismiss_call(
        challenge_id=called.pk, user=game["narrator"], msg_id=_id()
    )
    place = views.dashboard_place(views.challenge_view(dismissed, None))
    assert place[0] == 0
    assert places.move(called.pk, place)[0] == [called.pk]


def test_the_rule_dialog_offers_what_the_challenge_allows(game):
    client = Client()
    client.force_login(game["narrator"])
    challenge = _open(game)
    url = reverse("narrate_rule", args=[game["session"].pk, challenge.pk])
    body = client.get(url).content.decode()
    for action in ("challenge.settle", "challenge.void", "challenge.trait"):
        assert f'value="{action}"' in body
    assert 'value="challenge.force_retest"' not in body  # no test is being settled
    assert body.count('value="challenge.trait"') == 2  # Helen's and Grady's
    assert body.count('name="reason" maxlength="300" required') == 4
    services.challenge_void(
        challenge_id=challenge.pk, reason="ruled", user=game["narrator"], msg_id=_id()
    )
    body = client.get(url).content.decode()
    assert 'value="challenge.settle"' not in body and 'value="challenge.void"' not in body
    assert body.count('value="challenge.trait"') == 2
    assert "Narrator ruling" not in body  # the dialog, not the row
    # Another session's challenge: 404.
    assert (
        client.get(reverse("narrate_rule", args=[game["session"].pk + 1, challenge.pk])).status_code
        == 404
    )


def test_calls_and_rulings_go_on_during_a_time_out(game):
    challenge = _open(game)
    services.session_time_out(session=game["session"], user=game["narrator"], msg_id=_id())
    with pytest.raises(services.ActionRefused, match="Time out"):
        services.challenge_throw(
            challenge_id=challenge.pk,
            character=game["helen"],
            throw="rock",
            user=game["helen_player"],
            msg_id=_id(),
        )
    _call(game, challenge, "helen")
    settled = services.challenge_settle(
        challenge_id=challenge.pk,
        winner="defender",
        reason="Helen's throw was after the call",
        user=game["narrator"],
        msg_id=_id(),
    )
    assert settled.outcome == "defender_wins" and settled.called_at is None
    assert [line["text"] for line in settled.rulings] == ["Settled for Grady"]
    kinds = list(Event.objects.filter(challenge=challenge).values_list("kind", flat=True))
    assert kinds[-3:] == ["narrator_called", "settled", "resolved"]
