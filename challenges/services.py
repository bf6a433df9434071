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

import secrets
import time
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from django.db import IntegrityError, connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from challenges import rules
from challenges.models import Challenge, ClientAction, Event, Test, TraitLoss
from challenges.realtime import (
    CHALLENGE_UPDATED,
    CHARACTER_UPDATED,
    SESSION_UPDATED,
    broadcast_on_commit,
    character_group,
    narrators_group,
    session_group,
)
from challenges.rules import ChallengeState, Combatant, Kind, Side, Stage, TraitHolding, Transition
from characters.models import Character, GameSession, Presence, Trait
from characters.services import character_sheet, presence_join

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
    if not msg_id or len(msg_id) > 64:
        raise ActionRefused("This action has no valid id.")
    try:
        with transaction.atomic():
            ClientAction.objects.create(user=user, msg_id=msg_id, action=action)
    except IntegrityError:
        raise AlreadyDone(msg_id) from None


def _lock_session(session_id: int, *, for_play: bool) -> GameSession:
    """Read the session inside the current transaction.

    On PostgreSQL a move holds a FOR SHARE lock: moves run side by side, but a
    time out (FOR UPDATE) waits for moves in flight and later moves see it, so
    nothing resolves after a time out is committed. SQLite serializes writers.
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT 1 FROM characters_gamesession WHERE id = %s FOR SHARE", [session_id]
            )
    session = GameSession.objects.select_related("chronicle").get(pk=session_id)
    if session.ended_at is not None:
        raise ActionRefused("This session is over.")
    if for_play and session.time_out:
        raise ActionRefused("Time out! A narrator has stopped play; wait for Resume.")
    return session


def _lock_characters(*characters: Character | None) -> None:
    """Hold the characters' rows (FOR NO KEY UPDATE, in id order) until the move
    commits. A character's free Trait copies are read from her other open
    challenges (``combatant``), so two moves of one character must not both
    read them before either commits: two answers bidding her last copy at the
    same instant would both stand. Waits, in order, behind the session and
    challenge locks. No-op on SQLite (one writer at a time)."""
    ids = sorted({c.pk for c in characters if c is not None})
    list(
        Character.objects.select_for_update(no_key=True)
        .filter(pk__in=ids)
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def _ensure_player(user, character: Character) -> None:
    if character.player_id is None or character.player_id != user.pk:
        raise ActionRefused("You can only act for your own character.")


def _ensure_narrator(user, session: GameSession) -> None:
    if not session.chronicle.is_narrator(user):
        raise ActionRefused("Only this chronicle's narrators can do that.")


def _ensure_present(session: GameSession, character: Character) -> None:
    if not Presence.objects.filter(session=session, character=character).exists():
        raise ActionRefused(f"{character.name} is not present tonight.")


def combatant(
    character: Character, session: GameSession, *, exclude_challenge_id: int | None = None
) -> Combatant:
    """The rules engine's view of ``character`` tonight: Traits held (lost ones
    excluded), how many copies are bid in her other unresolved challenges
    (``at_risk``), and her health level."""
    sheet = character_sheet(character, session)
    at_risk: Counter[tuple[str, str]] = Counter()
    open_challenges = (
        Challenge.objects.filter(session=session)
        .exclude(stage=Stage.RESOLVED)
        .filter(Q(challenger=character) | Q(defender=character))
        .exclude(pk=exclude_challenge_id)
        .values_list("challenger_id", "state")
    )
    for challenger_id, state in open_challenges:
        key = "challenger_bids" if challenger_id == character.pk else "defender_bids"
        for name in state.get(key, []):
            at_risk[(name, state.get("category") or "")] += 1
    traits = tuple(
        TraitHolding(
            name=line.name,
            category=line.category,
            count=line.held,
            at_risk=at_risk[(line.name, line.category.value)],
            negative=line.negative,
        )
        for line in [*sheet.traits, *sheet.negatives]
    )
    return Combatant(
        character_id=character.pk, name=character.name, traits=traits, health=sheet.health
    )


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
        challenge.version = F("version") + 1
        challenge.save()
        challenge.refresh_from_db(fields=["version"])

    old_tests = before.tests if before else ()
    for number, record in enumerate(state.tests, start=1):
        if number <= len(old_tests) and old_tests[number - 1] == record:
            continue
        Test.objects.update_or_create(
            challenge=challenge,
            number=number,
            defaults={
                "challenger_throw": record.challenger_throw.value
                if record.challenger_throw
                else "",
                "defender_throw": record.defender_throw.value if record.defender_throw else "",
                "challenger_declared": record.challenger_declared,
                "defender_declared": record.defender_declared,
                "winner": record.winner.value if record.winner else "",
                "tie": record.tie,
            },
        )

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
        for loss in state.losses:
            trait = Trait.objects.get(
                character_id=loss.character_id,
                name=loss.trait,
                category=loss.category.value,
                negative=False,
            )
            TraitLoss.objects.create(
                session_id=challenge.session_id,
                character_id=loss.character_id,
                trait=trait,
                challenge=challenge,
            )
        for character_id in state.wounds:
            presence = Presence.objects.select_for_update().get(
                session_id=challenge.session_id, character_id=character_id
            )
            presence.health = rules.HealthLevel(presence.health).worse()
            presence.save(update_fields=["health"])

    groups = [character_group(c) for c in touched] + [narrators_group(challenge.session_id)]
    # The version lets every dashboard of a worker share one rendering of the change.
    version = challenge.version
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
        _ensure_present(session, challenger)
        _ensure_present(session, defender)
        _lock_characters(challenger, defender)
        transition = rules.open_opposed(
            ruleset=session.chronicle.ruleset,
            challenger=combatant(challenger, session),
            defender=combatant(defender, session),
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
        _ensure_narrator(user, session)
        if character.chronicle_id != session.chronicle_id:
            raise ActionRefused("That character is not in this chronicle.")
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
    for_play: bool = True,
) -> Challenge:
    """Run one move on a challenge under the locks described in the module doc."""
    with transaction.atomic():
        _claim(user, msg_id, action)
        session_id = (
            Challenge.objects.filter(pk=challenge_id).values_list("session_id", flat=True).first()
        )
        if session_id is None:
            raise ActionRefused("There is no such challenge.")
        session = _lock_session(session_id, for_play=for_play)
        challenge = (
            Challenge.objects.select_for_update(of=("self",))
            .select_related("challenger", "defender")
            .get(pk=challenge_id)
        )
        _lock_characters(challenge.challenger, challenge.defender)
        before = ChallengeState.from_dict(challenge.state).with_combatants(
            combatant(challenge.challenger, session, exclude_challenge_id=challenge.pk),
            combatant(challenge.defender, session, exclude_challenge_id=challenge.pk)
            if challenge.defender
            else None,
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
        challenge_id=challenge_id, user=user, msg_id=msg_id, action="challenge.throw", move=move
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
        challenge_id=challenge_id, user=user, msg_id=msg_id, action="challenge.declare", move=move
    )


def challenge_void(*, challenge_id: int, reason: str = "", user, msg_id: str) -> Challenge:
    """A narrator voids an unresolved challenge (a dispute ruled): nobody loses
    anything. Allowed during a time out; the ruling is logged."""

    def move(challenge: Challenge, state: ChallengeState) -> Transition:
        _ensure_narrator(user, challenge.session)
        return rules.void(state, reason=str(reason)[:MAX_STAKES], now=_now())

    return _move(
        challenge_id=challenge_id,
        user=user,
        msg_id=msg_id,
        action="challenge.void",
        move=move,
        for_play=False,
    )


def _set_time_out(*, session: GameSession, user, msg_id: str, time_out: bool) -> GameSession:
    with transaction.atomic():
        _claim(user, msg_id, "session.time_out" if time_out else "session.resume")
        session = (
            GameSession.objects.select_for_update().select_related("chronicle").get(pk=session.pk)
        )
        _ensure_narrator(user, session)
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
