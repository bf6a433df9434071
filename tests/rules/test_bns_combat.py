"""Combat rounds under ``bns`` (challenges.rules.bns_combat): each rule of
seeds/002's combat sections as a named or table test, a combat of three
through one full round in initiative order, Rage rounds, the Surprise
Action, the per-round target limits, the focus's free maneuver once per
combat and what maneuvers leave on a fighter, with the clock passed in (the
immunity after a failed Mental or Social challenge is the challenge's:
tests/rules/test_bns.py)."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

from challenges.rules import bns_combat
from challenges.rules.bns_combat import (
    ActionKind,
    ActionWhat,
    CombatState,
    CombatTransition,
    Fighter,
    add_fighter,
    advance,
    assist_attacker,
    assist_defender,
    burst_of_speed,
    describe,
    end_combat,
    grapple,
    hold,
    inflict,
    legal_actions,
    release,
    remove_fighter,
    reorder,
    round_label,
    set_rage_rounds,
    settle_attack,
    start_combat,
    take_action,
    who_goes_first,
    whose_turn,
)
from challenges.rules.core import Category, RulesError

PHYSICAL, SOCIAL, MENTAL = Category.PHYSICAL, Category.SOCIAL, Category.MENTAL
STANDARD, SIMPLE = ActionKind.STANDARD, ActionKind.SIMPLE
CHALLENGE, MOVE, OTHER = ActionWhat.CHALLENGE, ActionWhat.MOVE, ActionWhat.OTHER
T0 = 1_000_000.0

HELEN, CAMILLE, GRADY, RAY = 1, 2, 3, 4


def three(**kwargs: object) -> CombatState:
    """Helen (initiative 7), Camille (6, from Mental), Grady (5)."""
    fighters = [
        Fighter(GRADY, "Grady", physical=5, mental=2),
        Fighter(HELEN, "Helen", physical=7, mental=3),
        Fighter(CAMILLE, "Camille", physical=2, mental=6),
    ]
    return start_combat(fighters=fighters, now=T0, **kwargs).state  # type: ignore[arg-type]


def attack(
    state: CombatState,
    by: int,
    target: int,
    category: Category = PHYSICAL,
    power: str = "",
    now: float = T0,
    failed: bool | None = None,
    focus: bool = False,
) -> CombatState:
    if category is not PHYSICAL and not power:
        power = "Dominate"
    return take_action(
        state,
        fighter=by,
        kind=STANDARD,
        what=CHALLENGE,
        target=target,
        category=category,
        power=power,
        failed=failed,
        focus=focus,
        now=now,
    ).state


def roster(*specs: tuple[str, int, int]) -> list[Fighter]:
    """Fighters 1, 2, … from ``(name, Physical, Mental)``."""
    return [Fighter(i, name, physical=p, mental=m) for i, (name, p, m) in enumerate(specs, 1)]


def end(state: CombatState, by: int | None = None) -> CombatState:
    return advance(state, by=by if by is not None else whose_turn(state), now=T0).state


def refused(move: object, *args: object, **kwargs: object) -> str:
    """The message of the RulesError the move raises; the state it was given
    is unchanged (its dict form is compared)."""
    state = args[0] if args else None
    before = state.to_dict() if isinstance(state, CombatState) else None
    with pytest.raises(RulesError) as err:
        move(*args, **kwargs)  # type: ignore[operator]
    if isinstance(state, CombatState):
        assert state.to_dict() == before
    return str(err.value)


# --- seeds/002 "Resolving Combat": initiative and order -------------------------------------


@pytest.mark.parametrize(
    ("physical", "mental", "initiative"),
    [(7, 3, 7), (2, 6, 6), (4, 4, 4), (0, 0, 0)],
)
def test_initiative_is_the_higher_of_physical_and_mental(
    physical: int, mental: int, initiative: int
) -> None:
    assert Fighter(1, "A", physical=physical, mental=mental).initiative == initiative


def test_fighters_act_in_initiative_order_highest_first() -> None:
    state = three()
    assert [f.fighter_id for f in state.fighters] == [HELEN, CAMILLE, GRADY]
    assert whose_turn(state) == HELEN


def test_equal_initiatives_follow_the_narrators_tiebreak_list_then_the_name() -> None:
    fighters = roster(("Zed", 5, 1), ("Amy", 5, 1), ("Bob", 1, 5))
    by_name = start_combat(fighters=fighters, now=T0).state
    assert [f.name for f in by_name.fighters] == ["Amy", "Bob", "Zed"]
    listed = start_combat(fighters=fighters, now=T0, order_ties=[1, 3]).state
    assert [f.name for f in listed.fighters] == ["Zed", "Bob", "Amy"]


def test_the_narrator_reorders_tied_fighters_but_not_against_initiative() -> None:
    fighters = roster(("Amy", 5, 1), ("Bob", 5, 1), ("Cat", 3, 1))
    state = start_combat(fighters=fighters, now=T0).state
    assert [f.name for f in reorder(state, order=[2, 1, 3], now=T0).state.fighters] == [
        "Bob",
        "Amy",
        "Cat",
    ]
    assert refused(reorder, state, order=[3, 1, 2], now=T0) == (
        "Cat (initiative 3) cannot act after Amy (initiative 5)."
    )
    assert refused(reorder, state, order=[1, 2], now=T0) == "List every fighter once."


def test_the_narrator_cannot_reorder_away_a_fighter_in_the_middle_of_her_initiative() -> None:
    fighters = [Fighter(1, "Amy", physical=5, mental=1), Fighter(2, "Bob", physical=5, mental=1)]
    state = start_combat(fighters=fighters, now=T0).state
    state = take_action(state, fighter=1, kind=SIMPLE, what=MOVE, steps=1, now=T0).state
    assert (
        refused(reorder, state, order=[2, 1], now=T0) == "Amy is in the middle of her initiative."
    )


def test_a_combat_of_three_plays_one_full_round_in_initiative_order() -> None:
    state = three()
    seen = []
    for target in (GRADY, HELEN, CAMILLE):
        acting = whose_turn(state)
        assert acting is not None
        seen.append(acting)
        state = attack(state, acting, target)
        state = take_action(state, fighter=acting, kind=SIMPLE, what=MOVE, steps=3, now=T0).state
        step = advance(state, by=acting, now=T0)
        state = step.state
    assert seen == [HELEN, CAMILLE, GRADY]
    assert [e.kind for e in step.events] == ["initiative_over", "round_started"]
    assert (state.turn, state.rage_round) == (2, 0)
    assert whose_turn(state) == HELEN
    assert all(not f.done and not f.standard_used for f in state.fighters)


def test_only_the_acting_fighter_acts_on_her_initiative() -> None:
    state = three()
    assert refused(attack, state, GRADY, HELEN) == "It is Helen's initiative, not Grady's."
    assert refused(advance, state, by=GRADY, now=T0) == "It is Helen's initiative, not Grady's."
    state = end(state)
    assert refused(attack, state, HELEN, GRADY) == "Helen's initiative this round is over."


def test_the_narrator_moves_play_on_and_unused_actions_are_lost() -> None:
    state = end(three(), by=None)
    assert whose_turn(state) == CAMILLE
    assert legal_actions(state, HELEN, T0).standard is False


# --- seeds/002 "Rounds and Turns" -----------------------------------------------------------


def test_a_turn_is_the_everyman_round_then_each_rage_round_with_only_those_who_act_in_it() -> None:
    state = three()
    state = set_rage_rounds(state, fighter=HELEN, rounds=2, now=T0).state
    state = set_rage_rounds(state, fighter=GRADY, rounds=1, now=T0).state
    played: list[tuple[str, int]] = []
    while state.turn == 1:
        acting = whose_turn(state)
        assert acting is not None
        played.append((round_label(state), acting))
        state = end(state)
    assert played == [
        ("Turn 1 · Everyman round", HELEN),
        ("Turn 1 · Everyman round", CAMILLE),
        ("Turn 1 · Everyman round", GRADY),
        ("Turn 1 · Rage round 1", HELEN),
        ("Turn 1 · Rage round 1", GRADY),
        ("Turn 1 · Rage round 2", HELEN),
    ]
    assert round_label(state) == "Turn 2 · Everyman round"


def test_without_rage_rounds_a_turn_is_the_everyman_round_alone() -> None:
    state = three()
    for _ in range(3):
        state = end(state)
    assert (state.turn, state.rage_round) == (2, 0)


def test_a_fighter_outside_a_rage_round_cannot_act_in_it() -> None:
    state = set_rage_rounds(three(), fighter=HELEN, rounds=1, now=T0).state
    for _ in range(3):
        state = end(state)
    assert round_label(state) == "Turn 1 · Rage round 1"
    assert refused(burst_of_speed, state, fighter=GRADY, what=OTHER, now=T0) == (
        "Grady does not act in Rage round 1."
    )
    assert legal_actions(state, GRADY, T0).burst is False


def test_lowering_rage_rounds_in_a_rage_round_passes_the_fighter_by() -> None:
    state = set_rage_rounds(three(), fighter=HELEN, rounds=1, now=T0).state
    for _ in range(3):
        state = end(state)
    assert whose_turn(state) == HELEN
    state = set_rage_rounds(state, fighter=HELEN, rounds=0, now=T0).state
    assert round_label(state) == "Turn 2 · Everyman round"


def test_knock_out_s_first_round_is_turn_one_s_everyman_round() -> None:
    state = set_rage_rounds(three(), fighter=HELEN, rounds=1, now=T0).state
    assert state.first_round
    assert not end(end(end(state))).first_round


# --- seeds/002 "Surprise Action" ------------------------------------------------------------


def test_the_surprise_action_comes_first_outside_the_order() -> None:
    state = three(surprise=GRADY)
    assert whose_turn(state) == GRADY
    assert round_label(state) == "Turn 1 · Surprise Action"
    assert refused(attack, state, HELEN, GRADY) == "Nobody acts before Grady's Surprise Action."
    assert refused(burst_of_speed, state, fighter=HELEN, what=OTHER, now=T0) == (
        "Nobody acts before Grady's Surprise Action."
    )
    step = take_action(
        state, fighter=GRADY, kind=STANDARD, what=CHALLENGE, target=HELEN, category=PHYSICAL,
        now=T0,
    )  # fmt: skip
    assert [e.kind for e in step.events] == ["action", "attacked", "surprise_over"]
    state = step.state
    assert whose_turn(state) == HELEN
    assert state.targeted(HELEN, PHYSICAL) == 1  # the surprise is in round one


def test_the_surprising_fighter_takes_her_remaining_action_on_her_initiative() -> None:
    state = attack(three(surprise=GRADY), GRADY, HELEN)
    state = end(end(state))
    assert whose_turn(state) == GRADY
    legal = legal_actions(state, GRADY, T0)
    assert (legal.standard, legal.simple) == (False, True)
    assert "already taken her standard action" in refused(attack, state, GRADY, HELEN)


def test_a_narrator_may_close_the_surprise_phase() -> None:
    state = advance(three(surprise=GRADY), by=None, now=T0).state
    assert state.surprise is None and whose_turn(state) == HELEN


# --- seeds/002 "Standard and Simple Actions" ------------------------------------------------


def test_one_standard_and_one_simple_action_per_round() -> None:
    state = attack(three(), HELEN, GRADY)
    state = take_action(state, fighter=HELEN, kind=SIMPLE, what=OTHER, now=T0).state
    assert refused(attack, state, HELEN, CAMILLE) == (
        "Helen has already taken her standard action this round."
    )
    assert refused(take_action, state, fighter=HELEN, kind=SIMPLE, what=OTHER, now=T0) == (
        "Helen has already taken her simple action this round."
    )


def test_a_challenge_takes_the_standard_action() -> None:
    state = three()
    msg = refused(
        take_action, state, fighter=HELEN, kind=SIMPLE, what=CHALLENGE, target=GRADY,
        category=PHYSICAL, now=T0,
    )  # fmt: skip
    assert msg == "A challenge takes your standard action."


@pytest.mark.parametrize(("first", "second", "ok"), [(3, 3, True), (3, 0, True), (4, 0, False)])
def test_three_steps_per_action_six_with_both(first: int, second: int, ok: bool) -> None:
    state = three()
    if not ok:
        assert refused(
            take_action, state, fighter=HELEN, kind=SIMPLE, what=MOVE, steps=first, now=T0
        ) == ("One action moves 0 to 3 steps.")
        return
    state = take_action(state, fighter=HELEN, kind=SIMPLE, what=MOVE, steps=first, now=T0).state
    if second:
        state = take_action(
            state, fighter=HELEN, kind=STANDARD, what=MOVE, steps=second, now=T0
        ).state
    assert state.fighter(HELEN).steps == first + second


# --- seeds/002 "Maximum Attacks Per Round" --------------------------------------------------


@pytest.mark.parametrize(
    ("category", "allowed", "message"),
    [
        (PHYSICAL, 2, "Grady has already been the target of two Physical challenges this round."),
        (MENTAL, 1, "Grady has already been the target of one Mental challenge this round."),
        (SOCIAL, 1, "Grady has already been the target of one Social challenge this round."),
    ],
)
def test_a_character_is_the_target_of_at_most_one_social_one_mental_two_physical_per_round(
    category: Category, allowed: int, message: str
) -> None:
    fighters = [Fighter(10 + i, f"F{i}", physical=9 - i, mental=1) for i in range(4)]
    fighters.append(Fighter(GRADY, "Grady", physical=1, mental=1))
    state = start_combat(fighters=fighters, now=T0).state
    for _ in range(allowed):
        state = end(attack(state, whose_turn(state) or 0, GRADY, category, power="Awe"))
    assert refused(attack, state, whose_turn(state), GRADY, category, "Presence") == message
    assert GRADY not in dict(legal_actions(state, whose_turn(state) or 0, T0).targets) or (
        category not in dict(legal_actions(state, whose_turn(state) or 0, T0).targets)[GRADY]
    )


def test_failed_challenges_count_against_the_limit() -> None:
    state = end(attack(three(), HELEN, GRADY, failed=True))
    state = end(attack(state, CAMILLE, GRADY, failed=True))
    state = set_rage_rounds(state, fighter=GRADY, rounds=0, now=T0).state
    assert state.targeted(GRADY, PHYSICAL) == 2


def test_the_limits_start_again_each_round() -> None:
    state = three()
    state = end(attack(state, HELEN, GRADY))
    state = end(attack(state, CAMILLE, GRADY))
    state = end(state)  # Grady: a new round (turn 2) begins
    assert state.targeted(GRADY, PHYSICAL) == 0
    assert attack(state, HELEN, GRADY).targeted(GRADY, PHYSICAL) == 1


def test_a_rage_round_is_a_round_of_its_own_for_the_limits() -> None:
    state = set_rage_rounds(three(), fighter=HELEN, rounds=1, now=T0).state
    state = set_rage_rounds(state, fighter=CAMILLE, rounds=1, now=T0).state
    state = end(attack(state, HELEN, GRADY))
    state = end(attack(state, CAMILLE, GRADY))
    state = end(state)
    assert round_label(state) == "Turn 1 · Rage round 1"
    assert state.targeted(GRADY, PHYSICAL) == 0
    assert attack(state, HELEN, GRADY).targeted(GRADY, PHYSICAL) == 1


def test_a_grappled_character_counts_as_one_physical_target_each_round() -> None:
    state = attack(three(), HELEN, GRADY)  # the Grapple attack
    state = end(grapple(state, fighter=GRADY, by=HELEN, now=T0).state)
    assert state.targeted(GRADY, PHYSICAL) == 1  # the grapple's round: the attack itself
    state = end(end(state))
    assert state.turn == 2 and state.targeted(GRADY, PHYSICAL) == 1
    state = end(attack(state, HELEN, GRADY))
    assert refused(attack, state, CAMILLE, GRADY) == (
        "Grady has already been the target of two Physical challenges this round."
    )


# --- seeds/002 "Physical, Mental, and Social Attacks" ---------------------------------------


@pytest.mark.parametrize(("category", "ok"), [(PHYSICAL, True), (MENTAL, False), (SOCIAL, False)])
def test_mental_and_social_attacks_only_in_the_everyman_round(category: Category, ok: bool) -> None:
    state = set_rage_rounds(three(), fighter=HELEN, rounds=1, now=T0).state
    state = end(end(end(state)))
    assert state.rage_round == 1
    if ok:
        assert attack(state, HELEN, GRADY, category).targeted(GRADY, category) == 1
    else:
        assert refused(attack, state, HELEN, GRADY, category, "Awe") == (
            f"{category.label} challenges are made only in the everyman round."
        )
        assert dict(legal_actions(state, HELEN, T0).targets)[GRADY] == (PHYSICAL,)


def test_a_mental_or_social_challenge_names_its_power() -> None:
    msg = refused(
        take_action, three(), fighter=HELEN, kind=STANDARD, what=CHALLENGE, target=GRADY,
        category=MENTAL, now=T0,
    )  # fmt: skip
    assert msg == "Name the power of this Mental challenge."


# --- seeds/002 "Retrying Failed Attacks" ----------------------------------------------------


def next_turn(state: CombatState) -> CombatState:
    turn = state.turn
    while state.turn == turn:
        state = end(state, by=None)
    return state


def test_the_combat_keeps_no_immunity_of_its_own_the_challenge_refuses_it() -> None:
    """seeds/002 "Retrying Failed Attacks": one rule, one check. The rounds
    only count a failed Mental challenge; the immunity to that attacker's
    power is checked by ``bns.open_challenge`` from the stored immunities,
    in a combat and out of one."""
    state = next_turn(attack(three(), HELEN, GRADY, MENTAL, "Dominate", failed=True))
    assert "immunities" not in state.to_dict()
    assert not hasattr(bns_combat.CombatOptions(), "immunity_seconds")
    assert attack(state, HELEN, GRADY, MENTAL, "Dominate").targeted(GRADY, MENTAL) == 1


def test_a_failed_physical_attack_may_be_retried_on_the_next_action() -> None:
    state = next_turn(attack(three(), HELEN, GRADY, failed=True))
    assert attack(state, HELEN, GRADY).targeted(GRADY, PHYSICAL) == 1


def test_the_outcome_may_come_later_and_only_once() -> None:
    state = attack(three(), HELEN, GRADY, MENTAL, "Dominate")
    step = settle_attack(state, attack=0, failed=True, now=T0 + 30)
    assert [e.kind for e in step.events] == ["attack_settled"]
    assert step.state.attacks[0].failed is True
    assert refused(settle_attack, step.state, attack=0, failed=False, now=T0) == (
        "That challenge is already settled."
    )
    assert refused(settle_attack, state, attack=5, failed=True, now=T0) == (
        "There is no such challenge in this combat."
    )


# --- seeds/002 "Physical Focuses in Combat": the free maneuver, once per combat ----------


def focus_attack(state: CombatState, by: int, target: int) -> CombatState:
    return attack(state, by, target, focus=True)


def test_the_focus_free_maneuver_is_spent_for_the_rest_of_the_combat() -> None:
    """seeds/002 "Physical Focuses in Combat": "Perform one of the following
    combat maneuvers once per combat without spending Willpower"."""
    state = focus_attack(three(), HELEN, GRADY)
    assert state.fighter(HELEN).focus_used
    state = next_turn(next_turn(state))  # two turns later: still spent
    assert state.fighter(HELEN).focus_used
    assert refused(focus_attack, state, HELEN, GRADY) == (
        "Helen has used her focus's free maneuver this combat."
    )
    assert attack(state, HELEN, GRADY).targeted(GRADY, PHYSICAL) == 1  # paid otherwise: fine
    assert CombatState.from_dict(json.loads(json.dumps(state.to_dict()))) == state


def test_each_fighter_has_her_own_free_maneuver() -> None:
    state = end(focus_attack(three(), HELEN, GRADY))
    assert focus_attack(state, CAMILLE, GRADY).fighter(CAMILLE).focus_used
    assert not state.fighter(CAMILLE).focus_used


def test_a_free_maneuver_goes_with_a_physical_challenge_only() -> None:
    msg = refused(
        take_action, three(), fighter=HELEN, kind=STANDARD, what=CHALLENGE, target=GRADY,
        category=MENTAL, power="Dominate", focus=True, now=T0,
    )  # fmt: skip
    assert msg == "A focus's free maneuver goes with a Physical attack."


# --- seeds/002 "Combat Maneuvers": what a successful maneuver leaves ------------------------


@pytest.mark.parametrize(
    ("effect", "check"),
    [
        ("grappled", lambda f: f.grappled_by == (HELEN,)),
        ("prone", lambda f: f.prone),
        ("blinded", lambda f: f.blinded == 2),
        ("unconscious", lambda f: f.unconscious_until == T0 + 600),
        ("disarmed", lambda f: not (f.prone or f.blinded or f.grappled_by)),
    ],
)
def test_a_maneuvers_effect_reaches_the_combat(effect: str, check: object) -> None:
    """seeds/002 Grapple ("is grappled"), Knock Down ("ends up lying on the
    ground"), Blinding Attack ("blinded until she spends two simple
    actions"), Knock Out ("unconscious for 10 minutes"), Disarm (an item
    dropped: nothing for the rounds)."""
    step = inflict(three(), fighter=GRADY, by=HELEN, effect=effect, now=T0)
    assert check(step.state.fighter(GRADY))  # type: ignore[operator]
    assert step.events[0].kind == "inflicted"
    assert step.events[0].data == {"fighter": GRADY, "by": HELEN, "effect": effect}


@pytest.mark.parametrize("effect", ["killed", "staked"])
def test_a_pierced_heart_takes_her_out_of_the_combat(effect: str) -> None:
    """seeds/002 Pierce the Heart: a mortal killed, a vampire staked."""
    step = inflict(three(), fighter=GRADY, by=HELEN, effect=effect, now=T0)
    assert GRADY not in [f.fighter_id for f in step.state.fighters]
    assert [e.kind for e in step.events] == ["inflicted", "fighter_removed"]
    assert step.events[1].data["reason"] == effect.title()


def test_a_second_grapple_by_the_same_fighter_changes_nothing() -> None:
    state = inflict(three(), fighter=GRADY, by=HELEN, effect="grappled", now=T0).state
    assert inflict(state, fighter=GRADY, by=HELEN, effect="grappled", now=T0).state == state


def test_an_unknown_effect_is_refused() -> None:
    assert refused(inflict, three(), fighter=GRADY, by=HELEN, effect="cursed", now=T0) == (
        "There is no maneuver effect called 'cursed'."
    )


def grady_acts(state: CombatState) -> CombatState:
    return end(end(state))  # Helen and Camille end their initiatives


def test_a_prone_fighter_crawls_one_step_and_stands_up_with_her_simple_action() -> None:
    """seeds/002 Knock Down: "While prone, your opponent may use an action to
    crawl one step. A prone character can use a simple action to stand up
    and move up to one step"."""
    state = grady_acts(inflict(three(), fighter=GRADY, by=HELEN, effect="prone", now=T0).state)
    assert legal_actions(state, GRADY, T0).steps == 1
    assert legal_actions(state, GRADY, T0).stand_up
    msg = refused(take_action, state, fighter=GRADY, kind=STANDARD, what=MOVE, steps=2, now=T0)
    assert msg == "Grady is prone: she crawls one step at most."
    crawled = take_action(state, fighter=GRADY, kind=STANDARD, what=MOVE, steps=1, now=T0).state
    assert crawled.fighter(GRADY).prone
    msg = refused(
        take_action, state, fighter=GRADY, kind=STANDARD, what=ActionWhat.STAND_UP, now=T0
    )
    assert msg == "Standing up takes your simple action."
    up = take_action(state, fighter=GRADY, kind=SIMPLE, what=ActionWhat.STAND_UP, steps=1, now=T0)
    assert not up.state.fighter(GRADY).prone and up.state.fighter(GRADY).steps == 1


def test_blinded_ends_after_two_simple_actions_clearing_her_eyes() -> None:
    """seeds/002 Blinding Attack: "blinded until she spends two simple
    actions clearing her eyes" (one simple action a round: two rounds)."""
    state = grady_acts(inflict(three(), fighter=GRADY, by=HELEN, effect="blinded", now=T0).state)
    state = take_action(state, fighter=GRADY, kind=SIMPLE, what=ActionWhat.CLEAR_EYES, now=T0).state
    assert state.fighter(GRADY).blinded == 1
    assert not legal_actions(state, GRADY, T0).clear_eyes  # her simple action is spent
    state = grady_acts(next_turn(state))
    assert legal_actions(state, GRADY, T0).clear_eyes
    state = take_action(state, fighter=GRADY, kind=SIMPLE, what=ActionWhat.CLEAR_EYES, now=T0).state
    assert state.fighter(GRADY).blinded == 0
    msg = refused(
        take_action, next_turn(state), fighter=HELEN, kind=SIMPLE, what=ActionWhat.CLEAR_EYES,
        now=T0,
    )  # fmt: skip
    assert msg == "Helen is not blinded."


def test_an_unconscious_fighter_takes_no_action_for_ten_minutes() -> None:
    """seeds/002 Knock Out: "your target is unconscious for 10 minutes"."""
    state = inflict(three(), fighter=HELEN, by=GRADY, effect="unconscious", now=T0).state
    msg = refused(take_action, state, fighter=HELEN, kind=SIMPLE, what=MOVE, steps=1, now=T0 + 60)
    assert msg == "Helen is unconscious for 9 more minutes."
    legal = legal_actions(state, HELEN, T0 + 60)
    assert legal.acting and legal.advance and not (legal.standard or legal.simple)
    later = take_action(state, fighter=HELEN, kind=SIMPLE, what=MOVE, steps=1, now=T0 + 600)
    assert later.state.fighter(HELEN).steps == 1


# --- seeds/002 "Combat Maneuvers": Burst of Speed, Grapple ---------------------------------


def test_burst_of_speed_takes_the_simple_action_before_her_initiative() -> None:
    state = three()
    state = burst_of_speed(state, fighter=GRADY, what=MOVE, steps=3, now=T0).state
    assert whose_turn(state) == HELEN  # play is not disturbed
    state = end(end(state))
    legal = legal_actions(state, GRADY, T0)
    assert (legal.standard, legal.simple, legal.burst) == (True, False, False)
    assert refused(burst_of_speed, state, fighter=GRADY, what=OTHER, now=T0) == (
        "Grady's initiative has come: Burst of Speed acts before it."
    )


def test_burst_of_speed_is_no_challenge() -> None:
    assert refused(burst_of_speed, three(), fighter=GRADY, what=CHALLENGE, now=T0) == (
        "Burst of Speed takes a simple action: a move or another action."
    )


def test_the_fighter_on_her_natural_initiative_goes_first_then_the_highest_initiative() -> None:
    state = three()
    assert who_goes_first(state, [GRADY, HELEN, CAMILLE]) == (HELEN, CAMILLE, GRADY)
    state = end(state)
    assert who_goes_first(state, [GRADY, HELEN, CAMILLE]) == (CAMILLE, HELEN, GRADY)


def test_a_grappled_fighter_cannot_move_nor_act_physically_and_may_escape() -> None:
    state = end(grapple(three(), fighter=CAMILLE, by=HELEN, now=T0).state)
    assert whose_turn(state) == CAMILLE
    assert refused(
        take_action, state, fighter=CAMILLE, kind=SIMPLE, what=MOVE, steps=1, now=T0
    ) == ("Camille is grappled: she cannot move.")
    assert refused(attack, state, CAMILLE, GRADY) == (
        "Camille is grappled: her standard action cannot be Physical."
    )
    assert dict(legal_actions(state, CAMILLE, T0).targets)[GRADY] == (SOCIAL, MENTAL)
    assert legal_actions(state, CAMILLE, T0).escape == (HELEN,)
    state = take_action(
        state, fighter=CAMILLE, kind=SIMPLE, what=ActionWhat.ESCAPE, target=HELEN, now=T0
    ).state
    state = release(state, fighter=CAMILLE, now=T0).state  # she bested Helen
    assert attack(state, CAMILLE, GRADY).targeted(GRADY, PHYSICAL) == 1  # standard action back


def test_a_grappler_who_targets_someone_else_lets_go() -> None:
    state = grapple(three(), fighter=GRADY, by=HELEN, now=T0).state
    step = take_action(
        state, fighter=HELEN, kind=STANDARD, what=CHALLENGE, target=CAMILLE, category=PHYSICAL,
        now=T0,
    )  # fmt: skip
    assert "grapple_released" in [e.kind for e in step.events]
    assert step.state.fighter(GRADY).grappled_by == ()


def test_a_grappler_who_moves_more_than_one_step_lets_go() -> None:
    state = grapple(three(), fighter=GRADY, by=HELEN, now=T0).state
    kept = take_action(state, fighter=HELEN, kind=SIMPLE, what=MOVE, steps=1, now=T0).state
    assert kept.fighter(GRADY).grappled_by == (HELEN,)
    gone = take_action(state, fighter=HELEN, kind=SIMPLE, what=MOVE, steps=2, now=T0).state
    assert gone.fighter(GRADY).grappled_by == ()


# --- seeds/002 "Mass Combat" ---------------------------------------------------------------


def test_a_fighter_holds_her_initiative_to_assist_later_in_the_round() -> None:
    state = hold(three(), fighter=HELEN, now=T0).state
    assert whose_turn(state) == CAMILLE
    state = attack(state, CAMILLE, GRADY)
    step = assist_defender(state, helper=HELEN, attack=0, steps=2, now=T0)
    record = step.state.attacks[0]
    assert (record.target, record.shielded) == (HELEN, GRADY)
    assert step.state.targeted(HELEN, PHYSICAL) == 1
    assert step.state.targeted(GRADY, PHYSICAL) == 1


def test_after_her_initiative_only_a_held_fighter_assists() -> None:
    state = attack(end(three()), CAMILLE, GRADY)
    assert refused(assist_defender, state, helper=HELEN, attack=0, now=T0) == (
        "Helen's initiative this round is over and she did not hold it."
    )


def test_a_tactic_may_come_before_her_initiative() -> None:
    state = attack(three(), HELEN, CAMILLE)
    state = assist_defender(state, helper=GRADY, attack=0, now=T0).state
    state = end(end(state))
    assert legal_actions(state, GRADY, T0).simple is False


def test_assist_defender_once_per_round_and_within_the_helpers_limit() -> None:
    fighters = [Fighter(10 + i, f"F{i}", physical=9 - i, mental=1) for i in range(3)]
    fighters += [Fighter(GRADY, "Grady", physical=1, mental=1), Fighter(RAY, "Ray", 1, 1)]
    state = start_combat(fighters=fighters, now=T0, order_ties=[GRADY]).state
    state = end(attack(state, 10, RAY))
    state = assist_defender(state, helper=GRADY, attack=0, now=T0).state
    state = attack(state, 11, RAY)
    assert refused(assist_defender, state, helper=GRADY, attack=1, now=T0) == (
        "Grady has already assisted a defender this round."
    )
    assert refused(assist_defender, state, helper=RAY, attack=1, now=T0) == (
        "Assist Defender shields another character from someone else."
    )


def test_assist_defender_only_against_physical_attacks() -> None:
    state = attack(three(), HELEN, CAMILLE, MENTAL, "Dominate")
    assert refused(assist_defender, state, helper=GRADY, attack=0, now=T0) == (
        "Mass combat tactics help only against Physical attacks."
    )


def test_assist_defender_counts_against_the_helpers_limit() -> None:
    fighters = [Fighter(10 + i, f"F{i}", physical=9 - i, mental=1) for i in range(3)]
    fighters += [Fighter(GRADY, "Grady", physical=1, mental=1), Fighter(RAY, "Ray", 1, 1)]
    state = start_combat(fighters=fighters, now=T0).state
    state = end(attack(state, 10, GRADY))
    state = end(attack(state, 11, GRADY))
    state = attack(state, 12, RAY)
    assert refused(assist_defender, state, helper=GRADY, attack=2, now=T0) == (
        "Grady has already been the target of two Physical challenges this round."
    )


def test_assist_attacker_spends_a_standard_action_and_marks_the_next_physical_attack() -> None:
    state = assist_attacker(three(), helper=HELEN, attacker=CAMILLE, now=T0).state
    assert state.fighter(HELEN).standard_used
    state = end(state)
    state = attack(state, CAMILLE, GRADY)
    assert state.attacks[0].assisted_by == HELEN
    assert state.fighter(CAMILLE).assist_from is None


def test_only_one_assist_attacker_per_attack() -> None:
    state = assist_attacker(three(), helper=HELEN, attacker=CAMILLE, now=T0).state
    assert refused(assist_attacker, state, helper=GRADY, attacker=CAMILLE, now=T0) == (
        "Camille is already assisted for her next attack."
    )


# --- the narrator's moves ---------------------------------------------------------------------


def test_a_fighter_added_after_her_place_passed_acts_from_the_next_round() -> None:
    state = end(three())  # Camille acts
    late = add_fighter(state, fighter=Fighter(RAY, "Ray", physical=9, mental=1), now=T0).state
    assert [f.fighter_id for f in late.fighters][0] == RAY
    assert whose_turn(late) == CAMILLE
    slow = add_fighter(state, fighter=Fighter(RAY, "Ray", physical=1, mental=1), now=T0).state
    assert [whose_turn(s) for s in (slow, end(slow), end(end(slow)))] == [CAMILLE, GRADY, RAY]
    assert refused(add_fighter, slow, fighter=Fighter(RAY, "Ray", 1, 1), now=T0) == (
        "Ray is already in this combat."
    )


def test_removing_the_acting_fighter_moves_play_on() -> None:
    state = remove_fighter(three(), fighter=HELEN, now=T0, reason="fled").state
    assert whose_turn(state) == CAMILLE
    assert refused(attack, state, CAMILLE, HELEN) == "That character is not in this combat."


def test_removing_the_last_to_act_starts_the_next_round() -> None:
    state = end(end(three()))
    state = remove_fighter(state, fighter=GRADY, now=T0, reason="dead").state
    assert (state.turn, whose_turn(state)) == (2, HELEN)


def test_a_fighter_brought_back_in_the_round_she_left_does_not_act_twice() -> None:
    state = end(attack(three(), HELEN, GRADY))
    state = remove_fighter(state, fighter=HELEN, now=T0, reason="fled").state
    back = Fighter(HELEN, "Helen", physical=1, mental=1)  # now last in the order
    state = add_fighter(state, fighter=back, now=T0).state
    assert [whose_turn(s) for s in (state, end(state))] == [CAMILLE, GRADY]
    assert end(end(state)).turn == 2


def test_a_fighter_removed_in_the_middle_of_her_initiative_does_not_resume_it() -> None:
    state = take_action(three(), fighter=HELEN, kind=SIMPLE, what=MOVE, steps=1, now=T0).state
    state = remove_fighter(state, fighter=HELEN, now=T0).state
    back = Fighter(HELEN, "Helen", physical=1, mental=1)  # now last in the order
    state = add_fighter(state, fighter=back, now=T0).state
    assert [whose_turn(s) for s in (state, end(state))] == [CAMILLE, GRADY]
    assert end(end(state)).turn == 2


def test_an_ended_combat_refuses_every_move() -> None:
    state = end_combat(three(), now=T0).state
    assert whose_turn(state) is None and round_label(state) == "Combat over"
    assert refused(attack, state, HELEN, GRADY) == "This combat is over."
    assert refused(advance, state, by=None, now=T0) == "This combat is over."
    assert legal_actions(state, HELEN, T0).advance is False


@pytest.mark.parametrize(
    ("fighters", "message"),
    [
        ([Fighter(1, "A", 1, 1)], "A combat needs at least two characters."),
        ([Fighter(1, "A", 1, 1), Fighter(1, "B", 1, 1)], "A character is listed twice."),
        ([Fighter(1, "A", 1, 1), Fighter(2, " ", 1, 1)], "Each fighter needs a name."),
        (
            [Fighter(1, "A", -1, 1), Fighter(2, "B", 1, 1)],
            "A's Physical, Mental and Rage rounds must be whole numbers ≥ 0.",
        ),
    ],
)
def test_a_bad_start_is_refused(fighters: list[Fighter], message: str) -> None:
    assert refused(start_combat, fighters=fighters, now=T0) == message


def test_the_surprise_must_be_a_fighters() -> None:
    fighters = [Fighter(1, "A", 1, 1), Fighter(2, "B", 1, 1)]
    assert refused(start_combat, fighters=fighters, now=T0, surprise=3) == (
        "The Surprise Action must be one of the fighters'."
    )


# --- the state as data ------------------------------------------------------------------------


def test_the_state_round_trips_through_json() -> None:
    state = set_rage_rounds(three(surprise=GRADY), fighter=HELEN, rounds=2, now=T0).state
    state = attack(state, GRADY, HELEN, MENTAL, "Dominate", failed=True)
    state = grapple(state, fighter=CAMILLE, by=HELEN, now=T0).state
    state = assist_attacker(state, helper=HELEN, attacker=CAMILLE, now=T0).state
    again = CombatState.from_dict(json.loads(json.dumps(state.to_dict())))
    assert again == state
    assert again.to_dict() == state.to_dict()


def test_an_unknown_schema_is_refused() -> None:
    data = three().to_dict() | {"schema": 99}
    with pytest.raises(ValueError):
        CombatState.from_dict(data)


def test_describe_gives_the_dashboard_the_round_the_order_and_who_acts() -> None:
    state = set_rage_rounds(three(), fighter=HELEN, rounds=1, now=T0).state
    state = attack(state, HELEN, GRADY, MENTAL, "Dominate", failed=True)
    view = describe(state, now=T0 + 60)
    assert view["label"] == "Turn 1 · Everyman round"
    assert view["acting"] == HELEN
    assert [row["name"] for row in view["order"]] == ["Helen", "Camille", "Grady"]
    grady = view["order"][2]
    assert grady["targeted"] == {"physical": 0, "social": 0, "mental": 1}
    assert grady["limits"] == {"physical": 2, "social": 1, "mental": 1}
    assert view["order"][0]["standard_left"] is False
    assert "immunities" not in view
    state = inflict(state, fighter=GRADY, by=HELEN, effect="unconscious", now=T0).state
    view = describe(state, now=T0 + 60)
    assert view["order"][2]["conditions"] == ["unconscious (9 more minutes)"]
    json.dumps(view)


def test_every_move_returns_a_transition_with_events() -> None:
    step = start_combat(fighters=[Fighter(1, "A", 1, 1), Fighter(2, "B", 1, 1)], now=T0)
    assert isinstance(step, CombatTransition) and step.events[0].kind == "combat_started"


# --- docs/rules.md "bns: combat rounds" stays true ------------------------------------------

READ_ONLY = {
    "whose_turn",
    "round_label",
    "who_goes_first",
    "legal_actions",
    "describe",
    "conditions",
}


def _doc_rows() -> dict[str, str]:
    text = (Path(__file__).resolve().parents[2] / "docs" / "rules.md").read_text()
    section = text.split("## bns: combat rounds", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        if line.startswith("| `"):
            for call in line.split("|")[1].split("`")[1::2]:
                rows[call.split("(", 1)[0]] = call
    return rows | {name: section for name in READ_ONLY if f"`{name}(" in section}


def test_the_docs_list_every_public_function_of_the_combat_tracker_with_its_arguments() -> None:
    rows = _doc_rows()
    public = {
        name: f
        for name, f in inspect.getmembers(bns_combat, inspect.isfunction)
        if not name.startswith("_") and f.__module__ == bns_combat.__name__
    }
    assert set(rows) == set(public)
    for name, f in public.items():
        if name in READ_ONLY:
            continue
        documented = rows[name].split("(", 1)[1].split(")", 1)[0].replace(" ", "").split(",")
        params = [p for p in inspect.signature(f).parameters if p not in ("state", "now")]
        assert sorted(d for d in documented if d) == sorted(params), name
