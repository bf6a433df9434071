"""Opposed challenges, step by step (seeds/000 "Initial Bid", "Testing"):
throws, relents, declarations, draws, voids and refused moves."""

from __future__ import annotations

import re
from collections.abc import Callable

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
    declare,
    open_opposed,
    respond,
    throw,
    void,
)
from challenges.rules import bid as static_bid

PHYSICAL = Category.PHYSICAL
SOCIAL = Category.SOCIAL
R, P, S = Throw.ROCK, Throw.PAPER, Throw.SCISSORS
CH, DE = Side.CHALLENGER, Side.DEFENDER


def helen(**changes: object) -> Combatant:
    """Helen, a Black Fury: 7 Physical Traits, 2 Social, Negative Physical *Clumsy*."""
    traits = (
        TraitHolding("Ferocious", PHYSICAL, 1),
        TraitHolding("Quick", PHYSICAL, 3),
        TraitHolding("Brawny", PHYSICAL, 3),
        TraitHolding("Alluring", SOCIAL, 2),
        TraitHolding("Clumsy", PHYSICAL, 1, negative=True),
    )
    fields: dict = {"character_id": 1, "name": "Helen", "traits": traits}
    fields.update(changes)
    return Combatant(**fields)


def grady(**changes: object) -> Combatant:
    """Grady, a Bone Gnawer: 5 Physical Traits."""
    traits = (
        TraitHolding("Resilient", PHYSICAL, 1),
        TraitHolding("Wiry", PHYSICAL, 2),
        TraitHolding("Tough", PHYSICAL, 2),
        TraitHolding("Lame", PHYSICAL, 1, negative=True),
    )
    fields: dict = {"character_id": 2, "name": "Grady", "traits": traits}
    fields.update(changes)
    return Combatant(**fields)


def opened(*, is_attack: bool = False, challenger: Combatant | None = None) -> ChallengeState:
    return open_opposed(
        ruleset="met_classic",
        challenger=challenger or helen(),
        defender=grady(),
        category=PHYSICAL,
        bids=["Ferocious"],
        is_attack=is_attack,
        stakes="I sink my teeth into your shoulder",
        now=100.0,
    ).state


def at_throws(*, is_attack: bool = False) -> ChallengeState:
    return respond(opened(is_attack=is_attack), bids=["Resilient"], now=110.0).state


def thrown(state: ChallengeState, mine: Throw, theirs: Throw, now: float = 120.0) -> Transition:
    state = throw(state, side=CH, throw=mine, now=now).state
    return throw(state, side=DE, throw=theirs, now=now + 1)


def at_tie(*, is_attack: bool = False) -> ChallengeState:
    state = thrown(at_throws(is_attack=is_attack), R, R).state
    assert state.stage is Stage.DECLARE_CHALLENGER
    return state


def resolved() -> ChallengeState:
    return thrown(at_throws(), R, S).state


def kinds(transition: Transition) -> list[str]:
    return [event.kind for event in transition.events]


# --- the worked example ----------------------------------------------------------


def test_helen_and_grady() -> None:
    """seeds/000 "Testing", Example of Play: Helen (7 Physical) bids Ferocious
    against Grady (5 Physical), who bids Resilient; both throw rock; Helen
    declares 7, Grady 5: Grady loses Resilient and one health level."""
    events: list[str] = []
    t = open_opposed(
        ruleset="met_classic",
        challenger=helen(),
        defender=grady(),
        category=PHYSICAL,
        bids=["Ferocious"],
        is_attack=True,
        stakes="I am Ferocious as I sink my teeth into your shoulder",
        now=1.0,
    )
    events += kinds(t)
    assert t.state.waiting_on is DE
    t = respond(t.state, bids=["Resilient"], now=2.0)
    events += kinds(t)
    t = throw(t.state, side=CH, throw=R, now=3.0)
    events += kinds(t)
    t = throw(t.state, side=DE, throw=R, now=4.0)
    events += kinds(t)
    assert t.state.current_test is not None and t.state.current_test.tie
    t = declare(t.state, side=CH, count=7, now=5.0)
    events += kinds(t)
    t = declare(t.state, side=DE, count=5, now=6.0)
    events += kinds(t)

    state = t.state
    assert state.outcome is Outcome.CHALLENGER_WINS
    assert state.losses == (Loss(2, "Resilient", PHYSICAL),)
    assert state.wounds == (2,)
    assert HealthLevel(grady().health).worse() is HealthLevel.BRUISED
    assert state.stage is Stage.RESOLVED and state.stage_since == 6.0
    assert state.tests[0].winner is CH
    assert (state.tests[0].challenger_declared, state.tests[0].defender_declared) == (7, 5)
    assert events == [
        "opened",
        "bid",
        "responded",
        "threw",
        "threw",
        "revealed",
        "tied",
        "declared",
        "declared",
        "compared",
        "resolved",
    ]
    assert t.events[-1].data == {
        "outcome": "challenger_wins",
        "losses": [[2, "Resilient", "physical"]],
        "wounds": [2],
    }


# --- throws ---------------------------------------------------------------------

THROW_TABLE = [
    (R, S, Outcome.CHALLENGER_WINS),
    (S, P, Outcome.CHALLENGER_WINS),
    (P, R, Outcome.CHALLENGER_WINS),
    (S, R, Outcome.DEFENDER_WINS),
    (P, S, Outcome.DEFENDER_WINS),
    (R, P, Outcome.DEFENDER_WINS),
    (R, R, None),
    (P, P, None),
    (S, S, None),
]


def _throw_id(row: tuple) -> str:
    mine, theirs, outcome = row
    if outcome is None:
        return f"challenger {mine.value} against {theirs.value} is a tie"
    who = "challenger" if outcome is Outcome.CHALLENGER_WINS else "defender"
    return f"challenger {mine.value} against {theirs.value}: the {who} wins"


@pytest.mark.parametrize(
    ("mine", "theirs", "outcome"), THROW_TABLE, ids=[_throw_id(r) for r in THROW_TABLE]
)
def test_an_opposed_test(mine: Throw, theirs: Throw, outcome: Outcome | None) -> None:
    t = thrown(at_throws(is_attack=True), mine, theirs, now=500.0)
    state = t.state
    test = state.tests[0]
    assert test.revealed
    if outcome is None:
        assert test.tie and test.winner is None
        assert state.stage is Stage.DECLARE_CHALLENGER and state.outcome is None
        assert state.stage_since == 501.0
        assert kinds(t) == ["threw", "revealed", "tied"]
        return
    assert state.outcome is outcome and state.stage is Stage.RESOLVED
    loser, loser_id, bid_ = (
        (DE, 2, "Resilient") if outcome is Outcome.CHALLENGER_WINS else (CH, 1, "Ferocious")
    )
    assert test.winner is loser.other and not test.tie
    assert state.losses == (Loss(loser_id, bid_, PHYSICAL),)
    assert state.wounds == (loser_id,)
    assert kinds(t) == ["threw", "revealed", "resolved"]


@pytest.mark.parametrize("first", [CH, DE], ids=["challenger throws first", "defender first"])
def test_either_side_may_throw_first_and_the_other_is_then_awaited(first: Side) -> None:
    state = at_throws()
    assert state.waiting_on == (CH, DE)
    t = throw(state, side=first, throw=P, now=130.0)
    assert t.state.waiting_on == (first.other,)
    assert t.state.stage_since == 110.0  # still THROWS
    assert not t.state.current_test.revealed  # type: ignore[union-attr]
    assert t.events[0].data == {"side": first.value}


def test_without_an_attack_nobody_is_wounded() -> None:
    state = thrown(at_throws(is_attack=False), R, S).state
    assert state.losses == (Loss(2, "Resilient", PHYSICAL),)
    assert state.wounds == ()


# --- relent ---------------------------------------------------------------------


@pytest.mark.parametrize("answer", [None, []], ids=["no bid relents", "an empty bid relents"])
@pytest.mark.parametrize(
    ("is_attack", "wounds"),
    [(False, ()), (True, (2,))],
    ids=["outside an attack nobody is hurt", "in an attack the defender takes a wound"],
)
def test_the_defender_relents_and_loses_at_once(
    answer: list[str] | None, is_attack: bool, wounds: tuple[int, ...]
) -> None:
    t = respond(opened(is_attack=is_attack), bids=answer, now=200.0)
    state = t.state
    assert state.outcome is Outcome.CHALLENGER_WINS
    assert state.relented and state.stage is Stage.RESOLVED and state.stage_since == 200.0
    assert state.losses == ()  # nothing of hers was bid; the challenger's bid is safe
    assert state.wounds == wounds
    assert state.tests == ()
    assert kinds(t) == ["relented", "resolved"]
    assert t.events[0].data == {"side": "defender"}


# --- declarations ---------------------------------------------------------------

DECLARATIONS = [
    ("both declare their full count by default", None, None, Outcome.CHALLENGER_WINS, (7, 5)),
    ("the challenger declares fewer and loses", 4, None, Outcome.DEFENDER_WINS, (4, 5)),
    ("the defender declares fewer and loses", None, 3, Outcome.CHALLENGER_WINS, (7, 3)),
    ("both declare zero: a draw", 0, 0, Outcome.DRAW, (0, 0)),
    ("equal counts are a draw", 5, None, Outcome.DRAW, (5, 5)),
]


@pytest.mark.parametrize(
    ("mine", "theirs", "outcome", "declared"),
    [row[1:] for row in DECLARATIONS],
    ids=[row[0] for row in DECLARATIONS],
)
def test_a_tie_is_settled_by_declared_counts(
    mine: int | None, theirs: int | None, outcome: Outcome, declared: tuple[int, int]
) -> None:
    state = at_tie(is_attack=True)
    assert state.waiting_on is CH
    t1 = declare(state, side=CH, count=mine, now=300.0)
    assert t1.state.stage is Stage.DECLARE_DEFENDER and t1.state.stage_since == 300.0
    assert t1.state.waiting_on is DE
    assert t1.events[0].data == {"side": "challenger", "count": declared[0]}
    t2 = declare(t1.state, side=DE, count=theirs, now=301.0)
    state = t2.state
    test = state.tests[0]
    assert (test.challenger_declared, test.defender_declared) == declared
    assert state.outcome is outcome
    assert kinds(t2) == ["declared", "compared", "resolved"]
    if outcome is Outcome.DRAW:
        assert test.winner is None
        assert set(state.losses) == {Loss(1, "Ferocious", PHYSICAL), Loss(2, "Resilient", PHYSICAL)}
        assert state.wounds == ()  # a draw wounds nobody
    elif outcome is Outcome.CHALLENGER_WINS:
        assert state.losses == (Loss(2, "Resilient", PHYSICAL),) and state.wounds == (2,)
    else:
        assert state.losses == (Loss(1, "Ferocious", PHYSICAL),) and state.wounds == (1,)


def test_a_draw_costs_both_sides_their_bids() -> None:
    """seeds/000 "Testing": "If both players declare the same number of Traits,
    then the challenge is a draw and both players lose the Traits they bid"."""
    state = declare(at_tie(), side=CH, count=5, now=1.0).state
    state = declare(state, side=DE, count=5, now=2.0).state
    assert state.outcome is Outcome.DRAW
    assert state.losses == (Loss(1, "Ferocious", PHYSICAL), Loss(2, "Resilient", PHYSICAL))


def test_the_default_declaration_uses_the_refreshed_count() -> None:
    """The service refreshes pools before each move: a Trait lost elsewhere
    meanwhile lowers what she can declare."""
    state = at_tie()
    poorer = helen(
        traits=(TraitHolding("Ferocious", PHYSICAL, 1), TraitHolding("Quick", PHYSICAL, 1))
    )
    state = state.with_combatants(poorer, state.defender)
    t = declare(state, side=CH, now=1.0)
    assert t.state.tests[0].challenger_declared == 2
    with pytest.raises(RulesError, match=re.escape("more Traits than you have (2)")):
        declare(state, side=CH, count=3, now=1.0)


def test_with_combatants_refuses_a_different_character() -> None:
    state = at_tie()
    with pytest.raises(ValueError):
        state.with_combatants(grady(), helen())
    with pytest.raises(ValueError):
        state.with_combatants(helen(), None)


# --- void -----------------------------------------------------------------------

VOIDABLE: list[tuple[str, Callable[[], ChallengeState]]] = [
    ("a narrator voids a challenge awaiting its answer", opened),
    ("a narrator voids a challenge awaiting throws", at_throws),
    (
        "a narrator voids a challenge after one throw",
        lambda: throw(at_throws(), side=CH, throw=R, now=1.0).state,
    ),
    ("a narrator voids a challenge awaiting declarations", lambda: at_tie(is_attack=True)),
]


@pytest.mark.parametrize("make", [row[1] for row in VOIDABLE], ids=[row[0] for row in VOIDABLE])
def test_void(make: Callable[[], ChallengeState]) -> None:
    t = void(make(), reason="They agreed to call it off.", now=900.0)
    state = t.state
    assert state.outcome is Outcome.VOID and state.stage is Stage.RESOLVED
    assert state.losses == () and state.wounds == () and state.stage_since == 900.0
    assert kinds(t) == ["voided", "resolved"]
    assert t.events[0].data == {"reason": "They agreed to call it off."}


# --- refused moves ----------------------------------------------------------------


def _open(**changes: object) -> Callable[[], object]:
    fields: dict = {
        "ruleset": "met_classic",
        "challenger": helen(),
        "defender": grady(),
        "category": PHYSICAL,
        "bids": ["Ferocious"],
        "now": 1.0,
    }
    fields.update(changes)
    return lambda: open_opposed(**fields)


def _holding(count: int, at_risk: int = 0) -> Combatant:
    return helen(traits=(TraitHolding("Ferocious", PHYSICAL, count, at_risk=at_risk),))


REFUSED: list[tuple[str, Callable[[], object], str]] = [
    (
        "bidding a Trait you lack is refused",
        _open(bids=["Mighty"]),
        "You have no Physical Trait 'Mighty' left to bid tonight.",
    ),
    (
        "bidding a Trait you lost tonight is refused",
        _open(challenger=_holding(0)),
        "You have no Physical Trait 'Ferocious' left to bid tonight.",
    ),
    (
        "bidding a Trait at risk in another challenge is refused",
        _open(challenger=_holding(1, at_risk=1)),
        "Your 'Ferocious' is already at risk in another challenge.",
    ),
    (
        "bidding a Trait of the wrong category is refused",
        _open(bids=["Alluring"]),
        "'Alluring' is a Social Trait; this is a Physical challenge.",
    ),
    (
        "bidding a Negative Trait is refused",
        _open(bids=["Clumsy"]),
        "'Clumsy' is a Negative Trait; you cannot bid it.",
    ),
    (
        "bidding two Traits when one is due is refused",
        _open(bids=["Quick", "Brawny"]),
        "You must bid 1 Trait, not 2.",
    ),
    ("opening with no bid is refused", _open(bids=[]), "You must bid 1 Trait, not 0."),
    ("challenging yourself is refused", _open(defender=helen()), "You cannot challenge yourself."),
    (
        "an incapacitated character cannot challenge",
        _open(challenger=helen(health=HealthLevel.INCAPACITATED)),
        "You are incapacitated and cannot enter challenges.",
    ),
    ("an unknown ruleset is refused", _open(ruleset="calvinball"), "Unknown ruleset 'calvinball'."),
    (
        "the defender bidding a Trait she lacks is refused",
        lambda: respond(opened(), bids=["Ferocious"], now=1.0),
        "You have no Physical Trait 'Ferocious' left to bid tonight.",
    ),
    (
        "the defender bidding a Negative Trait is refused",
        lambda: respond(opened(), bids=["Lame"], now=1.0),
        "'Lame' is a Negative Trait; you cannot bid it.",
    ),
    (
        "answering twice is refused",
        lambda: respond(at_throws(), bids=["Wiry"], now=1.0),
        "It is not time to answer a challenge.",
    ),
    (
        "a static bid in an opposed challenge is refused",
        lambda: static_bid(opened(), bids=["Quick"], now=1.0),
        "It is not time to bid.",
    ),
    (
        "throwing before the defender answers is refused",
        lambda: throw(opened(), side=CH, throw=R, now=1.0),
        "It is not time to throw.",
    ),
    (
        "throwing twice is refused",
        lambda: throw(
            throw(at_throws(), side=DE, throw=R, now=1.0).state, side=DE, throw=P, now=2.0
        ),
        "You have already thrown.",
    ),
    (
        "throwing during declarations is refused",
        lambda: throw(at_tie(), side=CH, throw=R, now=1.0),
        "It is not time to throw.",
    ),
    (
        "throwing after the challenge is over is refused",
        lambda: throw(resolved(), side=CH, throw=R, now=1.0),
        "This challenge is over.",
    ),
    (
        "throwing something else than rock, paper or scissors is refused",
        lambda: throw(at_throws(), side=CH, throw="lizard", now=1.0),  # type: ignore[arg-type]
        "Throw Rock, Paper or Scissors.",
    ),
    (
        "declaring before a tie is refused",
        lambda: declare(at_throws(), side=CH, count=3, now=1.0),
        "There is no tie to declare Traits for.",
    ),
    (
        "the defender declaring first is refused",
        lambda: declare(at_tie(), side=DE, count=5, now=1.0),
        "The challenger declares first.",
    ),
    (
        "the challenger declaring twice is refused",
        lambda: declare(declare(at_tie(), side=CH, now=1.0).state, side=CH, now=2.0),
        "You have already declared.",
    ),
    (
        "declaring more Traits than you have is refused",
        lambda: declare(at_tie(), side=CH, count=8, now=1.0),
        "You cannot declare more Traits than you have (7).",
    ),
    (
        "declaring a negative count is refused",
        lambda: declare(at_tie(), side=CH, count=-1, now=1.0),
        "You cannot declare fewer than zero Traits.",
    ),
    (
        "declaring after the challenge is over is refused",
        lambda: declare(resolved(), side=CH, count=1, now=1.0),
        "This challenge is over.",
    ),
    (
        "answering after the challenge is over is refused",
        lambda: respond(resolved(), bids=None, now=1.0),
        "This challenge is over.",
    ),
    (
        "voiding a challenge that is over is refused",
        lambda: void(resolved(), reason="too late", now=1.0),
        "This challenge is over.",
    ),
]


@pytest.mark.parametrize(
    ("move", "message"), [row[1:] for row in REFUSED], ids=[row[0] for row in REFUSED]
)
def test_refused_move(move: Callable[[], object], message: str) -> None:
    with pytest.raises(RulesError) as refused:
        move()
    assert str(refused.value) == message


def test_a_defender_of_any_health_may_be_challenged() -> None:
    t = open_opposed(
        ruleset="met_classic",
        challenger=helen(),
        defender=grady(health=HealthLevel.INCAPACITATED),
        category=PHYSICAL,
        bids=["Ferocious"],
        is_attack=True,
        now=1.0,
    )
    assert t.state.stage is Stage.RESPONSE and t.state.kind is Kind.OPPOSED


def test_bids_are_stored_under_the_traits_own_names() -> None:
    state = open_opposed(
        ruleset="met_classic",
        challenger=helen(),
        defender=grady(),
        category=PHYSICAL,
        bids=["  ferocious "],
        now=1.0,
    ).state
    assert state.challenger_bids == ("Ferocious",)


def test_a_trait_held_twice_can_be_bid_while_one_copy_is_at_risk_elsewhere() -> None:
    challenger = helen(traits=(TraitHolding("Quick", PHYSICAL, 2, at_risk=1),))
    assert challenger.free("Quick", PHYSICAL) == 1
    t = open_opposed(
        ruleset="met_classic",
        challenger=challenger,
        defender=grady(),
        category=PHYSICAL,
        bids=["Quick"],
        now=1.0,
    )
    assert t.state.challenger_bids == ("Quick",)
