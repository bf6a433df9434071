"""``ukm`` retests use "the appropriate ability" and a Discipline "if
appropriate" (seeds/004 "Retrying The Test In An Ability-Based Challenge",
"Challenge Re-Tests"): in a Social challenge Melee and Fortitude are not
offered and are refused; Subterfuge and Presence are. A name the table does
not know (a club's own) applies to every category."""

from __future__ import annotations

import pytest

from challenges.rules import Category, RetestKind, RulesError, answer_retest, call_retest
from challenges.rules import retest_ratings as fitting
from challenges.rules.judge import retest_offers
from challenges.rules.npc import npc_move
from challenges.rules.retest_fit import ABILITY_CATEGORIES, applies
from tests.rules.sheets import CH, DE, LOSE, MENTAL, PHYSICAL, SOCIAL, character, opposed, played
from tests.rules.sheets import traits as held

SHEET = {
    "abilities": {"Melee": 3, "Subterfuge": 2, "Dodge": 1, "Hedge Lore": 1},
    "disciplines": {"Fortitude": 2, "Presence": 1},
}


def _lost(category: Category, **sheet):
    """A ``ukm`` challenge of ``category`` whose challenger (``sheet``)
    just lost the first test."""
    every = held(PHYSICAL, "Brawny*3") + held(SOCIAL, "Regal*3") + held(MENTAL, "Cunning*3")
    other = held(PHYSICAL, "Tough*3") + held(SOCIAL, "Genial*3") + held(MENTAL, "Wise*3")
    a = character(1, "Helen", every, **(sheet or SHEET))
    b = character(2, "Grady", other, abilities={"Subterfuge": 1, "Brawl": 4})
    bid = {PHYSICAL: "Brawny", SOCIAL: "Regal", MENTAL: "Cunning"}[category]
    answer = {PHYSICAL: "Tough", SOCIAL: "Genial", MENTAL: "Wise"}[category]
    return played(opposed("ukm", a, b, category, [bid], [answer]), LOSE).state


@pytest.mark.parametrize(
    ("category", "abilities", "disciplines"),
    [
        (SOCIAL, ["Subterfuge", "Hedge Lore"], ["Presence"]),
        (PHYSICAL, ["Melee", "Dodge", "Hedge Lore"], ["Fortitude"]),
        (MENTAL, ["Hedge Lore"], []),
    ],
)
def test_a_retest_offers_only_what_applies_to_the_category(category, abilities, disciplines):
    state = _lost(category)
    assert [r.name for r in fitting(state, CH, RetestKind.ABILITY)] == abilities
    assert [r.name for r in fitting(state, CH, RetestKind.DISCIPLINE)] == disciplines
    assert (RetestKind.DISCIPLINE in retest_offers(state, CH)) == bool(disciplines)


def test_a_sheet_with_nothing_that_applies_is_offered_no_ability_or_discipline_retest():
    state = _lost(SOCIAL, abilities={"Melee": 3}, disciplines={"Fortitude": 2})
    assert not {RetestKind.ABILITY, RetestKind.DISCIPLINE} & set(retest_offers(state, CH))


@pytest.mark.parametrize(
    ("kind", "name"), [(RetestKind.ABILITY, "Melee"), (RetestKind.DISCIPLINE, "Fortitude")]
)
def test_a_retest_that_does_not_apply_is_refused_in_words(kind, name):
    state = _lost(SOCIAL)
    with pytest.raises(RulesError, match=f"{name} does not apply to a Social challenge."):
        call_retest(state, side=CH, kind=kind, name=name, now=300.0)


def test_an_answer_with_an_ability_that_does_not_apply_is_refused():
    state = call_retest(
        _lost(SOCIAL), side=CH, kind=RetestKind.ABILITY, name="Subterfuge", now=300.0
    ).state
    with pytest.raises(RulesError, match="Brawl does not apply to a Social challenge."):
        answer_retest(state, side=DE, name="Brawl", now=301.0)
    assert answer_retest(state, side=DE, name="Subterfuge", now=301.0).state.pending is None


def test_names_are_compared_case_blind_and_unknown_ones_apply_everywhere():
    assert applies(" MELEE ", PHYSICAL, ABILITY_CATEGORIES)
    assert not applies("melee", SOCIAL, ABILITY_CATEGORIES)
    assert all(applies("Hedge Lore", c, ABILITY_CATEGORIES) for c in Category)


def test_an_auto_answering_npc_answers_with_its_best_ability_that_applies():
    """Grady (Brawl 4, Subterfuge 1) answers a Social ability retest with
    Subterfuge, not his higher Brawl."""
    state = call_retest(
        _lost(SOCIAL), side=CH, kind=RetestKind.ABILITY, name="Subterfuge", now=300.0
    ).state
    moved = npc_move(state, DE, choose=lambda options: options[0], now=301.0)
    assert moved is not None
    assert moved.events[0].data["rating"] == 1
