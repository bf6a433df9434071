"""The shape of every client frame, checked before it reaches a service.

A client frame is a JSON object ``{"id": str, "action": str, ...fields}``; htmx's
websocket extension sends a form's fields, so numbers may come as strings of
digits ("12"). Each action has one pydantic model below: its fields, their types
and lengths; any other key is refused. ``parse_frame`` turns raw text into
``(action, fields)`` or raises ``FrameRefused`` with a message in plain words,
before any database work, so a refused frame changes nothing.

``ping`` and ``sync`` (the heartbeat) are checked for being JSON objects, and
a ping's echoed stamp ``v`` for being a short string (or missing, or null):
their handling belongs to the consumer.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from characters.names import clean_text

log = logging.getLogger(__name__)

HEARTBEAT = frozenset({"ping", "sync"})
MAX_NUMBER = 10**6  # ids and Trait counts; far above any real value
#: Longest stamp a ping may echo: a stamp is 16 characters (``heartbeat.digest``).
MAX_STAMP = 64
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class FrameRefused(Exception):
    """A frame that is not a well-formed action; ``str()`` is shown to the player.
    ``msg_id`` is the frame's id when one could be read (for the error reply)."""

    def __init__(self, message: str, msg_id: str | None = None):
        super().__init__(message)
        self.msg_id = msg_id


def _number(value: Any) -> Any:
    # A JSON number or a form field's digits; never a bool, a float or "1e9".
    if isinstance(value, bool):
        raise ValueError("must be a number")
    if isinstance(value, str):
        value = value.strip()
        if not value.isascii() or not value.isdigit() or len(value) > 7:
            raise ValueError("must be a number")
        return int(value)
    if not isinstance(value, int):
        raise ValueError("must be a number")
    return value


def _storable(value: Any) -> Any:
    # PostgreSQL refuses NUL; lone surrogates (JSON "\ud800") cannot be stored at all.
    if isinstance(value, str):
        if _CONTROL.search(value):
            raise ValueError("has control characters")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("has characters that cannot be stored") from None
    return value


def _text(value: Any) -> Any:
    value = _storable(value)
    if isinstance(value, str):
        # Zero-width and bidi controls: invisible, they would reorder another's screen.
        value = clean_text(value)
    return value


def _blank_is_none(value: Any) -> Any:
    return None if isinstance(value, str) and not clean_text(value) else value


def _flag(value: Any) -> bool:
    # An htmx checkbox sends "on" when ticked and nothing otherwise.
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and len(value) <= 5:
        return value.lower() in ("on", "true", "1", "yes")
    raise ValueError("must be yes or no")


Number = Annotated[int, BeforeValidator(_number), Field(ge=0, le=MAX_NUMBER)]
OptionalNumber = Annotated[Number | None, BeforeValidator(_blank_is_none)]


def Text(limit: int) -> Any:  # noqa: N802 - reads as a type in the models
    """A non-empty string of at most ``limit`` characters, no control characters,
    kept cleaned (``characters.names.clean_text``: NFC, no invisible characters)."""
    return Annotated[str, BeforeValidator(_text), Field(min_length=1, max_length=limit)]


def Ref(limit: int) -> Any:  # noqa: N802
    """A name of something already on a sheet (a bid Trait), checked like
    ``Text`` but kept as sent: it must match the stored name exactly, and a
    sheet written before names were cleaned may still hold invisible characters."""
    return Annotated[str, BeforeValidator(_storable), Field(min_length=1, max_length=limit)]


def OptionalText(limit: int) -> Any:  # noqa: N802
    """Like ``Text`` but may be missing or empty (then None)."""
    return Annotated[Text(limit) | None, BeforeValidator(_blank_is_none), Field(default=None)]


def OptionalRef(limit: int) -> Any:  # noqa: N802
    """Like ``Ref`` but may be missing or empty (then None)."""
    return Annotated[Ref(limit) | None, BeforeValidator(_blank_is_none), Field(default=None)]


def _listed(value: Any) -> Any:
    # A form with one checked box sends a string where several send a list.
    if isinstance(value, str):
        return [value] if clean_text(value) else []
    return value


def Refs(limit: int, most: int) -> Any:  # noqa: N802
    """A list of at most ``most`` names like ``Ref(limit)`` (a single string is a
    list of one); missing is None."""
    return Annotated[
        list[Ref(limit)] | None, BeforeValidator(_listed), Field(default=None, max_length=most)
    ]


Flag = Annotated[bool, BeforeValidator(_flag)]

Throw = Literal["rock", "paper", "scissors"]
OptionalThrow = Annotated[Throw | None, BeforeValidator(_blank_is_none)]


class Action(BaseModel):
    """Fields every action has: its client message id (kept until acknowledged)."""

    model_config = ConfigDict(extra="forbid", strict=False, frozen=True)

    action: str
    id: Text(64)
    # htmx's ws extension may add its request headers; the server ignores them.
    HEADERS: dict[str, Any] | None = None


class ChallengeOpen(Action):
    """A player challenges a present character: ``bid`` is "category:Trait" (the
    phone's buttons) or a Trait name with ``category``; ``bids`` the same when
    she must bid two. Optional: Surprise, the weapon she wields, the power
    she uses."""

    defender: Number
    bid: OptionalRef(120)
    bids: Refs(120, 5)
    category: OptionalText(20)
    is_attack: Flag = False
    stakes: OptionalText(300)
    surprise: Flag = False
    weapon: OptionalRef(100)
    power: OptionalText(100)


class ChallengeBid(Action):
    """The defender answers (or a static challenge's player bids): ``bid`` or
    ``bids``, her stated action (``stakes``) and weapon."""

    challenge: Number
    bid: OptionalRef(100)
    bids: Refs(100, 5)
    stakes: OptionalText(300)
    weapon: OptionalRef(100)


class ChallengeNegative(Action):
    """Name a Negative Trait of the other side (free text)."""

    challenge: Number
    name: Text(100)


class ChallengeAddBid(Action):
    """Add the Traits a Negative Trait call made her owe."""

    challenge: Number
    bid: OptionalRef(100)
    bids: Refs(100, 5)


class ChallengeBlood(Action):
    challenge: Number
    amount: Number


class ChallengePreempt(Action):
    challenge: Number
    gift: Text(100)


class ChallengeRetest(Action):
    """Call a retest: an overbid (with the new Trait risked, ``trait`` or
    ``traits``, and a count), an ability or Discipline retest (``name``), a
    Willpower retest."""

    challenge: Number
    kind: Literal["overbid", "ability", "discipline", "willpower"]
    trait: OptionalRef(100)
    traits: Refs(100, 1)
    count: OptionalNumber = None
    name: OptionalRef(100)


class ChallengeAnswer(Action):
    """Answer a retest: a count against an overbid, an Ability (``name``), or
    ``cancel`` with the same Discipline."""

    challenge: Number
    count: OptionalNumber = None
    name: OptionalRef(100)
    cancel: Flag = False


class ChallengeForceRetest(Action):
    challenge: Number
    reason: OptionalText(300)


class ChallengeRelent(Action):
    challenge: Number


class ChallengeThrow(Action):
    challenge: Number
    throw: Throw


class ChallengeDeclare(Action):
    challenge: Number
    count: OptionalNumber = None


class SessionSwitch(Action):
    """Time out or Resume: nothing but the id."""


class SessionStart(Action):
    """Start the next session: ``number`` is the one the narrator confirmed
    ("Start session 5"), so a second tap or a second tablet starts nothing more."""

    number: Number
    name: OptionalText(200)


class PresenceSet(Action):
    """A narrator marks a character present, on a break or absent."""

    character: Number
    status: Literal["present", "break", "absent"]


class NpcSet(Action):
    """Issue 11 section 4: a narrator sets an NPC's auto-answer and when it relents."""

    character: Number
    auto_answer: Flag = False
    relents: Literal["never", "wounded", "always"] = "never"


class StaticOpen(Action):
    character: Number
    category: Text(20)
    difficulty: Number
    narrator_throw: OptionalThrow = None
    stakes: OptionalText(300)


class SimpleOpen(Action):
    """A simple test; ``ukm``: who initiates it, and whether it is difficult."""

    character: Number
    narrator_throw: OptionalThrow = None
    stakes: OptionalText(300)
    narrator_initiated: Flag = False
    difficult: Flag = False
    at_stake: OptionalText(100)  # issue 11: a Trait of hers bid on it, lost on failure


class ChallengeVoid(Action):
    challenge: Number
    reason: OptionalText(300)


# s11 clocks: a narrator's controls of a health clock (challenges.services.clocks).
class ClockCharacter(Action):
    """Medical aid given, or heal one level: the character."""

    character: Number


class ClockRest(Action):
    """A Garou rests still (or not) in a form."""

    character: Number
    resting: Flag = False
    form: Literal["homid", "glabro", "crinos", "hispo", "lupus"]


class ClockAggravated(Action):
    """How many of her wound levels are aggravated."""

    character: Number
    count: Annotated[int, BeforeValidator(_number), Field(ge=0, le=5)]


class ClockInjury(Action):
    """A permanent injury for a character's battle scar: "Injury[:Trait]"."""

    character: Number
    injury: Text(120)


# --- s11 rulings: "Call a narrator" (phones) and a narrator's rulings (dashboard) ---


class ChallengeCallNarrator(Action):
    """A side calls a narrator into a challenge, with an optional short reason."""

    challenge: Number
    reason: OptionalText(200)


class ChallengeSettle(Action):
    """A narrator settles a challenge for one side; the reason is required."""

    challenge: Number
    winner: Literal["challenger", "defender"]
    reason: Text(300)


class ChallengeTraitRuling(Action):
    """A narrator gives back or takes away one copy of a Trait (by id) of a
    character of the challenge; the reason is required."""

    challenge: Number
    character: Number
    trait: Number
    change: Literal["give_back", "take_away"]
    reason: Text(300)


class ChallengeDismissCall(Action):
    challenge: Number


# --- end s11 rulings ---


# --- issue 11, section 2: mob scenes -------------------------------------------

MAX_MOB = 20  # characters in one mob scene (challenges.services.mob.MAX_MOB)


class MobOpen(Action):
    """A narrator opens a mob scene: the characters in it (ids, a single
    checked box is a list of one), the category, whether it is an attack."""

    characters: Annotated[list[Number], BeforeValidator(_listed), Field(max_length=MAX_MOB)]
    category: Text(20)
    is_attack: Flag = False


class MobRef(Action):
    """A narrator closes the choosing of mob scene ``mob``."""

    mob: Number


class MobVoid(Action):
    mob: Number
    reason: OptionalText(300)


class MobChoose(Action):
    """A player's target (a character id), or none: she attacks nobody."""

    mob: Number
    target: OptionalNumber = None


class MobLeader(Action):
    mob: Number
    leader: Number


class MobBid(Action):
    """A bid in a mob scene: ``bid`` or ``bids``; an attacker's stated
    effect and the health levels it costs; ``give_up``: the defender loses at once."""

    mob: Number
    bid: OptionalRef(100)
    bids: Refs(100, 5)
    effect: OptionalText(100)
    damage: OptionalNumber = None
    give_up: Flag = False


class MobHurt(Action):
    """The defender who won: the attacker she hurts, or none."""

    mob: Number
    attacker: OptionalNumber = None


# --- issue 12: an opposed challenge of test pools (ruleset bns, seeds/002) ------

MAX_MANEUVERS = 4  # maneuvers in one frame: the rules allow two; a guard


def Names(limit: int, most: int) -> Any:  # noqa: N802
    """A list of at most ``most`` short words like ``Text(limit)`` (a single
    string is a list of one); missing is an empty list."""
    return Annotated[
        list[Text(limit)], BeforeValidator(_listed), Field(default=[], max_length=most)
    ]


class BnsOpen(Action):
    """A player attacks a present character: ``attack`` (brawl, melee,
    thrown, firearms; mental or social with the ``power`` used and the Skill
    its pool adds), the ``maneuvers`` she pays for ("knock_out" with
    Willpower, "knock_out:focus" with her focus), Surprise and first round,
    a staking weapon; ``escape``: a grappled character's escape from the
    ``defender``'s Grapple (brawl or melee, her simple action)."""

    defender: Number
    attack: Literal["brawl", "melee", "thrown", "firearms", "mental", "social"]
    maneuvers: Names(40, MAX_MANEUVERS)
    power: OptionalText(100)
    power_skill: OptionalText(100)
    surprise: Flag = False
    first_round: Flag = False
    staking: Flag = False
    escape: Flag = False


class BnsAnswer(Action):
    """The defender's defence (none: the only one she has)."""

    challenge: Number
    defence: Annotated[
        Literal["dodge", "social", "mental"] | None, BeforeValidator(_blank_is_none)
    ] = None


class BnsThrow(Action):
    challenge: Number
    throw: Throw


class BnsRuling(Action):
    """A narrator voids a challenge of test pools; the reason is required."""

    challenge: Number
    reason: Text(300)


class BnsSettle(Action):
    """A narrator settles a challenge of test pools for one side, with a reason."""

    challenge: Number
    winner: Literal["challenger", "defender"]
    reason: Text(300)


# --- issue 12: bns combat rounds -------------------------------------------------

MAX_COMBAT = 30  # characters in one combat (challenges.services.combat.MAX_COMBAT)
_Ids = Annotated[list[Number], BeforeValidator(_listed), Field(max_length=MAX_COMBAT)]


class CombatStart(Action):
    """A narrator starts a combat: the characters in it (ids; one checked box
    is a list of one) and, optionally, whose Surprise Action opens it."""

    characters: _Ids
    surprise: OptionalNumber = None


class CombatRef(Action):
    """A move on combat ``combat`` and nothing more (advance, hold)."""

    combat: Number


class CombatEnd(Action):
    combat: Number
    reason: OptionalText(300)


class CombatReorder(Action):
    """The narrator's order of tied initiatives: every fighter's id once."""

    combat: Number
    order: _Ids


class CombatCharacter(Action):
    """A narrator adds or takes out one character (``reason``: why she is out)."""

    combat: Number
    character: Number
    reason: OptionalText(300)


class CombatRage(Action):
    combat: Number
    character: Number
    rounds: Annotated[Number, Field(le=20)]


class CombatAct(Action):
    """A fighter's standard or simple action: a move of ``steps``, another,
    standing up (prone) or clearing her eyes (blinded)."""

    combat: Number
    kind: Literal["standard", "simple"]
    what: Literal["move", "other", "stand_up", "clear_eyes"] = "move"
    steps: OptionalNumber = None


class CombatAssist(Action):
    """A mass combat tactic: assist ``attacker``'s next attack, or take the
    place of the target of ``attack``."""

    combat: Number
    attacker: OptionalNumber = None
    attack: OptionalNumber = None
    steps: OptionalNumber = None


# --- issue 13: storytelling rolls (ruleset storytelling, seeds/003) ----------------

MAX_ROLL_MODIFIER = 10  # challenges.services.rolls.MAX_MODIFIER


def _signed(value: Any) -> Any:
    # A form's "-2", "+1" or "" (0); a JSON int; never a bool or a float.
    if isinstance(value, bool):
        raise ValueError("must be a number")
    if isinstance(value, str):
        value = value.strip()
        if not value:
            return 0
        digits = value.lstrip("+-")
        if (
            len(value) > 4
            or not digits.isascii()
            or not digits.isdigit()
            or len(value) - len(digits) > 1
        ):
            raise ValueError("must be a number")
        return int(value)
    if not isinstance(value, int):
        raise ValueError("must be a number")
    return value


Dice = Annotated[
    int, BeforeValidator(_signed), Field(default=0, ge=-MAX_ROLL_MODIFIER, le=MAX_ROLL_MODIFIER)
]


class RollPool(Action):
    """What a dice pool is built from: an Attribute, a Skill (none: blank), a
    Specialty; names are checked against the engine's lists by the service."""

    attribute: Text(20)
    skill: OptionalText(20)
    specialty: Flag = False


class RollCall(RollPool):
    """A narrator calls for a roll from a present character (an NPC rolls at
    once, ``willpower``: spending a point of hers): equipment and one
    modifier with its reason, Willpower allowed or not."""

    character: Number
    equipment: Dice
    modifier: Dice
    reason: OptionalText(100)
    willpower_allowed: Flag = False
    willpower: Flag = False


class RollMake(Action):
    """A player's tap on a roll called for (or her extended action's next roll)."""

    roll: Number
    willpower: Flag = False


class RollOpen(Action):
    """A narrator's open roll of ``dice`` d10 (0: a chance die)."""

    dice: Annotated[Number, Field(le=30)]
    label: OptionalText(200)


class RollContest(RollPool):
    """A contested action against ``opponent``; ``character`` only from the
    dashboard (a phone acts for her own character)."""

    opponent: Number
    character: OptionalNumber = None
    willpower: Flag = False
    label: OptionalText(200)


class RollResist(RollPool):
    """The resisting side's pool of contest ``roll``."""

    roll: Number
    willpower: Flag = False


class RollExtended(RollCall):
    """A narrator starts an extended action: ``target`` successes, a roll
    every ``interval`` minutes, within ``most_rolls`` rolls and/or ``budget``
    minutes."""

    target: Annotated[Number, Field(ge=1, le=100)]
    interval: Annotated[Number, Field(ge=1, le=600)]
    most_rolls: Annotated[
        Annotated[Number, Field(le=100)] | None, BeforeValidator(_blank_is_none)
    ] = None
    budget: Annotated[Annotated[Number, Field(le=6000)] | None, BeforeValidator(_blank_is_none)] = (
        None
    )
    label: OptionalText(200)


# --- issue 13: Storytelling fights and the health track ---------------------------

MAX_FIGHT = 30  # characters in one fight (challenges.services.story_combat.MAX_FIGHT)
_FightIds = Annotated[list[Number], BeforeValidator(_listed), Field(max_length=MAX_FIGHT)]
_Damage = Literal["bashing", "lethal", "aggravated"]


class FightStart(Action):
    """A narrator starts a fight: the characters in it (ids)."""

    characters: _FightIds


class FightRef(Action):
    """A move on fight ``fight`` and nothing more (end the turn, dodge)."""

    fight: Number


class FightEnd(Action):
    fight: Number
    reason: OptionalText(300)


class FightCharacter(Action):
    """A narrator adds or takes out one character (``reason``: why she is out)."""

    fight: Number
    character: Number
    reason: OptionalText(300)


class FightAttack(Action):
    """An attack on ``target``: its kind, weapon dice (0–5), damage type and
    the checkboxes of the phone's form."""

    fight: Number
    target: Number
    kind: Literal["unarmed", "armed", "ranged", "thrown"]
    weapon: Annotated[Number, Field(le=5)] = 0
    damage_type: _Damage = "bashing"
    point_blank: Flag = False
    improvised: Flag = False
    willpower: Flag = False


class FightAct(Action):
    fight: Number
    what: Literal["fall_prone", "stand_up", "run", "other"]


class FightYield(Action):
    fight: Number
    until: Literal["later", "next_turn"]


class FightGuard(Action):
    """Her standing choice: spend Willpower on Defense against the next attack."""

    fight: Number
    on: Flag = False


class TrackRuling(Action):
    """A narrator marks ``points`` of ``damage_type`` on a character's track,
    or heals ``points`` (``damage_type`` is then ignored), with a reason."""

    character: Number
    points: Annotated[Number, Field(ge=1, le=10)]
    damage_type: _Damage = "bashing"
    reason: Text(300)


SCHEMAS: dict[str, type[Action]] = {
    "bns.open": BnsOpen,
    "bns.answer": BnsAnswer,
    "bns.throw": BnsThrow,
    "bns.retest": ChallengeRelent,
    "bns.accept": ChallengeRelent,
    "bns.void": BnsRuling,
    "bns.settle": BnsSettle,
    "challenge.open": ChallengeOpen,
    "challenge.bid": ChallengeBid,
    "challenge.relent": ChallengeRelent,
    "challenge.throw": ChallengeThrow,
    "challenge.declare": ChallengeDeclare,
    "challenge.negative": ChallengeNegative,
    "challenge.add_bid": ChallengeAddBid,
    "challenge.blood": ChallengeBlood,
    "challenge.preempt": ChallengePreempt,
    "challenge.retest": ChallengeRetest,
    "challenge.answer": ChallengeAnswer,
    "challenge.accept": ChallengeRelent,
    "challenge.force_retest": ChallengeForceRetest,
    "session.time_out": SessionSwitch,
    "session.resume": SessionSwitch,
    "static.open": StaticOpen,
    "simple.open": SimpleOpen,
    "challenge.void": ChallengeVoid,
    "session.start": SessionStart,
    "session.end": SessionSwitch,
    "presence.set": PresenceSet,
    "clock.aid": ClockCharacter,
    "clock.heal": ClockCharacter,
    "clock.rest": ClockRest,
    "clock.aggravated": ClockAggravated,
    "clock.injury": ClockInjury,
    "npc.set": NpcSet,
    # s11 rulings
    "challenge.call_narrator": ChallengeCallNarrator,
    "challenge.settle": ChallengeSettle,
    "challenge.trait": ChallengeTraitRuling,
    "challenge.dismiss_call": ChallengeDismissCall,
    "mob.open": MobOpen,
    "mob.close": MobRef,
    "mob.void": MobVoid,
    "mob.choose": MobChoose,
    "mob.leader": MobLeader,
    "mob.bid": MobBid,
    "mob.hurt": MobHurt,
    "combat.start": CombatStart,
    "combat.advance": CombatRef,
    "combat.reorder": CombatReorder,
    "combat.rage": CombatRage,
    "combat.add": CombatCharacter,
    "combat.remove": CombatCharacter,
    "combat.end": CombatEnd,
    "combat.act": CombatAct,
    "combat.hold": CombatRef,
    "combat.assist": CombatAssist,
    # issue 13: storytelling rolls
    "roll.call": RollCall,
    "roll.make": RollMake,
    "roll.open": RollOpen,
    "roll.contest": RollContest,
    "roll.resist": RollResist,
    "roll.extended": RollExtended,
    "roll.extended_roll": RollMake,
    "fight.start": FightStart,
    "fight.end_turn": FightRef,
    "fight.add": FightCharacter,
    "fight.remove": FightCharacter,
    "fight.end": FightEnd,
    "fight.attack": FightAttack,
    "fight.act": FightAct,
    "fight.dodge": FightRef,
    "fight.yield": FightYield,
    "fight.guard": FightGuard,
    "track.mark": TrackRuling,
    "track.heal": TrackRuling,
}

_WORDS = {
    "missing": "is missing",
    "extra_forbidden": "is not part of this action",
    "literal_error": "must be rock, paper or scissors",
    "string_too_long": "is too long",
    "too_long": "is too long",
    "string_too_short": "is empty",
    "too_short": "is empty",
    "greater_than_equal": "is out of range",
    "less_than_equal": "is out of range",
}


def _plain(error: ValidationError) -> str:
    """The first problem of a pydantic error, in words: "'challenge' must be a number."."""
    first = error.errors(include_url=False)[0]
    name = ".".join(str(part) for part in first["loc"][:1]) or "message"
    kind = first["type"]
    if kind == "literal_error" and name == "status":
        words = "must be present, break or absent"
    elif kind == "literal_error" and name == "form":
        words = "must be homid, glabro, crinos, hispo or lupus"
    elif kind == "literal_error" and name == "relents":
        words = "must be never, wounded or always"
    elif kind == "literal_error" and name == "winner":
        words = "must be challenger or defender"
    elif kind == "literal_error" and name == "change":
        words = "must be give_back or take_away"
    elif kind == "literal_error" and name == "attack":
        words = "must be brawl, melee, thrown, firearms, mental or social"
    elif kind == "literal_error" and name == "defence":
        words = "must be dodge, social or mental"

    elif (
        kind == "literal_error"
        and name in ("damage_type", "what", "until")
        or (kind == "literal_error" and name == "kind" and "unarmed" in str(first.get("ctx")))
    ):
        words = "must be one of " + str(first.get("ctx", {}).get("expected", "the choices"))
    elif kind == "literal_error" and name == "kind" and "simple" in str(first.get("ctx")):
        words = "must be standard or simple"
    elif kind == "literal_error" and name == "kind":
        words = "must be overbid, ability, discipline or willpower"
    elif kind in _WORDS:
        words = _WORDS[kind]
    elif kind == "value_error":  # our validators' own words
        words = str(first.get("ctx", {}).get("error", "is not valid"))
    elif name in ("challenge", "defender", "character", "difficulty", "count", "trait"):
        words = "must be a number"
    else:
        words = "is not valid"
    return f"'{name}' {words}."


def parse_frame(
    text_data: str | None, bytes_data: bytes | None, *, allowed: frozenset[str] | set[str]
) -> tuple[str, dict[str, Any]]:
    """Check one client frame: text of at most ``WS_MAX_MESSAGE_BYTES`` bytes, a
    JSON object, an action in ``allowed`` (or the heartbeat) with exactly its
    fields. Returns ``(action, fields)``: for an action the validated fields
    (numbers as ``int``, blanks as None); for ``ping``/``sync`` the raw object,
    a ping's ``v`` a string of at most :data:`MAX_STAMP` characters or None.
    Raises ``FrameRefused`` (with the frame's id when readable)."""
    from django.conf import settings

    if bytes_data is not None or text_data is None:
        raise FrameRefused("That message is too large or not text.")
    if len(text_data) > settings.WS_MAX_MESSAGE_BYTES or (
        len(text_data.encode("utf-8", "surrogatepass")) > settings.WS_MAX_MESSAGE_BYTES
    ):
        raise FrameRefused("That message is too large or not text.")
    try:
        message = json.loads(text_data)
    except (ValueError, RecursionError):
        raise FrameRefused("That message is not valid JSON.") from None
    if not isinstance(message, dict):
        raise FrameRefused("That message is not an action.")
    action = message.get("action")
    raw_id = message.get("id")
    msg_id = raw_id if isinstance(raw_id, str) and 0 < len(raw_id) <= 64 else None
    if isinstance(action, str) and action in HEARTBEAT:
        echoed = message.get("v") if action == "ping" else None
        if echoed is not None and (not isinstance(echoed, str) or len(echoed) > MAX_STAMP):
            raise FrameRefused("'v' must be the stamp of a view (a short text).", msg_id)
        return action, message
    schema = SCHEMAS.get(action) if isinstance(action, str) else None
    if schema is None or action not in allowed:
        raise FrameRefused("Unknown action.", msg_id)
    try:
        fields = schema.model_validate(message).model_dump(exclude={"HEADERS"})
    except ValidationError as error:
        raise FrameRefused(_plain(error), msg_id) from None
    except Exception:  # a bug in a schema must refuse the frame, not kill the socket
        log.exception("schema of %s failed on a frame", action)
        raise FrameRefused("That message is not valid.", msg_id) from None
    return action, fields
