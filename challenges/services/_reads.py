"""A move's reads of its characters, in plain SQL: presence, Traits held,
copies at risk in open challenges (:func:`open_bids`), and the rules engine's
``Combatant`` built from them (:func:`combatants`, :func:`_refreshed`)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

from challenges.rules import Category, ChallengeState, Combatant, HealthLevel, TraitHolding
from challenges.services._core import (
    _CHALLENGE,
    _OPEN_STAGES,
    _PRESENCE,
    _TRAIT,
    _TRAIT_LOSS,
    _marks,
    _rows,
)
from characters.models import Character, GameSession


def _presence_health(session_id: int, ids: Sequence[int]) -> dict[int, HealthLevel]:
    """Health level tonight of each of ``ids`` present at the session (one query);
    a character not present has no key."""
    return {
        character_id: HealthLevel(level)
        for character_id, level in _rows(
            f"SELECT character_id, health FROM {_PRESENCE} "
            f"WHERE session_id = %s AND character_id IN ({_marks(ids)})",
            [session_id, *ids],
        )
    }


def _presence_seats(session_id: int, ids: Sequence[int]) -> dict[int, tuple[HealthLevel, str]]:
    """``(health level tonight, Presence.Status value)`` of each of ``ids`` with a
    presence at the session (one query); a character never seated has no key."""
    return {
        character_id: (HealthLevel(level), status)
        for character_id, level, status in _rows(
            f"SELECT character_id, health, status FROM {_PRESENCE} "
            f"WHERE session_id = %s AND character_id IN ({_marks(ids)})",
            [session_id, *ids],
        )
    }


RiskKey = int | tuple[str, str]
"""Which Trait a bid copy is: its Trait's id, or (name, category value) for a
bid saved without ids. Ids make a renamed Trait keep its copies at risk."""


def _risk_key(trait_id: int | None, name: str, category: str) -> RiskKey:
    return trait_id if trait_id is not None else (name, category)


class OpenBid(NamedTuple):
    """One Trait copy bid in an unresolved challenge: whose, in which challenge
    (``title``: "Helen vs Grady"), which Trait (:data:`RiskKey`) and its name
    as bid."""

    character_id: int
    challenge_id: int
    key: RiskKey
    name: str
    title: str


def open_bids(
    session_id: int, ids: Sequence[int], exclude_challenge_id: int | None = None
) -> list[OpenBid]:
    """Every Trait copy each of the characters ``ids`` has bid in her unresolved
    challenges of the session (but ``exclude_challenge_id``), one
    :class:`OpenBid` per copy, in challenge order (one query)."""
    # By stage: the (session, stage) index then skips the evening's resolved ones.
    sql = (
        f"SELECT id, challenger_id, defender_id, state FROM {_CHALLENGE} "
        f"WHERE session_id = %s AND stage IN ({_marks(_OPEN_STAGES)}) "
        f"AND (challenger_id IN ({_marks(ids)}) OR defender_id IN ({_marks(ids)}))"
    )
    params = [session_id, *_OPEN_STAGES, *ids, *ids]
    if exclude_challenge_id is not None:
        sql += " AND id <> %s"
        params.append(exclude_challenge_id)
    bids = []
    for challenge_id, challenger_id, defender_id, state in _rows(sql + " ORDER BY id", params):
        if isinstance(state, str | bytes):
            state = json.loads(state)
        category = state.get("category") or ""
        defender = state.get("defender") or {"name": "the narrator"}
        title = f"{state['challenger']['name']} vs {defender['name']}"
        for pk in ids:
            if pk == challenger_id:
                side = "challenger"
            elif pk == defender_id:
                side = "defender"
            else:
                continue
            names = state.get(f"{side}_bids", [])
            trait_ids = state.get(f"{side}_bid_ids", [])
            for n, name in enumerate(names):
                trait_id = trait_ids[n] if n < len(trait_ids) else None
                key = _risk_key(trait_id, name, category)
                bids.append(OpenBid(pk, challenge_id, key, name, title))
    return bids


def _at_risk(
    session_id: int, ids: Sequence[int], exclude_challenge_id: int | None
) -> dict[int, Counter[RiskKey]]:
    """Copies of each Trait (:data:`RiskKey`) that each of ``ids`` has bid in
    her unresolved challenges of the session but ``exclude_challenge_id``
    (one query)."""
    at_risk: dict[int, Counter[RiskKey]] = {pk: Counter() for pk in ids}
    for bid in open_bids(session_id, ids, exclude_challenge_id):
        at_risk[bid.character_id][bid.key] += 1
    return at_risk


_CATEGORY_ORDER = {category: n for n, category in enumerate(Category)}


def _sheet_order(holding: TraitHolding) -> tuple[bool, int]:
    """The sheet's order (a stable sort of Traits by name): Traits by category,
    then Negative Traits."""
    return (holding.negative, 0 if holding.negative else _CATEGORY_ORDER[holding.category])


def _holdings(
    session_id: int, ids: Sequence[int], at_risk: dict[int, Counter[RiskKey]]
) -> dict[int, tuple[TraitHolding, ...]]:
    """The Traits each of ``ids`` holds tonight, in the sheet's order, with
    their ids: copies lost at the session excluded, ``at_risk`` copies as given
    (by id, or by name and category for bids saved without ids) (one query;
    Abilities are not read, the engine does not use them)."""
    rows = _rows(
        f"SELECT t.id, t.character_id, t.name, t.category, t.count, t.negative, "
        f"(SELECT COUNT(*) FROM {_TRAIT_LOSS} l WHERE l.trait_id = t.id AND l.session_id = %s) "
        f"FROM {_TRAIT} t WHERE t.character_id IN ({_marks(ids)}) ORDER BY t.name",
        [session_id, *ids],
    )
    holdings: dict[int, list[TraitHolding]] = {pk: [] for pk in ids}
    for trait_id, character_id, name, category, count, negative, lost in rows:
        risk = at_risk[character_id]
        holdings[character_id].append(
            TraitHolding(
                name=name,
                category=Category(category),
                count=count - min(lost, count),
                at_risk=risk[trait_id] + risk[(name, category)],
                negative=bool(negative),
                trait_id=trait_id,
            )
        )
    return {pk: tuple(sorted(traits, key=_sheet_order)) for pk, traits in holdings.items()}


def combatants(
    characters: Sequence[Character],
    session: GameSession,
    *,
    exclude_challenge_id: int | None = None,
    health: dict[int, HealthLevel] | None = None,
) -> dict[int, Combatant]:
    """The rules engine's view of each of ``characters`` tonight, keyed by
    character id: Traits held (copies lost this session excluded, as in
    ``characters.services.character_sheet``, in its order), how many copies are
    bid in her other unresolved challenges (``at_risk``), and her health level
    (``health`` if given, else read from her presence; her sheet's starting
    health if absent). Three queries for any number of characters (two when
    ``health`` is given); Abilities are not read, the engine does not use them."""
    ids = [c.pk for c in characters]
    if not ids:
        return {}
    if health is None:
        health = _presence_health(session.pk, ids)
    traits = _holdings(session.pk, ids, _at_risk(session.pk, ids, exclude_challenge_id))
    return {
        c.pk: Combatant(
            character_id=c.pk,
            name=c.name,
            traits=traits[c.pk],
            health=health.get(c.pk, HealthLevel(c.health)),
        )
        for c in characters
    }


READS_NOTHING = "nothing"
READS_HELD = "held"
READS_ALL = "all"


def _refreshed(
    stored: ChallengeState, session_id: int, challenge_id: int, reads: str
) -> ChallengeState:
    """``stored`` with its combatants refreshed from the database as far as
    the move's transition reads them (``reads``), so a move pays only for
    what the rules engine uses:

    - READS_NOTHING (a throw, a relent, a void: the engine reads only the
      combatants' ids): ``stored`` as is, no query.
    - READS_HELD (a declaration: ``Combatant.count``, held copies): Traits
      held re-read (one query); copies at risk and health as stored.
    - READS_ALL (a bid: free copies, health): as :func:`combatants`, three
      queries; a character no longer present keeps her stored health.

    Names are the stored ones (the engine never reads them). The stored
    combatants are thus those of the last move that read them. Raises
    ValueError for another ``reads``."""
    if reads == READS_NOTHING:
        return stored
    sides = [c for c in (stored.challenger, stored.defender) if c is not None]
    ids = [c.character_id for c in sides]
    if reads == READS_ALL:
        health = _presence_health(session_id, ids)
        at_risk = _at_risk(session_id, ids, challenge_id)
    elif reads == READS_HELD:
        health = {}
        at_risk = {
            c.character_id: Counter(
                {_risk_key(t.trait_id, t.name, t.category.value): t.at_risk for t in c.traits}
            )
            for c in sides
        }
    else:
        raise ValueError(f"reads must be one of nothing, held, all: {reads!r}")
    traits = _holdings(session_id, ids, at_risk)
    fresh = [
        Combatant(
            character_id=c.character_id,
            name=c.name,
            traits=traits[c.character_id],
            health=health.get(c.character_id, c.health),
        )
        for c in sides
    ]
    return stored.with_combatants(fresh[0], fresh[1] if len(fresh) > 1 else None)


def combatant(
    character: Character, session: GameSession, *, exclude_challenge_id: int | None = None
) -> Combatant:
    """:func:`combatants` for one character."""
    return combatants([character], session, exclude_challenge_id=exclude_challenge_id)[character.pk]
