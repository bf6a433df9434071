"""Rules the engine broke when the rule vectors first ran, one test each
(found by test_machine.py or test_seed_examples.py), so they stay fixed."""

from __future__ import annotations

import pytest

from challenges.rules import (
    HealthLevel,
    Immunity,
    Outcome,
    Pool,
    RetestKind,
    RulesError,
    Stage,
    add_bids,
    call_negative,
    call_retest,
    declare,
    legal_moves,
    narrator_retest,
    open_opposed,
    open_static,
    relent,
)
from tests.rules.sheets import (
    CH,
    DE,
    LOSE,
    MENTAL,
    SOCIAL,
    TIE,
    WIN,
    R,
    character,
    opposed,
    played,
    traits,
)


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


def test_ukm_a_declared_count_stands_after_a_narrators_retest() -> None:
    """seeds/004 "In The Case Of A Draw": you "cannot change your declaration
    that Challenge": after a narrator's retest, a new tie finds the
    challenger's count standing; she may not declare another (the machine
    found legal_moves offering her standing count while declare checked
    only her real one)."""
    state = opposed(
        "ukm",
        character(1, "A", traits(SOCIAL, "Regal*6")),
        character(2, "B", traits(SOCIAL, "Witty*6")),
        SOCIAL,
        ["Regal"],
        ["Witty"],
    )
    state = played(state, TIE).state
    state = declare(state, side=CH, count=5, now=300.0).state
    state = narrator_retest(state, reason="dispute", now=301.0).state
    state = played(state, TIE, now=400.0).state
    assert state.stage is Stage.DECLARE_CHALLENGER
    assert legal_moves(state, CH).declare == 5
    before = state.to_dict()
    with pytest.raises(RulesError, match="stands for this challenge: 5"):
        declare(state, side=CH, count=6, now=500.0)
    assert state.to_dict() == before
    state = declare(state, side=CH, now=500.0).state
    assert state.tests[-1].challenger_declared == 5


def test_ukm_willpower_immunity_when_a_tie_in_the_willpower_retest_is_settled_later() -> None:
    """seeds/004 "Retrying The Test…": a Willpower retest that fends off the
    attack makes the defender immune for ten minutes, also when its test
    ties on equal counts and the retest until an outright winner goes her
    way (the machine found the immunity granted only when the Willpower
    test itself was the last)."""
    state = opposed(
        "ukm",
        character(1, "A", traits(MENTAL, "Cunning*6")),
        character(2, "B", traits(MENTAL, "Wise*6"), pools={Pool.WILLPOWER: 1}),
        MENTAL,
        ["Cunning"],
        ["Wise"],
        power="Dominate",
    )
    state = played(state, WIN).state
    state = call_retest(state, side=DE, kind=RetestKind.WILLPOWER, now=300.0).state
    state = played(state, TIE, now=400.0).state
    state = declare(state, side=CH, count=6, now=500.0).state
    state = declare(state, side=DE, count=6, now=501.0).state
    assert state.tests[-1].retest is RetestKind.EQUAL_COUNTS
    t = played(state, LOSE, now=600.0)
    assert t.state.outcome is Outcome.DEFENDER_WINS
    assert t.state.granted == ((2, Immunity(1, "Dominate", 601.0 + 600)),)
    # The Willpower retest stays final: the challenger has no retest after it.
    assert t.state.stage is Stage.RESOLVED


def test_met_classic_ray_may_withdraw_rather_than_risk_persuasive() -> None:
    """seeds/000 "Negative Traits", Example of Play: after his wrong call Ray
    "would have to risk an additional Social Trait ... if he wished to
    continue the challenge": he may also withdraw (relent), losing the
    challenge and no Trait (the engine let only the defender relent, so Ray
    had to add Persuasive)."""
    ray = character(1, "Ray", traits(SOCIAL, "Commanding", "Persuasive"))
    camille = character(2, "Camille", traits(SOCIAL, "Alluring"))
    state = opposed("met_classic", ray, camille, SOCIAL, ["Commanding"], ["Alluring"])
    assert not legal_moves(state, CH).relent
    state = call_negative(state, side=CH, name="Condescending", now=300.0).state
    assert legal_moves(state, CH).relent and not legal_moves(state, DE).relent
    t = relent(state, side=CH, now=301.0)
    assert t.state.outcome is Outcome.DEFENDER_WINS
    assert t.state.losses == () and t.state.wounds == ()
    # Once he has added Persuasive, the test goes ahead.
    added = add_bids(state, side=CH, bids=["Persuasive"], now=301.0).state
    assert not legal_moves(added, CH).relent
