"""Rules the engine broke when the rule vectors first ran, one test each
(found by test_machine.py or test_seed_examples.py), so they stay fixed."""

from __future__ import annotations

import pytest

from challenges.rules import (
    HealthLevel,
    RulesError,
    Stage,
    legal_moves,
    open_opposed,
    open_static,
    relent,
)
from tests.rules.sheets import CH, DE, R, SOCIAL, character, traits


def test_only_the_player_relents_a_static_challenge() -> None:
    """seeds/000 "Static Challenges": the narrator's side bids nothing and
    cannot relent the player's challenge for her."""
    player = character(1, "Steps-in-Gum", traits(SOCIAL, "Witty*3"), health=HealthLevel.HEALTHY)
    state = open_static(
        ruleset="met_classic",
        challenger=player,
        category=SOCIAL,
        difficulty=4,
        narrator_throw=R,
        choose=None,
        now=1.0,
    ).state
    before = state.to_dict()
    with pytest.raises(RulesError, match="cannot relent"):
        relent(state, side=DE, now=2.0)
    assert state.to_dict() == before
    assert relent(state, side=CH, now=2.0).state.stage is Stage.RESOLVED


@pytest.mark.parametrize("ruleset", ["met_classic", "ukm"])
def test_a_side_with_too_few_traits_is_offered_no_bid_only_a_relent(ruleset: str) -> None:
    """seeds/000 "Initial Bid", "Health": a Bruised defender with one Trait
    left cannot bid the two ``met_classic`` asks (nor anyone with none left):
    the phone must not offer a bid she cannot make."""
    lone = character(2, "Cub", traits(SOCIAL, "Witty", "Genial*0"), health=HealthLevel.BRUISED)
    state = open_opposed(
        ruleset=ruleset,
        challenger=character(1, "Elder", traits(SOCIAL, "Regal*3")),
        defender=lone,
        category=SOCIAL,
        bids=["Regal"],
        now=1.0,
    ).state
    moves = legal_moves(state, DE)
    assert moves.relent
    assert moves.bid == (0 if ruleset == "met_classic" else 1)
    empty = open_static(
        ruleset=ruleset,
        challenger=character(1, "Nobody", traits(SOCIAL, "Witty*0")),
        category=SOCIAL,
        difficulty=2,
        narrator_throw=R,
        choose=None,
        now=1.0,
    ).state
    assert legal_moves(empty, CH).bid == 0 and legal_moves(empty, CH).relent
