"""The Storytelling System's sheet catalogue (challenges.rules.storytelling.traits)."""

from collections import Counter

import pytest

from challenges.rules.core import RulesError
from challenges.rules.storytelling.traits import (
    ATTRIBUTES,
    SKILLS,
    TraitCategory,
    skill_category,
)


def test_three_attributes_in_each_category():
    assert Counter(ATTRIBUTES.values()) == dict.fromkeys(TraitCategory, 3)


def test_eight_skills_in_each_category():
    assert Counter(SKILLS.values()) == dict.fromkeys(TraitCategory, 8)


@pytest.mark.parametrize(
    ("skill", "category"),
    [
        ("Medicine", TraitCategory.MENTAL),  # seeds/003 "Skills": Medicine
        ("Firearms", TraitCategory.PHYSICAL),  # seeds/003 "Skills": Firearms
        ("Brawl", TraitCategory.PHYSICAL),  # seeds/003: Strength + Brawl
        ("Weaponry", TraitCategory.PHYSICAL),  # seeds/003: Strength + Weaponry
        ("Athletics", TraitCategory.PHYSICAL),  # seeds/003: Dexterity + Athletics
        ("Persuasion", TraitCategory.SOCIAL),
    ],
)
def test_a_skill_has_its_category(skill, category):
    assert skill_category(skill) is category


def test_an_unknown_skill_is_refused_in_words():
    with pytest.raises(RulesError, match="no Skill called 'Dancing'"):
        skill_category("Dancing")
