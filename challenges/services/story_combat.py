"""A Storytelling fight (issue 13; seeds/003 "Combat", "Health", "Healing"):
a narrator starts a fight of some characters of a ``storytelling`` chronicle,
the server rolls each one's Initiative once, and they act turn after turn
from the highest Initiative to the lowest: attack (the server builds the
pool, rolls it with :func:`~challenges.services.dice.server_dice`, marks the
damage on the target's health track), dodge, yield, fall prone, stand up,
another action. The rules are ``challenges.rules.storytelling`` (combat and
health); this module keeps a fight in a :class:`~challenges.models.StoryCombat`
row and tonight's track on each ``Presence`` (``Presence.TRACK``).

Every move is keyword-only (``fight_<action>``) and one transaction, like a
``bns`` combat's (:mod:`challenges.services.combat`): claim the message id,
lock the session (FOR SHARE; a Time out refuses every move but
:func:`fight_end`) and the row, ask the engine, save the row, its rolls and
its events (kind ``fight_<engine event>``, ``data["fight"]`` the row's id),
and broadcast ids after commit (``fight.updated`` to every fighter's phones
and the narrators; ``character.updated`` to a wounded character's phones).

The track outside a fight: a narrator's ruling marks damage or heals points
(:func:`track_mark`, :func:`track_heal`); natural healing runs on the
heartbeat (:func:`story_heal_tick`, Time out left out) from the play instant
stored on her presence; lethal and aggravated wounds carry into the next
session (:func:`story_night`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from challenges.models import Event, StoryCombat
from challenges.realtime import (
    CHARACTER_UPDATED,
    FIGHT_UPDATED,
    broadcast_on_commit,
    character_group,
    narrators_group,
)
from challenges.rules import RulesError
from challenges.rules import storytelling as rules
from challenges.services import dice as dice_service
from challenges.services._core import (
    MAX_STAKES,
    ActionRefused,
    _claim,
    _ensure_narrator,
    _ensure_player,
    _lock_session,
    _now,
    _parse,
)
from challenges.services._reads import _ensure_here
from challenges.services.clocks import pause_of
from challenges.services.combat import lock_live_row
from characters.models import Character, GameSession, Presence
from characters.story_sheets import StorySheetView, story_sheet, story_sheets

log = logging.getLogger(__name__)

MAX_FIGHT = 30
"""Most characters in one fight (a guard against forged input)."""

MAX_WEAPON = 5
"""Most bonus dice a weapon gives (seeds/003 "Equipment": +1 to +5)."""

MAX_POINTS = 10
"""Most points of damage or healing a narrator marks in one ruling."""

Move = Callable[[StoryCombat, rules.CombatState], rules.CombatTransition]


# --- the adapter from a sheet to the fight's fighter ---------------------------------


def fight_fighter(character: Character, sheet: StorySheetView) -> rules.Fighter:
    """The fight's view of ``character`` from her sheet of dots tonight: her
    id, name, Initiative modifier, Defense and Speed. No query."""
    return rules.Fighter(
        character_id=character.pk,
        name=character.name,
        initiative_modifier=sheet.initiative,
        defense=sheet.defense,
        speed=sheet.speed,
    )


# --- locks, saving, broadcasting ---------------------------------------------------


def fight_ids(row: StoryCombat) -> list[int]:
    """Everyone who was ever in the fight (a removed fighter's phone learns
    she is out)."""
    return [int(f["character_id"]) for f in row.state["fighters"]]


def _lock_fight(fight_id: int, *, for_play: bool) -> StoryCombat:
    """The fight row, locked for a move (``combat.lock_live_row``: the
    session FOR SHARE, refused when over or, ``for_play``, in a Time out)."""
    return lock_live_row(StoryCombat, fight_id, for_play=for_play, noun="fight")


def _event_kind(kind: str) -> str:
    """``fight_`` and the engine event's kind ("fight_acted"; "combat_started"
    becomes "fight_started")."""
    return f"fight_{kind.removeprefix('combat_')}"[:30]


def _save_fight(
    row: StoryCombat,
    transition: rules.CombatTransition,
    *,
    actor,
    extra: Sequence[tuple[str, dict]] = (),
    wounded: Sequence[int] = (),
) -> StoryCombat:
    """Persist a transition: the state, the version, ``ended_at`` once over,
    the participants, one Event per engine event (then ``extra`` (kind, data)
    events: rolls, damage), and ``fight.updated`` after commit; ``wounded``:
    ids whose track changed (``character.updated`` to their phones)."""
    state = transition.state
    row.state = state.to_dict()
    if state.ended and row.ended_at is None:
        row.ended_at = timezone.now()
    if row.pk is not None:
        row.version += 1
    row.save()
    ids = fight_ids(row)
    row.participants.add(*ids)
    who = actor if actor is not None and actor.is_authenticated else None
    events = [(_event_kind(e.kind), e.data) for e in transition.events] + list(extra)
    Event.objects.bulk_create(
        Event(session_id=row.session_id, kind=kind, data={"fight": row.pk, **data}, actor=who)
        for kind, data in events
    )
    broadcast_on_commit(
        [character_group(pk) for pk in ids] + [narrators_group(row.session_id)],
        FIGHT_UPDATED,
        fight_id=row.pk,
        session_id=row.session_id,
        version=row.version,
    )
    for pk in wounded:
        broadcast_on_commit(
            [character_group(pk)], CHARACTER_UPDATED, character_id=pk, session_id=row.session_id
        )
    return row


def _fight_move(
    *, fight_id: int, user, msg_id: str, action: str, move: Move, for_play: bool = True
) -> StoryCombat:
    """Run one move under the fight's locks; ``move(row, state)`` returns the
    engine's transition (or raises RulesError/ActionRefused: nothing is
    saved)."""
    with transaction.atomic():
        _claim(user, msg_id, action)
        row = _lock_fight(fight_id, for_play=for_play)
        before = rules.CombatState.from_dict(row.state)
        return _save_fight(row, move(row, before), actor=user)


def _narrator(user, row: StoryCombat) -> GameSession:
    session = GameSession.objects.select_related("chronicle").get(pk=row.session_id)
    _ensure_narrator(user, session.chronicle)
    return session


def _ensure_dice_pools(session: GameSession) -> None:
    if not session.chronicle.has_dice_pools:
        raise ActionRefused("This chronicle does not roll dice pools: no Storytelling fight.")


def _fighters(session: GameSession, characters: Sequence[Character]) -> list[rules.Fighter]:
    """The fighters of ``characters``, each present and not on a break."""
    _ensure_here(session, characters)
    sheets = story_sheets(characters, session) if characters else {}
    return [fight_fighter(c, sheets[c.pk]) for c in characters]


def _in_live_fight(session_id: int, ids: Sequence[int], *, but: int | None = None) -> str | None:
    """The name of one of ``ids`` already in a live fight of the session."""
    rows = StoryCombat.objects.filter(session_id=session_id, ended_at__isnull=True)
    if but is not None:
        rows = rows.exclude(pk=but)
    for row in rows.only("state"):
        state = rules.CombatState.from_dict(row.state)
        for f in state.fighters:
            if f.character_id in ids and f.character_id in state.order:
                return f.name
    return None


def _initiative_log(state: rules.CombatState, ids: Sequence[int]) -> list[dict]:
    """One roll log entry per Initiative rolled for ``ids``."""
    out = []
    for f in state.fighters:
        if f.character_id in ids and f.initiative is not None:
            i = f.initiative
            out.append(
                {
                    "kind": "initiative",
                    "by": f.character_id,
                    "face": i.face,
                    "modifier": i.modifier,
                    "wound_penalty": i.wound_penalty,
                    "total": i.total,
                }
            )
    return out


# --- the narrator's moves -------------------------------------------------------------


def fight_start(
    *, session: GameSession, characters: Sequence[Character], user, msg_id: str
) -> StoryCombat:
    """A narrator starts a fight of ``characters`` (two or more, present and
    not on a break, in no other live fight) in a chronicle that rolls dice
    pools. The server rolls each one's Initiative (one d10 + her Initiative
    modifier + her wound penalty, seeds/003 "Combat"), kept for the fight,
    logged with its die. Raises ActionRefused (not a narrator, not a
    dice-pool chronicle, absent, Time out, in another fight, too many),
    RulesError (fewer than two, one twice), AlreadyDone."""
    characters = list(characters)
    if len(characters) > MAX_FIGHT:
        raise ActionRefused(f"A fight takes at most {MAX_FIGHT} characters.")
    with transaction.atomic():
        _claim(user, msg_id, "fight.start")
        session = _lock_session(session.pk, for_play=True)
        _ensure_narrator(user, session.chronicle)
        _ensure_dice_pools(session)
        fighters = _fighters(session, characters)
        ids = [f.character_id for f in fighters]
        busy = _in_live_fight(session.pk, ids)
        if busy is not None:
            raise ActionRefused(f"{busy} is already in a fight: end it first.")
        sheets = story_sheets(characters, session)
        transition = rules.start_combat(
            fighters=fighters,
            dice=dice_service.server_dice(),
            wound_penalties={pk: sheets[pk].wound_penalty for pk in ids},
        )
        row = StoryCombat(session=session, narrator=user)
        row.rolls = _initiative_log(transition.state, ids)
        return _save_fight(row, transition, actor=user)


def fight_end_turn(*, fight_id: int, user, msg_id: str) -> StoryCombat:
    """A narrator ends the turn: actions not taken are lost, the next turn
    starts from the highest Initiative."""

    def move(row: StoryCombat, state: rules.CombatState) -> rules.CombatTransition:
        _narrator(user, row)
        return rules.end_turn(state)

    return _fight_move(
        fight_id=fight_id, user=user, msg_id=msg_id, action="fight.end_turn", move=move
    )


def fight_add(*, fight_id: int, character: Character, user, msg_id: str) -> StoryCombat:
    """A narrator brings ``character`` into the fight: she rolls Initiative
    once (logged) and takes her place; a fighter taken out earlier comes
    back with her first Initiative. ActionRefused if she is absent, on a
    break or in another live fight."""
    with transaction.atomic():
        _claim(user, msg_id, "fight.add")
        row = _lock_fight(fight_id, for_play=True)
        session = _narrator(user, row)
        (fighter,) = _fighters(session, [character])
        busy = _in_live_fight(row.session_id, [character.pk], but=row.pk)
        if busy is not None:
            raise ActionRefused(f"{busy} is already in another fight.")
        state = rules.CombatState.from_dict(row.state)
        returning = any(f.character_id == character.pk for f in state.fighters)
        transition = rules.add_fighter(
            state,
            fighter=fighter,
            dice=dice_service.server_dice(),
            wound_penalty=story_sheet(character, session).wound_penalty,
        )
        if not returning:
            row.rolls = [*row.rolls, *_initiative_log(transition.state, [character.pk])]
        return _save_fight(row, transition, actor=user)


def fight_remove(
    *, fight_id: int, character_id: int, reason: str = "", user, msg_id: str
) -> StoryCombat:
    """A narrator takes a fighter out (fled, unconscious); play moves on."""

    def move(row: StoryCombat, state: rules.CombatState) -> rules.CombatTransition:
        _narrator(user, row)
        return rules.remove_fighter(state, fighter_id=character_id, reason=str(reason))

    return _fight_move(
        fight_id=fight_id, user=user, msg_id=msg_id, action="fight.remove", move=move
    )


def fight_end(*, fight_id: int, reason: str = "", user, msg_id: str) -> StoryCombat:
    """A narrator ends the fight; every later move is refused. A ruling:
    allowed during a Time out."""

    def move(row: StoryCombat, state: rules.CombatState) -> rules.CombatTransition:
        _narrator(user, row)
        return rules.end_combat(state, reason=str(reason)[:MAX_STAKES])

    return _fight_move(
        fight_id=fight_id,
        user=user,
        msg_id=msg_id,
        action="fight.end",
        move=move,
        for_play=False,
    )


def _end_fights(session: GameSession, reason: str) -> None:
    """End every live fight of ``session`` (the session ends; under its lock)."""
    rows = StoryCombat.objects.filter(session=session, ended_at__isnull=True)
    if connection.features.has_select_for_update:
        rows = rows.select_for_update()
    for row in rows.order_by("pk"):
        state = rules.CombatState.from_dict(row.state)
        _save_fight(row, rules.end_combat(state, reason=reason), actor=None)


# --- a fighter's moves ----------------------------------------------------------------

ACTIONS = ("fall_prone", "stand_up", "run", "other")
"""What a fighter's action from her phone may be besides an attack
(:class:`~challenges.rules.storytelling.Action`)."""


def fight_act(
    *, fight_id: int, character: Character, action: str, user, msg_id: str
) -> StoryCombat:
    """``character`` takes her action of the turn without a roll: fall
    prone, stand up, run, or another action (a spell, a Skill roll made
    apart). RulesError: not her turn, her action used, already prone / not
    prone."""
    _ensure_player(user, character)
    if action not in ACTIONS:
        raise ActionRefused("An action here is fall prone, stand up, run or another action.")

    def move(row: StoryCombat, state: rules.CombatState) -> rules.CombatTransition:
        return rules.act(state, fighter_id=character.pk, action=rules.Action(action))

    return _fight_move(fight_id=fight_id, user=user, msg_id=msg_id, action="fight.act", move=move)


def fight_dodge(*, fight_id: int, character: Character, user, msg_id: str) -> StoryCombat:
    """``character`` dodges: her Defense doubles for the rest of the turn;
    only before she has acted (seeds/003 "Avoiding Damage in Close Combat")."""
    _ensure_player(user, character)

    def move(row: StoryCombat, state: rules.CombatState) -> rules.CombatTransition:
        return rules.dodge(state, fighter_id=character.pk)

    return _fight_move(fight_id=fight_id, user=user, msg_id=msg_id, action="fight.dodge", move=move)


def fight_yield(
    *, fight_id: int, character: Character, until: str, user, msg_id: str
) -> StoryCombat:
    """``character`` yields her action ``until`` "later" this turn or the
    "next_turn" (seeds/003 "Combat")."""
    _ensure_player(user, character)
    until_ = _parse(rules.YieldUntil, until, "Yield until later or the next turn.")

    def move(row: StoryCombat, state: rules.CombatState) -> rules.CombatTransition:
        return rules.yield_action(state, fighter_id=character.pk, until=until_)

    return _fight_move(fight_id=fight_id, user=user, msg_id=msg_id, action="fight.yield", move=move)


def fight_guard(*, fight_id: int, character: Character, on: bool, user, msg_id: str) -> StoryCombat:
    """``character``'s standing choice to spend a Willpower point for +2
    Defense against the next attack on her that Defense counts against
    (seeds/003 "Willpower"): on or off, at any moment of the fight but a
    Time out. The point is spent when that attack comes (if she has one
    left); the choice then lapses. ActionRefused if she has no Willpower
    left to spend."""
    _ensure_player(user, character)
    with transaction.atomic():
        _claim(user, msg_id, "fight.guard")
        row = _lock_fight(fight_id, for_play=True)
        state = rules.CombatState.from_dict(row.state)
        state.fighter(character.pk)
        session = GameSession.objects.get(pk=row.session_id)
        if on and story_sheet(character, session).willpower_left < 1:
            raise ActionRefused(f"{character.name} has no Willpower left tonight.")
        guard = [pk for pk in row.guard if pk != character.pk] + ([character.pk] if on else [])
        row.guard = guard
        kind = "fight_guard"
        data = {"fighter": character.pk, "on": bool(on)}
        return _save_fight(row, rules.CombatTransition(state, ()), actor=user, extra=[(kind, data)])


def _presence_for_update(session_id: int, character_id: int) -> Presence:
    rows = Presence.objects.filter(session_id=session_id, character_id=character_id)
    if connection.features.has_select_for_update:
        rows = rows.select_for_update()
    presence = rows.first()
    if presence is None:
        raise ActionRefused("That character is not present tonight.")
    return presence


def _spend_willpower(presence: Presence) -> None:
    Presence.objects.filter(pk=presence.pk).update(willpower_spent=F("willpower_spent") + 1)
    presence.willpower_spent += 1


def fight_attack(
    *,
    fight_id: int,
    character: Character,
    target_id: int,
    kind: str,
    weapon: int = 0,
    damage_type: str = "bashing",
    point_blank: bool = False,
    improvised: bool = False,
    willpower: bool = False,
    user,
    msg_id: str,
) -> StoryCombat:
    """``character`` attacks ``target_id`` on her turn (seeds/003 "Combat"):
    ``kind`` unarmed / armed / ranged / thrown (its Attribute + Skill),
    ``weapon`` bonus dice (0–5), ``improvised`` (−1), ``willpower`` (+3, one
    point of hers), ``point_blank`` (a gun within a few feet: Defense
    counts). The server builds the pool with the target's Defense now
    (:func:`~challenges.rules.storytelling.defense_against`; +2 if her
    standing Willpower choice is on and she has a point, spent now), her
    armour and the attacker's wound penalty, rolls it with the server's
    dice, and marks each success as one point of ``damage_type`` on the
    target's track (``take_damage``; her ``Presence.track_*`` saved, her
    healing clock restarted). The roll is logged with every die. Raises
    RulesError (not her turn, acted, target not in the fight, bad weapon),
    ActionRefused (no Willpower left, Time out, not hers)."""
    _ensure_player(user, character)
    kind_ = _parse(rules.AttackKind, kind, "An attack is unarmed, armed, ranged or thrown.")
    damage_ = _parse(rules.DamageType, damage_type, "Damage is bashing, lethal or aggravated.")
    if isinstance(weapon, bool) or not isinstance(weapon, int) or not 0 <= weapon <= MAX_WEAPON:
        raise RulesError(f"A weapon gives 0 to {MAX_WEAPON} dice.")
    with transaction.atomic():
        _claim(user, msg_id, "fight.attack")
        row = _lock_fight(fight_id, for_play=True)
        state = rules.CombatState.from_dict(row.state)
        if target_id == character.pk or target_id not in state.order:
            raise RulesError(f"{character.name} must name someone else in this fight to attack.")
        session = GameSession.objects.select_related("chronicle").get(pk=row.session_id)
        target = Character.objects.get(pk=target_id)
        sheets = story_sheets([character, target], session)
        me, them = sheets[character.pk], sheets[target_id]
        if willpower and me.willpower_left < 1:
            raise ActionRefused(f"{character.name} has no Willpower left tonight.")
        applies = rules.defense_applies(kind_, point_blank=point_blank)
        guard = target_id in row.guard and applies and them.willpower_left > 0
        transition = rules.act(
            state,
            fighter_id=character.pk,
            action=rules.Action.ATTACK,
            target_id=target_id,
            defense_willpower=guard,
        )
        defense = int(transition.events[0].data["defense"]) if applies else 0
        attribute, skill = kind_.traits
        pool = rules.attack_pool(
            kind=kind_,
            attribute=me.dots(attribute),
            skill=me.dots(skill),
            willpower=willpower,
            weapon=weapon,
            improvised=improvised,
            defense=defense,
            armor=them.armor,
            point_blank=point_blank,
            prone=target_id in state.prone,
            wound_penalty=me.wound_penalty,
        )
        rolled = rules.roll(pool, dice_service.server_dice())
        result = rules.attack_damage(rolled, damage_type=damage_)
        damaged = rules.take_damage(them.track, result.damage, damage_, state.options)
        if willpower:
            _spend_willpower(_presence_for_update(row.session_id, character.pk))
        victim = _presence_for_update(row.session_id, target_id)
        if guard:
            _spend_willpower(victim)
            row.guard = [pk for pk in row.guard if pk != target_id]
        if result.damage:
            _store_track(victim, damaged.track, session)
        entry = {
            "kind": "attack",
            "by": character.pk,
            "target": target_id,
            "attack": kind_.value,
            "roll": rolled.to_dict(),
            "pool": pool.to_dict(),
            "defense": defense,
            "guard": guard,
            "damage": result.damage,
            "damage_type": damage_.value,
            "track": damaged.track.picture,
            "status": damaged.track.status.value,
        }
        row.rolls = [*row.rolls, entry]
        data = {k: v for k, v in entry.items() if k not in ("kind", "pool")}
        return _save_fight(
            row,
            transition,
            actor=user,
            extra=[("fight_rolled", data)],
            wounded=[target_id] if result.damage else [],
        )


# --- the health track outside a fight: rulings and healing -----------------------------


def _play_now(session: GameSession, now: float | None = None) -> float:
    """The play instant now (epoch seconds less the session's Time out)."""
    return pause_of(session).play(_now() if now is None else now)


def _heal_due(track: rules.HealthTrack, start: float) -> float | None:
    healed = rules.heal(track, 0)
    return None if healed.next_in is None else start + healed.next_in


def _store_track(
    presence: Presence,
    track: rules.HealthTrack,
    session: GameSession,
    *,
    start: float | None = None,
) -> None:
    """Save ``track`` on ``presence`` and (re)start its healing clock at
    ``start`` (default: the play instant now; the seed is silent on whether
    new damage resets the healing under way: it does here)."""
    start = _play_now(session) if start is None else start
    presence.track_aggravated = track.aggravated
    presence.track_lethal = track.lethal
    presence.track_bashing = track.bashing
    presence.heal_start = start if track.marked else None
    presence.heal_due = _heal_due(track, start) if track.marked else None
    presence.save(update_fields=[*Presence.TRACK, "heal_start", "heal_due"])


def _track_ruling(
    *, session: GameSession, character: Character, user, msg_id: str, action: str, change
) -> Presence:
    with transaction.atomic():
        _claim(user, msg_id, action)
        session = _lock_session(session.pk, for_play=False)
        _ensure_narrator(user, session.chronicle)
        _ensure_dice_pools(session)
        if character.chronicle_id != session.chronicle_id:
            raise ActionRefused("That character is not in this chronicle.")
        presence = _presence_for_update(session.pk, character.pk)
        before = story_sheet(character, session).track
        after, data = change(before)
        _store_track(presence, after, session)
        Event.objects.create(
            session=session,
            kind=action.replace(".", "_"),
            data={
                "character": character.pk,
                "before": before.picture,
                "after": after.picture,
                **data,
            },
            actor=user if user.is_authenticated else None,
        )
        groups = [character_group(character.pk), narrators_group(session.pk)]
        broadcast_on_commit(
            groups, CHARACTER_UPDATED, character_id=character.pk, session_id=session.pk
        )
        _touch_fights(session.pk, character.pk)
        return presence


def _touch_fights(session_id: int, character_id: int) -> None:
    """A live fight holding ``character_id`` shows her track: bump it so its
    screens redraw (after commit)."""
    for row in StoryCombat.objects.filter(session_id=session_id, ended_at__isnull=True):
        if character_id in fight_ids(row):
            StoryCombat.objects.filter(pk=row.pk).update(version=F("version") + 1)
            broadcast_on_commit(
                [character_group(pk) for pk in fight_ids(row)] + [narrators_group(session_id)],
                FIGHT_UPDATED,
                fight_id=row.pk,
                session_id=session_id,
                version=row.version + 1,
            )


def _points(points: int) -> int:
    if isinstance(points, bool) or not isinstance(points, int) or not 1 <= points <= MAX_POINTS:
        raise RulesError(f"Mark 1 to {MAX_POINTS} points.")
    return points


def _reason(reason: str) -> str:
    reason = " ".join(str(reason or "").split())[:MAX_STAKES]
    if not reason:
        raise ActionRefused("A ruling needs a reason (a fall, fire, a spell…).")
    return reason


def track_mark(
    *,
    session: GameSession,
    character: Character,
    points: int,
    damage_type: str,
    reason: str,
    user,
    msg_id: str,
) -> Presence:
    """A narrator's ruling: ``points`` (1–10) of ``damage_type`` on
    ``character``'s track tonight (a fall, fire, a spell), marked as the
    seed marks damage (``take_damage``), with a ``reason`` logged in the
    history (event ``track_mark``). Allowed during a Time out. Raises
    ActionRefused (not a narrator, not a dice-pool chronicle, absent, no
    reason), RulesError (points out of range)."""
    points_ = _points(points)
    kind = _parse(rules.DamageType, damage_type, "Damage is bashing, lethal or aggravated.")
    why = _reason(reason)

    def change(track: rules.HealthTrack) -> tuple[rules.HealthTrack, dict]:
        damaged = rules.take_damage(track, points_, kind)
        return damaged.track, {"points": points_, "damage_type": kind.value, "reason": why}

    return _track_ruling(
        session=session,
        character=character,
        user=user,
        msg_id=msg_id,
        action="track.mark",
        change=change,
    )


def track_heal(
    *, session: GameSession, character: Character, points: int, reason: str, user, msg_id: str
) -> Presence:
    """A narrator's ruling: ``points`` (1–10) of ``character``'s wounds heal
    at once, from the right (a spell, Mana), ``reason`` logged (event
    ``track_heal``). Allowed during a Time out."""
    points_ = _points(points)
    why = _reason(reason)

    def change(track: rules.HealthTrack) -> tuple[rules.HealthTrack, dict]:
        healed = []
        while len(healed) < points_ and (wound := track.rightmost_wound) is not None:
            healed.append(wound.value)
            track = track.without_rightmost()
        return track, {"points": len(healed), "healed": healed, "reason": why}

    return _track_ruling(
        session=session,
        character=character,
        user=user,
        msg_id=msg_id,
        action="track.heal",
        change=change,
    )


def _heal_presence(presence: Presence, session: GameSession, now: float) -> bool:
    """Apply natural healing to one presence at play instant ``now``; True
    if a point healed."""
    if presence.heal_start is None:
        return False
    track = rules.HealthTrack(
        max(1, story_sheet(presence.character, session).health),
        presence.track_aggravated,
        presence.track_lethal,
        presence.track_bashing,
    )
    healed = rules.heal(track, max(0.0, now - presence.heal_start))
    if not healed.healed:
        return False
    _store_track(presence, healed.track, session, start=presence.heal_start + healed.seconds_used)
    Event.objects.create(
        session=session,
        kind="track_healed",
        data={
            "character": presence.character_id,
            "healed": [k.value for k in healed.healed],
            "after": healed.track.picture,
        },
    )
    broadcast_on_commit(
        [character_group(presence.character_id), narrators_group(session.pk)],
        CHARACTER_UPDATED,
        character_id=presence.character_id,
        session_id=session.pk,
    )
    _touch_fights(session.pk, presence.character_id)
    return True


def story_heal_apply(session_id: int, now: float | None = None) -> int:
    """Heal every track of the session whose next point is due at ``now``
    (epoch seconds; default now), from the stored instants (seeds/003
    "Healing": bashing 15 minutes, lethal two days, aggravated a week, from
    the right). A Time out stops the clock (play instants). One indexed
    query when nothing is due; none heals after the session ended. Returns
    how many presences healed."""
    now = _now() if now is None else now
    session = GameSession.objects.select_related("chronicle").filter(pk=session_id).first()
    if session is None or session.ended_at is not None or session.time_out:
        return 0
    play = _play_now(session, now)
    due = list(
        Presence.objects.filter(session_id=session_id, heal_due__lte=play).values_list(
            "pk", flat=True
        )
    )
    if not due:
        return 0
    changed = 0
    with transaction.atomic():
        rows = Presence.objects.select_related("character").filter(pk__in=due)
        if connection.features.has_select_for_update:
            rows = rows.select_for_update(of=("self",))
        for presence in rows:
            changed += _heal_presence(presence, session, play)
    return changed


def story_heal_tick(session_id: int) -> int:
    """:func:`story_heal_apply` from a heartbeat: never raises."""
    try:
        return story_heal_apply(session_id)
    except Exception:  # noqa: BLE001 - a heartbeat must not fail on healing
        log.exception("healing of session %s failed", session_id)
        return 0


def story_night(previous: Presence | None, *, health: int, now: float | None = None) -> dict:
    """The track fields of her presence at a new session: what natural
    healing (seeds/003 "Healing") has left of last session's track by
    ``now``, counting the time since it started healing (play instants of
    the previous session: its Time outs left out, the days between sessions
    counted). Bashing wounds heal in 15 minutes each, so in practice lethal
    and aggravated ones carry; the healing under way keeps its progress.
    ``health``: her Health boxes. ``{}`` for no previous presence or an
    unhurt track."""
    if previous is None or not (
        previous.track_aggravated or previous.track_lethal or previous.track_bashing
    ):
        return {}
    now = _now() if now is None else now
    track = rules.HealthTrack(
        max(1, health, previous.track_aggravated + previous.track_lethal + previous.track_bashing),
        previous.track_aggravated,
        previous.track_lethal,
        previous.track_bashing,
    )
    start = previous.heal_start
    play_then = pause_of(previous.session).play(now)
    if start is None:
        start = play_then
    healed = rules.heal(track, max(0.0, play_then - start))
    fields: dict[str, Any] = {
        "track_aggravated": healed.track.aggravated,
        "track_lethal": healed.track.lethal,
        "track_bashing": healed.track.bashing,
    }
    if healed.track.marked and healed.next_in is not None:
        # the new session starts with no Time out: its play instants are epoch seconds
        progress = (play_then - start) - healed.seconds_used
        fields["heal_start"] = now - progress
        fields["heal_due"] = now - progress + (healed.next_in - healed.seconds_used)
    return fields


def heal_next_in(presence: Presence | None, session: GameSession | None) -> float | None:
    """Seconds of play until her next point heals (None: nothing to heal or
    no session). No query but the session's Time out already read."""
    if presence is None or session is None or presence.heal_due is None:
        return None
    return max(0.0, presence.heal_due - _play_now(session))
