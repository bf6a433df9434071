"""A ``bns`` result speaks to each phone in its own words: the attacker
reads her result ("Success: Rosa is Prone."), the defender what happened to
her ("You lose to Jack: you are Prone.") in the colour of her own loss or
win; a narrator reads the seed's words. seeds/002 "Winning a Challenge",
"Combat Maneuvers"."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup
from django.template.loader import render_to_string

from challenges.rules import Side
from challenges.views.bns import bns_card
from tests.challenges.test_bns_maneuvers_in_play import hit
from tests.factories import bns_combat_evening


@pytest.fixture
def t(db):
    return bns_combat_evening()


def _outcome(challenge, side):
    """The outcome line of ``side``'s card (None: the narrator's), as drawn."""
    card = bns_card(challenge, side)
    html = render_to_string("challenges/_bns_card.html", {"c": card})
    line = BeautifulSoup(html, "html.parser").select_one(".outcome")
    return " ".join(line.get_text(" ", strip=True).split()), line["class"]


KNOCKED_DOWN = [
    (Side.CHALLENGER, "Success: Rosa is Prone.", "won"),
    (Side.DEFENDER, "You lose to Jack: you are Prone.", "lost"),
    (None, "Success: Rosa is Prone.", None),
]


@pytest.mark.parametrize(("side", "words", "colour"), KNOCKED_DOWN)
def test_a_knocked_down_defender_reads_her_own_loss_not_the_attackers_success(
    t, side, words, colour
):
    challenge = hit(t, "jack", "rosa", won=True, attack="brawl", maneuvers=["knock_down"])
    text, classes = _outcome(challenge, side)
    assert text == words
    assert ("won" in classes, "lost" in classes) == (colour == "won", colour == "lost")


FENDED_OFF = [
    (Side.CHALLENGER, "Failure: Rosa is not hurt; Rosa is immune to your Dominate for 10 minutes."),
    (
        Side.DEFENDER,
        "You win: you are not hurt; you are immune to Vesper's Dominate for 10 minutes.",
    ),
    (None, "Failure: Rosa is not hurt; Rosa is immune to Vesper's Dominate for 10 minutes."),
]


@pytest.mark.parametrize(("side", "words"), FENDED_OFF)
def test_a_fended_off_power_reads_as_a_win_for_the_defender(t, side, words):
    challenge = hit(t, "vesper", "rosa", won=False, attack="mental", power="Dominate")
    assert _outcome(challenge, side)[0] == words
