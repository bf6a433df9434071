"""``bns`` rule options as data: where seeds/002 is silent, the narrator
decides, and each such point is a field of :class:`BnsOptions` with its
default. :data:`BNS` is the preset; a chronicle changes one point with
``dataclasses.replace(BNS, ...)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any


class ExceptionalOrder(StrEnum):
    """When an exceptional success's extra point of damage is added, against a
    maneuver's reduction (seeds/002 is silent; the narrator decides).

    ``before_reduction`` (default): base + 1, then the reduction, floor 0
    (an exceptional Grapple with a fist does max(0, 1 + 1 − 3) = 0).
    ``after_reduction``: max(0, base − reduction) + 1 (that Grapple does 1).
    """

    BEFORE_REDUCTION = "before_reduction"
    AFTER_REDUCTION = "after_reduction"


@dataclass(frozen=True)
class BnsOptions:
    """The ``bns`` rule points seeds/002 leaves open.

    ``thrown_skill``: the skill of a thrown attack's pool. The seed is
    silent; the narrator decides. It names damage for "a thrown, brawl, or
    melee attack" but pools only for Unarmed (Physical + Brawl), Armed
    (Physical + Melee) and Firearm; a thrown weapon is armed and is not a
    firearm, so the default is "Melee" (Physical + Melee). seeds/002 "Common
    Test Pools".

    ``exceptional_order``: see :class:`ExceptionalOrder` (the seed is silent;
    the narrator decides). seeds/002 "Exceptional Success", "Combat Maneuvers".

    ``power_damage``: damage a Mental or Social power inflicts on success
    (the seed gives damage only for Physical attacks and says an exceptional
    success gives "whatever bonus the power describes"; the narrator decides);
    default 0, the power's stated effect being the challenge's stakes.

    ``immunity_seconds``: how long a target is immune to an attacker's power
    after a failed Mental or Social challenge, 600 (seeds/002 "Retrying Failed
    Attacks": 10 minutes). The one option of the rule, in a combat and out
    of one (the combat rounds keep no copy of it).

    ``unskilled_attacks``: whether a pool may add a Skill she does not have
    (rated 0, not on her sheet): a melee, thrown or firearms attack without
    that Skill, a power naming such a Skill. The seed is silent (it gives
    the pools, Physical + Melee or + Firearms, not whether an attack needs
    the Skill); the narrator decides. Default False: brawl needs nothing
    (anyone can punch), every other pool adds only a Skill of her sheet, as
    the attack form offers them, so a frame the form never offers (a
    firearm's 2 damage with no Firearms) is refused. seeds/002 "Common
    Test Pools".

    Initiative ties are not an option: the seed is silent and
    the narrator decides each time, ordering tied fighters herself
    (``bns_combat.reorder``; the dashboard says so). seeds/002 "Resolving
    Combat".
    """

    thrown_skill: str = "Melee"
    exceptional_order: ExceptionalOrder = ExceptionalOrder.BEFORE_REDUCTION
    power_damage: int = 0
    immunity_seconds: float = 600.0
    unskilled_attacks: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "exceptional_order", ExceptionalOrder(self.exceptional_order))
        if self.power_damage < 0 or self.immunity_seconds < 0:
            raise ValueError("Damage and durations cannot be negative.")

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form: {field: value}, enums as their values."""
        return {k: (v.value if isinstance(v, StrEnum) else v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BnsOptions:
        """Inverse of :meth:`to_dict`; missing keys take the defaults."""
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})


BNS = BnsOptions()
"""The ``bns`` preset: every default above."""
