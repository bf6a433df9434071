"""What a character the narrators run answers by itself (issue 11, section 4):
the due move of an auto-answering NPC, chosen only among the moves
:func:`judge.legal_moves` lists, so that it never breaks a rule.

The policy, the same under every preset (docs/guide.md "Running NPCs"):

- **Bid**: the best Trait it still has tonight in the category, one copy at a
  time: the Trait with the most copies free (held, not lost, not at risk
  elsewhere, not already bid here), ties broken by sheet order (the order of
  ``Combatant.traits``: the services read a sheet's Traits by name, so among
  equals the first in alphabetical order, as the phone's sheet lists them);
  when two bids are needed (``met_classic`` Bruised or Wounded) it picks
  again with one copy fewer of the first choice. Only
  Stamina-based Traits when surprised in a Physical challenge (seeds/004).
- **Relent** (:class:`Relents`): never by default; ``WOUNDED``: when it is
  Wounded or worse as it is challenged; ``ALWAYS``: every time it is
  challenged. It also relents when it has too few Traits free to bid (the only
  move left). It relents only when asked to answer (stage RESPONSE).
- **Added bids** owed for a Negative Trait named against it (``met_classic``):
  chosen like a bid; if it cannot pay, it relents.
- **Throw**: drawn by ``choose`` (``secrets.choice`` from the services),
  once the other side has thrown (so that she may still name Negative Traits,
  relent or spend Blood before the first test, as the rules allow).
- **Declare**: its true count (all it may declare; a standing count under ``ukm``).
- **Retests**: it never calls a Negative Trait, a retest, Blood or Rage, and
  accepts the result of a test it lost. Asked to answer a retest, it answers
  truly: its full count against an overbid, its best Ability (highest rating,
  then sheet order) against an ability retest, and it cancels a Discipline
  retest when it has the same Discipline.

Pure functions; no Django (tests/rules/test_boundary.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from functools import partial
from typing import Any, Protocol, TypeVar

from challenges.rules import engine, judge
from challenges.rules.core import (
    Category,
    ChallengeState,
    Combatant,
    HealthLevel,
    RetestKind,
    Side,
    Stage,
    Throw,
    TraitHolding,
    Transition,
)
from challenges.rules.mob import (
    MobScene,
    MobStage,
    MobTransition,
    choose_target,
    defender_must_bid,
    hurt,
    mob_bid,
    pick_leader,
)


class Relents(StrEnum):
    """When an auto-answering NPC relents instead of bidding (its sheet's
    "relents" setting): ``never`` (the default), ``wounded`` (when Wounded or
    worse), ``always``."""

    NEVER = "never"
    WOUNDED = "wounded"
    ALWAYS = "always"

    @property
    def label(self) -> str:
        """The setting in words, for the sheet and the admin."""
        return {
            "never": "Never",
            "wounded": "When Wounded or worse",
            "always": "Always",
        }[self.value]


MAX_NPC_MOVES = 20
"""Moves one call of the services' hook makes at most (two NPCs against each
other could retest on equal counts many times under ``ukm``); a guard, not a
rule."""


class _Step(Protocol):
    """A transition: its ``state`` is the state after the move."""

    @property
    def state(self) -> Any: ...


StepT = TypeVar("StepT", bound=_Step)


def play_out(
    state: Any, movers: Sequence[Callable[[Any], StepT | None]], *, most: int
) -> list[StepT]:
    """The moves ``movers`` (one per auto-answering side, each returning its
    move from a state or None when none is due) make one after the other from
    ``state``, the first mover with a move due going first each time, until
    none is due or ``most`` moves are made: the transitions in order, each
    from the state the previous one left. Shared by the MET and ``bns``
    NPCs (``challenges.rules.bns.npc``)."""
    out: list[StepT] = []
    while len(out) < most:
        for mover in movers:
            step = mover(state)
            if step is not None:
                out.append(step)
                state = step.state
                break
        else:
            return out
    return out


def best_bids(state: ChallengeState, side: Side, need: int) -> tuple[str, ...]:
    """The ``need`` Trait names ``side`` bids in ``state``'s category, one per
    copy: each pick is the Trait with the most copies still free (free here =
    ``TraitHolding.free`` less the copies of it already bid in this challenge
    and those picked before), ties by sheet order. Stamina-based Physical
    Traits only for a surprised defender (seeds/004 Surprise). Fewer than
    ``need`` names when it has too few copies free; () without a category."""
    who = state.combatant(side)
    if who is None or state.category is None or need <= 0:
        return ()
    only = judge.stamina_only(state, side)
    usable = [
        t
        for t in who.traits
        if t.category is state.category and not t.negative and (t.stamina or not only)
    ]
    bid_ids = Counter(state.bid_entries_ids(side))
    bid_names = Counter(name for name, trait_id in state.bid_entries(side) if trait_id is None)
    left = [
        t.free - (bid_ids[t.trait_id] if t.trait_id is not None else bid_names[t.name])
        for t in usable
    ]
    return _pick(usable, left, need)


def _pick(usable: list[TraitHolding], left: list[int], need: int) -> tuple[str, ...]:
    """``need`` names from ``usable`` (copies ``left`` of each), one copy per
    pick: the most copies left, among equals the first on the sheet."""
    picks: list[str] = []
    for _ in range(need):
        best = max(range(len(usable)), key=lambda i: (left[i], -i), default=None)
        if best is None or left[best] <= 0:
            break
        left[best] -= 1
        picks.append(usable[best].name)
    return tuple(picks)


def wants_to_relent(state: ChallengeState, side: Side, relents: Relents) -> bool:
    """``relents`` asks ``side`` to relent now (before its own Traits count)."""
    who = state.combatant(side)
    return who is not None and _relents_now(who, relents)


def _relents_now(who: Combatant, relents: Relents) -> bool:
    relents = Relents(relents)
    if relents is Relents.ALWAYS:
        return True
    return relents is Relents.WOUNDED and who.health >= HealthLevel.WOUNDED


def _best_ability(state: ChallengeState, side: Side) -> str:
    """Her highest-rated Ability that applies to the challenge's category
    (the first on her sheet of equals), "" for none."""
    fitting = judge.retest_ratings(state, side, RetestKind.ABILITY)
    if not fitting:
        return ""
    ranked = sorted(enumerate(fitting), key=lambda x: (-x[1].rating, x[0]))
    return ranked[0][1].name


def npc_move(
    state: ChallengeState,
    side: Side,
    *,
    relents: Relents = Relents.NEVER,
    choose: engine.Chooser,
    now: float,
    eager: bool = False,
) -> Transition | None:
    """The one move an auto-answering NPC on ``side`` makes in ``state`` now
    (the module's policy), or None when none is due (not its turn, resolved,
    or a move it never makes). ``choose`` draws its throw from the three
    throws; ``now`` in epoch seconds. Every move returned is one of
    :func:`judge.legal_moves`, so the engine never raises RulesError for it.

    It throws only once the other side has thrown (``eager``: at once, for two
    NPCs against each other): until then the other side may still name
    Negative Traits, relent (``ukm``) or spend Blood, which the rules allow
    only before the first throw. Its throw stays hidden until both are in."""
    side = Side(side)
    moves = judge.legal_moves(state, side)
    if not moves.any:
        return None
    if moves.answer is not None:
        assert state.pending is not None
        if moves.answer is RetestKind.OVERBID:
            return engine.answer_retest(state, side=side, count=moves.answer_max, now=now)
        if moves.answer is RetestKind.ABILITY:
            name = _best_ability(state, side)
            return engine.answer_retest(state, side=side, name=name, now=now, choose=choose)
        who = state.combatant(side)
        cancel = who is not None and who.discipline(state.pending.name) is not None
        return engine.answer_retest(state, side=side, cancel=cancel, now=now, choose=choose)
    if state.stage is Stage.RESPONSE and side is Side.DEFENDER:
        if moves.relent and wants_to_relent(state, side, relents):
            return engine.relent(state, side=side, now=now)
        bids = best_bids(state, side, moves.bid)
        if moves.bid and len(bids) == moves.bid:
            return engine.respond(state, bids=bids, now=now)
        return engine.relent(state, side=side, now=now) if moves.relent else None
    if state.stage is Stage.BID and moves.bid:
        bids = best_bids(state, side, moves.bid)
        if len(bids) == moves.bid:
            return engine.bid(state, bids=bids, now=now)
        return None
    if moves.owed:
        bids = best_bids(state, side, moves.owed)
        if len(bids) == moves.owed:
            return engine.add_bids(state, side=side, bids=bids, now=now)
        return engine.relent(state, side=side, now=now) if moves.relent else None
    test = state.current_test
    other_threw = test is not None and test.throw_of(side.other) is not None
    if moves.throw and (eager or other_threw):
        return engine.throw(state, side=side, throw=choose(tuple(Throw)), now=now, choose=choose)
    if moves.declare is not None:
        return engine.declare(state, side=side, count=moves.declare, now=now, choose=choose)
    if moves.accept:
        return engine.accept(state, side=side, now=now)
    return None


def npc_moves(
    state: ChallengeState,
    sides: dict[Side, Relents],
    *,
    choose: engine.Chooser,
    now: float,
) -> list[Transition]:
    """Every move the auto-answering NPCs of ``sides`` ({side: its relent
    setting}) make one after the other from ``state`` until none is due (at
    most :data:`MAX_NPC_MOVES`): the transitions in order, each from the
    state the previous one left; [] when none is due."""
    eager = len(sides) > 1
    movers = [
        partial(npc_move, side=side, relents=relents, choose=choose, now=now, eager=eager)
        for side, relents in sides.items()
    ]
    return play_out(state, movers, most=MAX_NPC_MOVES)


# --- mob scenes (issue 11 section 4: "mob scenes can include them") ----------------


def mob_best_bids(who: Combatant, category: Category, need: int) -> tuple[str, ...]:
    """The ``need`` Trait names ``who`` bids in a mob scene's ``category``,
    chosen as :func:`best_bids` chooses (most copies free, ties by sheet
    order); fewer when she has too few copies free."""
    usable = [t for t in who.traits if t.category is category and not t.negative]
    return _pick(usable, [t.free for t in usable], need)


def mob_leader(scene: MobScene) -> int:
    """The leader NPC attackers name for the current target: the attacker
    with the most copies free in the scene's category (the strongest tests
    for the group, seeds/000 "This group must also choose a leader"), among
    equals the first in the narrator's order. ValueError: no current target."""
    target = scene.target
    if target is None:
        raise ValueError("mob_leader: no target is being settled")
    free = {
        a: sum(
            t.free for t in scene.who(a).traits if t.category is scene.category and not t.negative
        )
        for a in target.attackers
    }
    return max(target.attackers, key=lambda a: (free[a], -target.attackers.index(a)))


def npc_mob_move(
    scene: MobScene, npcs: Mapping[int, Relents], *, now: float
) -> MobTransition | None:
    """The one mob move due now from an auto-answering NPC of ``scene``
    (``npcs``: {character id: its "relents" setting}, the scene's
    auto-answering NPCs), or None (docs/guide.md "Running NPCs"):

    - **choosing**: it points at nobody (it defends; the seeds give an NPC no
      rule and its choice may not read the others' secret ones), and only
      once every participant still to choose is such an NPC, so that a
      narrator may first choose a target for it from its phone screen;
    - **leader**: when every attacker of the target is such an NPC, they name
      :func:`mob_leader` (with a player among them, the players pick);
    - **bids**: an attacker bids its best Trait (:func:`mob_best_bids`), no
      stated effect, one health level; a defender bids the
      :func:`~challenges.rules.mob.defender_must_bid` Traits it must, or gives
      up when its "relents" says so (:func:`wants_to_relent`'s rule) or it
      cannot bid them; an attacker with no Trait free makes no move;
    - **hurt**: a defender who won hurts the attackers' leader.

    The target's test is an ordinary challenge: :func:`npc_move` plays it.
    Every move returned is one the mob engine accepts."""
    target = scene.target
    if scene.stage is MobStage.CHOOSING:
        waiting = scene.waiting_on
        if waiting and all(c in npcs for c in waiting):
            return choose_target(scene, chooser=waiting[0], target=None, now=now)
        return None
    if target is None:
        return None
    if scene.stage is MobStage.LEADER:
        if all(a in npcs for a in target.attackers):
            leader = mob_leader(scene)
            return pick_leader(scene, by=leader, leader=leader, now=now)
        return None
    if scene.stage is MobStage.BIDS:
        for c in scene.waiting_on:
            if c not in npcs:
                continue
            who = scene.who(c)
            if c == target.defender:
                need = defender_must_bid(scene, target)
                bids = mob_best_bids(who, scene.category, need)
                give_up = len(bids) < need or _relents_now(who, npcs[c])
                return mob_bid(scene, character=c, bids=None if give_up else bids, now=now)
            bids = mob_best_bids(who, scene.category, 1)
            if bids:
                return mob_bid(scene, character=c, bids=bids, now=now)
        return None
    if scene.stage is MobStage.HURT and target.defender in npcs:
        leader = target.leader if target.leader is not None else target.attackers[0]
        return hurt(scene, attacker=leader, now=now)
    return None


def npc_mob_moves(
    scene: MobScene, npcs: Mapping[int, Relents], *, now: float
) -> list[MobTransition]:
    """Every mob move the auto-answering NPCs ``npcs`` make one after the
    other from ``scene`` (:func:`npc_mob_move`) until none is due, at most
    :data:`MAX_NPC_MOVES` per NPC in the scene; [] when none is due."""
    out: list[MobTransition] = []
    while len(out) < MAX_NPC_MOVES * max(1, len(npcs)):
        step = npc_mob_move(scene, npcs, now=now)
        if step is None:
            break
        out.append(step)
        scene = step.scene
    return out
