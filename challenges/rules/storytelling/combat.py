"""Combat in the Storytelling System (seeds/003 "Combat", "Avoiding Damage in
Close Combat", "Avoiding Damage in Ranged Combat", "Concealment and Cover",
"Range", "Speed", "Willpower").

Two halves:

- Pure reads for one attack: :func:`attack_pool` (the attacker's pool with
  the target's Defense and armour, prone, concealment, range and the usual
  modifiers), :func:`effective_defense` (dodging, −1 per further attack,
  a Willpower point) and :func:`attack_damage` (successes less cover's
  durability, each one Health point of the attack's type).
- The turn tracker, a frozen :class:`CombatState`: :func:`start_combat`
  rolls Initiative once (one d10 + modifier, no 10-again) and keeps it;
  each turn the fighters act from the highest Initiative to the lowest,
  each one instant action (:func:`act`), or :func:`dodge`, or
  :func:`yield_action` (later in the turn, or to the next turn); the
  narrator may :func:`end_turn`, :func:`add_fighter`, :func:`remove_fighter`,
  :func:`end_combat`.
  Every move is keyword-only, returns a :class:`CombatTransition` (the new
  state and its events) or raises RulesError before building anything, so a
  refused move changes nothing. :func:`legal_moves` lists what a fighter may
  do now.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, NamedTuple

from challenges.rules.core import Event, RulesError
from challenges.rules.storytelling.dice import DicePool, DiceSource, Roll, dice_pool, face_of
from challenges.rules.storytelling.health import DamageType
from challenges.rules.storytelling.options import STORYTELLING, InitiativeTie, StorytellingOptions

SCHEMA = 1
"""Version of :meth:`CombatState.to_dict`'s layout (key ``"schema"``)."""

PRONE_CLOSE = 2
"""Attackers within a few feet get +2 against a prone target (seeds/003
"Avoiding Damage in Ranged Combat")."""

PRONE_RANGED = -2
"""Ranged attacks on a prone target take −2 (same source)."""

WILLPOWER_DEFENSE = 2
"""A Willpower point raises Defense by two against one attack (seeds/003
"Willpower")."""

MOST_CONCEALMENT = 3
"""Partial concealment costs −1 to −3 (seeds/003 "Concealment and Cover")."""

MOST_DURABILITY = 3
"""Full cover's durability runs from 1 (wood, thick glass) to 3 (steel)
(seeds/003 "Concealment and Cover")."""

MAX_NAME = 80
"""Longest fighter name, in characters."""


class AttackKind(StrEnum):
    """The four attacks of seeds/003 "Combat" and their pools: unarmed close
    combat Strength + Brawl, armed close combat Strength + Weaponry, ranged
    (guns and bows) Dexterity + Firearms, thrown Dexterity + Athletics."""

    UNARMED = "unarmed"
    ARMED = "armed"
    RANGED = "ranged"
    THROWN = "thrown"

    @property
    def traits(self) -> tuple[str, str]:
        """(Attribute, Skill) of the attack's pool."""
        return ATTACK_TRAITS[self]

    @property
    def close(self) -> bool:
        """Unarmed or armed close combat."""
        return self in (AttackKind.UNARMED, AttackKind.ARMED)


ATTACK_TRAITS: Mapping[AttackKind, tuple[str, str]] = {
    AttackKind.UNARMED: ("Strength", "Brawl"),
    AttackKind.ARMED: ("Strength", "Weaponry"),
    AttackKind.RANGED: ("Dexterity", "Firearms"),
    AttackKind.THROWN: ("Dexterity", "Athletics"),
}
"""seeds/003 "Combat": the Attribute and Skill of each attack's pool."""


class RangeBand(StrEnum):
    """A ranged weapon's short, medium or long range: 0, −2, −4 dice
    (seeds/003 "Range")."""

    SHORT = "short"
    MEDIUM = "medium"
    LONG = "long"

    @property
    def penalty(self) -> int:
        """0, −2 or −4."""
        return {"short": 0, "medium": -2, "long": -4}[self.value]


def defense_applies(kind: AttackKind, *, point_blank: bool = False) -> bool:
    """Defense counts against close combat and thrown weapons, and against a
    ranged attacker only within a few feet (``point_blank``). seeds/003
    "Avoiding Damage in Ranged Combat"."""
    kind = AttackKind(kind)
    return kind is not AttackKind.RANGED or point_blank


def effective_defense(
    defense: int, *, dodging: bool = False, earlier_attacks: int = 0, willpower: bool = False
) -> int:
    """The Defense a target opposes to one attack: doubled while she dodges,
    less one for each attack on her earlier this turn (never below 0; the
    doubled Defense too), then +2 if she spends a Willpower point on this
    attack. seeds/003 "Avoiding Damage in Close Combat", "Willpower"
    (silent on the order of the Willpower point and the reduction: the
    reduction comes first, so the point always buys two)."""
    if defense < 0 or earlier_attacks < 0:
        raise RulesError("Defense and attacks cannot be negative.")
    doubled = defense * 2 if dodging else defense
    return max(0, doubled - earlier_attacks) + (WILLPOWER_DEFENSE if willpower else 0)


def attack_pool(
    *,
    kind: AttackKind,
    attribute: int,
    skill: int,
    specialty: bool = False,
    willpower: bool = False,
    weapon: int = 0,
    improvised: bool = False,
    defense: int = 0,
    armor: int = 0,
    point_blank: bool = False,
    prone: bool = False,
    concealment: int = 0,
    range_band: RangeBand = RangeBand.SHORT,
    modifiers: Sequence[tuple[str, int]] = (),
    wound_penalty: int = 0,
) -> DicePool:
    """The attacker's dice pool against one target (seeds/003 "Combat" and
    the sections after it), every modifier summed first:

    ``kind``'s Attribute (``attribute`` dots) + Skill (``skill`` dots; 0:
    unskilled, −1) + ``specialty`` (+1) + ``willpower`` (+3) + ``weapon``
    (its bonus dice) + ``improvised`` (−1); − the target's ``defense``
    (:func:`effective_defense`) where :func:`defense_applies`; − ``armor``;
    a ``prone`` target: +2 within a few feet (close combat, or
    ``point_blank``), else −2; for ranged and thrown attacks ``concealment``
    (0–3 dice off for partial concealment) and ``range_band`` (short 0,
    medium −2, long −4); the narrator's ``modifiers``; ``wound_penalty``.

    Raises RulesError for concealment outside 0–3, negative Defense or
    armour, or a range or concealment on a close-combat attack."""
    kind = AttackKind(kind)
    range_band = RangeBand(range_band)
    if not 0 <= concealment <= MOST_CONCEALMENT:
        raise RulesError("Concealment costs 0 to 3 dice.")
    if defense < 0 or armor < 0:
        raise RulesError("Defense and armour cannot be negative.")
    if kind.close and (concealment or range_band is not RangeBand.SHORT):
        raise RulesError("Range and concealment only hinder ranged attacks.")
    attribute_name, skill_name = kind.traits
    parts: list[tuple[str, int]] = []
    if defense and defense_applies(kind, point_blank=point_blank):
        parts.append(("Defense", -defense))
    parts.append(("Armour", -armor))
    if prone:
        near = kind.close or point_blank
        parts.append(("Prone target", PRONE_CLOSE if near else PRONE_RANGED))
    if not kind.close:
        parts += [
            ("Concealment", -concealment),
            (f"{range_band.title()} range", range_band.penalty),
        ]
    return dice_pool(
        attribute=(attribute_name, attribute),
        skill=(skill_name, skill),
        specialty=specialty,
        willpower=willpower,
        equipment=weapon,
        improvised=improvised,
        modifiers=[*parts, *modifiers],
        wound_penalty=wound_penalty,
    )


class AttackResult(NamedTuple):
    """An attack's outcome: ``successes`` rolled, ``damage`` (Health points
    of ``damage_type`` dealt), ``stopped``: full cover took every success."""

    successes: int
    damage: int
    damage_type: DamageType
    stopped: bool


def attack_damage(attack: Roll, *, damage_type: DamageType, cover: int = 0) -> AttackResult:
    """Each success is one Health point of damage of the attack's type; a
    target completely behind cover of durability ``cover`` (1–3) takes that
    many successes off first, and none left means the shot did not get
    through. seeds/003 "Combat", "Concealment and Cover". Raises RulesError
    for a durability outside 0–3."""
    if not 0 <= cover <= MOST_DURABILITY:
        raise RulesError("Cover's durability is 0 to 3.")
    damage = max(0, attack.successes - cover)
    return AttackResult(
        attack.successes, damage, DamageType(damage_type), bool(cover) and not damage
    )


def yards(speed: int, *, running: bool = False) -> int:
    """How far a character may move in one turn: Speed yards and still act,
    or twice that if she gives up her action to run. seeds/003 "Speed"."""
    if speed < 0:
        raise RulesError("Speed cannot be negative.")
    return speed * 2 if running else speed


# --- Initiative -------------------------------------------------------------------


@dataclass(frozen=True)
class Initiative:
    """A character's Initiative for one fight: the ``face`` of one d10 (no
    10-again) + her Initiative ``modifier`` + her ``wound_penalty`` at the
    time (0 to −3). seeds/003 "Combat"; RULES.md `storytelling`: wound
    penalties apply to initiative."""

    face: int
    modifier: int
    wound_penalty: int = 0

    @property
    def total(self) -> int:
        """face + modifier + wound penalty."""
        return self.face + self.modifier + self.wound_penalty


def roll_initiative(*, modifier: int, dice: DiceSource, wound_penalty: int = 0) -> Initiative:
    """One d10 + ``modifier`` (+ ``wound_penalty``, 0 to −3): "a rare case
    where you add the number that comes up on a die". A 10 is not rolled
    again. seeds/003 "Combat". Raises RulesError for a bad face or penalty."""
    if wound_penalty not in (0, -1, -2, -3):
        raise RulesError("A wound penalty is 0, −1, −2 or −3.")
    return Initiative(face_of(dice), modifier, wound_penalty)


# --- the turn tracker ----------------------------------------------------------------


@dataclass(frozen=True)
class Fighter:
    """A character in a fight: ``character_id``, ``name``, her sheet's
    ``initiative_modifier``, ``defense`` and ``speed`` (yards), and her
    ``initiative`` once rolled (None before :func:`start_combat`)."""

    character_id: int
    name: str
    initiative_modifier: int = 0
    defense: int = 0
    speed: int = 0
    initiative: Initiative | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dict; "initiative" is [face, modifier, wound_penalty] or None."""
        i = self.initiative
        return {
            "character_id": self.character_id,
            "name": self.name,
            "initiative_modifier": self.initiative_modifier,
            "defense": self.defense,
            "speed": self.speed,
            "initiative": None if i is None else [i.face, i.modifier, i.wound_penalty],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Fighter:
        """Inverse of :meth:`to_dict`."""
        i = d["initiative"]
        return cls(
            int(d["character_id"]),
            str(d["name"]),
            int(d["initiative_modifier"]),
            int(d["defense"]),
            int(d["speed"]),
            None if i is None else Initiative(int(i[0]), int(i[1]), int(i[2])),
        )


class Action(StrEnum):
    """A fighter's one instant action of the turn (seeds/003 "Actions",
    "Combat"): ATTACK (needs a target), FALL_PRONE ("Falling prone
    constitutes a character's action"), STAND_UP (getting up from prone;
    the seed is silent, the app counts it as her action), RUN (up to twice
    her Speed, seeds/003 "Speed"), OTHER (anything else: a spell, a
    Skill roll). Dodging is :func:`dodge`."""

    ATTACK = "attack"
    FALL_PRONE = "fall_prone"
    STAND_UP = "stand_up"
    RUN = "run"
    OTHER = "other"


class YieldUntil(StrEnum):
    """Where a yielded action goes (seeds/003 "Combat": "yield her
    character's action until later in the Initiative queue, or until the
    next turn"). LATER: she may act at any moment later this turn. NEXT_TURN:
    she gives up this turn's action and may act at any moment of the next
    turn, before her place if she likes (the seed is silent on how; she
    never gets two actions in one turn)."""

    LATER = "later"
    NEXT_TURN = "next_turn"


def _ids(raw: Any) -> tuple[int, ...]:
    return tuple(int(x) for x in raw)


@dataclass(frozen=True)
class CombatState:
    """One fight (seeds/003 "Combat").

    ``fighters``: in Initiative order, highest first (ties as
    ``options.initiative_tie`` says), fixed for the fight. ``turn``: 1, 2,
    …. ``place``: the index in ``fighters`` of the place the queue has
    reached this turn (``len(fighters)``: everyone's place has passed).
    ``acted``: ids whose action this turn is used (acted, dodged, or yielded
    to the next turn). ``holding``: ids who yielded it till later and may act
    at any moment this turn. ``deferred``: ids who yielded to the next turn
    (they hold from its start). ``dodging``: ids dodging this turn.
    ``prone``: ids lying prone. ``attacks``: (target id, attacks on her this
    turn). ``removed``: ids out of the fight. ``ended``: the fight is over;
    ``reason``: why.
    """

    fighters: tuple[Fighter, ...]
    turn: int = 1
    place: int = 0
    acted: tuple[int, ...] = ()
    holding: tuple[int, ...] = ()
    deferred: tuple[int, ...] = ()
    dodging: tuple[int, ...] = ()
    prone: tuple[int, ...] = ()
    attacks: tuple[tuple[int, int], ...] = ()
    removed: tuple[int, ...] = ()
    ended: bool = False
    reason: str = ""
    options: StorytellingOptions = STORYTELLING

    def fighter(self, character_id: int) -> Fighter:
        """The fighter ``character_id``; RulesError if she is not in this fight."""
        for f in self.fighters:
            if f.character_id == character_id and character_id not in self.removed:
                return f
        raise RulesError("That character is not in this fight.")

    def attacks_on(self, character_id: int) -> int:
        """Attacks on ``character_id`` so far this turn."""
        return dict(self.attacks).get(character_id, 0)

    @property
    def order(self) -> tuple[int, ...]:
        """Ids of the fighters still in the fight, highest Initiative first."""
        return tuple(f.character_id for f in self.fighters if f.character_id not in self.removed)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict (``"schema"``); lossless through :meth:`from_dict`."""
        return {
            "schema": SCHEMA,
            "fighters": [f.to_dict() for f in self.fighters],
            "turn": self.turn,
            "place": self.place,
            "acted": list(self.acted),
            "holding": list(self.holding),
            "deferred": list(self.deferred),
            "dodging": list(self.dodging),
            "prone": list(self.prone),
            "attacks": [list(a) for a in self.attacks],
            "removed": list(self.removed),
            "ended": self.ended,
            "reason": self.reason,
            "options": self.options.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CombatState:
        """Inverse of :meth:`to_dict`. ValueError for an unknown schema."""
        if d.get("schema", SCHEMA) != SCHEMA:
            raise ValueError(f"Unknown CombatState schema {d.get('schema')!r}")
        return cls(
            fighters=tuple(Fighter.from_dict(f) for f in d["fighters"]),
            turn=int(d["turn"]),
            place=int(d["place"]),
            acted=_ids(d["acted"]),
            holding=_ids(d["holding"]),
            deferred=_ids(d["deferred"]),
            dodging=_ids(d["dodging"]),
            prone=_ids(d["prone"]),
            attacks=tuple((int(t), int(n)) for t, n in d["attacks"]),
            removed=_ids(d["removed"]),
            ended=bool(d["ended"]),
            reason=str(d["reason"]),
            options=StorytellingOptions.from_dict(d["options"]),
        )


class CombatTransition(NamedTuple):
    """What a combat move produces: the new state and its events, in order."""

    state: CombatState
    events: tuple[Event, ...]


def initiative_order(
    fighters: Sequence[Fighter],
    *,
    narrator_order: Sequence[int] = (),
    options: StorytellingOptions = STORYTELLING,
) -> tuple[Fighter, ...]:
    """``fighters`` (each with her ``initiative``) from the highest Initiative
    total to the lowest. Equal totals (seeds/003 is silent): under
    ``higher_modifier`` the higher Initiative modifier first, then
    ``narrator_order`` (ids, first acts first), then the order given; under
    ``narrator`` the narrator's order, then the order given. Raises
    RulesError if a fighter has no Initiative yet."""
    if any(f.initiative is None for f in fighters):
        raise RulesError("Every fighter rolls Initiative first.")
    rank = {cid: i for i, cid in enumerate(narrator_order)}
    by_modifier = options.initiative_tie is InitiativeTie.HIGHER_MODIFIER

    def key(item: tuple[int, Fighter]) -> tuple[int, int, int, int]:
        i, f = item
        assert f.initiative is not None
        modifier = -f.initiative.modifier if by_modifier else 0
        return (-f.initiative.total, modifier, rank.get(f.character_id, len(rank)), i)

    return tuple(f for _, f in sorted(enumerate(fighters), key=key))


def whose_turn(state: CombatState) -> int | None:
    """The id of the fighter whose place in the queue it is, or None (every
    place has passed and the turn waits on fighters holding an action, or
    the fight is over)."""
    if state.ended or state.place >= len(state.fighters):
        return None
    return state.fighters[state.place].character_id


def _done(state: CombatState, cid: int) -> bool:
    """Her place needs no move: she is out, has acted, holds or deferred."""
    return cid in state.removed or cid in state.acted or cid in state.holding


def _settle(state: CombatState, events: list[Event]) -> CombatState:
    """Move the queue past places needing no move; start the next turn once
    every place has passed and nobody holds an action."""
    place = state.place
    while place < len(state.fighters) and _done(state, state.fighters[place].character_id):
        place += 1
    state = replace(state, place=place)
    if place >= len(state.fighters) and not state.holding and not state.ended:
        state = _next_turn(state, events)
    return state


def _next_turn(state: CombatState, events: list[Event]) -> CombatState:
    live = [cid for cid in state.deferred if cid not in state.removed]
    state = replace(
        state,
        turn=state.turn + 1,
        place=0,
        acted=(),
        holding=tuple(live),
        deferred=(),
        dodging=(),
        attacks=(),
    )
    events.append(Event("turn_started", {"turn": state.turn, "holding": live}))
    if not state.order:
        return state
    return _settle(state, events)


def _live(state: CombatState) -> None:
    if state.ended:
        raise RulesError("The fight is over.")


def _may_act(state: CombatState, cid: int) -> Fighter:
    """She may take her action now: in the fight, action unused, and her place
    in the queue or an action held."""
    _live(state)
    who = state.fighter(cid)
    if cid in state.acted:
        raise RulesError(f"{who.name} has already used her action this turn.")
    if cid not in state.holding and whose_turn(state) != cid:
        raise RulesError(f"It is not {who.name}'s turn to act.")
    return who


def _valid(f: Fighter) -> Fighter:
    name = " ".join(str(f.name).split())
    if not name or len(name) > MAX_NAME:
        raise RulesError(f"A fighter needs a name of 1 to {MAX_NAME} characters.")
    if f.defense < 0 or f.speed < 0:
        raise RulesError(f"{name}'s Defense and Speed cannot be negative.")
    return replace(f, name=name)


def start_combat(
    *,
    fighters: Sequence[Fighter],
    dice: DiceSource,
    wound_penalties: Mapping[int, int] | None = None,
    narrator_order: Sequence[int] = (),
    options: StorytellingOptions = STORYTELLING,
) -> CombatTransition:
    """Begin a fight: each fighter, in the order given, rolls Initiative once
    for the whole fight (one d10 + her modifier + her wound penalty from
    ``wound_penalties``, {id: 0..−3}; no 10-again), and the queue runs from
    the highest to the lowest (:func:`initiative_order`). Events
    "combat_started" (the order, each roll) and "turn_started". Raises
    RulesError for fewer than two fighters, one twice, or a bad name.
    seeds/003 "Combat": "Players do not make new Initiative rolls every turn"."""
    checked = [_valid(f) for f in fighters]
    ids = [f.character_id for f in checked]
    if len(ids) < 2:
        raise RulesError("A fight needs two fighters or more.")
    if len(set(ids)) != len(ids):
        raise RulesError("A fighter can only join a fight once.")
    penalties = wound_penalties or {}
    rolled = [
        replace(
            f,
            initiative=roll_initiative(
                modifier=f.initiative_modifier,
                dice=dice,
                wound_penalty=penalties.get(f.character_id, 0),
            ),
        )
        for f in checked
    ]
    ordered = initiative_order(rolled, narrator_order=narrator_order, options=options)
    state = CombatState(fighters=ordered, options=options)
    started = {
        "order": [f.character_id for f in ordered],
        "initiative": [
            [f.character_id, f.initiative.face, f.initiative.total]
            for f in ordered
            if f.initiative is not None
        ],
    }
    return CombatTransition(
        state, (Event("combat_started", started), Event("turn_started", {"turn": 1, "holding": []}))
    )


def defense_against(state: CombatState, target_id: int, *, willpower: bool = False) -> int:
    """The Defense ``target_id`` opposes to the next attack on her this turn:
    :func:`effective_defense` of her Defense, doubled if she dodges, less the
    attacks already made on her this turn, +2 for a Willpower point."""
    target = state.fighter(target_id)
    return effective_defense(
        target.defense,
        dodging=target_id in state.dodging,
        earlier_attacks=state.attacks_on(target_id),
        willpower=willpower,
    )


def act(
    state: CombatState,
    *,
    fighter_id: int,
    action: Action,
    target_id: int | None = None,
    defense_willpower: bool = False,
) -> CombatTransition:
    """``fighter_id`` takes her one instant action of the turn: at her place in
    the queue, or at any moment while she holds a yielded action. An ATTACK
    names ``target_id`` (another fighter in the fight) and counts against her
    Defense for the rest of the turn; its event "acted" carries
    ``defense``, the target's Defense against this attack
    (:func:`defense_against`, +2 if she spends Willpower:
    ``defense_willpower``). FALL_PRONE and STAND_UP change ``prone``. Raises
    RulesError when it is not her turn, her action is used, or the target
    is missing or herself. seeds/003 "Combat", "Avoiding Damage"."""
    who = _may_act(state, fighter_id)
    action = Action(action)
    data: dict[str, Any] = {"fighter": fighter_id, "action": action.value}
    prone = state.prone
    attacks = dict(state.attacks)
    if action is Action.ATTACK:
        if target_id is None or target_id == fighter_id:
            raise RulesError(f"{who.name} must name someone else to attack.")
        state.fighter(target_id)
        data |= {
            "target": target_id,
            "defense": defense_against(state, target_id, willpower=defense_willpower),
        }
        attacks[target_id] = attacks.get(target_id, 0) + 1
    elif target_id is not None:
        raise RulesError("Only an attack names a target.")
    elif action is Action.FALL_PRONE:
        if fighter_id in prone:
            raise RulesError(f"{who.name} is already prone.")
        prone = (*prone, fighter_id)
    elif action is Action.STAND_UP:
        if fighter_id not in prone:
            raise RulesError(f"{who.name} is not prone.")
        prone = tuple(p for p in prone if p != fighter_id)
    elif action is Action.RUN:
        data["yards"] = yards(who.speed, running=True)
    new = replace(
        state,
        acted=(*state.acted, fighter_id),
        holding=tuple(h for h in state.holding if h != fighter_id),
        prone=prone,
        attacks=tuple(sorted(attacks.items())),
    )
    events = [Event("acted", data)]
    return CombatTransition(_settle(new, events), tuple(events))


def dodge(state: CombatState, *, fighter_id: int) -> CombatTransition:
    """``fighter_id`` dodges: her Defense is doubled for the rest of the turn
    (:func:`effective_defense`). Only if she has not acted yet this turn; it
    uses her action, at any moment of the turn (when she is attacked, before
    her place). seeds/003 "Avoiding Damage in Close Combat". Event "dodged"."""
    _live(state)
    who = state.fighter(fighter_id)
    if fighter_id in state.acted:  # yielding to the next turn used it too
        raise RulesError(f"{who.name} has already used her action this turn and cannot dodge.")
    new = replace(
        state,
        acted=(*state.acted, fighter_id),
        holding=tuple(h for h in state.holding if h != fighter_id),
        dodging=(*state.dodging, fighter_id),
    )
    events = [Event("dodged", {"fighter": fighter_id})]
    return CombatTransition(_settle(new, events), tuple(events))


def yield_action(state: CombatState, *, fighter_id: int, until: YieldUntil) -> CombatTransition:
    """``fighter_id`` yields her action: LATER, she may act at any moment
    later this turn; NEXT_TURN, she gives up this turn's action and may act
    at any moment of the next turn. At her place in the queue (or, to the
    next turn, while holding). seeds/003 "Combat". Event "yielded"."""
    until = YieldUntil(until)
    who = _may_act(state, fighter_id)
    if until is YieldUntil.LATER:
        if fighter_id in state.holding:
            raise RulesError(f"{who.name} already holds her action.")
        new = replace(state, holding=(*state.holding, fighter_id))
    else:
        new = replace(
            state,
            acted=(*state.acted, fighter_id),
            holding=tuple(h for h in state.holding if h != fighter_id),
            deferred=(*state.deferred, fighter_id),
        )
    events = [Event("yielded", {"fighter": fighter_id, "until": until.value})]
    return CombatTransition(_settle(new, events), tuple(events))


def end_turn(state: CombatState) -> CombatTransition:
    """A narrator ends the turn now: actions not taken are lost (held ones
    too) and the next turn starts. Event "turn_started"."""
    _live(state)
    events: list[Event] = []
    return CombatTransition(_next_turn(state, events), tuple(events))


def add_fighter(
    state: CombatState,
    *,
    fighter: Fighter,
    dice: DiceSource,
    wound_penalty: int = 0,
    narrator_order: Sequence[int] = (),
) -> CombatTransition:
    """A narrator brings ``fighter`` into a fight under way (the seed is
    silent on late comers): she rolls Initiative once, like everyone at the
    start, and takes her place in the queue (:func:`initiative_order`, with
    ``narrator_order`` for ties). If her place has passed this turn she acts
    from the next turn (she may still dodge); if it is the queue's place now,
    she acts now. A fighter removed earlier comes back with her first
    Initiative, no new roll. Event "joined". Raises RulesError if she is
    already in the fight."""
    _live(state)
    fighter = _valid(fighter)
    cid = fighter.character_id
    if cid in state.order:
        raise RulesError(f"{fighter.name} is already in this fight.")
    back = next((f for f in state.fighters if f.character_id == cid), None)
    if back is not None:
        new = replace(state, removed=tuple(r for r in state.removed if r != cid))
    else:
        rolled = replace(
            fighter,
            initiative=roll_initiative(
                modifier=fighter.initiative_modifier, dice=dice, wound_penalty=wound_penalty
            ),
        )
        ranked = initiative_order(
            (*state.fighters, rolled), narrator_order=narrator_order, options=state.options
        )
        # the fighters already in keep their order; she goes before the first
        # one that ranks after her
        after = ranked[ranked.index(rolled) + 1 :]
        index = min((state.fighters.index(f) for f in after), default=len(state.fighters))
        new = replace(state, fighters=(*state.fighters[:index], rolled, *state.fighters[index:]))
        if index < state.place:  # her place has passed: the queue's place moves with it
            new = replace(new, place=state.place + 1)
    joined = new.fighter(cid)
    assert joined.initiative is not None
    data = {"fighter": cid, "initiative": joined.initiative.total, "returned": back is not None}
    events = [Event("joined", data)]
    return CombatTransition(_settle(new, events), tuple(events))


def remove_fighter(state: CombatState, *, fighter_id: int, reason: str = "") -> CombatTransition:
    """A narrator takes ``fighter_id`` out of the fight (fled, unconscious,
    dead); play moves on. Event "removed"."""
    _live(state)
    state.fighter(fighter_id)
    new = replace(
        state,
        removed=(*state.removed, fighter_id),
        holding=tuple(h for h in state.holding if h != fighter_id),
    )
    events = [Event("removed", {"fighter": fighter_id, "reason": reason.strip()[:200]})]
    return CombatTransition(_settle(new, events), tuple(events))


def end_combat(state: CombatState, *, reason: str = "") -> CombatTransition:
    """A narrator ends the fight. Event "combat_ended"."""
    _live(state)
    new = replace(state, ended=True, reason=reason.strip()[:200])
    return CombatTransition(new, (Event("combat_ended", {"reason": new.reason}),))


@dataclass(frozen=True)
class CombatMoves:
    """What one fighter may do now (:func:`legal_moves`); phones offer
    exactly these. ``act``: take her action (attack, fall prone, …);
    ``dodge``; ``yield_later`` / ``yield_next_turn``."""

    act: bool = False
    dodge: bool = False
    yield_later: bool = False
    yield_next_turn: bool = False

    @property
    def any(self) -> bool:
        """She has something to do now."""
        return self.act or self.dodge or self.yield_later or self.yield_next_turn


def legal_moves(state: CombatState, fighter_id: int) -> CombatMoves:
    """The moves :func:`act`, :func:`dodge` and :func:`yield_action` would
    accept from ``fighter_id`` now."""
    if state.ended or fighter_id in state.removed or fighter_id not in state.order:
        return CombatMoves()
    unused = fighter_id not in state.acted
    may_act = unused and (fighter_id in state.holding or whose_turn(state) == fighter_id)
    return CombatMoves(
        act=may_act,
        dodge=unused and fighter_id not in state.deferred,
        yield_later=may_act and fighter_id not in state.holding,
        yield_next_turn=may_act,
    )
