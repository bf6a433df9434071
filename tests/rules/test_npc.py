"""The move an auto-answering NPC makes (challenges/rules/npc.py): its choice
of bid (most copies free, ties by sheet order; two bids when Bruised under
``met_classic``), its relent setting, its throw after the other side's, its
true count on a tie, and that every move it makes is legal."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from challenges.rules import (
    Category,
    HealthLevel,
    Outcome,
    Side,
    Stage,
    Throw,
    TraitHolding,
    legal_moves,
    open_opposed,
    throw,
)
from challenges.rules.npc import MAX_NPC_MOVES, Relents, best_bids, npc_move, npc_moves
from tests.rules.sheets import CH, DE, MENTAL, PHYSICAL, SOCIAL, character, traits

NOW = 1_000.0


def _always(throw_: Throw):
    return lambda options: throw_


def _challenge(
    npc_traits,
    *,
    category=PHYSICAL,
    health=HealthLevel.HEALTHY,
    ruleset="met_classic",
    surprise=False,
):
    helen = character(1, "Helen", traits(PHYSICAL, "Ferocious*7") + traits(SOCIAL, "Alluring*3"))
    npc = character(2, "Spirit", npc_traits, health=health)
    bid = "Ferocious" if category is PHYSICAL else "Alluring"
    return open_opposed(
        ruleset=ruleset,
        challenger=helen,
        defender=npc,
        category=category,
        bids=[bid],
        surprise=surprise,
        now=NOW,
    ).state


BID_TABLE = [
    # (sheet, category, health, lost/at risk, bids chosen)
    (
        traits(PHYSICAL, "Quick", "Strong*3", "Tough*2"),
        PHYSICAL,
        HealthLevel.HEALTHY,
        {},
        ("Strong",),
    ),
    (traits(PHYSICAL, "Quick*2", "Strong*2"), PHYSICAL, HealthLevel.HEALTHY, {}, ("Quick",)),
    (
        traits(PHYSICAL, "Quick*2") + traits(SOCIAL, "Charming*5"),
        PHYSICAL,
        HealthLevel.HEALTHY,
        {},
        ("Quick",),
    ),
    (
        traits(PHYSICAL, "Quick") + traits(SOCIAL, "Charming*5", "Witty*6"),
        SOCIAL,
        HealthLevel.HEALTHY,
        {},
        ("Witty",),
    ),
    # Strong×3 with two at risk elsewhere: Tough×2 is the best left.
    (
        traits(PHYSICAL, "Strong*3", "Tough*2"),
        PHYSICAL,
        HealthLevel.HEALTHY,
        {"Strong": 2},
        ("Tough",),
    ),
    # Bruised (met_classic) bids two: twice the Trait with most copies, or the two best.
    (
        traits(PHYSICAL, "Quick", "Strong*3"),
        PHYSICAL,
        HealthLevel.BRUISED,
        {},
        ("Strong", "Strong"),
    ),
    (
        traits(PHYSICAL, "Quick*2", "Strong*2"),
        PHYSICAL,
        HealthLevel.BRUISED,
        {},
        ("Quick", "Strong"),
    ),
    (traits(PHYSICAL, "Quick", "Strong"), PHYSICAL, HealthLevel.WOUNDED, {}, ("Quick", "Strong")),
    # Negative Traits are never bid.
    (
        traits(PHYSICAL, "Quick", negatives=["Clumsy"]),
        PHYSICAL,
        HealthLevel.HEALTHY,
        {},
        ("Quick",),
    ),
]


@pytest.mark.parametrize(("sheet", "category", "health", "at_risk", "chosen"), BID_TABLE)
def test_the_npc_bids_its_best_traits(sheet, category, health, at_risk, chosen):
    sheet = tuple(
        TraitHolding(t.name, t.category, t.count, at_risk.get(t.name, 0), t.negative) for t in sheet
    )
    state = _challenge(sheet, category=category, health=health)
    need = legal_moves(state, DE).bid
    assert best_bids(state, DE, need) == chosen
    step = npc_move(state, DE, choose=_always(Throw.ROCK), now=NOW)
    assert step is not None and step.state.stage is Stage.THROWS
    assert step.state.defender_bids == chosen


def test_lost_traits_are_not_bid():
    # Lost copies are not in ``count``: Strong×1 left, Quick×2 wins.
    state = _challenge(traits(PHYSICAL, "Strong*1", "Quick*2"))
    assert best_bids(state, DE, 1) == ("Quick",)


def test_with_too_few_traits_free_to_bid_the_npc_relents():
    sheet = (TraitHolding("Quick", PHYSICAL, 1, at_risk=1),)
    state = _challenge(sheet, health=HealthLevel.HEALTHY)
    assert legal_moves(state, DE).bid == 0
    step = npc_move(state, DE, choose=_always(Throw.ROCK), now=NOW)
    assert step is not None and step.state.relented
    assert step.state.outcome is Outcome.CHALLENGER_WINS


@pytest.mark.parametrize(
    ("relents", "health", "relented"),
    [
        (Relents.NEVER, HealthLevel.WOUNDED, False),
        (Relents.WOUNDED, HealthLevel.BRUISED, False),
        (Relents.WOUNDED, HealthLevel.WOUNDED, True),
        (Relents.ALWAYS, HealthLevel.HEALTHY, True),
    ],
)
def test_the_npc_relents_only_as_set(relents, health, relented):
    state = _challenge(traits(PHYSICAL, "Quick*3"), health=health)
    step = npc_move(state, DE, relents=relents, choose=_always(Throw.ROCK), now=NOW)
    assert step is not None
    assert step.state.relented is relented


def test_the_npc_throws_only_after_the_player():
    state = _challenge(traits(PHYSICAL, "Quick*3"))
    state = npc_move(state, DE, choose=_always(Throw.ROCK), now=NOW).state
    assert state.stage is Stage.THROWS
    # The player may still name a Negative Trait: the NPC has not thrown.
    assert npc_move(state, DE, choose=_always(Throw.ROCK), now=NOW) is None
    assert legal_moves(state, CH).call
    state = throw(state, side=CH, throw=Throw.SCISSORS, now=NOW).state
    step = npc_move(state, DE, choose=_always(Throw.ROCK), now=NOW)
    assert step is not None
    assert step.state.tests[0].defender_throw is Throw.ROCK
    # Rock beats scissors: the NPC won; nothing more is due from it.
    assert step.state.outcome is Outcome.DEFENDER_WINS or step.state.stage is Stage.RETEST


def test_on_a_tie_the_npc_declares_its_true_count_and_accepts_a_loss():
    state = _challenge(traits(PHYSICAL, "Quick*3", "Tough*2"))
    state = npc_move(state, DE, choose=_always(Throw.ROCK), now=NOW).state
    state = throw(state, side=CH, throw=Throw.ROCK, now=NOW).state
    state = npc_move(state, DE, choose=_always(Throw.ROCK), now=NOW).state
    assert state.stage is Stage.DECLARE_CHALLENGER
    from challenges.rules import declare

    state = declare(state, side=CH, count=7, now=NOW).state
    steps = npc_moves(state, {DE: Relents.NEVER}, choose=_always(Throw.ROCK), now=NOW)
    declared = steps[0].state.tests[0].defender_declared
    assert declared == 5
    final = steps[-1].state
    # Helen declared 7 against 5: the NPC lost the test and accepted, or it resolved.
    assert final.stage is Stage.RESOLVED
    assert final.outcome is Outcome.CHALLENGER_WINS
    assert [loss.trait for loss in final.losses] == ["Quick"]


def test_ukm_the_npc_bids_one_when_bruised():
    state = _challenge(
        traits(PHYSICAL, "Quick", "Strong*3"), health=HealthLevel.BRUISED, ruleset="ukm"
    )
    assert best_bids(state, DE, legal_moves(state, DE).bid) == ("Strong",)


def test_a_surprised_npc_bids_stamina_traits_only():
    sheet = (
        TraitHolding("Strong", PHYSICAL, 3),
        TraitHolding("Tough", PHYSICAL, 1, stamina=True),
    )
    state = _challenge(sheet, ruleset="ukm", surprise=True)
    assert best_bids(state, DE, 1) == ("Tough",)


def test_nothing_is_due_from_the_challenger_side_at_response():
    state = _challenge(traits(PHYSICAL, "Quick"))
    assert npc_move(state, CH, choose=_always(Throw.ROCK), now=NOW) is None


@settings(max_examples=60, deadline=None)
@given(
    ruleset=st.sampled_from(["met_classic", "ukm"]),
    counts=st.lists(st.integers(1, 4), min_size=1, max_size=4),
    health=st.sampled_from(list(HealthLevel)[:4]),
    relents=st.sampled_from(list(Relents)),
    throws=st.lists(st.sampled_from(list(Throw)), min_size=MAX_NPC_MOVES, max_size=MAX_NPC_MOVES),
)
def test_two_npcs_always_finish_with_legal_moves(ruleset, counts, health, relents, throws):
    """Every move is accepted by the engine (no RulesError) and two NPCs
    against each other settle the challenge, or stop at the guard."""
    names = [f"Trait{i}*{n}" for i, n in enumerate(counts)]
    helen = character(1, "Helen", traits(MENTAL, "Cunning*4"))
    npc = character(2, "Spirit", traits(MENTAL, *names), health=health)
    state = open_opposed(
        ruleset=ruleset,
        challenger=helen,
        defender=npc,
        category=Category.MENTAL,
        bids=["Cunning"],
        now=NOW,
    ).state
    source = itertools.cycle(throws)
    steps = npc_moves(
        state,
        {Side.CHALLENGER: Relents.NEVER, Side.DEFENDER: relents},
        choose=lambda options: next(source),
        now=NOW,
    )
    assert steps
    final = steps[-1].state
    assert final.stage is Stage.RESOLVED or len(steps) == MAX_NPC_MOVES
