"""Which Abilities and Disciplines a ``ukm`` retest may use in a challenge
of a given category. seeds/004 "Retrying The Test In An Ability-Based
Challenge" retests with "the appropriate ability" (a Dodge against a punch
compares Brawl and Dodge) and "Challenge Re-Tests" allows "One Discipline
based Re-Test, if appropriate"; "Trait Categories" plays Firearms with
Mental or Physical Traits. This table is the engine's reading of
"appropriate": each name (compared case-blind) with the categories it
applies to. A name not in the table (a club's own Ability or Discipline)
applies to every category: the engine cannot know it, a narrator rules."""

from __future__ import annotations

from challenges.rules.core import Category

_P, _S, _M = Category.PHYSICAL, Category.SOCIAL, Category.MENTAL

ABILITY_CATEGORIES: dict[str, frozenset[Category]] = {
    name: frozenset(cats)
    for names, cats in (
        (("athletics", "brawl", "dodge", "melee", "archery", "drive", "survival"), (_P,)),
        (("firearms", "stealth", "security"), (_P, _M)),
        (
            (
                "animal ken",
                "empathy",
                "etiquette",
                "expression",
                "intimidation",
                "leadership",
                "performance",
                "streetwise",
                "subterfuge",
            ),
            (_S,),
        ),
        (
            (
                "academics",
                "awareness",
                "computer",
                "enigmas",
                "finance",
                "investigation",
                "law",
                "linguistics",
                "medicine",
                "occult",
                "politics",
                "science",
            ),
            (_M,),
        ),
    )
    for name in names
}
"""The Abilities of the seeds' chronicles, by the categories they apply to."""

DISCIPLINE_CATEGORIES: dict[str, frozenset[Category]] = {
    name: frozenset(cats)
    for names, cats in (
        (("celerity", "fortitude", "potence", "protean", "vicissitude"), (_P,)),
        (("animalism", "presence"), (_S,)),
        (
            (
                "auspex",
                "chimerstry",
                "dementation",
                "dominate",
                "necromancy",
                "obfuscate",
                "thaumaturgy",
            ),
            (_M,),
        ),
    )
    for name in names
}
"""The Disciplines of the seeds' chronicles, by the categories they apply to."""


def applies(name: str, category: Category, table: dict[str, frozenset[Category]]) -> bool:
    """``name`` (an Ability or Discipline, any case) may retest a challenge
    of ``category`` by ``table`` (:data:`ABILITY_CATEGORIES` or
    :data:`DISCIPLINE_CATEGORIES`); True for a name the table does not know."""
    categories = table.get(name.strip().casefold())
    return categories is None or Category(category) in categories
