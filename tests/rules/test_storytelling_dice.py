"""Dice pools and rolls of the Storytelling System (challenges.rules.storytelling.dice):
one row per statement of RULES.md `storytelling`, citing seeds/003's headings."""

from __future__ import annotations

import json

import pytest

from challenges.rules import storytelling as st
from challenges.rules.storytelling import (
    DicePool,
    RollOutcome,
    RulesError,
    ScriptedDice,
    dice_pool,
    roll,
)


def rolled(pool: int, *faces: int) -> st.Roll:
    dice = ScriptedDice(faces)
    result = roll(pool, dice)
    assert dice.left == 0, "every scripted face is rolled, no more"
    return result


# --- the dice pool: seeds/003 "Dice Pools", "Modifiers", "Skills", "Willpower" --------


@pytest.mark.parametrize(
    ("kwargs", "dice"),
    [
        # "the total of two traits ... (one Attribute and one Skill)" (seeds/003 "Dice Pools")
        ({"attribute": ("Strength", 3), "skill": ("Brawl", 2)}, 5),
        # "–1 (for a missing Physical or Social Skill)" (seeds/003 "Skills")
        ({"attribute": ("Strength", 3), "skill": ("Brawl", 0)}, 2),
        ({"attribute": ("Presence", 2), "skill": ("Persuasion", 0)}, 1),
        # "–3 (for a missing Mental Skill)" (seeds/003 "Skills")
        ({"attribute": ("Intelligence", 4), "skill": ("Medicine", 0)}, 1),
        # "a relevant Specialty ... +1 modifier" (seeds/003 "Skills")
        ({"attribute": ("Dexterity", 2), "skill": ("Firearms", 2), "specialty": True}, 5),
        # "one point ... of Willpower on any roll ... three additional dice" (seeds/003 "Willpower")
        ({"attribute": ("Wits", 2), "skill": ("Occult", 1), "willpower": True}, 6),
        # "modifiers imposed by any special equipment" (seeds/003 "Dice Pools")
        ({"attribute": ("Wits", 2), "skill": ("Crafts", 1), "equipment": 2}, 5),
        # "Using an improvised weapon ... levies a –1 penalty" (seeds/003 "Combat")
        ({"attribute": ("Strength", 2), "skill": ("Weaponry", 1), "improvised": True}, 2),
        # "a –2 penalty" for a wall slick with rain (seeds/003 "Modifiers")
        (
            {"attribute": ("Strength", 2), "skill": ("Athletics", 2), "modifiers": [("Slick", -2)]},
            2,
        ),
        # "a +2" for plentiful handholds (seeds/003 "Modifiers")
        (
            {"attribute": ("Strength", 2), "skill": ("Athletics", 2), "modifiers": [("Ledges", 2)]},
            6,
        ),
        # wound penalties apply "to all die rolls" (seeds/003 "Wound Penalties")
        ({"attribute": ("Strength", 3), "skill": ("Brawl", 2), "wound_penalty": -2}, 3),
        # "except those related to losing Wisdom" (seeds/003 "Wound Penalties")
        ({"attribute": ("Resolve", 3), "wound_penalty": -3, "wisdom": True}, 3),
        # a pool without a Skill: no unskilled penalty
        ({"attribute": ("Resolve", 2), "modifiers": [("Composure", 3)]}, 5),
    ],
)
def test_a_dice_pool_adds_attribute_skill_and_modifiers(kwargs, dice):
    assert dice_pool(**kwargs).dice == dice


def test_every_modifier_is_summed_before_the_chance_die_is_decided():
    # Intelligence 1, no Medicine (−3), Willpower (+3): 1 + 0 − 3 + 3 = 1 die,
    # not a chance die from 1 + 0 − 3 followed by +3 (RULES.md: "All modifiers are summed first").
    pool = dice_pool(attribute=("Intelligence", 1), skill=("Medicine", 0), willpower=True)
    assert (pool.dice, pool.chance) == (1, False)
    assert pool.willpower


def test_a_pool_lists_its_parts_in_the_games_words():
    pool = dice_pool(
        attribute=("Intelligence", 2), skill=("Occult", 0), specialty=False, wound_penalty=-1
    )
    assert pool.parts == (
        ("Intelligence", 2),
        ("Occult", 0),
        ("Unskilled (Mental)", -3),
        ("Wound penalty", -1),
    )
    assert pool.dice == -2 and pool.chance


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"attribute": ("Charisma", 3)}, "no Attribute called 'Charisma'"),
        ({"attribute": ("Wits", 3), "skill": ("Dancing", 1)}, "no Skill called 'Dancing'"),
        ({"attribute": ("Wits", 3), "skill": ("Occult", 0), "specialty": True}, "Specialty"),
        ({"attribute": ("Wits", 3), "specialty": True}, "Specialty"),
        ({"attribute": ("Wits", -1)}, "negative"),
        ({"attribute": ("Wits", 2), "wound_penalty": -4}, "wound penalty"),
        # "You can spend one point (and one point only) of Willpower on any roll"
        ({"attribute": ("Wits", 2), "willpower": True, "modifiers": [("Willpower", 3)]}, "one"),
    ],
)
def test_a_bad_pool_is_refused_in_words(kwargs, message):
    with pytest.raises(RulesError, match=message):
        dice_pool(**kwargs)


def test_a_pool_round_trips_through_json():
    pool = dice_pool(attribute=("Wits", 2), skill=("Occult", 1), willpower=True)
    assert DicePool.from_dict(json.loads(json.dumps(pool.to_dict()))) == pool


# --- rolling: seeds/003 "Rolling Dice", "Chance Die" ------------------------------------


@pytest.mark.parametrize(
    ("pool", "faces", "successes", "outcome"),
    [
        # "any single die that comes up 8 or better is considered a success"
        (3, (7, 8, 9), 2, RollOutcome.SUCCESS),
        (3, (1, 5, 7), 0, RollOutcome.FAILURE),  # "no successes at all ... failed"
        # "Any die that comes up a "0" (considered a 10) counts as a success and can be
        # rolled again"
        (2, (10, 3, 8), 2, RollOutcome.SUCCESS),
        (1, (10, 10, 2), 2, RollOutcome.SUCCESS),  # a reroll's 10 is rolled again too
        (1, (10, 7), 1, RollOutcome.SUCCESS),
        # "five or more successes, you get an exceptional success"
        (5, (8, 8, 9, 9, 10, 1), 5, RollOutcome.EXCEPTIONAL_SUCCESS),
        (5, (8, 8, 9, 9, 1), 4, RollOutcome.SUCCESS),
        (4, (10, 10, 8, 8, 3, 9), 5, RollOutcome.EXCEPTIONAL_SUCCESS),
        # "Chance Die": "A 10 rolled on a chance die generates a single success"
        (0, (10, 4), 1, RollOutcome.SUCCESS),
        (0, (9,), 0, RollOutcome.FAILURE),  # "any other result is a failure"
        (0, (8,), 0, RollOutcome.FAILURE),
        (-3, (10, 10, 9), 2, RollOutcome.SUCCESS),  # "As long as you keep rolling 10s"
        (-1, (10, 8), 1, RollOutcome.SUCCESS),  # the reroll too succeeds only on a 10
        # "rolling a 1 on a chance die ... indicates a dramatic failure"
        (0, (1,), 0, RollOutcome.DRAMATIC_FAILURE),
        (-5, (1,), 0, RollOutcome.DRAMATIC_FAILURE),
        # "just on the first roll, not subsequent rolls after getting that first 10"
        (0, (10, 1), 1, RollOutcome.SUCCESS),
        # a 1 in a pool of dice is only a failed die
        (1, (1,), 0, RollOutcome.FAILURE),
    ],
)
def test_a_roll_counts_successes_as_the_seed_says(pool, faces, successes, outcome):
    result = rolled(pool, *faces)
    assert (result.successes, result.outcome) == (successes, outcome)
    assert result.faces == faces


@pytest.mark.parametrize("pool", [0, -1, -7])
def test_a_pool_of_zero_or_less_rolls_one_chance_die(pool):
    result = rolled(pool, 6)
    assert result.chance and len(result.dice) == 1


def test_a_roll_keeps_every_die_and_names_the_ten_each_reroll_came_from():
    result = rolled(3, 10, 4, 10, 10, 8, 2)
    assert [(d.face, d.success, d.rerolled_from) for d in result.dice] == [
        (10, True, None),
        (4, False, None),
        (10, True, None),
        (10, True, 0),  # the first die's reroll
        (8, True, 2),  # the third die's reroll
        (2, False, 3),  # the reroll of the reroll
    ]
    assert result.successes == 4


def test_a_roll_round_trips_through_json():
    result = rolled(0, 10, 10, 3)
    assert st.Roll.from_dict(json.loads(json.dumps(result.to_dict()))) == result


def test_a_roll_takes_its_size_from_a_dice_pool():
    pool = dice_pool(attribute=("Strength", 1), skill=("Brawl", 1))
    assert rolled(pool.dice, 8, 9).successes == rolled(2, 8, 9).successes == 2
    assert roll(pool, ScriptedDice([8, 9])).pool == 2


@pytest.mark.parametrize("face", [0, 11, -2])
def test_a_die_face_outside_one_to_ten_is_refused(face):
    with pytest.raises(RulesError, match="1 to 10"):
        roll(1, ScriptedDice([face]))


def test_scripted_dice_that_run_out_are_refused_in_words():
    with pytest.raises(RulesError, match="ran out"):
        roll(3, ScriptedDice([8, 9]))


def test_the_servers_dice_are_drawn_from_the_random_source_given():
    asked: list[int] = []

    def randbelow(n: int) -> int:
        asked.append(n)
        return 9  # a face of 10

    dice = st.d10(randbelow)
    assert dice() == 10 and asked == [10]
