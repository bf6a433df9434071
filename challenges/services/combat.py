"""Combat rounds of a ``bns`` chronicle (issue 12; seeds/002 "Resolving
Combat" to "Mass Combat"): a narrator starts a combat with the characters in
it, they act by initiative round after round, and the narrator advances,
reorders ties, adds or removes a character and ends it. The rules are
``challenges.rules.bns_combat``; this module keeps its state in a
:class:`~challenges.models.Combat` row.

Every move is keyword-only (``combat_<action>``) and one transaction, like a
mob scene's (:mod:`challenges.services.mob`): claim the client's message id,
lock the session (FOR SHARE; a Time out holds the round: every move but
:func:`combat_end` is refused while it lasts) and the combat row, ask the
engine, save the row and its events (kind ``combat_<engine event>``,
``data["combat"]`` the row's id), and broadcast ids after commit
(``combat.updated`` to every fighter's phones and the narrators).

Two functions join the single opposed challenge (``challenges.services.bns``)
to the rounds: :func:`combat_check_challenge` before a challenge opens and
:func:`combat_note_challenge` to record it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from django.db import connection, transaction
from django.utils import timezone

from challenges.models import Combat, Event
from challenges.realtime import (
    COMBAT_UPDATED,
    broadcast_on_commit,
    character_group,
    narrators_group,
)
from challenges.rules import RulesError
from challenges.rules import bns_combat as rules
from challenges.rules.core import Category
from challenges.rules.rulesets import get_ruleset
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
from characters.attribute_sheets import AttributeSheet, attribute_sheets
from characters.models import Character, GameSession

MAX_COMBAT = 30
"""Most characters in one combat (a guard against forged input)."""

Move = Callable[[Combat, rules.CombatState], rules.CombatTransition]


# --- the one adapter from a sheet to the combat's fighter -------------------------


def combat_fighter(character: Character, sheet: AttributeSheet) -> rules.Fighter:
    """The combat's view of ``character`` from her sheet tonight (``sheet``,
    :func:`characters.attribute_sheets.attribute_sheets`): her id, name,
    Physical and Mental (her initiative is the higher, seeds/002 "Resolving
    Combat") and, for a Garou, as many Rage rounds as the Rage she has left
    tonight (the seed is silent on who acts in Rage rounds: the narrator may
    change it, :func:`combat_set_rage`); 0 for anyone else. No query."""
    return rules.Fighter(
        fighter_id=character.pk,
        name=character.name,
        physical=sheet.physical,
        mental=sheet.mental,
        rage_rounds=sheet.rage_left if sheet.garou else 0,
    )


# --- locks, saving, broadcasting ---------------------------------------------------


def _ids(row: Combat) -> list[int]:
    """Everyone who was ever in the combat (so a removed character's phone
    learns she is out)."""
    state = row.state
    return [int(f["fighter_id"]) for f in (*state["fighters"], *state.get("removed", ()))]


def lock_live_row(model, pk: int, *, for_play: bool, noun: str):
    """A live fight's row (``model``: a bns :class:`Combat` or a Storytelling
    ``StoryCombat``), locked for a move: the session first (FOR SHARE,
    refused when over or, ``for_play``, in a Time out), then the row (FOR
    UPDATE where the database has it). ActionRefused ("There is no such
    ``noun``", "This ``noun`` is over") otherwise."""
    session_id = model.objects.filter(pk=pk).values_list("session_id", flat=True).first()
    if session_id is None:
        raise ActionRefused(f"There is no such {noun}.")
    _lock_session(session_id, for_play=for_play)
    rows = model.objects.filter(pk=pk)
    if connection.features.has_select_for_update:
        rows = rows.select_for_update()
    row = rows.get()
    if row.ended_at is not None:
        raise ActionRefused(f"This {noun} is over.")
    return row


def _lock_combat(combat_id: int, *, for_play: bool) -> Combat:
    """The combat row, locked for a move (:func:`lock_live_row`)."""
    return lock_live_row(Combat, combat_id, for_play=for_play, noun="combat")


def _event_kind(kind: str) -> str:
    """The Event kind of an engine event: ``combat_`` and its kind
    ("combat_action", "combat_round_started"; "combat_started" as is)."""
    return (kind if kind.startswith("combat_") else f"combat_{kind}")[:30]


def _save_combat(row: Combat, transition: rules.CombatTransition, *, actor) -> Combat:
    """Persist a transition: the state, the version, ``ended_at`` once over,
    the participants (kept to everyone ever in it), one Event per engine
    event, and ``combat.updated`` to the phones and narrators after commit."""
    state = transition.state
    row.state = state.to_dict()
    if state.ended and row.ended_at is None:
        row.ended_at = timezone.now()
    if row.pk is None:
        row.save()
    else:
        row.version += 1
        row.save()
    ids = _ids(row)
    row.participants.add(*ids)
    who = actor if actor is not None and actor.is_authenticated else None
    Event.objects.bulk_create(
        Event(
            session_id=row.session_id,
            kind=_event_kind(event.kind),
            data={"combat": row.pk, **event.data},
            actor=who,
        )
        for event in transition.events
    )
    broadcast_on_commit(
        [character_group(pk) for pk in ids] + [narrators_group(row.session_id)],
        COMBAT_UPDATED,
        combat_id=row.pk,
        session_id=row.session_id,
        version=row.version,
    )
    return row


def _combat_move(
    *, combat_id: int, user, msg_id: str, action: str, move: Move, for_play: bool = True
) -> Combat:
    """Run one move under the combat's locks; ``move(row, state)`` returns
    the engine's transition (or raises RulesError/ActionRefused: nothing
    is saved)."""
    with transaction.atomic():
        _claim(user, msg_id, action)
        row = _lock_combat(combat_id, for_play=for_play)
        before = rules.CombatState.from_dict(row.state)
        return _save_combat(row, move(row, before), actor=user)


def _narrator(user, row: Combat) -> None:
    _ensure_narrator(
        user, GameSession.objects.select_related("chronicle").get(pk=row.session_id).chronicle
    )


def _ensure_combat_rounds(session: GameSession) -> None:
    try:
        rounds = get_ruleset(session.chronicle.ruleset).combat_rounds
    except RulesError:
        rounds = False
    if not rounds:
        raise ActionRefused("This chronicle's rules have no combat rounds.")


def _fighters(session: GameSession, characters: Sequence[Character]) -> list[rules.Fighter]:
    """The fighters of ``characters``, each present tonight and not on a
    break (ActionRefused otherwise), from their sheets (:func:`combat_fighter`)."""
    _ensure_here(session, characters)
    sheets = attribute_sheets(characters, session) if characters else {}
    return [combat_fighter(c, sheets[c.pk]) for c in characters]


def _in_live_combat(session_id: int, ids: Sequence[int], *, but: int | None = None) -> str | None:
    """The name of one of ``ids`` already in a live combat of the session
    (other than ``but``), or None."""
    rows = Combat.objects.filter(session_id=session_id, ended_at__isnull=True)
    if but is not None:
        rows = rows.exclude(pk=but)
    for row in rows.only("state"):
        for f in row.state["fighters"]:
            if int(f["fighter_id"]) in ids:
                return str(f["name"])
    return None


# --- the narrator's moves -------------------------------------------------------------


def combat_start(
    *,
    session: GameSession,
    characters: Sequence[Character],
    surprise: int | None = None,
    rage_rounds: Mapping[int, int] | None = None,
    user,
    msg_id: str,
) -> Combat:
    """A narrator starts a combat of ``characters`` (two or more, present
    and not on a break, in no other live combat): turn 1, the everyman
    round, in initiative order (the higher of Physical and Mental; ties by
    name until she reorders them: the seed is silent). ``surprise``: the id
    of the character whose Surprise Action opens it (seeds/002 "Surprise
    Action"). ``rage_rounds``: {character id: Rage rounds} overriding the
    sheets' (a Garou's Rage left tonight). Raises ActionRefused (not a
    narrator, not a combat-rounds chronicle, absent, Time out, in another
    combat, too many), RulesError (fewer than two, twice, bad surprise or
    Rage rounds), AlreadyDone."""
    characters = list(characters)
    if len(characters) > MAX_COMBAT:
        raise ActionRefused(f"A combat takes at most {MAX_COMBAT} characters.")
    with transaction.atomic():
        _claim(user, msg_id, "combat.start")
        session = _lock_session(session.pk, for_play=True)
        _ensure_narrator(user, session.chronicle)
        _ensure_combat_rounds(session)
        fighters = _fighters(session, characters)
        busy = _in_live_combat(session.pk, [f.fighter_id for f in fighters])
        if busy is not None:
            raise ActionRefused(f"{busy} is already in a combat: end it first.")
        for pk, rounds in (rage_rounds or {}).items():
            if isinstance(rounds, bool) or not isinstance(rounds, int) or not 0 <= rounds <= 20:
                raise RulesError("Rage rounds are a whole number from 0 to 20.")
            fighters = [
                replace(f, rage_rounds=rounds) if f.fighter_id == pk else f for f in fighters
            ]
        transition = rules.start_combat(fighters=fighters, surprise=surprise, now=_now())
        return _save_combat(Combat(session=session, narrator=user), transition, actor=user)


def combat_reorder(*, combat_id: int, order: Sequence[int], user, msg_id: str) -> Combat:
    """A narrator sets the order of tied initiatives (``order``: every
    fighter's id once, initiatives still highest first). The seed names no
    tie rule: the narrator decides (seeds/002 "Resolving Combat")."""

    def move(row: Combat, state: rules.CombatState) -> rules.CombatTransition:
        _narrator(user, row)
        return rules.reorder(state, order=[int(i) for i in order], now=_now())

    return _combat_move(
        combat_id=combat_id, user=user, msg_id=msg_id, action="combat.reorder", move=move
    )


def combat_advance(
    *, combat_id: int, user, msg_id: str, character: Character | None = None
) -> Combat:
    """The acting ``character`` ends her initiative (her player, or a
    narrator for a character with no player), or a narrator moves play on
    (``character`` None): the next fighter acts, after the last one the next
    round (seeds/002 "Rounds and Turns"). RulesError when it is not her
    initiative."""
    if character is not None:
        _ensure_player(user, character)

    def move(row: Combat, state: rules.CombatState) -> rules.CombatTransition:
        if character is None:
            _narrator(user, row)
        by = None if character is None else character.pk
        return rules.advance(state, by=by, now=_now())

    return _combat_move(
        combat_id=combat_id, user=user, msg_id=msg_id, action="combat.advance", move=move
    )


def combat_set_rage(*, combat_id: int, character_id: int, rounds: int, user, msg_id: str) -> Combat:
    """A narrator sets how many Rage rounds of each turn a fighter acts in
    (the seed is silent on it; the sheet's Rage is only the start)."""

    def move(row: Combat, state: rules.CombatState) -> rules.CombatTransition:
        _narrator(user, row)
        return rules.set_rage_rounds(state, fighter=character_id, rounds=rounds, now=_now())

    return _combat_move(
        combat_id=combat_id, user=user, msg_id=msg_id, action="combat.rage", move=move
    )


def combat_add(*, combat_id: int, character: Character, user, msg_id: str) -> Combat:
    """A narrator brings ``character`` into the combat at her place by
    initiative (from the next round if her place has passed). ActionRefused
    if she is absent, on a break or in another live combat."""

    def move(row: Combat, state: rules.CombatState) -> rules.CombatTransition:
        _narrator(user, row)
        session = GameSession.objects.get(pk=row.session_id)
        (fighter,) = _fighters(session, [character])
        busy = _in_live_combat(row.session_id, [character.pk], but=row.pk)
        if busy is not None:
            raise ActionRefused(f"{busy} is already in another combat.")
        return rules.add_fighter(state, fighter=fighter, now=_now())

    return _combat_move(
        combat_id=combat_id, user=user, msg_id=msg_id, action="combat.add", move=move
    )


def combat_remove(
    *, combat_id: int, character_id: int, reason: str = "", user, msg_id: str
) -> Combat:
    """A narrator takes a fighter out (fled, down); play moves on if she
    was acting."""

    def move(row: Combat, state: rules.CombatState) -> rules.CombatTransition:
        _narrator(user, row)
        return rules.remove_fighter(
            state, fighter=character_id, reason=str(reason)[:MAX_STAKES], now=_now()
        )

    return _combat_move(
        combat_id=combat_id, user=user, msg_id=msg_id, action="combat.remove", move=move
    )


def combat_end(*, combat_id: int, reason: str = "", user, msg_id: str) -> Combat:
    """A narrator ends the combat; every later move is refused. A ruling:
    allowed during a Time out (like ending a mob scene)."""

    def move(row: Combat, state: rules.CombatState) -> rules.CombatTransition:
        _narrator(user, row)
        return rules.end_combat(state, reason=str(reason)[:MAX_STAKES], now=_now())

    return _combat_move(
        combat_id=combat_id,
        user=user,
        msg_id=msg_id,
        action="combat.end",
        move=move,
        for_play=False,
    )


def _end_combats(session: GameSession, reason: str) -> None:
    """End every live combat of ``session`` (the session ends; called under
    its lock)."""
    rows = Combat.objects.filter(session=session, ended_at__isnull=True)
    if connection.features.has_select_for_update:
        rows = rows.select_for_update()
    for row in rows.order_by("pk"):
        state = rules.CombatState.from_dict(row.state)
        _save_combat(row, rules.end_combat(state, reason=reason, now=_now()), actor=None)


# --- a fighter's moves --------------------------------------------------------------


ACTIONS = ("move", "other", "stand_up", "clear_eyes")
"""What a fighter's action from her phone may be: a move of some steps,
anything else that needs no challenge (draw a weapon, open a door), standing
up when prone, clearing her eyes when blinded (seeds/002 Knock Down,
Blinding Attack)."""


def combat_act(
    *,
    combat_id: int,
    character: Character,
    kind: str,
    what: str = "move",
    steps: int = 0,
    user,
    msg_id: str,
) -> Combat:
    """``character`` takes her ``kind`` action ("standard" or "simple") on
    her initiative: ``what`` "move" (``steps``, 1 to 3; 1 when prone),
    "other" (no challenge), "stand_up" (prone; simple) or "clear_eyes"
    (blinded; simple, two of them end it). A challenge is not taken here:
    it is opened as a challenge and recorded by
    :func:`combat_note_challenge`. seeds/002 "Standard and Simple Actions".
    RulesError: not her initiative, that action used, steps out of range."""
    _ensure_player(user, character)
    kind_ = _parse(rules.ActionKind, kind, "An action is standard or simple.")
    if what not in ACTIONS:
        raise ActionRefused("An action here is a move or another action.")

    def move(row: Combat, state: rules.CombatState) -> rules.CombatTransition:
        return rules.take_action(
            state,
            fighter=character.pk,
            kind=kind_,
            what=rules.ActionWhat(what),
            steps=steps,
            now=_now(),
        )

    return _combat_move(
        combat_id=combat_id, user=user, msg_id=msg_id, action="combat.act", move=move
    )


def combat_hold(*, combat_id: int, character: Character, user, msg_id: str) -> Combat:
    """The acting ``character`` holds her initiative to assist later in the
    round (seeds/002 "Mass Combat")."""
    _ensure_player(user, character)

    def move(row: Combat, state: rules.CombatState) -> rules.CombatTransition:
        return rules.hold(state, fighter=character.pk, now=_now())

    return _combat_move(
        combat_id=combat_id, user=user, msg_id=msg_id, action="combat.hold", move=move
    )


def combat_assist(
    *,
    combat_id: int,
    character: Character,
    attacker: int | None = None,
    attack: int | None = None,
    steps: int = 0,
    user,
    msg_id: str,
) -> Combat:
    """A mass combat tactic (seeds/002 "Mass Combat"): with ``attacker`` (a
    fighter's id, who has accepted) Assist Attacker, her standard action;
    with ``attack`` (a Physical challenge of this round, by its number in
    the combat) Assist Defender, her simple action, moving ``steps`` to the
    ally. Exactly one of the two."""
    _ensure_player(user, character)
    if (attacker is None) == (attack is None):
        raise ActionRefused("Assist an attacker or a defender.")

    def move(row: Combat, state: rules.CombatState) -> rules.CombatTransition:
        if attacker is not None:
            return rules.assist_attacker(state, helper=character.pk, attacker=attacker, now=_now())
        assert attack is not None
        return rules.assist_defender(
            state, helper=character.pk, attack=attack, steps=steps, now=_now()
        )

    return _combat_move(
        combat_id=combat_id, user=user, msg_id=msg_id, action="combat.assist", move=move
    )


# --- the join points with the opposed challenge ----------------------------------------


def _live_combat_of(session_id: int, ids: Sequence[int]) -> tuple[Combat | None, set[int]]:
    """The live combat of the session holding one of ``ids`` (None), and
    which of ``ids`` it holds."""
    for row in Combat.objects.filter(session_id=session_id, ended_at__isnull=True).order_by("pk"):
        inside = {int(f["fighter_id"]) for f in row.state["fighters"]} & set(ids)
        if inside:
            return row, inside
    return None, set()


def _challenge_args(attacker: int, defender: int, category, power: str, now: float) -> dict:
    try:
        category_ = Category(category)
    except ValueError:
        raise RulesError("A challenge is Physical, Social or Mental.") from None
    return {
        "fighter": attacker,
        "kind": rules.ActionKind.STANDARD,
        "what": rules.ActionWhat.CHALLENGE,
        "target": defender,
        "category": category_,
        "power": str(power or ""),
        "now": now,
    }


def _both_inside(row: Combat, inside: set[int], attacker: Character, defender: Character) -> None:
    if inside != {attacker.pk, defender.pk}:
        who, other = (attacker, defender) if attacker.pk in inside else (defender, attacker)
        raise RulesError(
            f"{who.name} is in a combat: a narrator adds {other.name} to it before they"
            " challenge each other."
        )


def combat_now(session_id: int, character_id: int) -> rules.CombatState | None:
    """The state of the live combat of the session holding ``character_id``
    (its round, her as it has her: focus's free maneuver spent, blinded,
    ...), or None outside a combat. One query. Outside a combat nothing is
    remembered between challenges: each Physical challenge is a fight of its
    own for the free maneuver (docs/rules.md "bns combat rounds")."""
    row, inside = _live_combat_of(session_id, [character_id])
    return None if row is None else rules.CombatState.from_dict(row.state)


def combat_check_challenge(
    *,
    session: GameSession,
    attacker: Character,
    defender: Character,
    category: str,
    power: str = "",
    now: float,
) -> None:
    """Join point for the opposed challenge, before it opens: may
    ``attacker`` challenge ``defender`` in ``category`` (with ``power``, the
    name a Mental or Social challenge needs) now? None when no live combat of
    the session holds either of them, or when the round allows it. Raises
    the engine's RulesError with a sentence a player can read when the round
    forbids it: not her initiative or her standard action used ("It is
    Grady's initiative, not Helen's."), the target's limit this round
    ("Grady has already been the target of two Physical challenges this
    round."), Mental or Social outside the everyman round; also when only
    one of them is in a combat (an immunity is the challenge's own check,
    ``challenges.services.bns``). Reads, writes nothing (one query).
    seeds/002 "Maximum Attacks Per Round", "Physical, Mental, and Social
    Attacks"."""
    row, inside = _live_combat_of(session.pk, [attacker.pk, defender.pk])
    if row is None:
        return None
    _both_inside(row, inside, attacker, defender)
    state = rules.CombatState.from_dict(row.state)
    rules.take_action(state, **_challenge_args(attacker.pk, defender.pk, category, power, now))
    return None


def combat_note_challenge(
    *,
    session: GameSession,
    attacker: Character,
    defender: Character,
    category: str,
    power: str = "",
    failed: bool | None,
    now: float,
    focus: bool = False,
    effects: Sequence[tuple[str, float | None]] = (),
    escape: bool = False,
    escaped: bool = False,
) -> Combat | None:
    """Join point for the opposed challenge: record that ``attacker``
    challenged ``defender`` in the combat holding them, inside the caller's
    transaction (the combat row is locked; its broadcast goes after commit).

    Call it twice: with ``failed`` None in the transaction that opens the
    challenge (it checks the round again under the lock, as
    :func:`combat_check_challenge`, takes the attacker's standard action and
    counts against the defender's limit this round, failed or not), then
    with ``failed`` True or False in the one that resolves it: that settles
    the oldest unsettled challenge of that attacker, defender and category,
    and never raises for one recorded (even if play moved on meanwhile or
    one of them was taken out). ``focus`` (on opening): the attack carries
    her Physical focus's free maneuver, spent for the rest of the combat
    (refused if spent already; seeds/002 "Physical Focuses in Combat").
    ``effects`` (on resolving): (effect, until) of each successful
    maneuver, passed to the combat's :func:`~challenges.rules.bns_combat.inflict`
    (grappled by the attacker, prone, blinded, unconscious until then;
    killed or staked takes her out). ``escape``: the challenge is the
    attacker's escape from the defender's grapple: on opening it takes her
    simple action (:data:`~challenges.rules.bns_combat.ActionWhat.ESCAPE`,
    refused unless the defender grapples her), counts against no limit and
    records no attack; on resolving, ``escaped`` (she won) frees her at once
    (:func:`~challenges.rules.bns_combat.release`: her standard action is
    hers again this round). seeds/002 Grapple. A single call with the
    outcome records and settles at once, under the round's checks. The
    immunity of a failed Mental or Social challenge is the challenge's
    (``challenges.services.bns``), not the combat's.

    Returns the combat row saved, or None when no live combat holds either
    of them. Raises RulesError (nothing changes) as
    :func:`combat_check_challenge` when a new challenge is refused."""
    with transaction.atomic():  # the caller's, or its own when called alone
        row, inside = _live_combat_of(session.pk, [attacker.pk, defender.pk])
        if row is None:
            return None
        rows = Combat.objects.filter(pk=row.pk)
        if connection.features.has_select_for_update:
            rows = rows.select_for_update()
        row = rows.get()
        state = rules.CombatState.from_dict(row.state)
        args = _challenge_args(attacker.pk, defender.pk, category, power, now)
        pending = next(
            (
                a
                for a in state.attacks
                if a.failed is None
                and a.attacker == attacker.pk
                and defender.pk in (a.target, a.shielded)
                and a.category is args["category"]
            ),
            None,
        )
        if escape and failed is not None:
            transition = rules.CombatTransition(state, ())  # no attack to settle
        elif escape:
            _both_inside(row, inside, attacker, defender)
            transition = rules.take_action(
                state,
                fighter=attacker.pk,
                kind=rules.ActionKind.SIMPLE,
                what=rules.ActionWhat.ESCAPE,
                target=defender.pk,
                now=now,
            )
        elif pending is not None and failed is not None:
            transition = rules.settle_attack(
                state, attack=pending.attack_id, failed=failed, now=now
            )
        else:
            _both_inside(row, inside, attacker, defender)
            transition = rules.take_action(state, **args, failed=failed, focus=focus)
        transition = _results(transition, attacker.pk, defender.pk, effects, escaped, now)
        return _save_combat(row, transition, actor=None)


def _results(
    transition: rules.CombatTransition,
    attacker: int,
    defender: int,
    effects: Sequence[tuple[str, float | None]],
    escaped: bool,
    now: float,
) -> rules.CombatTransition:
    """``transition`` followed by what a resolved challenge did in the
    combat: each effect on the defender, a won escape. A fighter no longer
    in the combat (taken out meanwhile) is skipped, never refused."""
    state, events = transition.state, list(transition.events)
    steps = [
        (rules.inflict, {"fighter": defender, "by": attacker, "effect": e, "until": until})
        for e, until in effects
    ]
    if escaped:
        steps.append((rules.release, {"fighter": attacker}))
    for move, kwargs in steps:
        try:
            step = move(state, now=now, **kwargs)
        except RulesError:
            continue
        state, events = step.state, [*events, *step.events]
    return rules.CombatTransition(state, tuple(events))
