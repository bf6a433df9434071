"""Challenges a narrator opens for one character: static challenges and simple
tests (seeds/000 "Static Challenges", "Simple Tests"). The player then plays
her side through :mod:`challenges.services.opposed`."""

from __future__ import annotations

import secrets
from collections.abc import Callable

from django.db import transaction

from challenges import rules
from challenges.models import Challenge, PreparedStatic
from challenges.rules import Combatant, Kind, Transition
from challenges.services._core import (
    MAX_STAKES,
    ActionRefused,
    _claim,
    _ensure_narrator,
    _ensure_player,
    _lock_characters,
    _lock_session,
    _now,
    _parse,
)
from challenges.services._reads import combatant
from challenges.services._writes import _save
from challenges.services.npcs import npc_answer_due
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
        return _open_row(session, character, kind, user, open_, narrator=user, **fields)


def _open_row(
    session: GameSession,
    character: Character,
    kind: Kind,
    user,
    open_: Callable[[Combatant, str], Transition],
    **fields,
) -> Challenge:
    """Under the session's lock: mark her present, ask the engine, save the
    new challenge (its events, its broadcast)."""
    _lock_characters(character.pk)
    presence_join(session=session, character=character)
    transition = open_(combatant(character, session), session.chronicle.ruleset)
    challenge = Challenge(
        session=session,
        kind=kind,
        challenger=character,
        stakes=transition.state.stakes,
        **fields,
    )
    # An auto-answering NPC plays its side at once (issue 11 section 4).
    return npc_answer_due(_save(challenge, None, transition, actor=user))


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
    at_stake: str = "",
    user,
    msg_id: str,
) -> Challenge:
    """A narrator asks ``character`` for a simple test: she throws against the
    narrator (drawn with ``secrets`` unless given); a win succeeds, a tie by
    the chronicle's rules: ``met_classic`` succeeds (seeds/000 "Simple
    Tests"); ``ukm`` goes to the initiator (the player, unless
    ``narrator_initiated``), and a ``difficult`` test needs an outright win
    (seeds/004 "Simple Test", "Difficult Test"; RulesError where the ruleset
    has no difficult tests). ``at_stake``: the name of one of her Traits
    she bids on it, lost if she fails (RULES.md "Simple test": "nothing bid
    unless stated"); ActionRefused if she has no such Trait, RulesError if
    it is not free to bid."""
    throw = (
        _parse(rules.Throw, narrator_throw, "Throw Rock, Paper or Scissors.")
        if narrator_throw
        else None
    )

    name = " ".join(str(at_stake or "").split())[:100]
    trait = None
    if name:
        trait = character.traits.filter(name__iexact=name, negative=False).first()
        if trait is None:
            raise ActionRefused(f"{character.name} has no Trait '{name}' to put at stake.")

    def open_(player: Combatant, ruleset: str) -> Transition:
        return rules.open_simple(
            ruleset=ruleset,
            challenger=player,
            narrator_throw=throw,
            choose=secrets.choice,
            stakes=str(stakes)[:MAX_STAKES],
            narrator_initiated=bool(narrator_initiated),
            difficult=bool(difficult),
            category=rules.Category(trait.category) if trait else None,
            bids=[trait.name] if trait else (),
            now=_now(),
        )

    return _narrator_open(
        session=session,
        character=character,
        kind=Kind.SIMPLE,
        user=user,
        msg_id=msg_id,
        open_=open_,
        category=trait.category if trait else "",
    )


# --- issue 11, statics: a prepared static played from its QR code ---------------


def prepared_static_open(
    *, prepared: PreparedStatic, character: Character, user, msg_id: str
) -> Challenge:
    """A player who scanned ``prepared``'s QR code opens its static challenge
    for her ``character``, with no narrator: the prepared difficulty (a Trait
    count) and category, the object's overbid/retest permissions, the
    object's name as what is at stake, the narrator's throw drawn with
    ``secrets``. She then bids and throws on her phone as in any static
    challenge (:func:`challenges.services.challenge_bid`). seeds/000 "Static
    Challenges" ("notes on objects").

    ActionRefused (nothing changes): not her character, or of another
    chronicle; no session open, Time out; retired, another session's, or out
    of its time (:meth:`PreparedStatic.refusal`); she already tried it this
    session; no Trait of the category left to bid. RulesError: she may not
    initiate (Incapacitated)."""
    with transaction.atomic():
        _claim(user, msg_id, "static.prepared")
        _ensure_player(user, character)
        if character.chronicle_id != prepared.chronicle_id:
            raise ActionRefused("That character is not in this chronicle.")
        session = prepared.chronicle.open_session()
        prepared = PreparedStatic.objects.get(pk=prepared.pk)
        refusal = prepared.refusal(session)
        if refusal or session is None:
            raise ActionRefused(refusal)
        session = _lock_session(session.pk, for_play=True)
        tried = Challenge.objects.filter(session=session, prepared=prepared, challenger=character)
        if tried.exists():
            raise ActionRefused(f"{character.name} has already tried {prepared.name} tonight.")
        category = rules.Category(prepared.category)

        def open_(player: Combatant, ruleset: str) -> Transition:
            transition = rules.open_static(
                ruleset=ruleset,
                challenger=player,
                category=category,
                difficulty=prepared.difficulty,
                narrator_throw=None,
                choose=secrets.choice,
                stakes=prepared.name[:MAX_STAKES],
                object_overbids=prepared.may_overbid,
                object_retests=prepared.may_retest,
                now=_now(),
            )
            if not rules.legal_moves(transition.state, rules.Side.CHALLENGER).bid:
                raise ActionRefused(
                    f"You have no {category.label} Trait left to bid tonight "
                    f"(or too few for your health)."
                )
            return transition

        return _open_row(
            session,
            character,
            Kind.STATIC,
            user,
            open_,
            category=category.value,
            difficulty=prepared.difficulty,
            prepared=prepared,
        )
