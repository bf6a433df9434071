"""Mob scenes: several characters in one fight, settled one target at a time.

seeds/000 "The Mob Scene" (``met_classic``) and seeds/004 "Mob Scenes"
(``ukm``); RULES.md "Mob scene". The moves, in order:

1. :func:`open_mob`: a narrator opens the scene with the characters in it.
2. :func:`choose_target`: each one points at her target (or at nobody) at the
   same moment: choices stay hidden until all have chosen, or the narrator
   closes the choosing (:func:`close_choosing`; who has not chosen attacks
   nobody). Then the targets are ordered: most attackers first; equal numbers
   in the order the narrator listed the characters (the seeds give no rule).
   Under ``mob_attackers_max`` (``ukm``: 5) only the first attackers of a
   target in that list join its challenge; the others' actions drop.
3. For each target: if she cannot bid what she must (one Trait per attacker
   under ``mob_defender_bids_each``, ``met_classic``; else the usual bid) she
   loses at once. Else her attackers pick a leader (:func:`pick_leader`; one
   attacker is her own leader), each attacker bids one Trait and states what
   she does (:func:`mob_bid`), and the defender bids (or gives up).
4. One test settles the target: the leader against the defender, an opposed
   :class:`ChallengeState` played with the usual moves of
   ``challenges.rules.engine`` (only the leader compares or overbids); its
   ``mob_attackers`` makes the defender one Trait down per attacker beyond
   the leader in ties under ``mob_extra_attackers_down`` (``ukm``). Feed each
   of its transitions to :func:`play_test`; when it resolves the target is
   settled: attackers win → the defender loses every Trait she bid and, in
   an attack, takes one wound (``mob_most_damaging_effect``, ``ukm``: the
   most damaging single effect stated by an attacker, in health levels);
   defender wins → every attacker loses the Trait he bid and, in an attack,
   she may hurt one attacker of her choice (:func:`hurt`); a draw
   (``met_classic`` equal counts) → everybody loses what she bid.
5. Then the next target, until every target is settled (stage SETTLED).

Everything is a frozen dataclass; moves return :class:`MobTransition` or raise
:class:`RulesError` before building anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, NamedTuple

from challenges.rules import judge
from challenges.rules.core import (
    Category,
    ChallengeState,
    Combatant,
    Event,
    Kind,
    Loss,
    Outcome,
    RulesError,
    Stage,
    TestRecord,
    Transition,
    _as,
)
from challenges.rules.engine import _validate_bids
from challenges.rules.rulesets import bids_required, get_ruleset, met_ruleset

MAX_DAMAGE = 5
"""Most health levels one attacker's stated effect may do (a guard)."""

MAX_EFFECT = 100
"""Longest stated effect, in characters."""


class MobStage(StrEnum):
    """Where a mob scene stands: CHOOSING targets; for the current target,
    LEADER (her attackers pick a leader), BIDS (attackers and defender bid),
    TEST (the leader tests the defender), HURT (the defender won an attack and
    picks an attacker to hurt, or nobody); SETTLED: every target is settled."""

    CHOOSING = "choosing"
    LEADER = "leader"
    BIDS = "bids"
    TEST = "test"
    HURT = "hurt"
    SETTLED = "settled"


class MobOutcome(StrEnum):
    """How one target was settled. DEFENDER_GAVE_UP: she could not (or would
    not) bid what she must and lost at once."""

    ATTACKERS_WIN = "attackers_win"
    DEFENDER_WINS = "defender_wins"
    DRAW = "draw"
    DEFENDER_GAVE_UP = "defender_gave_up"
    VOID = "void"


@dataclass(frozen=True)
class AttackerBid:
    """One attacker's bid: the Trait (name as bid, its ``trait_id``), and what
    she does on a win (``effect``, free text) worth ``damage`` health levels."""

    character_id: int
    trait: str
    trait_id: int | None = None
    effect: str = ""
    damage: int = 1


@dataclass(frozen=True)
class MobTarget:
    """One target of the scene and how she was settled.

    ``attackers``: character ids, in the narrator's order; ``dropped``: those
    over ``mob_attackers_max``; ``leader``: who tests for them; ``bids``: one
    :class:`AttackerBid` per attacker who has bid; ``defender_bids``: ``(name,
    trait_id)`` per copy; ``test``: the leader's test (None before the bids
    are in); ``outcome``, ``losses`` (one :class:`Loss` per Trait copy lost),
    ``wounds`` (character ids, one health level each), ``hurt`` (the attacker
    the defender chose to hurt, if any), ``effect`` (the stated effect the
    attackers' win applied, :func:`_effect`) once settled.
    """

    defender: int
    attackers: tuple[int, ...]
    dropped: tuple[int, ...] = ()
    leader: int | None = None
    bids: tuple[AttackerBid, ...] = ()
    defender_bids: tuple[tuple[str, int | None], ...] = ()
    defender_bid_in: bool = False
    test: ChallengeState | None = None
    outcome: MobOutcome | None = None
    losses: tuple[Loss, ...] = ()
    wounds: tuple[int, ...] = ()
    hurt: int | None = None
    effect: str = ""

    def bid_of(self, character_id: int) -> AttackerBid | None:
        """The bid of attacker ``character_id`` (None: not yet)."""
        return next((b for b in self.bids if b.character_id == character_id), None)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {
            "defender": self.defender,
            "attackers": list(self.attackers),
            "dropped": list(self.dropped),
            "leader": self.leader,
            "bids": [[b.character_id, b.trait, b.trait_id, b.effect, b.damage] for b in self.bids],
            "defender_bids": [[n, i] for n, i in self.defender_bids],
            "defender_bid_in": self.defender_bid_in,
            "test": None if self.test is None else self.test.to_dict(),
            "outcome": None if self.outcome is None else self.outcome.value,
            "losses": [
                [x.character_id, x.trait, x.category.value, x.trait_id] for x in self.losses
            ],
            "wounds": list(self.wounds),
            "hurt": self.hurt,
            "effect": self.effect,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MobTarget:
        """Inverse of :meth:`to_dict`."""
        return cls(
            defender=int(d["defender"]),
            attackers=tuple(int(a) for a in d["attackers"]),
            dropped=tuple(int(a) for a in d["dropped"]),
            leader=_int(d["leader"]),
            bids=tuple(
                AttackerBid(int(c), str(t), _int(i), str(e), int(n)) for c, t, i, e, n in d["bids"]
            ),
            defender_bids=tuple((str(n), _int(i)) for n, i in d["defender_bids"]),
            defender_bid_in=bool(d["defender_bid_in"]),
            test=None if d["test"] is None else ChallengeState.from_dict(d["test"]),
            outcome=None if d["outcome"] is None else MobOutcome(d["outcome"]),
            losses=tuple(
                Loss(int(c), str(t), Category(cat), _int(i)) for c, t, cat, i in d["losses"]
            ),
            wounds=tuple(int(w) for w in d["wounds"]),
            hurt=_int(d["hurt"]),
            effect=str(d.get("effect", "")),
        )


@dataclass(frozen=True)
class MobScene:
    """The whole state of one mob scene.

    ``participants``: the characters in it, in the narrator's order (their
    Traits refreshed by the caller before each move, :meth:`with_participants`);
    ``choices``: ``(chooser, target or None)`` in the order they came (secret
    until the choosing closes: never send them to a player as is);
    ``targets``: in the order they are settled (set when the choosing closes);
    ``current``: index of the target being settled. ``is_attack``: wounds are
    dealt; ``category``: the Traits bid.
    """

    ruleset: str
    category: Category
    is_attack: bool
    participants: tuple[Combatant, ...]
    stage: MobStage
    stage_since: float
    choices: tuple[tuple[int, int | None], ...] = ()
    targets: tuple[MobTarget, ...] = ()
    current: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "category", _as(Category, self.category))
        object.__setattr__(self, "stage", _as(MobStage, self.stage))

    def who(self, character_id: int) -> Combatant:
        """The participant ``character_id``; RulesError if she is not in the scene."""
        for c in self.participants:
            if c.character_id == character_id:
                return c
        raise RulesError("That character is not in this mob scene.")

    @property
    def target(self) -> MobTarget | None:
        """The target being settled (None while choosing and once settled)."""
        if self.stage in (MobStage.CHOOSING, MobStage.SETTLED):
            return None
        return self.targets[self.current]

    @property
    def chosen(self) -> tuple[int, ...]:
        """Ids of the participants who have chosen (not whom)."""
        return tuple(c for c, _ in self.choices)

    @property
    def waiting_on(self) -> tuple[int, ...]:
        """Character ids whose move it is: who has not chosen; the current
        target's attackers (LEADER); who has not bid (BIDS); the defender
        (HURT). () during the test (see its own ``waiting_on``) and at the end."""
        target = self.target
        if self.stage is MobStage.CHOOSING:
            return tuple(
                c.character_id for c in self.participants if c.character_id not in self.chosen
            )
        if target is None:
            return ()
        if self.stage is MobStage.LEADER:
            return target.attackers
        if self.stage is MobStage.BIDS:
            out = [a for a in target.attackers if target.bid_of(a) is None]
            return (*out, *(() if target.defender_bid_in else (target.defender,)))
        if self.stage is MobStage.HURT:
            return (target.defender,)
        return ()

    def with_participants(self, participants: Sequence[Combatant]) -> MobScene:
        """The same scene with refreshed participants (same ids, same order);
        ValueError otherwise."""
        if [c.character_id for c in participants] != [c.character_id for c in self.participants]:
            raise ValueError("with_participants: not the same characters")
        return replace(self, participants=tuple(participants))

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe, lossless form."""
        return {
            "ruleset": self.ruleset,
            "category": self.category.value,
            "is_attack": self.is_attack,
            "participants": [c.to_dict() for c in self.participants],
            "stage": self.stage.value,
            "stage_since": self.stage_since,
            "choices": [[c, t] for c, t in self.choices],
            "targets": [t.to_dict() for t in self.targets],
            "current": self.current,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MobScene:
        """Inverse of :meth:`to_dict`; KeyError/ValueError if malformed."""
        return cls(
            ruleset=str(d["ruleset"]),
            category=Category(d["category"]),
            is_attack=bool(d["is_attack"]),
            participants=tuple(Combatant.from_dict(c) for c in d["participants"]),
            stage=MobStage(d["stage"]),
            stage_since=float(d["stage_since"]),
            choices=tuple((int(c), _int(t)) for c, t in d["choices"]),
            targets=tuple(MobTarget.from_dict(t) for t in d["targets"]),
            current=int(d["current"]),
        )


class MobTransition(NamedTuple):
    """What a mob move produces: the new scene and its events, in order."""

    scene: MobScene
    events: tuple[Event, ...]


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def _at(scene: MobScene, stage: MobStage, now: float, **changes: Any) -> MobScene:
    since = now if stage is not scene.stage else scene.stage_since
    return replace(scene, stage=stage, stage_since=since, **changes)


def _with_target(scene: MobScene, target: MobTarget) -> tuple[MobTarget, ...]:
    targets = list(scene.targets)
    targets[scene.current] = target
    return tuple(targets)


def _options(scene: MobScene) -> Any:
    return get_ruleset(scene.ruleset).options


# --- opening and choosing -------------------------------------------------------


def open_mob(
    *,
    ruleset: str,
    category: Category,
    participants: Sequence[Combatant],
    is_attack: bool = True,
    now: float,
) -> MobTransition:
    """A narrator opens a mob scene for ``participants`` (at least three
    different characters, in her order) in ``category`` → stage CHOOSING.
    Event "mob_opened". RulesError: unknown ruleset or one with no Trait bids, fewer than three, a
    character listed twice. seeds/000 "The Mob Scene"; seeds/004 "Mob Scenes"."""
    met_ruleset(ruleset)
    ids = [c.character_id for c in participants]
    if len(set(ids)) != len(ids):
        raise RulesError("A character is listed twice.")
    if len(ids) < 3:
        raise RulesError("A mob scene needs at least three characters.")
    scene = MobScene(
        ruleset=ruleset,
        category=Category(category),
        is_attack=bool(is_attack),
        participants=tuple(participants),
        stage=MobStage.CHOOSING,
        stage_since=now,
    )
    data = {"participants": ids, "category": scene.category.value, "is_attack": scene.is_attack}
    return MobTransition(scene, (Event("mob_opened", data),))


def choose_target(
    scene: MobScene, *, chooser: int, target: int | None, now: float
) -> MobTransition:
    """``chooser`` points at ``target`` (a participant other than herself) or
    at nobody (None). Event "mob_chose" (who, never whom). When the last one
    has chosen the choosing closes (:func:`close_choosing`). RulesError: not
    choosing; not in the scene; chose already; herself; a chooser who may not
    start a challenge (Incapacitated, seeds/000 "Health", seeds/004 "Trait
    Categories") pointing at someone."""
    if scene.stage is not MobStage.CHOOSING:
        raise RulesError("The choosing of targets is over.")
    scene.who(chooser)
    if chooser in scene.chosen:
        raise RulesError("You have already chosen your target.")
    if target is not None:
        if target == chooser:
            raise RulesError("You cannot choose yourself.")
        scene.who(target)
        if not judge.can_enter(scene.who(chooser), _options(scene), initiate=True):
            raise RulesError("You are incapacitated: you cannot attack; choose nobody.")
    new = replace(scene, choices=(*scene.choices, (chooser, target)))
    events = [Event("mob_chose", {"character": chooser})]
    if len(new.choices) == len(new.participants):
        closed = close_choosing(new, now=now)
        return MobTransition(closed.scene, (*events, *closed.events))
    return MobTransition(new, tuple(events))


def order_targets(scene: MobScene) -> tuple[MobTarget, ...]:
    """The targets of ``scene``'s choices, most attackers first; equal numbers
    in the participants' order. Each target's attackers in the participants'
    order, the first ``mob_attackers_max`` of them (0: all) kept, the rest
    ``dropped``. seeds/000 "The Mob Scene"; seeds/004 "Mob Scenes"."""
    place = {c.character_id: i for i, c in enumerate(scene.participants)}
    most = _options(scene).mob_attackers_max
    by_target: dict[int, list[int]] = {}
    for chooser, target in scene.choices:
        if target is not None:
            by_target.setdefault(target, []).append(chooser)
    out = []
    for target, attackers in by_target.items():
        attackers.sort(key=place.__getitem__)
        kept = attackers[:most] if most else attackers
        out.append(MobTarget(target, tuple(kept), tuple(attackers[len(kept) :])))
    out.sort(key=lambda t: (-len(t.attackers) - len(t.dropped), place[t.defender]))
    return tuple(out)


def close_choosing(scene: MobScene, *, now: float) -> MobTransition:
    """The choosing closes (the narrator's move, or the last choice): who has
    not chosen attacks nobody; the choices are revealed ("mob_revealed" with
    every choice and the order of targets) and the first target starts
    (:func:`_start`). RulesError: not choosing."""
    if scene.stage is not MobStage.CHOOSING:
        raise RulesError("The choosing of targets is over.")
    chosen = dict(scene.choices)
    choices = tuple((c.character_id, chosen.get(c.character_id)) for c in scene.participants)
    scene = replace(scene, choices=choices)
    targets = order_targets(scene)
    revealed = Event(
        "mob_revealed",
        {
            "choices": [[c, t] for c, t in choices],
            "order": [t.defender for t in targets],
            "dropped": [a for t in targets for a in t.dropped],
        },
    )
    scene = _at(scene, MobStage.LEADER, now, targets=targets, current=0)
    if not targets:
        return MobTransition(_at(scene, MobStage.SETTLED, now), (revealed, Event("mob_settled")))
    started = _start(scene, now)
    return MobTransition(started.scene, (revealed, *started.events))


def defender_must_bid(scene: MobScene, target: MobTarget) -> int:
    """How many Traits the defender of ``target`` must bid: one per attacker
    under ``mob_defender_bids_each`` (seeds/000), else as in any challenge
    (``bids_required``, seeds/004 "resolved as normal")."""
    if _options(scene).mob_defender_bids_each:
        return len(target.attackers)
    return bids_required(scene.who(target.defender), scene.ruleset)


def _free(who: Combatant, category: Category) -> int:
    return sum(t.free for t in who.traits if t.category is category and not t.negative)


def _start(scene: MobScene, now: float) -> MobTransition:
    """Start the current target: a defender who cannot bid what she must
    (too few free Traits, or Incapacitated under ``met_classic``) loses at
    once; one attacker is her own leader (→ BIDS); else → LEADER."""
    target = scene.targets[scene.current]
    events = [
        Event("mob_target", {"defender": target.defender, "attackers": list(target.attackers)})
    ]
    defender = scene.who(target.defender)
    if not judge.can_enter(defender, _options(scene), initiate=False) or _free(
        defender, scene.category
    ) < defender_must_bid(scene, target):
        return _settle(scene, target, MobOutcome.DEFENDER_GAVE_UP, None, now, events)
    if len(target.attackers) == 1:
        target = replace(target, leader=target.attackers[0])
        scene = _at(scene, MobStage.BIDS, now, targets=_with_target(scene, target))
        events.append(Event("mob_leader", {"leader": target.leader}))
        return MobTransition(scene, tuple(events))
    return MobTransition(_at(scene, MobStage.LEADER, now), tuple(events))


def pick_leader(scene: MobScene, *, by: int | None, leader: int, now: float) -> MobTransition:
    """The attackers of the current target pick their ``leader`` (one of them):
    ``by`` is the attacker who names her (None: a narrator) → stage BIDS.
    Event "mob_leader". RulesError: not time; ``by`` or ``leader`` not one of
    the attackers."""
    target = scene.target
    if scene.stage is not MobStage.LEADER or target is None:
        raise RulesError("It is not time to pick a leader.")
    if by is not None and by not in target.attackers:
        raise RulesError("Only the attackers of this target pick their leader.")
    if leader not in target.attackers:
        raise RulesError("The leader must be one of the attackers.")
    target = replace(target, leader=leader)
    scene = _at(scene, MobStage.BIDS, now, targets=_with_target(scene, target))
    return MobTransition(scene, (Event("mob_leader", {"leader": leader, "by": by}),))


# --- bids -----------------------------------------------------------------------


def mob_bid(
    scene: MobScene,
    *,
    character: int,
    bids: Sequence[str] | None,
    effect: str = "",
    damage: int = 1,
    now: float,
) -> MobTransition:
    """A bid on the current target (stage BIDS). An attacker bids exactly one
    Trait of the category and states her ``effect`` (free text) worth
    ``damage`` health levels (1 to MAX_DAMAGE; read only under
    ``mob_most_damaging_effect``). The defender bids :func:`defender_must_bid`
    Traits, or gives up (``bids`` None or empty: she loses at once, no Trait
    lost). When every bid is in, the test opens (stage TEST). Events
    "mob_bid" (who and the Traits), then "mob_test" or the settling.
    RulesError: not time; not in this challenge; bid already; an illegal bid
    (as in any challenge); a damage out of range. seeds/000 "The Mob Scene"."""
    target = scene.target
    if scene.stage is not MobStage.BIDS or target is None:
        raise RulesError("It is not time to bid.")
    who = scene.who(character)
    events: list[Event] = []
    if character == target.defender:
        if target.defender_bid_in:
            raise RulesError("You have already bid.")
        if not bids:
            events.append(Event("mob_gave_up", {"character": character}))
            return _settle(scene, target, MobOutcome.DEFENDER_GAVE_UP, None, now, events)
        names, ids = _validate_bids(
            who, scene.category, bids, need=defender_must_bid(scene, target)
        )
        target = replace(
            target, defender_bids=tuple(zip(names, ids, strict=True)), defender_bid_in=True
        )
        events.append(Event("mob_bid", {"character": character, "traits": list(names)}))
    elif character in target.attackers:
        if target.bid_of(character) is not None:
            raise RulesError("You have already bid.")
        if isinstance(damage, bool) or not isinstance(damage, int) or not 1 <= damage <= MAX_DAMAGE:
            raise RulesError(f"An effect does 1 to {MAX_DAMAGE} health levels.")
        if not bids:
            raise RulesError("Each attacker must bid one Trait.")
        names, ids = _validate_bids(who, scene.category, bids, need=1)
        text = " ".join(str(effect).split())[:MAX_EFFECT]
        bid = AttackerBid(character, names[0], ids[0], text, damage)
        target = replace(target, bids=(*target.bids, bid))
        data: dict[str, Any] = {"character": character, "traits": list(names)}
        if text:
            data["effect"] = text
        events.append(Event("mob_bid", data))
    else:
        raise RulesError("You are not in this challenge of the mob scene.")
    scene = replace(scene, targets=_with_target(scene, target))
    if target.defender_bid_in and len(target.bids) == len(target.attackers):
        return _open_test(scene, target, now, events)
    return MobTransition(scene, tuple(events))


def _open_test(
    scene: MobScene, target: MobTarget, now: float, events: list[Event]
) -> MobTransition:
    """The leader's test against the defender: an opposed challenge at stage
    THROWS, the leader's bid hers, the defender's every Trait she bid,
    ``mob_attackers`` the number of attackers. Event "mob_test"."""
    assert target.leader is not None
    lead = target.bid_of(target.leader)
    assert lead is not None
    state = ChallengeState(
        kind=Kind.OPPOSED,
        ruleset=scene.ruleset,
        category=scene.category,
        challenger=scene.who(target.leader),
        defender=scene.who(target.defender),
        difficulty=None,
        challenger_bids=(lead.trait,),
        defender_bids=tuple(n for n, _ in target.defender_bids),
        challenger_bid_ids=(lead.trait_id,),
        defender_bid_ids=tuple(i for _, i in target.defender_bids),
        relented=False,
        is_attack=False,  # the mob deals its wounds itself (_settle)
        stakes=lead.effect,
        stage=Stage.THROWS,
        stage_since=now,
        tests=(TestRecord(),),
        outcome=None,
        losses=(),
        wounds=(),
        mob_attackers=len(target.attackers),
    )
    target = replace(target, test=state)
    scene = _at(scene, MobStage.TEST, now, targets=_with_target(scene, target))
    events.append(Event("mob_test", {"leader": target.leader, "defender": target.defender}))
    return MobTransition(scene, tuple(events))


# --- the test and its outcome ----------------------------------------------------


def play_test(scene: MobScene, transition: Transition, *, now: float) -> MobTransition:
    """Take one move of the current target's test: ``transition`` is what an
    engine move (``throw``, ``declare``, ``call_retest``, ``accept``, …) made
    of ``scene.target.test``. Its events come first; when the test resolves,
    the target is settled. RulesError: no test in play, or a test of other
    characters."""
    target = scene.target
    if scene.stage is not MobStage.TEST or target is None or target.test is None:
        raise RulesError("There is no test of this mob scene in play.")
    state = transition.state
    if (
        state.challenger.character_id != target.leader
        or state.defender is None
        or state.defender.character_id != target.defender
    ):
        raise RulesError("That test is not this mob scene's.")
    target = replace(target, test=state)
    scene = replace(scene, targets=_with_target(scene, target))
    events = list(transition.events)
    if state.stage is not Stage.RESOLVED:
        return MobTransition(scene, tuple(events))
    outcome = {
        Outcome.CHALLENGER_WINS: MobOutcome.ATTACKERS_WIN,
        Outcome.DEFENDER_WINS: MobOutcome.DEFENDER_WINS,
        Outcome.DRAW: MobOutcome.DRAW,
        Outcome.VOID: MobOutcome.VOID,
    }[state.outcome or Outcome.VOID]
    return _settle(scene, target, outcome, state, now, events)


def _effect(scene: MobScene, target: MobTarget) -> tuple[str, int]:
    """What the attackers' win does to the defender, ``(stated effect, health
    levels)``: one wound and the leader's effect (seeds/000 "they may inflict
    one wound"), or the most damaging single effect stated
    (``mob_most_damaging_effect``, seeds/004 "Mob Scenes"); among equally
    damaging ones the leader's if hers is one (the seed lets the primary
    attacker choose), else the first attacker's in the narrator's order."""
    lead = target.bid_of(target.leader) if target.leader is not None else None
    if not _options(scene).mob_most_damaging_effect:
        return (lead.effect if lead is not None else "", 1)
    if not target.bids:
        return ("", 1)
    most = max(b.damage for b in target.bids)
    if lead is not None and lead.damage == most:
        return (lead.effect, most)
    first = next(b for b in target.bids if b.damage == most)
    return (first.effect, most)


def _settle(
    scene: MobScene,
    target: MobTarget,
    outcome: MobOutcome,
    test: ChallengeState | None,
    now: float,
    events: list[Event],
) -> MobTransition:
    """Settle ``target`` with ``outcome``: the test's own losses (the leader's
    and the defender's bids as in any challenge), plus each other attacker's
    bid Trait when the defender wins or it is a draw (no Trait on a relent or
    a void); wounds: see the module doc. → HURT (defender won an attack, with
    attackers to hurt) or the next target. Event "mob_result"."""
    losses = list(test.losses) if test is not None else []
    relented = test is not None and test.relented
    if outcome in (MobOutcome.DEFENDER_WINS, MobOutcome.DRAW) and not relented:
        losses += [
            Loss(b.character_id, b.trait, scene.category, b.trait_id)
            for b in target.bids
            if b.character_id != target.leader
        ]
    wounds: list[int] = []
    effect = ""
    if outcome in (MobOutcome.ATTACKERS_WIN, MobOutcome.DEFENDER_GAVE_UP):
        effect, damage = _effect(scene, target)
        wounds = [target.defender] * damage if scene.is_attack else []
    target = replace(
        target, outcome=outcome, losses=tuple(losses), wounds=tuple(wounds), effect=effect
    )
    scene = replace(
        scene,
        targets=_with_target(scene, target),
        participants=_after(scene.participants, losses, wounds),
    )
    events.append(
        Event(
            "mob_result",
            {
                "defender": target.defender,
                "outcome": outcome.value,
                "losses": [[x.character_id, x.trait, x.category.value] for x in losses],
                "wounds": wounds,
                "effect": effect,
            },
        )
    )
    if scene.is_attack and outcome is MobOutcome.DEFENDER_WINS and not relented:
        return MobTransition(_at(scene, MobStage.HURT, now), tuple(events))
    return _next(scene, now, events)


def _after(
    participants: tuple[Combatant, ...], losses: Sequence[Loss], wounds: Sequence[int]
) -> tuple[Combatant, ...]:
    """The participants once ``losses`` (one copy each, by ``trait_id`` or
    name) and ``wounds`` (one health level each) are taken, so that later
    targets of the scene see them (the service refreshes them from the sheet
    anyway)."""
    out = []
    for who in participants:
        held = list(who.traits)
        for loss in losses:
            if loss.character_id != who.character_id:
                continue
            for i, t in enumerate(held):
                same = (
                    t.trait_id == loss.trait_id
                    if loss.trait_id is not None
                    else t.name == loss.trait
                )
                if same and t.category is loss.category and t.count > 0:
                    held[i] = replace(t, count=t.count - 1, at_risk=min(t.at_risk, t.count - 1))
                    break
        health = who.health
        for _ in range(wounds.count(who.character_id)):
            health = health.worse()
        out.append(replace(who, traits=tuple(held), health=health))
    return tuple(out)


def hurt(scene: MobScene, *, attacker: int | None, now: float) -> MobTransition:
    """The defender who won picks one attacker to hurt (one wound), or nobody
    (None) → the next target. Event "mob_hurt". RulesError: not time; not one
    of her attackers. seeds/000 "The Mob Scene" ("he can choose to affect one
    member of the attacking group")."""
    target = scene.target
    if scene.stage is not MobStage.HURT or target is None:
        raise RulesError("It is not time to choose whom to hurt.")
    if attacker is not None and attacker not in target.attackers:
        raise RulesError("Choose one of your attackers, or nobody.")
    wounds = target.wounds if attacker is None else (*target.wounds, attacker)
    target = replace(target, hurt=attacker, wounds=wounds)
    scene = replace(
        scene,
        targets=_with_target(scene, target),
        participants=_after(scene.participants, (), () if attacker is None else (attacker,)),
    )
    return _next(
        scene, now, [Event("mob_hurt", {"defender": target.defender, "attacker": attacker})]
    )


def _next(scene: MobScene, now: float, events: list[Event]) -> MobTransition:
    if scene.current + 1 >= len(scene.targets):
        done = _at(scene, MobStage.SETTLED, now)
        return MobTransition(done, (*events, Event("mob_settled")))
    scene = _at(scene, MobStage.LEADER, now, current=scene.current + 1)
    started = _start(scene, now)
    return MobTransition(started.scene, (*events, *started.events))


def void_mob(scene: MobScene, *, reason: str, now: float) -> MobTransition:
    """A narrator ends the scene: the current and later targets are settled
    as VOID (nobody loses anything) → SETTLED. Event "mob_voided". RulesError
    if already settled."""
    if scene.stage is MobStage.SETTLED:
        raise RulesError("This mob scene is over.")
    targets = tuple(
        replace(t, outcome=MobOutcome.VOID) if i >= scene.current and t.outcome is None else t
        for i, t in enumerate(scene.targets)
    )
    done = _at(scene, MobStage.SETTLED, now, targets=targets)
    return MobTransition(done, (Event("mob_voided", {"reason": " ".join(reason.split())[:300]}),))
