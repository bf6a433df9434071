"""s11: the evening's history — the narrator's page (filters, pages, htmx),
its CSV and JSON downloads (narrators of that chronicle only), a player's own
history (never another's challenge, never a throw before its reveal), and the
rulings services' refusals that need no socket."""

from __future__ import annotations

import csv
import io
import json
import uuid
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from challenges import services
from challenges.history import history_csv, session_history
from challenges.models import Challenge
from characters.models import Character, Presence
from tests.factories import make_character, make_user

pytestmark = pytest.mark.django_db


def _id() -> str:
    return uuid.uuid4().hex


def _as(game, who, service, challenge, **kwargs) -> Challenge:
    return service(
        challenge_id=challenge.pk,
        character=game[who],
        user=game[f"{who}_player"],
        msg_id=_id(),
        **kwargs,
    )


def _fight(game, answer=("Tough",)) -> Challenge:
    """Helen attacks Grady: Ferocious against ``answer``; rock beats scissors."""
    challenge = services.challenge_open(
        session=game["session"],
        challenger=game["helen"],
        defender=game["grady"],
        category="physical",
        bids=["Ferocious"],
        is_attack=True,
        user=game["helen_player"],
        msg_id=_id(),
    )
    _as(game, "grady", services.challenge_bid, challenge, bids=list(answer))
    _as(game, "helen", services.challenge_throw, challenge, throw="rock")
    return _as(game, "grady", services.challenge_throw, challenge, throw="scissors")


@pytest.fixture
def played(game) -> dict:
    """A resolved fight, a ruling on it, and an open challenge of Ivo and
    Grady whose first throw (Ivo's) is in but not revealed."""
    done = _fight(game)
    tough = game["grady"].traits.get(name="Tough")
    services.challenge_trait_ruling(
        challenge_id=done.pk,
        character_id=game["grady"].pk,
        trait_id=tough.pk,
        give_back=True,
        reason="Tough was not at stake",
        user=game["narrator"],
        msg_id=_id(),
    )
    ivo_player = make_user("ivo")
    ivo = make_character(
        game["chronicle"], "Ivo", ivo_player, traits=[("Witty", "social", 2)], present=True
    )
    jade_player = make_user("jade")
    jade = make_character(
        game["chronicle"], "Jade", jade_player, traits=[("Genial", "social", 2)], present=True
    )
    for someone in (ivo, jade):
        Presence.objects.get_or_create(session=game["session"], character=someone)
    pending = services.challenge_open(
        session=game["session"],
        challenger=ivo,
        defender=jade,
        category="social",
        bids=["Witty"],
        user=ivo_player,
        msg_id=_id(),
    )
    services.challenge_bid(
        challenge_id=pending.pk,
        character=jade,
        bids=["Genial"],
        user=jade_player,
        msg_id=_id(),
    )
    services.challenge_throw(
        challenge_id=pending.pk, character=ivo, throw="paper", user=ivo_player, msg_id=_id()
    )
    return {
        **game,
        "done": done,
        "pending": pending,
        "ivo": ivo,
        "ivo_player": ivo_player,
        "jade": jade,
        "jade_player": jade_player,
    }


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _url(game, name="narrate_history", **kwargs) -> str:
    return reverse(name, kwargs={"session_id": game["session"].pk, **kwargs})


def test_the_history_has_every_step_of_a_fight(played):
    texts = [e.text for e in session_history(played["session"]).entries]
    for expected in (
        "Helen challenges Grady (Physical, attack)",
        "Helen bids Ferocious",
        "Grady bids Tough",
        "Test 1: Helen rock, Grady scissors — Helen wins the test",
        "Result: Helen wins",
        "Grady loses Tough",
        "Grady loses a health level",
        "Narrator ruling: Tough given back to Grady — Tough was not at stake",
    ):
        assert expected in texts, (expected, texts)


def test_the_narrators_page_filters_by_character_kind_and_state(played):
    client = _client(played["narrator"])
    page = client.get(_url(played)).content.decode()
    assert "Helen challenges Grady" in page and "Ivo challenges Jade" in page
    assert f'href="/narrate/{played["session"].pk}/history.csv"' in page
    only_helen = client.get(_url(played), {"character": played["helen"].pk}).content.decode()
    assert "Helen challenges Grady" in only_helen and "Ivo challenges" not in only_helen
    rulings = client.get(_url(played), {"kind": "ruling"}, HTTP_HX_REQUEST="true")
    text = rulings.content.decode()
    assert text.strip().startswith('<div id="history-table"')  # the table alone for htmx
    assert "Tough given back" in text and "challenges Grady" not in text
    still_open = client.get(_url(played), {"state": "open"}).content.decode()
    assert "Ivo challenges Jade" in still_open and "Helen challenges" not in still_open
    settled = client.get(_url(played), {"state": "settled"}).content.decode()
    assert "Helen challenges Grady" in settled and "Ivo challenges" not in settled
    # A forged filter is ignored, not an error.
    assert client.get(_url(played), {"kind": "<x>", "character": "abc"}).status_code == 200


def test_the_narrators_page_is_paginated(played, monkeypatch):
    monkeypatch.setattr("challenges.views.history.HISTORY_PAGE", 3)
    client = _client(played["narrator"])
    first = client.get(_url(played)).content.decode()
    assert "page 1 of" in first and "page=2" in first
    second = client.get(_url(played), {"page": 2}).content.decode()
    assert "page 2 of" in second


def test_the_csv_download(played):
    response = _client(played["narrator"]).get(_url(played, "narrate_history_download", fmt="csv"))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    name = f"session-{played['session'].pk}-history.csv"
    assert response["Content-Disposition"] == f'attachment; filename="{name}"'
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    revealed = [r for r in rows if r["kind"] == "revealed"]
    assert len(revealed) == 1 and json.loads(revealed[0]["data"])["challenger_throw"] == "rock"
    ruling = next(r for r in rows if r["kind"] == "trait_given_back")
    assert ruling["actor"] == "narrator" and ruling["group"] == "ruling"
    assert f"{played['grady'].pk}:Grady" in ruling["characters"]


def test_the_json_download(played):
    response = _client(played["narrator"]).get(
        _url(played, "narrate_history_download", fmt="json"), {"character": played["ivo"].pk}
    )
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert "attachment" in response["Content-Disposition"]
    body = json.loads(response.content)
    assert body["session"]["id"] == played["session"].pk
    assert {e["challenge"] for e in body["entries"]} == {played["pending"].pk}
    assert [e["kind"] for e in body["entries"]][:3] == ["opened", "bid", "responded"]


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_only_the_chronicles_narrators_download(played, fmt):
    url = _url(played, "narrate_history_download", fmt=fmt)
    assert _client(played["helen_player"]).get(url).status_code == 403
    other = make_user("elsewhere")
    assert _client(other).get(url).status_code == 403
    assert Client().get(url).status_code == 302  # to the login
    assert _client(played["helen_player"]).get(_url(played)).status_code == 403


def test_a_player_reads_only_her_own_challenges(played):
    url = reverse("play_history", kwargs={"character_id": played["helen"].pk})
    page = _client(played["helen_player"]).get(url).content.decode()
    assert "Helen challenges Grady" in page and "Tough given back to Grady" in page
    assert "Ivo" not in page  # another's challenge
    # Not her character: 404.
    assert _client(played["ivo_player"]).get(url).status_code == 404


def test_a_player_never_sees_a_throw_before_its_reveal(played):
    """Jade's history shows Ivo has thrown, never what: the throw is hidden
    until Jade's own is in (challenges/audit.py)."""
    url = reverse("play_history", kwargs={"character_id": played["jade"].pk})
    page = _client(played["jade_player"]).get(url).content.decode()
    assert "Ivo throws" in page
    assert "paper" not in page.lower()
    # Grady's history shows both throws of his revealed test.
    url = reverse("play_history", kwargs={"character_id": played["grady"].pk})
    page = _client(played["grady_player"]).get(url).content.decode()
    assert "Helen rock, Grady scissors" in page


def test_a_call_is_refused_long_after_the_result(played):
    done = played["done"]
    Challenge.objects.filter(pk=done.pk).update(
        resolved_at=timezone.now() - timedelta(seconds=services.CALL_WINDOW_SECONDS + 5)
    )
    with pytest.raises(services.ActionRefused, match="too long ago"):
        _as(played, "grady", services.challenge_call_narrator, done)
    recent = _fight(played, answer=("Tough", "Tough"))  # Bruised: he bids two
    called = _as(played, "grady", services.challenge_call_narrator, recent, reason="wrong")
    assert called.called_by == "defender" and called.call_reason == "wrong"


def test_a_player_cannot_rule_through_the_services(played):
    pending = Challenge.objects.get(pk=played["pending"].pk)
    for call in (
        lambda: services.challenge_settle(
            challenge_id=pending.pk,
            winner="challenger",
            reason="mine",
            user=played["ivo_player"],
            msg_id=_id(),
        ),
        lambda: services.challenge_dismiss_call(
            challenge_id=pending.pk, user=played["ivo_player"], msg_id=_id()
        ),
    ):
        with pytest.raises(services.ActionRefused, match="narrators"):
            call()
    assert Challenge.objects.get(pk=pending.pk).stage == pending.stage


def test_a_trait_is_not_taken_beyond_the_copies_left(played):
    """Ivo's two Witty: one bid in the open challenge, one free; taking two
    away is refused after the first."""
    witty = Character.objects.get(pk=played["ivo"].pk).traits.get(name="Witty")

    def take():
        return services.challenge_trait_ruling(
            challenge_id=played["pending"].pk,
            character_id=played["ivo"].pk,
            trait_id=witty.pk,
            give_back=False,
            reason="ruled",
            user=played["narrator"],
            msg_id=_id(),
        )

    take()
    with pytest.raises(services.ActionRefused, match="no copy of Witty left"):
        take()


def test_the_csv_never_starts_a_cell_with_a_formula(played):
    """A name or reason typed as "=HYPERLINK(…)" is kept as text in a spreadsheet."""
    Character.objects.filter(pk=played["helen"].pk).update(name="=HYPERLINK(1)")
    text = history_csv(session_history(played["session"]))
    cells = [cell for row in csv.reader(io.StringIO(text)) for cell in row]
    assert "'=HYPERLINK(1) challenges Grady (Physical, attack)" in cells
    assert not any(cell[:1] in "=+-@" for cell in cells if cell)
