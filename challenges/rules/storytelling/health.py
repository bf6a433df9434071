"""The Storytelling System's health track: damage types, marking damage,
wound penalties, what a full track means, and healing over elapsed time
(seeds/003 "Health", "Damage Types", "Marking Damage", "Wound Penalties",
"No More Health", "Additional Damage", "Healing").

The wounds on a track always read aggravated, then lethal, then bashing from
the left (lethal pushes bashing right, aggravated pushes both), so a
:class:`HealthTrack` is its size and three counts; :attr:`HealthTrack.boxes`
draws it. Healing is computed from elapsed seconds (:func:`heal`): the
server stores instants, never a timer, as ``challenges.rules.clocks`` does
for MET.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, NamedTuple

from challenges.rules.core import RulesError
from challenges.rules.storytelling.options import STORYTELLING, FullTrack, StorytellingOptions


class DamageType(StrEnum):
    """Bashing, lethal or aggravated, each more serious than the last;
    ``symbol``: how a sheet marks it, "/", "X" or "*" (seeds/003 "Damage
    Types", "Marking Damage")."""

    BASHING = "bashing"
    LETHAL = "lethal"
    AGGRAVATED = "aggravated"

    @property
    def symbol(self) -> str:
        """ "/", "X" or "*"."""
        return {"bashing": "/", "lethal": "X", "aggravated": "*"}[self.value]

    @property
    def label(self) -> str:
        """ "Bashing", "Lethal" or "Aggravated"."""
        return self.value.title()


HEAL_SECONDS: Mapping[DamageType, int] = {
    DamageType.BASHING: 15 * 60,
    DamageType.LETHAL: 2 * 24 * 3600,
    DamageType.AGGRAVATED: 7 * 24 * 3600,
}
"""Seconds to heal one point without Mana or spells: bashing 15 minutes,
lethal two days, aggravated a week (seeds/003 "Healing")."""

EMPTY_BOX = "·"
"""How :attr:`HealthTrack.picture` draws an unmarked box."""


class HealthStatus(StrEnum):
    """What the track means for the character (seeds/003 "No More Health").

    UNHURT: no box marked. HURT: some marked, not the last. UNCONSCIOUS: the
    last box marked and bashing. BLEEDING_OUT: the last box marked lethal
    or aggravated ("a mortal character quickly bleeds to death"; when she
    dies is the narrator's call, the seed gives no time)."""

    UNHURT = "unhurt"
    HURT = "hurt"
    UNCONSCIOUS = "unconscious"
    BLEEDING_OUT = "bleeding_out"

    @property
    def label(self) -> str:
        """ "Unhurt", "Hurt", "Unconscious" or "Bleeding out"."""
        return self.value.replace("_", " ").capitalize()


@dataclass(frozen=True)
class HealthTrack:
    """A Health track of ``size`` boxes (the character's Health dots, ≥ 1)
    holding ``aggravated``, ``lethal`` and ``bashing`` wounds, in that order
    from the left. Raises ValueError for a size below 1, a negative count,
    or more wounds than boxes."""

    size: int
    aggravated: int = 0
    lethal: int = 0
    bashing: int = 0

    def __post_init__(self) -> None:
        if self.size < 1:
            raise ValueError("A Health track has at least one box.")
        if min(self.aggravated, self.lethal, self.bashing) < 0:
            raise ValueError("Wounds cannot be negative.")
        if self.marked > self.size:
            raise ValueError("More wounds than Health boxes.")

    @property
    def marked(self) -> int:
        """Boxes holding a wound."""
        return self.aggravated + self.lethal + self.bashing

    @property
    def full(self) -> bool:
        """Every box is marked."""
        return self.marked == self.size

    @property
    def boxes(self) -> tuple[DamageType | None, ...]:
        """Each box from the left: its wound's type, or None if empty."""
        return (
            (DamageType.AGGRAVATED,) * self.aggravated
            + (DamageType.LETHAL,) * self.lethal
            + (DamageType.BASHING,) * self.bashing
            + (None,) * (self.size - self.marked)
        )

    @property
    def picture(self) -> str:
        """The track as a sheet shows it, e.g. "*X/····" for seven boxes."""
        return "".join(EMPTY_BOX if b is None else b.symbol for b in self.boxes)

    @property
    def wound_penalty(self) -> int:
        """0, or −1 / −2 / −3 when the third-to-last / second-to-last / last
        box is marked (seeds/003 "Wound Penalties"). Applied to every roll
        but those related to losing Wisdom (:func:`dice_pool`'s ``wisdom``)."""
        for penalty, from_right in ((-3, 1), (-2, 2), (-1, 3)):
            if self.size - from_right >= 0 and self.marked > self.size - from_right:
                return penalty
        return 0

    @property
    def status(self) -> HealthStatus:
        """:class:`HealthStatus`: the rightmost wound on a full track decides."""
        if not self.marked:
            return HealthStatus.UNHURT
        if not self.full:
            return HealthStatus.HURT
        rightmost = self.boxes[-1]
        return (
            HealthStatus.UNCONSCIOUS
            if rightmost is DamageType.BASHING
            else HealthStatus.BLEEDING_OUT
        )

    @property
    def rightmost_wound(self) -> DamageType | None:
        """The type of the rightmost marked box, the one that heals first
        (seeds/003 "Healing": "recovered from right to left"); None unhurt."""
        return self.boxes[self.marked - 1] if self.marked else None

    def without_rightmost(self) -> HealthTrack:
        """The track with its rightmost wound healed (itself when unhurt)."""
        wound = self.rightmost_wound
        if wound is None:
            return self
        return replace(self, **{wound.value: self.count(wound) - 1})

    def count(self, kind: DamageType) -> int:
        """Boxes holding a wound of ``kind``."""
        return {
            DamageType.BASHING: self.bashing,
            DamageType.LETHAL: self.lethal,
            DamageType.AGGRAVATED: self.aggravated,
        }[DamageType(kind)]

    def to_dict(self) -> dict[str, Any]:
        """{"size", "aggravated", "lethal", "bashing"}."""
        return {
            "size": self.size,
            "aggravated": self.aggravated,
            "lethal": self.lethal,
            "bashing": self.bashing,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> HealthTrack:
        """Inverse of :meth:`to_dict`."""
        return cls(int(d["size"]), int(d["aggravated"]), int(d["lethal"]), int(d["bashing"]))


class Damaged(NamedTuple):
    """What :func:`take_damage` did: the new ``track``; ``marked``: points
    marked in empty boxes; ``upgraded``: points that upgraded a wound already
    there; ``unmarked``: points the track could not show (see
    :class:`FullTrack`)."""

    track: HealthTrack
    marked: int
    upgraded: int
    unmarked: int


def take_damage(
    track: HealthTrack,
    points: int,
    kind: DamageType,
    options: StorytellingOptions = STORYTELLING,
) -> Damaged:
    """Mark ``points`` of ``kind`` damage on ``track``, one point at a time.

    An empty box takes it (lethal to the left of bashing, aggravated to the
    left of both: seeds/003 "Marking Damage"). On a full track new bashing or
    lethal damage upgrades the leftmost bashing wound to lethal, new
    aggravated damage the leftmost lethal or bashing wound to aggravated
    (seeds/003 "Additional Damage"); bashing or lethal with no bashing wound
    left follows ``options.full_track``; aggravated on a track all
    aggravated is unmarked. Damage never goes beyond the track.

    Raises RulesError for negative points."""
    if points < 0:
        raise RulesError("Damage cannot be negative.")
    kind = DamageType(kind)
    marked = upgraded = unmarked = 0
    agg, lethal, bashing = track.aggravated, track.lethal, track.bashing
    for _ in range(points):
        if agg + lethal + bashing < track.size:
            marked += 1
            if kind is DamageType.AGGRAVATED:
                agg += 1
            elif kind is DamageType.LETHAL:
                lethal += 1
            else:
                bashing += 1
        elif kind is DamageType.AGGRAVATED and (lethal or bashing):
            upgraded += 1
            agg += 1
            if lethal:
                lethal -= 1
            else:
                bashing -= 1
        elif kind is not DamageType.AGGRAVATED and bashing:
            upgraded += 1
            bashing -= 1
            lethal += 1
        elif (
            kind is not DamageType.AGGRAVATED
            and lethal
            and options.full_track is FullTrack.LETHAL_TO_AGGRAVATED
        ):
            upgraded += 1
            lethal -= 1
            agg += 1
        else:
            unmarked += 1
    return Damaged(
        replace(track, aggravated=agg, lethal=lethal, bashing=bashing), marked, upgraded, unmarked
    )


class Healed(NamedTuple):
    """What :func:`heal` found: the ``track`` after healing; ``healed``: the
    type of each point healed, in order; ``seconds_used``: the elapsed
    seconds those points took (the caller moves its clock's start on by
    this much, keeping the progress toward the next point); ``next_in``:
    seconds after the clock's start at which the next point heals (None:
    nothing left to heal)."""

    track: HealthTrack
    healed: tuple[DamageType, ...]
    seconds_used: float
    next_in: float | None


def heal(track: HealthTrack, elapsed_seconds: float) -> Healed:
    """Natural healing of ``track`` over ``elapsed_seconds`` of rest: one
    point at a time from the right, the rightmost wound first, each taking
    :data:`HEAL_SECONDS` of its type (bashing 15 minutes, lethal two days,
    aggravated a week) after the one before it. seeds/003 "Healing".

    Raises RulesError for negative seconds."""
    if elapsed_seconds < 0:
        raise RulesError("Elapsed time cannot be negative.")
    used = 0.0
    healed: list[DamageType] = []
    while (rightmost := track.rightmost_wound) is not None:
        cost = HEAL_SECONDS[rightmost]
        if used + cost > elapsed_seconds:
            return Healed(track, tuple(healed), used, used + cost)
        used += cost
        healed.append(rightmost)
        track = track.without_rightmost()
    return Healed(track, tuple(healed), used, None)
