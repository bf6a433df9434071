"""What happens in a challenge between the bids and the result: relenting,
Negative Traits named, Traits added to a bid, Blood spent, Rage to pre-empt,
retests called and answered, and a lost test accepted. Each is one move of
the rules engine (``challenges.rules``) under :func:`_move`'s locks, and every
rule it applies comes from the chronicle's preset (seeds/000 for
``met_classic``, seeds/004 for ``ukm``)."""

from __future__ import annotations

from collections.abc import Sequence

from challenges import rules
from challenges.models import Challenge
from challenges.rules import ChallengeState, Transition
from challenges.services._core import ActionRefused, _clean_bids, _now
from challenges.services._reads import READS_ALL, READS_HELD, READS_NOTHING, READS_POOLS
from challenges.services._writes import _move, _side
from characters.models import Character

MAX_NAME = 100  # characters of a Negative Trait, Gift, Ability or Discipline named


def _name(value, what: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_NAME:
        raise ActionRefused(f"Name a {what}.")
    return value


def _whole(value, what: str) -> int | None:
    if value is None or value == "":
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ActionRefused(f"Give {what} as a whole number.") from None


def _player_move(
    challenge_id: int, character: Character, user, msg_id: str, action: str, reads: str, step
) -> Challenge:
    """One move of ``character``'s side: ``step(state, side)`` → Transition."""

    def move(challenge: Challenge, state: ChallengeState) -> Transition:
        return step(state, _side(challenge, character, user))

    return _move(
        challenge_id=challenge_id, user=user, msg_id=msg_id, action=action, move=move, reads=reads
    )


def challenge_relent(*, challenge_id: int, character: Character, user, msg_id: str) -> Challenge:
    """``character`` relents: she loses, nobody loses a Trait, the other side's
    stated action happens. When the preset allows it: the defender answering
    (``met_classic``), either side until the first test (``ukm``), the player
    of a static challenge before she bids. seeds/000 "Initial Bid"; seeds/004
    "The Challenge". Raises RulesError when she may not relent now."""
    return _player_move(
        challenge_id,
        character,
        user,
        msg_id,
        "challenge.relent",
        READS_NOTHING,
        lambda state, side: rules.relent(state, side=side, now=_now()),
    )


def challenge_negative(
    *, challenge_id: int, character: Character, name: str, user, msg_id: str
) -> Challenge:
    """``character`` names a Negative Trait she believes the other side has
    (free text: she is never shown the other's list). Reads her free Traits,
    since she must be able to pay if wrong. seeds/000, seeds/004 "Negative
    Traits"."""
    name = _name(name, "Negative Trait")
    return _player_move(
        challenge_id,
        character,
        user,
        msg_id,
        "challenge.negative",
        READS_ALL,
        lambda state, side: rules.call_negative(state, side=side, name=name, now=_now()),
    )


def challenge_add_bids(
    *, challenge_id: int, character: Character, bids: Sequence[str], user, msg_id: str
) -> Challenge:
    """``character`` adds the Traits a Negative Trait call made her owe
    (``met_classic``, seeds/000 "Negative Traits")."""
    bids = _clean_bids(bids)
    if not bids:
        raise ActionRefused("Choose a Trait to add to your bid.")
    return _player_move(
        challenge_id,
        character,
        user,
        msg_id,
        "challenge.add_bid",
        READS_ALL,
        lambda state, side: rules.add_bids(state, side=side, bids=bids, now=_now()),
    )


def challenge_blood(
    *, challenge_id: int, character: Character, amount, user, msg_id: str
) -> Challenge:
    """``character`` spends Blood for extra Physical Traits before the test
    (``ukm``, seeds/004 "Expending Blood")."""
    amount = _whole(amount, "the Blood you spend")
    if amount is None:
        raise ActionRefused("Say how much Blood you spend.")
    return _player_move(
        challenge_id,
        character,
        user,
        msg_id,
        "challenge.blood",
        READS_POOLS,
        lambda state, side: rules.spend_blood(state, side=side, amount=amount, now=_now()),
    )


def challenge_preempt(
    *, challenge_id: int, character: Character, gift: str, user, msg_id: str
) -> Challenge:
    """The defender spends a point of Rage to pre-empt the challenge with a
    Gift (``met_classic``, seeds/000 "Order of Challenges"): the challenge is
    set aside, her Gift goes first."""
    gift = _name(gift, "Gift")

    def step(state: ChallengeState, side) -> Transition:
        if side is not rules.Side.DEFENDER:
            raise rules.RulesError("Only the defender can pre-empt a challenge.")
        return rules.preempt(state, gift=gift, now=_now())

    return _player_move(challenge_id, character, user, msg_id, "challenge.preempt", READS_ALL, step)


def challenge_retest(
    *,
    challenge_id: int,
    character: Character,
    kind: str,
    traits: Sequence[str] = (),
    count=None,
    name: str = "",
    user,
    msg_id: str,
) -> Challenge:
    """The loser of the last test calls a retest: ``kind`` "overbid" (with the
    new Trait she risks under ``met_classic``, and her count), "ability" or
    "discipline" (``name``), "willpower". See ``rules.call_retest``."""
    kind_ = rules.RetestKind(kind) if kind in {k.value for k in rules.RetestKind} else None
    if kind_ is None:
        raise ActionRefused("There is no such retest.")
    traits = _clean_bids(traits)
    count_ = _whole(count, "your count")
    name = "" if not name else _name(name, "Ability or Discipline")
    return _player_move(
        challenge_id,
        character,
        user,
        msg_id,
        "challenge.retest",
        # An overbid risks a new Trait (her free copies), a Willpower retest spends
        # Willpower; the others read her Abilities and Disciplines as opened.
        {rules.RetestKind.OVERBID: READS_ALL, rules.RetestKind.WILLPOWER: READS_POOLS}.get(
            kind_, READS_HELD
        ),
        lambda state, side: rules.call_retest(
            state, side=side, kind=kind_, traits=traits, count=count_, name=name, now=_now()
        ),
    )


def challenge_answer(
    *,
    challenge_id: int,
    character: Character,
    count=None,
    name: str = "",
    cancel: bool = False,
    user,
    msg_id: str,
) -> Challenge:
    """The other side answers a retest called against her: her count against
    an overbid, her Ability against an ability retest (``name``; empty for
    none), ``cancel`` with the same Discipline. See ``rules.answer_retest``."""
    count_ = _whole(count, "your count")
    name = "" if not name else _name(name, "Ability")
    return _player_move(
        challenge_id,
        character,
        user,
        msg_id,
        "challenge.answer",
        READS_HELD,
        lambda state, side: rules.answer_retest(
            state, side=side, count=count_, name=name, cancel=bool(cancel), now=_now()
        ),
    )


def challenge_accept(*, challenge_id: int, character: Character, user, msg_id: str) -> Challenge:
    """The loser of the last test takes no retest: the challenge is settled."""
    return _player_move(
        challenge_id,
        character,
        user,
        msg_id,
        "challenge.accept",
        READS_NOTHING,
        lambda state, side: rules.accept(state, side=side, now=_now()),
    )


__all__ = [
    "challenge_accept",
    "challenge_add_bids",
    "challenge_answer",
    "challenge_blood",
    "challenge_negative",
    "challenge_preempt",
    "challenge_relent",
    "challenge_retest",
]
