"""A narrator's rulings, allowed during a time out: void a challenge, force a
retest, call
Time out and Resume for the whole session. seeds/000 "Time Out"."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from challenges import rules
from challenges.models import Challenge, Event
from challenges.realtime import SESSION_UPDATED, broadcast_on_commit, session_group
from challenges.rules import ChallengeState, Transition
from challenges.services._core import MAX_STAKES, ActionRefused, _claim, _ensure_narrator, _now
from challenges.services._reads import READS_NOTHING
from challenges.services._writes import _move
from challenges.services.npcs import npc_answer_session_due
from characters.models import Chronicle, GameSession


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


def challenge_force_retest(*, challenge_id: int, reason: str = "", user, msg_id: str) -> Challenge:
    """A narrator forces a retest of a challenge whose test is being settled
    (a dispute ruled), outside every retest limit; the reason is logged.
    Allowed during a time out. Raises RulesError when there is no test to
    hold again."""

    def move(challenge: Challenge, state: ChallengeState) -> Transition:
        _ensure_narrator(user, Chronicle(pk=challenge.session_chronicle_id))
        return rules.narrator_retest(state, reason=str(reason)[:MAX_STAKES], now=_now())

    return _move(
        challenge_id=challenge_id,
        user=user,
        msg_id=msg_id,
        action="challenge.force_retest",
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
