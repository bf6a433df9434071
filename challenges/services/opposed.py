"""Opposed challenges between two players: open, bid (or relent), throw,
declare after a tie. ``challenge_bid`` and ``challenge_throw`` also serve the
player's side of a static challenge or simple test. seeds/000 "Challenges"."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import transaction

from challenges import rules
from challenges.models import Challenge
from challenges.rules import ChallengeState, Kind, Side, Transition
from challenges.services._core import (
    MAX_STAKES,
    ActionRefused,
    _claim,
    _clean_bids,
    _ensure_player,
    _lock_characters,
    _lock_session_ruleset,
    _now,
    _parse,
)
from challenges.services._reads import (
    READS_ALL,
    READS_HELD,
    READS_NOTHING,
    _presence_seats,
    combatants,
)
from challenges.services._writes import _move, _save, _side
from challenges.services.npcs import npc_answer_due
from characters.models import Character, GameSession, Presence


def challenge_open(
    *,
    session: GameSession,
    challenger: Character,
    defender: Character,
    category: str,
    bids: Sequence[str],
    is_attack: bool = False,
    stakes: str = "",
    surprise: bool = False,
    weapon: str = "",
    power: str = "",
    user,
    msg_id: str,
) -> Challenge:
    """A player challenges another character present tonight.

    ``bids`` are Trait names of ``category`` ("physical", "social", "mental"),
    two when her wounds ask it (``met_classic``). ``surprise`` (``ukm``), the
    ``weapon`` she wields (one of her sheet's) and the ``power`` she uses are
    shown to the defender before she answers (seeds/004 Surprise, "Weapons").
    Raises ActionRefused (not her character, not present, time out), RulesError
    (an illegal bid), AlreadyDone (repeated ``msg_id``). seeds/000 "Challenges".
    """
    _ensure_player(user, challenger)
    category_ = _parse(rules.Category, category, "Choose Physical, Social or Mental.")
    bids = _clean_bids(bids)
    with transaction.atomic():
        _claim(user, msg_id, "challenge.open")
        session = _lock_session_ruleset(session.pk, for_play=True)
        if challenger.chronicle_id != session.chronicle_id:
            raise ActionRefused("That character is not in this chronicle.")
        _lock_characters(challenger.pk, defender.pk)
        seated = _presence_seats(session.pk, [challenger.pk, defender.pk])
        for character in (challenger, defender):
            if character.pk not in seated or seated[character.pk][1] == Presence.Status.ABSENT:
                raise ActionRefused(f"{character.name} is not present tonight.")
            if seated[character.pk][1] == Presence.Status.BREAK:
                if character is challenger:
                    raise ActionRefused(
                        "You are on a break (out of character): come back before you challenge."
                    )
                raise ActionRefused(
                    f"{character.name} is on a break (out of character): "
                    f"nobody can challenge {character.name} now."
                )
        health = {pk: level for pk, (level, _) in seated.items()}
        fighters = combatants([challenger, defender], session, health=health)
        transition = rules.open_opposed(
            ruleset=session.chronicle_ruleset,
            challenger=fighters[challenger.pk],
            defender=fighters[defender.pk],
            category=category_,
            bids=bids,
            is_attack=bool(is_attack),
            stakes=str(stakes)[:MAX_STAKES],
            surprise=bool(surprise),
            weapon=str(weapon or "")[:100],
            power=str(power or "")[:100],
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
        challenge = _save(challenge, None, transition, actor=user)
        # An auto-answering NPC defender answers at once (issue 11 section 4).
        return npc_answer_due(challenge)


def challenge_bid(
    *,
    challenge_id: int,
    character: Character,
    bids: Sequence[str] | None,
    stakes: str = "",
    weapon: str = "",
    user,
    msg_id: str,
) -> Challenge:
    """The defender answers an opposed challenge (with her stated action,
    ``stakes``, and the ``weapon`` she wields), or the player of a static
    challenge bids. ``bids`` empty or None = relent (seeds/000 "Relenting")."""
    bids = _clean_bids(bids)

    def move(challenge: Challenge, state: ChallengeState) -> Transition:
        side = _side(challenge, character, user)
        if state.kind == Kind.STATIC and side == Side.CHALLENGER:
            return rules.bid(state, bids=bids or None, now=_now())
        if side == Side.DEFENDER:
            return rules.respond(
                state,
                bids=bids or None,
                stakes=str(stakes or "")[:MAX_STAKES],
                weapon=str(weapon or "")[:100],
                now=_now(),
            )
        raise rules.RulesError("It is not your turn to bid.")

    return _move(
        challenge_id=challenge_id,
        user=user,
        msg_id=msg_id,
        action="challenge.relent" if not bids else "challenge.bid",
        move=move,
        # A relent reads nothing of the combatants; a bid, her free copies and health.
        reads=READS_ALL if bids else READS_NOTHING,
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
        challenge_id=challenge_id,
        user=user,
        msg_id=msg_id,
        action="challenge.throw",
        move=move,
        reads=READS_NOTHING,
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
        challenge_id=challenge_id,
        user=user,
        msg_id=msg_id,
        action="challenge.declare",
        move=move,
        reads=READS_HELD,
    )
