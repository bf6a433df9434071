"""Storytelling rolls (issue 13, ruleset ``storytelling``, seeds/003): a
narrator calls for a roll from a player (her phone rolls it on one tap), rolls
for an NPC or rolls openly on the dashboard; a contested action (both sides
roll, the most successes wins); an extended action (successes gathered over
rolls a fixed interval apart, toward a target, within a budget). The only
code that writes a :class:`~challenges.models.DiceRoll`.

Every roll is made here, on the server, with
:func:`challenges.services.dice.server_dice` (``secrets``), and kept as its
row plus an Event (the evening's log). Each move is one transaction, as the
bns moves (:mod:`challenges.services.bns`): it claims the client's message
id (a repeat is AlreadyDone and changes nothing), locks the session (refused
during a Time out), builds the pool from her sheet tonight with
:func:`challenges.rules.storytelling.dice_pool` (her wound penalty applied,
a Willpower point taken off ``Presence.willpower_spent``), rolls, saves and
broadcasts the row's id after commit (``roll.updated``). Which chronicles
roll is read from the ruleset's flag (``Chronicle.has_dice_pools``).

An extended action's time is play time: epoch seconds less the session's
Time out (:class:`challenges.rules.clocks.Pause`), so its countdowns stand
still during a Time out. Its first roll may be made at once; roll ``n``
(counting from 0) once ``n`` intervals have passed since it began.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from challenges import words
from challenges.models import DiceRoll, Event
from challenges.realtime import (
    CHARACTER_UPDATED,
    ROLL_UPDATED,
    broadcast_on_commit,
    character_group,
    narrators_group,
)
from challenges.rules import RulesError, Side, storytelling
from challenges.rules.storytelling import ATTRIBUTES, SKILLS, DicePool
from challenges.services import dice as server
from challenges.services._core import (
    ActionRefused,
    _claim,
    _ensure_narrator,
    _ensure_player,
    _lock_session,
    _narrates,
    _now,
)
from challenges.services._reads import _ensure_here
from challenges.services.clocks import pause_of
from characters.models import Character, GameSession, Presence
from characters.story_sheets import StorySheetView, story_sheet

MAX_MODIFIER = 10
"""A modifier's dice, either way: far above the seed's usual +2 to −2; a guard."""

MAX_MODIFIERS = 4
"""Modifiers with a reason on one roll: a guard against forged input."""

MAX_OPEN_DICE = 30
"""Dice in a narrator's open roll."""

MAX_TARGET = 100
"""An extended action's target successes, at most."""

EARLY_SECONDS = 0.5
"""An extended roll this close to its time is allowed (clocks and taps differ)."""


# --- what a pool is built from ----------------------------------------------------


def roll_spec(
    *,
    attribute: str,
    skill: str | None = None,
    specialty: bool = False,
    equipment: int = 0,
    modifiers: Sequence[tuple[str, int]] = (),
    willpower_allowed: bool = True,
) -> dict[str, Any]:
    """What a pool is built from, checked: ``{"attribute", "skill" (None: no
    Skill), "specialty", "equipment", "modifiers": [[reason, dice], ...],
    "willpower_allowed"}``. Raises ActionRefused for an unknown Attribute or
    Skill, a modifier beyond ±:data:`MAX_MODIFIER` dice, more than
    :data:`MAX_MODIFIERS` modifiers or one without a reason. seeds/003 "Dice
    Pools", "Modifiers"."""
    if attribute not in ATTRIBUTES:
        raise ActionRefused(f"There is no Attribute called {attribute!r}.")
    if skill is not None and skill not in SKILLS:
        raise ActionRefused(f"There is no Skill called {skill!r}.")
    if specialty and skill is None:
        raise ActionRefused("A Specialty needs a Skill.")
    cleaned = [(str(r).strip()[:100], int(n)) for r, n in modifiers if n]
    if len(cleaned) > MAX_MODIFIERS:
        raise ActionRefused(f"At most {MAX_MODIFIERS} modifiers on one roll.")
    for reason, dice in [("Equipment", int(equipment)), *cleaned]:
        if abs(dice) > MAX_MODIFIER:
            raise ActionRefused(f"A modifier is at most {MAX_MODIFIER} dice either way.")
        if not reason:
            raise ActionRefused("Give each modifier a reason.")
    return {
        "attribute": attribute,
        "skill": skill,
        "specialty": bool(specialty),
        "equipment": int(equipment),
        "modifiers": [list(m) for m in cleaned],
        "willpower_allowed": bool(willpower_allowed),
    }


def spec_label(spec: dict[str, Any]) -> str:
    """ "Dexterity + Stealth", "Wits" (no Skill), "Dexterity + Stealth
    (specialty)"."""
    label = spec["attribute"] + (f" + {spec['skill']}" if spec.get("skill") else "")
    return label + (" (specialty)" if spec.get("specialty") else "")


def spec_pool(spec: dict[str, Any], sheet: StorySheetView, *, willpower: bool = False) -> DicePool:
    """The engine's pool of ``spec`` for a character whose sheet tonight is
    ``sheet``: her dots, her wound penalty tonight, a Willpower point if
    ``willpower``. Raises RulesError (a Specialty she has not, one without
    dots in the Skill, a modifier called Willpower). seeds/003 "Dice Pools"."""
    skill = spec.get("skill")
    if spec.get("specialty") and skill:
        rated = next((s for s in sheet.skills if s.name == skill), None)
        if rated is None or not rated.specialties:
            raise RulesError(f"There is no Specialty in {skill} on this sheet.")
    return storytelling.dice_pool(
        attribute=(spec["attribute"], sheet.dots(spec["attribute"])),
        skill=(skill, sheet.dots(skill)) if skill else None,
        specialty=bool(spec.get("specialty")),
        willpower=willpower,
        equipment=int(spec.get("equipment") or 0),
        modifiers=[(str(r), int(n)) for r, n in spec.get("modifiers") or []],
        wound_penalty=sheet.wound_penalty,
    )


# --- locks and checks ----------------------------------------------------------------


def _story_session(session_id: int, *, for_play: bool = True) -> GameSession:
    """The session, locked as every move's (:func:`_lock_session`), of a
    chronicle that rolls dice pools; ActionRefused otherwise."""
    session = _lock_session(session_id, for_play=for_play)
    if not session.chronicle.has_dice_pools:
        raise ActionRefused("This chronicle does not roll dice pools.")
    return session


def _lock_roll(roll_id: int, *, for_play: bool = True) -> DiceRoll:
    """The roll row FOR UPDATE, after its session's lock (refused during a
    Time out when ``for_play``); ActionRefused if there is none."""
    session_id = DiceRoll.objects.filter(pk=roll_id).values_list("session_id", flat=True).first()
    if session_id is None:
        raise ActionRefused("There is no such roll.")
    session = _story_session(session_id, for_play=for_play)
    # OF self: PostgreSQL locks no row on the nullable side of the joins.
    row = (
        DiceRoll.objects.select_for_update(of=("self",))
        .select_related("character", "opponent")
        .get(pk=roll_id)
    )
    row.session = session
    return row


def _spend_willpower(session: GameSession, character: Character, sheet: StorySheetView) -> None:
    """One Willpower point off her presence tonight; ActionRefused when she has none left."""
    if sheet.willpower_left <= 0:
        raise ActionRefused(f"{character.name} has no Willpower left tonight.")
    Presence.objects.filter(session_id=session.pk, character_id=character.pk).update(
        willpower_spent=F("willpower_spent") + 1
    )


def _ensure_actor(user, character: Character, session: GameSession) -> None:
    """She plays ``character``, or narrates the chronicle (any character)."""
    if _narrates(user, session.chronicle_id):
        return
    _ensure_player(user, character)


def _willpower(want: bool, spec: dict[str, Any]) -> bool:
    if want and not spec.get("willpower_allowed", True):
        raise ActionRefused("The narrator did not allow Willpower on this roll.")
    return bool(want)


# --- saving --------------------------------------------------------------------------


def _save(
    row: DiceRoll, *, user, action: str, kind: str, data: dict[str, Any], spent: Sequence[int] = ()
) -> DiceRoll:
    """Save ``row`` (a new row, or its version bumped), log one Event ``kind``
    with ``data`` (the roll's id and label, and the client ``action`` that
    made it, for ``challenges.consistency``), and broadcast after commit:
    ``roll.updated`` to both characters' phones and the dashboards;
    ``character.updated`` for each character in ``spent`` (her Willpower)."""
    if row.pk is None:
        row.save()
    else:
        row.version += 1
        row.save()
    actor = user if user is not None and user.is_authenticated else None
    Event.objects.create(
        session_id=row.session_id,
        kind=kind,
        data={
            "roll": row.pk,
            "label": row.label,
            "character": row.character_id,
            "action": action,
            **data,
        },
        actor=actor,
    )
    touched = sorted({row.character_id, row.opponent_id} - {None})
    broadcast_on_commit(
        [character_group(c) for c in touched] + [narrators_group(row.session_id)],
        ROLL_UPDATED,
        roll_id=row.pk,
        session_id=row.session_id,
        version=row.version,
    )
    for character_id in sorted(set(spent)):
        broadcast_on_commit(
            [narrators_group(row.session_id), character_group(character_id)],
            CHARACTER_UPDATED,
            character_id=character_id,
            session_id=row.session_id,
        )
    return row


def _rolled(result: storytelling.Roll) -> dict[str, Any]:
    """What the log keeps of a roll: faces, successes, outcome."""
    return {
        "faces": list(result.faces),
        "successes": result.successes,
        "outcome": result.outcome.value,
    }


def _roll_now(row: DiceRoll, sheet: StorySheetView, *, willpower: bool) -> storytelling.Roll:
    """Roll ``row``'s pool for its character now (a Willpower point spent if
    ``willpower``) and keep it on the row."""
    pool = spec_pool(row.spec, sheet, willpower=willpower)
    if willpower:
        _spend_willpower(row.session, row.character, sheet)
    result = storytelling.roll(pool, server.server_dice())
    row.pool = pool.to_dict()
    row.result = result.to_dict()
    row.willpower_spent = int(willpower)
    row.rolled_at = timezone.now()
    return result


def _rolled_now(row: DiceRoll, sheet: StorySheetView, *, willpower: bool, user, action: str):
    """Roll ``row`` for its character now (:func:`_roll_now`; Willpower only
    where its spec allows it) and save it with its "roll_rolled" Event."""
    result = _roll_now(row, sheet, willpower=_willpower(willpower, row.spec))
    spent = [row.character_id] if willpower else []
    return _save(
        row, user=user, action=action, kind="roll_rolled", data=_rolled(result), spent=spent
    )


# --- a roll called for, an NPC's roll, an open roll --------------------------------------


def roll_call(
    *,
    session: GameSession,
    character: Character,
    spec: dict[str, Any],
    willpower: bool = False,
    user,
    msg_id: str,
) -> DiceRoll:
    """A narrator calls for a roll of ``spec`` (:func:`roll_spec`) from
    ``character``, present tonight: her phone shows what to roll and rolls it
    on her tap (:func:`roll_make`). A character with no player (an NPC) rolls
    at once (``willpower``: the narrator spends a point of hers, if
    ``spec`` allows it). Raises ActionRefused (not a narrator, not present,
    Time out, a chronicle without dice pools, no Willpower left), RulesError
    (a pool her sheet cannot make), AlreadyDone. seeds/003 "Dice Pools"."""
    with transaction.atomic():
        _claim(user, msg_id, "roll.call")
        session = _story_session(session.pk)
        _ensure_narrator(user, session.chronicle)
        _ensure_here(session, [character])
        sheet = story_sheet(character, session)
        spec_pool(spec, sheet)  # refused now, not on her tap
        row = DiceRoll(
            session=session,
            character=character,
            asked_by=user,
            kind=DiceRoll.Kind.CALLED,
            label=spec_label(spec),
            spec=spec,
        )
        if character.player_id is not None:
            return _save(row, user=user, action="roll.call", kind="roll_called", data={})
        row.kind = DiceRoll.Kind.NPC
        return _rolled_now(row, sheet, willpower=willpower, user=user, action="roll.call")


def roll_make(
    *, roll_id: int, character: Character, willpower: bool = False, user, msg_id: str
) -> DiceRoll:
    """``character``'s player rolls the roll a narrator called for, now, on
    the server (``willpower``: +3 dice for a Willpower point, if the narrator
    allowed it and she has one left). Raises ActionRefused (not her roll,
    already rolled, Time out, no Willpower left), AlreadyDone."""
    with transaction.atomic():
        _claim(user, msg_id, "roll.make")
        row = _lock_roll(roll_id)
        if row.kind != DiceRoll.Kind.CALLED or row.character_id != character.pk:
            raise ActionRefused("That roll is not yours to make.")
        _ensure_player(user, character)
        if row.is_over:
            raise ActionRefused("That roll is already made.")
        sheet = story_sheet(character, row.session)
        return _rolled_now(row, sheet, willpower=willpower, user=user, action="roll.make")


def roll_open(*, session: GameSession, dice: int, label: str, user, msg_id: str) -> DiceRoll:
    """A narrator rolls ``dice`` d10 openly on the dashboard (0: a chance
    die), for ``label`` ("Is the bridge watched?"). Raises ActionRefused (not a
    narrator, more than :data:`MAX_OPEN_DICE` dice, Time out), AlreadyDone.
    seeds/003 "Rolling Dice"."""
    if not 0 <= dice <= MAX_OPEN_DICE:
        raise ActionRefused(f"Roll 0 to {MAX_OPEN_DICE} dice.")
    label = (label or "").strip()[:200] or words.dice(dice)
    with transaction.atomic():
        _claim(user, msg_id, "roll.open")
        session = _story_session(session.pk)
        _ensure_narrator(user, session.chronicle)
        pool = DicePool((("Dice", dice),))
        result = storytelling.roll(pool, server.server_dice())
        row = DiceRoll(
            session=session,
            asked_by=user,
            kind=DiceRoll.Kind.OPEN,
            label=label,
            pool=pool.to_dict(),
            result=result.to_dict(),
            rolled_at=timezone.now(),
        )
        return _save(row, user=user, action="roll.open", kind="roll_rolled", data=_rolled(result))


# --- contested actions -------------------------------------------------------------------


def roll_contest(
    *,
    session: GameSession,
    character: Character,
    opponent: Character,
    spec: dict[str, Any],
    willpower: bool = False,
    label: str = "",
    user,
    msg_id: str,
) -> DiceRoll:
    """``character`` (her player, or a narrator) opens a contested action
    against ``opponent`` with the pool ``spec`` (a Willpower point if
    ``willpower``, spent when the dice are rolled); ``label``: what she tries.
    The opponent picks her resisting pool on her phone (or a narrator, for an
    NPC): :func:`roll_resist`. Raises ActionRefused (not hers, not present,
    herself, Time out, no Willpower left), RulesError, AlreadyDone.
    seeds/003 "Actions"."""
    with transaction.atomic():
        _claim(user, msg_id, "roll.contest")
        session = _story_session(session.pk)
        _ensure_actor(user, character, session)
        if character.pk == opponent.pk:
            raise ActionRefused("Contest someone else.")
        _ensure_here(session, [character, opponent])
        sheet = story_sheet(character, session)
        spec_pool(spec, sheet, willpower=willpower)
        if willpower and sheet.willpower_left <= 0:
            raise ActionRefused(f"{character.name} has no Willpower left tonight.")
        row = DiceRoll(
            session=session,
            character=character,
            opponent=opponent,
            asked_by=user,
            kind=DiceRoll.Kind.CONTESTED,
            label=(label or "").strip()[:200] or spec_label(spec),
            spec={**spec, "willpower": bool(willpower)},
        )
        return _save(
            row,
            user=user,
            action="roll.contest",
            kind="roll_contest_opened",
            data={"opponent": opponent.pk},
        )


def roll_resist(
    *,
    roll_id: int,
    character: Character,
    spec: dict[str, Any],
    willpower: bool = False,
    user,
    msg_id: str,
) -> DiceRoll:
    """The opponent of a contested action (her player, or a narrator for an
    NPC) resists with the pool ``spec``: the server rolls both pools (one
    :func:`~challenges.rules.storytelling.contested_action`, the acting side
    first) and the most successes wins; a tie as the options say (status
    quo). Willpower points are spent now. Raises ActionRefused (not her
    contest, already rolled, Time out, no Willpower left), RulesError,
    AlreadyDone. seeds/003 "Actions"."""
    with transaction.atomic():
        _claim(user, msg_id, "roll.resist")
        row = _lock_roll(roll_id)
        if row.kind != DiceRoll.Kind.CONTESTED or row.opponent_id != character.pk:
            raise ActionRefused("That contest is not yours to resist.")
        _ensure_player(user, character)
        if row.is_over:
            raise ActionRefused("That contest is already rolled.")
        session = row.session
        _ensure_here(session, [row.character, character])
        sheets = {c.pk: story_sheet(c, session) for c in (row.character, character)}
        acting_willpower = bool(row.spec.get("willpower"))
        pools = (
            spec_pool(row.spec, sheets[row.character_id], willpower=acting_willpower),
            spec_pool(spec, sheets[character.pk], willpower=willpower),
        )
        spent = []
        for who, want in ((row.character, acting_willpower), (character, willpower)):
            if want:
                _spend_willpower(session, who, sheets[who.pk])
                spent.append(who.pk)
        contest = storytelling.contested_action(
            challenger=pools[0], defender=pools[1], dice=server.server_dice()
        )
        row.pool, row.opponent_pool = pools[0].to_dict(), pools[1].to_dict()
        row.spec = {**row.spec, "opponent": spec}
        row.opponent_label = spec_label(spec)
        row.result = contest.to_dict()
        row.willpower_spent = len(spent)
        row.rolled_at = timezone.now()
        sides = {Side.CHALLENGER: row.character_id, Side.DEFENDER: character.pk}
        winner = None if contest.winner is None else sides[contest.winner]
        last = contest.rolls[-1]
        data = {
            "opponent": character.pk,
            "winner": winner,
            "successes": [last[0].successes, last[1].successes],
        }
        return _save(
            row, user=user, action="roll.resist", kind="roll_contested", data=data, spent=spent
        )


# --- extended actions --------------------------------------------------------------------


def play_now(session: GameSession) -> float:
    """The session's play instant now: epoch seconds less its Time out so far."""
    return pause_of(session).play(_now())


def extended_next_at(row: DiceRoll, state: storytelling.ExtendedAction) -> float:
    """The play instant from which the next roll of an extended action may be made."""
    return float(row.play_start or 0.0) + state.rolls_made * state.interval_seconds


def extended_end_at(row: DiceRoll, state: storytelling.ExtendedAction) -> float | None:
    """The play instant its time runs out (None: no limit): its start plus
    the rolls it allows × the interval."""
    left = state.rolls_left
    if left is None:
        return None
    return float(row.play_start or 0.0) + (state.rolls_made + left) * state.interval_seconds


def roll_extended(
    *,
    session: GameSession,
    character: Character,
    spec: dict[str, Any],
    target: int,
    interval_minutes: float,
    most_rolls: int | None = None,
    budget_minutes: float | None = None,
    label: str = "",
    user,
    msg_id: str,
) -> DiceRoll:
    """A narrator starts an extended action for ``character`` (present): the
    pool ``spec``, ``target`` successes, each roll standing for
    ``interval_minutes``, within ``most_rolls`` rolls and/or
    ``budget_minutes`` (None: no limit of that kind). Her phone shows the
    successes so far and counts down to her next roll and to the end of the
    time allowed. Raises ActionRefused (not a narrator, not present, Time
    out, a target above :data:`MAX_TARGET`), RulesError (a target below 1, a
    budget shorter than one roll, a pool her sheet cannot make), AlreadyDone.
    seeds/003 "Actions"."""
    if target > MAX_TARGET:
        raise ActionRefused(f"A target of at most {MAX_TARGET} successes.")
    with transaction.atomic():
        _claim(user, msg_id, "roll.extended")
        session = _story_session(session.pk)
        _ensure_narrator(user, session.chronicle)
        _ensure_here(session, [character])
        spec_pool(spec, story_sheet(character, session))
        transition = storytelling.start_extended(
            target=int(target),
            interval_seconds=float(interval_minutes) * 60,
            most_rolls=most_rolls,
            budget_seconds=None if budget_minutes is None else float(budget_minutes) * 60,
        )
        row = DiceRoll(
            session=session,
            character=character,
            asked_by=user,
            kind=DiceRoll.Kind.EXTENDED,
            label=(label or "").strip()[:200] or spec_label(spec),
            spec=spec,
            result=transition.state.to_dict(),
            play_start=play_now(session),
        )
        return _save(
            row,
            user=user,
            action="roll.extended",
            kind="roll_extended_started",
            data={"target": target},
        )


def roll_extended_roll(
    *, roll_id: int, character: Character, willpower: bool = False, user, msg_id: str
) -> DiceRoll:
    """The next roll of ``character``'s extended action (her player, or a
    narrator for an NPC), once its interval has passed in play time: its
    successes are added; it ends succeeded, out of time or by a dramatic
    failure (the engine's :func:`~challenges.rules.storytelling.extended_roll`).
    Raises ActionRefused (not hers, over, too early: "Your next roll is in
    4:10.", Time out, no Willpower left), AlreadyDone. seeds/003 "Actions"."""
    with transaction.atomic():
        _claim(user, msg_id, "roll.extended_roll")
        row = _lock_roll(roll_id)
        if row.kind != DiceRoll.Kind.EXTENDED or row.character_id != character.pk:
            raise ActionRefused("That extended action is not yours.")
        _ensure_player(user, character)
        state = storytelling.ExtendedAction.from_dict(row.result)
        if state.ended is not None:
            raise ActionRefused(f"That extended action is over. {state.summary}")
        wait = extended_next_at(row, state) - play_now(row.session)
        if wait > EARLY_SECONDS:
            seconds = int(wait + 0.999)
            raise ActionRefused(f"Your next roll is in {seconds // 60}:{seconds % 60:02d}.")
        sheet = story_sheet(character, row.session)
        pool = spec_pool(row.spec, sheet, willpower=_willpower(willpower, row.spec))
        if willpower:
            _spend_willpower(row.session, character, sheet)
        transition = storytelling.extended_roll(state, pool=pool, dice=server.server_dice())
        new = transition.state
        row.pool = pool.to_dict()
        row.result = new.to_dict()
        row.willpower_spent += int(willpower)
        if new.ended is not None:
            row.rolled_at = timezone.now()
        data = {**_rolled(new.rolls[-1]), "total": new.successes, "summary": new.summary}
        spent = [character.pk] if willpower else []
        return _save(
            row,
            user=user,
            action="roll.extended_roll",
            kind="roll_extended_rolled",
            data=data,
            spent=spent,
        )
