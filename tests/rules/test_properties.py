"""Properties of every challenge, checked with Hypothesis over random Trait
pools and random move sequences: legal ones (played to the end) and arbitrary
ones (refused with RulesError or applied)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import msgpack
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from challenges.rules import (
    Category,
    ChallengeState,
    Combatant,
    Event,
    HealthLevel,
    Kind,
    Outcome,
    RulesError,
    Side,
    Stage,
    Throw,
    TraitHolding,
    Transition,
    accept,
    bid,
    declare,
    open_opposed,
    open_simple,
    open_static,
    respond,
    throw,
    void,
)

NAMES = {
    Category.PHYSICAL: ["Ferocious", "Quick", "Brawny", "Resilient"],
    Category.SOCIAL: ["Alluring", "Persuasive", "Commanding"],
    Category.MENTAL: ["Cunning", "Wise", "Clever"],
}
NEGATIVES = ["Clumsy", "Tactless", "Forgetful"]
THROWS = st.sampled_from(list(Throw))
MAX_MOVES = 40
MAX_FUZZ_MOVES = 20

PROPERTY = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much]
)


@st.composite
def pools(draw: st.DrawFn, character_id: int, rich: bool = False) -> Combatant:
    """A random character: 0–3 copies of some Traits per category, some at
    risk elsewhere, maybe a Negative Trait, health Healthy to Wounded.
    ``rich``: every category holds a Trait with a free copy."""
    traits: list[TraitHolding] = []
    for category, names in NAMES.items():
        size = 1 if rich else 0
        for name in draw(st.lists(st.sampled_from(names), unique=True, min_size=size)):
            count = draw(st.integers(size, 3))
            at_risk = draw(st.integers(0, count - size))
            traits.append(TraitHolding(name, category, count, at_risk))
    for name in draw(st.lists(st.sampled_from(NEGATIVES), unique=True, max_size=2)):
        traits.append(TraitHolding(name, draw(st.sampled_from(list(Category))), 1, negative=True))
    # Healthy only: wound rules (two bids, lost ties, free tests) are walked
    # by the state machine in test_machine.py.
    health = HealthLevel.HEALTHY
    return Combatant(character_id, f"C{character_id}", tuple(traits), health)


def free_names(who: Combatant, category: Category) -> list[str]:
    return sorted({t.name for t in who.traits if who.free(t.name, category) > 0})


def check_events(events: list[Event]) -> None:
    """Events hold only JSON primitives, and "threw" never says what was thrown."""
    for event in events:
        assert json.loads(json.dumps(event.data)) == event.data
        if event.kind == "threw":
            assert set(event.data) == {"side"}
            assert event.data["side"] in ("challenger", "defender")
            assert not {t.value for t in Throw} & set(map(str, event.data.values()))


def check_state(state: ChallengeState) -> None:
    """Invariants of any reachable state."""
    as_json = ChallengeState.from_dict(json.loads(json.dumps(state.to_dict())))
    as_msgpack = ChallengeState.from_dict(msgpack.unpackb(msgpack.packb(state.to_dict())))
    assert as_json == state == as_msgpack
    assert (state.stage is Stage.RESOLVED) == (state.outcome is not None)
    if state.stage is not Stage.RESOLVED:
        assert state.losses == () and state.wounds == ()
    if state.kind is not Kind.OPPOSED:
        assert state.defender is None and state.defender_bids == ()
        assert state.tests and state.tests[0].defender_throw is not None


def check_resolution(state: ChallengeState) -> None:
    """Only bid Traits are lost, only by the loser(s); counts stay ≥ 0 (and
    ≥ the copies at risk elsewhere); wounds only in attacks, for the loser."""
    assert state.stage is Stage.RESOLVED and state.outcome is not None
    sides = {state.challenger.character_id: Side.CHALLENGER}
    if state.defender is not None:
        sides[state.defender.character_id] = Side.DEFENDER
    lost: Counter[tuple[int, str]] = Counter((x.character_id, x.trait) for x in state.losses)
    for (character_id, name), n in lost.items():
        side = sides[character_id]
        assert Counter(state.bids_of(side))[name] >= n
    assert all(x.category is state.category for x in state.losses)
    losers = {
        Outcome.CHALLENGER_WINS: {Side.DEFENDER},
        Outcome.DEFENDER_WINS: {Side.CHALLENGER},
        Outcome.DRAW: {Side.CHALLENGER, Side.DEFENDER},
        Outcome.VOID: set(),
    }[state.outcome]
    for character_id, side in sides.items():
        who = state.combatant(side)
        assert who is not None
        mine = Counter(name for (cid, name) in lost.elements() if cid == character_id)
        if side in losers:
            assert mine == Counter(state.bids_of(side))
        else:
            assert not mine
        for t in who.traits:
            if t.category is state.category and not t.negative:
                left = t.count - mine[t.name]
                assert left >= 0
                assert left >= t.at_risk  # copies bid elsewhere are still there to lose
        wounded = character_id in state.wounds
        expected = state.is_attack and side in losers and state.outcome is not Outcome.DRAW
        assert wounded == expected
    assert len(state.wounds) == len(set(state.wounds))


@st.composite
def openings(draw: st.DrawFn, rich: bool = False) -> Transition:
    """A legal opening of any kind, with random pools (``rich``: see pools)."""
    kind = draw(st.sampled_from([Kind.OPPOSED, Kind.OPPOSED, Kind.STATIC, Kind.SIMPLE]))
    challenger = draw(pools(1, rich))
    now = draw(st.floats(0, 2e9, allow_nan=False))
    if kind is Kind.SIMPLE:
        narrator = draw(st.none() | THROWS)
        return open_simple(
            ruleset="met_classic",
            challenger=challenger,
            narrator_throw=narrator,
            choose=lambda options: draw(st.sampled_from(list(options))),
            now=now,
        )
    category = draw(st.sampled_from(list(Category)))
    if kind is Kind.STATIC:
        return open_static(
            ruleset="met_classic",
            challenger=challenger,
            category=category,
            difficulty=draw(st.integers(1, 12)),
            narrator_throw=draw(st.none() | THROWS),
            choose=lambda options: draw(st.sampled_from(list(options))),
            now=now,
        )
    free = free_names(challenger, category)
    assume(free)
    return open_opposed(
        ruleset="met_classic",
        challenger=challenger,
        defender=draw(pools(2, rich)),
        category=category,
        bids=[draw(st.sampled_from(free))],
        is_attack=draw(st.booleans()),
        stakes=draw(st.text(max_size=20)),
        now=now,
    )


def legal_move(data: st.DataObject, state: ChallengeState, now: float) -> Transition:
    """One legal move for ``state``, chosen by Hypothesis (sometimes a void)."""
    if data.draw(st.integers(0, 24)) == 13:  # a middle value: Hypothesis favours the ends
        return void(state, reason=data.draw(st.text(max_size=10)), now=now)
    stage = state.stage
    if stage in (Stage.RESPONSE, Stage.BID):
        who = state.defender if stage is Stage.RESPONSE else state.challenger
        assert who is not None and state.category is not None
        free = free_names(who, state.category)
        relent = not free or data.draw(st.integers(0, 4)) == 2
        bids = None if relent else [data.draw(st.sampled_from(free))]
        move = respond if stage is Stage.RESPONSE else bid
        return move(state, bids=bids, now=now)
    if stage is Stage.THROWS:
        waiting = state.waiting_on
        assert isinstance(waiting, tuple) and waiting
        side = data.draw(st.sampled_from(waiting))
        return throw(state, side=side, throw=data.draw(THROWS), now=now)
    if stage is Stage.RETEST:
        assert state.retest_side is not None
        return accept(state, side=state.retest_side, now=now)
    side = Side.CHALLENGER if stage is Stage.DECLARE_CHALLENGER else Side.DEFENDER
    who = state.combatant(side)
    assert who is not None and state.category is not None
    count = data.draw(st.none() | st.integers(0, who.count(state.category)))
    return declare(state, side=side, count=count, now=now)


@PROPERTY
@given(opening=st.booleans().flatmap(openings), data=st.data())
def test_legal_play_ends_in_exactly_one_outcome(opening: Transition, data: st.DataObject) -> None:
    state = opening.state
    events = list(opening.events)
    now = state.stage_since
    check_state(state)
    for _ in range(MAX_MOVES):
        if state.stage is Stage.RESOLVED:
            break
        now += data.draw(st.floats(0, 60, allow_nan=False))
        before = state
        t = legal_move(data, state, now)
        state = t.state
        events += t.events
        check_state(state)
        assert state.stage_since == (now if state.stage is not before.stage else before.stage_since)
    assert state.stage is Stage.RESOLVED, "a challenge without retests ends within a few moves"
    check_resolution(state)
    check_events(events)
    assert [e.kind for e in events].count("resolved") == 1
    assert events[-1].kind == "resolved"
    assert events[-1].data["outcome"] == state.outcome.value  # type: ignore[union-attr]
    assert events[-1].data["losses"] == [
        [x.character_id, x.trait, x.category.value] for x in state.losses
    ]
    reveals = [e for e in events if e.kind == "revealed"]
    assert len(reveals) == sum(t.revealed for t in state.tests)


def any_move(data: st.DataObject, state: ChallengeState, now: float) -> Transition:
    """Any move at all, legal or not, with plausible and implausible arguments
    (weighted so that challenges often get past the bids)."""
    every = [n for names in NAMES.values() for n in names] + NEGATIVES + ["Nobody's"]
    plausible = [
        name
        for who in (state.challenger, state.defender)
        if who is not None and state.category is not None
        for name in free_names(who, state.category)
    ]
    names = st.sampled_from(plausible) if plausible else st.sampled_from(every)
    bids: Any = None
    if data.draw(st.integers(0, 9)) != 5:
        bids = data.draw(st.lists(names | st.sampled_from(every), min_size=1, max_size=2))
    choice = data.draw(st.integers(0, 19))
    side = data.draw(st.sampled_from(list(Side)))
    if choice == 10:  # a middle value: Hypothesis favours the ends
        return void(state, reason="ruling", now=now)
    if choice < 4:
        return respond(state, bids=bids, now=now)
    if choice < 8:
        return bid(state, bids=bids, now=now)
    if choice < 14:
        return throw(state, side=side, throw=data.draw(THROWS), now=now)
    count = data.draw(st.none() | st.integers(-2, 12))
    return declare(state, side=side, count=count, now=now)


@PROPERTY
@given(opening=openings(rich=True), data=st.data())
def test_any_move_is_either_refused_or_keeps_every_invariant(
    opening: Transition, data: st.DataObject
) -> None:
    state = opening.state
    events = list(opening.events)
    after_end = 0
    for step in range(MAX_FUZZ_MOVES):
        if state.stage is Stage.RESOLVED:
            after_end += 1
            if after_end > 3:
                break
        snapshot = state.to_dict()
        try:
            t = any_move(data, state, float(step))
        except RulesError as refused:
            assert str(refused) and str(refused)[-1] in ".)"
            assert state.to_dict() == snapshot  # nothing half-changed
            continue
        if state.stage is Stage.RESOLVED:
            raise AssertionError("a resolved challenge accepted a move")
        state = t.state
        events += t.events
        check_state(state)
    check_events(events)
    assert [e.kind for e in events].count("resolved") == (state.stage is Stage.RESOLVED)
    if state.stage is Stage.RESOLVED:
        check_resolution(state)
