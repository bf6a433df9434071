"""A Hypothesis state machine over whole challenges under both presets
(seeds/000 ``met_classic``, seeds/004 ``ukm``): random sheets (Traits with
counts and Stamina flags, Negative Traits, Abilities, Disciplines, weapons,
pools, health Healthy..Incapacitated, immunities), random legal moves taken
from ``judge.legal_moves`` for both sides, and random moves of any kind.

Checked after every step: a move ``legal_moves`` lists is accepted; a move it
does not list raises RulesError and changes nothing; the state survives
to_dict/from_dict through JSON and msgpack; only bid Traits are lost, never
more than a side bid; counts and pools never go below zero; ``ukm`` retests
stay within seeds/004 "Challenge Re-Tests" (one each of Discipline, ability,
overbid, Willpower, in that order, Willpower last and final); every
challenge ends in exactly one outcome (teardown plays it to the end).

About 10 s in CI. To hunt bugs, raise the runs and their length, e.g.
``RULES_MACHINE_EXAMPLES=2000 RULES_MACHINE_STEPS=80 pytest
tests/rules/test_machine.py --hypothesis-seed=1``."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import msgpack
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from challenges.rules import (
    Category,
    ChallengeState,
    Combatant,
    Event,
    HealthLevel,
    Immunity,
    Kind,
    Moves,
    Outcome,
    Pool,
    Rating,
    RetestKind,
    RulesError,
    Side,
    Stage,
    Throw,
    TraitHolding,
    Transition,
    Weapon,
    accept,
    add_bids,
    answer_retest,
    beats,
    bid,
    bids_required,
    call_negative,
    call_retest,
    declare,
    judge,
    legal_moves,
    narrator_retest,
    open_opposed,
    open_simple,
    open_static,
    preempt,
    relent,
    respond,
    spend_blood,
    throw,
    void,
)
from challenges.rules.judge import (
    RETEST_ORDER,
    options_of,
    retest_ratings,
    spare,
    stamina_only,
)

NAMES = {
    Category.PHYSICAL: ["Brawny", "Quick", "Tough", "Wiry"],
    Category.SOCIAL: ["Alluring", "Regal", "Witty"],
    Category.MENTAL: ["Cunning", "Wise", "Shrewd"],
}
STAMINA = {"Tough", "Wiry"}
NEGATIVES = ["Clumsy", "Vain", "Forgetful", "Lame"]
ABILITIES = ["Brawl", "Dodge", "Melee", "Firearms", "Occult", "Subterfuge"]
DISCIPLINES = ["Dominate", "Presence", "Fortitude"]
WEAPONS = [
    Weapon("Knife", 1, "Melee"),
    Weapon("Pistol", 2, "Firearms", ranged=True),
    Weapon("Club", 1, ""),
]
POWERS = ["", "Dominate", "Presence"]
THROWS = st.sampled_from(list(Throw))
SIDES = st.sampled_from(list(Side))
START = 1000.0


@st.composite
def sheets(draw: st.DrawFn, character_id: int, other_id: int) -> Combatant:
    """A random character sheet as the engine sees it tonight."""
    held: list[TraitHolding] = []
    for category, names in NAMES.items():
        for name in draw(st.lists(st.sampled_from(names), unique=True, min_size=1)):
            count = draw(st.sampled_from([0, 1, 1, 2, 2, 3, 4, 6]))
            held.append(
                TraitHolding(
                    name,
                    category,
                    count,
                    at_risk=draw(st.integers(0, count)) if draw(st.booleans()) else 0,
                    stamina=name in STAMINA,
                    trait_id=character_id * 100 + len(held),
                )
            )
    for name in draw(st.lists(st.sampled_from(NEGATIVES), unique=True, max_size=2)):
        held.append(TraitHolding(name, draw(st.sampled_from(list(Category))), 1, negative=True))
    ratings = st.dictionaries(st.sampled_from(ABILITIES), st.integers(1, 4), max_size=3)
    disciplines = st.dictionaries(st.sampled_from(DISCIPLINES), st.integers(1, 3), max_size=2)
    immunities = draw(
        st.just([])
        | st.lists(
            st.builds(
                Immunity,
                st.just(other_id),
                st.sampled_from(["Dominate", "Presence", "Physical", "Mental"]),
                st.floats(START - 600, START + 600),
            ),
            max_size=1,
        )
    )
    return Combatant(
        character_id=character_id,
        name=f"C{character_id}",
        traits=tuple(held),
        health=HealthLevel(draw(st.sampled_from([0, 0, 0, 1, 2, 3]))),
        abilities=tuple(Rating(n, r) for n, r in draw(ratings).items()),
        disciplines=tuple(Rating(n, r) for n, r in draw(disciplines).items()),
        weapons=tuple(draw(st.lists(st.sampled_from(WEAPONS), unique_by=lambda w: w.name))),
        pools=tuple(
            (pool, draw(st.integers(0, top)))
            for pool, top in ((Pool.WILLPOWER, 3), (Pool.RAGE, 2), (Pool.BLOOD, 5))
        ),
        immunities=tuple(immunities),
        blood_traits=draw(st.integers(0, 2)),
        blood_limit=draw(st.none() | st.integers(1, 3)),
    )


def free_copies(state: ChallengeState, side: Side) -> list[str]:
    """One entry per copy ``side`` could still add to her bid (``spare``'s
    copies, by name), Stamina-based only when she must."""
    who = state.combatant(side)
    assert who is not None and state.category is not None
    only = stamina_only(state, side)
    used = Counter(state.bids_of(side))
    out: list[str] = []
    for t in who.traits:
        if t.category is state.category and not t.negative and (t.stamina or not only):
            out += [t.name] * max(0, who.free(t.name, state.category) - used[t.name])
            used[t.name] = max(0, used[t.name] - who.free(t.name, state.category))
    return out


def check_state(state: ChallengeState) -> None:
    """Invariants of every reachable state."""
    d = state.to_dict()
    assert ChallengeState.from_dict(json.loads(json.dumps(d))) == state
    assert ChallengeState.from_dict(msgpack.unpackb(msgpack.packb(d))) == state
    assert (state.stage is Stage.RESOLVED) == (state.outcome is not None)
    for side in Side:
        who = state.combatant(side)
        if who is None:
            assert not state.bids_of(side)
            continue
        assert state.of(side, "owed") >= 0 and state.of(side, "blood") >= 0
        # Never more copies bid than she held free.
        bids = Counter(state.bids_of(side))
        for name, n in bids.items():
            assert state.category is not None
            assert n <= who.free(name, state.category), (name, n)
        # Pools never below zero.
        for pool in Pool:
            used = sum(n for c, p, n in state.spent if c == who.character_id and p is pool)
            assert 0 <= used <= who.pool(pool), (pool, used)
    check_retest_limits(state)
    if state.stage is not Stage.RESOLVED:
        assert state.losses == () and state.wounds == ()


def check_retest_limits(state: ChallengeState) -> None:
    """``ukm``: at most one of each limited retest, in seeds/004's order, the
    Willpower retest last and final; in any preset nothing follows it."""
    kinds = [kind for _, kind in state.called]
    held = [t.retest for t in state.tests]
    if RetestKind.WILLPOWER in held:
        # Last and final: only the retests that settle a tie in it (equal
        # counts, ``ukm``) or a narrator's ruling may follow it.
        after = held[held.index(RetestKind.WILLPOWER) + 1 :]
        assert set(after) <= {RetestKind.EQUAL_COUNTS, RetestKind.NARRATOR}, held
    if options_of(state).retests_limited:
        limited = [k for k in kinds if k in RETEST_ORDER]
        assert len(limited) == len(set(limited)), kinds
        order = [RETEST_ORDER.index(k) for k in limited]
        assert order == sorted(order), kinds
        assert Counter(held)[RetestKind.WOUNDED] <= 1
    else:
        assert not {RetestKind.ABILITY, RetestKind.DISCIPLINE, RetestKind.WILLPOWER} & set(kinds)


def check_resolution(state: ChallengeState) -> None:
    """Only bid Traits are lost, by whom the outcome says; wounds only for
    the loser of an attack."""
    assert state.outcome is not None
    ids = {state.challenger.character_id: Side.CHALLENGER}
    if state.defender is not None:
        ids[state.defender.character_id] = Side.DEFENDER
    for cid, side in ids.items():
        lost = Counter(x.trait for x in state.losses if x.character_id == cid)
        bids = Counter(state.bids_of(side))
        assert not lost - bids, (lost, bids)  # only bid Traits, never more than bid
        who = state.combatant(side)
        assert who is not None
        for t in who.traits:
            assert t.count - lost[t.name] >= 0
        winner = {
            Outcome.CHALLENGER_WINS: Side.CHALLENGER,
            Outcome.DEFENDER_WINS: Side.DEFENDER,
        }.get(state.outcome)
        if side is winner:
            assert sum(lost.values()) <= state.of(side, "forfeits")
        if state.outcome is Outcome.VOID or state.relented:
            assert not lost
    assert all(x.category is state.category for x in state.losses)
    assert set(state.wounds) <= set(ids) and len(state.wounds) <= 1
    if state.wounds:
        assert state.is_attack and ids[state.wounds[0]] is not {
            Outcome.CHALLENGER_WINS: Side.CHALLENGER,
            Outcome.DEFENDER_WINS: Side.DEFENDER,
        }.get(state.outcome)


def listed(moves: Moves, move: str, kind: RetestKind | None = None) -> bool:
    """Whether ``moves`` lists the move called ``move``."""
    return {
        "respond": moves.bid > 0,
        "bid": moves.bid > 0,
        "relent": moves.relent,
        "preempt": moves.preempt,
        "call_negative": moves.call,
        "add_bids": moves.owed > 0,
        "spend_blood": moves.blood > 0,
        "throw": moves.throw,
        "declare": moves.declare is not None,
        "call_retest": kind in moves.retests,
        "answer_retest": moves.answer is not None,
        "accept": moves.accept,
    }[move]


class Challenges(RuleBasedStateMachine):
    """One challenge per run, played by random legal and illegal moves."""

    def __init__(self) -> None:
        super().__init__()
        self.state: ChallengeState | None = None
        self.events: list[Event] = []
        self.now = START
        self.rolls = 0

    # --- opening ---------------------------------------------------------------

    @initialize(
        ruleset=st.sampled_from(["met_classic", "ukm"]),
        kind=st.sampled_from([Kind.OPPOSED] * 6 + [Kind.STATIC, Kind.SIMPLE]),
        challenger=sheets(1, 2),
        defender=sheets(2, 1),
        category=st.sampled_from(list(Category)),
        data=st.data(),
    )
    def open(
        self,
        ruleset: str,
        kind: Kind,
        challenger: Combatant,
        defender: Combatant,
        category: Category,
        data: st.DataObject,
    ) -> None:
        ukm = ruleset == "ukm"
        narrator = data.draw(THROWS)

        # Mostly a category in which both have Traits free to bid.
        def has(who: Combatant, c: Category) -> bool:
            return any(t.free for t in who.traits if t.category is c and not t.negative)

        playable = [c for c in Category if has(challenger, c) and has(defender, c)]
        if playable and data.draw(st.integers(0, 7)):
            category = data.draw(st.sampled_from(playable))
        try:
            if kind is Kind.SIMPLE:
                t = open_simple(
                    ruleset=ruleset,
                    challenger=challenger,
                    narrator_throw=narrator,
                    choose=None,
                    narrator_initiated=data.draw(st.booleans()),
                    difficult=ukm and data.draw(st.booleans()),
                    now=self.now,
                )
            elif kind is Kind.STATIC:
                t = open_static(
                    ruleset=ruleset,
                    challenger=challenger,
                    category=category,
                    difficulty=data.draw(st.integers(1, 10)),
                    narrator_throw=narrator,
                    choose=None,
                    # issue 11: the object's moves, played by the engine
                    object_overbids=data.draw(st.booleans()),
                    object_retests=data.draw(st.booleans()),
                    now=self.now,
                )
            else:
                copies = [
                    t.name
                    for t in challenger.traits
                    if t.category is category and not t.negative
                    for _ in range(t.free)
                ]
                need = bids_required(challenger, ruleset)
                bids = data.draw(st.permutations(copies))[:need]
                if data.draw(st.integers(0, 9)) == 5:  # now and then, any bid at all
                    bids = data.draw(st.lists(st.sampled_from([*copies, "Nobody"]), max_size=2))
                weapon = data.draw(st.sampled_from(["", *(w.name for w in challenger.weapons)]))
                t = open_opposed(
                    ruleset=ruleset,
                    challenger=challenger,
                    defender=defender,
                    category=category,
                    bids=bids,
                    is_attack=data.draw(st.booleans()),
                    surprise=ukm and data.draw(st.booleans()),
                    weapon=weapon,
                    power=data.draw(st.sampled_from(POWERS)),
                    now=self.now,
                )
        except RulesError as refused:
            assert str(refused)
            return
        self.apply(t)

    def apply(self, t: Transition) -> None:
        before = self.state
        self.state = t.state
        self.events += t.events
        check_state(t.state)
        for event in t.events:
            assert json.loads(json.dumps(event.data)) == event.data
            if event.kind == "threw":  # a throw is public only once revealed
                assert set(event.data) == {"side"}
        if t.state.stage is Stage.RESOLVED:
            assert before is None or before.stage is not Stage.RESOLVED
            check_resolution(t.state)

    def choose(self, options: Sequence[Throw]) -> Throw:
        """The narrator's throw of a static retest: deterministic (Hypothesis
        replays runs), cycling through the throws."""
        self.rolls += 1
        return list(options)[self.rolls % len(options)]

    def tick(self) -> float:
        self.now += 7.0
        return self.now

    # --- legal moves -------------------------------------------------------------

    def legal_move(
        self, state: ChallengeState, side: Side, data: st.DataObject
    ) -> Transition | None:
        """One move ``legal_moves`` lists for ``side``, with legal arguments
        drawn at random; None if it lists nothing."""
        moves = legal_moves(state, side)
        choices: list[tuple[str, Callable[[], Transition]]] = []
        now = self.tick()
        who = state.combatant(side)
        if who is None:
            assert not moves.any
            return None
        if moves.bid:
            copies = free_copies(state, side)
            assert len(copies) >= moves.bid, "legal_moves asks for a bid she cannot make"
            picked = data.draw(st.permutations(copies))[: moves.bid]
            move = respond if state.stage is Stage.RESPONSE else bid
            choices.append(("bid", lambda: move(state, bids=picked, now=now)))
        if moves.relent:
            choices.append(("relent", lambda: relent(state, side=side, now=now)))
        if moves.preempt:
            choices.append(("preempt", lambda: preempt(state, gift="Resist Pain", now=now)))
        if moves.call:
            other = state.combatant(side.other)
            assert other is not None
            named = {c.name.casefold() for c in state.calls if c.caller is side}
            fresh = [n for n in NEGATIVES if n.casefold() not in named]
            if fresh:
                name = data.draw(st.sampled_from(fresh))
                choices.append(
                    ("call", lambda: call_negative(state, side=side, name=name, now=now))
                )
        if moves.owed:
            copies = free_copies(state, side)
            assert copies, "legal_moves asks for Traits she cannot add"
            n = data.draw(st.integers(1, min(moves.owed, len(copies))))
            added = data.draw(st.permutations(copies))[:n]
            choices.append(("add", lambda: add_bids(state, side=side, bids=added, now=now)))
        if moves.blood:
            amount = data.draw(st.integers(1, moves.blood))
            choices.append(("blood", lambda: spend_blood(state, side=side, amount=amount, now=now)))
        if moves.throw:
            gesture = data.draw(THROWS)
            test = state.current_test
            other = None if test is None else test.throw_of(side.other)
            if other is not None and data.draw(st.integers(0, 2)) == 0:
                gesture = other  # ties, often: they lead to declarations and retests
            choices.append(
                (
                    "throw",
                    lambda: throw(state, side=side, throw=gesture, now=now, choose=self.choose),
                )
            )
        if moves.declare is not None:
            count = data.draw(st.integers(0, moves.declare))
            choices.append(
                (
                    "declare",
                    lambda: declare(state, side=side, count=count, now=now, choose=self.choose),
                )
            )
        for kind in moves.retests:
            choices.append((kind.value, self.retest_call(state, side, kind, data, now)))
        if moves.answer is not None:
            choices.append(("answer", self.retest_answer(state, side, moves, data, now)))
        if moves.accept:
            choices.append(("accept", lambda: accept(state, side=side, now=now)))
        assert bool(choices) == moves.any or (moves.call and not choices)
        if not choices:
            return None
        # Relenting, pre-empting and accepting end the challenge: take them
        # now and then only, so that challenges get to their later stages.
        rare = {"relent", "preempt", "accept"}
        if any(name not in rare for name, _ in choices) and data.draw(st.integers(0, 11)) != 3:
            choices = [c for c in choices if c[0] not in rare]
        retests = [c for c in choices if c[0] in {k.value for k in moves.retests}]
        if retests and data.draw(st.integers(0, 2)):
            choices = retests  # retests, often: their limits are what is checked
        _, move_ = data.draw(st.sampled_from(choices))
        return move_()

    def retest_call(
        self, state: ChallengeState, side: Side, kind: RetestKind, data: st.DataObject, now: float
    ) -> Callable[[], Transition]:
        who = state.combatant(side)
        assert who is not None
        if kind is RetestKind.OVERBID:
            most = judge.most_declarable(state, side)
            if options_of(state).overbid.value == "announce_more_than_half":
                most = judge.effective(state, side, most)  # "including all usual bonuses"
            count = data.draw(st.none() | st.integers(0, most))
            if options_of(state).overbid.value == "new_trait_double_count":
                copies = free_copies(state, side)
                assert copies and spare(state, side) >= 1
                new = data.draw(st.sampled_from(copies))
                return lambda: call_retest(
                    state,
                    side=side,
                    kind=kind,
                    traits=[new],
                    count=count,
                    now=now,
                    choose=self.choose,
                )
            return lambda: call_retest(
                state, side=side, kind=kind, count=count, now=now, choose=self.choose
            )
        if kind in (RetestKind.ABILITY, RetestKind.DISCIPLINE):
            # Those that apply to the challenge's category (seeds/004 "appropriate").
            fitting = retest_ratings(state, side, kind)
            name = data.draw(st.sampled_from([r.name for r in fitting]))
        else:
            name = ""
        return lambda: call_retest(
            state, side=side, kind=kind, name=name, now=now, choose=self.choose
        )

    def retest_answer(
        self, state: ChallengeState, side: Side, moves: Moves, data: st.DataObject, now: float
    ) -> Callable[[], Transition]:
        who = state.combatant(side)
        pending = state.pending
        assert who is not None and pending is not None
        if moves.answer is RetestKind.OVERBID:
            assert moves.answer_max is not None
            count = data.draw(st.none() | st.integers(0, moves.answer_max))
            return lambda: answer_retest(state, side=side, count=count, now=now, choose=self.choose)
        if moves.answer is RetestKind.ABILITY:
            fitting = retest_ratings(state, side, RetestKind.ABILITY)
            name = data.draw(st.sampled_from(["", *(a.name for a in fitting)]))
            return lambda: answer_retest(state, side=side, name=name, now=now, choose=self.choose)
        cancel = who.discipline(pending.name) is not None and data.draw(st.booleans())
        return lambda: answer_retest(state, side=side, cancel=cancel, now=now, choose=self.choose)

    @rule(side=SIDES, data=st.data())
    def legal_moves_in_turn(self, side: Side, data: st.DataObject) -> None:
        """A few legal moves in a row, by ``side`` and then whoever is asked."""
        if self.state is None:
            return
        for _ in range(data.draw(st.integers(1, 6))):
            state = self.state
            assert state is not None
            if state.stage is Stage.RESOLVED:
                return
            t = self.legal_move(state, side, data)
            if t is not None:
                self.apply(t)
            asked = [s for s in Side if legal_moves(self.state, s).any]  # type: ignore[arg-type]
            side = data.draw(st.sampled_from(asked or list(Side)))

    @rule(reason=st.sampled_from(["dispute", "time out"]), data=st.data())
    def a_narrators_ruling(self, reason: str, data: st.DataObject) -> None:
        state = self.state
        if state is None:
            return
        if state.stage is Stage.RESOLVED:
            self.refused(lambda: void(state, reason=reason, now=self.tick()))
            self.refused(
                lambda: narrator_retest(state, reason=reason, now=self.tick(), choose=self.choose)
            )
            return
        roll = data.draw(st.integers(0, 9))
        if roll == 5:
            self.apply(void(state, reason=reason, now=self.tick()))
            return
        if roll not in (3, 7):
            return  # the narrator lets them play on
        retestable = state.stage in (
            Stage.RETEST,
            Stage.RETEST_ANSWER,
            Stage.DECLARE_CHALLENGER,
            Stage.DECLARE_DEFENDER,
        )
        if retestable:
            self.apply(narrator_retest(state, reason=reason, now=self.tick(), choose=self.choose))
        else:
            self.refused(
                lambda: narrator_retest(state, reason=reason, now=self.tick(), choose=self.choose)
            )

    # --- any move --------------------------------------------------------------------

    def refused(self, move: Callable[[], Transition]) -> None:
        """``move`` raises RulesError with a sentence, and changes nothing."""
        state = self.state
        assert state is not None
        before = state.to_dict()
        try:
            move()
        except RulesError as refused:
            assert str(refused)
        else:
            raise AssertionError("an illegal move was accepted")
        assert state.to_dict() == before

    @rule(
        side=SIDES,
        which=st.sampled_from(
            [
                "respond",
                "bid",
                "relent",
                "preempt",
                "call_negative",
                "add_bids",
                "spend_blood",
                "throw",
                "declare",
                "call_retest",
                "answer_retest",
                "accept",
            ]
        ),
        name=st.sampled_from(
            [n for names in NAMES.values() for n in names] + NEGATIVES + ABILITIES + DISCIPLINES
        ),
        count=st.integers(-1, 12),
        gesture=THROWS,
        kind=st.sampled_from(list(RetestKind)),
        data=st.data(),
    )
    def any_move(
        self,
        side: Side,
        which: str,
        name: str,
        count: int,
        gesture: Throw,
        kind: RetestKind,
        data: st.DataObject,
    ) -> None:
        """Any move with plausible or implausible arguments: if
        ``legal_moves`` does not list it, it must be refused; if it is
        accepted, every invariant still holds."""
        state = self.state
        if state is None:
            return
        now = self.tick()
        names = data.draw(st.lists(st.just(name), min_size=1, max_size=2))
        moves: dict[str, Callable[[], Transition]] = {
            "respond": lambda: respond(state, bids=names, now=now),
            "bid": lambda: bid(state, bids=names, now=now),
            "relent": lambda: relent(state, side=side, now=now),
            "preempt": lambda: preempt(state, gift=name, now=now),
            "call_negative": lambda: call_negative(state, side=side, name=name, now=now),
            "add_bids": lambda: add_bids(state, side=side, bids=names, now=now),
            "spend_blood": lambda: spend_blood(state, side=side, amount=count, now=now),
            "throw": lambda: throw(state, side=side, throw=gesture, now=now, choose=self.choose),
            "declare": lambda: declare(state, side=side, count=count, now=now, choose=self.choose),
            "call_retest": lambda: call_retest(
                state,
                side=side,
                kind=kind,
                traits=names,
                count=count,
                name=name,
                now=now,
                choose=self.choose,
            ),
            "answer_retest": lambda: answer_retest(
                state,
                side=side,
                count=count,
                name=name,
                cancel=data.draw(st.booleans()),
                now=now,
                choose=self.choose,
            ),
            "accept": lambda: accept(state, side=side, now=now),
        }
        mover = side
        if which == "respond" or (which == "preempt"):
            mover = Side.DEFENDER
        if which == "bid":
            mover = Side.CHALLENGER
        if not listed(legal_moves(state, mover), which, kind):
            self.refused(moves[which])
            return
        before = state.to_dict()
        try:
            t = moves[which]()
        except RulesError as refused:
            assert str(refused)
            assert state.to_dict() == before
            return
        self.apply(t)

    # --- always --------------------------------------------------------------------

    @invariant()
    def resolved_states_offer_nothing(self) -> None:
        state = self.state
        if state is not None and state.stage is Stage.RESOLVED:
            assert not legal_moves(state, Side.CHALLENGER).any
            assert not legal_moves(state, Side.DEFENDER).any

    def teardown(self) -> None:
        """Play the challenge to its end with plain legal moves (no retest
        called, throws that never tie): it ends in exactly one outcome."""
        state = self.state
        if state is None:
            return
        for _ in range(60):
            if state.stage is Stage.RESOLVED:
                break
            t = self.plain_move(state)
            self.apply(t)
            state = t.state
        assert state.stage is Stage.RESOLVED, state.stage
        assert [e.kind for e in self.events].count("resolved") == 1
        assert self.events[-1].kind == "resolved"

    def plain_move(self, state: ChallengeState) -> Transition:
        now = self.tick()
        asked = state.waiting_on
        for side in (Side.CHALLENGER, Side.DEFENDER):
            moves = legal_moves(state, side)
            if side == asked and moves.relent and not moves.bid:
                return relent(state, side=side, now=now)
            if moves.accept:
                return accept(state, side=side, now=now)
            if moves.owed:
                return add_bids(state, side=side, bids=free_copies(state, side)[:1], now=now)
            if moves.answer is not None:
                return answer_retest(state, side=side, now=now, choose=self.choose)
            if moves.declare is not None:
                return declare(state, side=side, now=now, choose=self.choose)
            if moves.bid:
                copies = free_copies(state, side)[: moves.bid]
                move = respond if state.stage is Stage.RESPONSE else bid
                return move(state, bids=copies, now=now)
        test = state.current_test
        assert state.stage is Stage.THROWS and test is not None, state.stage
        side = Side.CHALLENGER if test.challenger_throw is None else Side.DEFENDER
        other = test.throw_of(side.other)
        gesture = next(g for g in Throw if other is None or beats(g, other) or beats(other, g))
        return throw(state, side=side, throw=gesture, now=now, choose=self.choose)


MACHINE = settings(
    max_examples=int(os.environ.get("RULES_MACHINE_EXAMPLES", "150")),  # more to hunt bugs
    # No shrinking: shrinking a failing run of this machine can take minutes;
    # its printed steps are enough to replay it (add Phase.shrink to minimise).
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    stateful_step_count=int(os.environ.get("RULES_MACHINE_STEPS", "25")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def new_machine() -> Challenges:
    """The machine's factory. A function, not the class: Hypothesis digests
    its factory's source, and ``inspect.getsource`` of a class re-parses the
    whole module, which CPython 3.11.7 can refuse mid-suite (gh-106905,
    "AST constructor recursion depth mismatch")."""
    return Challenges()


def test_challenges_under_both_presets() -> None:
    run_state_machine_as_test(new_machine, settings=MACHINE)


def test_the_machine_reaches_every_stage_and_retest() -> None:
    """Not a property: a guard that the machine's sheets and moves reach what
    it is meant to walk (a sheet generator that never made an ability retest
    possible would pass vacuously): every stage, every retest of both presets
    but Willpower offered to a side, and an overbid held."""
    seen: set[Any] = set()
    offered: set[RetestKind] = set()

    class Watch(Challenges):
        def apply(self, t: Transition) -> None:
            super().apply(t)
            seen.add(t.state.stage)
            seen.update(kind for _, kind in t.state.called)
            seen.update(test.retest for test in t.state.tests)
            for side in Side:
                offered.update(legal_moves(t.state, side).retests)

    def new_watch() -> Watch:
        return Watch()

    run_state_machine_as_test(
        new_watch,
        settings=settings(
            max_examples=300,
            derandomize=True,
            stateful_step_count=25,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            database=None,
        ),
    )
    assert set(Stage) <= seen, set(Stage) - seen
    # The Willpower retest (a ukm defender losing a Mental or Social test)
    # is rarer than this derandomized run reaches; the random runs of
    # test_challenges_under_both_presets do call it, and
    # test_seed_examples.py plays it by name.
    limited = {RetestKind.OVERBID, RetestKind.ABILITY, RetestKind.DISCIPLINE}
    assert limited <= offered, limited - offered
    assert RetestKind.OVERBID in seen
