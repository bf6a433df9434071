"""Properties of combat rounds under ``bns`` (challenges.rules.bns_combat),
over generated sequences of moves, legal and illegal: no character is ever
the target of more challenges in a round than seeds/002 "Maximum Attacks Per
Round" allows; Mental and Social challenges only in the everyman round
(seeds/002 "Physical, Mental, and Social Attacks"); every fighter acts at
most once per round on her initiative, with one standard and one simple
action (seeds/002 "Resolving Combat", "Standard and Simple Actions"); the
state round-trips through JSON; a refused move raises RulesError and changes
nothing; what legal_actions lists is accepted."""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from challenges.rules import bns_combat as bc
from challenges.rules.bns_combat import ActionKind, ActionWhat, CombatState, Fighter
from challenges.rules.core import Category, RulesError

T0 = 1_000_000.0
IDS = (1, 2, 3, 4, 5)
POWERS = ("Dominate", "Awe")

fighter_st = st.builds(
    Fighter,
    fighter_id=st.sampled_from(IDS),
    name=st.sampled_from(("Helen", "Grady", "Camille", "Ray", "Connor")),
    physical=st.integers(0, 6),
    mental=st.integers(0, 6),
    rage_rounds=st.integers(0, 2),
)


def start(data: st.DataObject) -> CombatState:
    fighters = data.draw(
        st.lists(fighter_st, min_size=2, max_size=5, unique_by=lambda f: f.fighter_id)
    )
    ids = [f.fighter_id for f in fighters]
    surprise = data.draw(st.none() | st.sampled_from(ids))
    ties = data.draw(st.permutations(ids))
    return bc.start_combat(fighters=fighters, now=T0, surprise=surprise, order_ties=ties).state


def some_id(data: st.DataObject, state: CombatState) -> int:
    ids = [f.fighter_id for f in state.fighters] or [99]
    return data.draw(st.sampled_from(ids) if data.draw(st.integers(0, 9)) else st.just(99))


def draw_move(
    data: st.DataObject, state: CombatState, now: float
) -> tuple[str, Any, dict[str, Any]]:
    """A move and its arguments, most of them plausible, some not."""
    name = data.draw(
        st.sampled_from(
            ["attack"] * 6
            + ["take_action"] * 3
            + ["advance"] * 3
            + ["settle_attack", "hold", "burst_of_speed", "assist_defender", "assist_attacker"]
            + ["reorder", "set_rage_rounds", "grapple", "release", "add_fighter"]
            + ["remove_fighter", "end_combat"]
        )
    )
    if name in ("remove_fighter", "end_combat") and data.draw(st.integers(0, 4)):
        name = "advance"  # keep most combats going
    acting = bc.whose_turn(state)
    who = acting if acting is not None and data.draw(st.integers(0, 3)) else some_id(data, state)
    kw: dict[str, Any] = {"now": now}
    if name == "attack":  # a plausible challenge, most often at one of two targets
        ids = [f.fighter_id for f in state.fighters] or [99]
        kw |= {
            "fighter": who,
            "kind": ActionKind.STANDARD,
            "what": ActionWhat.CHALLENGE,
            "target": data.draw(st.sampled_from(ids[:2] if data.draw(st.booleans()) else ids)),
            "category": data.draw(st.sampled_from([Category.PHYSICAL] * 3 + list(Category))),
            "power": data.draw(st.sampled_from(POWERS)),
            "failed": data.draw(st.none() | st.booleans()),
        }
        return name, bc.take_action, kw
    if name == "take_action":
        kw |= {
            "fighter": who,
            "kind": data.draw(st.sampled_from(list(ActionKind))),
            "what": data.draw(st.sampled_from(list(ActionWhat))),
            "steps": data.draw(st.integers(-1, 4)),
            "target": some_id(data, state),
            "category": data.draw(st.sampled_from(list(Category))),
            "power": data.draw(st.sampled_from(("", *POWERS))),
            "failed": data.draw(st.none() | st.booleans()),
        }
    elif name == "advance":
        kw["by"] = data.draw(st.none() | st.just(who))
    elif name == "settle_attack":
        kw |= {
            "attack": data.draw(st.integers(0, len(state.attacks))),
            "failed": data.draw(st.booleans()),
        }
    elif name in ("hold", "set_rage_rounds", "release", "remove_fighter"):
        kw["fighter"] = who
        if name == "set_rage_rounds":
            kw["rounds"] = data.draw(st.integers(-1, 3))
    elif name == "burst_of_speed":
        kw |= {
            "fighter": some_id(data, state),
            "what": data.draw(st.sampled_from(list(ActionWhat))),
            "steps": data.draw(st.integers(0, 4)),
        }
    elif name == "assist_defender":
        kw |= {
            "helper": some_id(data, state),
            "attack": data.draw(st.integers(0, len(state.attacks))),
            "steps": data.draw(st.integers(0, 3)),
        }
    elif name == "assist_attacker":
        kw |= {"helper": some_id(data, state), "attacker": some_id(data, state)}
    elif name == "reorder":
        ids = [f.fighter_id for f in state.fighters]
        kw["order"] = data.draw(st.permutations(ids))
    elif name == "grapple":
        kw |= {"fighter": some_id(data, state), "by": some_id(data, state)}
    elif name == "add_fighter":
        kw["fighter"] = data.draw(fighter_st)
    return name, getattr(bc, name), kw


def check_limits(state: CombatState) -> None:
    for f in state.fighters:
        for c in Category:
            assert state.targeted(f.fighter_id, c) <= state.options.limit(c), (f.name, c)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_generated_combats_keep_every_rule(data: st.DataObject) -> None:
    state = start(data)
    now = T0
    initiative_actions: dict[tuple[int, int], list[int]] = {}
    actions: Counter[tuple[int, int, int, str]] = Counter()
    for _ in range(data.draw(st.integers(5, 40))):
        now += data.draw(st.sampled_from((0, 1, 200, 400)))
        name, move, kw = draw_move(data, state, now)
        before = state.to_dict()
        round_ = state.round
        surprise = state.surprise
        acting = bc.whose_turn(state)
        try:
            step = move(state, **kw)
        except RulesError as err:
            assert str(err)
            assert state.to_dict() == before
            continue
        for event in step.events:
            if event.kind == "action":
                who, kind = event.data["fighter"], event.data["kind"]
                actions[(*round_, who, kind)] += 1
                assert who == acting  # only on her initiative (or her Surprise Action)
                if surprise is None:
                    initiative_actions.setdefault(round_, []).append(who)
            elif event.kind in ("initiative_over", "held"):
                actions[(*round_, event.data["fighter"], "initiative")] += 1
            elif event.kind == "burst_of_speed":
                actions[(*round_, event.data["fighter"], "simple")] += 1
            elif event.kind == "assist_defender":
                actions[(*round_, event.data["helper"], "simple")] += 1
            elif event.kind == "assist_attacker":
                actions[(*round_, event.data["helper"], "standard")] += 1
        state = step.state
        check_limits(state)
        assert all(a.category is Category.PHYSICAL or a.rage_round == 0 for a in state.attacks)
        assert CombatState.from_dict(json.loads(json.dumps(state.to_dict()))) == state
    assert max(actions.values(), default=0) <= 1
    for sequence in initiative_actions.values():
        runs = [who for i, who in enumerate(sequence) if i == 0 or sequence[i - 1] != who]
        assert len(runs) == len(set(runs)), sequence


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_what_legal_actions_lists_is_accepted(data: st.DataObject) -> None:
    state = start(data)
    now = T0
    for _ in range(data.draw(st.integers(0, 25))):
        now += data.draw(st.sampled_from((0, 300)))
        name, move, kw = draw_move(data, state, now)
        if name == "end_combat":
            continue
        with contextlib.suppress(RulesError):
            state = move(state, **kw).state
    for f in state.fighters:
        legal = bc.legal_actions(state, f.fighter_id, now)
        for target, categories in legal.targets:
            for c in categories:
                bc.take_action(
                    state, fighter=f.fighter_id, kind=ActionKind.STANDARD,
                    what=ActionWhat.CHALLENGE, target=target, category=c, power="Fresh", now=now,
                )  # fmt: skip
        for kind, ok in ((ActionKind.STANDARD, legal.standard), (ActionKind.SIMPLE, legal.simple)):
            kw = {"fighter": f.fighter_id, "kind": kind, "what": ActionWhat.OTHER, "now": now}
            if ok:
                bc.take_action(state, **kw)
            else:
                with pytest.raises(RulesError):
                    bc.take_action(state, **kw)
        if legal.steps:
            kind = ActionKind.SIMPLE if legal.simple else ActionKind.STANDARD
            bc.take_action(
                state, fighter=f.fighter_id, kind=kind, what=ActionWhat.MOVE, steps=legal.steps,
                now=now,
            )  # fmt: skip
        for grappler in legal.escape:
            bc.take_action(
                state, fighter=f.fighter_id, kind=ActionKind.SIMPLE, what=ActionWhat.ESCAPE,
                target=grappler, now=now,
            )  # fmt: skip
        for attack in legal.assist_defender:
            bc.assist_defender(state, helper=f.fighter_id, attack=attack, now=now)
        for ally in legal.assist_attacker:
            bc.assist_attacker(state, helper=f.fighter_id, attacker=ally, now=now)
        if legal.hold:
            bc.hold(state, fighter=f.fighter_id, now=now)
        if legal.burst:
            bc.burst_of_speed(state, fighter=f.fighter_id, what=ActionWhat.OTHER, now=now)
        if legal.advance:
            bc.advance(state, by=f.fighter_id, now=now)
        assert legal.acting == (bc.whose_turn(state) == f.fighter_id)
