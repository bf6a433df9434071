"""Rules the engine broke when the rule vectors first ran, one test each
(found by test_machine.py or test_seed_examples.py), so they stay fixed."""

from __future__ import annotations

import pytest

from challenges.rules import (
    HealthLevel,
    RulesError,
    Stage,
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
