"""A character's sheet of dots (ruleset ``storytelling``, seeds/003) as plain
data for the web layer: phone, print sheet, roster, narrator's panel.

A chronicle whose ruleset rolls dice pools (``Ruleset.dice_pools``) rates
Attributes and Skills in dots (seeds/003 "Traits"), with specialties, Merits,
Willpower, Health boxes, Defense, Initiative modifier, Speed, Size, Wisdom
and armor. What changes in an evening (Willpower spent, the health track) is
kept on her ``Presence`` (``willpower_spent``, ``Presence.TRACK``), so a new
session refreshes it. :func:`story_sheets` reads everything in four queries
at most, whatever the number of characters.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from challenges.rules.storytelling.health import HealthTrack
from challenges.rules.storytelling.traits import ATTRIBUTES, DOTS_RANGE, SKILLS, TraitCategory
from characters.models import Character, GameSession, Merit, Presence, StorySheet, StorySkill

#: The marks of a health box (seeds/003 "Marking Damage"), by damage type.
BOX_MARKS = {"aggravated": "*", "lethal": "X", "bashing": "/", "": ""}

#: Wound penalties written under the last three Health boxes, as on the
#: paper sheet (seeds/003 "Wound Penalties": −1, −2, −3).
WOUND_PENALTIES = (-1, -2, -3)


def dots_text(dots: int, high: int = DOTS_RANGE[1]) -> str:
    """ "•••◦◦": ``dots`` filled of ``high`` (more when ``dots`` exceeds it)."""
    return "•" * dots + "◦" * max(0, high - dots)


@dataclass(frozen=True)
class Dots:
    """One rated trait: an Attribute or a Skill, its ``category`` and
    ``dots``; a Skill's ``specialties`` (names)."""

    name: str
    category: TraitCategory
    dots: int
    specialties: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """ "•••◦◦" (five places)."""
        return dots_text(self.dots)

    @property
    def label(self) -> str:
        """ "Academics 2 (History, Law)" (what a screen reader says)."""
        specialties = f" ({', '.join(self.specialties)})" if self.specialties else ""
        return f"{self.name} {self.dots}{specialties}"


@dataclass(frozen=True)
class MeritLine:
    """A Merit: ``name``, ``dots`` (1–5) and ``note`` (its effect, "" none)."""

    name: str
    dots: int
    note: str = ""

    @property
    def text(self) -> str:
        """ "•••" (its dots only: Merits have no empty places)."""
        return dots_text(self.dots, 0)


@dataclass(frozen=True)
class HealthBox:
    """One box of the health track: ``mark`` "aggravated", "lethal",
    "bashing" or "" (empty); ``penalty`` the wound penalty written under
    it (−1, −2, −3 under the last three boxes; 0 elsewhere)."""

    mark: str
    penalty: int = 0

    @property
    def symbol(self) -> str:
        """ "*", "X", "/" or "" (seeds/003 "Marking Damage")."""
        return BOX_MARKS[self.mark]


@dataclass(frozen=True)
class StoryCategory:
    """One column of a sheet: its ``category`` and its ``traits`` in order."""

    category: TraitCategory
    traits: tuple[Dots, ...]

    @property
    def label(self) -> str:
        """ "Mental", "Physical" or "Social"."""
        return self.category.label


@dataclass(frozen=True)
class StorySheetView:
    """A dice-pool sheet as it stands in a session (or between sessions).

    ``attributes``: the nine Attributes in sheet order; ``skills``: all
    twenty-four Skills in sheet order (0 dots: none, rolled unskilled);
    ``merits``: by name. ``willpower``: permanent dots (1–10);
    ``willpower_left``: left tonight (never below 0). ``health``: Health dots
    (boxes); ``aggravated``/``lethal``/``bashing``: boxes marked tonight
    (their sum at most ``health``). ``defense``, ``initiative`` (modifier),
    ``speed`` (yards a turn), ``size``, ``wisdom`` (1–10), ``armor``: as on
    the sheet.
    """

    attributes: tuple[Dots, ...]
    skills: tuple[Dots, ...]
    merits: tuple[MeritLine, ...] = ()
    willpower: int = 0
    willpower_left: int = 0
    health: int = 7
    aggravated: int = 0
    lethal: int = 0
    bashing: int = 0
    defense: int = 0
    initiative: int = 0
    speed: int = 0
    size: int = 5
    wisdom: int = 7
    armor: int = 0

    def _columns(self, traits: tuple[Dots, ...]) -> list[StoryCategory]:
        return [
            StoryCategory(c, tuple(t for t in traits if t.category is c)) for c in TraitCategory
        ]

    @property
    def attribute_columns(self) -> list[StoryCategory]:
        """The Attributes as three columns: Mental, Physical, Social."""
        return self._columns(self.attributes)

    @property
    def skill_columns(self) -> list[StoryCategory]:
        """The Skills as three columns: Mental, Physical, Social."""
        return self._columns(self.skills)

    def dots(self, name: str) -> int:
        """Her dots in the Attribute or Skill called ``name`` (exact name);
        0 for a Skill she lacks. KeyError for a name that is neither."""
        for trait in (*self.attributes, *self.skills):
            if trait.name == name:
                return trait.dots
        raise KeyError(name)

    @property
    def boxes(self) -> tuple[HealthBox, ...]:
        """Her Health boxes left to right: aggravated, then lethal, then
        bashing, then empty (seeds/003 "Marking Damage"), the last three
        with their wound penalty."""
        marks = (
            ["aggravated"] * self.aggravated + ["lethal"] * self.lethal + ["bashing"] * self.bashing
        )[: self.health]
        marks += [""] * (self.health - len(marks))
        penalties = [0] * max(0, self.health - len(WOUND_PENALTIES)) + list(
            WOUND_PENALTIES[-self.health :]
        )
        return tuple(HealthBox(m, p) for m, p in zip(marks, penalties, strict=True))

    @property
    def track(self) -> HealthTrack:
        """Her health track tonight as the engine's :class:`HealthTrack`
        (what the services pass to ``take_damage`` and ``heal``); marks past
        her Health dots (a sheet lowered after the damage) are dropped from
        the right, bashing first."""
        aggravated = min(self.aggravated, self.health)
        lethal = min(self.lethal, self.health - aggravated)
        bashing = min(self.bashing, self.health - aggravated - lethal)
        return HealthTrack(max(1, self.health), aggravated, lethal, bashing)

    @property
    def wound_penalty(self) -> int:
        """0, −1, −2 or −3: what her wounds take off every roll tonight
        (seeds/003 "Wound Penalties"; the engine's rule)."""
        return self.track.wound_penalty

    @property
    def marked(self) -> int:
        """Health boxes marked tonight, of any type."""
        return min(self.health, self.aggravated + self.lethal + self.bashing)

    @property
    def track_text(self) -> str:
        """ "*X/····": her track as the seed draws it, "·" for an empty box."""
        return "".join(b.symbol or "·" for b in self.boxes)

    @property
    def health_text(self) -> str:
        """ "Health 7/7": boxes unmarked of her Health dots."""
        return f"Health {self.health - self.marked}/{self.health}"

    @property
    def willpower_text(self) -> str:
        """ "Willpower 4/5": left tonight of the permanent dots."""
        return f"Willpower {self.willpower_left}/{self.willpower}"


def story_sheet_of(
    character: Character,
    row: StorySheet | None,
    skills: Sequence[StorySkill] = (),
    merits: Sequence[Merit] = (),
    *,
    willpower_spent: int = 0,
    track: tuple[int, int, int] = (0, 0, 0),
) -> StorySheetView:
    """``character``'s :class:`StorySheetView` from rows already read: her
    ``row`` (None: none saved yet, so every default: 1 dot per Attribute,
    7 Health…), her Skills and Merits, and what her presence records tonight
    (``track``: aggravated, lethal, bashing boxes). No query."""
    row = row or StorySheet(character=character)
    rated = {s.name: s for s in skills}
    return StorySheetView(
        attributes=tuple(
            Dots(name, category, row.dots(name)) for name, category in ATTRIBUTES.items()
        ),
        skills=tuple(
            Dots(
                name,
                category,
                rated[name].dots if name in rated else 0,
                tuple(rated[name].specialty_list) if name in rated else (),
            )
            for name, category in SKILLS.items()
        ),
        merits=tuple(MeritLine(m.name, m.dots, m.note) for m in merits),
        willpower=character.willpower,
        willpower_left=max(0, character.willpower - willpower_spent),
        health=row.health,
        aggravated=track[0],
        lethal=track[1],
        bashing=track[2],
        defense=row.defense,
        initiative=row.initiative,
        speed=row.speed,
        size=row.size,
        wisdom=row.wisdom,
        armor=row.armor,
    )


def story_sheets(
    characters: Sequence[Character], session: GameSession | None
) -> dict[int, StorySheetView]:
    """:class:`StorySheetView` of each of ``characters`` in ``session`` (None:
    between sessions: nothing spent, no damage), keyed by character id. Four
    queries in all (three without a session)."""
    ids = [c.pk for c in characters]
    rows = {r.character_id: r for r in StorySheet.objects.filter(character_id__in=ids)}
    skills: dict[int, list[StorySkill]] = {pk: [] for pk in ids}
    for skill in StorySkill.objects.filter(character_id__in=ids):
        skills[skill.character_id].append(skill)
    merits: dict[int, list[Merit]] = {pk: [] for pk in ids}
    for merit in Merit.objects.filter(character_id__in=ids).order_by("name"):
        merits[merit.character_id].append(merit)
    tonight: dict[int, dict] = {}
    if session is not None and ids:
        for character_id, spent, *track in Presence.objects.filter(
            session=session, character_id__in=ids
        ).values_list("character_id", "willpower_spent", *Presence.TRACK):
            tonight[character_id] = {"willpower_spent": spent, "track": tuple(track)}
    return {
        c.pk: story_sheet_of(c, rows.get(c.pk), skills[c.pk], merits[c.pk], **tonight.get(c.pk, {}))
        for c in characters
    }


def story_sheet(character: Character, session: GameSession | None) -> StorySheetView:
    """:func:`story_sheets` of one character."""
    return story_sheets([character], session)[character.pk]
