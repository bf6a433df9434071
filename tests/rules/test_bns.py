"""The ``bns`` opposed challenge (seeds/002, By Night Studios MET combat
summary): every rule statement about tests, pools, exceptional success,
Willpower retests, damage and maneuvers, cited by the seed's headings, and
rule vectors written by hand from the seed."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from challenges.rules import bns
from challenges.rules.bns import (
    AttackKind,
    BnsChallengeState,
    BnsStage,
    Defence,
    Effect,
    Fighter,
    Maneuver,
    ManeuverUse,
    Payment,
    PhysicalFocus,
    Result,
    RulesError,
    Side,
    WoundTrack,
)
from challenges.rules.core import Immunity

A, D = Side.CHALLENGER, Side.DEFENDER
T = {"R": "rock", "P": "paper", "S": "scissors"}
NOW = 1000.0


def fighter(name: str = "Alice", **kw: Any) -> Fighter:
    """A fighter with small defaults: Physical 3, Social 3, Mental 3, no
    skills, Willpower 3 of 5."""
    base: dict[str, Any] = {
        "physical": 3,
        "social": 3,
        "mental": 3,
        "willpower": 3,
        "willpower_max": 5,
    }
    base.update(kw)
    return Fighter(name=name, **base)


#: Options under which a pool may add a Skill the fighter lacks: for the tables
#: of :func:`pools`, whose attacker has no Skill at all.
ANY_SKILL = replace(bns.BNS, unskilled_attacks=True)


def pools(a_pool: int, d_pool: int, *, a_wp: int = 3, d_wp: int = 3) -> tuple[Fighter, Fighter]:
    """An attacker whose brawl/melee/thrown/firearms pool is ``a_pool`` (all
    Physical, no Skill: open her melee, thrown or firearms attack under
    :data:`ANY_SKILL`) and a defender whose Dodge pool is ``d_pool``."""
    return (
        fighter("Alice", physical=a_pool, willpower=a_wp, character_id=1),
        fighter("Bea", physical=d_pool, willpower=d_wp, character_id=2),
    )


def opened(attacker: Fighter | None = None, defender: Fighter | None = None, **kw: Any):
    kw.setdefault("attack", "brawl")
    return bns.open_challenge(
        attacker=attacker or fighter("Alice", physical=5, character_id=1),
        defender=defender or fighter("Bea", physical=3, character_id=2),
        now=NOW,
        **kw,
    ).state


def test_(state: BnsChallengeState, throws: str) -> BnsChallengeState:
    """Both sides throw "RS" (attacker rock, defender scissors)."""
    state = bns.throw(state, side=A, throw=T[throws[0]], now=NOW).state
    return bns.throw(state, side=D, throw=T[throws[1]], now=NOW).state


test_.__test__ = False  # type: ignore[attr-defined]


def answered(state: BnsChallengeState, defence: Defence | None = None) -> BnsChallengeState:
    return bns.answer(state, defence=defence, now=NOW).state


# --- the package stands alone -------------------------------------------------


def test_the_bns_package_imports_only_the_standard_library_and_the_rules() -> None:
    allowed = set(sys.stdlib_module_names) | {"challenges"}
    root = Path(bns.__file__).parent
    for path in sorted(root.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                roots = {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                roots = {node.module.split(".")[0]}
                if roots == {"challenges"}:
                    assert node.module.startswith("challenges.rules"), (path.name, node.module)
            else:
                continue
            assert roots <= allowed, (path.name, roots)


def test_importing_bns_loads_no_django() -> None:
    code = "import challenges.rules.bns, sys; assert 'django' not in sys.modules"
    root = Path(bns.__file__).parents[3]
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_bns_names_are_not_reexported_by_the_met_rules() -> None:
    import challenges.rules as rules

    assert rules.throw is not bns.throw
    assert not hasattr(rules, "open_challenge")


# --- the Fighter ----------------------------------------------------------------


def test_a_fighter_round_trips_through_json() -> None:
    f = fighter(
        skills={"Brawl": 2, "Dodge": 1},
        focus="stamina",
        stock_npc=True,
        wound_track="incapacitated",
        knockout_immune=True,
        mortal=True,
        immunities=[Immunity(3, "Dominate", 1600.0)],
        free_maneuver_used=True,
        character_id=7,
    )
    assert Fighter.from_dict(json.loads(json.dumps(f.to_dict()))) == f
    assert Fighter.from_dict(
        json.loads(json.dumps(replace(f, mortal=False, vampire=True).to_dict()))
    ).vampire
    assert f.focus is PhysicalFocus.STAMINA and f.wound_track is WoundTrack.INCAPACITATED


def test_equal_fighters_hash_alike_so_a_state_can_be_a_set_member() -> None:
    one = fighter(skills={"Brawl": 2, "Dodge": 1})
    two = fighter(skills={"Dodge": 1, "Brawl": 2})
    assert one == two and hash(one) == hash(two)
    assert len({opened(one, fighter("Bea")), opened(two, fighter("Bea"))}) == 1


def test_skills_are_read_case_insensitively_and_missing_ones_are_zero() -> None:
    f = fighter(skills={"Firearms": 4})
    assert f.skill("firearms") == 4 and f.skill("FIREARMS ") == 4
    assert f.skill("Melee") == 0


@pytest.mark.parametrize(
    "kw",
    [{"physical": -1}, {"willpower": 6, "willpower_max": 5}, {"skills": {"Brawl": -1}}],
    ids=["negative attribute", "willpower above max", "negative skill"],
)
def test_a_fighter_with_impossible_ratings_is_refused(kw: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        fighter(**kw)


@pytest.mark.parametrize(("physical", "mental", "expected"), [(5, 3, 5), (2, 6, 6), (4, 4, 4)])
def test_initiative_is_the_higher_of_physical_and_mental(
    physical: int, mental: int, expected: int
) -> None:
    # seeds/002 "Resolving Combat"
    assert fighter(physical=physical, mental=mental).initiative == expected


# --- seeds/002 "Common Test Pools" ----------------------------------------------

SHEET = fighter(
    physical=4,
    social=2,
    mental=5,
    willpower=3,
    skills={"Brawl": 1, "Melee": 2, "Firearms": 3, "Dodge": 4, "Intimidation": 2},
)


@pytest.mark.parametrize(
    ("kw", "expected"),
    [
        ({"attack": AttackKind.BRAWL}, 4 + 1),  # Attacking — Unarmed: Physical + Brawl
        ({"attack": AttackKind.MELEE}, 4 + 2),  # Attacking — Armed: Physical + Melee
        ({"attack": AttackKind.FIREARMS}, 4 + 3),  # Attacking — Firearm: Physical + Firearms
        ({"attack": AttackKind.THROWN}, 4 + 2),  # thrown: the option's default, Melee
        ({"attack": AttackKind.THROWN, "thrown_skill": "Brawl"}, 4 + 1),
        ({"defence": Defence.DODGE}, 4 + 4),  # Defense — Physical: Physical + Dodge
        ({"defence": Defence.SOCIAL}, 2 + 3),  # Defense — Social: Social + current Willpower
        ({"defence": Defence.MENTAL}, 5 + 3),  # Defense — Mental: Mental + current Willpower
        ({"attack": AttackKind.SOCIAL, "power_skill": "Intimidation"}, 2 + 2),
        ({"attack": AttackKind.MENTAL}, 5),  # a power naming no skill: the attribute
        ({"attack": AttackKind.BRAWL, "modifiers": [("Disarm", -2)]}, 4 + 1 - 2),
    ],
)
def test_common_test_pools(kw: dict[str, Any], expected: int) -> None:
    assert bns.test_pool(SHEET, **kw) == expected


def test_willpower_defences_read_current_willpower_not_permanent() -> None:
    # seeds/002 "Common Test Pools": "Social + Current Willpower"
    tired = replace(SHEET, willpower=0)
    assert bns.test_pool(tired, defence=Defence.SOCIAL) == 2
    assert bns.test_pool(tired, defence=Defence.MENTAL) == 5


def test_a_pool_is_never_negative() -> None:
    assert bns.test_pool(SHEET, attack=AttackKind.BRAWL, modifiers=[("ruling", -20)]) == 0


@pytest.mark.parametrize("kw", [{}, {"attack": "brawl", "defence": "dodge"}])
def test_a_pool_is_an_attacks_or_a_defences(kw: dict[str, Any]) -> None:
    with pytest.raises(RulesError):
        bns.test_pool(SHEET, **kw)


def test_the_thrown_pool_is_an_option_of_the_ruleset() -> None:
    brawler = fighter(physical=3, skills={"Brawl": 3, "Melee": 1}, character_id=1)
    options = replace(bns.BNS, thrown_skill="Brawl")
    assert answered(opened(brawler, attack="thrown")).attacker_pool == 4
    assert answered(opened(brawler, attack="thrown", options=options)).attacker_pool == 6


@pytest.mark.parametrize(
    ("attack", "power_skill", "lacking"),
    [
        ("brawl", "", ""),  # anyone can punch
        ("melee", "", ""),
        ("thrown", "", ""),  # thrown_skill: Melee
        ("firearms", "", "Firearms"),
        ("social", "", ""),
        ("social", "intimidation", ""),  # case and spacing ignored
        ("mental", "Occult", "Occult"),
    ],
)
def test_a_pool_adds_only_a_skill_on_her_sheet(attack: str, power_skill: str, lacking: str) -> None:
    sheet = fighter(skills={"Melee": 2, "Intimidation": 1, "Firearms": 0}, character_id=1)
    power = "" if AttackKind(attack).physical else "Dread Gaze"
    assert bns.lacking_skill(sheet, attack, power_skill=power_skill) == lacking
    kw = {"attack": attack, "power": power, "power_skill": power_skill}
    if lacking:
        with pytest.raises(RulesError, match=f"Alice has no {lacking}"):
            opened(sheet, **kw)
        assert opened(sheet, options=ANY_SKILL, **kw).attack is AttackKind(attack)
    else:
        assert opened(sheet, **kw).attack is AttackKind(attack)


# --- seeds/002 "Tests and Challenges" -------------------------------------------


@pytest.mark.parametrize(
    ("throws", "winner"),
    [("RS", A), ("SP", A), ("PR", A), ("SR", D), ("PS", D), ("RP", D)],
)
def test_the_winning_hand_wins_the_test_whatever_the_pools(throws: str, winner: Side) -> None:
    # seeds/002 "Winning a Test", "Losing the Test"
    a, d = pools(1, 9)
    state = test_(answered(opened(a, d)), throws)
    assert state.tests[0].winner is winner and not state.tests[0].tie


@pytest.mark.parametrize(
    ("a_pool", "d_pool", "winner"),
    [(6, 5, A), (5, 5, D), (4, 5, D), (1, 0, A), (0, 0, D)],
)
def test_a_tie_goes_to_the_attacker_only_when_her_pool_is_greater(
    a_pool: int, d_pool: int, winner: Side
) -> None:
    # seeds/002 "Tying the Test"
    a, d = pools(a_pool, d_pool)
    for throws in ("RR", "PP", "SS"):
        state = test_(answered(opened(a, d)), throws)
        assert state.tests[0].tie and state.tests[0].winner is winner


def test_both_pools_are_known_once_the_defender_answers() -> None:
    a, d = pools(6, 4)
    state = opened(a, d)
    assert state.attacker_pool is None and state.defender_pool is None
    step = bns.answer(state, now=NOW)
    assert (step.state.attacker_pool, step.state.defender_pool) == (6, 4)
    assert step.events[0].data == {"defence": "dodge", "attacker_pool": 6, "defender_pool": 4}


def test_a_throw_stays_hidden_until_both_are_in() -> None:
    state = answered(opened())
    step = bns.throw(state, side=D, throw="rock", now=NOW)
    assert [e.kind for e in step.events] == ["threw"]
    assert "rock" not in json.dumps([e.data for e in step.events])
    step = bns.throw(step.state, side=A, throw="paper", now=NOW)
    revealed = next(e for e in step.events if e.kind == "revealed")
    assert revealed.data["attacker_throw"] == "paper" and revealed.data["defender_throw"] == "rock"


def test_a_side_cannot_throw_twice_in_one_test() -> None:
    state = bns.throw(answered(opened()), side=A, throw="rock", now=NOW).state
    with pytest.raises(RulesError, match="already thrown"):
        bns.throw(state, side=A, throw="paper", now=NOW)


def test_nobody_throws_before_the_defender_answers() -> None:
    with pytest.raises(RulesError):
        bns.throw(opened(), side=A, throw="rock", now=NOW)


def test_the_defender_chooses_when_a_power_allows_more_than_one_defence() -> None:
    state = opened(attack="mental", power="Dread Gaze", defences=["mental", "social"])
    assert bns.legal_moves(state, D).defences == (Defence.MENTAL, Defence.SOCIAL)
    with pytest.raises(RulesError, match="Choose your defence"):
        bns.answer(state, now=NOW)
    with pytest.raises(RulesError):
        bns.answer(state, defence="dodge", now=NOW)
    assert answered(state, Defence.SOCIAL).defence is Defence.SOCIAL


def test_one_allowed_defence_is_a_single_tap() -> None:
    assert answered(opened(attack="social", power="Majesty")).defence is Defence.SOCIAL


# --- seeds/002 "Exceptional Success" and the Willpower retest ---------------------


def test_exceptional_success_needs_every_test_won_outright_and_a_greater_pool() -> None:
    a, d = pools(5, 3)
    won = bns.accept(test_(answered(opened(a, d)), "RS"), side=D, now=NOW).state
    assert won.result is Result.EXCEPTIONAL and won.damage == 2


def test_no_exceptional_success_with_equal_pools() -> None:
    a, d = pools(5, 5)
    won = bns.accept(test_(answered(opened(a, d)), "RS"), side=D, now=NOW).state
    assert won.result is Result.SUCCESS and won.damage == 1


def test_no_exceptional_success_when_a_test_was_won_on_a_tie() -> None:
    a, d = pools(5, 3)
    won = bns.accept(test_(answered(opened(a, d)), "RR"), side=D, now=NOW).state
    assert won.result is Result.SUCCESS


def test_a_defender_who_wins_never_scores_an_exceptional_success() -> None:
    # seeds/002: "Defenders who win the test do not check for exceptional successes."
    a, d = pools(1, 9)
    lost = bns.accept(test_(answered(opened(a, d)), "SR"), side=A, now=NOW).state
    assert lost.result is Result.FAILURE and lost.damage == 0


def test_a_defender_retest_can_deny_the_exceptional_success() -> None:
    # seeds/002: "It is often wise for a defender to retest when an attacker
    # scores an outright win on a test ... (even if the attacker will win the
    # trait comparison)."
    a, d = pools(5, 3)
    state = test_(answered(opened(a, d)), "RS")
    state = bns.retest(state, side=D, now=NOW).state
    state = test_(state, "PP")
    assert state.result is Result.SUCCESS and state.defender_willpower_spent == 1


def test_only_the_loser_of_a_test_may_retest() -> None:
    # seeds/002: "If you lose an opposed test (and only if you lose)"
    state = test_(answered(opened()), "RS")
    assert state.stage is BnsStage.RETEST and state.retest_side is D
    with pytest.raises(RulesError):
        bns.retest(state, side=A, now=NOW)
    assert bns.legal_moves(state, A) == bns.BnsMoves()


def test_the_second_test_is_final_and_cannot_be_retested() -> None:
    # seeds/002: "The results of the second test are final. The second test cannot be retested."
    state = test_(answered(opened()), "RS")
    state = test_(bns.retest(state, side=D, now=NOW).state, "SR")
    assert state.stage is BnsStage.RESOLVED and state.result is Result.FAILURE
    with pytest.raises(RulesError):
        bns.retest(state, side=A, now=NOW)


def test_a_retest_costs_one_willpower() -> None:
    a, d = pools(3, 3, d_wp=1)
    state = test_(answered(opened(a, d)), "RS")
    state = bns.retest(state, side=D, now=NOW).state
    assert state.willpower_left(D) == 0
    assert state.fighter_after(D).willpower == 0


def test_a_loser_without_willpower_cannot_retest_and_the_challenge_resolves() -> None:
    a, d = pools(3, 3, d_wp=0)
    state = test_(answered(opened(a, d)), "RS")
    assert state.stage is BnsStage.RESOLVED and state.result is Result.SUCCESS


def test_the_winner_of_the_final_test_wins_the_challenge() -> None:
    # seeds/002 "Winning a Challenge": "if you win the final test ... after all retests"
    a, d = pools(5, 3)
    state = test_(answered(opened(a, d)), "SR")  # the attacker loses the first test
    state = test_(bns.retest(state, side=A, now=NOW).state, "RS")
    assert state.result is Result.SUCCESS  # not exceptional: she lost the first test
    assert state.attacker_willpower_spent == 1


# --- rule vectors, written by hand from seeds/002 -----------------------------------
# (attack, attacker pool, defender pool, first throws, retest?, second throws,
#  result, damage, attacker Willpower spent, defender Willpower spent)

VECTORS = [
    ("brawl", 5, 3, "RS", False, "", Result.EXCEPTIONAL, 2, 0, 0),
    ("brawl", 5, 5, "RS", False, "", Result.SUCCESS, 1, 0, 0),
    ("brawl", 5, 3, "RR", False, "", Result.SUCCESS, 1, 0, 0),
    ("brawl", 3, 5, "RR", True, "PR", Result.SUCCESS, 1, 1, 0),
    ("brawl", 5, 5, "RR", True, "RR", Result.FAILURE, 0, 1, 0),
    ("firearms", 6, 2, "RS", True, "RS", Result.EXCEPTIONAL, 3, 0, 1),
    ("firearms", 6, 2, "RS", True, "SR", Result.FAILURE, 0, 0, 1),
    ("firearms", 6, 2, "RS", True, "RR", Result.SUCCESS, 2, 0, 1),
    ("firearms", 2, 6, "RS", False, "", Result.SUCCESS, 2, 0, 0),
    ("melee", 4, 4, "SP", False, "", Result.SUCCESS, 1, 0, 0),
    ("thrown", 3, 1, "PR", False, "", Result.EXCEPTIONAL, 2, 0, 0),
    ("brawl", 2, 6, "SR", False, "", Result.FAILURE, 0, 0, 0),
    ("melee", 4, 4, "PP", True, "SS", Result.FAILURE, 0, 1, 0),
    ("melee", 5, 4, "PS", True, "SP", Result.SUCCESS, 1, 1, 0),
    ("melee", 5, 4, "PS", True, "PP", Result.SUCCESS, 1, 1, 0),
    ("brawl", 0, 0, "RS", False, "", Result.SUCCESS, 1, 0, 0),
]


@pytest.mark.parametrize(
    ("attack", "a_pool", "d_pool", "first", "again", "second", "result", "damage", "a_wp", "d_wp"),
    VECTORS,
)
def test_rule_vectors(
    attack: str,
    a_pool: int,
    d_pool: int,
    first: str,
    again: bool,
    second: str,
    result: Result,
    damage: int,
    a_wp: int,
    d_wp: int,
) -> None:
    attacker, defender = pools(a_pool, d_pool)
    state = test_(answered(opened(attacker, defender, attack=attack, options=ANY_SKILL)), first)
    assert state.stage is BnsStage.RETEST
    loser = state.retest_side
    assert loser is not None
    if again:
        state = test_(bns.retest(state, side=loser, now=NOW).state, second)
    else:
        state = bns.accept(state, side=loser, now=NOW).state
    assert state.stage is BnsStage.RESOLVED
    assert (state.result, state.damage) == (result, damage)
    assert (state.attacker_willpower_spent, state.defender_willpower_spent) == (a_wp, d_wp)
    assert state.exceptional is (result is Result.EXCEPTIONAL)
    assert len(state.tests) == (2 if again else 1)


# --- damage: seeds/002 (under "Common Test Pools") and "Exceptional Success" ----------


@pytest.mark.parametrize(
    ("attack", "normal", "exceptional"),
    [("brawl", 1, 2), ("melee", 1, 2), ("thrown", 1, 2), ("firearms", 2, 3)],
)
def test_damage_by_attack_kind(attack: str, normal: int, exceptional: int) -> None:
    assert bns.damage_of(AttackKind(attack), exceptional=False) == normal
    assert bns.damage_of(AttackKind(attack), exceptional=True) == exceptional


def test_a_power_deals_the_options_damage_and_no_extra_point() -> None:
    # "Exceptional successes inflict an extra point of damage, or provide
    # whatever bonus the power describes."
    assert bns.damage_of(AttackKind.MENTAL, exceptional=True) == 0
    options = replace(bns.BNS, power_damage=1)
    assert bns.damage_of(AttackKind.SOCIAL, exceptional=True, options=options) == 1


@pytest.mark.parametrize(
    ("attack", "maneuver", "exceptional", "before", "after"),
    [
        ("brawl", Maneuver.GRAPPLE, False, 0, 0),
        ("brawl", Maneuver.GRAPPLE, True, 0, 1),
        ("firearms", Maneuver.BLINDING_ATTACK, True, 0, 1),
        ("firearms", Maneuver.KNOCK_DOWN, False, 1, 1),
        ("firearms", Maneuver.KNOCK_DOWN, True, 2, 2),
        ("brawl", Maneuver.KNOCK_DOWN, False, 0, 0),
        ("melee", Maneuver.DISARM, True, 2, 2),
    ],
)
def test_maneuvers_reduce_damage_never_below_zero_in_the_chosen_order(
    attack: str, maneuver: Maneuver, exceptional: bool, before: int, after: int
) -> None:
    uses = (ManeuverUse(maneuver),)
    order = bns.ExceptionalOrder.AFTER_REDUCTION
    kind = AttackKind(attack)
    assert bns.damage_of(kind, exceptional=exceptional, maneuvers=uses) == before
    options = replace(bns.BNS, exceptional_order=order)
    assert bns.damage_of(kind, exceptional=exceptional, maneuvers=uses, options=options) == after


# --- seeds/002 "Combat Maneuvers" ----------------------------------------------------

STRONG = fighter("Alice", physical=6, skills={"Brawl": 2, "Melee": 2}, character_id=1)
DOWN = fighter("Bea", physical=3, wound_track="incapacitated", mortal=True, character_id=2)

# (maneuver, attack, extra open flags, pool modifier, damage on a plain success, effect)
MANEUVER_TABLE = [
    (Maneuver.BURST_OF_SPEED, "brawl", {}, 0, 1, None),
    (Maneuver.BLINDING_ATTACK, "brawl", {}, 0, 0, Effect.BLINDED),
    (Maneuver.DISARM, "melee", {}, -2, 1, Effect.DISARMED),
    (Maneuver.GRAPPLE, "brawl", {}, 0, 0, Effect.GRAPPLED),
    (
        Maneuver.KNOCK_OUT,
        "brawl",
        {"surprise": True, "first_round": True},
        -2,
        1,
        Effect.UNCONSCIOUS,
    ),
    (Maneuver.QUICK_DRAW, "melee", {}, 0, 1, None),
    (Maneuver.KNOCK_DOWN, "brawl", {}, 0, 0, Effect.PRONE),
    (Maneuver.FIGHTING_BLIND, "brawl", {"attacker_blind": True}, 0, 1, None),
    (Maneuver.PIERCE_THE_HEART, "melee", {}, -3, 1, Effect.KILLED),
]


def test_the_table_lists_every_maneuver_of_the_seed() -> None:
    assert {row[0] for row in MANEUVER_TABLE} == set(Maneuver) == set(bns.MANEUVERS)


@pytest.mark.parametrize(
    ("maneuver", "attack", "flags", "modifier", "damage", "effect"),
    MANEUVER_TABLE,
    ids=[m.value for m, *_ in MANEUVER_TABLE],
)
def test_each_maneuver_modifies_the_pool_and_acts_on_success(
    maneuver: Maneuver,
    attack: str,
    flags: dict[str, Any],
    modifier: int,
    damage: int,
    effect: Effect | None,
) -> None:
    state = opened(STRONG, DOWN, attack=attack, maneuvers=[maneuver], **flags)
    assert state.attacker_willpower_spent == 1  # "spend 1 Willpower to apply one combat maneuver"
    state = answered(state)
    assert state.attacker_pool == 8 + modifier
    state = bns.accept(test_(state, "RR"), side=D, now=NOW).state  # won on a tie: not exceptional
    assert state.result is Result.SUCCESS and state.damage == damage
    assert [i.effect for i in state.effects] == ([] if effect is None else [effect])


def test_knock_out_leaves_her_unconscious_for_ten_minutes() -> None:
    state = opened(STRONG, DOWN, maneuvers=["Knock Out"], surprise=True, first_round=True)
    state = bns.accept(test_(answered(state), "RR"), side=D, now=NOW).state
    assert state.effects[0].until == NOW + 600


def test_effects_need_a_success() -> None:
    state = opened(STRONG, DOWN, maneuvers=["grapple"])
    state = bns.accept(test_(answered(state), "SR"), side=A, now=NOW).state
    assert state.result is Result.FAILURE and state.effects == () and state.damage == 0


@pytest.mark.parametrize(
    ("flags", "defender"),
    [
        ({"surprise": True}, DOWN),  # not the first round
        ({"first_round": True}, DOWN),  # the target expects the attack
        ({"surprise": True, "first_round": True}, replace(DOWN, knockout_immune=True)),
    ],
    ids=["later round", "not surprised", "vampire"],
)
def test_knock_out_needs_the_first_round_a_surprised_target_and_one_who_can_be_knocked_out(
    flags: dict[str, Any], defender: Fighter
) -> None:
    with pytest.raises(RulesError):
        opened(STRONG, defender, maneuvers=["knock_out"], **flags)


def test_pierce_the_heart_needs_the_incapacitated_track_or_a_stock_npc() -> None:
    healthy = replace(DOWN, wound_track=WoundTrack.INJURED)
    with pytest.raises(RulesError, match="Incapacitated"):
        opened(STRONG, healthy, attack="melee", maneuvers=["pierce_the_heart"])
    npc = replace(healthy, stock_npc=True)
    state = opened(STRONG, npc, attack="melee", maneuvers=["pierce_the_heart"])
    state = bns.accept(test_(answered(state), "RR"), side=D, now=NOW).state
    assert [i.effect for i in state.effects] == [Effect.STAKED]


def test_pierce_the_heart_needs_a_melee_or_ranged_weapon() -> None:
    with pytest.raises(RulesError, match="weapon"):
        opened(STRONG, DOWN, attack="brawl", maneuvers=["pierce_the_heart"])
    armed = replace(STRONG, skills={**STRONG.skills, "Firearms": 1})
    for attack in ("melee", "thrown", "firearms"):
        assert opened(armed, DOWN, attack=attack, maneuvers=["pierce_the_heart"]).maneuvers


@pytest.mark.parametrize(
    ("creature", "staking", "effects"),
    [
        ("mortal", False, [Effect.KILLED]),
        ("mortal", True, [Effect.KILLED]),
        ("vampire", True, [Effect.STAKED]),
        ("vampire", False, []),
        ("other", True, []),
        ("other", False, []),
    ],
    ids=[
        "mortal killed",
        "mortal killed by a stake too",
        "vampire staked",
        "vampire without a staking weapon",
        "garou not staked",
        "garou plain hit",
    ],
)
def test_pierce_the_heart_kills_a_mortal_and_stakes_a_vampire_with_a_staking_weapon(
    creature: str, staking: bool, effects: list[Effect]
) -> None:
    """seeds/002 Pierce the Heart: "If you hit a mortal with this attack, she
    is instantly killed. If this attack hits a vampire and your weapon has
    the staking quality, the vampire is staked." Anyone else: the damage."""
    target = replace(DOWN, mortal=creature == "mortal", vampire=creature == "vampire")
    state = opened(STRONG, target, attack="melee", maneuvers=["pierce_the_heart"], staking=staking)
    state = bns.accept(test_(answered(state), "RR"), side=D, now=NOW).state
    assert [i.effect for i in state.effects] == effects


def test_without_fighting_blind_an_attack_on_an_unseen_opponent_misses() -> None:
    step = bns.open_challenge(
        attacker=STRONG, defender=DOWN, attack="brawl", attacker_blind=True, now=NOW
    )
    assert step.state.stage is BnsStage.RESOLVED and step.state.result is Result.FAILURE
    assert [e.kind for e in step.events] == ["opened", "missed", "resolved"]


def test_maneuvers_go_only_with_physical_attacks() -> None:
    with pytest.raises(RulesError, match="Physical"):
        opened(attack="mental", power="Dominate", maneuvers=["disarm"])


# --- paying for maneuvers: seeds/002 "Combat Maneuvers", "Physical Focuses in
# Combat", "Assist Attacker" ---------------------------------------------------------


def test_only_one_maneuver_may_be_bought_with_willpower() -> None:
    with pytest.raises(RulesError, match="only one maneuver with Willpower"):
        opened(STRONG, DOWN, maneuvers=["disarm", "grapple"])


def test_a_maneuver_needs_willpower_to_buy() -> None:
    broke = replace(STRONG, willpower=0)
    with pytest.raises(RulesError, match="no Willpower"):
        opened(broke, DOWN, maneuvers=["grapple"])


def test_a_maneuver_cannot_be_applied_twice() -> None:
    twice = [("grapple", "willpower"), ("grapple", "assist")]
    with pytest.raises(RulesError, match="once"):
        opened(STRONG, DOWN, maneuvers=twice, assist="player")


FOCUS_FREE = {
    PhysicalFocus.STRENGTH: {
        Maneuver.DISARM,
        Maneuver.GRAPPLE,
        Maneuver.KNOCK_DOWN,
        Maneuver.PIERCE_THE_HEART,
    },
    PhysicalFocus.DEXTERITY: {
        Maneuver.BURST_OF_SPEED,
        Maneuver.DISARM,
        Maneuver.FIGHTING_BLIND,
        Maneuver.QUICK_DRAW,
    },
    PhysicalFocus.STAMINA: set(),
}


@pytest.mark.parametrize("focus", list(PhysicalFocus))
def test_each_focus_gives_its_seeds_maneuvers_free_once_per_combat(focus: PhysicalFocus) -> None:
    attacker = replace(STRONG, focus=focus, willpower=0)
    offered = bns.maneuver_offers(attacker=attacker, defender=DOWN, attack="melee")
    free = {u.maneuver for u in offered if u.paid is Payment.FOCUS}
    assert free == FOCUS_FREE[focus]
    assert not any(u.paid is Payment.WILLPOWER for u in offered)  # no Willpower left


def test_the_free_focus_maneuver_is_spent_for_the_combat() -> None:
    attacker = replace(STRONG, focus=PhysicalFocus.STRENGTH)
    state = opened(attacker, DOWN, maneuvers=[("grapple", "focus")])
    assert state.focus_used and state.attacker_willpower_spent == 0
    assert state.fighter_after(A).free_maneuver_used
    used = state.fighter_after(A)
    with pytest.raises(RulesError, match="used your focus"):
        opened(used, DOWN, maneuvers=[("knock_down", "focus")])


def test_assist_attacker_gives_a_second_maneuver_without_willpower() -> None:
    state = opened(
        STRONG, DOWN, maneuvers=[("disarm", "willpower"), ("grapple", "assist")], assist="player"
    )
    assert len(state.maneuvers) == 2 and state.attacker_willpower_spent == 1


def test_a_free_maneuver_needs_an_allys_assist() -> None:
    with pytest.raises(RulesError, match="Assist"):
        opened(STRONG, DOWN, maneuvers=[("grapple", "assist")])
    with pytest.raises(RulesError, match="Assist"):
        opened(STRONG, DOWN, maneuvers=[("grapple", "assist")], assist="stock_npc")


def test_at_most_two_maneuvers_on_one_attack() -> None:
    attacker = replace(STRONG, focus=PhysicalFocus.STRENGTH)
    two = [("disarm", "willpower"), ("grapple", "focus")]
    assert len(opened(attacker, DOWN, maneuvers=two).maneuvers) == 2
    with pytest.raises(RulesError):
        opened(
            attacker,
            DOWN,
            maneuvers=[*two, ("knock_down", "assist"), ("blinding_attack", "assist")],
            assist="player",
        )


def test_willpower_focus_and_assist_together_still_give_two_maneuvers_at_most() -> None:
    attacker = replace(STRONG, focus=PhysicalFocus.STRENGTH)
    three = [("disarm", "willpower"), ("grapple", "focus"), ("blinding_attack", "assist")]
    with pytest.raises(RulesError, match="At most two"):
        opened(attacker, DOWN, maneuvers=three, assist="player")


def test_escaping_a_grapple_is_a_brawl_or_melee_challenge_that_deals_no_damage() -> None:
    # seeds/002 "Combat Maneuvers", Grapple: "escape ... by besting you in an
    # opposed challenge (Brawl or Melee)"
    state = opened(*pools(5, 3), escape=True)
    state = bns.accept(test_(answered(state), "RS"), side=D, now=NOW).state
    assert state.result is Result.EXCEPTIONAL and state.damage == 0
    with pytest.raises(RulesError, match="Brawl or Melee"):
        opened(*pools(5, 3), attack="firearms", escape=True)
    with pytest.raises(RulesError, match="Brawl or Melee"):
        opened(STRONG, DOWN, maneuvers=["grapple"], escape=True)


@pytest.mark.parametrize(
    ("attack", "allowed"),
    [("brawl", True), ("melee", True), ("thrown", False), ("firearms", False)],
)
def test_only_brawl_and_melee_escape_a_grapple_and_the_opened_event_says_escape(
    attack: str, allowed: bool
) -> None:
    # seeds/002 Grapple: "besting you in an opposed challenge (Brawl or Melee)"
    assert (AttackKind(attack) in bns.ESCAPE_ATTACKS) is allowed
    attacker, defender = pools(5, 3)
    if not allowed:
        with pytest.raises(RulesError, match="Brawl or Melee"):
            bns.open_challenge(
                attacker=attacker, defender=defender, attack=attack, escape=True, now=NOW
            )
        return
    step = bns.open_challenge(
        attacker=attacker, defender=defender, attack=attack, escape=True, now=NOW, options=ANY_SKILL
    )
    assert step.state.escape and step.events[0].data["escape"] is True
    plain = bns.open_challenge(
        attacker=attacker, defender=defender, attack=attack, now=NOW, options=ANY_SKILL
    )
    assert plain.events[0].data["escape"] is False


@pytest.mark.parametrize(
    ("attacker_physical", "allowed"), [(3, False), (4, True)], ids=["not higher", "higher"]
)
@pytest.mark.parametrize("maneuver", ["knock_down", "knock_out"])
def test_a_stamina_focus_resists_knock_out_and_knock_down_unless_the_attacker_is_stronger(
    attacker_physical: int, allowed: bool, maneuver: str
) -> None:
    attacker = replace(STRONG, physical=attacker_physical)
    target = replace(DOWN, focus=PhysicalFocus.STAMINA)
    flags = {"surprise": True, "first_round": True}
    if allowed:
        assert opened(attacker, target, maneuvers=[maneuver], **flags).maneuvers
    else:
        with pytest.raises(RulesError, match="Stamina"):
            opened(attacker, target, maneuvers=[maneuver], **flags)


# --- seeds/002 "Mass Combat": Stock NPC Tactics ---------------------------------------


def test_a_stock_npcs_assist_attacker_adds_one_to_the_attack_pool() -> None:
    state = answered(opened(STRONG, DOWN, assist="stock_npc"))
    assert state.attacker_pool == 9
    assert ("Stock NPC's assist", 1) in bns.pool_modifiers(state, A)


def test_a_stock_npcs_assist_defender_adds_one_to_a_dodge_defence_only() -> None:
    assert answered(opened(STRONG, DOWN, defence_assist=True)).defender_pool == 4
    mixed = opened(STRONG, DOWN, defence_assist=True, defences=["dodge", "mental"])
    assert answered(mixed, Defence.MENTAL).defender_pool == 3 + 3


def test_mass_combat_tactics_do_not_help_mental_or_social_attacks() -> None:
    with pytest.raises(RulesError, match="Physical"):
        opened(attack="social", power="Majesty", assist="stock_npc")
    with pytest.raises(RulesError, match="Physical"):
        opened(attack="mental", power="Dominate", defence_assist=True)


# --- Mental and Social powers: seeds/002 "Retrying Failed Attacks" -----------------------


def test_a_mental_or_social_attack_names_its_power_and_a_physical_one_none() -> None:
    with pytest.raises(RulesError, match="power"):
        opened(attack="mental")
    with pytest.raises(RulesError, match="no power"):
        opened(attack="brawl", power="Dominate")


def test_a_failed_mental_attack_leaves_the_target_immune_for_ten_minutes() -> None:
    state = opened(attack="mental", power="Dominate")
    state = bns.accept(test_(answered(state), "SR"), side=A, now=NOW).state
    assert state.result is Result.FAILURE and state.immune_until == NOW + 600


def test_a_failed_physical_attack_leaves_no_immunity() -> None:
    state = bns.accept(test_(answered(opened()), "SR"), side=A, now=NOW).state
    assert state.immune_until is None


def test_the_immunity_lasts_as_long_as_the_one_option_says() -> None:
    options = replace(bns.BNS, immunity_seconds=300.0)
    state = opened(attack="social", power="Awe", options=options)
    state = bns.accept(test_(answered(state), "SR"), side=A, now=NOW).state
    assert state.immune_until == NOW + 300


IMMUNE_BEA = fighter(
    "Bea", physical=3, character_id=2, immunities=[Immunity(1, "Dominate", NOW + 540)]
)


@pytest.mark.parametrize(
    ("attacker_id", "power", "now", "refused"),
    [
        (1, "Dominate", NOW, "Bea is immune to Alice's Dominate for 9 more minutes."),
        (1, " dominate ", NOW + 539, "Bea is immune to Alice's Dominate for 1 more minute."),
        (1, "Dominate", NOW + 540, None),  # ten minutes are over
        (1, "Presence", NOW, None),  # another power
        (3, "Dominate", NOW, None),  # another attacker
    ],
    ids=[
        "that attacker, that power",
        "any spelling",
        "expired",
        "another power",
        "another attacker",
    ],
)
def test_an_immune_target_refuses_only_that_attackers_use_of_that_power(
    attacker_id: int, power: str, now: float, refused: str | None
) -> None:
    """seeds/002 "Retrying Failed Attacks": "If you fail a Mental or Social
    challenge, that target is immune to your use of that specific power for
    the next 10 minutes." Checked when the challenge opens, in a combat and
    out of one (the one check: core's ``immunity_to``)."""
    alice = fighter("Alice", mental=5, character_id=attacker_id)

    def attack() -> BnsChallengeState:
        return bns.open_challenge(
            attacker=alice, defender=IMMUNE_BEA, attack="mental", power=power, now=now
        ).state

    if refused is None:
        assert attack().stage is BnsStage.ANSWER
    else:
        with pytest.raises(RulesError) as err:
            attack()
        assert str(err.value) == refused


def test_an_immunity_never_refuses_a_physical_attack() -> None:
    alice = fighter("Alice", physical=5, character_id=1)
    assert opened(alice, IMMUNE_BEA).stage is BnsStage.ANSWER


def test_the_options_have_no_initiative_tie_the_narrator_orders_ties() -> None:
    """seeds/002 "Resolving Combat" is silent on ties: the narrator decides
    (``bns_combat.reorder``); no option stands for it (no dead options)."""
    assert "initiative_tie" not in bns.BNS.to_dict()
    assert not hasattr(bns, "InitiativeTie")


# --- bad input ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kw",
    [
        {"attack": "kick"},
        {"maneuvers": ["backflip"]},
        {"maneuvers": [("grapple", "gold")]},
        {"defences": ["parry"]},
        {"defences": []},
        {"attacker_modifiers": [("ruling", "two")]},
        {"assist": "dog"},
    ],
)
def test_bad_input_to_open_is_refused_with_a_rules_error(kw: dict[str, Any]) -> None:
    with pytest.raises(RulesError):
        opened(**kw)


def test_a_character_cannot_challenge_herself() -> None:
    with pytest.raises(RulesError, match="herself"):
        opened(STRONG, STRONG)


def test_a_bad_throw_is_refused() -> None:
    with pytest.raises(RulesError, match="rock, paper or scissors"):
        bns.throw(answered(opened()), side=A, throw="lizard", now=NOW)


# --- narrator's void and settle ----------------------------------------------------------


def test_a_narrator_voids_a_challenge_with_a_reason() -> None:
    state = test_(answered(opened(STRONG, DOWN, maneuvers=["grapple"])), "RS")
    with pytest.raises(RulesError, match="reason"):
        bns.void(state, reason=" ", now=NOW)
    step = bns.void(state, reason="Out of bounds", now=NOW)
    assert step.state.result is Result.VOID and step.state.damage == 0
    assert step.state.attacker_willpower_spent == 1  # spent Willpower stays spent
    assert [e.kind for e in step.events] == ["voided", "resolved"]
    with pytest.raises(RulesError, match="over"):
        bns.void(step.state, reason="again", now=NOW)


@pytest.mark.parametrize(
    ("winner", "result", "damage"), [(A, Result.SUCCESS, 1), (D, Result.FAILURE, 0)]
)
def test_a_narrator_settles_a_challenge_never_exceptionally(
    winner: Side, result: Result, damage: int
) -> None:
    state = test_(answered(opened(*pools(6, 2))), "RS")
    step = bns.settle(state, winner=winner, reason="ruled", now=NOW)
    assert (step.state.result, step.state.damage) == (result, damage)
    assert step.state.reason == "ruled"
    with pytest.raises(RulesError):
        bns.settle(step.state, winner=A, reason="again", now=NOW)


# --- legal moves ---------------------------------------------------------------------------


def test_legal_moves_follow_the_challenge() -> None:
    state = opened()
    assert bns.legal_moves(state, A) == bns.BnsMoves()
    assert bns.legal_moves(state, D).answer
    state = answered(state)
    assert bns.legal_moves(state, A).throw and bns.legal_moves(state, D).throw
    state = bns.throw(state, side=A, throw="rock", now=NOW).state
    assert not bns.legal_moves(state, A).any and bns.legal_moves(state, D).throw
    state = bns.throw(state, side=D, throw="scissors", now=NOW).state
    assert bns.legal_moves(state, D) == bns.BnsMoves(retest=True, accept=True)
    state = bns.accept(state, side=D, now=NOW).state
    assert not bns.legal_moves(state, A).any and not bns.legal_moves(state, D).any


def test_a_state_round_trips_through_json_at_every_stage() -> None:
    state = opened(STRONG, DOWN, maneuvers=["grapple"], attacker_modifiers=[("ruling", 1)])
    seen = [state]
    state = answered(state)
    seen.append(state)
    state = test_(state, "RS")
    seen.append(state)
    state = test_(bns.retest(state, side=D, now=NOW).state, "RS")
    seen.append(state)
    for s in seen:
        assert BnsChallengeState.from_dict(json.loads(json.dumps(s.to_dict()))) == s


# --- docs/rules.md "bns: test pools, maneuvers, the opposed challenge" ------------------

BNS_MOVES = ["open_challenge", "answer", "throw", "retest", "accept", "void", "settle"]


@pytest.mark.parametrize("move", BNS_MOVES)
def test_docs_list_each_bns_move_with_its_arguments(move: str) -> None:
    import inspect

    docs = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
    section = docs.read_text().split("## bns: test pools, maneuvers, the opposed challenge", 1)[1]
    row = next(line for line in section.splitlines() if line.startswith(f"| `bns.{move}("))
    documented = row.split("(", 1)[1].split(")", 1)[0].replace(" ", "").split(",")
    params = inspect.signature(getattr(bns, move)).parameters
    assert sorted(d for d in documented if d) == sorted(
        p for p in params if p not in ("state", "now")
    )
    assert "seeds/002" in row or "RULES.md" in row


def test_every_silent_point_is_an_option_that_says_the_narrator_decides() -> None:
    doc = bns.BnsOptions.__doc__ or ""
    for name in bns.BnsOptions.__dataclass_fields__:
        assert f"``{name}``" in doc, name
    assert doc.count("the narrator decides") >= 4


# --- the auto-answering NPC ----------------------------------------------------------------


def choose_rock(options: Any) -> Any:
    return options[0]


def test_an_npc_answers_with_its_best_defence_and_throws_after_the_player() -> None:
    target = replace(DOWN, mental=6)
    state = opened(STRONG, target, attack="mental", power="Dread", defences=["social", "mental"])
    step = bns.npc_move(state, D, choose=choose_rock, now=NOW)
    assert step is not None and step.state.defence is Defence.MENTAL
    state = step.state
    assert bns.npc_move(state, D, choose=choose_rock, now=NOW) is None  # waits for the player
    state = bns.throw(state, side=A, throw="paper", now=NOW).state
    step = bns.npc_move(state, D, choose=choose_rock, now=NOW)
    assert step is not None and step.state.tests[0].defender_throw is bns.Throw.ROCK


@pytest.mark.parametrize(("retests", "tests"), [(True, 2), (False, 1)])
def test_an_npc_retests_when_it_lost_and_has_willpower_if_its_setting_says_so(
    retests: bool, tests: int
) -> None:
    state = test_(answered(opened()), "PR")  # the NPC defender lost
    steps = bns.npc_moves(state, {D: retests}, choose=choose_rock, now=NOW)
    assert steps and len(steps[-1].state.tests) == tests


def test_two_npcs_play_a_challenge_to_its_end() -> None:
    steps = bns.npc_moves(opened(), {A: True, D: True}, choose=choose_rock, now=NOW)
    assert steps[-1].state.stage is BnsStage.RESOLVED
