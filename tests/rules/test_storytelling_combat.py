"""Combat in the Storytelling System (challenges.rules.storytelling.combat): one
row per statement of RULES.md `storytelling` about Initiative, turns, attack
pools, Defense, dodging, prone, cover, range and Speed, citing seeds/003."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from challenges.rules.storytelling import (
    STORYTELLING,
    Action,
    AttackKind,
    CombatState,
    DamageType,
    Fighter,
    InitiativeTie,
    RangeBand,
    RulesError,
    ScriptedDice,
    YieldUntil,
    act,
    add_fighter,
    attack_damage,
    attack_pool,
    defense_against,
    dodge,
    effective_defense,
    end_combat,
    end_turn,
    initiative_order,
    legal_moves,
    remove_fighter,
    roll,
    roll_initiative,
    start_combat,
    whose_turn,
    yards,
    yield_action,
)

# --- Initiative: seeds/003 "Combat" -------------------------------------------------------


def test_initiative_is_one_die_plus_the_modifier():
    # "the result of the roll of a single die + the character's Initiative modifier"
    assert roll_initiative(modifier=5, dice=ScriptedDice([7])).total == 12


def test_initiative_does_not_reroll_a_ten():
    dice = ScriptedDice([10, 10])
    assert roll_initiative(modifier=3, dice=dice).total == 13
    assert dice.left == 1  # only one die was rolled


def test_wound_penalties_apply_to_initiative():
    # RULES.md `storytelling`: "they apply to every roll, initiative included"
    assert roll_initiative(modifier=5, dice=ScriptedDice([4]), wound_penalty=-2).total == 7


ALICE = Fighter(1, "Alice", initiative_modifier=5, defense=2, speed=10)
BEA = Fighter(2, "Bea", initiative_modifier=3, defense=3, speed=9)
CAL = Fighter(3, "Cal", initiative_modifier=4, defense=1, speed=8)


def fight(faces=(2, 9, 6), fighters=(ALICE, BEA, CAL), **kw) -> CombatState:
    """Alice 5+2=7, Bea 3+9=12, Cal 4+6=10 by default: Bea, Cal, Alice."""
    return start_combat(fighters=fighters, dice=ScriptedDice(faces), **kw).state


def test_the_highest_initiative_acts_first():
    # "Starting with the character with the highest Initiative result and continuing on to
    # the lowest"
    state = fight()
    assert state.order == (2, 3, 1)
    assert whose_turn(state) == 2


@pytest.mark.parametrize(
    ("tie", "narrator_order", "order"),
    [
        # Alice 5+5=10, Bea 3+7=10, Cal 4+6=10: all tied (the seed is silent)
        (InitiativeTie.HIGHER_MODIFIER, (), (1, 3, 2)),  # higher modifier first
        (InitiativeTie.HIGHER_MODIFIER, (2, 3, 1), (1, 3, 2)),
        (InitiativeTie.NARRATOR, (2, 3, 1), (2, 3, 1)),  # the narrator's order
        (InitiativeTie.NARRATOR, (), (1, 2, 3)),  # else the order they joined
    ],
)
def test_initiative_ties_are_broken_as_the_options_say(tie, narrator_order, order):
    options = replace(STORYTELLING, initiative_tie=tie)
    state = fight(faces=(5, 7, 6), narrator_order=narrator_order, options=options)
    assert state.order == order


def test_equal_totals_and_modifiers_follow_the_narrator():
    twin = Fighter(4, "Dee", initiative_modifier=5)
    state = fight(faces=(3, 3), fighters=(ALICE, twin), narrator_order=(4, 1))
    assert state.order == (4, 1)


def test_initiative_is_rolled_once_per_fight_and_kept():
    # "Players do not make new Initiative rolls every turn."
    state = fight()
    for who in (2, 3, 1):
        state = act(state, fighter_id=who, action=Action.OTHER).state
    assert state.turn == 2 and state.order == (2, 3, 1) and whose_turn(state) == 2


def test_each_character_takes_one_instant_action_per_turn():
    # "each character gets to take a single instant action"
    state = act(fight(), fighter_id=2, action=Action.OTHER).state
    with pytest.raises(RulesError, match="Bea has already used her action"):
        act(state, fighter_id=2, action=Action.OTHER)


def test_a_character_acts_only_at_her_place_in_the_queue():
    with pytest.raises(RulesError, match="not Alice's turn"):
        act(fight(), fighter_id=1, action=Action.OTHER)


# --- yielding: "yield her character's action until later in the Initiative queue, or until
# the next turn" --------------------------------------------------------------------------


def test_a_yielded_action_can_be_taken_later_in_the_turn():
    state = yield_action(fight(), fighter_id=2, until=YieldUntil.LATER).state
    assert whose_turn(state) == 3 and legal_moves(state, 2).act
    state = act(state, fighter_id=3, action=Action.OTHER).state
    state = act(state, fighter_id=2, action=Action.ATTACK, target_id=1).state  # before Alice
    assert whose_turn(state) == 1
    with pytest.raises(RulesError, match="already used her action"):
        act(state, fighter_id=2, action=Action.OTHER)


def test_a_turn_waits_for_a_held_action_after_the_last_place():
    state = yield_action(fight(), fighter_id=2, until=YieldUntil.LATER).state
    state = act(state, fighter_id=3, action=Action.OTHER).state
    state = act(state, fighter_id=1, action=Action.OTHER).state
    assert state.turn == 1 and whose_turn(state) is None
    state = act(state, fighter_id=2, action=Action.OTHER).state
    assert state.turn == 2


def test_an_action_yielded_to_the_next_turn_is_taken_then_at_any_moment():
    state = yield_action(fight(), fighter_id=2, until=YieldUntil.NEXT_TURN).state
    state = yield_action(state, fighter_id=3, until=YieldUntil.NEXT_TURN).state
    assert not legal_moves(state, 2).act  # no action left this turn
    state = act(state, fighter_id=1, action=Action.OTHER).state
    assert state.turn == 2 and state.holding == (2, 3)
    assert whose_turn(state) == 1  # Bea and Cal hold: their places need no move
    state = act(state, fighter_id=3, action=Action.OTHER).state  # Cal acts before Alice
    state = act(state, fighter_id=1, action=Action.OTHER).state
    assert state.turn == 2  # the turn waits on Bea's held action
    with pytest.raises(RulesError, match="already used"):
        act(state, fighter_id=3, action=Action.OTHER)  # never two actions in one turn
    state = act(state, fighter_id=2, action=Action.OTHER).state
    assert state.turn == 3 and state.holding == ()


def test_the_narrator_ends_a_turn_and_actions_not_taken_are_lost():
    state = yield_action(fight(), fighter_id=2, until=YieldUntil.LATER).state
    done = end_turn(state)
    assert done.state.turn == 2 and done.state.holding == () and whose_turn(done.state) == 2


# --- Defense: seeds/003 "Avoiding Damage in Close Combat" ------------------------------------


@pytest.mark.parametrize(
    ("defense", "dodging", "earlier", "willpower", "effective"),
    [
        (3, False, 0, False, 3),
        (3, False, 1, False, 2),  # "For every attack ... after the first, reduce ... by one"
        (3, False, 5, False, 0),  # "(to a minimum of zero)"
        (3, True, 0, False, 6),  # "dodge, which doubles his Defense"
        (3, True, 2, False, 4),  # "the doubled Defense still decreases by one"
        (
            3,
            False,
            0,
            True,
            5,
        ),  # Willpower: "raise your Defense trait by two against a single attack"
        (1, False, 3, True, 2),
    ],
)
def test_defense_against_one_attack(defense, dodging, earlier, willpower, effective):
    got = effective_defense(defense, dodging=dodging, earlier_attacks=earlier, willpower=willpower)
    assert got == effective


def test_the_tracker_counts_attacks_on_a_target_each_turn():
    state = fight()  # Bea, Cal, Alice; Alice's Defense 2
    state, events = act(state, fighter_id=2, action=Action.ATTACK, target_id=1)
    assert events[0].data["defense"] == 2
    state, events = act(state, fighter_id=3, action=Action.ATTACK, target_id=1)
    assert events[0].data["defense"] == 1
    assert defense_against(state, 1) == 0
    state = act(state, fighter_id=1, action=Action.OTHER).state
    assert defense_against(state, 1) == 2  # a new turn


def test_dodging_doubles_defense_for_the_rest_of_the_turn_and_uses_her_action():
    state = fight()
    state = dodge(state, fighter_id=1).state  # Alice dodges before her place
    state, events = act(state, fighter_id=2, action=Action.ATTACK, target_id=1)
    assert events[0].data["defense"] == 4
    assert defense_against(state, 1) == 3
    state = act(state, fighter_id=3, action=Action.OTHER).state
    assert state.turn == 2  # Alice's place was skipped: her action went into the dodge


def test_a_character_who_has_acted_cannot_dodge():
    # "If your character hasn't yet acted this turn and is willing to forgo that action"
    state = act(fight(), fighter_id=2, action=Action.OTHER).state
    with pytest.raises(RulesError, match="cannot dodge"):
        dodge(state, fighter_id=2)


# --- attack pools: seeds/003 "Combat" and after --------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "dice"),
    [
        # "Unarmed close combat: Strength + Brawl, minus target's Defense and armour"
        ({"kind": AttackKind.UNARMED, "attribute": 3, "skill": 2, "defense": 2, "armor": 1}, 2),
        # "Armed close combat: Strength + Weaponry, minus target's Defense and armour"
        ({"kind": AttackKind.ARMED, "attribute": 3, "skill": 3, "defense": 2, "weapon": 2}, 6),
        # "Ranged combat (guns and bows): Dexterity + Firearms, minus target's armour"
        ({"kind": AttackKind.RANGED, "attribute": 3, "skill": 2, "defense": 2, "armor": 1}, 4),
        # Defense applies if the ranged attacker is "close enough ... (a few feet)"
        (
            {
                "kind": AttackKind.RANGED,
                "attribute": 3,
                "skill": 2,
                "defense": 2,
                "point_blank": True,
            },
            3,
        ),
        # "Ranged combat (thrown weapons): Dexterity + Athletics, minus target's Defense and armour"
        ({"kind": AttackKind.THROWN, "attribute": 2, "skill": 2, "defense": 1, "armor": 1}, 2),
        # "Using an improvised weapon ... levies a –1 penalty"
        ({"kind": AttackKind.ARMED, "attribute": 3, "skill": 1, "improvised": True}, 3),
        # unskilled Brawl: −1 (seeds/003 "Skills")
        ({"kind": AttackKind.UNARMED, "attribute": 3, "skill": 0}, 2),
        # prone: "a –2 penalty on ranged attacks"
        ({"kind": AttackKind.RANGED, "attribute": 3, "skill": 3, "prone": True}, 4),
        ({"kind": AttackKind.THROWN, "attribute": 3, "skill": 3, "prone": True}, 4),
        # "Anyone within close-combat striking distance ... gets a +2 bonus to hit a prone
        # character"
        ({"kind": AttackKind.UNARMED, "attribute": 3, "skill": 3, "prone": True}, 8),
        (
            {
                "kind": AttackKind.RANGED,
                "attribute": 3,
                "skill": 3,
                "prone": True,
                "point_blank": True,
            },
            8,
        ),
        # concealment: "from –1 (crouching behind an office chair) to –3 (... a foxhole)"
        ({"kind": AttackKind.RANGED, "attribute": 3, "skill": 3, "concealment": 1}, 5),
        ({"kind": AttackKind.RANGED, "attribute": 3, "skill": 3, "concealment": 3}, 3),
        # range: short no penalty, medium –2, long –4 (seeds/003 "Range")
        ({"kind": AttackKind.RANGED, "attribute": 3, "skill": 3, "range_band": RangeBand.SHORT}, 6),
        (
            {"kind": AttackKind.RANGED, "attribute": 3, "skill": 3, "range_band": RangeBand.MEDIUM},
            4,
        ),
        ({"kind": AttackKind.THROWN, "attribute": 3, "skill": 3, "range_band": RangeBand.LONG}, 2),
        # Willpower +3 on the attack roll (seeds/003 "Willpower")
        ({"kind": AttackKind.UNARMED, "attribute": 2, "skill": 1, "willpower": True}, 6),
        # the wound penalty applies to attacks too (seeds/003 "Wound Penalties")
        ({"kind": AttackKind.UNARMED, "attribute": 2, "skill": 2, "wound_penalty": -3}, 1),
        # Defense and armour can take the pool to a chance die
        ({"kind": AttackKind.UNARMED, "attribute": 1, "skill": 1, "defense": 3, "armor": 1}, -2),
    ],
)
def test_an_attack_pool_is_the_seeds_traits_and_modifiers(kwargs, dice):
    assert attack_pool(**kwargs).dice == dice


def test_an_attack_pool_names_its_traits():
    pool = attack_pool(kind=AttackKind.THROWN, attribute=3, skill=1, defense=1)
    assert pool.parts[:3] == (("Dexterity", 3), ("Athletics", 1), ("Defense", -1))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"concealment": 4},
        {"concealment": 1, "kind": AttackKind.UNARMED},
        {"range_band": RangeBand.LONG, "kind": AttackKind.ARMED},
        {"defense": -1},
        {"armor": -2},
    ],
)
def test_an_impossible_attack_is_refused(kwargs):
    kwargs = {"kind": AttackKind.RANGED, "attribute": 3, "skill": 3, **kwargs}
    with pytest.raises(RulesError):
        attack_pool(**kwargs)


@pytest.mark.parametrize(
    ("faces", "cover", "damage", "stopped"),
    [
        ((8, 9, 10, 2), 0, 3, False),  # "Each success equates to one Health point of damage"
        ((8, 9, 10, 2), 2, 1, False),  # cover: "reduces the number of success rolled"
        ((8, 9, 1), 3, 0, True),  # "reduces the number of successes to 0 ... fails to penetrate"
        ((1, 2, 3), 0, 0, False),
    ],
)
def test_damage_is_one_point_per_success_less_cover(faces, cover, damage, stopped):
    shot = roll(3, ScriptedDice(faces))
    result = attack_damage(shot, damage_type=DamageType.LETHAL, cover=cover)
    assert (result.damage, result.stopped, result.damage_type) == (
        damage,
        stopped,
        DamageType.LETHAL,
    )


def test_cover_durability_is_one_to_three():
    with pytest.raises(RulesError, match="durability"):
        attack_damage(roll(1, ScriptedDice([8])), damage_type=DamageType.BASHING, cover=4)


# --- prone, Speed -------------------------------------------------------------------------


def test_falling_prone_is_her_action_and_standing_up_another():
    state = act(fight(), fighter_id=2, action=Action.FALL_PRONE).state
    assert state.prone == (2,)
    with pytest.raises(RulesError, match="not prone"):
        act(state, fighter_id=3, action=Action.STAND_UP)
    state = act(state, fighter_id=3, action=Action.OTHER).state
    state = act(state, fighter_id=1, action=Action.OTHER).state
    state = act(state, fighter_id=2, action=Action.STAND_UP).state
    assert state.prone == ()


@pytest.mark.parametrize(("running", "far"), [(False, 10), (True, 20)])
def test_speed_is_yards_per_turn_and_twice_that_running(running, far):
    # "Speed is the number of yards a character can move in one combat turn and still
    # perform an action. A character can run up to twice that distance ... if he sacrifices
    # his action"
    assert yards(10, running=running) == far


def test_running_uses_her_action():
    state, events = act(fight(), fighter_id=2, action=Action.RUN)
    assert events[0].data["yards"] == 18 and 2 in state.acted


# --- the fight itself ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fighters", "message"),
    [
        ((ALICE,), "two fighters"),
        ((ALICE, ALICE), "once"),
        ((ALICE, replace(BEA, name=" ")), "name"),
        ((ALICE, replace(BEA, defense=-1)), "negative"),
    ],
)
def test_a_bad_fight_is_refused(fighters, message):
    with pytest.raises(RulesError, match=message):
        start_combat(fighters=fighters, dice=ScriptedDice([5, 5]))


def test_an_attack_names_another_fighter_in_the_fight():
    with pytest.raises(RulesError, match="someone else"):
        act(fight(), fighter_id=2, action=Action.ATTACK, target_id=2)
    with pytest.raises(RulesError, match="not in this fight"):
        act(fight(), fighter_id=2, action=Action.ATTACK, target_id=9)


def test_a_removed_fighter_loses_her_place_and_the_fight_ends_on_the_narrators_word():
    state = remove_fighter(fight(), fighter_id=3, reason="fled").state
    state = act(state, fighter_id=2, action=Action.OTHER).state
    assert whose_turn(state) == 1
    done = end_combat(state, reason="The police arrive.")
    assert done.state.ended and [e.kind for e in done.events] == ["combat_ended"]
    with pytest.raises(RulesError, match="over"):
        act(done.state, fighter_id=1, action=Action.OTHER)
    assert not legal_moves(done.state, 1).any


def test_initiative_order_needs_rolled_initiative():
    with pytest.raises(RulesError, match="Initiative"):
        initiative_order([ALICE, BEA])


def test_a_fight_round_trips_through_json():
    state = yield_action(fight(), fighter_id=2, until=YieldUntil.LATER).state
    state = dodge(state, fighter_id=1).state
    state = act(state, fighter_id=3, action=Action.ATTACK, target_id=1).state
    assert CombatState.from_dict(json.loads(json.dumps(state.to_dict()))) == state


# --- late comers (the seed is silent) ---------------------------------------------------------


def test_a_late_comer_rolls_initiative_and_takes_her_place_in_the_queue():
    state = fight()  # Bea 12, Cal 10, Alice 7
    dee = Fighter(4, "Dee", initiative_modifier=2, defense=1)
    state, events = add_fighter(state, fighter=dee, dice=ScriptedDice([9]))  # 11
    assert state.order == (2, 4, 3, 1) and whose_turn(state) == 2
    assert events[0].kind == "joined" and events[0].data["initiative"] == 11


def test_a_late_comer_whose_place_has_passed_acts_from_the_next_turn():
    state = act(fight(), fighter_id=2, action=Action.OTHER).state
    state = act(state, fighter_id=3, action=Action.OTHER).state  # Alice's place now
    dee = Fighter(4, "Dee", initiative_modifier=2)
    state = add_fighter(state, fighter=dee, dice=ScriptedDice([9])).state
    assert whose_turn(state) == 1 and not legal_moves(state, 4).act
    assert legal_moves(state, 4).dodge
    state = act(state, fighter_id=1, action=Action.OTHER).state
    assert state.turn == 2 and state.order == (2, 4, 3, 1)


def test_a_removed_fighter_comes_back_with_her_first_initiative():
    state = remove_fighter(fight(), fighter_id=3).state
    state = add_fighter(state, fighter=CAL, dice=ScriptedDice([])).state  # no new roll
    assert state.order == (2, 3, 1)
    with pytest.raises(RulesError, match="already in this fight"):
        add_fighter(state, fighter=CAL, dice=ScriptedDice([1]))
