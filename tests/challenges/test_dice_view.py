"""Issue 13: a roll of the Storytelling System's dice as the phones and the
dashboard draw it (challenges.views.dice, _dice.html): every die, rerolls
included, and the result in the game's words. seeds/003 "Rolling Dice",
"Chance Die"."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup
from django.template.loader import render_to_string

from challenges.rules.storytelling.dice import DicePool, ScriptedDice, dice_pool, roll
from challenges.services.dice import server_dice
from challenges.views.dice import roll_view


def _drawn(rolled, pool=None) -> BeautifulSoup:
    html = render_to_string("challenges/_dice.html", {"roll": roll_view(rolled, pool)})
    return BeautifulSoup(html, "html.parser")


def test_every_die_is_drawn_rerolls_after_the_ten_they_come_from():
    rolled = roll(3, ScriptedDice([10, 4, 8, 10, 2]))  # 10 → 10 → 2
    page = _drawn(rolled.to_dict())
    dice = page.select("li.die")
    assert [d.text for d in dice] == ["10", "4", "8", "10", "2"]
    assert [
        ("success" in d["class"], "again" in d["class"], "reroll" in d["class"]) for d in dice
    ] == [
        (True, True, False),
        (False, False, False),
        (True, False, False),
        (True, True, True),
        (False, False, True),
    ]
    assert dice[0]["aria-label"] == "10, success, rolled again"
    assert page.select_one(".dice-result").text == "3 successes: Success"


@pytest.mark.parametrize(
    ("pool", "faces", "summary", "outcome"),
    [
        (2, [3, 5], "0 successes: Failure", "failure"),
        (5, [8, 9, 8, 8, 9], "5 successes: Exceptional success", "exceptional_success"),
        (1, [8], "1 success: Success", "success"),
        (0, [1], "Chance die: Dramatic failure", "dramatic_failure"),
        (0, [9], "Chance die, 0 successes: Failure", "failure"),
        (-2, [10, 10, 3], "Chance die, 2 successes: Success", "success"),
    ],
)
def test_the_result_is_said_in_the_games_words(pool, faces, summary, outcome):
    page = _drawn(roll(pool, ScriptedDice(faces)))
    assert page.select_one(".dice-result").text == summary
    assert f"outcome-{outcome}" in page.select_one(".dice-roll")["class"]


def test_the_pool_is_added_up_from_its_parts():
    pool = dice_pool(
        attribute=("Dexterity", 3), skill=("Stealth", 0), willpower=True, wound_penalty=-1
    )
    page = _drawn(roll(pool, ScriptedDice([1] * pool.dice)), pool.to_dict())
    assert page.select_one(".dice-pool").text == (
        "Dexterity 3 + Stealth 0 − Unskilled (Physical) 1 + Willpower 3 − Wound penalty 1 = 4 dice"
    )


def test_a_pool_at_zero_says_chance_die():
    pool = DicePool((("Wits", 1), ("Investigation", 0), ("Unskilled (Mental)", -3)))
    assert roll_view(roll(pool, ScriptedDice([5])), pool).pool_text == (
        "Wits 1 + Investigation 0 − Unskilled (Mental) 3 = chance die"
    )


def test_the_servers_dice_show_one_to_ten():
    dice = server_dice()
    faces = {dice() for _ in range(2000)}
    assert faces == set(range(1, 11))
