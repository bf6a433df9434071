"""Health clocks and healing: pure functions over stored instants.

Sources: seeds/000 "Health" (Incapacitated, Mortally Wounded), "Battle Scars",
"Healing", "Aggravated Wounds"; seeds/004 "Trait Categories" (``ukm``'s
Incapacitated has no ten minutes out: it only may not initiate). RULES.md
"Health".

Every clock runs on *play time*: epoch seconds minus every second the session
spent in Time out (:class:`Pause`), so a Time out freezes every clock and
Resume lets them run on. A clock is stored as its start (a play instant) and
a few counts (:class:`Clock`); what is due at a given ``now`` is computed from
them (:func:`advance`), never from a timer in memory, so a restarted server
loses nothing and tests pass ``now`` in. Nothing here imports Django.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from challenges.rules.core import HealthLevel
from challenges.rules.options import MetOptions

MORTAL_TRAIT_SECONDS = 600
"""A Mortally Wounded character loses one Physical Trait every ten minutes
without medical aid, and dies ten minutes after her last (seeds/000 "Health")."""

GAROU_HEAL_SECONDS = 300
"""A resting Garou out of Homid form heals one level every five minutes
(seeds/000 "Healing"); aggravated levels need a full night's rest instead."""

LIGHT_SCARS = 3
DEEP_SCARS = 2
"""The first three battle scars are light, the next two deep, then permanent
injuries follow (seeds/000 "Battle Scars")."""

_MOST_EFFECTS = 1000  # a guard: no clock can have more effects than this at once


class Form(StrEnum):
    """A Garou's form. Only Homid stops her healing (seeds/000 "Healing")."""

    HOMID = "homid"
    GLABRO = "glabro"
    CRINOS = "crinos"
    HISPO = "hispo"
    LUPUS = "lupus"


class EffectKind(StrEnum):
    """What a clock does when it runs out."""

    AWAKE = "awake"  # Incapacitated: the ten minutes out of play are over
    TRAIT_LOST = "trait_lost"  # Mortally Wounded: one Physical Trait lost
    DIED = "died"  # Mortally Wounded: ten minutes after the last Physical Trait
    HEALED = "healed"  # a resting Garou heals one level


class Scar(StrEnum):
    """A battle scar's kind (seeds/000 "Battle Scars")."""

    LIGHT = "light"
    DEEP = "deep"
    PERMANENT = "permanent"


@dataclass(frozen=True)
class Injury:
    """A permanent injury (the sixth battle scar on): its name, what it does,
    and the Negative Traits it may add (one is chosen; empty: none)."""

    name: str
    effect: str
    negative: tuple[str, ...] = ()
    category: str = "physical"


PERMANENT_INJURIES: tuple[Injury, ...] = (
    Injury("Improper Bone Setting", "a limb set improperly", ("Lame",)),
    Injury("Skull Head", "part of the skull can still be seen", ("Hideous",), "social"),
    Injury("Broken Jaw", "trouble speaking; roleplay it"),
    Injury("Missing Eye", "risk twice as many Traits in perception or range challenges"),
    Injury("Collapsed Lung", "trouble breathing; wheeze a lot", ("Decrepit", "Lethargic")),
    Injury("Missing Fingers", "claws do aggravated damage only for one more Trait", ("Clumsy",)),
    Injury("Severe Damage", "a lost limb, spine or brain damage: the narrator decides"),
)
"""seeds/000 "Battle Scars": the permanent injuries a player or narrator chooses from."""


@dataclass(frozen=True)
class Pause:
    """A session's Time out so far: ``total`` seconds of finished Time outs and,
    during one, ``since`` (epoch seconds it began; None when play runs)."""

    total: float = 0.0
    since: float | None = None

    def paused(self, now: float) -> float:
        """Seconds spent in Time out up to ``now`` (epoch seconds)."""
        running = max(0.0, now - self.since) if self.since is not None else 0.0
        return self.total + running

    def play(self, now: float) -> float:
        """The play instant at ``now``: epoch seconds minus all Time out so far.
        Constant during a Time out, so every clock stands still."""
        return now - self.paused(now)

    def begin(self, now: float) -> Pause:
        """Time out called at ``now`` (no change if one is running)."""
        return self if self.since is not None else Pause(self.total, now)

    def end(self, now: float) -> Pause:
        """Resume at ``now``: the Time out's seconds join ``total``."""
        return Pause(self.paused(now), None) if self.since is not None else self

    def remaining(self, play_at: float, now: float) -> float:
        """Seconds of play from ``now`` until play instant ``play_at`` (0 when
        past); a Time out freezes it."""
        return max(0.0, play_at - self.play(now))


@dataclass(frozen=True)
class Clock:
    """One character's clocks at a session.

    ``health``: her level tonight; ``start``: the play instant she reached it
    (seconds); ``physical``: Physical Trait copies she still holds; ``lost``:
    Physical Traits the Mortally Wounded clock took since ``start``; ``aid``:
    medical aid given (that clock stopped); ``awake``: Incapacitated, her time
    out of play is over; ``garou``, ``form`` and ``rest_start`` (the play instant
    she began resting still, None: not resting) for healing; ``aggravated``:
    how many of her wound levels are aggravated (they heal only by a night's rest).
    """

    health: HealthLevel
    start: float
    physical: int = 0
    lost: int = 0
    aid: bool = False
    awake: bool = False
    garou: bool = False
    form: Form | None = None
    rest_start: float | None = None
    aggravated: int = 0

    @property
    def heals(self) -> bool:
        """True while her healing clock runs: a resting Garou out of Homid form
        with a level that is not aggravated (seeds/000 "Healing")."""
        return (
            self.garou
            and self.form not in (None, Form.HOMID)
            and self.rest_start is not None
            and HealthLevel.HEALTHY < self.health < HealthLevel.DEAD
            and self.health > self.aggravated
        )


@dataclass(frozen=True)
class Effect:
    """A clock running out: ``kind``, the play instant ``at`` (seconds) and her
    health level after it."""

    kind: EffectKind
    at: float
    health: HealthLevel


def next_effect(clock: Clock, options: MetOptions) -> Effect | None:
    """The next thing ``clock`` will do if nothing else changes, or None (no
    clock runs: healthy, dead, aid given, awake, or ``ukm``'s Incapacitated).
    A heal due at the same instant as a loss comes first.

    Incapacitated: awake ``options.incapacitated_minutes`` after ``start``
    (0: no such clock). Mortally Wounded without aid: the k-th Physical Trait
    lost at ``start + 600·k``; with none left at that mark, dead. A healing
    Garou: one level ``300`` s after the later of ``start`` and ``rest_start``."""
    if clock.health >= HealthLevel.DEAD:
        return None
    found: list[Effect] = []
    if clock.heals:
        assert clock.rest_start is not None
        at = max(clock.start, clock.rest_start) + GAROU_HEAL_SECONDS
        found.append(Effect(EffectKind.HEALED, at, HealthLevel(clock.health - 1)))
    minutes = options.incapacitated_minutes
    if clock.health == HealthLevel.INCAPACITATED and minutes > 0 and not clock.awake:
        found.append(Effect(EffectKind.AWAKE, clock.start + minutes * 60, clock.health))
    if clock.health == HealthLevel.MORTALLY_WOUNDED and not clock.aid:
        at = clock.start + MORTAL_TRAIT_SECONDS * (clock.lost + 1)
        if clock.physical > 0:
            found.append(Effect(EffectKind.TRAIT_LOST, at, clock.health))
        else:
            found.append(Effect(EffectKind.DIED, at, HealthLevel.DEAD))
    return min(found, key=lambda e: (e.at, e.kind is not EffectKind.HEALED), default=None)


def apply(clock: Clock, effect: Effect) -> Clock:
    """``clock`` after ``effect``: a heal starts her new level at ``effect.at``
    (aid and awake reset, Traits lost to the clock count from zero again)."""
    if effect.kind is EffectKind.HEALED:
        return replace(clock, health=effect.health, start=effect.at, lost=0, aid=False, awake=False)
    if effect.kind is EffectKind.TRAIT_LOST:
        return replace(clock, lost=clock.lost + 1, physical=max(0, clock.physical - 1))
    if effect.kind is EffectKind.DIED:
        return replace(clock, health=HealthLevel.DEAD)
    return replace(clock, awake=True)


def advance(clock: Clock, play_now: float, options: MetOptions) -> tuple[Clock, tuple[Effect, ...]]:
    """Every effect due by play instant ``play_now``, in order, and the clock
    after them: ``(clock, effects)``; ``effects`` empty when nothing is due.
    Advancing again to the same instant gives nothing more (idempotent)."""
    effects: list[Effect] = []
    for _ in range(_MOST_EFFECTS):
        effect = next_effect(clock, options)
        if effect is None or effect.at > play_now:
            break
        clock = apply(clock, effect)
        effects.append(effect)
    return clock, tuple(effects)


def wounded(clock: Clock, health: HealthLevel, play_now: float) -> Clock:
    """Her level changed to ``health`` at ``play_now`` (a wound, a narrator's
    heal): the new level's clocks start now; rest and aggravated levels stay
    (aggravated capped at her wounds)."""
    return replace(
        clock,
        health=health,
        start=play_now,
        lost=0,
        aid=False,
        awake=False,
        aggravated=min(clock.aggravated, int(health)),
    )


def battle_scar(number: int) -> Scar:
    """The kind of her ``number``-th battle scar (1 = the first): light for the
    first three, deep for the next two, permanent from the sixth on
    (seeds/000 "Battle Scars"). ValueError below 1."""
    if number < 1:
        raise ValueError("battle scars count from 1")
    if number <= LIGHT_SCARS:
        return Scar.LIGHT
    if number <= LIGHT_SCARS + DEEP_SCARS:
        return Scar.DEEP
    return Scar.PERMANENT


def night_rest(health: HealthLevel, aggravated: int) -> tuple[HealthLevel, int]:
    """A full night's rest: every wound that is not aggravated heals and one
    aggravated level heals (seeds/000 "Aggravated Wounds"). Returns
    ``(health, aggravated)``; the dead stay dead."""
    if health >= HealthLevel.DEAD:
        return health, 0
    left = max(0, min(aggravated, int(health)) - 1)
    return HealthLevel(left), left
