"""Issue 13: a storytelling evening for the rolls' tests: Iris (a player's
mage: Dexterity 2, Stealth 1, Wits 3, Composure 3, Willpower 5), Marcus (a
player's: Dexterity 3, Stealth 0, Wits 2, Composure 2, Willpower 2) and Shade
(an NPC: Dexterity 4, Stealth 3), all present; and dice that show given faces."""

from __future__ import annotations

from challenges.rules.storytelling import ScriptedDice
from characters.models import Character, Chronicle, Presence, StorySheet, StorySkill
from tests.factories import make_iris, make_user, narrated_chronicle


def make_mage(chronicle, name: str, player=None, *, willpower: int = 2, skills=(), **dots):
    """A storytelling character ``name`` with the dots given (others 2) and
    ``skills`` as (name, dots, specialties), present tonight."""
    character = Character.objects.create(
        chronicle=chronicle, player=player, name=name, willpower=willpower
    )
    values = {f: 2 for f in StorySheet.ATTRIBUTE_FIELDS} | {"health": 7} | dots
    StorySheet.objects.create(character=character, **values)
    for skill, rating, specialties in skills:
        StorySkill.objects.create(
            character=character, name=skill, dots=rating, specialties=specialties
        )
    return character


def story_evening() -> dict:
    """The evening: ``narrator``, ``chronicle`` (storytelling), ``session``,
    ``iris``/``marcus`` (with ``iris_player``/``marcus_player``), ``shade`` (NPC)."""
    table = narrated_chronicle("Awakening")
    chronicle, session = table["chronicle"], table["session"]
    chronicle.ruleset = Chronicle.Ruleset.STORYTELLING
    chronicle.save()
    iris_player, marcus_player = make_user("iris"), make_user("marcus")
    iris = make_iris(chronicle, iris_player)
    marcus = make_mage(chronicle, "Marcus", marcus_player, dexterity=3, composure=2, wits=2)
    shade = make_mage(chronicle, "Shade", dexterity=4, skills=[("Stealth", 3, "Shadows")])
    for character in (iris, marcus, shade):
        Presence.objects.create(session=session, character=character)
    return {
        **table,
        "iris": iris,
        "marcus": marcus,
        "shade": shade,
        "iris_player": iris_player,
        "marcus_player": marcus_player,
    }


def scripted(monkeypatch, *faces: int) -> ScriptedDice:
    """Make the server's dice show ``faces`` in order (every roll shares them)."""
    dice = ScriptedDice(faces)
    monkeypatch.setattr("challenges.services.dice.server_dice", lambda: dice)
    return dice
