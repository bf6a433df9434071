"""A prepared static's object (issue 11, statics): the narrator's side of a
static challenge overbids and retests when allowed, played by the engine
(seeds/000 "Static Challenges": "the Narrator can overbid as well"; seeds/004
"Static Challenges"); ``static_loser`` (seeds/004: "Only the aggressor will
lose a trait"); simple tests with a Trait at stake."""

from __future__ import annotations

import dataclasses

import pytest

from challenges.rules import (
    Category,
    ChallengeState,
    Kind,
    Outcome,
    RetestKind,
    RulesError,
    Side,
    Stage,
    Throw,
    accept,
    bid,
    call_retest,
    declare,
    judge,
    open_simple,
    open_static,
    throw,
)
from challenges.rules import rulesets as rulesets_module
from challenges.rules.options import MET_CLASSIC, StaticLoser
from challenges.rules.rulesets import Ruleset
from tests.rules.test_static_and_simple import kinds, never, steps_in_gum

SOCIAL = Category.SOCIAL
R, P, S = Throw.ROCK, Throw.PAPER, Throw.SCISSORS
CH, DE = Side.CHALLENGER, Side.DEFENDER


def rocks(_: object) -> Throw:
    """The narrator's throw of every retest: rock."""
    return R


def at_throws(
    ruleset: str = "met_classic",
    difficulty: int = 4,
    first: Throw = R,
    **permissions: bool,
) -> ChallengeState:
    state = open_static(
        ruleset=ruleset,
        challenger=steps_in_gum(),
        category=SOCIAL,
        difficulty=difficulty,
        narrator_throw=first,
        choose=never,
        now=1.0,
        **permissions,
    ).state
    return bid(state, bids=["Persuasive"], now=2.0).state


def lost(state: ChallengeState) -> list[str]:
    return [loss.trait for loss in state.losses]


@pytest.mark.parametrize("ruleset", ["met_classic", "ukm"])
def test_steps_in_gum_beats_the_gaffling_whose_overbid_cannot_succeed(ruleset: str) -> None:
    """seeds/000 Example of Play: Steps-in-Gum (6 Social) against a spirit of
    4: he wins the test; the object may overbid but 4 < 2 × 6, so it does not."""
    t = throw(at_throws(ruleset, 4, R, object_overbids=True), side=CH, throw=P, now=3.0)
    assert t.state.outcome is Outcome.CHALLENGER_WINS
    assert kinds(t) == ["threw", "revealed", "resolved"]
    assert lost(t.state) == []


@pytest.mark.parametrize("ruleset", ["met_classic", "ukm"])
def test_object_overbids_when_its_difficulty_doubles_her_count(ruleset: str) -> None:
    """Difficulty 12 against her 6: she wins the first test, the object
    overbids (granted: 12 ≥ 2 × 6, her answer given for her), the retest is
    a tie; met_classic: the overbidder wins the tie; ukm: the counts stand,
    12 against 6. She loses her bid."""
    state = at_throws(ruleset, 12, R, object_overbids=True)
    t = throw(state, side=CH, throw=P, now=3.0, choose=rocks)
    assert kinds(t) == ["threw", "revealed", "retest_called", "retest_answered", "retest"]
    assert t.events[2].data == {"side": "defender", "kind": "overbid", "count": 12}
    assert t.events[3].data["compared"] == [12, 6] and t.events[3].data["granted"]
    assert t.state.stage is Stage.THROWS and t.state.current_test is not None
    assert t.state.current_test.retest is RetestKind.OVERBID and t.state.current_test.by is DE
    t = throw(t.state, side=CH, throw=R, now=4.0, choose=rocks)
    assert t.state.outcome is Outcome.DEFENDER_WINS
    assert lost(t.state) == ["Persuasive"]


def test_object_overbids_once_per_challenge() -> None:
    state = at_throws("met_classic", 12, R, object_overbids=True)
    t = throw(state, side=CH, throw=P, now=3.0, choose=rocks)
    t = throw(t.state, side=CH, throw=P, now=4.0, choose=rocks)
    assert t.state.outcome is Outcome.CHALLENGER_WINS and lost(t.state) == []


@pytest.mark.parametrize(
    ("ruleset", "kind"), [("met_classic", RetestKind.NARRATOR), ("ukm", RetestKind.ABILITY)]
)
def test_object_retest_is_held_at_once_then_the_player_may_win(
    ruleset: str, kind: RetestKind
) -> None:
    """met_classic has no Ability retests: the object's retest is the
    narrator's; ukm's is its one Ability retest."""
    state = at_throws(ruleset, 4, R, object_retests=True)
    t = throw(state, side=CH, throw=P, now=3.0, choose=rocks)
    assert kinds(t)[-2:] == ["retest_called", "retest"]
    assert t.events[-2].data == {"side": "defender", "kind": kind.value}
    t = throw(t.state, side=CH, throw=P, now=4.0, choose=rocks)
    assert t.state.outcome is Outcome.CHALLENGER_WINS
    assert [k for _, k in t.state.called] == [kind]


def test_an_object_without_permissions_never_retests() -> None:
    t = throw(at_throws("met_classic", 12, R), side=CH, throw=P, now=3.0)
    assert t.state.outcome is Outcome.CHALLENGER_WINS and "retest_called" not in kinds(t)


# Table: (ruleset, overbids, retests, difficulty, called before) → the object's move.
POLICY = [
    ("met_classic", False, False, 12, (), None),
    ("met_classic", True, False, 12, (), RetestKind.OVERBID),
    ("met_classic", True, False, 11, (), None),
    ("met_classic", False, True, 1, (), RetestKind.NARRATOR),
    ("met_classic", True, True, 12, (), RetestKind.NARRATOR),
    ("met_classic", True, True, 12, ((DE, RetestKind.NARRATOR),), RetestKind.OVERBID),
    ("met_classic", True, True, 12, ((DE, RetestKind.NARRATOR), (DE, RetestKind.OVERBID)), None),
    ("ukm", False, True, 1, (), RetestKind.ABILITY),
    ("ukm", True, True, 12, ((DE, RetestKind.ABILITY),), RetestKind.OVERBID),
    ("ukm", False, True, 4, ((CH, RetestKind.ABILITY),), None),
    ("ukm", True, True, 12, ((CH, RetestKind.ABILITY),), RetestKind.OVERBID),
    ("ukm", True, False, 12, ((CH, RetestKind.OVERBID),), None),
    ("met_classic", True, False, 12, ((CH, RetestKind.OVERBID),), RetestKind.OVERBID),
]


@pytest.mark.parametrize(("ruleset", "overbids", "retests", "difficulty", "called", "move"), POLICY)
def test_object_policy_table(
    ruleset: str,
    overbids: bool,
    retests: bool,
    difficulty: int,
    called: tuple[tuple[Side, RetestKind], ...],
    move: RetestKind | None,
) -> None:
    state = at_throws(ruleset, difficulty, R, object_overbids=overbids, object_retests=retests)
    state = dataclasses.replace(state, called=called)
    assert judge.object_retest(state) == move


def test_opposed_and_simple_have_no_object() -> None:
    state = dataclasses.replace(at_throws(object_overbids=True), kind=Kind.SIMPLE)
    assert judge.object_retest(state) is None


def test_permissions_survive_the_saved_state() -> None:
    state = at_throws(object_overbids=True, object_retests=True)
    again = ChallengeState.from_dict(state.to_dict())
    assert again == state and again.object_overbids and again.object_retests


# --- static_loser ------------------------------------------------------------------


@pytest.fixture
def aggressor_club(monkeypatch: pytest.MonkeyPatch) -> str:
    """met_classic with ukm's static_loser, registered as ruleset "club"."""
    options = dataclasses.replace(MET_CLASSIC, static_loser=StaticLoser.AGGRESSOR_ONLY)
    monkeypatch.setitem(rulesets_module.RULESETS, "club", Ruleset("club", options))
    return "club"


def draw(ruleset: str) -> ChallengeState:
    """A tie, then 6 declared against a difficulty of 6: equal counts."""
    t = throw(at_throws(ruleset, 6, R), side=CH, throw=R, now=3.0)
    return declare(t.state, side=CH, now=4.0).state


def overbid_then_win(ruleset: str) -> ChallengeState:
    """She loses the first test against difficulty 3, overbids with a new
    Trait (6 ≥ 2 × 3) and wins the retest."""
    t = throw(at_throws(ruleset, 3, P), side=CH, throw=R, now=3.0, choose=rocks)
    assert t.state.stage is Stage.RETEST
    t = call_retest(
        t.state, side=CH, kind=RetestKind.OVERBID, traits=["Friendly"], now=4.0, choose=rocks
    )
    return throw(t.state, side=CH, throw=P, now=5.0, choose=rocks).state


# Table: (what happened, static_loser, outcome, Traits lost). "club" is
# met_classic with ukm's static_loser (AGGRESSOR_ONLY).
LOSER = [
    (draw, "met_classic", Outcome.DRAW, ["Persuasive"]),
    (draw, "club", Outcome.DRAW, []),
    (overbid_then_win, "met_classic", Outcome.CHALLENGER_WINS, ["Persuasive"]),
    (overbid_then_win, "club", Outcome.CHALLENGER_WINS, []),
]


@pytest.mark.parametrize(("played", "ruleset", "outcome", "traits"), LOSER)
def test_static_loser_table(
    aggressor_club: str, played, ruleset: str, outcome: Outcome, traits: list[str]
) -> None:
    """as_opposed: a draw costs her bid, an overbid forfeits her first bid
    even when she wins (seeds/000); aggressor_only: neither (seeds/004)."""
    state = played(ruleset)
    assert state.outcome is outcome and lost(state) == traits


@pytest.mark.parametrize(
    ("first", "mine", "outcome", "traits"),
    [(R, P, Outcome.CHALLENGER_WINS, []), (R, S, Outcome.DEFENDER_WINS, ["Persuasive"])],
)
def test_ukm_only_the_aggressor_loses(
    first: Throw, mine: Throw, outcome: Outcome, traits: list[str]
) -> None:
    """ukm (seeds/004 "Static Challenges"): she loses her bid only when she
    loses; she accepts the lost test rather than retest."""
    t = throw(at_throws("ukm", 4, first), side=CH, throw=mine, now=3.0)
    if t.state.stage is Stage.RETEST:
        t = accept(t.state, side=CH, now=4.0)
    assert t.state.outcome is outcome and lost(t.state) == traits


# --- simple tests with a Trait at stake ------------------------------------------


def simple_with_bid(ruleset: str = "met_classic", narrator: Throw = R, **extra: object):
    return open_simple(
        ruleset=ruleset,
        challenger=steps_in_gum(),
        narrator_throw=narrator,
        choose=never,
        category=SOCIAL,
        bids=["Charismatic"],
        now=1.0,
        **extra,
    )


@pytest.mark.parametrize(
    ("ruleset", "mine", "extra", "outcome", "traits"),
    [
        ("met_classic", S, {}, Outcome.DEFENDER_WINS, ["Charismatic"]),
        ("met_classic", R, {}, Outcome.CHALLENGER_WINS, []),
        ("met_classic", P, {}, Outcome.CHALLENGER_WINS, []),
        ("ukm", R, {"difficult": True}, Outcome.DEFENDER_WINS, ["Charismatic"]),
        ("ukm", R, {"narrator_initiated": True}, Outcome.DEFENDER_WINS, ["Charismatic"]),
        ("ukm", R, {}, Outcome.CHALLENGER_WINS, []),
    ],
)
def test_simple_test_bid_is_lost_on_failure(
    ruleset: str, mine: Throw, extra: dict, outcome: Outcome, traits: list[str]
) -> None:
    t = simple_with_bid(ruleset, R, **extra)
    assert kinds(t) == ["opened", "bid"] and t.state.challenger_bids == ("Charismatic",)
    t = throw(t.state, side=CH, throw=mine, now=2.0)
    assert t.state.outcome is outcome and lost(t.state) == traits


@pytest.mark.parametrize(
    ("category", "bids", "message"),
    [(SOCIAL, ["Brave"], "no Social Trait 'Brave'"), (None, ["Charismatic"], "category")],
)
def test_simple_test_bid_must_be_hers(
    category: Category | None, bids: list[str], message: str
) -> None:
    with pytest.raises(RulesError, match=message):
        open_simple(
            ruleset="met_classic",
            challenger=steps_in_gum(),
            narrator_throw=R,
            choose=never,
            category=category,
            bids=bids,
            now=1.0,
        )
