"""A move's reads of its characters, in plain SQL: presence, Traits held,
copies at risk in open challenges (:func:`open_bids`), and the rules engine's
``Combatant`` built from them (:func:`combatants`, :func:`_refreshed`)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, NamedTuple

from django.db import connection
from django.utils.dateparse import parse_datetime

from challenges.models import POOLS_KIND, MobScene
from challenges.rules import (
    Category,
    ChallengeState,
    Combatant,
    HealthLevel,
    Immunity,
    MobStage,
    Pool,
    Rating,
    TraitHolding,
    Weapon,
)
from challenges.services._core import (
    _CHALLENGE,
    _OPEN_STAGES,
    _PRESENCE,
    _TRAIT,
    _TRAIT_LOSS,
    ActionRefused,
    _marks,
    _now,
    _rows,
)
from characters.models import Ability, Character, Discipline, GameSession, Presence
from characters.models import Immunity as ImmunityRow
from characters.models import Weapon as WeaponRow

_CHARACTER = Character._meta.db_table
_ABILITY = Ability._meta.db_table
_DISCIPLINE = Discipline._meta.db_table
_WEAPON = WeaponRow._meta.db_table
_IMMUNITY = ImmunityRow._meta.db_table
_MOB = MobScene._meta.db_table
_MOB_PEOPLE = MobScene.participants.through._meta.db_table
_POOLS = tuple(Pool(name) for name in Character.POOLS)


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


def _ensure_here(session, characters: Sequence) -> None:
    """ActionRefused unless each of ``characters`` is of ``session``'s
    chronicle, present tonight and not on a break (one query; none for no
    one): a mob scene's or a combat's characters."""
    ids = [c.pk for c in characters]
    seated = _presence_seats(session.pk, ids) if ids else {}
    for character in characters:
        if character.chronicle_id != session.chronicle_id:
            raise ActionRefused("That character is not in this chronicle.")
        status = seated.get(character.pk, (None, Presence.Status.ABSENT))[1]
        if status == Presence.Status.ABSENT:
            raise ActionRefused(f"{character.name} is not present tonight.")
        if status == Presence.Status.BREAK:
            raise ActionRefused(f"{character.name} is on a break (out of character).")


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
        f"SELECT id, challenger_id, defender_id, state, 0 FROM {_CHALLENGE} "
        f"WHERE session_id = %s AND stage IN ({_marks(_OPEN_STAGES)}) "
        f"AND (challenger_id IN ({_marks(ids)}) OR defender_id IN ({_marks(ids)})) "
        "AND kind <> %s"  # issue 12: test pools bid no Trait
    )
    params = [session_id, *_OPEN_STAGES, *ids, *ids, POOLS_KIND]
    if exclude_challenge_id is not None:
        sql += " AND id <> %s"
        params.append(exclude_challenge_id)
    # Issue 11: bids of a mob scene's current target not (yet) in its test's challenge.
    sql += (
        f" UNION ALL SELECT COALESCE(challenge_id, 0), 0, 0, state, 1 FROM {_MOB} "
        f"WHERE session_id = %s AND stage IN (%s, %s) AND id IN "
        f"(SELECT mobscene_id FROM {_MOB_PEOPLE} WHERE character_id IN ({_marks(ids)}))"
    )
    params += [session_id, MobStage.BIDS.value, MobStage.TEST.value, *ids]
    bids = []
    for challenge_id, challenger_id, defender_id, state, mob in _rows(
        sql + " ORDER BY 5, 1", params
    ):
        if isinstance(state, str | bytes):
            state = json.loads(state)
        if mob:
            bids += _mob_bids(state, ids, challenge_id)
            continue
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


def _mob_bids(state: dict, ids: Sequence[int], challenge_id: int) -> list[OpenBid]:
    """The copies ``ids`` bid on a mob scene's current target (its
    ``MobScene.to_dict()`` ``state``) that its test's challenge does not hold:
    every bid before the test opens, then the attackers' but the leader's."""
    target = state["targets"][state["current"]]
    category = state["category"]
    opened = target["test"] is not None
    out = []
    for character_id, name, trait_id, *_ in target["bids"]:
        if character_id in ids and not (opened and character_id == target["leader"]):
            out.append(
                OpenBid(
                    character_id,
                    challenge_id,
                    _risk_key(trait_id, name, category),
                    name,
                    "Mob scene",
                )
            )
    if not opened and target["defender"] in ids:
        for name, trait_id in target["defender_bids"]:
            key = _risk_key(trait_id, name, category)
            out.append(OpenBid(target["defender"], challenge_id, key, name, "Mob scene"))
    return out


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
        f"SELECT t.id, t.character_id, t.name, t.category, t.count, t.negative, t.stamina, "
        f"(SELECT COUNT(*) FROM {_TRAIT_LOSS} l WHERE l.trait_id = t.id AND l.session_id = %s) "
        f"FROM {_TRAIT} t WHERE t.character_id IN ({_marks(ids)}) ORDER BY t.name",
        [session_id, *ids],
    )
    holdings: dict[int, list[TraitHolding]] = {pk: [] for pk in ids}
    for trait_id, character_id, name, category, count, negative, stamina, lost in rows:
        risk = at_risk[character_id]
        holdings[character_id].append(
            TraitHolding(
                name=name,
                category=Category(category),
                count=count - min(lost, count),
                at_risk=risk[trait_id] + risk[(name, category)],
                negative=bool(negative),
                trait_id=trait_id,
                stamina=bool(stamina) and not negative,
            )
        )
    return {pk: tuple(sorted(traits, key=_sheet_order)) for pk, traits in holdings.items()}


def _when(value: Any) -> datetime | None:
    """A datetime column read in plain SQL, aware (UTC): SQLite returns text."""
    moment = value if value is None or isinstance(value, datetime) else parse_datetime(str(value))
    if moment is not None and moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment


class PoolsTonight(NamedTuple):
    """What :func:`_pools` reads of one character: ``pools`` left tonight
    ({Pool: rating minus spent at the session}, pools she has none of left
    out), ``blood_traits`` still active at ``now``, her ``blood_limit``
    (Blood per spending, None: the preset's) and her immunities running at
    ``now``."""

    pools: dict[Pool, int]
    blood_traits: int
    blood_limit: int | None
    immunities: tuple[Immunity, ...]


def _pools(session_id: int, ids: Sequence[int], now: float) -> dict[int, PoolsTonight]:
    """Pools left tonight, active Blood Traits, generation limit and running
    immunities of each of ``ids`` at the session (one query: her sheet's pool
    ratings joined with her presence's spending, and her Immunity rows of the
    session still running at ``now``, epoch seconds). A character without a
    presence has spent nothing."""
    # As the database stores it (SQLite: UTC text), so that it compares right.
    moment = connection.ops.adapt_datetimefield_value(datetime.fromtimestamp(now, tz=UTC))
    spent = ", ".join(f"COALESCE(p.{pool}_spent, 0)" for pool in Character.POOLS)
    rating = ", ".join(f"c.{pool}" for pool in Character.POOLS)
    sql = (
        f"SELECT 'p', c.id, {rating}, {spent}, c.blood_per_turn, "
        f"COALESCE(p.blood_traits, 0), '', p.blood_traits_until "
        f"FROM {_CHARACTER} c LEFT JOIN {_PRESENCE} p "
        f"ON p.character_id = c.id AND p.session_id = %s WHERE c.id IN ({_marks(ids)}) "
        f"UNION ALL SELECT 'i', i.character_id, i.attacker_id, 0, 0, 0, 0, 0, 0, 0, NULL, 0, "
        f"i.power, i.until FROM {_IMMUNITY} i "
        f"WHERE i.session_id = %s AND i.character_id IN ({_marks(ids)}) AND i.until > %s"
    )
    found: dict[int, PoolsTonight] = {}
    immunities: dict[int, list[Immunity]] = {pk: [] for pk in ids}
    for row in _rows(sql, [session_id, *ids, session_id, *ids, moment]):
        kind, character_id = row[0], row[1]
        until = _when(row[13])
        if kind == "i":
            if until is not None:
                immunities[character_id].append(Immunity(row[2], row[12], until.timestamp()))
            continue
        ratings, used = row[2:6], row[6:10]
        pools = {pool: max(0, n - u) for pool, n, u in zip(_POOLS, ratings, used, strict=True) if n}
        active = row[11] if until is not None and until.timestamp() > now else 0
        found[character_id] = PoolsTonight(pools, active, row[10], ())
    return {
        pk: tonight._replace(immunities=tuple(sorted(immunities[pk], key=lambda i: i.until)))
        for pk, tonight in found.items()
    }


class SheetExtras(NamedTuple):
    """What :func:`_sheet_extras` reads of one character: her Abilities,
    Disciplines and weapons, in name order."""

    abilities: tuple[Rating, ...]
    disciplines: tuple[Rating, ...]
    weapons: tuple[Weapon, ...]


def _sheet_extras(ids: Sequence[int]) -> dict[int, SheetExtras]:
    """Abilities, Disciplines and weapons of each of ``ids`` (one query),
    which retests and ties read (seeds/004 "Challenge Re-Tests", "Weapons")."""
    marks = _marks(ids)
    sql = (
        f"SELECT 'a', character_id, name, rating, '', %s FROM {_ABILITY} "
        f"WHERE character_id IN ({marks}) "
        f"UNION ALL SELECT 'd', character_id, name, rating, '', %s FROM {_DISCIPLINE} "
        f"WHERE character_id IN ({marks}) "
        f"UNION ALL SELECT 'w', character_id, name, bonus, ability, ranged FROM {_WEAPON} "
        f"WHERE character_id IN ({marks}) ORDER BY 3"
    )
    found: dict[int, dict[str, list]] = {pk: {"a": [], "d": [], "w": []} for pk in ids}
    for kind, character_id, name, n, ability, ranged in _rows(
        sql, [False, *ids, False, *ids, *ids]
    ):
        if kind == "w":
            found[character_id]["w"].append(Weapon(name, n, ability, bool(ranged)))
        else:
            found[character_id][kind].append(Rating(name, n))
    return {
        pk: SheetExtras(tuple(lists["a"]), tuple(lists["d"]), tuple(lists["w"]))
        for pk, lists in found.items()
    }


def combatants(
    characters: Sequence[Character],
    session: GameSession,
    *,
    exclude_challenge_id: int | None = None,
    health: dict[int, HealthLevel] | None = None,
) -> dict[int, Combatant]:
    """The rules engine's view of each of ``characters`` tonight, keyed by
    character id: Traits held (copies lost this session excluded, as in
    ``characters.services.character_sheet``, in its order; Stamina-based ones
    marked), how many copies are bid in her other unresolved challenges
    (``at_risk``), her health level (``health`` if given, else read from her
    presence; her sheet's starting health if absent), her Abilities,
    Disciplines and weapons, her pools left tonight (her sheet's rating less
    what she spent at this session, :class:`PoolsTonight`), her immunities
    still running, her Blood Traits still active and her generation's limit.
    Five queries for any number of characters (four when ``health`` is
    given)."""
    ids = [c.pk for c in characters]
    if not ids:
        return {}
    if health is None:
        health = _presence_health(session.pk, ids)
    traits = _holdings(session.pk, ids, _at_risk(session.pk, ids, exclude_challenge_id))
    extras = _sheet_extras(ids)
    tonight = _pools(session.pk, ids, _now())
    return {
        c.pk: Combatant(
            character_id=c.pk,
            name=c.name,
            traits=traits[c.pk],
            health=health.get(c.pk, HealthLevel(c.health)),
            abilities=extras[c.pk].abilities,
            disciplines=extras[c.pk].disciplines,
            weapons=extras[c.pk].weapons,
            pools=tonight[c.pk].pools if c.pk in tonight else {},
            immunities=tonight[c.pk].immunities if c.pk in tonight else (),
            blood_traits=tonight[c.pk].blood_traits if c.pk in tonight else 0,
            blood_limit=tonight[c.pk].blood_limit if c.pk in tonight else None,
        )
        for c in characters
    }


READS_NOTHING = "nothing"
READS_HELD = "held"
READS_ALL = "all"
READS_POOLS = "pools"


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
    - READS_ALL (a bid: free copies, health): Traits held, copies at risk
      and health as :func:`combatants`, three queries; a character no longer
      present keeps her stored health.
    - READS_POOLS (a move that spends a pool: Willpower, Rage, Blood): pools
      left, immunities still running and Blood Traits still active re-read
      (one query, :func:`_pools`); Traits and health as stored. What this
      challenge already spent (``stored.spent``, written to her presence by
      the moves that spent it) is added back, since the engine subtracts it
      itself (``judge.pool_left``).

    Names, Abilities, Disciplines and weapons are the stored ones (read at
    the open). The stored combatants are thus those of the last move that
    read them. Raises ValueError for another ``reads``."""
    if reads == READS_NOTHING:
        return stored
    sides = [c for c in (stored.challenger, stored.defender) if c is not None]
    ids = [c.character_id for c in sides]
    if reads == READS_POOLS:
        tonight = _pools(session_id, ids, _now())
        here = Counter[tuple[int, Pool]]()
        for character_id, pool, amount in stored.spent:
            here[(character_id, pool)] += amount
        pooled = []
        for c in sides:
            if c.character_id not in tonight:
                pooled.append(c)
                continue
            read = tonight[c.character_id]
            pools = dict(read.pools)
            for (character_id, pool), amount in here.items():
                if character_id == c.character_id:
                    pools[pool] = pools.get(pool, 0) + amount
            pooled.append(
                replace(
                    c,
                    pools=pools,
                    immunities=read.immunities,
                    blood_traits=read.blood_traits,
                    blood_limit=read.blood_limit,
                )
            )
        return stored.with_combatants(pooled[0], pooled[1] if len(pooled) > 1 else None)
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
        raise ValueError(f"reads must be one of nothing, held, pools, all: {reads!r}")
    traits = _holdings(session_id, ids, at_risk)
    fresh = [
        replace(c, traits=traits[c.character_id], health=health.get(c.character_id, c.health))
        for c in sides
    ]
    return stored.with_combatants(fresh[0], fresh[1] if len(fresh) > 1 else None)


def combatant(
    character: Character, session: GameSession, *, exclude_challenge_id: int | None = None
) -> Combatant:
    """:func:`combatants` for one character."""
    return combatants([character], session, exclude_challenge_id=exclude_challenge_id)[character.pk]
