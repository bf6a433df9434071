"""A ``ukm`` phone offers the retests the engine allows in the challenge's
category from her sheet (no Fortitude or Melee in a Social challenge), and
a retest cancelled by the same Discipline says so on both phones' cards.
seeds/004 "Retrying The Test In An Ability-Based Challenge", "Challenge
Re-Tests"."""

from __future__ import annotations

import uuid

import pytest
from bs4 import BeautifulSoup
from django.template.loader import render_to_string

from challenges import services
from challenges.views import challenge_view
from characters.models import Ability, Chronicle, Discipline
from tests.factories import make_character, make_user, narrated_chronicle, opposed_challenge


@pytest.fixture
def social(db):
    """In a ``ukm`` chronicle Helen (Melee 3, Subterfuge 2, Fortitude 2,
    Presence 1) lost the first test of a Social challenge against Grady
    (Subterfuge 1, Presence 2)."""
    table = narrated_chronicle("Masquerade")
    Chronicle.objects.filter(pk=table["chronicle"].pk).update(ruleset="ukm")
    table["chronicle"].refresh_from_db()
    helen = make_character(
        table["chronicle"], "Helen", make_user("helen"), traits=[("Regal", "social", 3)]
    )
    grady = make_character(
        table["chronicle"], "Grady", make_user("grady"), traits=[("Genial", "social", 3)]
    )
    for who, abilities, disciplines in (
        (helen, {"Melee": 3, "Subterfuge": 2}, {"Fortitude": 2, "Presence": 1}),
        (grady, {"Subterfuge": 1}, {"Presence": 2}),
    ):
        for name, rating in abilities.items():
            Ability.objects.create(character=who, name=name, rating=rating)
        for name, rating in disciplines.items():
            Discipline.objects.create(character=who, name=name, rating=rating)
    challenge = opposed_challenge(
        table["session"],
        helen,
        grady,
        bid="Regal",
        answer="Genial",
        category="social",
        throws=("scissors", "rock"),
    )
    return {**table, "helen": helen, "grady": grady, "challenge": challenge}


def _card(challenge, character) -> BeautifulSoup:
    challenge.refresh_from_db()
    view = challenge_view(challenge, character)
    return BeautifulSoup(render_to_string("challenges/_card.html", {"c": view}), "html.parser")


def _words(card: BeautifulSoup) -> str:
    return " ".join(card.get_text(" ", strip=True).split())


def test_a_social_challenge_offers_only_social_retests_from_her_sheet(social):
    card = _card(social["challenge"], social["helen"])
    offered = [b.get_text(strip=True) for b in card.select(".retests button")]
    assert "Retest with Presence" in offered and "Retest with Subterfuge 2" in offered
    assert not [b for b in offered if "Melee" in b or "Fortitude" in b], offered


def test_a_cancelled_discipline_retest_says_so_on_both_phones(social):
    challenge = social["challenge"]
    services.challenge_retest(
        challenge_id=challenge.pk,
        character=social["helen"],
        kind="discipline",
        name="Presence",
        user=social["helen"].player,
        msg_id=uuid.uuid4().hex,
    )
    services.challenge_answer(
        challenge_id=challenge.pk,
        character=social["grady"],
        cancel=True,
        user=social["grady"].player,
        msg_id=uuid.uuid4().hex,
    )
    helen, grady = _card(challenge, social["helen"]), _card(challenge, social["grady"])
    assert "Your Discipline retest was cancelled by Grady." in _words(helen)
    assert "You cancelled Helen's Discipline retest." in _words(grady)
