"""Characters the narrators run (issue 11, section 4): the server answers for
an auto-answering NPC (a character with no player and ``auto_answer`` on).

:func:`npc_answer_due` makes every move due from such an NPC in a challenge,
inside the transaction of the move that made it due (so a restart between
two moves loses nothing: there is no timer, and the NPC's move is committed
with the move before it). The choice of each move is the rules engine's
(:mod:`challenges.rules.npc`): its best Trait, a throw from ``secrets``, its
true count, never a retest; it relents only as its sheet's "relents" says.

Called by :func:`~challenges.services._writes._move` after every move on a
challenge, by :func:`~challenges.services.opposed.challenge_open`, and at
Resume for the session's open challenges (:func:`npc_answer_session_due`).
Statics and mob scenes call it the same way: after saving a move on a
``Challenge`` row, under that move's locks, ``challenge = npc_answer_due(challenge)``.
"""

from __future__ import annotations

import secrets

from django.db import transaction
from django.db.models import Q

from challenges.models import Challenge, Event, her_challenges
from challenges.realtime import (
    CHARACTER_UPDATED,
    broadcast_on_commit,
    character_group,
    narrators_group,
)
from challenges.rules import ChallengeState, Side, Stage
from challenges.rules.engine import Chooser
from challenges.rules.npc import Relents, npc_moves
from challenges.services._core import (
    ActionRefused,
    _claim,
    _ensure_narrator,
    _lock_challenge,
    _lock_characters,
    _lock_session,
    _now,
    _parse,
)
from challenges.services._reads import READS_ALL, _refreshed
from characters.models import Character, GameSession

_UNKNOWN = object()

draw_throw: Chooser = secrets.choice
"""Where an NPC's throws come from: ``secrets.choice`` (tests replace it)."""


def npc_sides(challenge: Challenge) -> dict[Side, Relents]:
    """The sides of ``challenge`` held by auto-answering NPCs, each with its
    "relents" setting ({} when none). No query when the row was read by
    ``_lock_challenge`` (its ``challenger_npc``/``defender_npc`` columns) or
    built with its characters (a new challenge); else one query."""
    found: dict[Side, Relents] = {}
    ids = {Side.CHALLENGER: challenge.challenger_id, Side.DEFENDER: challenge.defender_id}
    missing = []
    for side, character_id in ids.items():
        if character_id is None:
            continue
        relents = getattr(challenge, f"{side.value}_npc", _UNKNOWN)
        if relents is _UNKNOWN:
            field = Challenge._meta.get_field(side.value)
            if field.is_cached(challenge):
                character = getattr(challenge, side.value)
                relents = character.relents if character.auto_answers else None
            else:
                missing.append((side, character_id))
                continue
        if relents is not None:
            found[side] = Relents(relents)
    if missing:
        rows = dict(
            Character.objects.filter(
                pk__in=[pk for _, pk in missing], player__isnull=True, auto_answer=True
            ).values_list("pk", "relents")
        )
        for side, character_id in missing:
            if character_id in rows:
                found[side] = Relents(rows[character_id])
    return dict(sorted(found.items()))


def npc_answer_due(
    challenge: Challenge,
    *,
    choose: Chooser | None = None,
    now: float | None = None,
    sides: dict[Side, Relents] | None = None,
) -> Challenge:
    """Make every move due from an auto-answering NPC in ``challenge`` (saved,
    its row and characters locked by the caller's transaction), one saved
    transition each (events with no actor), and return the challenge.

    Nothing when no side is such an NPC (no query for a row read by
    ``_lock_challenge``), when the challenge is resolved, or during a time out
    or after the session's end (the NPC answers at Resume instead).
    ``choose`` draws its throws (default :data:`draw_throw`, ``secrets.choice``); ``now`` epoch
    seconds. The moves are chosen by :func:`challenges.rules.npc.npc_move`, so
    none breaks a rule. ``sides`` ({side: its relent setting}): the sides
    played so (default: :func:`npc_sides`, the NPCs')."""
    from challenges.services._writes import _save

    if challenge.stage == Stage.RESOLVED.value or challenge.pooled:
        return challenge
    sides = npc_sides(challenge) if sides is None else sides
    if not sides:
        return challenge
    if not in_play(challenge):
        return challenge
    before = _refreshed(
        ChallengeState.from_dict(challenge.state), challenge.session_id, challenge.pk, READS_ALL
    )
    moves = npc_moves(
        before, sides, choose=choose or draw_throw, now=_now() if now is None else now
    )
    for transition in moves:
        challenge = _save(challenge, before, transition, actor=None)
        before = transition.state
    return challenge


def in_play(challenge: Challenge) -> bool:
    """``challenge``'s session is open and not in a time out: an NPC may move
    in it now. No query for a row read by ``_lock_challenge`` (its session
    columns); else one."""
    time_out = getattr(challenge, "session_time_out", None)
    ended = getattr(challenge, "session_ended_at", None)
    if time_out is None:
        time_out, ended = GameSession.objects.values_list("time_out", "ended_at").get(
            pk=challenge.session_id
        )
    return not time_out and ended is None


def npc_answer_session_due(
    session_id: int, *, choose: Chooser | None = None, character_id: int | None = None
) -> int:
    """At Resume: every open challenge of the session with an auto-answering
    NPC in it (only ``character_id``'s, if given) gets its due moves
    (:func:`npc_answer_due`), each under its lock, then every open mob scene
    with one (:func:`~challenges.services.mob.npc_mob_session_due`). Run
    inside a transaction. Returns the number of challenges and scenes looked
    at. Two queries when there is none."""
    open_ = Challenge.objects.filter(session_id=session_id).exclude(stage=Stage.RESOLVED.value)
    if character_id is not None:
        open_ = open_.filter(pk__in=her_challenges(session_id, character_id))
    candidates = list(open_.filter(npc_filter()).values_list("pk", flat=True))
    for pk in candidates:
        challenge = _lock_challenge(pk, for_play=True)
        _lock_characters(challenge.challenger_id, challenge.defender_id)
        if challenge.pooled:  # issue 12: test pools, answered by the bns NPC
            from challenges.services.bns import bns_npc_due

            bns_npc_due(challenge, choose=choose)
            continue
        npc_answer_due(challenge, choose=choose)
    # Mob scenes too (their tests are challenges above; their other moves here).
    from challenges.services.mob import npc_mob_session_due

    return len(candidates) + npc_mob_session_due(session_id, character_id=character_id)


def challenge_autoplay(*, challenge_id: int, choose: Chooser | None = None) -> Challenge:
    """Play every move both sides of the open challenge ``challenge_id`` have
    left (MET or test pools), each chosen as an auto-answering NPC's (relenting
    when Wounded or worse; its throws drawn by ``choose``, default
    :data:`draw_throw`), saved as the NPCs' moves are (events with no actor),
    in one transaction: the history of an evening written without phones
    (``manage.py rehearse --challenges``). Returns the challenge, resolved
    unless no move was due (a time out, the session ended) or the NPC policy
    stalled after ``MAX_NPC_MOVES`` moves a call."""
    from challenges.services.bns import bns_npc_due

    both = {Side.CHALLENGER: Relents.WOUNDED, Side.DEFENDER: Relents.WOUNDED}
    with transaction.atomic():
        challenge = _lock_challenge(challenge_id, for_play=True)
        _lock_characters(challenge.challenger_id, challenge.defender_id)
        if challenge.pooled:
            return bns_npc_due(challenge, choose=choose, sides=both)
        return npc_answer_due(challenge, choose=choose, sides=both)


def npc_filter() -> Q:
    """A ``Q`` of the challenges with an auto-answering NPC on either side."""
    return Q(challenger__player__isnull=True, challenger__auto_answer=True) | Q(
        defender__player__isnull=True, defender__auto_answer=True
    )


def npc_set(
    *,
    session: GameSession,
    character: Character,
    auto_answer: bool,
    relents: str,
    user,
    msg_id: str,
) -> Character:
    """A narrator of ``session``'s chronicle sets an NPC's ``auto_answer`` and
    ``relents`` ("never", "wounded", "always") from the dashboard. Switched
    on outside a time out, the NPC at once makes every move due from it in
    its open challenges of ``session``. Writes an Event "npc_set"
    {"character", "auto_answer", "relents"}; broadcasts the character's
    change to the dashboards and its phone screen. ActionRefused: not a
    narrator, the session is over, another chronicle, a character with a
    player, an unknown ``relents``; AlreadyDone for a repeated ``msg_id``."""
    relents_ = _parse(Relents, relents, "Choose never, when Wounded or always.")
    with transaction.atomic():
        _claim(user, msg_id, "npc.set")
        session = _lock_session(session.pk, for_play=False)
        _ensure_narrator(user, session.chronicle)
        if character.chronicle_id != session.chronicle_id:
            raise ActionRefused("That character is not in this chronicle.")
        if character.player_id is not None:
            raise ActionRefused(f"{character.name} has a player: only NPCs answer by themselves.")
        Character.objects.filter(pk=character.pk).update(
            auto_answer=bool(auto_answer), relents=relents_.value
        )
        character.auto_answer, character.relents = bool(auto_answer), relents_.value
        Event.objects.create(
            session=session,
            kind="npc_set",
            data={
                "character": character.pk,
                "auto_answer": character.auto_answer,
                "relents": character.relents,
            },
            actor=user,
        )
        if character.auto_answer and not session.time_out:
            npc_answer_session_due(session.pk, character_id=character.pk)
        broadcast_on_commit(
            [character_group(character.pk), narrators_group(session.pk)],
            CHARACTER_UPDATED,
            character_id=character.pk,
            session_id=session.pk,
        )
    return character
