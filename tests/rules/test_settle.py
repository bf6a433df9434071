"""A narrator settles a challenge for either side (``rules.settle``, RULES.md
"Disputes", seeds/000 "Adjudication"): the result is applied as if the
winner had won the test and the loser accepted it, under both presets."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from challenges.rules import (
    Outcome,
    RulesError,
    Stage,
    open_simple,
    open_static,
    settle,
    void,
)
from challenges.rules import bid as static_bid
from tests.rules.sheets import CH, DE, LOSE, PHYSICAL, SOCIAL, R, character, opposed, played, traits
from tests.rules.test_properties import MAX_MOVES, PROPERTY, legal_move, openings

PRESETS = ["met_classic", "ukm"]


def _a():  # type: ignore[no-untyped-def]
    held = traits(PHYSICAL, "Brawny*3") + traits(SOCIAL, "Witty*7")
    return character(1, "A", held, abilities={"Brawl": 3, "Leadership": 3})


def _b():  # type: ignore[no-untyped-def]
    return character(2, "B", traits(PHYSICAL, "Tough*3") + traits(SOCIAL, "Genial*3"))


def _lost(state) -> list[tuple[int, str]]:  # type: ignore[no-untyped-def]
    return [(x.character_id, x.trait) for x in state.losses]


@pytest.mark.parametrize("ruleset", PRESETS)
@pytest.mark.parametrize(
    ("winner", "outcome", "lost", "wounded"),
    [
        (CH, Outcome.CHALLENGER_WINS, [(2, "Tough")], [2]),
        (DE, Outcome.DEFENDER_WINS, [(1, "Brawny")], [1]),
    ],
    ids=["for the challenger", "for the defender"],
)
def test_settle_an_attack_before_the_throws(ruleset, winner, outcome, lost, wounded) -> None:
    """Both bid, nobody has thrown: the loser loses her bid and, in an
    attack, one health level; the winner loses nothing."""
    state = opposed(ruleset, _a(), _b(), PHYSICAL, ["Brawny"], ["Tough"], is_attack=True)
    assert state.stage is Stage.THROWS
    moved = settle(state, winner=winner, reason="Both agreed the grapple held", now=50.0)
    assert moved.state.stage is Stage.RESOLVED
    assert moved.state.outcome is outcome
    assert _lost(moved.state) == lost
    assert list(moved.state.wounds) == wounded
    assert [e.kind for e in moved.events] == ["settled", "resolved"]
    assert moved.events[0].data == {
        "winner": winner.value,
        "reason": "Both agreed the grapple held",
    }
    assert moved.state.stage_since == 50.0


@pytest.mark.parametrize("ruleset", PRESETS)
def test_settle_before_the_defender_bids_costs_her_nothing(ruleset) -> None:
    """The defender has not answered: settled against her, she has no bid to
    lose (and it is no attack: no wound)."""
    state = opposed(ruleset, _a(), _b(), SOCIAL, ["Witty"])
    moved = settle(state, winner=CH, reason="She walked away", now=5.0)
    assert moved.state.outcome is Outcome.CHALLENGER_WINS
    assert _lost(moved.state) == []
    assert moved.state.wounds == ()


@pytest.mark.parametrize("ruleset", PRESETS)
def test_settle_drops_a_retest_on_offer(ruleset) -> None:
    """The challenger lost the test and may retest: settled for her instead,
    the defender loses her bid and no retest is left open."""
    state = opposed(ruleset, _a(), _b(), SOCIAL, ["Witty"], ["Genial"])
    state = played(state, LOSE).state
    assert state.stage is Stage.RETEST and state.retest_side is CH
    moved = settle(state, winner=CH, reason="The throw was late", now=300.0)
    assert moved.state.outcome is Outcome.CHALLENGER_WINS
    assert _lost(moved.state) == [(2, "Genial")]
    assert moved.state.retest_side is None and moved.state.pending is None


@pytest.mark.parametrize("ruleset", PRESETS)
def test_settle_a_static_for_the_narrators_side(ruleset) -> None:
    """A static challenge settled for the narrator's side (the defender): the
    player loses her bid Trait under both presets."""
    state = open_static(
        ruleset=ruleset,
        challenger=_a(),
        category=SOCIAL,
        difficulty=5,
        narrator_throw=R,
        choose=None,
        now=1.0,
    ).state
    state = static_bid(state, bids=["Witty"], now=2.0).state
    moved = settle(state, winner=DE, reason="The door was warded", now=3.0)
    assert moved.state.outcome is Outcome.DEFENDER_WINS
    assert _lost(moved.state) == [(1, "Witty")]


@pytest.mark.parametrize("ruleset", PRESETS)
def test_settle_a_simple_test(ruleset) -> None:
    """A simple test has no bid at stake here: settled, nobody loses anything."""
    state = open_simple(
        ruleset=ruleset, challenger=_a(), narrator_throw=R, choose=None, now=1.0
    ).state
    moved = settle(state, winner=CH, reason="She found the key", now=2.0)
    assert moved.state.outcome is Outcome.CHALLENGER_WINS
    assert _lost(moved.state) == []


@pytest.mark.parametrize("ruleset", PRESETS)
@pytest.mark.parametrize("reason", ["", "   "])
def test_settle_needs_a_reason(ruleset, reason) -> None:
    state = opposed(ruleset, _a(), _b(), SOCIAL, ["Witty"], ["Genial"])
    with pytest.raises(RulesError, match="reason"):
        settle(state, winner=CH, reason=reason, now=5.0)


@pytest.mark.parametrize("ruleset", PRESETS)
def test_settle_refuses_a_challenge_that_is_over(ruleset) -> None:
    state = opposed(ruleset, _a(), _b(), SOCIAL, ["Witty"], ["Genial"])
    state = void(state, reason="dispute", now=5.0).state
    with pytest.raises(RulesError, match="over"):
        settle(state, winner=DE, reason="too late", now=6.0)


@PROPERTY
@given(opening=st.booleans().flatmap(openings), data=st.data(), winner=st.sampled_from([CH, DE]))
def test_a_settlement_at_any_point_costs_only_what_was_bid(opening, data, winner) -> None:
    """Legal play stopped at any point and settled for either side: the
    outcome is the winner's, nobody loses a Trait she did not bid, the
    winner loses at most what she had forfeited, and only the loser of an
    attack is wounded."""
    state, now = opening.state, opening.state.stage_since
    for _ in range(data.draw(st.integers(0, MAX_MOVES))):
        if state.stage is Stage.RESOLVED:
            break
        now += 1.0
        state = legal_move(data, state, now).state
    if state.stage is Stage.RESOLVED:
        with pytest.raises(RulesError):
            settle(state, winner=winner, reason="late", now=now + 1)
        return
    moved = settle(state, winner=winner, reason="late", now=now + 1)
    new = moved.state
    assert new.stage is Stage.RESOLVED
    assert new.outcome is (Outcome.CHALLENGER_WINS if winner is CH else Outcome.DEFENDER_WINS)
    for side in (CH, DE):
        who = state.combatant(side)
        if who is None:
            continue
        mine = Counter(x.trait for x in new.losses if x.character_id == who.character_id)
        bid = Counter(state.bids_of(side))
        assert all(bid[name] >= n for name, n in mine.items())
        if side is winner:
            assert sum(mine.values()) <= state.of(side, "forfeits")
            assert who.character_id not in new.wounds
    loser = state.combatant(winner.other)
    assert set(new.wounds) <= ({loser.character_id} if loser and state.is_attack else set())
    assert [e.kind for e in moved.events] == ["settled", "resolved"]
