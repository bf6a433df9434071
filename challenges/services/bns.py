"""Opposed challenges settled by test pools (issue 12, ruleset ``bns``,
seeds/002): open, answer, throw, retest, accept, and a narrator's void or
settle; an auto-answering NPC's moves. The only code that writes a
``Challenge`` of kind :data:`~challenges.models.POOLS_KIND`.

Each move is one transaction, as the MET moves (:mod:`challenges.services`):
it claims the client's message id (a repeat is AlreadyDone and changes
nothing), locks the session (refused during a time out) and the challenge,
rebuilds the engine's :class:`~challenges.rules.bns.BnsChallengeState` with
each side's Willpower as it stands tonight, asks :mod:`challenges.rules.bns`
for the move, then saves the state (``stage``/``outcome`` columns filled as
the MET ones, so dashboards and history sort it), a Test row per test with
both throws, the engine's events, Willpower spent on each side's presence,
and on a result the damage into the defender's presence, her fate when
Pierce the Heart killed or staked her, one "effect" Event per effect, the
Immunity row of a failed Mental or Social challenge, and what the effects
do in the combat holding them; ids are broadcast after commit. Which engine a chronicle
plays is read from its ruleset's flags (``Ruleset.test_pools``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from challenges.models import POOLS_KIND, Challenge, Event, Test
from challenges.realtime import (
    CHALLENGE_UPDATED,
    CHARACTER_UPDATED,
    broadcast_on_commit,
    character_group,
    narrators_group,
)
from challenges.rows import committed_rows
from challenges.rules import Immunity, Outcome, RulesError, Side, Stage, bns, get_ruleset
from challenges.rules.engine import Chooser
from challenges.services._core import (
    _PRESENCE,
    ActionRefused,
    _claim,
    _ensure_narrator,
    _ensure_player,
    _lock_challenge,
    _lock_characters,
    _lock_session,
    _now,
    _rows,
)
from challenges.services._reads import _presence_seats
from challenges.services._writes import _MOVED_FIELDS, _RULED_FIELDS, _side
from challenges.services.combat import combat_note_challenge, combat_now
from challenges.services.rulings import _reason, _rule
from characters.attribute_sheets import AttributeSheet, attribute_sheets
from characters.models import Character, Chronicle, GameSession, Presence
from characters.models import Immunity as ImmunityRow

MAX_MANEUVERS_SENT = 4  # maneuvers in one frame: above the rule's two, a guard

#: ``Challenge.stage`` of each engine stage (the MET stage that reads the same
#: on a dashboard: waiting on the defender, on throws, on a retest, over).
STAGE_OF = {
    bns.BnsStage.ANSWER: Stage.RESPONSE,
    bns.BnsStage.THROWS: Stage.THROWS,
    bns.BnsStage.RETEST: Stage.RETEST,
    bns.BnsStage.RESOLVED: Stage.RESOLVED,
}
#: ``Challenge.outcome`` of each result, for the attacker (the challenger).
OUTCOME_OF = {
    bns.Result.SUCCESS: Outcome.CHALLENGER_WINS,
    bns.Result.EXCEPTIONAL: Outcome.CHALLENGER_WINS,
    bns.Result.FAILURE: Outcome.DEFENDER_WINS,
    bns.Result.VOID: Outcome.VOID,
}
_TRACKS = {t.value: t for t in bns.WoundTrack}


def test_pools_played(chronicle: Chronicle) -> bool:
    """``chronicle`` plays challenges of test pools (its ruleset's
    ``test_pools`` flag); False for an unknown ruleset."""
    try:
        return get_ruleset(chronicle.ruleset).test_pools
    except RulesError:
        return False


def fighter_of(
    character: Character,
    sheet: AttributeSheet,
    *,
    free_maneuver_used: bool = False,
    immunities: Sequence[Immunity] = (),
) -> bns.Fighter:
    """The engine's :class:`~challenges.rules.bns.Fighter` of ``character``
    from her sheet tonight (``characters.attribute_sheets``): Attributes,
    Skills by name, current Willpower (``willpower_left``) of her permanent
    rating, her Physical focus, the wound track tonight's damage has reached
    (Healthy for a Stock NPC, who has none), Stock NPC and "cannot be knocked
    out" as on the sheet (a vampire never can be, seeds/002 Knock Out), and
    mortal or vampire from her sheet's creature (Pierce the Heart). The
    caller adds ``free_maneuver_used`` (her combat's record) and her
    ``immunities`` tonight (:func:`immunities_of`). No query."""
    track = sheet.wound_track.casefold() or bns.WoundTrack.HEALTHY.value
    return bns.Fighter(
        name=character.name,
        physical=sheet.physical,
        social=sheet.social,
        mental=sheet.mental,
        skills={s.name: s.rating for s in sheet.skills},
        willpower=min(sheet.willpower_left, sheet.willpower),
        willpower_max=sheet.willpower,
        focus=sheet.focus or None,
        stock_npc=sheet.stock_npc,
        wound_track=_TRACKS.get(track, bns.WoundTrack.HEALTHY),
        knockout_immune=sheet.no_knockout or sheet.creature == "vampire",
        mortal=sheet.creature == "mortal",
        vampire=sheet.creature == "vampire",
        immunities=tuple(immunities),
        free_maneuver_used=free_maneuver_used,
        character_id=character.pk,
    )


def immunities_of(
    session_id: int, character_id: int, attacker_id: int, now: float
) -> list[Immunity]:
    """``character_id``'s immunities to ``attacker_id`` at the session still
    running at ``now`` (epoch seconds), from the Immunity rows (one query):
    the one store of the rule, in a combat and out of one, so it outlasts a
    restart. seeds/002 "Retrying Failed Attacks"."""
    rows = ImmunityRow.objects.filter(
        session_id=session_id,
        character_id=character_id,
        attacker_id=attacker_id,
        until__gt=datetime.fromtimestamp(now, tz=UTC),
    ).values_list("power", "until")
    return [Immunity(attacker_id, power, until.timestamp()) for power, until in rows]


def _fate_refusal(character: Character, sheet: AttributeSheet, *, attacker: bool) -> str:
    """Why ``character`` may not take part tonight ("" if she may): dead,
    she neither challenges nor is challenged; staked, she cannot challenge
    (seeds/002 Pierce the Heart)."""
    if sheet.fate == "dead":
        return f"{character.name} is dead."
    if sheet.fate == "staked" and attacker:
        return f"{character.name} is staked: she cannot act."
    return ""


def _maneuvers(raw: Sequence[str]) -> list[tuple[str, str] | str]:
    """Maneuvers as a phone sends them: "disarm" (paid with Willpower) or
    "disarm:focus" (paid with her focus's free maneuver or an ally's assist)."""
    if isinstance(raw, str):
        raw = [raw]
    if len(raw) > MAX_MANEUVERS_SENT or not all(isinstance(m, str) and m for m in raw):
        raise ActionRefused("That is not a valid choice of maneuvers.")
    out: list[tuple[str, str] | str] = []
    for item in raw:
        name, colon, paid = item.partition(":")
        out.append((name, paid) if colon else name)
    return out


def bns_open(
    *,
    session: GameSession,
    attacker: Character,
    defender: Character,
    attack: str,
    maneuvers: Sequence[str] = (),
    power: str = "",
    power_skill: str = "",
    surprise: bool = False,
    first_round: bool = False,
    staking: bool = False,
    escape: bool = False,
    user,
    msg_id: str,
) -> Challenge:
    """``attacker`` (a player's character, or an NPC her narrator runs)
    challenges ``defender``, both present tonight and not on a break.

    ``attack``: "brawl", "melee", "thrown", "firearms", or "mental"/"social"
    with the ``power`` used (and the Skill its pool adds, ``power_skill``).
    ``maneuvers``: "knock_out" (paid with 1 Willpower, spent at once) or
    "knock_out:focus" (her Physical focus's free maneuver). ``surprise``,
    ``first_round``: the target is surprised in the first round of combat
    (Knock Out needs both; inside a combat, ``first_round`` holds only
    while its round is the first); ``staking``: the weapon stakes (Pierce the Heart).
    Inside a combat, the combat says whether her focus's free maneuver is
    spent and whether she is blinded (she then misses without Fighting
    Blind). ``escape``: she tries to escape ``defender``'s Grapple in their
    live combat ("brawl" or "melee", no maneuver; her simple action); a
    win frees her at once, a loss keeps her grappled; no damage either way.
    An auto-answering NPC defender answers at once. Returns the
    challenge. Raises ActionRefused (not her character, not present or on a
    break, dead or staked, a chronicle that does not play test pools, time
    out, an escape from someone not grappling her), RulesError (an illegal
    attack or maneuver, a defender immune to her power, her simple action
    used), AlreadyDone (repeated ``msg_id``).
    seeds/002 "Tests and Challenges", "Common Test Pools", "Combat
    Maneuvers" (Grapple).
    """
    _ensure_player(user, attacker)
    uses = _maneuvers(maneuvers)
    with transaction.atomic():
        _claim(user, msg_id, "bns.open")
        session = _lock_session(session.pk, for_play=True)
        if not test_pools_played(session.chronicle):
            raise ActionRefused("This chronicle does not play test pools: bid Traits instead.")
        if attacker.chronicle_id != session.chronicle_id:
            raise ActionRefused("That character is not in this chronicle.")
        if defender.chronicle_id != session.chronicle_id:
            raise ActionRefused("That character is not in this chronicle.")
        _lock_characters(attacker.pk, defender.pk)
        seated = _presence_seats(session.pk, [attacker.pk, defender.pk])
        for character in (attacker, defender):
            status = seated.get(character.pk, (None, Presence.Status.ABSENT))[1]
            if status == Presence.Status.ABSENT:
                raise ActionRefused(f"{character.name} is not present tonight.")
            if status == Presence.Status.BREAK:
                if character is attacker:
                    raise ActionRefused(
                        "You are on a break (out of character): come back before you challenge."
                    )
                raise ActionRefused(
                    f"{character.name} is on a break (out of character): "
                    f"nobody can challenge {character.name} now."
                )
        sheets = attribute_sheets([attacker, defender], session)
        for character, attacks in ((attacker, True), (defender, False)):
            refusal = _fate_refusal(character, sheets[character.pk], attacker=attacks)
            if refusal:
                raise ActionRefused(refusal)
        now = _now()
        combat = combat_now(session.pk, attacker.pk)
        in_combat = None if combat is None else combat.fighter(attacker.pk)
        if escape and (in_combat is None or defender.pk not in in_combat.grappled_by):
            # Grapples live in the combat (seeds/002 Grapple): none, nothing to escape.
            raise ActionRefused(f"{defender.name} is not grappling you.")
        transition = bns.open_challenge(
            attacker=fighter_of(
                attacker,
                sheets[attacker.pk],
                free_maneuver_used=in_combat is not None and in_combat.focus_used,
            ),
            defender=fighter_of(
                defender,
                sheets[defender.pk],
                immunities=immunities_of(session.pk, defender.pk, attacker.pk, now),
            ),
            attack=attack,
            power=power or "",
            power_skill=power_skill or "",
            maneuvers=uses,
            surprise=bool(surprise),
            # In a combat its round says whether this is the first: a phone's
            # claim past it counts for nothing (a Knock Out is then refused).
            first_round=bool(first_round) and (combat is None or combat.first_round),
            staking=bool(staking),
            attacker_blind=in_combat is not None and in_combat.blinded > 0,
            escape=bool(escape),
            now=now,
        )
        # In a combat, the round's rules first (seeds/002 "Maximum Attacks Per
        # Round"): refused here, nothing of the challenge is saved.
        combat_note_challenge(
            session=session,
            attacker=attacker,
            defender=defender,
            category=transition.state.attack.category.value,
            power=transition.state.power,
            failed=None,
            focus=transition.state.focus_used,
            escape=transition.state.escape,
            now=transition.state.stage_since,
        )
        challenge = Challenge(
            session=session,
            kind=POOLS_KIND,
            challenger=attacker,
            defender=defender,
            category=transition.state.attack.category.value,
            is_attack=transition.state.attack.physical,
            stakes=transition.state.power,
        )
        challenge = _save(challenge, None, transition, actor=user)
        return bns_npc_due(challenge)


def bns_answer(
    *, challenge_id: int, character: Character, defence: str | None = None, user, msg_id: str
) -> Challenge:
    """The defender answers with ``defence`` ("dodge", "social", "mental";
    None: the only one allowed): both pools are fixed and shown to both
    phones, and the first test begins. seeds/002 "Common Test Pools"."""

    def move(challenge: Challenge, state: bns.BnsChallengeState) -> bns.BnsTransition:
        if _side(challenge, character, user) is not Side.DEFENDER:
            raise RulesError("Only the defender answers.")
        return bns.answer(state, defence=defence or None, now=_now())

    return _move(
        challenge_id=challenge_id, user=user, msg_id=msg_id, action="bns.answer", move=move
    )


def bns_throw(
    *, challenge_id: int, character: Character, throw: str, user, msg_id: str
) -> Challenge:
    """``character``'s throw ("rock", "paper", "scissors") in the current
    test, hidden from the other side until both are in. seeds/002 "Tests and
    Challenges"."""

    def move(challenge: Challenge, state: bns.BnsChallengeState) -> bns.BnsTransition:
        side = _side(challenge, character, user)
        return bns.throw(state, side=side, throw=throw, now=_now())

    return _move(challenge_id=challenge_id, user=user, msg_id=msg_id, action="bns.throw", move=move)


def bns_retest(*, challenge_id: int, character: Character, user, msg_id: str) -> Challenge:
    """The side that lost the first test spends 1 Willpower (her presence's
    Willpower spent tonight) to retest; the second test is final. seeds/002
    "Exceptional Success" (the retest paragraph)."""

    def move(challenge: Challenge, state: bns.BnsChallengeState) -> bns.BnsTransition:
        return bns.retest(state, side=_side(challenge, character, user), now=_now())

    return _move(
        challenge_id=challenge_id, user=user, msg_id=msg_id, action="bns.retest", move=move
    )


def bns_accept(*, challenge_id: int, character: Character, user, msg_id: str) -> Challenge:
    """The side that lost the first test takes no retest: the test stands."""

    def move(challenge: Challenge, state: bns.BnsChallengeState) -> bns.BnsTransition:
        return bns.accept(state, side=_side(challenge, character, user), now=_now())

    return _move(
        challenge_id=challenge_id, user=user, msg_id=msg_id, action="bns.accept", move=move
    )


def bns_void(*, challenge_id: int, reason: str, user, msg_id: str) -> Challenge:
    """A narrator of its chronicle voids an open challenge with a ``reason``
    (kept in the history and shown on both phones): no damage, no effect;
    Willpower spent stays spent. Allowed during a time out. RULES.md
    "Disputes"."""
    why = _reason(reason)

    def move(challenge: Challenge, state: bns.BnsChallengeState) -> bns.BnsTransition:
        _ensure_narrator(user, Chronicle(pk=challenge.session_chronicle_id))
        transition = bns.void(state, reason=why, now=_now())
        _rule(challenge, "voided", why, user)
        return transition

    return _move(
        challenge_id=challenge_id,
        user=user,
        msg_id=msg_id,
        action="bns.void",
        move=move,
        for_play=False,
    )


def bns_settle(*, challenge_id: int, winner: str, reason: str, user, msg_id: str) -> Challenge:
    """A narrator settles an open challenge for ``winner`` ("challenger": the
    attacker succeeds, never exceptionally, damage and effects as for a
    success; "defender": the attack fails) with a ``reason``. Allowed during
    a time out. RULES.md "Disputes"."""
    why = _reason(reason)
    if winner not in (Side.CHALLENGER.value, Side.DEFENDER.value):
        raise ActionRefused("Settle it for the attacker or the defender.")

    def move(challenge: Challenge, state: bns.BnsChallengeState) -> bns.BnsTransition:
        _ensure_narrator(user, Chronicle(pk=challenge.session_chronicle_id))
        transition = bns.settle(state, winner=winner, reason=why, now=_now())
        who = state.attacker if winner == Side.CHALLENGER.value else state.defender
        _rule(challenge, f"settled for {who.name}", why, user)
        return transition

    return _move(
        challenge_id=challenge_id,
        user=user,
        msg_id=msg_id,
        action="bns.settle",
        move=move,
        for_play=False,
    )


# --- the write path -----------------------------------------------------------


def _refreshed(state: bns.BnsChallengeState, session_id: int) -> bns.BnsChallengeState:
    """``state`` with each side's Willpower as it stands tonight (one query):
    her permanent rating less what her presence has spent, plus what this
    challenge spent (already counted there), so a retest sees Willpower spent
    elsewhere since the challenge opened."""
    ids = [f.character_id for f in (state.attacker, state.defender) if f.character_id is not None]
    if not ids:
        return state
    spent = dict(
        _rows(
            f"SELECT character_id, willpower_spent FROM {_PRESENCE} "
            f"WHERE session_id = %s AND character_id IN ({', '.join(['%s'] * len(ids))})",
            [session_id, *ids],
        )
    )
    fighters = {}
    for side in Side:
        who = state.fighter(side)
        if who.character_id not in spent:
            continue
        now = who.willpower_max - spent[who.character_id] + state.willpower_spent(side)
        fighters[side] = replace(who, willpower=max(0, min(who.willpower_max, now)))
    return replace(
        state,
        attacker=fighters.get(Side.CHALLENGER, state.attacker),
        defender=fighters.get(Side.DEFENDER, state.defender),
    )


def _move(
    *,
    challenge_id: int,
    user,
    msg_id: str,
    action: str,
    move: Callable[[Challenge, bns.BnsChallengeState], bns.BnsTransition],
    for_play: bool = True,
) -> Challenge:
    """One move under the locks (see the module doc); ``for_play`` False: a
    narrator's ruling, allowed during a time out."""
    with transaction.atomic():
        _claim(user, msg_id, action)
        challenge = _lock_challenge(challenge_id, for_play=for_play)
        if challenge.kind != POOLS_KIND:
            raise ActionRefused("That challenge is not played with test pools.")
        _lock_characters(challenge.challenger_id, challenge.defender_id)
        before = _refreshed(bns.BnsChallengeState.from_dict(challenge.state), challenge.session_id)
        transition = move(challenge, before)
        challenge = _save(challenge, before, transition, actor=user)
        return bns_npc_due(challenge)


def _save(
    challenge: Challenge,
    before: bns.BnsChallengeState | None,
    transition: bns.BnsTransition,
    *,
    actor,
) -> Challenge:
    """Persist a transition: the row (state, stage, outcome), changed Test
    rows, the events, Willpower spent by each side since ``before``, and on
    the result the damage and effects on the defender; broadcast after
    commit (both phones, the dashboards; the sheets whose Willpower or damage
    changed)."""
    state = transition.state
    challenge.state = state.to_dict()
    challenge.stage = STAGE_OF[state.stage].value
    challenge.stage_since = datetime.fromtimestamp(state.stage_since, tz=UTC)
    challenge.outcome = OUTCOME_OF[state.result].value if state.result else ""
    newly_resolved = state.stage is bns.BnsStage.RESOLVED and (
        before is None or before.stage is not bns.BnsStage.RESOLVED
    )
    if newly_resolved:
        challenge.resolved_at = timezone.now()
    if challenge.pk is None:
        challenge.save()
    else:
        challenge.version += 1
        ruled = getattr(challenge, "ruled", False)
        challenge.save(update_fields=_RULED_FIELDS if ruled else _MOVED_FIELDS)

    old_tests = before.tests if before else ()
    for number, test in enumerate(state.tests, start=1):
        if number <= len(old_tests) and old_tests[number - 1] == test:
            continue
        fields_ = {
            "challenger_throw": test.attacker_throw.value if test.attacker_throw else "",
            "defender_throw": test.defender_throw.value if test.defender_throw else "",
            "winner": test.winner.value if test.winner else "",
            "tie": test.tie,
            "retest": "willpower" if test.retest_by else "",
            "by": test.retest_by.value if test.retest_by else "",
        }
        if number > len(old_tests) or not Test.objects.filter(
            challenge_id=challenge.pk, number=number
        ).update(**fields_):
            Test.objects.create(challenge=challenge, number=number, **fields_)

    actor_ = actor if actor is not None and actor.is_authenticated else None
    events = [
        Event(
            session_id=challenge.session_id,
            challenge=challenge,
            kind=e.kind,
            data=e.data,
            actor=actor_,
        )
        for e in transition.events
    ]
    changed: set[int] = set()
    for side in Side:
        more = state.willpower_spent(side) - (before.willpower_spent(side) if before else 0)
        who = state.fighter(side).character_id
        if more > 0 and who is not None:
            Presence.objects.filter(session_id=challenge.session_id, character_id=who).update(
                willpower_spent=F("willpower_spent") + more
            )
            changed.add(who)
    if newly_resolved:
        target = state.defender.character_id
        _save_immunity(challenge, state)
        fate = _fate_of(state)
        if fate and target is not None:
            Presence.objects.filter(session_id=challenge.session_id, character_id=target).update(
                fate=fate
            )
            changed.add(target)
        if state.damage and target is not None:
            Presence.objects.filter(session_id=challenge.session_id, character_id=target).update(
                damage=F("damage") + state.damage
            )
            changed.add(target)
        for inflicted in state.effects:
            events.append(
                Event(
                    session_id=challenge.session_id,
                    challenge=challenge,
                    kind="effect",
                    data={
                        "character": target,
                        "effect": inflicted.effect.value,
                        "label": inflicted.effect.label,
                        "seconds": inflicted.seconds,
                        "until": inflicted.until,
                    },
                    actor=actor_,
                )
            )
            if target is not None:
                changed.add(target)
    Event.objects.bulk_create(events)
    if newly_resolved:
        # Settles it in the combat holding them, if any, with what the
        # maneuvers did (grappled, prone, blinded, unconscious; killed or
        # staked takes her out) and a won escape (seeds/002 "Combat
        # Maneuvers"); a voided one counts, but fails nobody.
        won = state.result in (bns.Result.SUCCESS, bns.Result.EXCEPTIONAL)
        combat_note_challenge(
            session=challenge.session,
            attacker=challenge.challenger,
            defender=challenge.defender,
            category=state.attack.category.value,
            power=state.power,
            failed=state.result is bns.Result.FAILURE,
            effects=[(i.effect.value, i.until) for i in state.effects],
            escape=state.escape,
            escaped=won and state.escape,
            now=state.stage_since,
        )

    version = challenge.version
    touched = sorted({challenge.challenger_id, challenge.defender_id} - {None})
    transaction.on_commit(lambda: committed_rows.remember(challenge))
    broadcast_on_commit(
        [character_group(c) for c in touched] + [narrators_group(challenge.session_id)],
        CHALLENGE_UPDATED,
        challenge_id=challenge.pk,
        session_id=challenge.session_id,
        version=version,
    )
    for character_id in sorted(changed):
        # Her Willpower and wound boxes on the roster row and on her phone.
        broadcast_on_commit(
            [narrators_group(challenge.session_id), character_group(character_id)],
            CHARACTER_UPDATED,
            character_id=character_id,
            session_id=challenge.session_id,
        )
    return challenge


_FATES = {bns.Effect.KILLED: "dead", bns.Effect.STAKED: "staked"}


def _fate_of(state: bns.BnsChallengeState) -> str:
    """ "dead" or "staked" when a resolved Pierce the Heart left the
    defender so (her presence's ``fate``), else ""."""
    return next((_FATES[i.effect] for i in state.effects if i.effect in _FATES), "")


def _save_immunity(challenge: Challenge, state: bns.BnsChallengeState) -> None:
    """The Immunity row of a failed Mental or Social challenge: the defender
    is immune to the attacker's use of that power until ``immune_until``
    (``BnsOptions.immunity_seconds`` after it ended), in a combat or out of
    one; :func:`bns_open` reads it back (:func:`immunities_of`). seeds/002
    "Retrying Failed Attacks"."""
    if state.immune_until is None or not challenge.challenger_id or not challenge.defender_id:
        return
    ImmunityRow.objects.create(
        session_id=challenge.session_id,
        character_id=challenge.defender_id,
        attacker_id=challenge.challenger_id,
        power=state.power[:100],
        until=datetime.fromtimestamp(state.immune_until, tz=UTC),
    )


# --- NPCs -----------------------------------------------------------------------


def bns_npc_due(
    challenge: Challenge,
    *,
    choose: Chooser | None = None,
    now: float | None = None,
    sides: dict | None = None,
) -> Challenge:
    """Every move due from an auto-answering NPC (no player, auto-answer on)
    in ``challenge`` (saved, locked by the caller's transaction), chosen by
    :func:`challenges.rules.bns.npc_move` (its best defence, a throw drawn by
    ``choose``, default ``services.npcs.draw_throw``: ``secrets.choice``; a
    Willpower retest when it lost and has some), one saved transition each.
    Nothing when resolved, when no side is such an NPC, during a time out or
    after the session's end (it answers at Resume). ``sides`` ({side: ...}):
    the sides played so (default: ``npcs.npc_sides``, the NPCs')."""
    from challenges.services import npcs

    if challenge.stage == Stage.RESOLVED.value or challenge.kind != POOLS_KIND:
        return challenge
    sides = npcs.npc_sides(challenge) if sides is None else sides
    if not sides:
        return challenge
    if not npcs.in_play(challenge):
        return challenge
    before = _refreshed(bns.BnsChallengeState.from_dict(challenge.state), challenge.session_id)
    moves = bns.npc_moves(
        before,
        {side: True for side in sides},
        choose=choose or npcs.draw_throw,
        now=_now() if now is None else now,
    )
    for transition in moves:
        challenge = _save(challenge, before, transition, actor=None)
        before = transition.state
    return challenge


def bns_end(challenge: Challenge, reason: str) -> None:
    """Void an open challenge of test pools as its session ends (called by
    ``services.session`` under its locks): no actor, nobody hurt."""
    before = bns.BnsChallengeState.from_dict(challenge.state)
    _save(challenge, before, bns.void(before, reason=reason, now=_now()), actor=None)
