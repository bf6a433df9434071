"""Static challenges (seeds/000 "Static Challenges") and simple tests
(seeds/000 "Simple Tests"): the narrator's side throws at open, never waits."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from challenges.rules import (
    Category,
    ChallengeState,
    Combatant,
    HealthLevel,
    Kind,
    Loss,
    Outcome,
    RulesError,
    Side,
    Stage,
    Throw,
    TraitHolding,
    Transition,
    bid,
    declare,
    open_simple,
    open_static,
    respond,
    throw,
    void,
)

SOCIAL = Category.SOCIAL
R, P, S = Throw.ROCK, Throw.PAPER, Throw.SCISSORS
CH, DE = Side.CHALLENGER, Side.DEFENDER


def steps_in_gum(**changes: object) -> Combatant:
    """Steps-in-Gum: six Social Traits."""
    traits = (
        TraitHolding("Persuasive", SOCIAL, 2),
        TraitHolding("Charismatic", SOCIAL, 2),
        TraitHolding("Friendly", SOCIAL, 2),
        TraitHolding("Tactless", SOCIAL, 1, negative=True),
    )
    fields: dict = {"character_id": 7, "name": "Steps-in-Gum", "traits": traits}
    fields.update(changes)
    return Combatant(**fields)


def never(_: Sequence[Throw]) -> Throw:
    raise AssertionError("the narrator's throw was given; nothing should be drawn")


def static(narrator: Throw = R, difficulty: int = 4, **changes: object) -> ChallengeState:
    fields: dict = {
        "ruleset": "met_classic",
        "challenger": steps_in_gum(),
        "category": SOCIAL,
        "difficulty": difficulty,
        "narrator_throw": narrator,
        "choose": never,
        "stakes": "The Gaffling agrees to help",
        "now": 10.0,
    }
    fields.update(changes)
    return open_static(**fields).state


def static_at_throws(narrator: Throw = R, difficulty: int = 4) -> ChallengeState:
    return bid(static(narrator, difficulty), bids=["Persuasive"], now=20.0).state


def simple(narrator: Throw = R) -> ChallengeState:
    return open_simple(
        ruleset="met_classic",
        challenger=steps_in_gum(),
        narrator_throw=narrator,
        choose=never,
        now=5.0,
    ).state


def kinds(transition: Transition) -> list[str]:
    return [event.kind for event in transition.events]


# --- the worked example ----------------------------------------------------------


def test_steps_in_gum_static_social_against_spirit_difficulty_4() -> None:
    """seeds/000 "Static Challenges", Example of Play: Steps-in-Gum (6 Social)
    convinces a Gaffling (4 Social) and wins. Here through a tie and a
    declaration: both throw paper, he declares 6 against the difficulty 4."""
    t = open_static(
        ruleset="met_classic",
        challenger=steps_in_gum(),
        category=SOCIAL,
        difficulty=4,
        narrator_throw=P,
        choose=never,
        stakes="The Gaffling agrees to help",
        now=1.0,
    )
    assert t.state.stage is Stage.BID and t.state.waiting_on is CH
    assert t.state.tests[0].defender_throw is P and not t.state.tests[0].revealed
    assert t.events[0].data["defender"] is None
    t = bid(t.state, bids=["Persuasive"], now=2.0)
    assert t.state.stage is Stage.THROWS and t.state.waiting_on == (CH,)
    t = throw(t.state, side=CH, throw=P, now=3.0)
    assert kinds(t) == ["threw", "revealed", "tied"]
    assert t.state.stage is Stage.DECLARE_CHALLENGER and t.state.waiting_on is CH
    t = declare(t.state, side=CH, now=4.0)
    assert kinds(t) == ["declared", "declared", "compared", "resolved"]
    assert [e.data for e in t.events[:2]] == [
        {"side": "challenger", "count": 6},
        {"side": "defender", "count": 4},
    ]
    state = t.state
    assert state.outcome is Outcome.CHALLENGER_WINS
    assert state.tests[0].winner is CH
    assert (state.tests[0].challenger_declared, state.tests[0].defender_declared) == (6, 4)
    assert state.losses == () and state.wounds == ()


def test_steps_in_gum_wins_outright() -> None:
    t = throw(static_at_throws(narrator=S), side=CH, throw=R, now=30.0)
    assert t.state.outcome is Outcome.CHALLENGER_WINS
    assert t.state.losses == () and t.state.wounds == ()
    assert kinds(t) == ["threw", "revealed", "resolved"]


# --- static challenges ------------------------------------------------------------

STATIC_THROWS = [
    ("the player wins the test and nothing is lost", P, Outcome.CHALLENGER_WINS, ()),
    (
        "the player loses the test and loses her bid",
        S,
        Outcome.DEFENDER_WINS,
        (Loss(7, "Persuasive", SOCIAL),),
    ),
    ("a tie goes to declarations", R, None, ()),
]


@pytest.mark.parametrize(
    ("mine", "outcome", "losses"),
    [row[1:] for row in STATIC_THROWS],
    ids=[row[0] for row in STATIC_THROWS],
)
def test_a_static_test(mine: Throw, outcome: Outcome | None, losses: tuple[Loss, ...]) -> None:
    state = throw(static_at_throws(narrator=R), side=CH, throw=mine, now=30.0).state
    assert state.outcome is outcome
    assert state.losses == losses
    assert state.wounds == ()
    if outcome is None:
        assert state.stage is Stage.DECLARE_CHALLENGER


STATIC_TIES = [
    ("declaring more than the difficulty wins", 5, None, Outcome.CHALLENGER_WINS, ()),
    (
        "declaring fewer than the difficulty loses the bid",
        2,
        None,
        Outcome.DEFENDER_WINS,
        (Loss(7, "Persuasive", SOCIAL),),
    ),
    (
        "declaring exactly the difficulty is a draw and costs the bid",
        4,
        None,
        Outcome.DRAW,
        (Loss(7, "Persuasive", SOCIAL),),
    ),
    (
        "a player with fewer Traits than the difficulty loses even declaring all",
        None,
        7,
        Outcome.DEFENDER_WINS,
        (Loss(7, "Persuasive", SOCIAL),),
    ),
]


@pytest.mark.parametrize(
    ("count", "difficulty", "outcome", "losses"),
    [row[1:] for row in STATIC_TIES],
    ids=[row[0] for row in STATIC_TIES],
)
def test_a_static_tie(
    count: int | None, difficulty: int | None, outcome: Outcome, losses: tuple[Loss, ...]
) -> None:
    state = throw(
        static_at_throws(narrator=R, difficulty=difficulty or 4), side=CH, throw=R, now=1.0
    )
    t = declare(state.state, side=CH, count=count, now=2.0)
    assert t.state.outcome is outcome
    assert t.state.losses == losses
    assert t.state.wounds == ()
    assert t.state.stage_since == 2.0


@pytest.mark.parametrize("answer", [None, []], ids=["no bid relents", "an empty bid relents"])
def test_the_player_relents_a_static_challenge(answer: list[str] | None) -> None:
    t = bid(static(), bids=answer, now=15.0)
    assert t.state.outcome is Outcome.DEFENDER_WINS and t.state.relented
    assert t.state.losses == () and t.state.wounds == ()
    assert kinds(t) == ["relented", "resolved"]


def test_the_narrators_throw_is_drawn_with_choose_when_not_given() -> None:
    offered: list[list[Throw]] = []

    def choose(options: Sequence[Throw]) -> Throw:
        offered.append(list(options))
        return S

    state = open_static(
        ruleset="met_classic",
        challenger=steps_in_gum(),
        category=SOCIAL,
        difficulty=3,
        narrator_throw=None,
        choose=choose,
        now=1.0,
    ).state
    assert offered == [[R, P, S]]
    assert state.tests[0].defender_throw is S


def test_the_narrators_throw_never_appears_in_public_events() -> None:
    events = []
    t = open_static(
        ruleset="met_classic",
        challenger=steps_in_gum(),
        category=SOCIAL,
        difficulty=9,
        narrator_throw=S,
        choose=never,
        now=1.0,
    )
    events += t.events
    t = bid(t.state, bids=["Friendly"], now=2.0)
    events += t.events
    assert all("scissors" not in repr(e.data) and 9 not in e.data.values() for e in events)


def test_a_static_challenge_can_be_voided() -> None:
    t = void(static_at_throws(), reason="Wrong spirit", now=3.0)
    assert t.state.outcome is Outcome.VOID and t.state.losses == ()


STATIC_REFUSED: list[tuple[str, Callable[[], object], str]] = [
    (
        "a difficulty of 0 is refused",
        lambda: static(difficulty=0),
        "The difficulty must be at least 1 Trait.",
    ),
    (
        "a negative difficulty is refused",
        lambda: static(difficulty=-2),
        "The difficulty must be at least 1 Trait.",
    ),
    (
        "an incapacitated player cannot take a static challenge",
        lambda: static(challenger=steps_in_gum(health=HealthLevel.MORTALLY_WOUNDED)),
        "You are incapacitated and cannot enter challenges.",
    ),
    (
        "a bid of another category is refused",
        lambda: bid(static(), bids=["Quick"], now=1.0),
        "You have no Social Trait 'Quick' left to bid tonight.",
    ),
    (
        "a Negative Trait bid is refused",
        lambda: bid(static(), bids=["Tactless"], now=1.0),
        "'Tactless' is a Negative Trait; you cannot bid it.",
    ),
    (
        "throwing before bidding is refused",
        lambda: throw(static(), side=CH, throw=R, now=1.0),
        "It is not time to throw.",
    ),
    (
        "the narrator's side cannot throw again",
        lambda: throw(static_at_throws(), side=DE, throw=R, now=1.0),
        "The narrator's throw is already set.",
    ),
    (
        "the narrator's side has nothing to declare",
        lambda: declare(
            throw(static_at_throws(), side=CH, throw=R, now=1.0).state, side=DE, now=2.0
        ),
        "The narrator's count is the difficulty; there is nothing to declare.",
    ),
    (
        "bidding twice is refused",
        lambda: bid(static_at_throws(), bids=["Friendly"], now=1.0),
        "It is not time to bid.",
    ),
    (
        "a static challenge takes no defender's answer",
        lambda: respond(static(), bids=["Friendly"], now=1.0),
        "It is not time to answer a challenge.",
    ),
    (
        "the narrator's side cannot throw in a simple test",
        lambda: throw(simple(), side=DE, throw=R, now=1.0),
        "The narrator's throw is already set.",
    ),
    (
        "a simple test cannot be thrown twice",
        lambda: throw(throw(simple(), side=CH, throw=R, now=1.0).state, side=CH, throw=R, now=2.0),
        "This challenge is over.",
    ),
]


@pytest.mark.parametrize(
    ("move", "message"), [row[1:] for row in STATIC_REFUSED], ids=[row[0] for row in STATIC_REFUSED]
)
def test_refused_move(move: Callable[[], object], message: str) -> None:
    with pytest.raises(RulesError) as refused:
        move()
    assert str(refused.value) == message


# --- simple tests ---------------------------------------------------------------

SIMPLE = [
    ("a win succeeds", P, R, Outcome.CHALLENGER_WINS, False),
    ("a tie succeeds", R, R, Outcome.CHALLENGER_WINS, True),
    ("a loss fails", S, R, Outcome.DEFENDER_WINS, False),
]


@pytest.mark.parametrize(
    ("mine", "narrator", "outcome", "tie"),
    [row[1:] for row in SIMPLE],
    ids=[row[0] for row in SIMPLE],
)
def test_a_simple_test(mine: Throw, narrator: Throw, outcome: Outcome, tie: bool) -> None:
    opened = open_simple(
        ruleset="met_classic",
        challenger=steps_in_gum(),
        narrator_throw=narrator,
        choose=never,
        stakes="Does the Gift work?",
        now=5.0,
    )
    start = opened.state
    assert start.kind is Kind.SIMPLE and start.category is None
    assert start.stage is Stage.THROWS and start.waiting_on == (CH,)
    assert not start.tests[0].revealed
    t = throw(start, side=CH, throw=mine, now=6.0)
    state = t.state
    assert state.outcome is outcome and state.stage is Stage.RESOLVED
    assert state.tests[0].tie is tie
    assert state.losses == () and state.wounds == ()
    assert kinds(t) == ["threw", "revealed", "resolved"]


def test_a_simple_test_draws_the_narrators_throw_when_not_given() -> None:
    state = open_simple(
        ruleset="met_classic",
        challenger=steps_in_gum(),
        narrator_throw=None,
        choose=lambda options: options[1],
        now=1.0,
    ).state
    assert state.tests[0].defender_throw is P
