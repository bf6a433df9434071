"""A character's sheet of Attributes and Skills (ruleset ``bns``, seeds/002)
as plain data for the web layer: phone, roster, narrator's panel.

A chronicle whose ruleset has test pools (``Ruleset.test_pools``) rates
Attributes (Physical, Social, Mental) and Skills instead of listing adjective
Traits; nothing is bid or lost. What changes in an evening (Willpower spent,
damage, the Garou's form) is kept on her ``Presence``, so a new session
refreshes it. :func:`attribute_sheet_of` builds the dataclass from rows
already read (``characters.services.character_sheets`` calls it without a
query of its own); :func:`attribute_sheets` reads them itself (two queries).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from challenges.rules.bns.sheet import initiative
from characters.models import (
    CREATURES,
    FATES,
    GAROU_FORMS,
    PHYSICAL_FOCUSES,
    WOUND_TRACKS,
    Ability,
    Character,
    GameSession,
    Presence,
)

_FORM_LABELS = dict(GAROU_FORMS)
_FOCUS_LABELS = dict(PHYSICAL_FOCUSES)
_CREATURE_LABELS = dict(CREATURES)
_FATE_LABELS = dict(FATES)


@dataclass(frozen=True)
class SkillLine:
    """One Skill and its rating (1–5: a Skill rated 0 is not on the sheet)."""

    name: str
    rating: int

    @property
    def text(self) -> str:
        """ "Brawl 3"."""
        return f"{self.name} {self.rating}"


@dataclass(frozen=True)
class WoundTrack:
    """One wound track: ``name`` ("healthy", "injured", "incapacitated"), its
    ``boxes`` and how many of them tonight's damage has ``filled``."""

    name: str
    boxes: int
    filled: int

    @property
    def label(self) -> str:
        """ "Healthy", "Injured" or "Incapacitated"."""
        return self.name.title()

    @property
    def marks(self) -> list[bool]:
        """One entry per box, True where filled, left to right (for the boxes drawn)."""
        return [i < self.filled for i in range(self.boxes)]

    @property
    def text(self) -> str:
        """ "Injured 1/3": boxes filled of boxes."""
        return f"{self.label} {self.filled}/{self.boxes}"


@dataclass(frozen=True)
class AttributeSheet:
    """A test-pool sheet as it stands in a session (or between sessions).

    Ratings are counts. ``willpower``/``rage``: permanent ratings;
    ``willpower_left``/``rage_left``: what is left tonight (never below 0).
    ``damage``: points taken tonight; ``tracks``: her wound tracks filled in
    order (empty for a Stock NPC, who has none: seeds/002 "Pierce the Heart").
    ``form``/``starting_form``: Garou form values ("crinos"; "" for none);
    ``focus``: "strength", "dexterity", "stamina" or "". ``creature``:
    "mortal", "vampire", "other" or "" (not said); ``fate``: "dead" or
    "staked" when Pierce the Heart left her so tonight, else "".
    """

    physical: int
    social: int
    mental: int
    skills: tuple[SkillLine, ...] = ()
    willpower: int = 0
    willpower_left: int = 0
    rage: int = 0
    rage_left: int = 0
    damage: int = 0
    tracks: tuple[WoundTrack, ...] = ()
    garou: bool = False
    form: str = ""
    starting_form: str = ""
    focus: str = ""
    stock_npc: bool = False
    no_knockout: bool = False
    creature: str = ""
    fate: str = ""

    @property
    def attributes(self) -> list[tuple[str, int]]:
        """ "[("Physical", 7), ("Social", 3), ("Mental", 4)]"."""
        return [("Physical", self.physical), ("Social", self.social), ("Mental", self.mental)]

    @property
    def initiative(self) -> int:
        """Her higher Attribute of Physical and Mental (seeds/002 "Resolving Combat")."""
        return initiative(self.physical, self.mental)

    def skill(self, name: str) -> int:
        """The rating of Skill ``name`` (any case), 0 when she lacks it."""
        wanted = name.casefold()
        return next((s.rating for s in self.skills if s.name.casefold() == wanted), 0)

    @property
    def willpower_text(self) -> str:
        """ "Willpower 4/6": left tonight of the permanent rating."""
        return f"Willpower {self.willpower_left}/{self.willpower}"

    @property
    def rage_text(self) -> str:
        """ "Rage 2/4" (only meaningful for a Garou with Rage)."""
        return f"Rage {self.rage_left}/{self.rage}"

    @property
    def wound_track(self) -> str:
        """The label of the track her damage has reached ("Healthy" while
        none is filled; "Incapacitated" once that track has a box filled),
        "" for a Stock NPC (no wound track)."""
        reached = [t for t in self.tracks if t.filled]
        if not self.tracks:
            return ""
        return (reached[-1] if reached else self.tracks[0]).label

    @property
    def wounds_text(self) -> str:
        """Where her damage stands, by track: "Healthy track: 2 of 3 boxes
        marked", "Injured track: 1 of 3 boxes marked", "Healthy track: no box
        marked"; "" for a Stock NPC (no wound track). seeds/002 "Health"."""
        reached = [t for t in self.tracks if t.filled]
        if not self.tracks:
            return ""
        track = reached[-1] if reached else self.tracks[0]
        marked = f"{track.filled} of {track.boxes} boxes" if track.filled else "no box"
        return f"{track.label} track: {marked} marked"

    @property
    def form_label(self) -> str:
        """ "Crinos", or "" when she has no form."""
        return _FORM_LABELS.get(self.form, "")

    @property
    def focus_label(self) -> str:
        """ "Strength", or "" when she has no Physical focus."""
        return _FOCUS_LABELS.get(self.focus, "")

    @property
    def creature_label(self) -> str:
        """ "Mortal", "Vampire", "Other creature", or "" when not said."""
        return _CREATURE_LABELS.get(self.creature, "")

    @property
    def fate_label(self) -> str:
        """ "Dead" or "Staked" (Pierce the Heart tonight), else ""."""
        return _FATE_LABELS.get(self.fate, "")

    def as_dict(self) -> dict:
        """The sheet as plain data (lists, numbers, strings), with ``initiative``."""
        data = asdict(self)
        data["initiative"] = self.initiative
        return data


def wound_tracks(boxes: Sequence[int], damage: int) -> tuple[WoundTrack, ...]:
    """The wound tracks of ``boxes`` (per track, in :data:`WOUND_TRACKS` order)
    with ``damage`` points filling them in order; damage beyond the last box
    leaves every box filled."""
    tracks = []
    left = max(0, damage)
    for name, count in zip(WOUND_TRACKS, boxes, strict=True):
        filled = min(left, count)
        tracks.append(WoundTrack(name, count, filled))
        left -= filled
    return tuple(tracks)


def attribute_sheet_of(
    character: Character,
    skills: Sequence[tuple[str, int]],
    *,
    willpower_spent: int = 0,
    rage_spent: int = 0,
    damage: int = 0,
    form: str = "",
    fate: str = "",
) -> AttributeSheet:
    """``character``'s :class:`AttributeSheet` from rows already read: her
    Skills as ``(name, rating)`` (her Abilities), and what her presence
    records tonight (``form`` "": none set tonight, so her starting form).
    No query."""
    return AttributeSheet(
        physical=character.physical_attribute,
        social=character.social_attribute,
        mental=character.mental_attribute,
        skills=tuple(SkillLine(name, rating) for name, rating in skills),
        willpower=character.willpower,
        willpower_left=max(0, character.willpower - willpower_spent),
        rage=character.rage,
        rage_left=max(0, character.rage - rage_spent),
        damage=damage,
        tracks=()
        if character.stock_npc
        else wound_tracks([getattr(character, f) for f in Character.WOUND_BOXES], damage),
        garou=character.garou,
        form=(form or character.form) if character.garou else "",
        starting_form=character.form if character.garou else "",
        focus=character.focus,
        stock_npc=character.stock_npc,
        no_knockout=character.no_knockout,
        creature=character.creature,
        fate=fate,
    )


def attribute_sheets(
    characters: Sequence[Character], session: GameSession | None
) -> dict[int, AttributeSheet]:
    """:class:`AttributeSheet` of each of ``characters`` in ``session`` (None:
    between sessions, nothing spent), keyed by character id. Two queries in
    all (their Skills; their presences when there is a session)."""
    ids = [c.pk for c in characters]
    skills: dict[int, list[tuple[str, int]]] = {pk: [] for pk in ids}
    for character_id, name, rating in (
        Ability.objects.filter(character_id__in=ids)
        .order_by("name")
        .values_list("character_id", "name", "rating")
    ):
        skills[character_id].append((name, rating))
    tonight: dict[int, dict] = {}
    if session is not None and ids:
        for row in Presence.objects.filter(session=session, character_id__in=ids).values(
            "character_id", "willpower_spent", "rage_spent", "damage", "form", "fate"
        ):
            character_id = row.pop("character_id")
            tonight[character_id] = row
    return {c.pk: attribute_sheet_of(c, skills[c.pk], **tonight.get(c.pk, {})) for c in characters}


def attribute_sheet(character: Character, session: GameSession | None) -> AttributeSheet:
    """:func:`attribute_sheets` of one character (two queries)."""
    return attribute_sheets([character], session)[character.pk]
