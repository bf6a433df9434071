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
from enum import StrEnum

from challenges.rules import engine, judge
from challenges.rules.core import (
    ChallengeState,
    HealthLevel,
    RetestKind,
    Side,
    Stage,
    Throw,
    Transition,
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
    picks: list[str] = []
    for _ in range(need):
        # The most copies left; among equals the first on the sheet.
        best = max(range(len(usable)), key=lambda i: (left[i], -i), default=None)
        if best is None or left[best] <= 0:
            break
        left[best] -= 1
        picks.append(usable[best].name)
    return tuple(picks)


def wants_to_relent(state: ChallengeState, side: Side, relents: Relents) -> bool:
    """``relents`` asks ``side`` to relent now (before its own Traits count)."""
    relents = Relents(relents)
    if relents is Relents.ALWAYS:
        return True
    who = state.combatant(side)
    return relents is Relents.WOUNDED and who is not None and who.health >= HealthLevel.WOUNDED


def _best_ability(state: ChallengeState, side: Side) -> str:
    who = state.combatant(side)
    if who is None or not who.abilities:
        return ""
    ranked = sorted(enumerate(who.abilities), key=lambda x: (-x[1].rating, x[0]))
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
    out: list[Transition] = []
    eager = len(sides) > 1
    while len(out) < MAX_NPC_MOVES:
        for side, relents in sides.items():
            step = npc_move(state, side, relents=relents, choose=choose, now=now, eager=eager)
            if step is not None:
                out.append(step)
                state = step.state
                break
        else:
            return out
    return out
