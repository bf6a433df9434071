"""What an auto-answering ``bns`` fighter does (the ``bns`` twin of
``challenges.rules.npc``), chosen only among :func:`legal_moves`, so that it
never breaks a rule:

- **Answer**: the allowed defence with the largest pool (ties: the first
  allowed).
- **Throw**: drawn by ``choose`` (``secrets.choice`` from the services), once
  the other side has thrown (``eager``: at once, for two NPCs).
- **Retest**: when it lost the first test and has Willpower left, if
  ``retests`` (its sheet's setting; default yes); otherwise it accepts.

Pure functions; no Django.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

from challenges.rules.bns.engine import (
    BnsTransition,
    accept,
    answer,
    defence_pool,
    legal_moves,
    retest,
    throw,
)
from challenges.rules.bns.state import BnsChallengeState
from challenges.rules.core import Side, Throw
from challenges.rules.engine import Chooser
from challenges.rules.npc import play_out

MAX_NPC_MOVES = 10
"""Moves :func:`npc_moves` makes at most (a challenge takes at most six); a guard."""


def npc_move(
    state: BnsChallengeState,
    side: Side,
    *,
    choose: Chooser,
    now: float,
    retests: bool = True,
    eager: bool = False,
) -> BnsTransition | None:
    """The one move an auto-answering fighter on ``side`` makes now, or None
    when none is due. ``choose`` draws its throw from the three throws."""
    side = Side(side)
    moves = legal_moves(state, side)
    if moves.answer:
        best = max(moves.defences, key=lambda d: (defence_pool(state, d), -moves.defences.index(d)))
        return answer(state, defence=best, now=now)
    if moves.throw:
        test = state.current_test
        if eager or (test is not None and test.throw_of(side.other) is not None):
            return throw(state, side=side, throw=choose(tuple(Throw)), now=now)
        return None
    if moves.retest and retests:
        return retest(state, side=side, now=now)
    if moves.accept:
        return accept(state, side=side, now=now)
    return None


def npc_moves(
    state: BnsChallengeState,
    sides: Mapping[Side, bool],
    *,
    choose: Chooser,
    now: float,
) -> list[BnsTransition]:
    """Every move the auto-answering fighters of ``sides`` ({side: retests})
    make one after the other from ``state`` until none is due (at most
    :data:`MAX_NPC_MOVES`); each from the state the previous one left."""
    eager = len(sides) > 1
    movers = [
        partial(npc_move, side=side, choose=choose, now=now, retests=retests, eager=eager)
        for side, retests in sides.items()
    ]
    return play_out(state, movers, most=MAX_NPC_MOVES)
