"""A result speaks to the phone's own character in the second person ("You
lose: your Resilient is lost"); the opponent's losses stay in the third
person, and the narrator's dashboard is unchanged."""

from __future__ import annotations

import pytest

from challenges.views import challenge_view
from challenges.views.shared import _own_losses
from tests.factories import opposed_challenge


@pytest.mark.parametrize(
    ("attack", "throws", "viewer", "text"),
    [
        # Helen wins: Grady loses the Trait he bid (and a health level in an attack).
        (False, ("rock", "scissors"), "grady", "You lose: your Resilient is lost."),
        (
            True,
            ("rock", "scissors"),
            "grady",
            "You lose: your Resilient is lost and you lose a health level.",
        ),
        (True, ("rock", "scissors"), "helen", "You win! Grady loses Resilient and a health level."),
        (True, ("rock", "scissors"), None, "Helen wins. Grady loses Resilient and a health level."),
        # Grady wins: Helen loses her Ferocious.
        (False, ("rock", "paper"), "helen", "You lose: your Ferocious is lost."),
        (False, ("rock", "paper"), "grady", "You win! Helen loses Ferocious."),
        (False, ("rock", "paper"), None, "Grady wins. Helen loses Ferocious."),
    ],
)
def test_the_loser_reads_her_own_loss_in_the_second_person(game, attack, throws, viewer, text):
    challenge = opposed_challenge(
        game["session"],
        game["helen"],
        game["grady"],
        bid="Ferocious",
        answer="Resilient",
        throws=throws,
        is_attack=attack,
    )
    assert challenge_view(challenge, game[viewer] if viewer else None).outcome_text == text


@pytest.mark.parametrize(
    ("traits", "wounded", "words"),
    [
        ([], False, ""),
        (["Quick"], False, "your Quick is lost"),
        ([], True, "you lose a health level"),
        (["Quick"], True, "your Quick is lost and you lose a health level"),
        (["Quick", "Tough"], False, "your Quick and Tough are lost"),
        (
            ["Quick", "Tough", "Wiry"],
            True,
            "your Quick, Tough and Wiry are lost and you lose a health level",
        ),
    ],
)
def test_own_losses_in_words(traits, wounded, words):
    assert _own_losses(traits, wounded) == words
