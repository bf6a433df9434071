"""Challenges a narrator opens for one character: static challenges and simple
tests (seeds/000 "Static Challenges", "Simple Tests"). The player then plays
her side through :mod:`challenges.services.opposed`."""

from __future__ import annotations

import secrets
from collections.abc import Callable

from django.db import transaction

from challenges import rules
from challenges.models import Challenge
from challenges.rules import Combatant, Kind, Transition
from challenges.services._core import (
    MAX_STAKES,
    ActionRefused,
    _claim,
    _ensure_narrator,
    _lock_characters,
    _lock_session,
    _now,
    _parse,
)
from challenges.services._reads import combatant
from challenges.services._writes import _save
from characters.models import Character, GameSession
from characters.services import presence_join


def _narrator_open(
    *,
    session: GameSession,
    character: Character,
    kind: Kind,
    user,
    msg_id: str,
    open_: Callable[[Combatant, str], Transition],
    **fields,
) -> Challenge:
    with transaction.atomic():
        _claim(user, msg_id, f"{kind.value}.open")
        session = _lock_session(session.pk, for_play=False)
        _ensure_narrator(user, session.chronicle)
        if character.chronicle_id != session.chronicle_id:
            raise ActionRefused("That character is not in this chronicle.")
        _lock_characters(character.pk)
        presence_join(session=session, character=character)
        transition = open_(combatant(character, session), session.chronicle.ruleset)
        challenge = Challenge(
            session=session,
            kind=kind,
            challenger=character,
            narrator=user,
            stakes=transition.state.stakes,
            **fields,
        )
        return _save(challenge, None, transition, actor=user)


def static_open(
    *,
    session: GameSession,
    character: Character,
    category: str,
    difficulty: int,
    narrator_throw: str | None = None,
    stakes: str = "",
    user,
    msg_id: str,
) -> Challenge:
    """A narrator sets a static challenge for ``character``: ``difficulty`` is a
    Trait count; the narrator's throw is drawn with ``secrets`` unless given.
    The player then bids (or relents) and throws. seeds/000 "Static Challenges".
    """
    category_ = _parse(rules.Category, category, "Choose Physical, Social or Mental.")
    throw = (
        _parse(rules.Throw, narrator_throw, "Throw Rock, Paper or Scissors.")
        if narrator_throw
        else None
    )
    try:
        difficulty = int(difficulty)
    except (TypeError, ValueError):
        raise ActionRefused("The difficulty is a number of Traits.") from None

    def open_(player: Combatant, ruleset: str) -> Transition:
        return rules.open_static(
            ruleset=ruleset,
            challenger=player,
            category=category_,
            difficulty=difficulty,
            narrator_throw=throw,
            choose=secrets.choice,
            stakes=str(stakes)[:MAX_STAKES],
            now=_now(),
        )

    return _narrator_open(
        session=session,
        character=character,
        kind=Kind.STATIC,
        user=user,
        msg_id=msg_id,
        open_=open_,
        category=category_.value,
        difficulty=difficulty if difficulty > 0 else None,
    )


def simple_test_open(
    *,
    session: GameSession,
    character: Character,
    narrator_throw: str | None = None,
    stakes: str = "",
    narrator_initiated: bool = False,
    difficult: bool = False,
    user,
    msg_id: str,
) -> Challenge:
    """A narrator asks ``character`` for a simple test: she throws against the
    narrator (drawn with ``secrets`` unless given); a win succeeds, a tie by
    the chronicle's rules: ``met_classic`` succeeds (seeds/000 "Simple
    Tests"); ``ukm`` goes to the initiator (the player, unless
    ``narrator_initiated``), and a ``difficult`` test needs an outright win
    (seeds/004 "Simple Test", "Difficult Test"; RulesError where the ruleset
    has no difficult tests)."""
    throw = (
        _parse(rules.Throw, narrator_throw, "Throw Rock, Paper or Scissors.")
        if narrator_throw
        else None
    )

    def open_(player: Combatant, ruleset: str) -> Transition:
        return rules.open_simple(
            ruleset=ruleset,
            challenger=player,
            narrator_throw=throw,
            choose=secrets.choice,
            stakes=str(stakes)[:MAX_STAKES],
            narrator_initiated=bool(narrator_initiated),
            difficult=bool(difficult),
            now=_now(),
        )

    return _narrator_open(
        session=session,
        character=character,
        kind=Kind.SIMPLE,
        user=user,
        msg_id=msg_id,
        open_=open_,
    )
