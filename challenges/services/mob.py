"""Mob scenes (seeds/000 "The Mob Scene"; seeds/004 "Mob Scenes"): a narrator
opens one for the characters in it and may close the choosing; players
choose a target, pick a leader, bid, and the defender who won an attack picks
whom she hurts. Each target's test is a :class:`~challenges.models.Challenge`
played with the usual moves (:mod:`~challenges.services.opposed`,
:mod:`~challenges.services.retests`); when it resolves, ``_save`` calls
:func:`_test_resolved`, which settles the target and starts the next.

Every move is one transaction like a challenge's: claim the message id, lock
the session (refused during a time out, but :func:`mob_void`), the scene row
and its characters, ask ``challenges.rules.mob``, save the row, its events
(kind ``mob_*``, ``data["mob"]`` the scene's id), lost Traits (TraitLoss on
the target's test) and wounds (Presence health), and broadcast ids after
commit (``mob.updated`` to every participant's phones and the narrators).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from django.db import connection, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from challenges import rules
from challenges.models import Challenge, Event
from challenges.models import MobScene as MobSceneRow
from challenges.realtime import (
    CHARACTER_UPDATED,
    MOB_UPDATED,
    broadcast_on_commit,
    character_group,
    narrators_group,
)
from challenges.rules import Kind, MobScene, MobStage, Transition
from challenges.rules import npc as rules_npc
from challenges.rules.npc import Relents
from challenges.services._core import (
    MAX_STAKES,
    ActionRefused,
    _claim,
    _clean_bids,
    _ensure_narrator,
    _ensure_player,
    _lock_challenge,
    _lock_characters,
    _lock_session,
    _now,
    _parse,
)
from challenges.services._reads import _ensure_here, combatants
from challenges.services._writes import _save, _save_losses, _wound
from challenges.services.npcs import npc_answer_due
from characters.models import Character, GameSession

MAX_MOB = 20
"""Most characters in one mob scene (a guard against forged input)."""


def _scene_ids(row: MobSceneRow) -> list[int]:
    return [int(c["character_id"]) for c in row.state["participants"]]


def _lock_mob(mob_id: int, *, for_play: bool, with_test: bool = False) -> MobSceneRow:
    """Lock a scene for a move, in the order a move of its test takes (session
    FOR SHARE, the test's challenge, the characters, then the scene), so that
    the two never wait on each other: the session's check
    (:func:`_lock_session`), with ``with_test`` its current test's row
    (:func:`_lock_challenge`), its characters (:func:`_lock_characters`), and
    the scene row (FOR UPDATE where the database has it). ActionRefused if
    there is no such scene, or the session refuses the move."""
    npc = MobSceneRow.participants.through.objects.filter(
        mobscene_id=OuterRef("pk"), character__player__isnull=True, character__auto_answer=True
    )
    found = (
        MobSceneRow.objects.filter(pk=mob_id)
        .annotate(npc=Exists(npc))
        .values_list("session_id", "challenge_id", "npc")
        .first()
    )
    if found is None:
        raise ActionRefused("There is no such mob scene.")
    session_id, challenge_id, has_npcs = found
    _lock_session(session_id, for_play=for_play)
    if with_test and challenge_id is not None:
        _lock_challenge(challenge_id, for_play=for_play)
    rows = MobSceneRow.objects.filter(pk=mob_id)
    if connection.features.has_select_for_update:  # else one writer at a time: no locks
        people = MobSceneRow.participants.through.objects.filter(mobscene_id=mob_id)
        _lock_characters(*people.values_list("character_id", flat=True))
        rows = rows.select_for_update()
    row = rows.get()
    row.has_npcs = has_npcs  # read by npc_mob_due: no query for a scene without NPCs
    return row


def _fresh(row: MobSceneRow, scene: MobScene) -> MobScene:
    """``scene`` with its participants' Traits, copies at risk and health read
    again (:func:`combatants`)."""
    ids = _scene_ids(row)
    characters = list(Character.objects.filter(pk__in=ids))
    read = combatants(characters, GameSession(pk=row.session_id))
    return scene.with_participants([read[pk] for pk in ids])


def _mob_move(
    *, mob_id: int, user, msg_id: str, action: str, move, for_play: bool = True, reads=None
):
    """Run one move on a scene under its locks (:func:`_lock_mob`; a ruling,
    ``for_play`` False, holds its test too); ``move(row, scene)`` returns
    the engine's MobTransition. ``reads(scene)``: whether the move reads the
    participants' Traits or health (then they are read again first, six
    queries; None: always)."""
    with transaction.atomic():
        _claim(user, msg_id, action)
        row = _lock_mob(mob_id, for_play=for_play, with_test=not for_play)
        before = MobScene.from_dict(row.state)
        if before.stage is not MobStage.SETTLED and (reads is None or reads(before)):
            before = _fresh(row, before)
        return _save_mob(row, before, move(row, before), actor=user)


def _save_mob(
    row: MobSceneRow, before: MobScene | None, transition, *, actor, npcs: bool = True
) -> MobSceneRow:
    """Persist a mob transition: for each target newly settled the lost Traits
    its test did not record (the other attackers' bids), every new wound, a
    Challenge row for a test that opened; the row, its events; broadcasts.
    Then (``npcs``) the moves it made due from auto-answering NPCs
    (:func:`npc_mob_due`), and the row as they left it."""
    scene = transition.scene
    old = before.targets if before is not None else ()
    earlier_test = row.challenge_id  # the events before a new test opens are about this one
    hurt_ids: set[int] = set()
    for i, target in enumerate(scene.targets):
        was = old[i] if i < len(old) else None
        if target.outcome is not None and (was is None or was.outcome is None):
            if target.test is not None and row.challenge_id is not None:
                extra = target.losses[len(target.test.losses) :]
                if extra:
                    _save_losses(row.challenge, replace(target.test, losses=tuple(extra)))
            hurt_ids |= {loss.character_id for loss in target.losses}
        for character_id in target.wounds[len(was.wounds) if was is not None else 0 :]:
            _wound(row.session_id, character_id)
            hurt_ids.add(character_id)
        if target.outcome is None and target.test is not None and (was is None or was.test is None):
            row.challenge = _open_test(row, target.test, actor)
    current = scene.target
    row.state = scene.to_dict()
    row.stage = scene.stage.value
    row.current_target_id = current.defender if current is not None else None
    if scene.stage is MobStage.SETTLED and row.settled_at is None:
        row.settled_at = timezone.now()
    if row.pk is None:
        row.save()
        row.participants.set(_scene_ids(row))
    else:
        row.version += 1
        row.save()
    rows = []
    test_id = earlier_test
    for event in transition.events:
        if event.kind == "mob_test":
            test_id = row.challenge_id
        rows.append(
            Event(
                session_id=row.session_id,
                challenge_id=test_id,
                kind=event.kind,
                data={"mob": row.pk, **event.data},
                actor=actor if actor and actor.is_authenticated else None,
            )
        )
    Event.objects.bulk_create(rows)
    ids = _scene_ids(row)
    broadcast_on_commit(
        [character_group(pk) for pk in ids] + [narrators_group(row.session_id)],
        MOB_UPDATED,
        mob_id=row.pk,
        session_id=row.session_id,
        version=row.version,
    )
    for character_id in sorted(hurt_ids):
        broadcast_on_commit(
            [narrators_group(row.session_id), character_group(character_id)],
            CHARACTER_UPDATED,
            character_id=character_id,
            session_id=row.session_id,
        )
    return npc_mob_due(row) if npcs else row


# --- auto-answering NPCs (issue 11 section 4: "mob scenes can include them") ------


def npc_mob_due(row: MobSceneRow) -> MobSceneRow:
    """Make every mob move due from an auto-answering NPC of the scene ``row``
    (saved, under the caller's transaction and locks), each saved as its own
    transition with no actor, then the NPC's moves in a test that opened
    (:func:`~challenges.services.npcs.npc_answer_due`); return the row as
    they left it. The choices are :func:`challenges.rules.npc.npc_mob_move`'s.

    Nothing when no participant is such an NPC or none of them has a move
    (one query; none for a row read by :func:`_lock_mob` with no such NPC in
    it, or once settled); nothing either during a time out or after the
    session's end: the moves wait for Resume (:func:`npc_mob_session_due`)."""
    scene = MobScene.from_dict(row.state)
    if scene.stage is MobStage.SETTLED or getattr(row, "has_npcs", None) is False:
        return row
    if scene.stage is MobStage.TEST:
        return _npc_test_due(row)
    npcs = {
        pk: Relents(relents)
        for pk, relents in Character.objects.filter(
            pk__in=_scene_ids(row), player__isnull=True, auto_answer=True
        ).values_list("pk", "relents")
    }
    now = _now()
    if not npcs or rules_npc.npc_mob_move(scene, npcs, now=now) is None:
        return row
    time_out, ended = GameSession.objects.values_list("time_out", "ended_at").get(pk=row.session_id)
    if time_out or ended is not None:
        return row
    before = _fresh(row, scene)
    moves = rules_npc.npc_mob_moves(before, npcs, now=now)
    for transition in moves:
        row = _save_mob(row, before, transition, actor=None, npcs=False)
        before = transition.scene
    return _npc_test_due(row) if before.stage is MobStage.TEST else row


def _npc_test_due(row: MobSceneRow) -> MobSceneRow:
    """The moves due from auto-answering NPCs in the scene's open test (two
    NPCs throw at once; an NPC against a player waits for her throw). When
    they settle the target, the scene moves on under its own save: the row
    is read again."""
    test = row.challenge
    if test is None or test.is_resolved:
        return row
    version = test.version
    if npc_answer_due(test).version != version:
        row.refresh_from_db()
    return row


def npc_mob_session_due(session_id: int, *, character_id: int | None = None) -> int:
    """At Resume (or when an NPC's auto-answer is switched on): every open mob
    scene of the session with an auto-answering NPC in it (only
    ``character_id``'s, if given) makes its NPCs' due moves
    (:func:`npc_mob_due`), each under its scene's locks. Run inside a
    transaction. Returns the number of scenes looked at."""
    open_ = MobSceneRow.objects.filter(session_id=session_id).exclude(stage=MobStage.SETTLED)
    if character_id is not None:
        open_ = open_.filter(participants=character_id)
    pks = list(
        open_.filter(participants__player__isnull=True, participants__auto_answer=True)
        .values_list("pk", flat=True)
        .distinct()
        .order_by("pk")
    )
    for pk in pks:
        npc_mob_due(_lock_mob(pk, for_play=True, with_test=True))
    return len(pks)


def _open_test(row: MobSceneRow, state: rules.ChallengeState, actor) -> Challenge:
    """The Challenge row of a target's test (the leader against the defender),
    saved like any opened challenge: both phones show it and play it."""
    assert state.defender is not None and state.category is not None
    challenge = Challenge(
        session_id=row.session_id,
        kind=Kind.OPPOSED,
        challenger_id=state.challenger.character_id,
        defender_id=state.defender.character_id,
        category=state.category.value,
        is_attack=False,
        stakes=state.stakes[:MAX_STAKES],
    )
    opened = rules.Event(
        "opened",
        {
            "kind": "opposed",
            "ruleset": state.ruleset,
            "category": state.category.value,
            "challenger": state.challenger.character_id,
            "defender": state.defender.character_id,
            "mob": row.pk,
            "attackers": state.mob_attackers,
        },
    )
    return _save(challenge, None, Transition(state, (opened,)), actor=actor)


def _test_resolved(challenge: Challenge, state: rules.ChallengeState, actor) -> None:
    """Called by ``_save`` (in its transaction) when a mob's test resolves:
    settle its target and go on to the next. Nothing if no open scene is
    waiting on this test (voided with its scene)."""
    rows = MobSceneRow.objects.filter(challenge_id=challenge.pk, stage=MobStage.TEST)
    if connection.features.has_select_for_update:
        rows = rows.select_for_update()
    row = rows.first()
    if row is None:
        return
    row.challenge = challenge
    before = MobScene.from_dict(row.state)
    _save_mob(row, before, rules.play_test(before, Transition(state, ()), now=_now()), actor=actor)


# --- the narrator's moves ---------------------------------------------------------


def mob_open(
    *,
    session: GameSession,
    characters: Sequence[Character],
    category: str,
    is_attack: bool = True,
    user,
    msg_id: str,
) -> MobSceneRow:
    """A narrator opens a mob scene for ``characters`` (at least three, all
    present tonight and not on a break), in ``category``; ``is_attack``:
    wounds are dealt. Raises ActionRefused (not a narrator, absent, time out,
    too many), RulesError (fewer than three, listed twice), AlreadyDone."""
    category_ = _parse(rules.Category, category, "Choose Physical, Social or Mental.")
    characters = list(characters)
    if len(characters) > MAX_MOB:
        raise ActionRefused(f"A mob scene takes at most {MAX_MOB} characters.")
    with transaction.atomic():
        _claim(user, msg_id, "mob.open")
        session = _lock_session(session.pk, for_play=True)
        _ensure_narrator(user, session.chronicle)
        ids = [c.pk for c in characters]
        _lock_characters(*ids)
        _ensure_here(session, characters)
        fighters = combatants(characters, session) if ids else {}
        transition = rules.open_mob(
            ruleset=session.chronicle.ruleset,
            category=category_,
            participants=[fighters[pk] for pk in ids] if ids else [],
            is_attack=bool(is_attack),
            now=_now(),
        )
        row = MobSceneRow(
            session=session,
            narrator=user,
            category=category_.value,
            is_attack=bool(is_attack),
            state={"participants": [{"character_id": pk} for pk in ids]},
        )
        return _save_mob(row, None, transition, actor=user)


def mob_close_choosing(*, mob_id: int, user, msg_id: str) -> MobSceneRow:
    """A narrator closes the choosing: who has not chosen attacks nobody; the
    choices are revealed and the first target starts. Refused in a time out."""

    def move(row, scene):
        _ensure_narrator(user, GameSession.objects.get(pk=row.session_id).chronicle)
        return rules.close_choosing(scene, now=_now())

    return _mob_move(mob_id=mob_id, user=user, msg_id=msg_id, action="mob.close", move=move)


def mob_void(*, mob_id: int, reason: str, user, msg_id: str) -> MobSceneRow:
    """A narrator ends a mob scene (a ruling, allowed during a time out): the
    targets not yet settled are void, and the current test with them."""

    def move(row, scene):
        _ensure_narrator(user, GameSession.objects.get(pk=row.session_id).chronicle)
        return rules.void_mob(scene, reason=str(reason)[:MAX_STAKES], now=_now())

    with transaction.atomic():
        row = _mob_move(
            mob_id=mob_id, user=user, msg_id=msg_id, action="mob.void", move=move, for_play=False
        )
        test = row.challenge
        if test is not None and not test.is_resolved:
            before = rules.ChallengeState.from_dict(test.state)
            voided = rules.void(before, reason=str(reason)[:MAX_STAKES], now=_now())
            _save(test, before, voided, actor=user)
        return row


def _end_mobs(session: GameSession, reason: str) -> None:
    """Void every open mob scene of ``session`` (the session ends; called under
    its lock before its challenges are voided, so no voided test starts the
    next target)."""
    rows = MobSceneRow.objects.filter(session=session).exclude(stage=MobStage.SETTLED)
    if connection.features.has_select_for_update:
        rows = rows.select_for_update()
    for row in rows.order_by("pk"):
        before = MobScene.from_dict(row.state)
        _save_mob(row, before, rules.void_mob(before, reason=reason, now=_now()), actor=None)


# --- the players' moves -----------------------------------------------------------


def _player(user, character: Character) -> int:
    _ensure_player(user, character)
    return character.pk


def mob_choose(
    *, mob_id: int, character: Character, target: int | None, user, msg_id: str
) -> MobSceneRow:
    """Her character points at ``target`` (a character id in the scene) or at
    nobody (None); hidden from everyone until the choosing closes. RulesError
    for a second choice, herself, someone not in the scene."""
    me = _player(user, character)

    def move(row, scene):
        return rules.choose_target(scene, chooser=me, target=target, now=_now())

    def closes(scene) -> bool:  # the last choice starts the first target
        return len(scene.choices) + 1 >= len(scene.participants)

    return _mob_move(
        mob_id=mob_id, user=user, msg_id=msg_id, action="mob.choose", move=move, reads=closes
    )


def mob_pick_leader(
    *, mob_id: int, character: Character, leader: int, user, msg_id: str
) -> MobSceneRow:
    """An attacker of the current target names the group's leader (one of
    them). RulesError if she is not one of its attackers, or not now."""
    me = _player(user, character)

    def move(row, scene):
        return rules.pick_leader(scene, by=me, leader=leader, now=_now())

    return _mob_move(
        mob_id=mob_id,
        user=user,
        msg_id=msg_id,
        action="mob.leader",
        move=move,
        reads=lambda scene: False,
    )


def mob_bid(
    *,
    mob_id: int,
    character: Character,
    bids: Sequence[str] | None,
    effect: str = "",
    damage: int = 1,
    user,
    msg_id: str,
) -> MobSceneRow:
    """Her bid on the current target: an attacker one Trait (and her stated
    effect, ``damage`` health levels), the defender one per attacker (or as
    the preset says), or none to give up. RulesError for an illegal bid."""
    me = _player(user, character)
    names = _clean_bids(bids)

    def move(row, scene):
        return rules.mob_bid(
            scene,
            character=me,
            bids=names,
            effect=str(effect or "")[:MAX_STAKES],
            damage=damage,
            now=_now(),
        )

    return _mob_move(mob_id=mob_id, user=user, msg_id=msg_id, action="mob.bid", move=move)


def mob_hurt(
    *, mob_id: int, character: Character, attacker: int | None, user, msg_id: str
) -> MobSceneRow:
    """The defender who won picks one attacker to hurt (one wound), or nobody."""
    me = _player(user, character)

    def move(row, scene):
        target = scene.target
        if target is None or target.defender != me:
            raise ActionRefused("Only the defender who won chooses whom to hurt.")
        return rules.hurt(scene, attacker=attacker, now=_now())

    return _mob_move(mob_id=mob_id, user=user, msg_id=msg_id, action="mob.hurt", move=move)
