"""Combat rounds of By Night Studios' MET (``bns``): initiative, rounds and
turns, actions, the per-round target limits, the free maneuver of a Physical
focus (once per combat) and what successful maneuvers leave on a fighter
(grappled, prone, blinded, unconscious; killed or staked takes her out).

Source: seeds/002 "Resolving Combat", "Standard and Simple Actions",
"Maximum Attacks Per Round", "Physical, Mental, and Social Attacks",
"Retrying Failed Attacks", "Combat Maneuvers" (Burst of Speed, Grapple,
Knock Down, Blinding Attack, Knock Out, Pierce the Heart), "Physical Focuses
in Combat" and "Mass Combat"; RULES.md "``bns``". The immunity after a failed
Mental or Social challenge is not kept here: it is the challenge's rule
(``challenges.rules.bns``, checked by ``open_challenge`` in a combat and out
of one).

This module tracks the combat only. It does not play the challenges (that is
``challenges.rules.bns``): it takes facts as plain arguments ("Helen attacks
Grady with a Mental challenge using Dominate; it failed") and the web layer
joins the two. The moves, in order:

1. :func:`start_combat`: a narrator starts a combat with the fighters in it,
   ordered by initiative (the higher of Physical and Mental); a Surprise
   Action goes first, outside the order.
2. Each round every fighter in it has her initiative in turn
   (:func:`whose_turn`): she takes one standard and one simple action
   (:func:`take_action`), holds her initiative to assist later
   (:func:`hold`), or ends it (:func:`advance`, also the narrator's move).
   Out of order: :func:`burst_of_speed`, :func:`assist_defender`,
   :func:`assist_attacker`.
3. A turn is the everyman round, then Rage rounds 1, 2, … in which only the
   fighters with that many Rage rounds act; then a new turn.
4. The narrator may :func:`reorder` tied fighters, :func:`add_fighter`,
   :func:`remove_fighter`, :func:`set_rage_rounds`, :func:`grapple` /
   :func:`release`, and :func:`end_combat`.
5. A challenge's result reaches the combat with :func:`inflict` (the web
   layer passes each effect of a successful maneuver).

Where the seed is silent the engine decides as data, never by ruleset name:
initiative ties follow the caller's ``order_ties`` list then the name; who
acts in Rage rounds is each fighter's ``rage_rounds``; the numbers are
:class:`CombatOptions`. Every move is keyword-only with ``now`` (epoch
seconds) passed in, returns a :class:`CombatTransition` or raises
:class:`RulesError` before building anything, so a refused move changes
nothing. Nothing here reads a clock or keeps a timer: a Time out of the web
layer simply makes no move.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields, replace
from enum import StrEnum
from typing import Any, NamedTuple

from challenges.rules.bns.maneuvers import UNCONSCIOUS_SECONDS, Effect
from challenges.rules.bns.sheet import initiative
from challenges.rules.core import Category, Event, RulesError, _as, more_minutes

SCHEMA = 1
"""Version of :meth:`CombatState.to_dict`'s layout (key ``"schema"``)."""

MAX_NAME = 80
"""Longest fighter name or power name, in characters."""


@dataclass(frozen=True)
class CombatOptions:
    """The numbers of seeds/002's combat rules, as data.

    ``physical_per_round``, ``mental_per_round``, ``social_per_round``: how
    many challenges of each category one character may be the target of in
    one round, failed ones included (seeds/002 "Maximum Attacks Per Round":
    2, 1, 1). ``mental_social_everyman_only``: Mental and Social attacks only
    in the everyman round (seeds/002 "Physical, Mental, and Social Attacks").
    ``grappled_counts``: a grappled character counts as the target of this
    many Physical challenges each round (seeds/002 "Combat Maneuvers",
    Grapple: 1). ``steps_per_action``: steps moved with one action (seeds/002
    "Standard and Simple Actions": 3). ``grappler_steps``: a grappler who
    moves more steps than this in one round lets go (seeds/002 Grapple: 1).
    ``prone_steps``: steps a prone fighter crawls with one action, or moves
    as she stands up (seeds/002 Knock Down: 1). ``blind_clear_actions``:
    simple actions a blinded fighter spends clearing her eyes (seeds/002
    Blinding Attack: 2).
    """

    physical_per_round: int = 2
    mental_per_round: int = 1
    social_per_round: int = 1
    mental_social_everyman_only: bool = True
    grappled_counts: int = 1
    steps_per_action: int = 3
    grappler_steps: int = 1
    prone_steps: int = 1
    blind_clear_actions: int = 2

    def limit(self, category: Category) -> int:
        """Most challenges of ``category`` one target may take in one round."""
        return {
            Category.PHYSICAL: self.physical_per_round,
            Category.MENTAL: self.mental_per_round,
            Category.SOCIAL: self.social_per_round,
        }[Category(category)]


BNS_COMBAT = CombatOptions()
"""The options of ruleset ``bns`` (seeds/002)."""


class ActionKind(StrEnum):
    """One of a fighter's two actions per round (seeds/002 "Standard and
    Simple Actions"): STANDARD needs a challenge or her full attention;
    SIMPLE needs no challenge."""

    STANDARD = "standard"
    SIMPLE = "simple"


class ActionWhat(StrEnum):
    """What an action does: CHALLENGE (a standard action against a target),
    MOVE (up to ``steps_per_action`` steps; a prone fighter crawls
    ``prone_steps``), OTHER (anything else: drawing a weapon), ESCAPE (a
    grappled fighter's simple action to best one grappler, seeds/002
    Grapple), STAND_UP (a prone fighter's simple action, moving up to
    ``prone_steps``, seeds/002 Knock Down), CLEAR_EYES (a blinded fighter's
    simple action; ``blind_clear_actions`` of them end it, seeds/002
    Blinding Attack)."""

    CHALLENGE = "challenge"
    MOVE = "move"
    OTHER = "other"
    ESCAPE = "escape"
    STAND_UP = "stand_up"
    CLEAR_EYES = "clear_eyes"


@dataclass(frozen=True)
class Fighter:
    """One character in the combat.

    ``physical``, ``mental``: her Attribute ratings (≥ 0); her initiative is
    the higher (:attr:`initiative`, seeds/002 "Resolving Combat"; wounds do
    not lower it). ``rage_rounds``: how many Rage rounds of each turn she acts
    in (≥ 0; the seed is silent on who acts in them: the narrator sets it).
    ``grappled_by``: ids of the fighters grappling her; ``grappled_since``:
    ``(turn, rage_round)`` in which the grapple began. ``focus_used``: her
    Physical focus's free maneuver is spent for the rest of the combat
    (seeds/002 "Physical Focuses in Combat"). ``prone``: lying on the ground
    (Knock Down); ``blinded``: simple actions she must still spend clearing
    her eyes (Blinding Attack; 0: she sees); ``unconscious_until``: epoch
    seconds her Knock Out ends (None: awake). These last the combat through.

    The rest is this round's and is reset by each new round: ``done`` (her
    initiative is over), ``standard_used``, ``simple_used``, ``steps`` moved,
    ``held`` (she held her initiative to assist later, seeds/002 "Mass
    Combat"), ``burst`` (she used Burst of Speed), ``shielded`` (she used
    Assist Defender), ``assist_from`` (a fighter who assists her next
    Physical attack, Assist Attacker).
    """

    fighter_id: int
    name: str
    physical: int
    mental: int
    rage_rounds: int = 0
    grappled_by: tuple[int, ...] = ()
    grappled_since: tuple[int, int] | None = None
    focus_used: bool = False
    prone: bool = False
    blinded: int = 0
    unconscious_until: float | None = None
    done: bool = False
    standard_used: bool = False
    simple_used: bool = False
    steps: int = 0
    held: bool = False
    burst: bool = False
    shielded: bool = False
    assist_from: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "grappled_by", tuple(self.grappled_by))
        if self.grappled_since is not None:
            turn, rage = self.grappled_since
            object.__setattr__(self, "grappled_since", (int(turn), int(rage)))

    @property
    def initiative(self) -> int:
        """The higher of Physical and Mental (:func:`challenges.rules.bns.sheet.initiative`)."""
        return initiative(self.physical, self.mental)

    def unconscious(self, now: float) -> bool:
        """Knocked out and not yet awake at ``now`` (epoch seconds)."""
        return self.unconscious_until is not None and self.unconscious_until > now

    def used(self, kind: ActionKind) -> bool:
        """She has used her ``kind`` action this round."""
        return self.standard_used if ActionKind(kind) is ActionKind.STANDARD else self.simple_used

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form: every field, ``grappled_by`` and ``grappled_since``
        as lists."""
        d = asdict(self)
        d["grappled_by"] = list(self.grappled_by)
        d["grappled_since"] = None if self.grappled_since is None else list(self.grappled_since)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Fighter:
        """Inverse of :meth:`to_dict`; KeyError/ValueError if malformed."""
        since = d.get("grappled_since")
        return cls(
            fighter_id=int(d["fighter_id"]),
            name=str(d["name"]),
            physical=int(d["physical"]),
            mental=int(d["mental"]),
            rage_rounds=int(d.get("rage_rounds", 0)),
            grappled_by=tuple(int(i) for i in d.get("grappled_by", ())),
            grappled_since=None if since is None else (int(since[0]), int(since[1])),
            focus_used=bool(d.get("focus_used", False)),
            prone=bool(d.get("prone", False)),
            blinded=int(d.get("blinded", 0)),
            unconscious_until=(
                None if d.get("unconscious_until") is None else float(d["unconscious_until"])
            ),
            done=bool(d.get("done", False)),
            standard_used=bool(d.get("standard_used", False)),
            simple_used=bool(d.get("simple_used", False)),
            steps=int(d.get("steps", 0)),
            held=bool(d.get("held", False)),
            burst=bool(d.get("burst", False)),
            shielded=bool(d.get("shielded", False)),
            assist_from=None if d.get("assist_from") is None else int(d["assist_from"]),
        )


@dataclass(frozen=True)
class Attack:
    """One challenge of the combat against a target.

    ``attack_id``: its number in the combat (0, 1, …); ``turn`` and
    ``rage_round`` (0: the everyman round) when it was made; ``target``: who
    defends it now, ``shielded``: the original target when an ally took her
    place (Assist Defender: it counts against both); ``power``: the power
    used ("" for a plain Physical attack); ``assisted_by``: the fighter whose
    Assist Attacker it carries; ``failed``: None until the web layer says how
    it ended; ``at``: epoch seconds when it was made.
    """

    attack_id: int
    attacker: int
    target: int
    category: Category
    power: str
    turn: int
    rage_round: int
    at: float
    failed: bool | None = None
    shielded: int | None = None
    assisted_by: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "category", _as(Category, self.category))

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form, ``category`` as its value."""
        d = asdict(self)
        d["category"] = self.category.value
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Attack:
        """Inverse of :meth:`to_dict`."""
        return cls(
            attack_id=int(d["attack_id"]),
            attacker=int(d["attacker"]),
            target=int(d["target"]),
            category=Category(d["category"]),
            power=str(d["power"]),
            turn=int(d["turn"]),
            rage_round=int(d["rage_round"]),
            at=float(d["at"]),
            failed=None if d.get("failed") is None else bool(d["failed"]),
            shielded=None if d.get("shielded") is None else int(d["shielded"]),
            assisted_by=None if d.get("assisted_by") is None else int(d["assisted_by"]),
        )


@dataclass(frozen=True)
class CombatState:
    """The whole state of one combat; moves return new ones.

    ``fighters``: in the order they act (initiative, highest first; ties as
    the narrator set them). ``turn`` (1, 2, …) and ``rage_round`` (0: the
    everyman round, then 1 … the most ``rage_rounds`` of any fighter): the
    round being played. ``surprise``: the fighter whose Surprise Action is
    still to come (None once taken or if there is none). ``attacks``: every
    challenge of the combat, oldest first.
    ``round_since``: epoch seconds when this round began; ``ended``: the
    narrator ended the combat. ``options``: the rule numbers. ``removed``:
    fighters the narrator took out, as they were (their round's fields
    follow the rounds, so one brought back in the same round does not act
    twice).
    """

    fighters: tuple[Fighter, ...]
    turn: int = 1
    rage_round: int = 0
    surprise: int | None = None
    attacks: tuple[Attack, ...] = ()
    round_since: float = 0.0
    ended: bool = False
    options: CombatOptions = BNS_COMBAT
    removed: tuple[Fighter, ...] = ()

    def fighter(self, fighter_id: int) -> Fighter:
        """The fighter ``fighter_id``; RulesError if she is not in this combat."""
        for f in self.fighters:
            if f.fighter_id == fighter_id:
                return f
        raise RulesError("That character is not in this combat.")

    @property
    def round(self) -> tuple[int, int]:
        """``(turn, rage_round)`` of the round being played."""
        return (self.turn, self.rage_round)

    @property
    def first_round(self) -> bool:
        """The combat's first round (turn 1's everyman round), the only one
        in which a Knock Out may be tried (seeds/002 "Combat Maneuvers",
        Knock Out)."""
        return self.round == (1, 0)

    @property
    def rage_rounds(self) -> int:
        """How many Rage rounds this turn has: the most ``rage_rounds`` of
        any fighter (0: the turn is the everyman round alone)."""
        return max((f.rage_rounds for f in self.fighters), default=0)

    def in_round(self, fighter: Fighter) -> bool:
        """``fighter`` acts in this round: everyone in the everyman round,
        in Rage round ``n`` those with at least ``n`` Rage rounds."""
        return self.rage_round == 0 or fighter.rage_rounds >= self.rage_round

    def targeted(self, target: int, category: Category) -> int:
        """How many challenges of ``category`` count against ``target`` this
        round: those made against her (failed ones too), those she was
        shielded from or took for an ally (Assist Defender), and for
        Physical ``grappled_counts`` while she has been grappled since an
        earlier round (in the round the grapple begins, the Grapple attack
        itself is her Physical challenge). seeds/002 "Maximum Attacks Per
        Round", "Mass Combat", Grapple."""
        category = Category(category)
        n = sum(
            1
            for a in self.attacks
            if (a.turn, a.rage_round) == self.round
            and a.category is category
            and target in (a.target, a.shielded)
        )
        if category is Category.PHYSICAL:
            who = next((f for f in self.fighters if f.fighter_id == target), None)
            if who is not None and who.grappled_by and (who.grappled_since or (0, 0)) < self.round:
                n += self.options.grappled_counts
        return n

    def to_dict(self) -> dict[str, Any]:
        """A JSON- and msgpack-safe dict (``"schema"``: layout version).
        Lossless: ``CombatState.from_dict(s.to_dict()) == s``."""
        return {
            "schema": SCHEMA,
            "fighters": [f.to_dict() for f in self.fighters],
            "turn": self.turn,
            "rage_round": self.rage_round,
            "surprise": self.surprise,
            "attacks": [a.to_dict() for a in self.attacks],
            "round_since": self.round_since,
            "ended": self.ended,
            "options": asdict(self.options),
            "removed": [f.to_dict() for f in self.removed],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CombatState:
        """Inverse of :meth:`to_dict`. Raises ValueError for an unknown schema
        version or a bad value, KeyError for a missing key."""
        if d.get("schema", SCHEMA) != SCHEMA:
            raise ValueError(f"Unknown CombatState schema {d.get('schema')!r}")
        surprise = d.get("surprise")
        o = d.get("options", {})
        return cls(
            fighters=tuple(Fighter.from_dict(f) for f in d["fighters"]),
            turn=int(d["turn"]),
            rage_round=int(d["rage_round"]),
            surprise=None if surprise is None else int(surprise),
            attacks=tuple(Attack.from_dict(a) for a in d["attacks"]),
            round_since=float(d["round_since"]),
            ended=bool(d["ended"]),
            removed=tuple(Fighter.from_dict(f) for f in d.get("removed", ())),
            options=replace(
                BNS_COMBAT,
                **{
                    f.name: type(getattr(BNS_COMBAT, f.name))(o[f.name])
                    for f in fields(CombatOptions)
                    if f.name in o
                },
            ),
        )


class CombatTransition(NamedTuple):
    """What a combat move produces: the new state and its events, in order."""

    state: CombatState
    events: tuple[Event, ...]


# --- reading the state -------------------------------------------------------------


def whose_turn(state: CombatState) -> int | None:
    """The id of the fighter acting now: the one whose Surprise Action is
    pending, else the first fighter in the order who acts in this round and
    whose initiative is not over; None once the combat has ended (or has
    nobody left). seeds/002 "Resolving Combat", "Surprise Action"."""
    if state.ended:
        return None
    if state.surprise is not None:
        return state.surprise
    return next(
        (f.fighter_id for f in state.fighters if state.in_round(f) and not f.done),
        None,
    )


def round_label(state: CombatState) -> str:
    """The round in words: "Turn 1 · Surprise Action", "Turn 1 · Everyman
    round", "Turn 2 · Rage round 1", or "Combat over"."""
    if state.ended:
        return "Combat over"
    if state.surprise is not None:
        return f"Turn {state.turn} · Surprise Action"
    if state.rage_round == 0:
        return f"Turn {state.turn} · Everyman round"
    return f"Turn {state.turn} · Rage round {state.rage_round}"


_COUNT = {0: "no", 1: "one", 2: "two", 3: "three", 4: "four"}


def _times(n: int, category: Category) -> str:
    word = _COUNT.get(n, str(n))
    return f"{word} {category.label} challenge" + ("" if n == 1 else "s")


# --- checks shared by the moves and legal_actions ------------------------------------


def _live(state: CombatState) -> None:
    if state.ended:
        raise RulesError("This combat is over.")


def _not_before_surprise(state: CombatState, who: Fighter) -> None:
    if state.surprise is not None and state.surprise != who.fighter_id:
        name = state.fighter(state.surprise).name
        raise RulesError(f"Nobody acts before {name}'s Surprise Action.")


def _in_round(state: CombatState, who: Fighter) -> None:
    if not state.in_round(who):
        raise RulesError(f"{who.name} does not act in Rage round {state.rage_round}.")


def _on_initiative(state: CombatState, who: Fighter) -> None:
    """``who`` is acting now (her Surprise Action or her initiative)."""
    _live(state)
    _not_before_surprise(state, who)
    acting = whose_turn(state)
    if acting != who.fighter_id:
        if who.done:
            raise RulesError(f"{who.name}'s initiative this round is over.")
        _in_round(state, who)
        name = state.fighter(acting).name if acting is not None else "nobody"
        raise RulesError(f"It is {name}'s initiative, not {who.name}'s.")


def _unused(who: Fighter, kind: ActionKind) -> None:
    if who.used(kind):
        raise RulesError(f"{who.name} has already taken her {kind.value} action this round.")


def _steps(state: CombatState, who: Fighter, steps: Any) -> int:
    most = state.options.prone_steps if who.prone else state.options.steps_per_action
    if isinstance(steps, bool) or not isinstance(steps, int) or not 0 <= steps <= most:
        if who.prone:
            raise RulesError(f"{who.name} is prone: she crawls {_steps_word(most)} at most.")
        raise RulesError(f"One action moves 0 to {most} steps.")
    if steps and who.grappled_by:
        raise RulesError(f"{who.name} is grappled: she cannot move.")
    return steps


def _steps_word(n: int) -> str:
    return f"{_COUNT.get(n, str(n))} step" + ("" if n == 1 else "s")


def _awake(who: Fighter, now: float) -> None:
    """RulesError while ``who`` is knocked out (seeds/002 Knock Out)."""
    if who.unconscious(now):
        left = (who.unconscious_until or now) - now
        raise RulesError(f"{who.name} is unconscious for {more_minutes(left)}.")


def _may_tactic(state: CombatState, who: Fighter, kind: ActionKind, now: float) -> None:
    """``who`` may spend her ``kind`` action on a mass combat tactic now:
    before her initiative, during it, or after it if she held it
    (seeds/002 "Mass Combat"), awake."""
    _live(state)
    _awake(who, now)
    _not_before_surprise(state, who)
    if state.surprise is not None:
        raise RulesError("A mass combat tactic waits until the Surprise Action is over.")
    _in_round(state, who)
    _unused(who, kind)
    if who.done and not who.held:
        raise RulesError(f"{who.name}'s initiative this round is over and she did not hold it.")


def _check_challenge(
    state: CombatState,
    who: Fighter,
    *,
    target: int | None,
    category: Category | None,
    power: str,
    now: float,
) -> tuple[Fighter, Category, str]:
    """A challenge ``who`` may make now against ``target``: the target, its
    category and the power's name. RulesError as :func:`take_action` says."""
    if target is None or category is None:
        raise RulesError("A challenge needs a target and a category.")
    try:
        category = Category(category)
    except ValueError:
        raise RulesError("A challenge is Physical, Social or Mental.") from None
    victim = state.fighter(target)
    if victim.fighter_id == who.fighter_id:
        raise RulesError("You cannot challenge yourself.")
    power = " ".join(str(power).split())[:MAX_NAME]
    if category is not Category.PHYSICAL:
        if state.options.mental_social_everyman_only and state.rage_round:
            raise RulesError(f"{category.label} challenges are made only in the everyman round.")
        if not power:
            raise RulesError(f"Name the power of this {category.label} challenge.")
    elif who.grappled_by:
        raise RulesError(f"{who.name} is grappled: her standard action cannot be Physical.")
    limit = state.options.limit(category)
    if state.targeted(victim.fighter_id, category) >= limit:
        raise RulesError(
            f"{victim.name} has already been the target of {_times(limit, category)} this round."
        )
    return victim, category, power


# --- building new states -------------------------------------------------------------


def _put(state: CombatState, *fighters: Fighter) -> CombatState:
    new = {f.fighter_id: f for f in fighters}
    return replace(state, fighters=tuple(new.get(f.fighter_id, f) for f in state.fighters))


_ROUND_FIELDS = (
    "done",
    "standard_used",
    "simple_used",
    "steps",
    "held",
    "burst",
    "shielded",
    "assist_from",
)
"""The fields of :class:`Fighter` that are this round's."""

_NEW_ROUND = Fighter(0, "", 0, 0)


def _fresh(f: Fighter) -> Fighter:
    """``f`` at the start of a round."""
    return _round_of(f, _NEW_ROUND)


def _round_of(f: Fighter, source: Fighter) -> Fighter:
    """``f`` with the round's fields of ``source``."""
    fields_: dict[str, Any] = {n: getattr(source, n) for n in _ROUND_FIELDS}
    return replace(f, **fields_)


def _next_round(state: CombatState, now: float, events: list[Event]) -> CombatState:
    """The round after this one: the next Rage round if any fighter acts in
    it, else the everyman round of a new turn. seeds/002 "Rounds and Turns"."""
    if state.rage_round < state.rage_rounds:
        turn, rage = state.turn, state.rage_round + 1
    else:
        turn, rage = state.turn + 1, 0
    state = replace(
        state,
        turn=turn,
        rage_round=rage,
        round_since=now,
        fighters=tuple(_fresh(f) for f in state.fighters),
        removed=tuple(_fresh(f) for f in state.removed),
    )
    events.append(Event("round_started", {"turn": turn, "rage_round": rage}))
    return state


def _settle(state: CombatState, now: float, events: list[Event]) -> CombatState:
    """Start the next round once nobody is left to act in this one."""
    for _ in range(2 + state.rage_rounds):
        if state.ended or not state.fighters or whose_turn(state) is not None:
            break
        state = _next_round(state, now, events)
    return state


def _release_grip(
    state: CombatState, grappler: int, keep: int | None, events: list[Event]
) -> CombatState:
    """``grappler`` lets go of everyone she grapples but ``keep``."""
    changed = []
    for f in state.fighters:
        if grappler in f.grappled_by and f.fighter_id != keep:
            left = tuple(i for i in f.grappled_by if i != grappler)
            changed.append(
                replace(f, grappled_by=left, grappled_since=f.grappled_since if left else None)
            )
            events.append(Event("grapple_released", {"fighter": f.fighter_id, "by": grappler}))
    return _put(state, *changed)


def _grip_rule(
    state: CombatState, who: int, target: int | None, events: list[Event]
) -> CombatState:
    """A grappler relinquishes her Grapple if she targets anyone else, or
    moves more than ``grappler_steps`` steps in a round (seeds/002 Grapple)."""
    held = [f.fighter_id for f in state.fighters if who in f.grappled_by]
    if not held:
        return state
    if state.fighter(who).steps > state.options.grappler_steps:
        return _release_grip(state, who, None, events)
    if target is not None:
        return _release_grip(state, who, target, events)
    return state


# --- the moves ------------------------------------------------------------------------


def _order(fighters: Sequence[Fighter], order_ties: Sequence[int]) -> tuple[Fighter, ...]:
    place = {fid: i for i, fid in enumerate(order_ties)}
    return tuple(
        sorted(
            fighters,
            key=lambda f: (
                -f.initiative,
                place.get(f.fighter_id, len(place)),
                f.name.casefold(),
                f.fighter_id,
            ),
        )
    )


def _valid_fighter(f: Fighter) -> Fighter:
    name = " ".join(str(f.name).split())[:MAX_NAME]
    if not name:
        raise RulesError("Each fighter needs a name.")
    for value in (f.physical, f.mental, f.rage_rounds):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise RulesError(
                f"{name}'s Physical, Mental and Rage rounds must be whole numbers ≥ 0."
            )
    return _fresh(replace(f, name=name, grappled_by=(), grappled_since=None))


def start_combat(
    *,
    fighters: Sequence[Fighter],
    now: float,
    surprise: int | None = None,
    order_ties: Sequence[int] = (),
    options: CombatOptions = BNS_COMBAT,
) -> CombatTransition:
    """A narrator starts a combat of ``fighters`` (two or more, each once)
    → turn 1, everyman round. They act by initiative, highest first
    (seeds/002 "Resolving Combat"); equal initiatives in the order of
    ``order_ties`` (fighter ids, e.g. the narrator's drag order), then by
    name (the seed is silent: the narrator decides, :func:`reorder`).
    ``surprise``: the fighter whose sudden action starts the combat; she
    takes that one action first, outside the order, and her other action on
    her initiative (seeds/002 "Surprise Action"). Per-round fields and
    grapples of the given fighters are cleared. Event "combat_started"
    (the order, the surprise). RulesError: fewer than two, a fighter twice,
    a bad rating, an unknown surprise."""
    ready = [_valid_fighter(f) for f in fighters]
    ids = [f.fighter_id for f in ready]
    if len(set(ids)) != len(ids):
        raise RulesError("A character is listed twice.")
    if len(ids) < 2:
        raise RulesError("A combat needs at least two characters.")
    if surprise is not None and surprise not in ids:
        raise RulesError("The Surprise Action must be one of the fighters'.")
    state = CombatState(
        fighters=_order(ready, order_ties),
        surprise=surprise,
        round_since=now,
        options=options,
    )
    data = {"order": [f.fighter_id for f in state.fighters], "surprise": surprise}
    return CombatTransition(state, (Event("combat_started", data),))


_SIMPLE_ONLY = {
    ActionWhat.ESCAPE: "Escaping a grapple takes your simple action.",
    ActionWhat.STAND_UP: "Standing up takes your simple action.",
    ActionWhat.CLEAR_EYES: "Clearing your eyes takes your simple action.",
}


def take_action(
    state: CombatState,
    *,
    fighter: int,
    kind: ActionKind,
    what: ActionWhat,
    now: float,
    steps: int = 0,
    target: int | None = None,
    category: Category | None = None,
    power: str = "",
    failed: bool | None = None,
    focus: bool = False,
) -> CombatTransition:
    """``fighter`` takes her ``kind`` action on her initiative (or as her
    Surprise Action, which ends the Surprise phase). ``what``:

    - CHALLENGE (standard only): against ``target`` in ``category``; Mental
      and Social name their ``power``. It counts against the target's limit
      for this round whether it fails or not; ``failed`` (None: not known
      yet) settles it at once (:func:`settle_attack`). Carries a pending
      Assist Attacker if Physical.
    - MOVE: ``steps`` (1 to ``steps_per_action``; 6 in a round with both).
    - OTHER: anything else, ``steps`` optional.
      ``focus``: the challenge carries her Physical focus's free maneuver,
      spent for the rest of the combat (``focus_used``).
    - ESCAPE (simple only): a grappled fighter tries to best ``target``, one
      of her grapplers; :func:`release` if she wins.
    - STAND_UP (simple only): a prone fighter stands, moving ``steps`` (up
      to ``prone_steps``). A prone fighter's MOVE crawls ``prone_steps``.
    - CLEAR_EYES (simple only): a blinded fighter spends one of the
      ``blind_clear_actions`` simple actions that end it.

    A grappler who targets someone else or moves too far lets go.
    Events "action" and, for a challenge, "attacked" {attack, attacker,
    target, category, power}. RulesError (nothing changes): the combat is
    over; not her initiative; she is unconscious; that action used; a
    challenge as a simple action; steps out of range, grappled or prone; no
    target or category; herself; Mental/Social outside the everyman round or
    without a power; her focus's free maneuver used already ("Helen has used
    her focus's free maneuver this combat."); standing up when not prone,
    clearing eyes when not blinded; the target's limit reached ("Grady has
    already been the target of two Physical challenges this round."). seeds/002 "Standard and Simple
    Actions", "Maximum Attacks Per Round", "Physical, Mental, and Social
    Attacks", "Physical Focuses in Combat", Grapple, Knock Down, Blinding
    Attack, Knock Out."""
    who = state.fighter(fighter)
    try:
        kind, what = ActionKind(kind), ActionWhat(what)
    except ValueError:
        raise RulesError(
            "An action is standard or simple: a challenge, a move, an escape or another."
        ) from None
    _on_initiative(state, who)
    _awake(who, now)
    _unused(who, kind)
    steps = _steps(state, who, steps)
    if what in (ActionWhat.ESCAPE, ActionWhat.STAND_UP, ActionWhat.CLEAR_EYES) and (
        kind is not ActionKind.SIMPLE
    ):
        raise RulesError(_SIMPLE_ONLY[what])
    events: list[Event] = []
    attack: Attack | None = None
    named: int | None = None
    if what is ActionWhat.CHALLENGE:
        if kind is not ActionKind.STANDARD:
            raise RulesError("A challenge takes your standard action.")
        victim, category, power = _check_challenge(
            state, who, target=target, category=category, power=power, now=now
        )
        assisted = who.assist_from if category is Category.PHYSICAL else None
        attack = Attack(
            attack_id=len(state.attacks),
            attacker=who.fighter_id,
            target=victim.fighter_id,
            category=category,
            power=power,
            turn=state.turn,
            rage_round=state.rage_round,
            at=now,
            assisted_by=assisted,
        )
        named = victim.fighter_id
        if assisted is not None:
            who = replace(who, assist_from=None)
        if focus:
            if who.focus_used:
                raise RulesError(f"{who.name} has used her focus's free maneuver this combat.")
            if category is not Category.PHYSICAL:
                raise RulesError("A focus's free maneuver goes with a Physical attack.")
            who = replace(who, focus_used=True)
    elif what is ActionWhat.ESCAPE:
        if target not in who.grappled_by:
            raise RulesError(f"{who.name} must best one of the characters grappling her.")
        named = target
    elif what is ActionWhat.STAND_UP:
        if not who.prone:
            raise RulesError(f"{who.name} is not prone.")
        who = replace(who, prone=False)
    elif what is ActionWhat.CLEAR_EYES:
        if not who.blinded:
            raise RulesError(f"{who.name} is not blinded.")
        who = replace(who, blinded=who.blinded - 1)
    elif what is ActionWhat.MOVE and not steps:
        raise RulesError("Say how many steps you move.")
    standard = kind is ActionKind.STANDARD
    who = replace(
        who,
        steps=who.steps + steps,
        standard_used=who.standard_used or standard,
        simple_used=who.simple_used or not standard,
    )
    surprised = state.surprise == who.fighter_id
    state = _put(state, who)
    events.append(
        Event(
            "action",
            {"fighter": who.fighter_id, "kind": kind.value, "what": what.value, "steps": steps},
        )
    )
    if attack is not None:
        state = replace(state, attacks=(*state.attacks, attack))
        events.append(
            Event(
                "attacked",
                {
                    "attack": attack.attack_id,
                    "attacker": attack.attacker,
                    "target": attack.target,
                    "category": attack.category.value,
                    "power": attack.power,
                },
            )
        )
    state = _grip_rule(state, who.fighter_id, named, events)
    if surprised:
        state = replace(state, surprise=None)
        events.append(Event("surprise_over", {"fighter": who.fighter_id}))
    if attack is not None and failed is not None:
        settled = settle_attack(state, attack=attack.attack_id, failed=failed, now=now)
        return CombatTransition(settled.state, (*events, *settled.events))
    return CombatTransition(state, tuple(events))


def settle_attack(state: CombatState, *, attack: int, failed: bool, now: float) -> CombatTransition:
    """The web layer says how challenge ``attack`` ended; a failed Physical
    attack may simply be tried again on a later action (the immunity after
    a failed Mental or Social one is the challenge's, ``challenges.rules.bns``).
    Event "attack_settled". RulesError: no such attack, or settled already.
    seeds/002 "Retrying Failed Attacks"."""
    if not isinstance(attack, int) or not 0 <= attack < len(state.attacks):
        raise RulesError("There is no such challenge in this combat.")
    record = state.attacks[attack]
    if record.failed is not None:
        raise RulesError("That challenge is already settled.")
    record = replace(record, failed=bool(failed))
    attacks = (*state.attacks[:attack], record, *state.attacks[attack + 1 :])
    events = (Event("attack_settled", {"attack": attack, "failed": bool(failed)}),)
    return CombatTransition(replace(state, attacks=attacks), events)


def advance(state: CombatState, *, by: int | None, now: float) -> CombatTransition:
    """The acting fighter ends her initiative (``by`` her id), or a narrator
    moves play on (``by`` None). Ends the Surprise phase if it is on;
    otherwise her unused actions are lost and the next fighter in the order
    acts; after the last one, the next round begins (the next Rage round,
    else a new turn). Events "initiative_over" and maybe "round_started".
    RulesError: the combat is over; ``by`` is not the acting fighter.
    seeds/002 "Resolving Combat", "Rounds and Turns"."""
    _live(state)
    acting = whose_turn(state)
    if by is not None:
        _on_initiative(state, state.fighter(by))
    events: list[Event] = []
    if state.surprise is not None:
        events.append(Event("surprise_over", {"fighter": state.surprise}))
        state = replace(state, surprise=None)
    elif acting is not None:
        state = _put(state, replace(state.fighter(acting), done=True))
        events.append(Event("initiative_over", {"fighter": acting, "by": by}))
    return CombatTransition(_settle(state, now, events), tuple(events))


def hold(state: CombatState, *, fighter: int, now: float) -> CombatTransition:
    """The acting ``fighter`` holds her initiative: play passes on, and she
    keeps her unused actions this round for mass combat tactics
    (:func:`assist_defender`, :func:`assist_attacker`). Event "held".
    RulesError: not her initiative; both her actions used. seeds/002 "Mass
    Combat"."""
    who = state.fighter(fighter)
    _on_initiative(state, who)
    if state.surprise is not None:
        raise RulesError("A Surprise Action cannot be held.")
    if who.standard_used and who.simple_used:
        raise RulesError(f"{who.name} has no action left to hold.")
    events = [Event("held", {"fighter": fighter})]
    state = _put(state, replace(who, done=True, held=True))
    return CombatTransition(_settle(state, now, events), tuple(events))


def burst_of_speed(
    state: CombatState, *, fighter: int, what: ActionWhat, now: float, steps: int = 0
) -> CombatTransition:
    """Burst of Speed: ``fighter`` takes her simple action now, before her
    initiative comes this round (a move of ``steps`` or OTHER), and her
    standard action later on her initiative. The maneuver's Willpower (or
    Dexterity focus) is the caller's business. When several claim to act at
    once, :func:`who_goes_first` orders them. Event "burst_of_speed".
    RulesError: Surprise phase; not in this round; her initiative has come;
    simple action used; a challenge or escape; steps as in
    :func:`take_action`. seeds/002 "Combat Maneuvers", Burst of Speed."""
    who = state.fighter(fighter)
    _live(state)
    _awake(who, now)
    _not_before_surprise(state, who)
    if state.surprise is not None:
        raise RulesError("Burst of Speed waits until the Surprise Action is over.")
    _in_round(state, who)
    if who.done or whose_turn(state) == fighter:
        raise RulesError(f"{who.name}'s initiative has come: Burst of Speed acts before it.")
    _unused(who, ActionKind.SIMPLE)
    what = ActionWhat(what)
    if what not in (ActionWhat.MOVE, ActionWhat.OTHER):
        raise RulesError("Burst of Speed takes a simple action: a move or another action.")
    steps = _steps(state, who, steps)
    if what is ActionWhat.MOVE and not steps:
        raise RulesError("Say how many steps you move.")
    events: list[Event] = []
    state = _put(state, replace(who, simple_used=True, burst=True, steps=who.steps + steps))
    events.append(Event("burst_of_speed", {"fighter": fighter, "what": what.value, "steps": steps}))
    state = _grip_rule(state, fighter, None, events)
    return CombatTransition(state, tuple(events))


def who_goes_first(state: CombatState, fighters: Sequence[int]) -> tuple[int, ...]:
    """``fighters`` who try to act at the same moment, in the order they act:
    the one acting on her natural initiative first, then the others
    (Bursts of Speed) by the combat's order, highest initiative first.
    RulesError if one is not in the combat. seeds/002 Burst of Speed."""
    for f in fighters:
        state.fighter(f)
    acting = whose_turn(state)
    place = {f.fighter_id: i for i, f in enumerate(state.fighters)}
    return tuple(sorted(set(fighters), key=lambda f: (f != acting, place[f])))


def assist_defender(
    state: CombatState, *, helper: int, attack: int, now: float, steps: int = 0
) -> CombatTransition:
    """Assist Defender: ``helper`` spends her simple action (once per round,
    before, during, or after a held initiative) to take an ally's place as
    the target of Physical challenge ``attack`` of this round, moving up to
    ``steps_per_action`` steps to her. Both count as targeted by it for the
    round's limits. Only one tactic per defence. Event "assist_defender".
    RulesError: no such attack this round, not Physical, settled, shielded
    already; the helper is its attacker or target, used her simple action or
    Assist Defender this round, her initiative is over and not held, or her
    own Physical limit is reached. seeds/002 "Mass Combat"."""
    who = state.fighter(helper)
    _live(state)
    if who.shielded:
        raise RulesError(f"{who.name} has already assisted a defender this round.")
    _may_tactic(state, who, ActionKind.SIMPLE, now)
    if not isinstance(attack, int) or not 0 <= attack < len(state.attacks):
        raise RulesError("There is no such challenge in this combat.")
    record = state.attacks[attack]
    if (record.turn, record.rage_round) != state.round or record.failed is not None:
        raise RulesError("Only a challenge still being played this round can be defended.")
    if record.category is not Category.PHYSICAL:
        raise RulesError("Mass combat tactics help only against Physical attacks.")
    if record.shielded is not None:
        raise RulesError("Someone already defends this attack.")
    if helper in (record.attacker, record.target):
        raise RulesError("Assist Defender shields another character from someone else.")
    steps = _steps(state, who, steps)
    if state.targeted(helper, Category.PHYSICAL) >= state.options.physical_per_round:
        limit = state.options.physical_per_round
        raise RulesError(
            f"{who.name} has already been the target of"
            f" {_times(limit, Category.PHYSICAL)} this round."
        )
    record = replace(record, target=helper, shielded=record.target)
    attacks = (*state.attacks[:attack], record, *state.attacks[attack + 1 :])
    state = replace(state, attacks=attacks)
    state = _put(state, replace(who, simple_used=True, shielded=True, steps=who.steps + steps))
    events = [
        Event(
            "assist_defender",
            {"helper": helper, "attack": attack, "defender": record.shielded, "steps": steps},
        )
    ]
    state = _grip_rule(state, helper, record.attacker, events)
    return CombatTransition(state, tuple(events))


def assist_attacker(
    state: CombatState, *, helper: int, attacker: int, now: float
) -> CombatTransition:
    """Assist Attacker: ``helper`` spends her standard action (before,
    during, or after a held initiative) to assist ``attacker``, who has
    accepted: her next Physical attack this round may add a combat maneuver
    without spending Willpower (the attack records ``assisted_by``). It
    lapses at the end of the round. One tactic per attack. Event
    "assist_attacker". RulesError: herself; standard action used; initiative
    over and not held; the attacker already assisted. seeds/002 "Mass
    Combat"."""
    who = state.fighter(helper)
    ally = state.fighter(attacker)
    _may_tactic(state, who, ActionKind.STANDARD, now)
    if helper == attacker:
        raise RulesError("Assist Attacker helps another character.")
    if ally.assist_from is not None:
        raise RulesError(f"{ally.name} is already assisted for her next attack.")
    state = _put(state, replace(who, standard_used=True), replace(ally, assist_from=helper))
    events = [Event("assist_attacker", {"helper": helper, "attacker": attacker})]
    state = _grip_rule(state, helper, attacker, events)
    return CombatTransition(state, tuple(events))


# --- the narrator's moves --------------------------------------------------------------


def reorder(state: CombatState, *, order: Sequence[int], now: float) -> CombatTransition:
    """A narrator sets the order of fighters with equal initiative: ``order``
    lists every fighter once, initiatives still highest first (the seed
    names no tie rule, seeds/002 "Resolving Combat"). Who has acted this
    round keeps her place in it; the acting fighter may not change once she
    has used an action. Event "reordered". RulesError: not every fighter
    once; a lower initiative before a higher one; the acting fighter
    would change mid-action."""
    _live(state)
    ids = [f.fighter_id for f in state.fighters]
    order = list(order)
    if sorted(order) != sorted(ids) or len(set(order)) != len(order):
        raise RulesError("List every fighter once.")
    fighters = tuple(state.fighter(i) for i in order)
    for a, b in zip(fighters, fighters[1:], strict=False):
        if a.initiative < b.initiative:
            raise RulesError(
                f"{a.name} (initiative {a.initiative}) cannot act after"
                f" {b.name} (initiative {b.initiative})."
            )
    new = replace(state, fighters=fighters)
    acting = whose_turn(state)
    if acting is not None and whose_turn(new) != acting:
        who = state.fighter(acting)
        if who.standard_used or who.simple_used:
            raise RulesError(f"{who.name} is in the middle of her initiative.")
    return CombatTransition(new, (Event("reordered", {"order": order}),))


def add_fighter(state: CombatState, *, fighter: Fighter, now: float) -> CombatTransition:
    """A narrator adds ``fighter`` to the combat at her place by initiative
    (after those of equal initiative). If her place this round has already
    passed she acts from the next round; a fighter brought back in the round
    she was removed keeps what she used of it. Event "fighter_added". RulesError:
    already in the combat; a bad rating; the combat is over."""
    _live(state)
    new = _valid_fighter(fighter)
    if any(f.fighter_id == new.fighter_id for f in state.fighters):
        raise RulesError(f"{new.name} is already in this combat.")
    acting = whose_turn(state)
    at = next(
        (i for i, f in enumerate(state.fighters) if f.initiative < new.initiative),
        len(state.fighters),
    )
    place = {f.fighter_id: i for i, f in enumerate(state.fighters)}
    passed = state.surprise is None and acting is not None and at <= place[acting]
    new = replace(new, done=passed)
    before = next((f for f in state.removed if f.fighter_id == new.fighter_id), None)
    if before is not None:  # back in the round she left: her round goes on
        new = replace(_round_of(new, before), done=new.done or before.done, assist_from=None)
        state = replace(
            state, removed=tuple(f for f in state.removed if f.fighter_id != new.fighter_id)
        )
    fighters = (*state.fighters[:at], new, *state.fighters[at:])
    state = replace(state, fighters=fighters)
    events = [Event("fighter_added", {"fighter": new.fighter_id, "place": at})]
    return CombatTransition(_settle(state, now, events), tuple(events))


def remove_fighter(
    state: CombatState, *, fighter: int, now: float, reason: str = ""
) -> CombatTransition:
    """A narrator takes ``fighter`` out of the combat (dead, fled,
    unconscious: ``reason``, free text). Her grapples end; if she was acting
    or due to take the Surprise Action, play moves on. Her past challenges
    stay on record. Event "fighter_removed". RulesError: not in the combat;
    the combat is over."""
    _live(state)
    who = state.fighter(fighter)
    acting = whose_turn(state)
    events = [
        Event(
            "fighter_removed",
            {"fighter": fighter, "reason": " ".join(str(reason).split())[:MAX_NAME]},
        )
    ]
    state = _release_grip(state, fighter, None, events)
    state = replace(
        state,
        fighters=tuple(
            replace(f, assist_from=None) if f.assist_from == fighter else f
            for f in state.fighters
            if f.fighter_id != who.fighter_id
        ),
        surprise=None if state.surprise == fighter else state.surprise,
        removed=(
            *(f for f in state.removed if f.fighter_id != fighter),
            replace(
                who,
                grappled_by=(),
                grappled_since=None,
                assist_from=None,
                # an initiative begun is over: brought back, she does not resume it
                done=who.done or who.standard_used or who.simple_used or acting == fighter,
            ),
        ),
    )
    return CombatTransition(_settle(state, now, events), tuple(events))


def set_rage_rounds(
    state: CombatState, *, fighter: int, rounds: int, now: float
) -> CombatTransition:
    """A narrator sets how many Rage rounds of each turn ``fighter`` acts in
    (≥ 0; the seed is silent on it). Takes effect at once: lowering it
    during a Rage round she no longer acts in passes her by. Event
    "rage_rounds". RulesError: not a whole number ≥ 0; not in the combat;
    the combat is over."""
    _live(state)
    who = state.fighter(fighter)
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 0:
        raise RulesError("Rage rounds are a whole number ≥ 0.")
    events = [Event("rage_rounds", {"fighter": fighter, "rounds": rounds})]
    state = _put(state, replace(who, rage_rounds=rounds))
    return CombatTransition(_settle(state, now, events), tuple(events))


def grapple(state: CombatState, *, fighter: int, by: int, now: float) -> CombatTransition:
    """``fighter`` is grappled by ``by`` (a Grapple attack succeeded, as the
    web layer learnt from the challenge). While grappled she cannot move nor
    use her standard action for a Physical action, and from the next round
    she counts as the target of one Physical challenge each round.
    Event "grappled". RulesError: herself; grappled by ``by`` already; not in
    the combat. seeds/002 "Combat Maneuvers", Grapple."""
    _live(state)
    who = state.fighter(fighter)
    state.fighter(by)
    if by == fighter:
        raise RulesError("A character cannot grapple herself.")
    if by in who.grappled_by:
        raise RulesError(f"{who.name} is already grappled by {state.fighter(by).name}.")
    since = who.grappled_since if who.grappled_by else state.round
    state = _put(state, replace(who, grappled_by=(*who.grappled_by, by), grappled_since=since))
    return CombatTransition(state, (Event("grappled", {"fighter": fighter, "by": by}),))


def release(state: CombatState, *, fighter: int, now: float) -> CombatTransition:
    """``fighter`` is free of every grapple (she bested one grappler, which
    is enough, or a narrator says so); she regains her standard action at
    once. Event "grapple_released". RulesError: she is not grappled.
    seeds/002 Grapple."""
    _live(state)
    who = state.fighter(fighter)
    if not who.grappled_by:
        raise RulesError(f"{who.name} is not grappled.")
    state = _put(state, replace(who, grappled_by=(), grappled_since=None))
    return CombatTransition(state, (Event("grapple_released", {"fighter": fighter, "by": None}),))


def inflict(
    state: CombatState,
    *,
    fighter: int,
    by: int,
    effect: Effect | str,
    now: float,
    until: float | None = None,
) -> CombatTransition:
    """What ``by``'s successful maneuver does to ``fighter`` in the combat,
    as the web layer learnt it from the challenge (``challenges.rules.bns``
    ``effects_of``): GRAPPLED, grappled by ``by`` (:func:`grapple`; nothing
    more if she already is); PRONE, on the ground until she stands up
    (:data:`ActionWhat.STAND_UP`); BLINDED, until she spends
    ``blind_clear_actions`` simple actions clearing her eyes; UNCONSCIOUS,
    she cannot act until ``until`` (default ``now`` + 10 minutes); KILLED or
    STAKED, out of the combat (:func:`remove_fighter`); DISARMED, only
    recorded. Events "inflicted" {"fighter", "by", "effect"} and the
    move's own. RulesError: not in the combat, an unknown effect, the
    combat is over. seeds/002 "Combat Maneuvers"."""
    _live(state)
    who = state.fighter(fighter)
    try:
        effect = Effect(effect)
    except ValueError:
        raise RulesError(f"There is no maneuver effect called {effect!r}.") from None
    events = [Event("inflicted", {"fighter": fighter, "by": by, "effect": effect.value})]
    if effect is Effect.GRAPPLED:
        if by in who.grappled_by:
            return CombatTransition(state, tuple(events))
        step = grapple(state, fighter=fighter, by=by, now=now)
        return CombatTransition(step.state, (*events, *step.events))
    if effect in (Effect.KILLED, Effect.STAKED):
        step = remove_fighter(state, fighter=fighter, reason=effect.label, now=now)
        return CombatTransition(step.state, (*events, *step.events))
    if effect is Effect.PRONE:
        who = replace(who, prone=True)
    elif effect is Effect.BLINDED:
        who = replace(who, blinded=state.options.blind_clear_actions)
    elif effect is Effect.UNCONSCIOUS:
        who = replace(who, unconscious_until=now + UNCONSCIOUS_SECONDS if until is None else until)
    return CombatTransition(_put(state, who), tuple(events))


def end_combat(state: CombatState, *, now: float, reason: str = "") -> CombatTransition:
    """A narrator ends the combat; every later move is refused. Event
    "combat_ended". RulesError: already over."""
    _live(state)
    reason = " ".join(str(reason).split())[:MAX_NAME]
    return CombatTransition(
        replace(state, ended=True), (Event("combat_ended", {"reason": reason}),)
    )


# --- what the phones and the dashboard show --------------------------------------------


@dataclass(frozen=True)
class LegalActions:
    """What one fighter may do now, for her phone's buttons.

    ``acting``: it is her initiative (or her Surprise Action). ``standard``
    / ``simple``: she may take that action now with :func:`take_action`.
    ``steps``: most steps one move action may take now (0: she cannot
    move; a prone fighter crawls ``prone_steps``). ``targets``: ``(target
    id, categories)`` she may challenge now (by the round and the limits;
    a power's immunity is the challenge's to refuse). ``escape``: grapplers
    she may try to best. ``stand_up`` / ``clear_eyes``: a prone or blinded
    fighter's simple action. ``advance`` / ``hold`` / ``burst``: those
    moves are open to her. ``assist_defender``: attack ids she may shield;
    ``assist_attacker``: fighter ids she may assist. An unconscious fighter
    may only end her initiative.
    """

    fighter: int
    acting: bool = False
    standard: bool = False
    simple: bool = False
    steps: int = 0
    targets: tuple[tuple[int, tuple[Category, ...]], ...] = ()
    escape: tuple[int, ...] = ()
    stand_up: bool = False
    clear_eyes: bool = False
    advance: bool = False
    hold: bool = False
    burst: bool = False
    assist_defender: tuple[int, ...] = ()
    assist_attacker: tuple[int, ...] = ()


def _ok(move: Callable[..., object], *args: Any, **kwargs: Any) -> bool:
    """``move(*args, **kwargs)`` raises no RulesError."""
    try:
        move(*args, **kwargs)
    except RulesError:
        return False
    return True


_ANY_POWER = "\x00"
"""A power name no sheet holds: a challenge's legality apart from immunities."""


def legal_actions(state: CombatState, fighter_id: int, now: float) -> LegalActions:
    """Every move open to ``fighter_id`` now, computed with the moves' own
    checks (so a listed move is accepted, an unlisted one refused; a
    challenge's power may still meet an immunity, ``challenges.rules.bns``).
    RulesError if she is not in the combat."""
    who = state.fighter(fighter_id)
    if state.ended:
        return LegalActions(fighter=fighter_id)
    acting = _ok(_on_initiative, state, who)
    awake = not who.unconscious(now)
    standard = acting and awake and not who.standard_used
    simple = acting and awake and not who.simple_used
    targets: list[tuple[int, tuple[Category, ...]]] = []
    for other in state.fighters if standard else ():
        cats = tuple(
            c
            for c in Category
            if _ok(
                _check_challenge,
                state,
                who,
                target=other.fighter_id,
                category=c,
                power=_ANY_POWER,
                now=now,
            )
        )
        if cats:
            targets.append((other.fighter_id, cats))
    moving = (standard or simple) and not who.grappled_by
    most = state.options.prone_steps if who.prone else state.options.steps_per_action
    return LegalActions(
        fighter=fighter_id,
        acting=acting,
        standard=standard,
        simple=simple,
        steps=most if moving else 0,
        targets=tuple(targets),
        escape=who.grappled_by if simple else (),
        stand_up=simple and who.prone,
        clear_eyes=simple and who.blinded > 0,
        advance=acting,
        hold=_ok(hold, state, fighter=fighter_id, now=now),
        burst=_ok(burst_of_speed, state, fighter=fighter_id, what=ActionWhat.OTHER, now=now),
        assist_defender=tuple(
            a.attack_id
            for a in state.attacks
            if _ok(assist_defender, state, helper=fighter_id, attack=a.attack_id, now=now)
        ),
        assist_attacker=tuple(
            f.fighter_id
            for f in state.fighters
            if _ok(assist_attacker, state, helper=fighter_id, attacker=f.fighter_id, now=now)
        ),
    )


def _left(state: CombatState, f: Fighter, kind: ActionKind) -> bool:
    """``f`` may still use her ``kind`` action this round."""
    return state.in_round(f) and not f.used(kind) and (f.held or not f.done)


def describe(state: CombatState, now: float | None = None) -> dict[str, Any]:
    """The dashboard's view of the combat, JSON-safe: ``{"label": "Turn 2 ·
    Rage round 1", "turn", "rage_round", "rage_rounds", "acting": id or
    None, "surprise": id or None, "ended", "round_since", "order": [{"id",
    "name", "initiative", "rage_rounds", "in_round", "done", "held",
    "standard_left", "simple_left", "steps", "grappled_by", "targeted":
    {"physical": n, "social": n, "mental": n}, "limits": {same},
    "focus_used", "conditions": [words, ...] (:func:`conditions`)}, ...]}``.
    ``now``: epoch seconds for an unconscious fighter's minutes left (None:
    every Knock Out not marked over counts)."""
    acting = whose_turn(state)
    order = []
    for f in state.fighters:
        order.append(
            {
                "id": f.fighter_id,
                "name": f.name,
                "initiative": f.initiative,
                "rage_rounds": f.rage_rounds,
                "in_round": state.in_round(f),
                "done": f.done,
                "held": f.held,
                "acting": f.fighter_id == acting,
                "standard_left": _left(state, f, ActionKind.STANDARD),
                "simple_left": _left(state, f, ActionKind.SIMPLE),
                "steps": f.steps,
                "grappled_by": list(f.grappled_by),
                "focus_used": f.focus_used,
                "conditions": conditions(state, f, now),
                "targeted": {c.value: state.targeted(f.fighter_id, c) for c in Category},
                "limits": {c.value: state.options.limit(c) for c in Category},
            }
        )
    out: dict[str, Any] = {
        "label": round_label(state),
        "turn": state.turn,
        "rage_round": state.rage_round,
        "rage_rounds": state.rage_rounds,
        "acting": acting,
        "surprise": state.surprise,
        "ended": state.ended,
        "round_since": state.round_since,
        "order": order,
    }
    return out


def conditions(state: CombatState, f: Fighter, now: float | None = None) -> list[str]:
    """What successful maneuvers left on ``f``, in words for the phones and
    the dashboard: "grappled by Helen", "prone", "blinded (2 simple actions
    to clear)", "unconscious (10 more minutes)" (at ``now``, epoch seconds;
    None: "unconscious"), and "focus's free maneuver used". seeds/002
    "Combat Maneuvers", "Physical Focuses in Combat"."""
    names = {x.fighter_id: x.name for x in (*state.fighters, *state.removed)}
    out = []
    if f.grappled_by:
        out.append("grappled by " + ", ".join(names.get(i, "?") for i in f.grappled_by))
    if f.prone:
        out.append("prone")
    if f.blinded:
        n = f.blinded
        out.append(f"blinded ({n} simple action{'s' if n != 1 else ''} to clear)")
    if f.unconscious_until is not None and (now is None or f.unconscious(now)):
        if now is None:
            out.append("unconscious")
        else:
            out.append(f"unconscious ({more_minutes(f.unconscious_until - now)})")
    if f.focus_used:
        out.append("focus's free maneuver used")
    return out
