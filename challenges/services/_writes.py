"""The write path every move shares: one move on a challenge under its locks
(:func:`_move`), and :func:`_save`, which persists a transition (row, tests,
events, lost Traits, wounds) and broadcasts ids after commit."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from django.db import transaction
from django.db.models import Case, F, PositiveSmallIntegerField, Value, When
from django.db.models.functions import Least
from django.utils import timezone

from challenges.models import Challenge, Event, Test, TraitLoss
from challenges.realtime import (
    CHALLENGE_UPDATED,
    CHARACTER_UPDATED,
    MOB_UPDATED,
    broadcast_on_commit,
    character_group,
    narrators_group,
)
from challenges.rows import committed_rows
from challenges.rules import (
    Category,
    ChallengeState,
    HealthLevel,
    Pool,
    Side,
    Stage,
    Transition,
)
from challenges.rules.judge import options_of
from challenges.services._core import (
    _TRAIT,
    ActionRefused,
    _claim,
    _ensure_player,
    _insert,
    _lock_challenge,
    _lock_characters,
    _marks,
    _rows,
    _update,
)
from challenges.services._reads import _refreshed
from challenges.services.clocks import fresh_level
from challenges.services.npcs import npc_answer_due
from characters.models import BLOOD_TRAITS_MINUTES, Character, Immunity, Presence

logger = logging.getLogger(__name__)

# What a move changes on an existing challenge row (the rest is set at open).
_MOVED_FIELDS = ("state", "stage", "stage_since", "outcome", "resolved_at", "version")
# A narrator's ruling (``challenge.ruled``, set by services.rulings) also saves
# the call and rulings columns, in the same UPDATE.
_RULED_FIELDS = (*_MOVED_FIELDS, "called_at", "called_by", "call_reason", "rulings")


def _save(
    challenge: Challenge,
    before: ChallengeState | None,
    transition: Transition,
    *,
    actor,
) -> Challenge:
    """Persist a transition: the challenge row, changed test rows, events,
    pools spent by the move (:func:`_save_spent`), immunities it granted
    (:func:`_save_granted`), and on resolution the lost Traits, wounds and
    Blood Traits (:func:`_save_blood`). Then broadcast ids after commit."""
    state = transition.state
    challenge.state = state.to_dict()
    # The views' parse of this row is this very state (views.shared.parsed_state).
    challenge.__dict__["parsed_state"] = (challenge.state, state)
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
        if getattr(challenge, "ruled", False):
            challenge.save(update_fields=_RULED_FIELDS)
        else:  # the move path: one plain UPDATE (the ORM's save cost five times it)
            _update(
                Challenge,
                {"id": challenge.pk},
                {name: getattr(challenge, name) for name in _MOVED_FIELDS},
            )

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
            "retest": record.retest.value if record.retest else "",
            "by": record.by.value if record.by else "",
        }
        # A test already in the saved state has its row; a new one has none yet.
        key = {"challenge": challenge.pk, "number": number}
        if number > len(old_tests) or not _update(Test, key, fields):
            _insert(Test, [{**key, **fields}])

    now = timezone.now()
    actor_id = actor.pk if actor and actor.is_authenticated else None
    _insert(
        Event,
        [
            {
                "session": challenge.session_id,
                "challenge": challenge.pk,
                "kind": event.kind,
                "data": event.data,
                "actor": actor_id,
                "created_at": now,
            }
            for event in transition.events
        ],
    )

    touched = {challenge.challenger_id, challenge.defender_id} - {None}
    # Characters whose pools, Blood Traits or immunities this move changed.
    pooled = _save_spent(challenge.session_id, before, state)
    pooled |= _save_granted(challenge.session_id, before, state)
    if newly_resolved:
        _save_losses(challenge, state)
        for character_id in state.wounds:
            _wound(challenge.session_id, character_id)
        pooled |= _save_blood(challenge.session_id, state)
        if state.mob_attackers:
            # A mob scene's test: its target is settled, the next one starts.
            from challenges.services.mob import _test_resolved

            _test_resolved(challenge, state, actor)

    if state.mob_attackers and not newly_resolved:
        # A mob scene's test moved: the dashboard's scene says whose move it is.
        broadcast_on_commit(
            [narrators_group(challenge.session_id)],
            MOB_UPDATED,
            mob_id=0,
            session_id=challenge.session_id,
            version=0,
        )
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
    for character_id in sorted(pooled - (touched if state.losses or state.wounds else set())):
        # Her pools on the narrator's roster row and her phone's sheet.
        broadcast_on_commit(
            [narrators_group(challenge.session_id)],
            CHARACTER_UPDATED,
            character_id=character_id,
            session_id=challenge.session_id,
            challenge_id=challenge.pk,
            version=version,
        )
    for character_id in sorted(pooled):
        broadcast_on_commit(
            [character_group(character_id)],
            CHARACTER_UPDATED,
            character_id=character_id,
            session_id=challenge.session_id,
        )
    return challenge


def _spent_by(state: ChallengeState | None) -> Counter[tuple[int, Pool]]:
    totals: Counter[tuple[int, Pool]] = Counter()
    for character_id, pool, amount in state.spent if state else ():
        totals[(character_id, Pool(pool))] += amount
    return totals


def _save_spent(session_id: int, before: ChallengeState | None, state: ChallengeState) -> set[int]:
    """Add what the move spent (``state.spent`` less ``before.spent``, per
    character and Pool) to her presence's ``<pool>_spent`` tonight, one UPDATE
    per pool spent. Returns the ids of the characters who spent. Raises
    Presence.DoesNotExist if one is not present."""
    old = _spent_by(before)
    changed = set()
    for (character_id, pool), amount in sorted(_spent_by(state).items()):
        more = amount - old[(character_id, pool)]
        if more <= 0:
            continue
        field = f"{pool.value}_spent"
        if not Presence.objects.filter(session_id=session_id, character_id=character_id).update(
            **{field: F(field) + more}
        ):
            raise Presence.DoesNotExist(f"Character {character_id} is not present.")
        changed.add(character_id)
    return changed


def _save_granted(
    session_id: int, before: ChallengeState | None, state: ChallengeState
) -> set[int]:
    """One Immunity row per immunity the move granted (in ``state.granted``,
    not in ``before.granted``): a Willpower retest fended off the attack
    (seeds/004 "Retrying The Test In An Ability-Based Challenge"). One insert;
    returns the immune characters' ids."""
    old = Counter(before.granted if before else ())
    rows = []
    for character_id, immunity in state.granted:
        if old[(character_id, immunity)]:
            old[(character_id, immunity)] -= 1
            continue
        rows.append(
            Immunity(
                session_id=session_id,
                character_id=character_id,
                attacker_id=immunity.attacker_id,
                power=immunity.power[:100],
                until=datetime.fromtimestamp(immunity.until, tz=UTC),
            )
        )
    if rows:
        Immunity.objects.bulk_create(rows)
    return {row.character_id for row in rows}


def _save_blood(session_id: int, state: ChallengeState) -> set[int]:
    """On resolution of a Physical challenge, each side that spent Blood
    (``*_blood``) keeps her Blood Traits active for five minutes after its end
    (seeds/004 "Expending Blood"): her presence's ``blood_traits`` becomes
    those still active plus those spent here, capped at the preset's most (3)
    and her generation's limit; ``blood_traits_until`` now + 5 minutes. One
    UPDATE per such side; returns their ids."""
    if state.category is not Category.PHYSICAL:
        return set()
    most = options_of(state).blood_traits_max or 3
    now = timezone.now()
    changed = set()
    for side in Side:
        spent = int(state.of(side, "blood"))
        who = state.combatant(side)
        if not spent or who is None:
            continue
        cap = most if who.blood_limit is None else min(most, who.blood_limit)
        active = Case(When(blood_traits_until__gt=now, then=F("blood_traits")), default=Value(0))
        Presence.objects.filter(session_id=session_id, character_id=who.character_id).update(
            blood_traits=Least(Value(cap), active + Value(spent)),
            blood_traits_until=now + timedelta(minutes=BLOOD_TRAITS_MINUTES),
        )
        changed.add(who.character_id)
    return changed


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
    now = timezone.now()
    for loss in state.losses:
        if loss.trait_id is not None:
            key: tuple = (loss.character_id, loss.trait_id)
        else:
            key = (loss.character_id, loss.trait, loss.category.value)
        if key not in trait_ids:
            logger.warning("challenge #%s: lost Trait %r is not on the sheet", challenge.pk, key)
            continue
        rows.append(
            {
                "session": challenge.session_id,
                "character": loss.character_id,
                "trait": trait_ids[key],
                "challenge": challenge.pk,
                "reason": "",
                "created_at": now,
            }
        )
    _insert(TraitLoss, rows)


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
        health=_WORSE,
        **fresh_level(),  # s11 clocks: her new level's clock starts, due at once
    ):
        raise Presence.DoesNotExist(f"Character {character_id} is not present.")


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
        if challenge.pooled:  # issue 12: its moves are services.bns's
            raise ActionRefused("That challenge is played with test pools, not Trait bids.")
        _lock_characters(challenge.challenger_id, challenge.defender_id)
        before = _refreshed(
            ChallengeState.from_dict(challenge.state), challenge.session_id, challenge.pk, reads
        )
        transition = move(challenge, before)
        challenge = _save(challenge, before, transition, actor=user)
        # An auto-answering NPC answers in the same transaction (issue 11 section 4).
        return npc_answer_due(challenge)


def _side(challenge: Challenge, character: Character, user) -> Side:
    _ensure_player(user, character)
    if character.pk == challenge.challenger_id:
        return Side.CHALLENGER
    if character.pk == challenge.defender_id:
        return Side.DEFENDER
    raise ActionRefused("You are not in this challenge.")
