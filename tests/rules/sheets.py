"""Small builders shared by the rule-vector tests: characters from the seeds'
examples, and a few steps of a challenge in one call. No Django."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from challenges.rules import (
    Category,
    ChallengeState,
    Combatant,
    HealthLevel,
    Pool,
    Rating,
    Side,
    Throw,
    TraitHolding,
    Transition,
    Weapon,
    open_opposed,
    respond,
    throw,
)

PHYSICAL, SOCIAL, MENTAL = Category.PHYSICAL, Category.SOCIAL, Category.MENTAL
R, P, S = Throw.ROCK, Throw.PAPER, Throw.SCISSORS
CH, DE = Side.CHALLENGER, Side.DEFENDER
WIN, LOSE, TIE = (R, S), (S, R), (R, R)
"""(challenger's throw, defender's throw) for a test the challenger wins, loses, ties."""


def traits(
    category: Category, *names: str, negatives: Sequence[str] = ()
) -> tuple[TraitHolding, ...]:
    """One copy of each name in ``category`` (``"Quick*3"`` holds three), then
    ``negatives`` as Negative Traits of the same category."""
    out: list[TraitHolding] = []
    for raw in names:
        name, _, n = raw.partition("*")
        out.append(TraitHolding(name, category, int(n or 1)))
    out += [TraitHolding(n, category, 1, negative=True) for n in negatives]
    return tuple(out)


def character(
    character_id: int,
    name: str,
    held: Sequence[TraitHolding],
    *,
    health: HealthLevel = HealthLevel.HEALTHY,
    abilities: dict[str, int] | None = None,
    disciplines: dict[str, int] | None = None,
    weapons: Sequence[Weapon] = (),
    pools: dict[Pool, int] | None = None,
    **more: Any,
) -> Combatant:
    """A Combatant with Abilities/Disciplines/pools given as dicts."""
    return Combatant(
        character_id=character_id,
        name=name,
        traits=tuple(held),
        health=health,
        abilities=tuple(Rating(n, r) for n, r in (abilities or {}).items()),
        disciplines=tuple(Rating(n, r) for n, r in (disciplines or {}).items()),
        weapons=tuple(weapons),
        pools=tuple((pools or {}).items()),
        **more,
    )


def opposed(
    ruleset: str,
    challenger: Combatant,
    defender: Combatant,
    category: Category,
    bids: Sequence[str],
    answer: Sequence[str] | None = None,
    *,
    now: float = 100.0,
    **options: Any,
) -> ChallengeState:
    """Open an opposed challenge, and let the defender bid ``answer`` if given."""
    state = open_opposed(
        ruleset=ruleset,
        challenger=challenger,
        defender=defender,
        category=category,
        bids=list(bids),
        now=now,
        **options,
    ).state
    if answer is not None:
        state = respond(state, bids=list(answer), now=now + 1).state
    return state


def played(state: ChallengeState, throws: tuple[Throw, Throw], now: float = 200.0) -> Transition:
    """Both sides throw (challenger first)."""
    state = throw(state, side=CH, throw=throws[0], now=now).state
    return throw(state, side=DE, throw=throws[1], now=now + 1)


def kinds(transition: Transition) -> list[str]:
    """The kinds of a transition's events, in order."""
    return [event.kind for event in transition.events]
