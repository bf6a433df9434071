"""Properties of every ``bns`` challenge, checked with Hypothesis over random
fighters, random attacks and random move sequences (legal and not):
pools never negative, Willpower never below zero, exceptional success only
when its conditions hold, at most one retest, lossless to_dict/from_dict,
and illegal moves refused with RulesError, changing nothing."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from challenges.rules import bns
from challenges.rules.bns import (
    BnsChallengeState,
    BnsStage,
    Fighter,
    Maneuver,
    Payment,
    PhysicalFocus,
    Result,
    RulesError,
    Side,
    Throw,
    WoundTrack,
)

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NOW = 1000.0
PAYMENTS = [Payment.WILLPOWER, Payment.WILLPOWER, Payment.FOCUS, Payment.ASSIST]


@st.composite
def fighters(draw: st.DrawFn, cid: int) -> Fighter:
    wp = draw(st.integers(0, 5))
    return Fighter(
        name=f"F{cid}",
        physical=draw(st.integers(0, 8)),
        social=draw(st.integers(0, 8)),
        mental=draw(st.integers(0, 8)),
        skills={
            s: draw(st.integers(0, 5)) for s in ("Brawl", "Melee", "Firearms", "Dodge", "Occult")
        },
        willpower=wp,
        willpower_max=wp + draw(st.integers(0, 3)),
        focus=draw(st.none() | st.sampled_from(PhysicalFocus)),
        stock_npc=draw(st.booleans()),
        wound_track=draw(st.sampled_from(WoundTrack)),
        knockout_immune=draw(st.booleans()),
        mortal=draw(st.booleans()),
        free_maneuver_used=draw(st.booleans()),
        character_id=cid,
    )


@st.composite
def openings(draw: st.DrawFn) -> dict[str, Any]:
    attack = draw(st.sampled_from(bns.AttackKind))
    kw: dict[str, Any] = {
        "attacker": draw(fighters(1)),
        "defender": draw(fighters(2)),
        "attack": attack,
        "now": NOW,
        "maneuvers": draw(
            st.lists(st.tuples(st.sampled_from(Maneuver), st.sampled_from(PAYMENTS)), max_size=2)
        ),
        "surprise": draw(st.booleans()),
        "first_round": draw(st.booleans()),
        "assist": draw(st.none() | st.sampled_from(bns.Assist)),
        "defence_assist": draw(st.booleans()),
        "staking": draw(st.booleans()),
        "escape": draw(st.sampled_from([False, False, False, True])),
        "attacker_blind": draw(st.sampled_from([False, False, False, True])),
        "attacker_modifiers": draw(
            st.lists(st.tuples(st.just("m"), st.integers(-9, 3)), max_size=2)
        ),
        "defender_modifiers": draw(
            st.lists(st.tuples(st.just("m"), st.integers(-9, 3)), max_size=2)
        ),
    }
    if not attack.physical:
        kw["power"] = "Dominate"
        kw["power_skill"] = draw(st.sampled_from(["", "Occult"]))
        kw["defences"] = draw(
            st.none() | st.lists(st.sampled_from(bns.Defence), min_size=1, max_size=3)
        )
    return kw


MOVES = st.one_of(
    st.tuples(st.just("answer"), st.none() | st.sampled_from(bns.Defence)),
    st.tuples(st.just("throw"), st.sampled_from(Side), st.sampled_from(Throw)),
    st.tuples(st.just("retest"), st.sampled_from(Side)),
    st.tuples(st.just("accept"), st.sampled_from(Side)),
    st.tuples(st.just("void")),
    st.tuples(st.just("settle"), st.sampled_from(Side)),
)


def apply(state: BnsChallengeState, move: tuple[Any, ...]) -> bns.BnsTransition:
    kind = move[0]
    if kind == "answer":
        return bns.answer(state, defence=move[1], now=NOW)
    if kind == "throw":
        return bns.throw(state, side=move[1], throw=move[2], now=NOW)
    if kind == "retest":
        return bns.retest(state, side=move[1], now=NOW)
    if kind == "accept":
        return bns.accept(state, side=move[1], now=NOW)
    if kind == "void":
        return bns.void(state, reason="ruled", now=NOW)
    return bns.settle(state, winner=move[1], reason="ruled", now=NOW)


def listed(state: BnsChallengeState, move: tuple[Any, ...]) -> bool:
    """``legal_moves`` lists ``move`` (the narrator's void and settle: any
    stage but RESOLVED)."""
    kind = move[0]
    if kind in ("void", "settle"):
        return state.stage is not BnsStage.RESOLVED
    if kind == "answer":
        moves = bns.legal_moves(state, Side.DEFENDER)
        if not moves.answer:
            return False
        return (move[1] is None and len(moves.defences) == 1) or move[1] in moves.defences
    moves = bns.legal_moves(state, move[1])
    return bool(getattr(moves, kind))


def check(state: BnsChallengeState, settled: bool) -> None:
    """The invariants of every reachable state."""
    for side in Side:
        pool = state.pool(side)
        assert pool is None or pool >= 0
        assert state.willpower_left(side) >= 0
        assert state.willpower_spent(side) <= state.fighter(side).willpower
        assert state.fighter_after(side).willpower >= 0
    assert sum(1 for t in state.tests if t.retest_by is not None) <= 1
    assert len(state.tests) <= 2
    assert state.damage >= 0
    if state.result is Result.EXCEPTIONAL:
        assert all(t.outright for t in state.tests)
        assert (state.attacker_pool or 0) > (state.defender_pool or 0)
    if (
        state.result is Result.SUCCESS
        and not settled
        and state.tests
        and all(t.outright for t in state.tests)
    ):
        assert (state.attacker_pool or 0) <= (state.defender_pool or 0)
    if state.result is Result.FAILURE or state.result is Result.VOID:
        assert state.damage == 0 and state.effects == ()
    wire = json.loads(json.dumps(state.to_dict()))
    assert BnsChallengeState.from_dict(wire) == state


@SETTINGS
@given(openings(), st.lists(MOVES, max_size=14))
def test_any_sequence_of_moves_keeps_the_rules(kw: dict[str, Any], moves: list[Any]) -> None:
    try:
        state = bns.open_challenge(**kw).state
    except RulesError:
        return
    settled = False
    check(state, settled)
    for move in moves:
        before = state.to_dict()
        legal = listed(state, move)
        try:
            step = apply(state, move)
        except RulesError:
            assert not legal, move
            assert state.to_dict() == before
            continue
        assert legal, move
        settled = settled or move[0] == "settle"
        state = step.state
        check(state, settled)


@SETTINGS
@given(openings(), st.data())
def test_legal_play_always_reaches_a_result(kw: dict[str, Any], data: st.DataObject) -> None:
    try:
        state = bns.open_challenge(**kw).state
    except RulesError:
        return
    for _ in range(8):
        if state.stage is BnsStage.RESOLVED:
            break
        options: list[tuple[Any, ...]] = []
        for side in Side:
            moves = bns.legal_moves(state, side)
            options += [("answer", d) for d in moves.defences if moves.answer]
            options += [("throw", side, t) for t in Throw if moves.throw]
            options += [("retest", side)] if moves.retest else []
            options += [("accept", side)] if moves.accept else []
        assert options, state.stage
        state = apply(state, data.draw(st.sampled_from(options))).state
        check(state, False)
    assert state.stage is BnsStage.RESOLVED and state.result is not None


@SETTINGS
@given(fighters(1), st.sampled_from(bns.AttackKind), st.integers(-20, 5))
def test_attack_pools_are_never_negative(f: Fighter, attack: bns.AttackKind, mod: int) -> None:
    assert bns.test_pool(f, attack=attack, modifiers=[("m", mod)]) >= 0


@SETTINGS
@given(fighters(1), st.sampled_from(bns.Defence), st.integers(-20, 5))
def test_defence_pools_are_never_negative(f: Fighter, defence: bns.Defence, mod: int) -> None:
    assert bns.test_pool(f, defence=defence, modifiers=[("m", mod)]) >= 0


@SETTINGS
@given(fighters(1))
def test_fighters_round_trip(f: Fighter) -> None:
    assert Fighter.from_dict(json.loads(json.dumps(f.to_dict()))) == f


@SETTINGS
@given(
    attacker=fighters(1),
    attack=st.sampled_from(bns.AttackKind),
    power_skill=st.sampled_from(["", "Brawl", "Firearms", "Occult", "Stealth"]),
)
def test_an_attack_opens_exactly_when_her_sheet_has_the_skill_its_pool_adds(
    attacker: Fighter, attack: bns.AttackKind, power_skill: str
) -> None:
    # Whatever a frame names, the pool never adds a Skill rated 0 or absent
    # (Stealth is on no sheet drawn here); brawl needs none.
    power = "" if attack.physical else "Dominate"
    skill = bns.attack_skill(attack, bns.BNS.thrown_skill, power_skill)
    allowed = attack is bns.AttackKind.BRAWL or not skill or attacker.skill(skill) > 0
    defender = Fighter(name="D", physical=1, social=1, mental=1, character_id=2)
    try:
        bns.open_challenge(
            attacker=attacker,
            defender=defender,
            attack=attack,
            power=power,
            power_skill=power_skill,
            now=NOW,
        )
    except RulesError as refused:
        assert not allowed, refused
        assert f"has no {skill}" in str(refused)
    else:
        assert allowed
