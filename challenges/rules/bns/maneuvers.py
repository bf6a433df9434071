"""Combat maneuvers as data (:data:`MANEUVERS`), how each is paid for, and
the check of the maneuvers an attacker applies to one attack
(:func:`check_maneuvers`). seeds/002 "Combat Maneuvers", "Physical Focuses
in Combat", "Mass Combat" (Assist Attacker, Stock NPC Tactics).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from challenges.rules.bns.sheet import AttackKind, Fighter, PhysicalFocus, WoundTrack
from challenges.rules.core import RulesError, _norm


class Maneuver(StrEnum):
    """Every combat maneuver seeds/002 "Combat Maneuvers" lists."""

    BURST_OF_SPEED = "burst_of_speed"
    BLINDING_ATTACK = "blinding_attack"
    DISARM = "disarm"
    GRAPPLE = "grapple"
    KNOCK_OUT = "knock_out"
    QUICK_DRAW = "quick_draw"
    KNOCK_DOWN = "knock_down"
    FIGHTING_BLIND = "fighting_blind"
    PIERCE_THE_HEART = "pierce_the_heart"

    @property
    def label(self) -> str:
        """The seed's name: "Burst of Speed", "Pierce the Heart", ..."""
        words = self.value.split("_")
        small = {"of", "the"}
        return " ".join(w if w in small else w.title() for w in words)


class Effect(StrEnum):
    """What a successful maneuver does to the defender (seeds/002 "Combat
    Maneuvers"): blinded until two simple actions clear her eyes; grappled;
    prone; unconscious for 10 minutes; disarmed (drops one item of the
    attacker's choice); killed (a mortal's heart pierced); staked (a vampire
    hit with a staking weapon, or any Stock NPC)."""

    BLINDED = "blinded"
    GRAPPLED = "grappled"
    PRONE = "prone"
    UNCONSCIOUS = "unconscious"
    DISARMED = "disarmed"
    KILLED = "killed"
    STAKED = "staked"

    @property
    def label(self) -> str:
        """The effect in words, e.g. "Unconscious"."""
        return self.value.title()


class Payment(StrEnum):
    """How a maneuver is paid for: 1 Willpower (one per attack), her Physical
    focus's free maneuver (once per combat), or an ally's Assist Attacker (one
    per attack). seeds/002 "Combat Maneuvers", "Physical Focuses in Combat",
    "Assist Attacker"."""

    WILLPOWER = "willpower"
    FOCUS = "focus"
    ASSIST = "assist"


class Assist(StrEnum):
    """An ally's Assist Attacker on this attack: a character (``player``: one
    maneuver without Willpower) or a Stock NPC (``stock_npc``: +1 to the
    attack's pool instead). seeds/002 "Assist Attacker", "Stock NPC Tactics"."""

    PLAYER = "player"
    STOCK_NPC = "stock_npc"


MAX_MANEUVERS = 2
"""Maneuvers on one attack at most: one bought with Willpower, one more with an
ally's Assist Attacker ("This may allow two combat maneuvers to be applied to
the same attack", seeds/002 "Assist Attacker"); a focus's free one counts
among the two."""

UNCONSCIOUS_SECONDS = 600.0
"""Knock Out: "your target is unconscious for 10 minutes" (seeds/002)."""

WEAPON_ATTACKS = frozenset({AttackKind.MELEE, AttackKind.THROWN, AttackKind.FIREARMS})
"""Attacks with "a melee or ranged weapon" (Pierce the Heart)."""


@dataclass(frozen=True)
class ManeuverRule:
    """One maneuver's rule, as seeds/002 "Combat Maneuvers" states it.

    ``pool_modifier``: added to the attack's pool (Disarm −2, Knock Out −2,
    Pierce the Heart −3). ``damage_reduction``: points of damage fewer on a
    success, never below 0 in all (Blinding Attack 3, Grapple 3, Knock Down 1).
    ``effect``: what a success does (None: nothing to the defender, e.g. Quick
    Draw). ``effect_seconds``: how long it lasts (None: until she acts, as the
    seed says). ``first_round_surprise``: only in the first round of combat
    against a surprised target (Knock Out). ``needs_incapacitated``: the
    target's wounds in the Incapacitated track, or a Stock NPC (Pierce the
    Heart). ``attacks``: the attack kinds it may go with. ``stamina_resists``:
    a Stamina-focused target resists it unless the attacker's Physical is
    higher (seeds/002 "Physical Focuses in Combat"). ``free_with``: the
    focuses whose free maneuver it may be. ``note``: the rest of the rule,
    for the phone.
    """

    maneuver: Maneuver
    pool_modifier: int = 0
    damage_reduction: int = 0
    effect: Effect | None = None
    effect_seconds: float | None = None
    first_round_surprise: bool = False
    needs_incapacitated: bool = False
    attacks: frozenset[AttackKind] = frozenset(
        {AttackKind.BRAWL, AttackKind.MELEE, AttackKind.THROWN, AttackKind.FIREARMS}
    )
    stamina_resists: bool = False
    free_with: frozenset[PhysicalFocus] = frozenset()
    note: str = ""


_S = PhysicalFocus.STRENGTH
_D = PhysicalFocus.DEXTERITY

MANEUVERS: Mapping[Maneuver, ManeuverRule] = {
    r.maneuver: r
    for r in (
        ManeuverRule(
            Maneuver.BURST_OF_SPEED,
            free_with=frozenset({_D}),
            note="Take your simple action at once, your standard action on your initiative.",
        ),
        ManeuverRule(
            Maneuver.BLINDING_ATTACK,
            damage_reduction=3,
            effect=Effect.BLINDED,
            note="Blinded until she spends two simple actions clearing her eyes.",
        ),
        ManeuverRule(
            Maneuver.DISARM,
            pool_modifier=-2,
            effect=Effect.DISARMED,
            free_with=frozenset({_S, _D}),
            note="She drops one item of your choice; picking it up takes a standard action.",
        ),
        ManeuverRule(
            Maneuver.GRAPPLE,
            damage_reduction=3,
            effect=Effect.GRAPPLED,
            free_with=frozenset({_S}),
            note="She cannot move or take a Physical standard action until she escapes.",
        ),
        ManeuverRule(
            Maneuver.KNOCK_OUT,
            pool_modifier=-2,
            effect=Effect.UNCONSCIOUS,
            effect_seconds=UNCONSCIOUS_SECONDS,
            first_round_surprise=True,
            stamina_resists=True,
            note="Only in the first round, against a surprised target; not vampires.",
        ),
        ManeuverRule(
            Maneuver.QUICK_DRAW,
            free_with=frozenset({_D}),
            note="Draw one weapon or small item without a simple action.",
        ),
        ManeuverRule(
            Maneuver.KNOCK_DOWN,
            damage_reduction=1,
            effect=Effect.PRONE,
            stamina_resists=True,
            free_with=frozenset({_S}),
            note="She lies on the ground; standing up takes a simple action.",
        ),
        ManeuverRule(
            Maneuver.FIGHTING_BLIND,
            free_with=frozenset({_D}),
            note="Needed to attack an opponent you cannot see; without it you miss.",
        ),
        ManeuverRule(
            Maneuver.PIERCE_THE_HEART,
            pool_modifier=-3,
            effect=Effect.KILLED,
            needs_incapacitated=True,
            attacks=WEAPON_ATTACKS,
            free_with=frozenset({_S}),
            note="Kills a mortal; stakes a vampire (staking weapon) or any Stock NPC.",
        ),
    )
}
"""Every maneuver of seeds/002 "Combat Maneuvers", with the focuses of
"Physical Focuses in Combat" that give it free once per combat."""


@dataclass(frozen=True)
class ManeuverUse:
    """One maneuver applied to an attack and how it is paid. Either field may
    be given as its value ("knock_out", "willpower")."""

    maneuver: Maneuver
    paid: Payment = Payment.WILLPOWER

    def __post_init__(self) -> None:
        object.__setattr__(self, "maneuver", parse_maneuver(self.maneuver))
        object.__setattr__(self, "paid", Payment(self.paid))


def parse_maneuver(value: object) -> Maneuver:
    """A maneuver from its value or its name in words ("Knock Out",
    "knock_out", "knock-out"); RulesError otherwise."""
    if isinstance(value, Maneuver):
        return value
    if isinstance(value, str):
        key = _norm(value.replace("_", " ").replace("-", " ")).replace(" ", "_")
        try:
            return Maneuver(key)
        except ValueError:
            pass
    raise RulesError(f"There is no combat maneuver called {value!r}.")


def stamina_resists(attacker: Fighter, defender: Fighter) -> bool:
    """The defender's Stamina focus keeps her from being Knocked Out or Down:
    she is Stamina-focused and the attacker's Physical is not higher.
    seeds/002 "Physical Focuses in Combat"."""
    return defender.focus is PhysicalFocus.STAMINA and attacker.physical <= defender.physical


def check_maneuvers(
    uses: Sequence[ManeuverUse],
    *,
    attacker: Fighter,
    defender: Fighter,
    attack: AttackKind,
    assist: Assist | None,
    surprise: bool,
    first_round: bool,
) -> None:
    """Raise RulesError unless ``uses`` may go with this attack.

    Only on a Physical attack; no maneuver twice; at most one bought with
    Willpower (and she has 1 left), at most one free from her focus (a
    focus that gives it, not yet used this combat), at most one from an
    ally's Assist Attacker (``assist`` PLAYER), and at most two in all
    (:data:`MAX_MANEUVERS`). Each maneuver's conditions: its attack
    kinds; Knock Out only in the first round against a surprised target who
    is not knockout-immune; Pierce the Heart only against a target in the
    Incapacitated track or a Stock NPC; Knock Out and Knock Down not against
    a Stamina-focused target whose Physical is at least the attacker's.
    seeds/002 "Combat Maneuvers", "Physical Focuses in Combat", "Assist Attacker".
    """
    if not uses:
        return
    if not AttackKind(attack).physical:
        raise RulesError("Combat maneuvers go only with Physical attacks.")
    names = [u.maneuver for u in uses]
    if len(set(names)) != len(names):
        raise RulesError("Each maneuver can be applied once to an attack.")
    paid = [u.paid for u in uses]
    for how, most in ((Payment.WILLPOWER, 1), (Payment.FOCUS, 1), (Payment.ASSIST, 1)):
        if paid.count(how) > most:
            raise RulesError(_TOO_MANY[how])
    if len(uses) > MAX_MANEUVERS:
        raise RulesError("At most two maneuvers go on one attack.")
    if Payment.WILLPOWER in paid and attacker.willpower < 1:
        raise RulesError("You have no Willpower left to buy a maneuver.")
    if Payment.ASSIST in paid and assist is not Assist.PLAYER:
        raise RulesError("Only an ally's Assist Attacker gives a maneuver without Willpower.")
    for use in uses:
        _check_one(use, attacker, defender, AttackKind(attack), surprise, first_round)


_TOO_MANY = {
    Payment.WILLPOWER: "You may buy only one maneuver with Willpower on an attack.",
    Payment.FOCUS: "Your focus gives only one free maneuver.",
    Payment.ASSIST: "One Assist Attacker gives only one maneuver.",
}


def _check_one(
    use: ManeuverUse,
    attacker: Fighter,
    defender: Fighter,
    attack: AttackKind,
    surprise: bool,
    first_round: bool,
) -> None:
    rule = MANEUVERS[use.maneuver]
    label = use.maneuver.label
    if use.paid is Payment.FOCUS:
        if attacker.focus is None or attacker.focus not in rule.free_with:
            raise RulesError(f"Your focus does not give {label} for free.")
        if attacker.free_maneuver_used:
            raise RulesError("You have used your focus's free maneuver this combat.")
    if attack not in rule.attacks:
        raise RulesError(f"{label} needs a melee or ranged weapon.")
    if rule.first_round_surprise:
        if not (first_round and surprise):
            raise RulesError(f"{label} works only in the first round, on a surprised target.")
        if defender.knockout_immune:
            raise RulesError(f"{defender.name} cannot be knocked unconscious.")
    if rule.needs_incapacitated and not (
        defender.stock_npc or defender.wound_track is WoundTrack.INCAPACITATED
    ):
        raise RulesError(f"{label} needs a target in the Incapacitated wound track.")
    if rule.stamina_resists and stamina_resists(attacker, defender):
        raise RulesError(
            f"{defender.name}'s Stamina focus resists {label}: "
            "your Physical must be higher than hers."
        )
