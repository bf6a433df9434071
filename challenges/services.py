"""The only code that writes challenges: permission → rules engine → atomic save
→ broadcast on commit.

Every move is one transaction that (1) claims the client's message id, so a
repeat is "already done" (a unique constraint enforces it), (2) locks the
session against a time out, the challenge row against a concurrent move, and
its characters' rows against a concurrent bid of the same Trait copy, (3)
asks the rules engine for the transition, (4) saves the new state, its test
rows, its events, lost Traits and wounds, and (5) broadcasts ids after commit.
A refused move raises and rolls everything back, message id included.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import NamedTuple

from django.db import IntegrityError, connection, transaction
from django.db.models import Case, F, PositiveSmallIntegerField, Value, When
from django.utils import timezone

from challenges import rules
from challenges.models import Challenge, ClientAction, Event, Test, TraitLoss
from challenges.realtime import (
    CHALLENGE_UPDATED,
    CHARACTER_UPDATED,
    SESSION_CHANGED,
    SESSION_UPDATED,
    broadcast_on_commit,
    character_group,
    chronicle_group,
    narrators_group,
    session_group,
)
from challenges.rows import committed_rows
from challenges.rules import (
    Category,
    ChallengeState,
    Combatant,
    HealthLevel,
    Kind,
    Side,
    Stage,
    TraitHolding,
    Transition,
)
from characters.models import Character, Chronicle, GameSession, Presence, Trait
from characters.services import presence_join

logger = logging.getLogger(__name__)

MAX_BIDS = 5  # Traits in one bid; far above any rule's need, a guard against forged input.
MAX_STAKES = 300  # characters of "what happens on a win"


class ActionRefused(Exception):
    """A move refused for a reason outside the rules: time out, not your
    character, not present, unknown challenge. ``str()`` is for the player."""


class AlreadyDone(Exception):
    """The client's message id was applied before; nothing was changed."""


def _now() -> float:
    return time.time()


def _claim(user, msg_id: str, action: str) -> None:
    """Record the client's message id; run first inside the move's transaction.

    No savepoint of its own: a repeat raises AlreadyDone out of the move's
    ``atomic`` block, which rolls the whole move back (on PostgreSQL the failed
    insert has aborted the transaction, and nothing may run in it afterwards).
    """
    if not msg_id or len(msg_id) > 64:
        raise ActionRefused("This action has no valid id.")
    try:
        ClientAction.objects.create(user=user, msg_id=msg_id, action=action)
    except IntegrityError:
        raise AlreadyDone(msg_id) from None


def _check_session(ended_at, time_out, *, for_play: bool) -> None:
    """ActionRefused if a session that ended at ``ended_at`` (None: open) is
    over, or (``for_play``) in a time out."""
    if ended_at is not None:
        raise ActionRefused("This session is over.")
    if for_play and time_out:
        raise ActionRefused("Time out! A narrator has stopped play; wait for Resume.")


def _share_session(where: str, key: int) -> None:
    """On PostgreSQL, hold the session row FOR SHARE (``where`` picks it, with
    ``key`` as its one parameter): moves run side by side, but a time out (FOR
    UPDATE) waits for moves in flight and later moves see it, so nothing
    resolves after a time out is committed. SQLite serializes writers: no query."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT 1 FROM {GameSession._meta.db_table} WHERE {where} FOR SHARE", [key]
            )


def _lock_session(session_id: int, *, for_play: bool) -> GameSession:
    """Read the session (with its chronicle) inside the current transaction,
    FOR SHARE on PostgreSQL (:func:`_share_session`). Raises
    GameSession.DoesNotExist if there is none, ActionRefused if it is over or
    (``for_play``) in a time out."""
    _share_session("id = %s", session_id)
    session = GameSession.objects.select_related("chronicle").get(pk=session_id)
    _check_session(session.ended_at, session.time_out, for_play=for_play)
    return session


def _lock_challenge(challenge_id: int, *, for_play: bool) -> Challenge:
    """Read the challenge (FOR UPDATE on PostgreSQL) with its session's state
    (FOR SHARE first, see :func:`_share_session`) in one plain query, which
    costs half the queryset's: the challenge has every field, and
    ``session_ended_at``, ``session_time_out``, ``session_chronicle_id`` (its
    ``session`` is not loaded). Raises ActionRefused if there is no such
    challenge, the session is over, or (``for_play``) it is in a time out."""
    _share_session(f"id = (SELECT session_id FROM {_CHALLENGE} WHERE id = %s)", challenge_id)
    lock = " FOR UPDATE OF c" if connection.features.has_select_for_update else ""
    found = list(
        Challenge.objects.raw(
            f"SELECT c.*, s.ended_at AS session_ended_at, s.time_out AS session_time_out, "
            f"s.chronicle_id AS session_chronicle_id FROM {_CHALLENGE} c "
            f"JOIN {GameSession._meta.db_table} s ON s.id = c.session_id WHERE c.id = %s{lock}",
            [challenge_id],
        )
    )
    if not found:
        raise ActionRefused("There is no such challenge.")
    challenge = found[0]
    _check_session(challenge.session_ended_at, challenge.session_time_out, for_play=for_play)
    return challenge


def _lock_characters(*ids: int | None) -> None:
    """Hold the rows of the characters ``ids`` (None: no one, e.g. the narrator's
    side) FOR NO KEY UPDATE, in id order, until the move
    commits. A character's free Trait copies are read from her other open
    challenges (``combatant``), so two moves of one character must not both
    read them before either commits: two answers bidding her last copy at the
    same instant would both stand. Waits, in order, behind the session and
    challenge locks. No-op on SQLite (one writer at a time): no query."""
    if not connection.features.has_select_for_update:
        return
    list(
        Character.objects.select_for_update(no_key=True)
        .filter(pk__in=sorted({pk for pk in ids if pk is not None}))
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def _ensure_player(user, character: Character) -> None:
    if character.player_id is None or character.player_id != user.pk:
        raise ActionRefused("You can only act for your own character.")


def _ensure_narrator(user, chronicle: Chronicle) -> None:
    if not chronicle.is_narrator(user):
        raise ActionRefused("Only this chronicle's narrators can do that.")


# The reads of a move's characters are plain SQL (standard, for SQLite and
# PostgreSQL alike): compiling their querysets cost ten times running them.
_PRESENCE = Presence._meta.db_table
_CHALLENGE = Challenge._meta.db_table
_TRAIT = Trait._meta.db_table
_TRAIT_LOSS = TraitLoss._meta.db_table
_OPEN_STAGES = tuple(stage.value for stage in Stage if stage is not Stage.RESOLVED)


def _rows(sql: str, params: Sequence) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _marks(values: Sequence) -> str:
    """``%s, %s, …``: one placeholder per value."""
    return ", ".join(["%s"] * len(values))


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


def trait_open_bids(trait: Trait) -> list[OpenBid]:
    """The copies of ``trait`` (as saved: its id, or its saved name and
    category for bids saved without ids) bid in unresolved challenges of its
    chronicle's open session, oldest challenge first; [] when no session is
    open. Two or three queries."""
    session = Chronicle(pk=trait.character.chronicle_id).open_session()
    if session is None:
        return []
    keys = {trait.pk, (trait.name, trait.category)}
    return [b for b in open_bids(session.pk, [trait.character_id]) if b.key in keys]


def trait_edit_refusal(trait_id: int, *, count: int = 0, category: str | None = None) -> str:
    """Why the saved Trait ``trait_id`` may not be deleted (``count`` 0), set
    to ``count`` copies or moved to ``category`` now: a sentence naming the
    open challenge it is bid in, or "" if the edit is safe (or there is no
    such Trait). A Trait at risk may be renamed (the challenge keeps the name
    as bid, and the Trait by its id); its copies bid cannot go, nor change
    category, until the challenge is voided or finished."""
    trait = Trait.objects.filter(pk=trait_id).select_related("character").first()
    bids = trait_open_bids(trait) if trait is not None else []
    if not bids:
        return ""
    first = bids[0]
    where = f"the open challenge #{first.challenge_id} ({first.title})"
    if len({b.challenge_id for b in bids}) > 1:
        where = f"{where} and others"
    if count == 0:
        return f"{first.name} is bid in {where}; void or finish it first."
    if category is not None and category != trait.category:
        return f"{first.name} is bid in {where}; its category cannot change until that is over."
    if count < len(bids):
        return (
            f"{len(bids)} copies of {first.name} are bid in {where}; "
            f"keep at least {len(bids)} until that is over."
        )
    return ""


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


# What a move changes on an existing challenge row (the rest is set at open).
_MOVED_FIELDS = ("state", "stage", "stage_since", "outcome", "resolved_at", "version")


def _save(
    challenge: Challenge,
    before: ChallengeState | None,
    transition: Transition,
    *,
    actor,
) -> Challenge:
    """Persist a transition: the challenge row, changed test rows, events, and on
    resolution the lost Traits and wounds. Then broadcast ids after commit."""
    state = transition.state
    challenge.state = state.to_dict()
    challenge.stage = state.stage.value
    challenge.stage_since = datetime.fromtimestamp(state.stage_since, tz=UTC)
    challenge.outcome = state.outcome.value if state.outcome else ""
    newly_resolved = state.stage == Stage.RESOLVED and (
        before is None or before.stage != Stage.RESOLVED
    )
    if newly_resolved:
        challenge.resolved_at = timezone.now()
    if challenge.pk is None:
        challenge.save()
    else:
        # The row is held FOR UPDATE since it was read (one writer at a time on
        # SQLite), so the version read with it is current.
        challenge.version += 1
        challenge.save(update_fields=_MOVED_FIELDS)

    old_tests = before.tests if before else ()
    for number, record in enumerate(state.tests, start=1):
        if number <= len(old_tests) and old_tests[number - 1] == record:
            continue
        fields = {
            "challenger_throw": record.challenger_throw.value if record.challenger_throw else "",
            "defender_throw": record.defender_throw.value if record.defender_throw else "",
            "challenger_declared": record.challenger_declared,
            "defender_declared": record.defender_declared,
            "winner": record.winner.value if record.winner else "",
            "tie": record.tie,
        }
        # A test already in the saved state has its row; a new one has none yet.
        if number > len(old_tests) or not Test.objects.filter(
            challenge_id=challenge.pk, number=number
        ).update(**fields):
            Test.objects.create(challenge=challenge, number=number, **fields)

    Event.objects.bulk_create(
        Event(
            session_id=challenge.session_id,
            challenge=challenge,
            kind=event.kind,
            data=event.data,
            actor=actor if actor and actor.is_authenticated else None,
        )
        for event in transition.events
    )

    touched = {challenge.challenger_id, challenge.defender_id} - {None}
    if newly_resolved:
        _save_losses(challenge, state)
        for character_id in state.wounds:
            _wound(challenge.session_id, character_id)

    groups = [character_group(c) for c in touched] + [narrators_group(challenge.session_id)]
    # The version lets every dashboard of a worker share one rendering of the
    # change, and every connection of this worker this very row.
    version = challenge.version
    transaction.on_commit(lambda: committed_rows.remember(challenge))
    broadcast_on_commit(
        groups,
        CHALLENGE_UPDATED,
        challenge_id=challenge.pk,
        session_id=challenge.session_id,
        version=version,
    )
    if newly_resolved and (state.losses or state.wounds):
        for character_id in touched:
            broadcast_on_commit(
                [narrators_group(challenge.session_id)],
                CHARACTER_UPDATED,
                character_id=character_id,
                session_id=challenge.session_id,
                challenge_id=challenge.pk,
                version=version,
            )
    return challenge


def _save_losses(challenge: Challenge, state: ChallengeState) -> None:
    """One TraitLoss row per lost Trait copy of a resolved ``state``: the Trait
    bid (its id, whatever it is called now; by name and category for a bid
    saved without ids), the losers' Traits in one plain query, the rows in one
    insert. A lost Trait no longer on the sheet (deleted outside the admin's
    and the model's guards) records no row, so that the challenge resolves."""
    if not state.losses:
        return
    losers = sorted({loss.character_id for loss in state.losses})
    trait_ids = {}
    for pk, character_id, name, category in _rows(
        f"SELECT id, character_id, name, category FROM {_TRAIT} "
        f"WHERE negative = %s AND character_id IN ({_marks(losers)})",
        [False, *losers],
    ):
        trait_ids[(character_id, pk)] = trait_ids[(character_id, name, category)] = pk
    rows = []
    for loss in state.losses:
        if loss.trait_id is not None:
            key: tuple = (loss.character_id, loss.trait_id)
        else:
            key = (loss.character_id, loss.trait, loss.category.value)
        if key not in trait_ids:
            logger.warning("challenge #%s: lost Trait %r is not on the sheet", challenge.pk, key)
            continue
        rows.append(
            TraitLoss(
                session_id=challenge.session_id,
                character_id=loss.character_id,
                trait_id=trait_ids[key],
                challenge=challenge,
            )
        )
    TraitLoss.objects.bulk_create(rows)


_WORSE = Case(
    *(When(health=level.value, then=Value(level.worse().value)) for level in HealthLevel),
    default=F("health"),
    output_field=PositiveSmallIntegerField(),
)


def _wound(session_id: int, character_id: int) -> None:
    """One wound: her health tonight one level worse (capped at Dead), in one
    UPDATE that reads and writes the row under its lock. Raises
    Presence.DoesNotExist if she is not present."""
    if not Presence.objects.filter(session_id=session_id, character_id=character_id).update(
        health=_WORSE
    ):
        raise Presence.DoesNotExist(f"Character {character_id} is not present.")


def _parse(enum: type, value: str, message: str):
    try:
        return enum(value)
    except ValueError:
        raise ActionRefused(message) from None


def _clean_bids(bids: Sequence[str] | None) -> list[str]:
    if bids is None:
        return []
    if isinstance(bids, str):
        bids = [bids]
    if len(bids) > MAX_BIDS or not all(isinstance(b, str) and 0 < len(b) <= 100 for b in bids):
        raise ActionRefused("That is not a valid bid.")
    return list(bids)


def challenge_open(
    *,
    session: GameSession,
    challenger: Character,
    defender: Character,
    category: str,
    bids: Sequence[str],
    is_attack: bool = False,
    stakes: str = "",
    user,
    msg_id: str,
) -> Challenge:
    """A player challenges another character present tonight.

    ``bids`` are Trait names of ``category`` ("physical", "social", "mental").
    Raises ActionRefused (not her character, not present, time out), RulesError
    (an illegal bid), AlreadyDone (repeated ``msg_id``). seeds/000 "Challenges".
    """
    _ensure_player(user, challenger)
    category_ = _parse(rules.Category, category, "Choose Physical, Social or Mental.")
    bids = _clean_bids(bids)
    with transaction.atomic():
        _claim(user, msg_id, "challenge.open")
        session = _lock_session(session.pk, for_play=True)
        if challenger.chronicle_id != session.chronicle_id:
            raise ActionRefused("That character is not in this chronicle.")
        _lock_characters(challenger.pk, defender.pk)
        seated = _presence_seats(session.pk, [challenger.pk, defender.pk])
        for character in (challenger, defender):
            if character.pk not in seated or seated[character.pk][1] == Presence.Status.ABSENT:
                raise ActionRefused(f"{character.name} is not present tonight.")
            if seated[character.pk][1] == Presence.Status.BREAK:
                if character is challenger:
                    raise ActionRefused(
                        "You are on a break (out of character): come back before you challenge."
                    )
                raise ActionRefused(
                    f"{character.name} is on a break (out of character): "
                    f"nobody can challenge {character.name} now."
                )
        health = {pk: level for pk, (level, _) in seated.items()}
        fighters = combatants([challenger, defender], session, health=health)
        transition = rules.open_opposed(
            ruleset=session.chronicle.ruleset,
            challenger=fighters[challenger.pk],
            defender=fighters[defender.pk],
            category=category_,
            bids=bids,
            is_attack=bool(is_attack),
            stakes=str(stakes)[:MAX_STAKES],
            now=_now(),
        )
        challenge = Challenge(
            session=session,
            kind=Kind.OPPOSED,
            challenger=challenger,
            defender=defender,
            category=category_.value,
            is_attack=bool(is_attack),
            stakes=transition.state.stakes,
        )
        return _save(challenge, None, transition, actor=user)


def _narrator_open(
    *,
    session: GameSession,
    character: Character,
    kind: Kind,
    user,
    msg_id: str,
    open_: Callable[[Combatant, str], Transition],
    **fields,
) -> Challenge:
    with transaction.atomic():
        _claim(user, msg_id, f"{kind.value}.open")
        session = _lock_session(session.pk, for_play=False)
        _ensure_narrator(user, session.chronicle)
        if character.chronicle_id != session.chronicle_id:
            raise ActionRefused("That character is not in this chronicle.")
        _lock_characters(character.pk)
        presence_join(session=session, character=character)
        transition = open_(combatant(character, session), session.chronicle.ruleset)
        challenge = Challenge(
            session=session,
            kind=kind,
            challenger=character,
            narrator=user,
            stakes=transition.state.stakes,
            **fields,
        )
        return _save(challenge, None, transition, actor=user)


def static_open(
    *,
    session: GameSession,
    character: Character,
    category: str,
    difficulty: int,
    narrator_throw: str | None = None,
    stakes: str = "",
    user,
    msg_id: str,
) -> Challenge:
    """A narrator sets a static challenge for ``character``: ``difficulty`` is a
    Trait count; the narrator's throw is drawn with ``secrets`` unless given.
    The player then bids (or relents) and throws. seeds/000 "Static Challenges".
    """
    category_ = _parse(rules.Category, category, "Choose Physical, Social or Mental.")
    throw = (
        _parse(rules.Throw, narrator_throw, "Throw Rock, Paper or Scissors.")
        if narrator_throw
        else None
    )
    try:
        difficulty = int(difficulty)
    except (TypeError, ValueError):
        raise ActionRefused("The difficulty is a number of Traits.") from None

    def open_(player: Combatant, ruleset: str) -> Transition:
        return rules.open_static(
            ruleset=ruleset,
            challenger=player,
            category=category_,
            difficulty=difficulty,
            narrator_throw=throw,
            choose=secrets.choice,
            stakes=str(stakes)[:MAX_STAKES],
            now=_now(),
        )

    return _narrator_open(
        session=session,
        character=character,
        kind=Kind.STATIC,
        user=user,
        msg_id=msg_id,
        open_=open_,
        category=category_.value,
        difficulty=difficulty if difficulty > 0 else None,
    )


def simple_test_open(
    *,
    session: GameSession,
    character: Character,
    narrator_throw: str | None = None,
    stakes: str = "",
    user,
    msg_id: str,
) -> Challenge:
    """A narrator asks ``character`` for a simple test: she throws against the
    narrator (drawn with ``secrets`` unless given); a win or a tie succeeds
    (met_classic). seeds/000 "Simple Tests"."""
    throw = (
        _parse(rules.Throw, narrator_throw, "Throw Rock, Paper or Scissors.")
        if narrator_throw
        else None
    )

    def open_(player: Combatant, ruleset: str) -> Transition:
        return rules.open_simple(
            ruleset=ruleset,
            challenger=player,
            narrator_throw=throw,
            choose=secrets.choice,
            stakes=str(stakes)[:MAX_STAKES],
            now=_now(),
        )

    return _narrator_open(
        session=session,
        character=character,
        kind=Kind.SIMPLE,
        user=user,
        msg_id=msg_id,
        open_=open_,
    )


def _move(
    *,
    challenge_id: int,
    user,
    msg_id: str,
    action: str,
    move: Callable[[Challenge, ChallengeState], Transition],
    reads: str,
    for_play: bool = True,
) -> Challenge:
    """Run one move on a challenge under the locks described in the module doc;
    ``reads`` says what of the combatants ``move`` reads (:func:`_refreshed`).
    ``for_play`` False: a narrator's ruling, allowed during a time out."""
    with transaction.atomic():
        _claim(user, msg_id, action)
        challenge = _lock_challenge(challenge_id, for_play=for_play)
        _lock_characters(challenge.challenger_id, challenge.defender_id)
        before = _refreshed(
            ChallengeState.from_dict(challenge.state), challenge.session_id, challenge.pk, reads
        )
        transition = move(challenge, before)
        return _save(challenge, before, transition, actor=user)


def _side(challenge: Challenge, character: Character, user) -> Side:
    _ensure_player(user, character)
    if character.pk == challenge.challenger_id:
        return Side.CHALLENGER
    if character.pk == challenge.defender_id:
        return Side.DEFENDER
    raise ActionRefused("You are not in this challenge.")


def challenge_bid(
    *,
    challenge_id: int,
    character: Character,
    bids: Sequence[str] | None,
    user,
    msg_id: str,
) -> Challenge:
    """The defender answers an opposed challenge, or the player of a static
    challenge bids. ``bids`` empty or None = relent (seeds/000 "Relenting")."""
    bids = _clean_bids(bids)

    def move(challenge: Challenge, state: ChallengeState) -> Transition:
        side = _side(challenge, character, user)
        if state.kind == Kind.STATIC and side == Side.CHALLENGER:
            return rules.bid(state, bids=bids or None, now=_now())
        if side == Side.DEFENDER:
            return rules.respond(state, bids=bids or None, now=_now())
        raise rules.RulesError("It is not your turn to bid.")

    return _move(
        challenge_id=challenge_id,
        user=user,
        msg_id=msg_id,
        action="challenge.relent" if not bids else "challenge.bid",
        move=move,
        # A relent reads nothing of the combatants; a bid, her free copies and health.
        reads=READS_ALL if bids else READS_NOTHING,
    )


def challenge_throw(
    *, challenge_id: int, character: Character, throw: str, user, msg_id: str
) -> Challenge:
    """Commit ``character``'s throw ("rock", "paper", "scissors") for the current
    test. It stays hidden from everyone else until both throws are in."""
    throw_ = _parse(rules.Throw, throw, "Throw Rock, Paper or Scissors.")

    def move(challenge: Challenge, state: ChallengeState) -> Transition:
        return rules.throw(state, side=_side(challenge, character, user), throw=throw_, now=_now())

    return _move(
        challenge_id=challenge_id,
        user=user,
        msg_id=msg_id,
        action="challenge.throw",
        move=move,
        reads=READS_NOTHING,
    )


def challenge_declare(
    *, challenge_id: int, character: Character, count: int | None, user, msg_id: str
) -> Challenge:
    """Declare a Trait count after a tie (None = her full count); the challenger
    declares first. seeds/000 "Ties"."""
    if count is not None:
        try:
            count = int(count)
        except (TypeError, ValueError):
            raise ActionRefused("Declare a number of Traits.") from None

    def move(challenge: Challenge, state: ChallengeState) -> Transition:
        side = _side(challenge, character, user)
        return rules.declare(state, side=side, count=count, now=_now())

    return _move(
        challenge_id=challenge_id,
        user=user,
        msg_id=msg_id,
        action="challenge.declare",
        move=move,
        reads=READS_HELD,
    )


def challenge_void(*, challenge_id: int, reason: str = "", user, msg_id: str) -> Challenge:
    """A narrator voids an unresolved challenge (a dispute ruled): nobody loses
    anything. Allowed during a time out; the ruling is logged."""

    def move(challenge: Challenge, state: ChallengeState) -> Transition:
        _ensure_narrator(user, Chronicle(pk=challenge.session_chronicle_id))
        return rules.void(state, reason=str(reason)[:MAX_STAKES], now=_now())

    return _move(
        challenge_id=challenge_id,
        user=user,
        msg_id=msg_id,
        action="challenge.void",
        move=move,
        reads=READS_NOTHING,
        for_play=False,
    )


def _set_time_out(*, session: GameSession, user, msg_id: str, time_out: bool) -> GameSession:
    with transaction.atomic():
        _claim(user, msg_id, "session.time_out" if time_out else "session.resume")
        session = (
            GameSession.objects.select_for_update().select_related("chronicle").get(pk=session.pk)
        )
        _ensure_narrator(user, session.chronicle)
        if session.ended_at is not None:
            raise ActionRefused("This session is over.")
        if session.time_out != time_out:
            session.time_out = time_out
            session.time_out_since = timezone.now() if time_out else None
            session.save(update_fields=["time_out", "time_out_since"])
            Event.objects.create(
                session=session, kind="time_out" if time_out else "resume", actor=user
            )
        # The flag travels with the event so that no phone has to query the session.
        broadcast_on_commit(
            [session_group(session.pk)],
            SESSION_UPDATED,
            session_id=session.pk,
            time_out=session.time_out,
        )
    return session


def session_time_out(*, session: GameSession, user, msg_id: str) -> GameSession:
    """A narrator calls time out: no bid, throw or declaration is accepted in
    the session until Resume; challenges in flight keep their state.
    seeds/000 "Time Out"."""
    return _set_time_out(session=session, user=user, msg_id=msg_id, time_out=True)


def session_resume(*, session: GameSession, user, msg_id: str) -> GameSession:
    """A narrator lifts the time out; play goes on where it stopped."""
    return _set_time_out(session=session, user=user, msg_id=msg_id, time_out=False)


# Sessions: start, end, who is here ------------------------------------------
SESSION_ENDED_REASON = "the session ended"


def _end_session(session: GameSession, user) -> list[int]:
    """End ``session`` (held FOR UPDATE by the caller): every unresolved
    challenge is voided through the rules engine with the reason "the session
    ended" (nobody loses anything; its events carry no actor, the "session_ended"
    Event names who ended it), the time out is lifted. Returns the voided ids."""
    voided = []
    unresolved = Challenge.objects.select_for_update().filter(
        session=session, stage__in=_OPEN_STAGES
    )
    for challenge in unresolved.order_by("pk"):
        before = ChallengeState.from_dict(challenge.state)
        transition = rules.void(before, reason=SESSION_ENDED_REASON, now=_now())
        _save(challenge, before, transition, actor=None)
        voided.append(challenge.pk)
    session.ended_at = timezone.now()
    session.time_out = False
    session.time_out_since = None
    session.save(update_fields=["ended_at", "time_out", "time_out_since"])
    Event.objects.create(
        session=session,
        kind="session_ended",
        data={"voided": voided},
        actor=user if user is not None and user.is_authenticated else None,
    )
    return voided


def _announce_session(chronicle_id: int, session_id: int) -> None:
    broadcast_on_commit(
        [chronicle_group(chronicle_id)],
        SESSION_CHANGED,
        chronicle_id=chronicle_id,
        session_id=session_id,
    )


def session_start(
    *,
    chronicle: Chronicle,
    user=None,
    name: str = "",
    number: int | None = None,
    msg_id: str | None = None,
) -> GameSession:
    """End ``chronicle``'s open session (if any, as :func:`session_end` does) and
    open the next one, numbered one more than the latest.

    Losses and wounds are recorded per session, so every lost Trait and health
    level is restored in the new session while the old one keeps its history.
    Characters present (or on a break) last time are present again, at their
    sheet's starting health. Every phone and dashboard of the chronicle hears
    ``session.changed`` after commit. ``user`` None: the system (a command);
    else she must narrate the chronicle. ``number``: the session the narrator
    confirmed ("Start session 5"); ActionRefused if that is no longer the next
    one (another narrator was quicker). ``msg_id``: a websocket action's id
    (AlreadyDone on a repeat)."""
    with transaction.atomic():
        if msg_id is not None:
            _claim(user, msg_id, "session.start")
        if user is not None:
            _ensure_narrator(user, chronicle)
        previous = (
            GameSession.objects.select_for_update()
            .filter(chronicle=chronicle, ended_at__isnull=True)
            .first()
        )
        next_number = GameSession(chronicle=chronicle).next_number
        if number is not None and number != next_number:
            raise ActionRefused(f"Session {next_number - 1} has already started.")
        present: list[int] = []
        if previous is not None:
            present = list(
                previous.presences.exclude(status=Presence.Status.ABSENT).values_list(
                    "character_id", flat=True
                )
            )
            _end_session(previous, user)
        session = GameSession.objects.create(chronicle=chronicle, name=str(name)[:200])
        for character in Character.objects.filter(pk__in=present):
            Presence.objects.create(session=session, character=character, health=character.health)
        Event.objects.create(
            session=session,
            kind="session_started",
            data={"previous": previous.pk if previous else None},
            actor=user if user is not None and user.is_authenticated else None,
        )
        _announce_session(chronicle.pk, session.pk)
    return session


def session_end(*, session: GameSession, user, msg_id: str | None = None) -> GameSession:
    """A narrator ends ``session`` without starting the next: its unresolved
    challenges are voided ("the session ended", nothing lost), its history is
    kept, and every phone of the chronicle shows "No session tonight".
    ActionRefused if she does not narrate it or it is already over."""
    with transaction.atomic():
        if msg_id is not None:
            _claim(user, msg_id, "session.end")
        session = (
            GameSession.objects.select_for_update().select_related("chronicle").get(pk=session.pk)
        )
        _ensure_narrator(user, session.chronicle)
        if session.ended_at is not None:
            raise ActionRefused("This session is already over.")
        _end_session(session, user)
        _announce_session(session.chronicle_id, 0)
    return session


def presence_set(
    *, session: GameSession, character: Character, status: str, user, msg_id: str
) -> Presence:
    """A narrator marks ``character`` present, on a break (out of character:
    nobody can challenge her, nor she anyone; seeds/000 "Time") or absent (off
    the roster and the opponent lists until her phone opens again) at
    ``session``. ``status``: a ``Presence.Status`` value. Allowed during a time
    out; writes an Event "presence_set" {"character", "status"}. ActionRefused:
    not a narrator, the session is over, an unknown status, another chronicle."""
    status_ = _parse(Presence.Status, status, "Choose present, on a break or absent.")
    with transaction.atomic():
        _claim(user, msg_id, "presence.set")
        session = _lock_session(session.pk, for_play=False)
        _ensure_narrator(user, session.chronicle)
        if character.chronicle_id != session.chronicle_id:
            raise ActionRefused("That character is not in this chronicle.")
        presence = presence_join(session=session, character=character)
        if presence.status != status_:
            Presence.objects.filter(pk=presence.pk).update(status=status_)
            presence.status = status_
        Event.objects.create(
            session=session,
            kind="presence_set",
            data={"character": character.pk, "status": status_.value},
            actor=user,
        )
        broadcast_on_commit(
            [character_group(character.pk), narrators_group(session.pk)],
            CHARACTER_UPDATED,
            character_id=character.pk,
            session_id=session.pk,
            presence=True,
        )
    return presence
