"""RULES.md `storytelling`, statement by statement: one parametrized row per
statement, naming the seeds/003 heading it comes from, each checked through
the public API of challenges.rules.storytelling. docs/rules.md
"storytelling" lists every entry point the table uses."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from challenges.rules import storytelling as story
from challenges.rules.storytelling import (
    Action,
    AttackKind,
    DamageType,
    HealthStatus,
    HealthTrack,
    RangeBand,
    RollOutcome,
    ScriptedDice,
    YieldUntil,
)

B, L, A = DamageType.BASHING, DamageType.LETHAL, DamageType.AGGRAVATED


def pool(**kw: object) -> int:
    kw.setdefault("attribute", ("Strength", 3))
    return story.dice_pool(**kw).dice  # type: ignore[arg-type]


def rolled(size: int, *faces: int) -> story.Roll:
    return story.roll(size, ScriptedDice(faces))


def hurt(size: int, *hits: tuple[int, DamageType]) -> HealthTrack:
    track = HealthTrack(size)
    for points, kind in hits:
        track = story.take_damage(track, points, kind).track
    return track


def attack(**kw: object) -> int:
    kw = {"kind": AttackKind.UNARMED, "attribute": 3, "skill": 3, **kw}
    return story.attack_pool(**kw).dice  # type: ignore[arg-type]


def fight() -> story.CombatState:
    fighters = [
        story.Fighter(1, "Alice", initiative_modifier=2, defense=2),
        story.Fighter(2, "Bea", initiative_modifier=1, defense=3),
    ]
    return story.start_combat(fighters=fighters, dice=ScriptedDice([5, 9])).state  # Bea 10, Alice 7


def dodged_defense() -> int:
    state = story.dodge(fight(), fighter_id=1).state  # Alice, Defense 2, dodges
    events = story.act(state, fighter_id=2, action=Action.ATTACK, target_id=1).events
    return int(events[0].data["defense"])


STATEMENTS: list[tuple[str, str, Callable[[], bool]]] = [
    (
        "Dice pool = attribute + skill + modifiers",
        "Dice Pools",
        lambda: pool(skill=("Brawl", 2), modifiers=[("Narrator", 1)]) == 6,
    ),
    (
        "−1 unskilled Physical/Social",
        "Skills",
        lambda: (
            pool(skill=("Brawl", 0)) == 2
            and pool(attribute=("Presence", 3), skill=("Empathy", 0)) == 2
        ),
    ),
    (
        "−3 unskilled Mental",
        "Skills",
        lambda: pool(attribute=("Wits", 3), skill=("Occult", 0)) == 0,
    ),
    ("+1 specialty", "Skills", lambda: pool(skill=("Brawl", 1), specialty=True) == 5),
    ("+3 for a Willpower point", "Willpower", lambda: pool(willpower=True) == 6),
    (
        "one point per roll at most",
        "Willpower",
        lambda: _refused(lambda: pool(willpower=True, modifiers=[("Willpower", 3)])),
    ),
    (
        "or instead +2 Defense against one attack",
        "Willpower",
        lambda: story.effective_defense(2, willpower=True) == 4,
    ),
    ("equipment ±", "Dice Pools", lambda: pool(equipment=-2) == 1 and pool(equipment=2) == 5),
    ("−1 for an improvised weapon", "Combat", lambda: pool(improvised=True) == 2),
    (
        "All modifiers are summed first",
        "Chance Die",
        lambda: pool(attribute=("Wits", 1), skill=("Occult", 0), willpower=True) == 1,
    ),
    ("each 8, 9 or 10 is a success", "Rolling Dice", lambda: rolled(3, 7, 8, 10, 9).successes == 3),
    (
        "each 10 is rolled again (10-again)",
        "Rolling Dice",
        lambda: rolled(1, 10, 10, 8).successes == 3,
    ),
    (
        "Five or more successes: exceptional success",
        "Rolling Dice",
        lambda: (
            rolled(5, 8, 8, 8, 8, 8).outcome is RollOutcome.EXCEPTIONAL_SUCCESS
            and rolled(5, 8, 8, 8, 8, 1).outcome is RollOutcome.SUCCESS
        ),
    ),
    ("None: failure", "Rolling Dice", lambda: rolled(2, 1, 7).outcome is RollOutcome.FAILURE),
    (
        "A pool at or below zero rolls one chance die",
        "Chance Die",
        lambda: len(rolled(0, 5).dice) == 1 and len(rolled(-2, 5).dice) == 1,
    ),
    ("only a 10 succeeds", "Chance Die", lambda: rolled(0, 9).successes == 0),
    (
        "a 1 on the chance die's first roll is a dramatic failure",
        "Chance Die",
        lambda: (
            rolled(0, 1).outcome is RollOutcome.DRAMATIC_FAILURE
            and rolled(0, 10, 1).outcome is RollOutcome.SUCCESS
        ),
    ),
    (
        "a 10 is rolled again, and that reroll too succeeds only on another 10",
        "Chance Die",
        lambda: rolled(0, 10, 9).successes == 1 and rolled(0, 10, 10, 2).successes == 2,
    ),
    (
        "Contested actions: both roll, most successes wins",
        "Actions",
        lambda: (
            story.contested_action(challenger=2, defender=2, dice=ScriptedDice([8, 8, 8, 1])).winner
            is story.Side.CHALLENGER
        ),
    ),
    (
        "Extended actions accumulate successes over rolls of fixed time",
        "Actions",
        lambda: _extended() == (3, 1200.0),
    ),
    (
        "Health track: boxes filled left to right",
        "Marking Damage",
        lambda: hurt(5, (2, B)).boxes == (B, B, None, None, None),
    ),
    (
        "lethal pushes bashing right",
        "Marking Damage",
        lambda: hurt(4, (1, B), (1, L)).boxes[:2] == (L, B),
    ),
    (
        "aggravated pushes both",
        "Marking Damage",
        lambda: hurt(4, (1, B), (1, L), (1, A)).boxes[:3] == (A, L, B),
    ),
    (
        "when full, new damage upgrades the leftmost bashing wound",
        "Additional Damage",
        lambda: (
            hurt(3, (3, B), (1, B)).picture == "X//" and hurt(3, (3, B), (1, L)).picture == "X//"
        ),
    ),
    (
        "for aggravated: the leftmost bashing or lethal one",
        "Additional Damage",
        lambda: (
            hurt(3, (1, L), (2, B), (1, A)).picture == "*//"
            and hurt(3, (3, B), (1, A)).picture == "*//"
        ),
    ),
    (
        "never an existing aggravated box",
        "Additional Damage",
        lambda: hurt(3, (1, A), (2, L), (1, A)).picture == "**X",
    ),
    (
        "Wound penalties −1, −2, −3 when the third-, second- and last box are marked",
        "Wound Penalties",
        lambda: [hurt(5, (n, B)).wound_penalty for n in range(6)] == [0, 0, 0, -1, -2, -3],
    ),
    (
        "they apply to every roll, initiative included",
        "Wound Penalties",
        lambda: (
            story.roll_initiative(modifier=3, dice=ScriptedDice([5]), wound_penalty=-1).total == 7
        ),
    ),
    (
        "A full track of bashing means unconscious",
        "No More Health",
        lambda: hurt(3, (3, B)).status is HealthStatus.UNCONSCIOUS,
    ),
    (
        "of lethal, bleeding out",
        "No More Health",
        lambda: (
            hurt(3, (3, L)).status is HealthStatus.BLEEDING_OUT
            and hurt(3, (3, A)).status is HealthStatus.BLEEDING_OUT
        ),
    ),
    (
        "Healing: bashing 15 min, lethal 2 days, aggravated a week, right to left",
        "Healing",
        lambda: (
            story.heal(hurt(3, (1, A), (1, L), (1, B)), 900 + 2 * 86400 + 7 * 86400).healed
            == (B, L, A)
        ),
    ),
    ("armor", "Combat", lambda: attack(armor=2) == 4),
    (
        "cover and concealment",
        "Concealment and Cover",
        lambda: (
            attack(kind=AttackKind.RANGED, concealment=2) == 4
            and story.attack_damage(rolled(2, 8, 8), damage_type=L, cover=1).damage == 1
        ),
    ),
    (
        "prone targets",
        "Avoiding Damage in Ranged Combat",
        lambda: attack(prone=True) == 8 and attack(kind=AttackKind.RANGED, prone=True) == 4,
    ),
    (
        "range bands for ranged attacks",
        "Range",
        lambda: [attack(kind=AttackKind.RANGED, range_band=r) for r in RangeBand] == [6, 4, 2],
    ),
    (
        "Speed and running",
        "Speed",
        lambda: (story.yards(8), story.yards(8, running=True)) == (8, 16),
    ),
    ("yielding an action", "Combat", lambda: _yielded()),
    (
        "the Wisdom exception to wound penalties",
        "Wound Penalties",
        lambda: pool(wound_penalty=-3, wisdom=True) == 3 and pool(wound_penalty=-3) == 0,
    ),
    (
        "a sheet states Health, Defense and Initiative directly",
        "Health",
        lambda: HealthTrack(9).size == 9 and story.Fighter(1, "A", 4, 3).defense == 3,
    ),
    (
        "Initiative: one d10 + modifier (no reroll)",
        "Combat",
        lambda: story.roll_initiative(modifier=4, dice=ScriptedDice([10])).total == 14,
    ),
    ("rolled once per fight", "Combat", lambda: _two_turns_same_order()),
    (
        "Defense subtracts from close-combat pools",
        "Avoiding Damage in Close Combat",
        lambda: attack(defense=2) == 4 and attack(kind=AttackKind.ARMED, defense=2) == 4,
    ),
    (
        "and from thrown weapons and gunfire at a few feet",
        "Avoiding Damage in Ranged Combat",
        lambda: (
            attack(kind=AttackKind.THROWN, defense=2) == 4
            and attack(kind=AttackKind.RANGED, defense=2, point_blank=True) == 4
            and attack(kind=AttackKind.RANGED, defense=2) == 6
        ),
    ),
    (
        "−1 per further attack in a turn, never below zero",
        "Avoiding Damage in Close Combat",
        lambda: [story.effective_defense(2, earlier_attacks=n) for n in range(4)] == [2, 1, 0, 0],
    ),
    (
        "dodging doubles it",
        "Avoiding Damage in Close Combat",
        lambda: story.effective_defense(3, dodging=True) == 6 and dodged_defense() == 4,
    ),
    (
        "needs the character not to have acted yet, and uses her action",
        "Avoiding Damage in Close Combat",
        lambda: (
            _refused(lambda: story.dodge(_bea_acted(), fighter_id=2))
            and 1 in story.dodge(fight(), fighter_id=1).state.acted
        ),
    ),
]


def _refused(call: Callable[[], object]) -> bool:
    try:
        call()
    except story.RulesError:
        return True
    return False


def _extended() -> tuple[int, float]:
    state = story.start_extended(target=5).state
    for faces in ([8, 8], [9, 1]):
        state = story.extended_roll(state, pool=2, dice=ScriptedDice(faces)).state
    return state.successes, state.elapsed_seconds


def _yielded() -> bool:
    state = story.yield_action(fight(), fighter_id=2, until=YieldUntil.LATER).state
    state = story.act(state, fighter_id=1, action=Action.OTHER).state
    later = story.act(state, fighter_id=2, action=Action.OTHER).state
    return later.turn == 2


def _bea_acted() -> story.CombatState:
    return story.act(fight(), fighter_id=2, action=Action.OTHER).state


def _two_turns_same_order() -> bool:
    state = fight()
    first = state.order
    for who in (2, 1, 2, 1):
        state = story.act(state, fighter_id=who, action=Action.OTHER).state
    return state.turn == 3 and state.order == first == (2, 1)


@pytest.mark.parametrize(
    ("statement", "heading", "check"),
    STATEMENTS,
    ids=[f"{s} (seeds/003 {h})" for s, h, _ in STATEMENTS],
)
def test_rules_md_statement_holds(statement, heading, check):
    assert check() is True


def test_every_statement_is_quoted_from_rules_md():
    rules = Path("/work/shared/RULES.md")
    if not rules.exists():
        pytest.skip("RULES.md is not on this machine")
    text = rules.read_text().split("## `storytelling`", 1)[1].replace("**", "")
    section = " ".join(text.split())
    for statement, _, _ in STATEMENTS:
        assert statement in section, statement


# --- docs/rules.md lists every entry point -----------------------------------------------

DOCS = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
PUBLIC = sorted(
    name
    for name in story.__all__
    if inspect.isfunction(getattr(story, name)) and name not in ("skill_category",)
)


@pytest.mark.parametrize("name", PUBLIC)
def test_docs_name_each_public_function_with_its_arguments(name):
    section = DOCS.read_text().split("## storytelling: dice pools", 1)[1]
    assert f"`{name}(" in section, name
    row = next((ln for ln in section.splitlines() if ln.startswith(f"| `{name}(")), None)
    if row is not None:
        documented = row.split("(", 1)[1].split(")", 1)[0].replace(" ", "").split(",")
        params = inspect.signature(getattr(story, name)).parameters
        assert sorted(d for d in documented if d) == sorted(params), name


def test_the_options_keep_the_tie_rules_default_named_in_the_docs():
    assert story.STORYTELLING.contested_tie is story.ContestedTie.STATUS_QUO
    assert "Default `status_quo`" in DOCS.read_text()
    assert (
        replace(story.STORYTELLING, contested_tie="roll_again").contested_tie.value == "roll_again"
    )
