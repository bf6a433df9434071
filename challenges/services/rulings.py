"""A narrator's rulings, allowed during a time out: void a challenge, settle
it for either side, force a retest, give back or take away a Trait, each
with a required reason; a player's "Call a narrator" and its dismissal; Time
out and Resume for the whole session. seeds/000 "Adjudication", "Time Out";
RULES.md "Disputes".

Every ruling is an Event with the narrator as its actor (the engine's
"voided", "settled", "narrator_retest"; "trait_given_back", "trait_taken"),
and a line on the challenge's row (``Challenge.rulings``) that both phones
and the dashboard show at once; a ruling also clears a call."""

from __future__ import annotations

from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from challenges import rules
from challenges.models import Challenge, Event, TraitLoss
from challenges.realtime import (
    CHALLENGE_UPDATED,
    CHARACTER_UPDATED,
    SESSION_UPDATED,
    broadcast_on_commit,
    character_group,
    narrators_group,
    session_group,
)
from challenges.rows import committed_rows
from challenges.rules import ChallengeState, Side, Stage, Transition
from challenges.services._core import (
    MAX_STAKES,
    ActionRefused,
    _claim,
    _ensure_narrator,
    _lock_challenge,
    _lock_characters,
    _now,
    _parse,
)
from challenges.services._reads import READS_NOTHING, open_bids
from challenges.services._writes import _move, _side
from challenges.services.npcs import npc_answer_session_due
from characters.models import Character, Chronicle, GameSession, Trait

#: How long after its result a side may still call a narrator (a dispute about
#: the result), in seconds.
CALL_WINDOW_SECONDS = 30 * 60
MAX_CALL_REASON = 200  # characters of the optional reason of a call


def _reason(reason) -> str:
    """The ruling's reason, stripped; ActionRefused if blank (it is kept in the history)."""
    text = reason.strip() if isinstance(reason, str) else ""
    if not text:
        raise ActionRefused("Give a reason for the ruling: it is kept in the history.")
    return text[:MAX_STAKES]


def _narrator_name(user) -> str:
    return user.get_full_name() or user.get_username()


def _rule(challenge: Challenge, text: str, reason: str, user) -> None:
    """Add the ruling line ``text`` — ``reason`` to ``challenge`` (in memory;
    the caller saves ``rulings`` and the cleared call with the move)."""
    challenge.rulings = [
        *(challenge.rulings or []),
        {
            "text": text,
            "reason": reason,
            "narrator": _narrator_name(user),
            "at": timezone.now().isoformat(timespec="seconds"),
        },
    ]
    challenge.called_at, challenge.called_by, challenge.call_reason = None, "", ""
    challenge.ruled = True  # _save writes these columns too


def _touch(challenge: Challenge, fields: list[str], *, sheet_of: int | None = None) -> Challenge:
    """Save ``fields`` of a changed ``challenge`` outside the rules engine with
    a new version, and broadcast it (both phones and the dashboards) after
    commit; ``sheet_of``: that character's sheet changed too."""
    challenge.version += 1
    challenge.save(update_fields=[*fields, "version"])
    transaction.on_commit(lambda: committed_rows.remember(challenge))
    touched = sorted({challenge.challenger_id, challenge.defender_id} - {None})
    broadcast_on_commit(
        [character_group(c) for c in touched] + [narrators_group(challenge.session_id)],
        CHALLENGE_UPDATED,
        challenge_id=challenge.pk,
        session_id=challenge.session_id,
        version=challenge.version,
    )
    if sheet_of is not None:
        for group in (narrators_group(challenge.session_id), character_group(sheet_of)):
            broadcast_on_commit(
                [group],
                CHARACTER_UPDATED,
                character_id=sheet_of,
                session_id=challenge.session_id,
            )
    return challenge


def _name_of(state: ChallengeState, side: Side) -> str:
    who = state.combatant(side)
    return who.name if who is not None else "the narrator"


def _ruling(action: str, reason, user, msg_id: str, challenge_id: int, step) -> Challenge:
    """One ruling through the rules engine: ``step(state)`` → ``(Transition,
    ruling line)``; the line and the cleared call are saved with the move."""
    reason = _reason(reason)

    def move(challenge: Challenge, state: ChallengeState) -> Transition:
        _ensure_narrator(user, Chronicle(pk=challenge.session_chronicle_id))
        transition, text = step(state, reason)
        _rule(challenge, text, reason, user)
        return transition

    return _move(
        challenge_id=challenge_id,
        user=user,
        msg_id=msg_id,
        action=action,
        move=move,
        reads=READS_NOTHING,
        for_play=False,
    )


def challenge_void(*, challenge_id: int, reason: str, user, msg_id: str) -> Challenge:
    """A narrator voids an unresolved challenge (a dispute ruled): nobody loses
    anything. Allowed during a time out. ActionRefused without a reason or
    for a non-narrator; RulesError if it is over."""
    return _ruling(
        "challenge.void",
        reason,
        user,
        msg_id,
        challenge_id,
        lambda state, why: (rules.void(state, reason=why, now=_now()), "Voided"),
    )


def challenge_settle(
    *, challenge_id: int, winner: str, reason: str, user, msg_id: str
) -> Challenge:
    """A narrator settles an unresolved challenge for ``winner`` ("challenger"
    or "defender"; the defender of a static challenge is the narrator's
    side): the loser loses her bid Trait(s) and, in an attack, a health
    level, as the result would have applied (``rules.settle``). Allowed
    during a time out. ActionRefused without a reason, for another side or a
    non-narrator; RulesError if it is over."""
    side = _parse(Side, winner, "Settle it for the challenger or the defender.")

    def step(state: ChallengeState, why: str) -> tuple[Transition, str]:
        transition = rules.settle(state, winner=side, reason=why, now=_now())
        return transition, f"Settled for {_name_of(state, side)}"

    return _ruling("challenge.settle", reason, user, msg_id, challenge_id, step)


def challenge_force_retest(*, challenge_id: int, reason: str, user, msg_id: str) -> Challenge:
    """A narrator forces a retest of a challenge whose test is being settled
    (a dispute ruled), outside every retest limit; the reason is logged.
    Allowed during a time out. ActionRefused without a reason; RulesError
    when there is no test to hold again."""
    return _ruling(
        "challenge.force_retest",
        reason,
        user,
        msg_id,
        challenge_id,
        lambda state, why: (
            rules.narrator_retest(state, reason=why, now=_now()),
            "A retest is forced",
        ),
    )


def challenge_trait_ruling(
    *,
    challenge_id: int,
    character_id: int,
    trait_id: int,
    give_back: bool,
    reason: str,
    user,
    msg_id: str,
) -> Challenge:
    """A narrator gives back (``give_back``) or takes away one copy of the
    Trait ``trait_id`` of ``character_id``, a character of the challenge
    (open or resolved), for the rest of the session: giving back deletes one
    TraitLoss of it tonight (this challenge's first), taking away adds one
    (tied to this challenge). Allowed during a time out. ActionRefused:
    no reason, not a narrator, not her challenge or Trait, nothing lost to
    give back, no free copy to take (every copy lost or bid in an open
    challenge)."""
    reason = _reason(reason)
    with transaction.atomic():
        _claim(user, msg_id, "challenge.trait")
        challenge = _lock_challenge(challenge_id, for_play=False)
        _ensure_narrator(user, Chronicle(pk=challenge.session_chronicle_id))
        if character_id not in (challenge.challenger_id, challenge.defender_id):
            raise ActionRefused("That character is not in this challenge.")
        _lock_characters(challenge.challenger_id, challenge.defender_id)
        trait = Trait.objects.filter(pk=trait_id, character_id=character_id, negative=False).first()
        if trait is None:
            raise ActionRefused("She has no such Trait.")
        who = Character.objects.filter(pk=character_id).values_list("name", flat=True).first()
        lost = TraitLoss.objects.filter(
            session_id=challenge.session_id, character_id=character_id, trait=trait
        )
        if give_back:
            loss = (
                lost.filter(challenge_id=challenge.pk).order_by("id").first()
                or lost.order_by("-id").first()
            )
            if loss is None:
                raise ActionRefused(f"{who} has not lost {trait.name} tonight.")
            loss.delete()
            kind, text = "trait_given_back", f"{trait.name} given back to {who}"
        else:
            keys = {trait.pk, (trait.name, trait.category)}
            at_risk = sum(
                1 for b in open_bids(challenge.session_id, [character_id]) if b.key in keys
            )
            if trait.count - lost.count() - at_risk <= 0:
                raise ActionRefused(
                    f"{who} has no copy of {trait.name} left to take away "
                    "(every copy is lost or bid)."
                )
            TraitLoss.objects.create(
                session_id=challenge.session_id,
                character_id=character_id,
                trait=trait,
                challenge_id=challenge.pk,
            )
            kind, text = "trait_taken", f"{trait.name} taken away from {who}"
        Event.objects.create(
            session_id=challenge.session_id,
            challenge_id=challenge.pk,
            kind=kind,
            data={
                "character": character_id,
                "trait": trait.name,
                "trait_id": trait.pk,
                "category": trait.category,
                "reason": reason,
            },
            actor=user,
        )
        _rule(challenge, text, reason, user)
        return _touch(
            challenge, ["rulings", "called_at", "called_by", "call_reason"], sheet_of=character_id
        )


def challenge_call_narrator(
    *, challenge_id: int, character: Character, reason: str = "", user, msg_id: str
) -> Challenge:
    """Either side presses "Call a narrator" (seeds/000 "Adjudication"): the
    challenge is flagged (when, by which side, her optional reason, at most
    :data:`MAX_CALL_REASON` characters) until a narrator rules or dismisses
    it. An open challenge, or one resolved less than
    :data:`CALL_WINDOW_SECONDS` ago (a dispute about the result); allowed
    during a time out. Event "narrator_called". ActionRefused: not her
    challenge, settled too long ago, already called."""
    text = reason.strip()[:MAX_CALL_REASON] if isinstance(reason, str) else ""
    with transaction.atomic():
        _claim(user, msg_id, "challenge.call_narrator")
        challenge = _lock_challenge(challenge_id, for_play=False)
        side = _side(challenge, character, user)
        if challenge.stage == Stage.RESOLVED and (
            challenge.resolved_at is None
            or timezone.now() - challenge.resolved_at > timedelta(seconds=CALL_WINDOW_SECONDS)
        ):
            raise ActionRefused(
                "This challenge was settled too long ago: find a narrator in person."
            )
        if challenge.called_at is not None:
            raise ActionRefused("A narrator has already been called to this challenge.")
        challenge.called_at, challenge.called_by, challenge.call_reason = (
            timezone.now(),
            side.value,
            text,
        )
        Event.objects.create(
            session_id=challenge.session_id,
            challenge_id=challenge.pk,
            kind="narrator_called",
            data={"side": side.value, "character": character.pk, "reason": text},
            actor=user,
        )
        return _touch(challenge, ["called_at", "called_by", "call_reason"])


def challenge_dismiss_call(*, challenge_id: int, user, msg_id: str) -> Challenge:
    """A narrator dismisses a call without a ruling (she has come and talked it
    over): the flag goes. Event "call_dismissed". ActionRefused: not a
    narrator, no call."""
    with transaction.atomic():
        _claim(user, msg_id, "challenge.dismiss_call")
        challenge = _lock_challenge(challenge_id, for_play=False)
        _ensure_narrator(user, Chronicle(pk=challenge.session_chronicle_id))
        if challenge.called_at is None:
            raise ActionRefused("No narrator is called to this challenge.")
        challenge.called_at, challenge.called_by, challenge.call_reason = None, "", ""
        Event.objects.create(
            session_id=challenge.session_id,
            challenge_id=challenge.pk,
            kind="call_dismissed",
            actor=user,
        )
        return _touch(challenge, ["called_at", "called_by", "call_reason"])


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
            if not time_out and session.time_out_since is not None:
                # s11 clocks: the Time out's seconds, left out of every health clock.
                spent = (timezone.now() - session.time_out_since).total_seconds()
                session.time_out_seconds += max(0.0, spent)
            session.time_out = time_out
            session.time_out_since = timezone.now() if time_out else None
            session.save(update_fields=["time_out", "time_out_since", "time_out_seconds"])
            Event.objects.create(
                session=session, kind="time_out" if time_out else "resume", actor=user
            )
            if not time_out:
                # Moves due from auto-answering NPCs were held by the time out.
                npc_answer_session_due(session.pk)
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
