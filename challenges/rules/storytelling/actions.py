"""Contested and extended actions of the Storytelling System (seeds/003
"Actions").

- :func:`contested_action`: both sides roll, the most successes wins; a tie
  follows ``options.contested_tie`` (the seed is silent).
- :class:`ExtendedAction`: successes accumulate over rolls, each roll a fixed
  interval of time, toward a target number, within a budget of rolls or
  seconds; :func:`start_extended` then :func:`extended_roll` for each roll,
  or :func:`abandon_extended`. Each returns the new state and its events;
  a refused move raises RulesError and changes nothing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, NamedTuple

from challenges.rules.core import Event, RulesError, Side
from challenges.rules.storytelling.dice import DicePool, DiceSource, Roll, roll
from challenges.rules.storytelling.options import (
    STORYTELLING,
    ContestedTie,
    ExtendedDramatic,
    StorytellingOptions,
)

SCHEMA = 1
"""Version of :meth:`ExtendedAction.to_dict`'s layout (key ``"schema"``)."""


@dataclass(frozen=True)
class Contest:
    """A contested action's result. ``rolls``: one (challenger's roll,
    defender's roll) pair per round of rolling, oldest first (more than one
    only under ``roll_again``). ``winner``: the side with more successes in
    the last pair, or None: a tie, the status quo holds (the defender's
    side keeps things as they are). Core's ``Side.CHALLENGER`` is the side
    that acts, ``Side.DEFENDER`` the side that resists. seeds/003 "Actions"."""

    rolls: tuple[tuple[Roll, Roll], ...]
    winner: Side | None

    @property
    def tie(self) -> bool:
        """Neither side won: the status quo holds."""
        return self.winner is None

    def to_dict(self) -> dict[str, Any]:
        """{"rolls": [[challenger roll, defender roll], ...], "winner": value or None}."""
        return {
            "rolls": [[a.to_dict(), b.to_dict()] for a, b in self.rolls],
            "winner": None if self.winner is None else self.winner.value,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Contest:
        """Inverse of :meth:`to_dict`."""
        winner = d["winner"]
        return cls(
            tuple((Roll.from_dict(a), Roll.from_dict(b)) for a, b in d["rolls"]),
            None if winner is None else Side(winner),
        )


def contest_winner(challenger: Roll, defender: Roll) -> Side | None:
    """The side whose roll has more successes, None on equal successes
    (seeds/003 "Actions": "the person with the most successes wins")."""
    if challenger.successes == defender.successes:
        return None
    return Side.CHALLENGER if challenger.successes > defender.successes else Side.DEFENDER


def contested_action(
    *,
    challenger: int | DicePool,
    defender: int | DicePool,
    dice: DiceSource,
    options: StorytellingOptions = STORYTELLING,
) -> Contest:
    """Both sides roll their pools with ``dice`` (challenger first); the most
    successes wins. Equal successes: under ``status_quo`` (default) neither
    wins; under ``roll_again`` both roll again, up to
    ``options.most_contest_rolls`` times, then the status quo holds.
    seeds/003 "Actions" (silent on ties)."""
    rolls: list[tuple[Roll, Roll]] = []
    for _ in range(options.most_contest_rolls):
        pair = (roll(challenger, dice), roll(defender, dice))
        rolls.append(pair)
        winner = contest_winner(*pair)
        if winner is not None or options.contested_tie is ContestedTie.STATUS_QUO:
            return Contest(tuple(rolls), winner)
    return Contest(tuple(rolls), None)


class ExtendedEnd(StrEnum):
    """Why an extended action ended (None while it goes on).

    SUCCEEDED: the successes reached the target. OUT_OF_TIME: the budget of
    rolls or seconds is spent first. DRAMATIC_FAILURE: a chance die showed a
    1 (``options.extended_dramatic`` ``ends``). ABANDONED: the player or the
    narrator stopped it."""

    SUCCEEDED = "succeeded"
    OUT_OF_TIME = "out_of_time"
    DRAMATIC_FAILURE = "dramatic_failure"
    ABANDONED = "abandoned"


@dataclass(frozen=True)
class ExtendedAction:
    """One extended action (seeds/003 "Actions": "every roll of the dice
    represents a fixed amount of time (usually 10 minutes) ... You accumulate
    successes from roll to roll until you get a certain number ... or you
    run out of time").

    ``target``: successes needed (≥ 1). ``interval_seconds``: the time one
    roll stands for. ``most_rolls`` / ``budget_seconds``: the time allowed, as
    a number of rolls and/or seconds (None: no limit of that kind; both None:
    until it succeeds or is abandoned). ``rolls``: every roll so far, oldest
    first. ``ended``: why it ended, None while it goes on. ``options``: the
    rule options it was started with (a change never alters one in flight).
    """

    target: int
    interval_seconds: float
    most_rolls: int | None = None
    budget_seconds: float | None = None
    rolls: tuple[Roll, ...] = ()
    ended: ExtendedEnd | None = None
    reason: str = ""
    options: StorytellingOptions = STORYTELLING

    @property
    def successes(self) -> int:
        """Successes gathered so far (a dramatic failure adds none)."""
        return sum(r.successes for r in self.rolls)

    @property
    def rolls_made(self) -> int:
        """Rolls made so far."""
        return len(self.rolls)

    @property
    def elapsed_seconds(self) -> float:
        """Time the rolls so far stand for: rolls × interval."""
        return self.rolls_made * self.interval_seconds

    @property
    def rolls_left(self) -> int | None:
        """Rolls the budget still allows (None: no limit), 0 once it has ended."""
        if self.ended is not None:
            return 0
        limits = []
        if self.most_rolls is not None:
            limits.append(self.most_rolls)
        if self.budget_seconds is not None:
            limits.append(math.floor(self.budget_seconds / self.interval_seconds + 1e-9))
        return None if not limits else max(0, min(limits) - self.rolls_made)

    @property
    def time_left_seconds(self) -> float | None:
        """The time the rolls still allowed stand for: :attr:`rolls_left` ×
        interval, in seconds (None: no limit). A budget of 55 minutes at 10
        minutes a roll allows five rolls: 50 minutes."""
        left = self.rolls_left
        return None if left is None else left * self.interval_seconds

    @property
    def succeeded(self) -> bool:
        """It ended with the target reached."""
        return self.ended is ExtendedEnd.SUCCEEDED

    @property
    def summary(self) -> str:
        """One sentence a player or narrator can read, e.g. "4 of 10
        successes after 3 rolls (30 minutes); 3 rolls left." or "Out of time:
        7 of 10 successes after 6 rolls (1 hour)."""
        done = (
            f"{self.successes} of {self.target} successes after {self.rolls_made} "
            f"roll{'s' if self.rolls_made != 1 else ''} ({_duration(self.elapsed_seconds)})"
        )
        if self.ended is None:
            left = self.rolls_left
            more = (
                "no time limit" if left is None else f"{left} roll{'s' if left != 1 else ''} left"
            )
            return f"{done}; {more}."
        why = {
            ExtendedEnd.SUCCEEDED: "Succeeded",
            ExtendedEnd.OUT_OF_TIME: "Out of time",
            ExtendedEnd.DRAMATIC_FAILURE: "Ended by a dramatic failure",
            ExtendedEnd.ABANDONED: "Abandoned",
        }[self.ended]
        return f"{why}: {done}." + (f" {self.reason}" if self.reason else "")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict (``"schema"``, rolls as :meth:`Roll.to_dict`)."""
        return {
            "schema": SCHEMA,
            "target": self.target,
            "interval_seconds": self.interval_seconds,
            "most_rolls": self.most_rolls,
            "budget_seconds": self.budget_seconds,
            "rolls": [r.to_dict() for r in self.rolls],
            "ended": None if self.ended is None else self.ended.value,
            "reason": self.reason,
            "options": self.options.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ExtendedAction:
        """Inverse of :meth:`to_dict`. ValueError for an unknown schema."""
        if d.get("schema", SCHEMA) != SCHEMA:
            raise ValueError(f"Unknown ExtendedAction schema {d.get('schema')!r}")
        most, budget, ended = d["most_rolls"], d["budget_seconds"], d["ended"]
        return cls(
            target=int(d["target"]),
            interval_seconds=float(d["interval_seconds"]),
            most_rolls=None if most is None else int(most),
            budget_seconds=None if budget is None else float(budget),
            rolls=tuple(Roll.from_dict(r) for r in d["rolls"]),
            ended=None if ended is None else ExtendedEnd(ended),
            reason=str(d["reason"]),
            options=StorytellingOptions.from_dict(d["options"]),
        )


def _duration(seconds: float) -> str:
    minutes = round(seconds / 60)
    if minutes < 60 or minutes % 60:
        return f"{minutes} minute{'s' if minutes != 1 else ''}"
    hours = minutes // 60
    return f"{hours} hour{'s' if hours != 1 else ''}"


class ExtendedTransition(NamedTuple):
    """What an extended action's move produces: the new state and its events."""

    state: ExtendedAction
    events: tuple[Event, ...]


def start_extended(
    *,
    target: int,
    interval_seconds: float | None = None,
    most_rolls: int | None = None,
    budget_seconds: float | None = None,
    options: StorytellingOptions = STORYTELLING,
) -> ExtendedTransition:
    """Begin an extended action needing ``target`` successes, each roll
    standing for ``interval_seconds`` (None: ``options.extended_interval_seconds``,
    600), within ``most_rolls`` rolls and/or ``budget_seconds``. Event
    "extended_started". Raises RulesError for a target below 1, an interval
    not above 0, a budget below one roll. seeds/003 "Actions"."""
    interval = options.extended_interval_seconds if interval_seconds is None else interval_seconds
    if target < 1:
        raise RulesError("An extended action needs a target of at least one success.")
    if interval <= 0:
        raise RulesError("Each roll of an extended action stands for some time.")
    if most_rolls is not None and most_rolls < 1:
        raise RulesError("An extended action allows at least one roll.")
    if budget_seconds is not None and budget_seconds < interval:
        raise RulesError("The time allowed is shorter than one roll.")
    state = ExtendedAction(target, float(interval), most_rolls, budget_seconds, options=options)
    data: dict[str, Any] = {"target": target, "interval_seconds": state.interval_seconds}
    data |= {"most_rolls": most_rolls, "budget_seconds": budget_seconds}
    return ExtendedTransition(state, (Event("extended_started", data),))


def extended_roll(
    state: ExtendedAction, *, pool: int | DicePool, dice: DiceSource
) -> ExtendedTransition:
    """The next roll of ``state`` with this roll's ``pool`` (it may differ
    from the last: a new wound penalty, a Willpower point). Its successes are
    added; the action ends SUCCEEDED when they reach the target, OUT_OF_TIME
    when the budget is spent first, DRAMATIC_FAILURE on a chance die's 1
    (``options.extended_dramatic`` ``ends``; ``no_successes``: it goes on).
    Events "extended_rolled" (the roll) and, at the end, "extended_ended".
    Raises RulesError once it has ended. seeds/003 "Actions", "Chance Die"."""
    if state.ended is not None:
        raise RulesError(f"This extended action is over. {state.summary}")
    result = roll(pool, dice)
    new = replace(state, rolls=(*state.rolls, result))
    events = [Event("extended_rolled", {"roll": result.to_dict(), "successes": new.successes})]
    ended: ExtendedEnd | None = None
    if result.dramatic_failure and state.options.extended_dramatic is ExtendedDramatic.ENDS:
        ended = ExtendedEnd.DRAMATIC_FAILURE
    elif new.successes >= new.target:
        ended = ExtendedEnd.SUCCEEDED
    elif new.rolls_left == 0:
        ended = ExtendedEnd.OUT_OF_TIME
    if ended is not None:
        new = replace(new, ended=ended)
        events.append(Event("extended_ended", {"ended": ended.value, "summary": new.summary}))
    return ExtendedTransition(new, tuple(events))


def abandon_extended(state: ExtendedAction, *, reason: str = "") -> ExtendedTransition:
    """The player or narrator stops ``state`` before it ends (``reason``:
    free text, kept). Event "extended_ended". Raises RulesError once it has
    ended."""
    if state.ended is not None:
        raise RulesError(f"This extended action is over. {state.summary}")
    new = replace(state, ended=ExtendedEnd.ABANDONED, reason=reason.strip()[:200])
    data = {"ended": ExtendedEnd.ABANDONED.value, "summary": new.summary}
    return ExtendedTransition(new, (Event("extended_ended", data),))
