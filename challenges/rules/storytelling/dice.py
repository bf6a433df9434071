"""Dice pools and rolls of the Storytelling System (seeds/003 "Rolling Dice",
"Dice Pools", "Modifiers", "Chance Die", "Skills", "Willpower", "Wound
Penalties").

A pool is built by :func:`dice_pool` (every modifier summed first) and
rolled by :func:`roll` with a dice source passed in: the server passes
``d10(secrets.randbelow)``, tests and a narrator rolling by hand pass
:class:`ScriptedDice`. A :class:`Roll` keeps every die, rerolls included,
in the order rolled, each reroll naming the 10 it came from, so a phone can
show each die.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from challenges.rules.core import RulesError
from challenges.rules.storytelling.traits import ATTRIBUTES, TraitCategory, skill_category

DiceSource = Callable[[], int]
"""Rolls one d10 and returns its face, 1 to 10 (the die's "0" is a 10)."""

SUCCESS_FACE = 8
"""A die showing 8 or better is a success (seeds/003 "Rolling Dice")."""

AGAIN_FACE = 10
"""A 10 is rolled again (10-again; seeds/003 "Rolling Dice"); on a chance
die only a 10 succeeds (seeds/003 "Chance Die")."""

EXCEPTIONAL_SUCCESSES = 5
"""Five or more successes: an exceptional success (seeds/003 "Rolling Dice")."""

WILLPOWER_DICE = 3
"""One Willpower point adds three dice to one roll (seeds/003 "Willpower")."""

UNSKILLED: Mapping[TraitCategory, int] = {
    TraitCategory.MENTAL: -3,
    TraitCategory.PHYSICAL: -1,
    TraitCategory.SOCIAL: -1,
}
"""The penalty for a pool whose Skill the character lacks (seeds/003 "Skills")."""

SPECIALTY_DICE = 1
"""A relevant Specialty adds one die (seeds/003 "Skills")."""

IMPROVISED_WEAPON = -1
"""An improvised weapon costs one die (seeds/003 "Combat")."""

MOST_DICE = 10_000
"""A guard: a roll with more dice than this (a source that only shows 10s)
is refused with ValueError."""


def d10(randbelow: Callable[[int], int]) -> DiceSource:
    """A dice source from ``randbelow(n)`` (a number in 0..n-1), e.g.
    ``d10(secrets.randbelow)``: the server's dice."""
    return lambda: randbelow(10) + 1


class ScriptedDice:
    """Dice that show the faces given, in order: tests, and a narrator who
    rolled real dice and types the faces in. Calling it past the last face
    raises RulesError("The dice given ran out ...")."""

    def __init__(self, faces: Iterable[int]) -> None:
        self._faces = list(faces)
        self._next = 0

    def __call__(self) -> int:
        if self._next >= len(self._faces):
            raise RulesError(f"The dice given ran out after {len(self._faces)} dice.")
        face = self._faces[self._next]
        self._next += 1
        return face

    @property
    def left(self) -> int:
        """Faces not rolled yet."""
        return len(self._faces) - self._next


class RollOutcome(StrEnum):
    """How a roll went (seeds/003 "Rolling Dice", "Chance Die")."""

    DRAMATIC_FAILURE = "dramatic_failure"
    FAILURE = "failure"
    SUCCESS = "success"
    EXCEPTIONAL_SUCCESS = "exceptional_success"

    @property
    def label(self) -> str:
        """ "Dramatic failure", "Failure", "Success" or "Exceptional success"."""
        return self.value.replace("_", " ").capitalize()


@dataclass(frozen=True)
class DicePool:
    """A dice pool with its parts: ``parts`` are ``(reason, dice)`` pairs in
    the order they were summed (the Attribute, the Skill, "Unskilled",
    "Specialty", "Willpower", equipment, the narrator's modifiers, "Wound
    penalty"); ``willpower``: a Willpower point is spent on it (the caller
    takes it off the sheet). seeds/003 "Dice Pools", "Modifiers"."""

    parts: tuple[tuple[str, int], ...]
    willpower: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "parts", tuple((str(r), int(n)) for r, n in self.parts))

    @property
    def dice(self) -> int:
        """The sum of every part; 0 or less means a chance die."""
        return sum(n for _, n in self.parts)

    @property
    def chance(self) -> bool:
        """The pool is 0 or less: one chance die is rolled (seeds/003 "Chance Die")."""
        return self.dice <= 0

    def plus(self, *parts: tuple[str, int]) -> DicePool:
        """The same pool with more ``(reason, dice)`` parts (zeros left out)."""
        return DicePool(self.parts + tuple(p for p in parts if p[1]), self.willpower)

    def to_dict(self) -> dict[str, Any]:
        """{"parts": [[reason, dice], ...], "willpower": bool}."""
        return {"parts": [list(p) for p in self.parts], "willpower": self.willpower}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> DicePool:
        """Inverse of :meth:`to_dict`."""
        return cls(tuple((str(r), int(n)) for r, n in d["parts"]), bool(d["willpower"]))


def dice_pool(
    *,
    attribute: tuple[str, int],
    skill: tuple[str, int] | None = None,
    specialty: bool = False,
    willpower: bool = False,
    equipment: int = 0,
    improvised: bool = False,
    modifiers: Sequence[tuple[str, int]] = (),
    wound_penalty: int = 0,
    wisdom: bool = False,
) -> DicePool:
    """The dice pool ``attribute`` + ``skill`` + modifiers, every modifier
    summed before anything is rolled (seeds/003 "Dice Pools", "Modifiers").

    ``attribute``, ``skill``: (name, dots), names as in ``traits``; a Skill
    at 0 dots is rolled unskilled: −1 for a Physical or Social Skill, −3
    for a Mental one (seeds/003 "Skills"); None: a pool without a Skill.
    ``specialty``: +1, only with dots in the Skill. ``willpower``: +3, one
    point per roll (seeds/003 "Willpower"). ``equipment``: the tool's or
    weapon's bonus (±). ``improvised``: an improvised weapon, −1 (seeds/003
    "Combat"). ``modifiers``: further (reason, dice) pairs: the narrator's
    circumstances (usually +2 to −2), a second Attribute, Defense, armour.
    ``wound_penalty``: 0, −1, −2 or −3 (:attr:`HealthTrack.wound_penalty`);
    left out when ``wisdom`` (a roll related to losing Wisdom, seeds/003
    "Wound Penalties").

    Raises RulesError for an unknown Attribute or Skill, negative dots, a
    Specialty without the Skill, a wound penalty outside 0..−3, or a
    modifier called "Willpower" (one point per roll, through ``willpower``).
    """
    name, dots = attribute
    if name not in ATTRIBUTES:
        raise RulesError(f"There is no Attribute called {name!r}.")
    if dots < 0:
        raise RulesError("Dots cannot be negative.")
    if wound_penalty not in (0, -1, -2, -3):
        raise RulesError("A wound penalty is 0, −1, −2 or −3.")
    parts: list[tuple[str, int]] = [(name, dots)]
    if skill is not None:
        skill_name, skill_dots = skill
        category = skill_category(skill_name)
        if skill_dots < 0:
            raise RulesError("Dots cannot be negative.")
        parts.append((skill_name, skill_dots))
        if skill_dots == 0:
            parts.append((f"Unskilled ({category.label})", UNSKILLED[category]))
    if specialty:
        if skill is None or skill[1] == 0:
            raise RulesError("A Specialty needs dots in its Skill.")
        parts.append(("Specialty", SPECIALTY_DICE))
    if willpower:
        parts.append(("Willpower", WILLPOWER_DICE))
    if equipment:
        parts.append(("Equipment", equipment))
    if improvised:
        parts.append(("Improvised weapon", IMPROVISED_WEAPON))
    if any(str(r).strip().casefold() == "willpower" for r, _ in modifiers):
        raise RulesError("Only one Willpower point may be spent on a roll.")
    parts.extend((str(r), int(n)) for r, n in modifiers if n)
    if wound_penalty and not wisdom:
        parts.append(("Wound penalty", wound_penalty))
    return DicePool(tuple(parts), willpower)


@dataclass(frozen=True)
class Die:
    """One die of a roll: its ``face`` (1–10), whether it is a ``success``,
    and ``rerolled_from``: the index, in the roll's ``dice``, of the 10 it
    rerolls (None for a die of the pool itself)."""

    face: int
    success: bool
    rerolled_from: int | None = None


@dataclass(frozen=True)
class Roll:
    """One roll of a dice pool. ``pool``: the pool's dice (0 or less: a
    chance die was rolled). ``dice``: every die in the order rolled: first
    the pool's dice, then each reroll after the dice before it, each naming
    the 10 it rerolls. seeds/003 "Rolling Dice", "Chance Die"."""

    pool: int
    dice: tuple[Die, ...]

    @property
    def chance(self) -> bool:
        """A chance die was rolled (the pool was 0 or less)."""
        return self.pool <= 0

    @property
    def successes(self) -> int:
        """Dice that succeeded, rerolls included."""
        return sum(d.success for d in self.dice)

    @property
    def dramatic_failure(self) -> bool:
        """A chance die whose first roll shows 1 (seeds/003 "Chance Die")."""
        return self.chance and bool(self.dice) and self.dice[0].face == 1

    @property
    def exceptional(self) -> bool:
        """Five or more successes (seeds/003 "Rolling Dice")."""
        return self.successes >= EXCEPTIONAL_SUCCESSES

    @property
    def outcome(self) -> RollOutcome:
        """Dramatic failure, failure (no success), success, or exceptional success."""
        if self.dramatic_failure:
            return RollOutcome.DRAMATIC_FAILURE
        if self.exceptional:
            return RollOutcome.EXCEPTIONAL_SUCCESS
        return RollOutcome.SUCCESS if self.successes else RollOutcome.FAILURE

    @property
    def faces(self) -> tuple[int, ...]:
        """Every face in the order rolled."""
        return tuple(d.face for d in self.dice)

    def to_dict(self) -> dict[str, Any]:
        """{"pool": int, "dice": [[face, success, rerolled_from], ...]} plus
        the derived "successes" and "outcome" (for readers; ignored by
        :meth:`from_dict`)."""
        return {
            "pool": self.pool,
            "dice": [[d.face, d.success, d.rerolled_from] for d in self.dice],
            "successes": self.successes,
            "outcome": self.outcome.value,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Roll:
        """Inverse of :meth:`to_dict`."""
        return cls(
            int(d["pool"]),
            tuple(
                Die(int(f), bool(s), None if src is None else int(src)) for f, s, src in d["dice"]
            ),
        )


def face_of(dice: DiceSource) -> int:
    """One face from ``dice``; RulesError unless it is an int from 1 to 10."""
    face = dice()
    if not isinstance(face, int) or not 1 <= face <= 10:
        raise RulesError(f"A d10 shows 1 to 10, not {face!r}.")
    return face


def roll(pool: int | DicePool, dice: DiceSource) -> Roll:
    """Roll ``pool`` (a :class:`DicePool` or its number of dice) with
    ``dice``. Each die of 8–10 succeeds and each 10 is rolled again
    (10-again), rerolls too. A pool of 0 or less rolls one chance die: only
    a 10 succeeds, a 10 is rolled again and that reroll too succeeds only on
    a 10, and a 1 on its first roll is a dramatic failure. seeds/003
    "Rolling Dice", "Chance Die".

    Raises RulesError for a face outside 1–10 or scripted dice running out,
    ValueError past :data:`MOST_DICE` dice."""
    size = pool.dice if isinstance(pool, DicePool) else int(pool)
    chance = size <= 0
    wins = AGAIN_FACE if chance else SUCCESS_FACE
    out: list[Die] = []
    for _ in range(1 if chance else size):
        face = face_of(dice)
        out.append(Die(face, face >= wins))
    i = 0
    while i < len(out):
        if out[i].face == AGAIN_FACE:
            if len(out) >= MOST_DICE:
                raise ValueError("The dice source rolled too many 10s.")
            face = face_of(dice)
            out.append(Die(face, face >= wins, i))
        i += 1
    return Roll(size, tuple(out))
