"""A roll of the Storytelling System's dice as people see it (issue 13): every
die, rerolls included, on a phone and the dashboard (``_dice.html``).

The engine's :class:`~challenges.rules.storytelling.dice.Roll` is stored as
its ``to_dict`` form (JSON); :func:`roll_view` reads that form back, so a view
never needs anything but the stored row. seeds/003 "Rolling Dice", "Chance Die".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from challenges import words
from challenges.rules.storytelling.dice import DicePool, Roll, RollOutcome


@dataclass(frozen=True)
class DieView:
    """One die as drawn: its ``face`` (1–10, shown "10" for the die's 0),
    ``success``, ``again`` (a 10 that was rolled again), ``reroll`` (this die
    is such a reroll) and ``label`` for screen readers ("10, success, rolled
    again")."""

    face: int
    success: bool
    again: bool
    reroll: bool

    @property
    def label(self) -> str:
        words = [str(self.face), "success" if self.success else "no success"]
        if self.again:
            words.append("rolled again")
        if self.reroll:
            words.append("a reroll")
        return ", ".join(words)


@dataclass(frozen=True)
class RollView:
    """A roll as drawn: ``dice`` (:class:`DieView`, in the order rolled),
    ``successes``, ``outcome`` (the engine's :class:`RollOutcome`),
    ``chance`` (a chance die was rolled), ``pool`` (its dice, 0 or less for a
    chance die) and ``parts`` (the pool's ``(reason, dice)`` pairs when the
    pool was stored, else empty)."""

    dice: tuple[DieView, ...]
    successes: int
    outcome: RollOutcome
    chance: bool
    pool: int
    parts: tuple[tuple[str, int], ...] = ()

    @property
    def summary(self) -> str:
        """One line in the game's words: "3 successes: Success", "Chance
        die: Dramatic failure", "6 successes: Exceptional success"."""
        count = f"{self.successes} success{'es' if self.successes != 1 else ''}"
        if self.outcome is RollOutcome.DRAMATIC_FAILURE:
            count = "Chance die"
        elif self.chance:
            count = f"Chance die, {count}"
        return f"{count}: {self.outcome.label}"

    @property
    def pool_text(self) -> str:
        """The pool as added up: "Dexterity 3 + Stealth 2 − Wound penalty 1 = 4
        dice" (or "… = chance die"); "" when no parts were stored."""
        if not self.parts:
            return ""
        text = ""
        for i, (reason, dice) in enumerate(self.parts):
            sign = "−" if dice < 0 else "+"
            text += (
                f"{reason} {abs(dice)}" if i == 0 and dice >= 0 else f" {sign} {reason} {abs(dice)}"
            )
        total = sum(d for _, d in self.parts)
        return (
            f"{text.strip()} = {words.dice(total)}" if total > 0 else f"{text.strip()} = chance die"
        )


def roll_view(
    roll: Roll | Mapping[str, Any], pool: DicePool | Mapping[str, Any] | None = None
) -> RollView:
    """The :class:`RollView` of ``roll`` (a Roll or its ``to_dict`` form)
    and, if given, the pool it was rolled from (a DicePool or its
    ``to_dict`` form), whose parts are listed. No query."""
    if not isinstance(roll, Roll):
        roll = Roll.from_dict(roll)
    if pool is not None and not isinstance(pool, DicePool):
        pool = DicePool.from_dict(pool)
    rerolled = {d.rerolled_from for d in roll.dice if d.rerolled_from is not None}
    dice = tuple(
        DieView(d.face, d.success, i in rerolled, d.rerolled_from is not None)
        for i, d in enumerate(roll.dice)
    )
    return RollView(
        dice=dice,
        successes=roll.successes,
        outcome=roll.outcome,
        chance=roll.chance,
        pool=roll.pool,
        parts=pool.parts if pool is not None else (),
    )
