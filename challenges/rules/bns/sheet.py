"""What a By Night Studios sheet gives a test: the :class:`Fighter`, the kinds
of attack and defence, and the seed's "Common Test Pools" (:func:`test_pool`).

Pure Python (no Django). Source: seeds/002 (By Night Studios MET combat
summary); sections are cited by their headings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from challenges.rules.bns.options import BNS, BnsOptions
from challenges.rules.core import Category, Immunity, RulesError, _as, _norm


class PhysicalFocus(StrEnum):
    """A Physical attribute's focus. seeds/002 "Physical Focuses in Combat"."""

    STRENGTH = "strength"
    DEXTERITY = "dexterity"
    STAMINA = "stamina"

    @property
    def label(self) -> str:
        """ "Strength", "Dexterity" or "Stamina"."""
        return self.value.title()


class WoundTrack(StrEnum):
    """The wound track her damage has reached; the sheets store damage and
    boxes, the engine reads only the track (Pierce the Heart needs the
    Incapacitated one). seeds/002 "Combat Maneuvers" (Pierce the Heart)."""

    HEALTHY = "healthy"
    INJURED = "injured"
    INCAPACITATED = "incapacitated"

    @property
    def label(self) -> str:
        """ "Healthy", "Injured" or "Incapacitated"."""
        return self.value.title()


class AttackKind(StrEnum):
    """How she attacks: brawl (unarmed), melee (armed), thrown, firearms (the
    Physical attacks, seeds/002 "Common Test Pools" and the damage paragraph
    under it), or a Mental or Social power named in the challenge."""

    BRAWL = "brawl"
    MELEE = "melee"
    THROWN = "thrown"
    FIREARMS = "firearms"
    MENTAL = "mental"
    SOCIAL = "social"

    @property
    def category(self) -> Category:
        """Physical for brawl, melee, thrown and firearms; else Mental or Social."""
        if self is AttackKind.MENTAL:
            return Category.MENTAL
        if self is AttackKind.SOCIAL:
            return Category.SOCIAL
        return Category.PHYSICAL

    @property
    def physical(self) -> bool:
        """A Physical attack (maneuvers and mass combat tactics apply only to these)."""
        return self.category is Category.PHYSICAL

    @property
    def label(self) -> str:
        """ "Brawl", "Melee", "Thrown", "Firearms", "Mental power", "Social power"."""
        if self.physical:
            return self.value.title()
        return f"{self.value.title()} power"


class Defence(StrEnum):
    """How she defends. seeds/002 "Common Test Pools": Physical + Dodge,
    Social + current Willpower, Mental + current Willpower."""

    DODGE = "dodge"
    SOCIAL = "social"
    MENTAL = "mental"

    @property
    def label(self) -> str:
        """ "Physical + Dodge", "Social + Willpower" or "Mental + Willpower"."""
        return {
            "dodge": "Physical + Dodge",
            "social": "Social + Willpower",
            "mental": "Mental + Willpower",
        }[self.value]


DEFENCE_OF: Mapping[Category, Defence] = {
    Category.PHYSICAL: Defence.DODGE,
    Category.SOCIAL: Defence.SOCIAL,
    Category.MENTAL: Defence.MENTAL,
}
"""The defence the seed pairs with each kind of attack (seeds/002 "Common Test
Pools"); a power may allow others (``open_challenge(defences=...)``)."""

ATTACK_SKILL: Mapping[AttackKind, str] = {
    AttackKind.BRAWL: "Brawl",
    AttackKind.MELEE: "Melee",
    AttackKind.FIREARMS: "Firearms",
}
"""The skill of each Physical attack pool the seed lists (seeds/002 "Common
Test Pools"). Thrown is not listed: ``BnsOptions.thrown_skill`` names it."""


def _rating(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{what} must be a whole number ≥ 0, not {value!r}")
    return value


def initiative(physical: int, mental: int) -> int:
    """A character's initiative from her Physical and Mental ratings: the
    higher of the two, whatever challenge she attempts. The one place of the
    rule: the opposed challenge's :class:`Fighter`, the combat rounds'
    fighter (``challenges.rules.bns_combat``) and the sheets read it.
    seeds/002 "Resolving Combat"."""
    return max(physical, mental)


@dataclass(frozen=True)
class Fighter:
    """A character as a ``bns`` test sees her (built by the sheets' service).

    ``physical``, ``social``, ``mental``: attribute ratings ≥ 0. ``skills``:
    {skill name: rating ≥ 0} (Brawl, Melee, Firearms, Dodge, ...), read
    case-insensitively by :meth:`skill`; stored as a plain dict. ``willpower``:
    current points, 0 ≤ willpower ≤ ``willpower_max``. ``focus``: her Physical
    focus or None. ``stock_npc``: a Stock NPC (seeds/002 "Stock NPC Tactics";
    no wound track, so Pierce the Heart stakes her whatever her damage).
    ``wound_track``: the track her damage has reached. ``knockout_immune``:
    cannot be knocked unconscious (vampires, seeds/002 Knock Out). ``mortal``:
    Pierce the Heart kills her; ``vampire``: Pierce the Heart with a staking
    weapon stakes her (anyone else, a Garou say, takes the damage only).
    ``immunities``: her immunities tonight (core's
    :class:`~challenges.rules.core.Immunity`: to one attacker's use of one
    power, until an epoch second), checked when she is challenged.
    ``free_maneuver_used``: her focus's free maneuver is spent for this
    combat. ``character_id``: the sheet's id (None in the engine's tests).
    ``focus`` and ``wound_track`` may be given as values. Raises ValueError
    on a negative rating, Willpower out of range, or mortal and vampire both.
    """

    name: str
    physical: int
    social: int
    mental: int
    skills: Mapping[str, int] = field(default_factory=dict)
    willpower: int = 0
    willpower_max: int = 0
    focus: PhysicalFocus | None = None
    stock_npc: bool = False
    wound_track: WoundTrack = WoundTrack.HEALTHY
    knockout_immune: bool = False
    mortal: bool = False
    vampire: bool = False
    immunities: tuple[Immunity, ...] = ()
    free_maneuver_used: bool = False
    character_id: int | None = None

    def __post_init__(self) -> None:
        for what in ("physical", "social", "mental", "willpower", "willpower_max"):
            _rating(getattr(self, what), what.replace("_", " ").title())
        skills = {str(k): _rating(v, f"Skill {k!r}") for k, v in dict(self.skills).items()}
        object.__setattr__(self, "skills", skills)
        if self.willpower > self.willpower_max:
            raise ValueError(
                f"Willpower {self.willpower} is above its maximum {self.willpower_max}"
            )
        if self.focus is not None:
            object.__setattr__(self, "focus", _as(PhysicalFocus, self.focus))
        object.__setattr__(self, "wound_track", _as(WoundTrack, self.wound_track))
        object.__setattr__(self, "immunities", tuple(self.immunities))
        if self.mortal and self.vampire:
            raise ValueError(f"{self.name} cannot be both mortal and a vampire")

    def __hash__(self) -> int:
        # ``skills`` is a dict: hash what equality compares, skills as sorted pairs.
        skills = tuple(sorted(self.skills.items()))
        return hash((self.name, self.character_id, self.physical, self.social, self.mental, skills))

    def skill(self, name: str) -> int:
        """Her rating in the skill ``name`` (case and spacing ignored), 0 without it."""
        key = _norm(name)
        return next((r for k, r in self.skills.items() if _norm(k) == key), 0)

    def attribute(self, category: Category) -> int:
        """Her Physical, Social or Mental rating."""
        return int(getattr(self, Category(category).value))

    @property
    def initiative(self) -> int:
        """The higher of Physical and Mental (:func:`initiative`)."""
        return initiative(self.physical, self.mental)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form: every field by name, ``skills`` as {name: rating},
        ``focus`` and ``wound_track`` as values (``focus`` None without one),
        ``immunities`` as [attacker id, power, until] lists."""
        return {
            "name": self.name,
            "physical": self.physical,
            "social": self.social,
            "mental": self.mental,
            "skills": dict(self.skills),
            "willpower": self.willpower,
            "willpower_max": self.willpower_max,
            "focus": None if self.focus is None else self.focus.value,
            "stock_npc": self.stock_npc,
            "wound_track": self.wound_track.value,
            "knockout_immune": self.knockout_immune,
            "mortal": self.mortal,
            "vampire": self.vampire,
            "immunities": [[i.attacker_id, i.power, i.until] for i in self.immunities],
            "free_maneuver_used": self.free_maneuver_used,
            "character_id": self.character_id,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Fighter:
        """Inverse of :meth:`to_dict`. KeyError/ValueError if malformed."""
        focus = d.get("focus")
        cid = d.get("character_id")
        return cls(
            name=str(d["name"]),
            physical=int(d["physical"]),
            social=int(d["social"]),
            mental=int(d["mental"]),
            skills={str(k): int(v) for k, v in dict(d.get("skills", {})).items()},
            willpower=int(d["willpower"]),
            willpower_max=int(d["willpower_max"]),
            focus=None if focus is None else PhysicalFocus(focus),
            stock_npc=bool(d.get("stock_npc", False)),
            wound_track=WoundTrack(d.get("wound_track", WoundTrack.HEALTHY.value)),
            knockout_immune=bool(d.get("knockout_immune", False)),
            mortal=bool(d.get("mortal", False)),
            vampire=bool(d.get("vampire", False)),
            immunities=tuple(
                Immunity(int(a), str(p), float(u)) for a, p, u in d.get("immunities", ())
            ),
            free_maneuver_used=bool(d.get("free_maneuver_used", False)),
            character_id=None if cid is None else int(cid),
        )


def attack_skill(attack: AttackKind, thrown_skill: str, power_skill: str = "") -> str:
    """The skill added to the attacker's attribute: Brawl, Melee or Firearms
    (seeds/002 "Common Test Pools"), ``thrown_skill`` for a thrown attack
    (the seed lists none; ``BnsOptions.thrown_skill``), and for a Mental or
    Social power the skill the power names (``power_skill``; "" for none)."""
    attack = AttackKind(attack)
    if attack is AttackKind.THROWN:
        return thrown_skill
    return ATTACK_SKILL.get(attack, power_skill)


def lacking_skill(
    fighter: Fighter,
    attack: AttackKind | str,
    *,
    power_skill: str = "",
    options: BnsOptions = BNS,
) -> str:
    """The Skill this attack's pool adds that ``fighter`` does not have
    (rated 0 or not on her sheet), "" when she may make it: brawl adds
    nothing she needs; melee, thrown and firearms their Skill
    (:func:`attack_skill`, thrown ``options.thrown_skill``); a Mental or
    Social power the ``power_skill`` it names, if any. Always "" when
    ``options.unskilled_attacks``. seeds/002 "Common Test Pools"."""
    attack = AttackKind(attack)
    if options.unskilled_attacks or attack is AttackKind.BRAWL:
        return ""
    skill = attack_skill(attack, options.thrown_skill, power_skill)
    return skill if skill and fighter.skill(skill) < 1 else ""


def test_pool(
    fighter: Fighter,
    *,
    attack: AttackKind | None = None,
    defence: Defence | None = None,
    thrown_skill: str = BNS.thrown_skill,
    power_skill: str = "",
    modifiers: Sequence[tuple[str, int]] = (),
) -> int:
    """Her test pool, a count ≥ 0 (never negative, whatever the modifiers).

    Exactly one of ``attack`` or ``defence``. Attacking: Physical + Brawl /
    Melee / Firearms, Physical + ``thrown_skill`` when thrown, Mental or Social
    + ``power_skill`` for a power. Defending: Physical + Dodge, Social +
    current Willpower, Mental + current Willpower. ``modifiers``: (reason,
    amount) pairs added to it (maneuvers, a Stock NPC's assist, a narrator's
    ruling). Raises RulesError when neither or both are given.
    seeds/002 "Common Test Pools", "Combat Maneuvers", "Stock NPC Tactics".
    """
    if (attack is None) == (defence is None):
        raise RulesError("A test pool is either an attack's or a defence's.")
    if attack is not None:
        attack = AttackKind(attack)
        base = fighter.attribute(attack.category)
        skill = attack_skill(attack, thrown_skill, power_skill)
        base += fighter.skill(skill) if skill else 0
    else:
        chosen = Defence(str(defence))
        if chosen is Defence.DODGE:
            base = fighter.physical + fighter.skill("Dodge")
        else:
            base = fighter.attribute(Category(chosen.value)) + fighter.willpower
    return max(0, base + sum(amount for _, amount in modifiers))


test_pool.__test__ = False  # type: ignore[attr-defined]  # not a pytest test
