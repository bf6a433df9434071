"""Mob scenes (challenges.rules.mob): the seeds' procedure as named tests
under each preset, table tests of the ordering and outcomes, and a property:
every target is settled exactly once and nobody loses a Trait she did not bid.
seeds/000 "The Mob Scene"; seeds/004 "Mob Scenes"."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from challenges.rules import (
    HealthLevel,
    MobOutcome,
    MobScene,
    MobStage,
    RulesError,
    Side,
    Stage,
    accept,
    choose_target,
    close_choosing,
    declare,
    hurt,
    mob_bid,
    modifiers,
    open_mob,
    pick_leader,
    play_test,
    throw,
)
from tests.rules.sheets import LOSE, PHYSICAL, TIE, WIN, character, traits

CH, DE = Side.CHALLENGER, Side.DEFENDER


def fighter(cid: int, name: str, n: int = 6):
    return character(cid, name, traits(PHYSICAL, *(f"T{cid}x{i}" for i in range(n))))


def scene(ruleset: str, n: int = 4, *, is_attack: bool = True, strong: int = 6) -> MobScene:
    """``n`` characters 1..n with ``strong`` Physical Traits each (T<id>x<i>)."""
    people = [fighter(i, f"P{i}", strong) for i in range(1, n + 1)]
    return open_mob(
        ruleset=ruleset, category=PHYSICAL, participants=people, is_attack=is_attack, now=1.0
    ).scene


def chosen(s: MobScene, choices: dict[int, int | None]) -> MobScene:
    for chooser, target in choices.items():
        s = choose_target(s, chooser=chooser, target=target, now=2.0).scene
    return s


def bid_all(s: MobScene, effects: dict[int, int] | None = None) -> MobScene:
    """Every attacker of the current target bids her first Trait (with
    ``effects`` damage), then the defender bids what she must."""
    t = s.target
    assert t is not None
    for a in t.attackers:
        damage = (effects or {}).get(a, 1)
        s = mob_bid(
            s, character=a, bids=[f"T{a}x0"], effect=f"effect of {a}", damage=damage, now=3.0
        ).scene
    need = len(t.attackers) if s.stage is MobStage.BIDS and s.ruleset == "met_classic" else 1
    return mob_bid(
        s, character=t.defender, bids=[f"T{t.defender}x{i}" for i in range(1, need + 1)], now=4.0
    ).scene


def thrown(s: MobScene, throws) -> MobScene:
    t = s.target
    assert t is not None and t.test is not None
    state = throw(t.test, side=CH, throw=throws[0], now=5.0).state
    return play_test(s, throw(state, side=DE, throw=throws[1], now=6.0), now=6.0).scene


def three_on_one(ruleset: str) -> MobScene:
    """P1, P2, P3 all point at P4; P4 points at P1; leader P2; all bid."""
    s = chosen(scene(ruleset), {1: 4, 2: 4, 3: 4, 4: 1})
    s = pick_leader(s, by=1, leader=2, now=2.5).scene
    return bid_all(s)


# --- seeds/000 "The Mob Scene" (met_classic) -------------------------------------


def test_seed000_most_pointed_at_first_and_defender_bids_one_per_attacker() -> None:
    s = chosen(scene("met_classic"), {1: 4, 2: 4, 3: 4, 4: 1})
    assert [t.defender for t in s.targets] == [4, 1]
    assert s.stage is MobStage.LEADER and s.waiting_on == (1, 2, 3)
    s = pick_leader(s, by=3, leader=2, now=2.5).scene
    s = mob_bid(s, character=1, bids=["T1x0"], now=3.0).scene
    with pytest.raises(RulesError, match="3 Traits"):
        mob_bid(s, character=4, bids=["T4x0"], now=3.0)
    s = bid_all_rest(s)
    t = s.target
    assert t is not None and t.test is not None
    assert s.stage is MobStage.TEST and t.test.challenger.character_id == 2
    assert len(t.test.defender_bids) == 3


def bid_all_rest(s: MobScene) -> MobScene:
    t = s.target
    assert t is not None
    for a in t.attackers:
        if t.bid_of(a) is None:
            s = mob_bid(s, character=a, bids=[f"T{a}x0"], now=3.0).scene
    return mob_bid(s, character=4, bids=["T4x1", "T4x2", "T4x3"], now=4.0).scene


def test_seed000_defender_without_enough_traits_loses_at_once() -> None:
    people = [fighter(1, "A"), fighter(2, "B"), fighter(3, "C", 1)]
    s = open_mob(ruleset="met_classic", category=PHYSICAL, participants=people, now=1.0).scene
    s = chosen(s, {1: 3, 2: 3, 3: None})
    (t,) = s.targets
    assert t.outcome is MobOutcome.DEFENDER_GAVE_UP and t.wounds == (3,) and t.losses == ()
    assert s.stage is MobStage.SETTLED
    assert s.who(3).health is HealthLevel.BRUISED


def test_seed000_attackers_win_one_wound_and_she_loses_every_bid_trait() -> None:
    s = thrown(three_on_one("met_classic"), WIN)
    first = s.targets[0]
    assert first.outcome is MobOutcome.ATTACKERS_WIN
    assert first.wounds == (4,)
    assert sorted(x.trait for x in first.losses) == ["T4x1", "T4x2", "T4x3"]
    assert s.target is not None and s.target.defender == 1  # next target


def test_seed000_defender_wins_every_attacker_loses_his_bid_and_she_hurts_one() -> None:
    s = thrown(three_on_one("met_classic"), LOSE)
    first = s.targets[0]
    assert first.outcome is MobOutcome.DEFENDER_WINS
    assert sorted((x.character_id, x.trait) for x in first.losses) == [
        (1, "T1x0"),
        (2, "T2x0"),
        (3, "T3x0"),
    ]
    assert s.stage is MobStage.HURT and s.waiting_on == (4,)
    with pytest.raises(RulesError):
        hurt(s, attacker=4, now=7.0)
    s = hurt(s, attacker=3, now=7.0).scene
    assert s.targets[0].wounds == (3,) and s.who(3).health is HealthLevel.BRUISED
    assert s.target is not None and s.target.defender == 1


def test_seed000_only_the_leader_compares_and_a_draw_costs_everyone_their_bid() -> None:
    s = three_on_one("met_classic")
    t = s.target
    assert t is not None and t.test is not None
    state = throw(t.test, side=CH, throw=TIE[0], now=5.0).state
    state = throw(state, side=DE, throw=TIE[1], now=5.0).state
    assert state.stage is Stage.DECLARE_CHALLENGER  # the leader declares
    state = declare(state, side=CH, count=6, now=6.0).state
    s = play_test(s, declare(state, side=DE, count=6, now=6.0), now=6.0).scene
    first = s.targets[0]
    assert first.outcome is MobOutcome.DRAW and first.wounds == ()
    assert Counter(x.character_id for x in first.losses) == {1: 1, 2: 1, 3: 1, 4: 3}


def test_hidden_until_all_have_chosen_or_the_narrator_closes() -> None:
    s = chosen(scene("met_classic"), {1: 4, 2: 4})
    assert s.stage is MobStage.CHOOSING and s.targets == ()
    with pytest.raises(RulesError, match="already chosen"):
        choose_target(s, chooser=1, target=3, now=2.0)
    closed = close_choosing(s, now=3.0)
    assert [e.kind for e in closed.events][:2] == ["mob_revealed", "mob_target"]
    assert dict(closed.scene.choices) == {1: 4, 2: 4, 3: None, 4: None}
    assert all(
        "target" not in e.data
        for e in choose_target(scene("met_classic"), chooser=1, target=2, now=2).events
    )


# --- seeds/004 "Mob Scenes" (ukm) ---------------------------------------------------


def test_seed004_at_most_five_attackers_the_sixth_drops() -> None:
    s = chosen(scene("ukm", 7), {i: 7 for i in range(1, 7)} | {7: None})
    (t,) = s.targets
    assert t.attackers == (1, 2, 3, 4, 5) and t.dropped == (6,)


def test_seed004_defender_bids_as_normal_and_is_one_down_per_extra_attacker() -> None:
    s = chosen(scene("ukm"), {1: 4, 2: 4, 3: 4, 4: None})
    s = pick_leader(s, by=None, leader=1, now=2.5).scene
    s = bid_all(s)
    t = s.target
    assert t is not None and t.test is not None and len(t.test.defender_bids) == 1
    assert ("Mob: 2 more attackers", -2) in modifiers(t.test, DE)
    assert modifiers(t.test, CH) == ()
    # Counts stand? No: both declare 6 after the tie; the defender's 6 counts 4.
    state = throw(t.test, side=CH, throw=TIE[0], now=5.0).state
    state = throw(state, side=DE, throw=TIE[1], now=5.0).state
    state = declare(state, side=CH, count=6, now=6.0).state
    s = play_test(s, declare(state, side=DE, count=6, now=6.0), now=6.0).scene
    assert s.targets[0].outcome is MobOutcome.ATTACKERS_WIN


def test_seed004_the_most_damaging_single_effect_applies() -> None:
    """Two of three attackers do normal damage and the third more: a success
    costs the most damaging one, whoever led."""
    s = chosen(scene("ukm"), {1: 4, 2: 4, 3: 4, 4: None})
    s = pick_leader(s, by=2, leader=1, now=2.5).scene
    s = thrown(bid_all(s, effects={1: 1, 2: 1, 3: 3}), WIN)
    assert s.targets[0].wounds == (4, 4, 4)
    assert s.who(4).health is HealthLevel.INCAPACITATED
    assert s.targets[0].effect == "effect of 3"


@pytest.mark.parametrize(
    ("damages", "effect"),
    [({1: 2, 2: 2, 3: 1}, "effect of 1"), ({1: 1, 2: 2, 3: 2}, "effect of 2")],
)
def test_seed004_among_equally_damaging_effects_the_leaders_else_the_first(
    damages: dict[int, int], effect: str
) -> None:
    s = chosen(scene("ukm"), {1: 4, 2: 4, 3: 4, 4: None})
    s = pick_leader(s, by=2, leader=1, now=2.5).scene
    s = thrown(bid_all(s, effects=damages), WIN)
    assert s.targets[0].effect == effect and len(s.targets[0].wounds) == 2


def test_met_classic_attackers_win_is_one_wound_whatever_the_effects() -> None:
    s = chosen(scene("met_classic"), {1: 4, 2: 4, 3: None, 4: None})
    s = pick_leader(s, by=2, leader=1, now=2.5).scene
    s = thrown(bid_all(s, effects={1: 3, 2: 2}), WIN)
    assert s.targets[0].wounds == (4,)


# --- tables ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("choices", "order"),
    [
        ({1: 4, 2: 4, 3: 1, 4: 1}, [1, 4]),  # two each: the narrator's order
        ({1: 2, 2: 1, 3: 2, 4: 2}, [2, 1]),
        ({1: None, 2: None, 3: None, 4: None}, []),
        ({1: 3, 2: 4, 3: 4, 4: 3}, [3, 4]),
    ],
)
def test_order_of_targets(choices: dict[int, int | None], order: list[int]) -> None:
    s = chosen(scene("met_classic"), choices)
    assert [t.defender for t in s.targets] == order
    assert (s.stage is MobStage.SETTLED) == (order == [])


@pytest.mark.parametrize(
    ("move", "message"),
    [
        (lambda s: choose_target(s, chooser=1, target=1, now=2), "yourself"),
        (lambda s: choose_target(s, chooser=9, target=1, now=2), "not in this mob"),
        (lambda s: choose_target(s, chooser=1, target=9, now=2), "not in this mob"),
        (lambda s: pick_leader(s, by=1, leader=2, now=2), "leader"),
        (lambda s: mob_bid(s, character=1, bids=["T1x0"], now=2), "bid"),
        (lambda s: hurt(s, attacker=None, now=2), "hurt"),
    ],
)
def test_moves_out_of_turn_are_refused(move, message: str) -> None:
    with pytest.raises(RulesError, match=message):
        move(scene("met_classic"))


def test_an_attacker_bids_exactly_one_trait_of_his_own() -> None:
    s = chosen(scene("met_classic"), {1: 4, 2: 4, 3: 4, 4: None})
    s = pick_leader(s, by=1, leader=1, now=2.5).scene
    with pytest.raises(RulesError, match="1 Trait"):
        mob_bid(s, character=1, bids=["T1x0", "T1x1"], now=3)
    with pytest.raises(RulesError):
        mob_bid(s, character=1, bids=["T2x0"], now=3)
    with pytest.raises(RulesError, match="not in this mob"):
        mob_bid(s, character=9, bids=["T2x0"], now=3)


def test_scene_round_trips_through_its_dict() -> None:
    s = three_on_one("ukm")
    assert MobScene.from_dict(s.to_dict()) == s


# --- property -------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(data=st.data(), n=st.integers(3, 6), ruleset=st.sampled_from(["met_classic", "ukm"]))
def test_every_target_settled_once_and_no_trait_lost_unbid(data, n: int, ruleset: str) -> None:
    s = scene(ruleset, n, strong=8)
    events: list = []

    def step(transition) -> MobScene:
        events.extend(transition.events)
        return transition.scene

    ids = list(range(1, n + 1))
    for i in ids:
        pick = data.draw(st.sampled_from([None, *[j for j in ids if j != i]]))
        if data.draw(st.booleans()) or i == ids[-1]:
            s = step(choose_target(s, chooser=i, target=pick, now=2.0))
        if s.stage is not MobStage.CHOOSING:
            break
    if s.stage is MobStage.CHOOSING:
        s = step(close_choosing(s, now=2.5))
    expected = [t.defender for t in s.targets]
    bid: Counter[tuple[int, str]] = Counter()
    steps = 0
    while s.stage is not MobStage.SETTLED:
        steps += 1
        assert steps < 200
        t = s.target
        assert t is not None
        if s.stage is MobStage.LEADER:
            s = step(pick_leader(s, by=None, leader=data.draw(st.sampled_from(t.attackers)), now=3))
        elif s.stage is MobStage.BIDS:
            who = s.waiting_on[0]
            free = [h.name for h in s.who(who).traits if h.free > 0]
            need = 1 if who != t.defender else len(t.attackers) if ruleset == "met_classic" else 1
            names = free[:need]
            bid.update((who, x) for x in names)
            s = step(mob_bid(s, character=who, bids=names, now=4))
        elif s.stage is MobStage.TEST:
            assert t.test is not None
            state = t.test
            if state.stage is Stage.THROWS:
                side = state.waiting_on[0]  # type: ignore[index]
                # ukm retests on equal counts until someone wins: after a few, she does.
                gesture = data.draw(st.sampled_from(list(WIN))) if len(state.tests) < 6 else None
                gesture = gesture or (WIN[0] if side is CH else WIN[1])
                tr = throw(state, side=side, throw=gesture, now=5)
            elif state.stage in (Stage.DECLARE_CHALLENGER, Stage.DECLARE_DEFENDER):
                side = CH if state.stage is Stage.DECLARE_CHALLENGER else DE
                tr = declare(state, side=side, now=5)
            else:
                tr = accept(state, side=state.retest_side, now=5)  # type: ignore[arg-type]
            s = step(play_test(s, tr, now=5))
        elif s.stage is MobStage.HURT:
            s = step(hurt(s, attacker=data.draw(st.sampled_from([None, *t.attackers])), now=6))
    assert [t.defender for t in s.targets] == expected
    assert all(t.outcome is not None for t in s.targets)
    settled = [e.data["defender"] for e in events if e.kind == "mob_result"]
    assert sorted(settled) == sorted(expected)  # each target exactly once
    lost = Counter((x.character_id, x.trait) for t in s.targets for x in t.losses)
    assert not lost - bid


MOB_MOVES = [
    "open_mob",
    "choose_target",
    "close_choosing",
    "pick_leader",
    "mob_bid",
    "play_test",
    "hurt",
    "void_mob",
]


@pytest.mark.parametrize("move", MOB_MOVES)
def test_docs_list_each_mob_move_with_its_arguments(move: str) -> None:
    import inspect
    from pathlib import Path

    from challenges.rules import mob

    docs = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
    section = docs.read_text().split("## Mob scenes", 1)[1]
    row = next(line for line in section.splitlines() if line.startswith(f"| `{move}("))
    documented = row.split("(", 1)[1].split(")", 1)[0].replace(" ", "").split(",")
    params = inspect.signature(getattr(mob, move)).parameters
    assert sorted(d for d in documented if d) == sorted(
        p for p in params if p not in ("scene", "now")
    )


@pytest.mark.parametrize(("ruleset", "defends"), [("met_classic", False), ("ukm", True)])
def test_an_incapacitated_character_cannot_attack_and_defends_by_the_preset(
    ruleset: str, defends: bool
) -> None:
    """seeds/000 "Health": Incapacitated, no challenges; seeds/004 "Trait
    Categories": she cannot initiate (but may defend)."""
    people = [fighter(1, "A"), fighter(2, "B"), fighter(3, "C")]
    people[2] = character(3, "C", people[2].traits, health=HealthLevel.INCAPACITATED)
    s = open_mob(ruleset=ruleset, category=PHYSICAL, participants=people, now=1.0).scene
    with pytest.raises(RulesError, match="incapacitated"):
        choose_target(s, chooser=3, target=1, now=2.0)
    s = chosen(s, {3: None, 1: 3, 2: 3})
    (t,) = s.targets
    assert (t.outcome is None) == defends
    if not defends:
        assert t.outcome is MobOutcome.DEFENDER_GAVE_UP and t.wounds == (3,)
