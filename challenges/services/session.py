"""Sessions: start (every lost Trait comes back), end, and who is here
(present, on a break, absent)."""

from __future__ import annotations

from typing import NamedTuple

from django.db import transaction
from django.utils import timezone

from challenges import rules
from challenges.models import Challenge, Combat, DiceRoll, Event, MobScene, StoryCombat
from challenges.realtime import (
    CHARACTER_UPDATED,
    SESSION_CHANGED,
    broadcast_on_commit,
    character_group,
    chronicle_group,
    narrators_group,
)
from challenges.rules import ChallengeState, MobStage
from challenges.services._core import (
    _OPEN_STAGES,
    ActionRefused,
    _claim,
    _ensure_narrator,
    _lock_session,
    _now,
    _parse,
)
from challenges.services._writes import _save
from challenges.services.clocks import night_presence
from characters.models import Character, Chronicle, GameSession, Presence
from characters.services import presence_join

# Sessions: start, end, who is here ------------------------------------------
SESSION_ENDED_REASON = "the session ended"


class SessionEnding(NamedTuple):
    """What ending a session stops, counted before a narrator confirms it:
    unresolved challenges (MET and test pools) voided, open mob scenes voided,
    live ``bns`` combats and Storytelling fights ended, and Storytelling rolls
    still waiting (called, contested, an extended action going on), which can
    no longer be rolled once their session is over."""

    challenges: int
    mob_scenes: int
    combats: int
    fights: int
    rolls: int

    @property
    def parts(self) -> list[str]:
        """The non-zero counts in words: ["3 open challenges", "1 fight"]."""
        words = [
            (self.challenges, "open challenge", "open challenges"),
            (self.mob_scenes, "mob scene", "mob scenes"),
            (self.combats, "combat", "combats"),
            (self.fights, "fight", "fights"),
            (self.rolls, "roll still waiting", "rolls still waiting"),
        ]
        return [f"{n} {one if n == 1 else many}" for n, one, many in words if n]


def session_ending(session: GameSession | None) -> SessionEnding:
    """What :func:`session_start` or :func:`session_end` would stop in
    ``session`` now (all zero for None: no open session). Reads only."""
    if session is None:
        return SessionEnding(0, 0, 0, 0, 0)
    return SessionEnding(
        challenges=Challenge.objects.filter(session=session, stage__in=_OPEN_STAGES).count(),
        mob_scenes=MobScene.objects.filter(session=session).exclude(stage=MobStage.SETTLED).count(),
        combats=Combat.objects.filter(session=session, ended_at__isnull=True).count(),
        fights=StoryCombat.objects.filter(session=session, ended_at__isnull=True).count(),
        rolls=DiceRoll.objects.filter(session=session, rolled_at__isnull=True).count(),
    )


def _end_session(session: GameSession, user) -> list[int]:
    """End ``session`` (held FOR UPDATE by the caller): every unresolved
    challenge is voided through the rules engine with the reason "the session
    ended" (nobody loses anything; its events carry no actor, the "session_ended"
    Event names who ended it), the time out is lifted. Returns the voided ids."""
    voided = []
    # Issue 11: open mob scenes end first, so that no voided test starts a next target.
    from challenges.services.mob import _end_mobs

    _end_mobs(session, SESSION_ENDED_REASON)
    # Issue 12: live bns combats end with the session.
    from challenges.services.combat import _end_combats

    _end_combats(session, SESSION_ENDED_REASON)
    # Issue 13: live Storytelling fights too.
    from challenges.services.story_combat import _end_fights

    _end_fights(session, SESSION_ENDED_REASON)
    unresolved = Challenge.objects.select_for_update().filter(
        session=session, stage__in=_OPEN_STAGES
    )
    for challenge in unresolved.order_by("pk"):
        if challenge.pooled:  # issue 12: a challenge of test pools has its own engine
            from challenges.services.bns import bns_end

            bns_end(challenge, SESSION_ENDED_REASON)
            voided.append(challenge.pk)
            continue
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


def _story_night(character: Character, previous: Presence, chronicle) -> dict:
    """Issue 13: what natural healing leaves of her dice-pool track
    (``story_combat.story_night``); {} for other rulesets (no query)."""
    if not chronicle.has_dice_pools:
        return {}
    from challenges.services.story_combat import story_night
    from characters.story_sheets import story_sheet

    return story_night(previous, health=story_sheet(character, None).health)


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
        present: dict[int, Presence] = {}
        if previous is not None:
            present = {
                p.character_id: p for p in previous.presences.exclude(status=Presence.Status.ABSENT)
            }
            _end_session(previous, user)
        session = GameSession.objects.create(chronicle=chronicle, name=str(name)[:200])
        for character in Character.objects.filter(pk__in=list(present)):
            # s11 clocks: a night's rest heals one aggravated level; the rest heal.
            Presence.objects.create(
                session=session,
                character=character,
                **night_presence(character, present[character.pk], chronicle.ruleset),
                # issue 13: lethal and aggravated wounds of a dice-pool track carry
                **_story_night(character, present[character.pk], chronicle),
            )
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
