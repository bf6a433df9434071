"""The Storytelling System's Attributes and Skills by name, with the category
each belongs to (seeds/003 "Attributes", "Skills"): the engine reads a
Skill's category for the unskilled penalty, the sheets list them in this
order.

The seed names the kinds of trait and a few examples (Strength,
Intelligence, Presence, Firearms, Medicine); the nine Attributes and
twenty-four Skills below are the Storytelling System's standard sheet, which
the seed's Mage: The Awakening characters use.
"""

from __future__ import annotations

from enum import StrEnum

from challenges.rules.core import RulesError


class TraitCategory(StrEnum):
    """Mental, Physical or Social: the three columns of Attributes and of
    Skills. A missing Mental Skill costs −3 dice, a missing Physical or
    Social one −1 (seeds/003 "Skills")."""

    MENTAL = "mental"
    PHYSICAL = "physical"
    SOCIAL = "social"

    @property
    def label(self) -> str:
        """ "Mental", "Physical" or "Social"."""
        return self.value.title()


ATTRIBUTES: dict[str, TraitCategory] = {
    "Intelligence": TraitCategory.MENTAL,
    "Wits": TraitCategory.MENTAL,
    "Resolve": TraitCategory.MENTAL,
    "Strength": TraitCategory.PHYSICAL,
    "Dexterity": TraitCategory.PHYSICAL,
    "Stamina": TraitCategory.PHYSICAL,
    "Presence": TraitCategory.SOCIAL,
    "Manipulation": TraitCategory.SOCIAL,
    "Composure": TraitCategory.SOCIAL,
}
"""The nine Attributes, Mental, Physical, Social, in sheet order; rated 1 to 5
dots (seeds/003: "Most traits are rated from one dot to five dots")."""

SKILLS: dict[str, TraitCategory] = {
    **dict.fromkeys(
        (
            "Academics",
            "Computer",
            "Crafts",
            "Investigation",
            "Medicine",
            "Occult",
            "Politics",
            "Science",
        ),
        TraitCategory.MENTAL,
    ),
    **dict.fromkeys(
        (
            "Athletics",
            "Brawl",
            "Drive",
            "Firearms",
            "Larceny",
            "Stealth",
            "Survival",
            "Weaponry",
        ),
        TraitCategory.PHYSICAL,
    ),
    **dict.fromkeys(
        (
            "Animal Ken",
            "Empathy",
            "Expression",
            "Intimidation",
            "Persuasion",
            "Socialize",
            "Streetwise",
            "Subterfuge",
        ),
        TraitCategory.SOCIAL,
    ),
}
"""The twenty-four Skills by category, in sheet order; rated 0 (none: the
unskilled penalty applies) to 5 dots."""

DOTS_RANGE = (1, 5)
"""An Attribute's dots, lowest and highest (seeds/003)."""

SKILL_RANGE = (0, 5)
"""A Skill's dots: 0 is no Skill (rolled unskilled), 5 the most."""

WILLPOWER_RANGE = (1, 10)
"""Willpower dots: "ranked from 1 to 10, unlike most other traits" (seeds/003 "Willpower")."""

WISDOM_RANGE = (1, 10)
"""Wisdom dots: "ranked from 1 to 10" (seeds/003 "Wisdom")."""


def skill_category(name: str) -> TraitCategory:
    """The category of the Skill called ``name`` (exact name, as in :data:`SKILLS`).

    Raises RulesError("There is no Skill called ...") for an unknown name."""
    try:
        return SKILLS[name]
    except KeyError:
        raise RulesError(f"There is no Skill called {name!r}.") from None
