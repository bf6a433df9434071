"""Transitions of a challenge: pure functions from a state (and a move) to a
:class:`Transition` (new state + events), or RulesError for an illegal move.

Every check runs before any new state is built, so a refused move leaves
nothing half-changed. ``now`` is epoch seconds; ``stage_since`` takes it
whenever the stage changes. The narrator's throws are drawn by the caller's
``choose`` (the service passes ``secrets.choice``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from challenges.rules.core import (
    Category,
    ChallengeState,
    Combatant,
    Event,
    HealthLevel,
    Kind,
    Loss,
    Outcome,
    RulesError,
    Side,
    Stage,
    TestRecord,
    Throw,
    Transition,
    beats,
)
from challenges.rules.rulesets import Ruleset, bids_required, get_ruleset

Chooser = Callable[[Sequence[Throw]], Throw]
"""Picks the narrator's throw from a list of throws, e.g. ``secrets.choice``."""


# --- checks -----------------------------------------------------------------


def _require_unresolved(state: ChallengeState) -> None:
    if state.stage is Stage.RESOLVED:
        raise RulesError("This challenge is over.")


def _require_can_enter(who: Combatant) -> None:
    """seeds/000 "Health": an Incapacitated character may not enter challenges."""
    if who.health >= HealthLevel.INCAPACITATED:
        raise RulesError("You are incapacitated and cannot enter challenges.")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _validate_bids(
    who: Combatant, category: Category, bids: Sequence[str], ruleset: Ruleset
) -> tuple[tuple[str, ...], tuple[int | None, ...]]:
    """The bid as the Traits' own names, one entry per copy, and beside them
    the ``trait_id`` of the holding each copy is taken from; or RulesError.

    Each Trait must be a non-negative Trait of ``category`` she holds free
    (count - at_risk, minus copies earlier in this bid); the number of entries
    must be ``bids_required``. seeds/000 "Initial Bid", "Negative Traits".
    """
    if isinstance(bids, str):
        bids = (bids,)
    if not all(isinstance(name, str) for name in bids):
        raise RulesError("A bid is a list of Trait names.")
    need = bids_required(who, ruleset)
    if len(bids) != need:
        raise RulesError(f"You must bid {_plural(need, 'Trait')}, not {len(bids)}.")
    used: Counter[str] = Counter()
    taken: Counter[int | None] = Counter()
    names: list[str] = []
    ids: list[int | None] = []
    for raw in bids:
        own = [t for t in who.holdings(raw, category) if not t.negative]
        if not own:
            anywhere = who.holdings(raw)
            negative = [t for t in anywhere if t.negative]
            if negative:
                raise RulesError(f"'{negative[0].name}' is a Negative Trait; you cannot bid it.")
            if anywhere:
                t = anywhere[0]
                raise RulesError(
                    f"'{t.name}' is a {t.category.label} Trait; "
                    f"this is a {category.label} challenge."
                )
            raise RulesError(f"You have no {category.label} Trait '{raw}' left to bid tonight.")
        name = own[0].name
        used[name] += 1
        held = sum(t.count for t in own)
        free = who.free(name, category)
        if used[name] > free:
            if held == 0:
                raise RulesError(
                    f"You have no {category.label} Trait '{name}' left to bid tonight."
                )
            if free == 0:
                raise RulesError(f"Your '{name}' is already at risk in another challenge.")
            raise RulesError(f"You have only {free} '{name}' free to bid.")
        # The copy comes from the first holding of that name with one free.
        holding = next((t for t in own if taken[t.trait_id] < t.free), own[0])
        taken[holding.trait_id] += 1
        names.append(name)
        ids.append(holding.trait_id)
    return tuple(names), tuple(ids)


def _as_throw(throw: Any) -> Throw:
    try:
        return Throw(throw)
    except ValueError:
        raise RulesError("Throw Rock, Paper or Scissors.") from None


def _narrator_throw(narrator_throw: Throw | None, choose: Chooser) -> Throw:
    if narrator_throw is not None:
        return _as_throw(narrator_throw)
    return _as_throw(choose(list(Throw)))


# --- building blocks -----------------------------------------------------------


def _at_stage(state: ChallengeState, stage: Stage, now: float, **changes: Any) -> ChallengeState:
    """``state`` with ``changes`` and ``stage``; ``stage_since`` moves only if
    the stage changes."""
    since = now if stage is not state.stage else state.stage_since
    return replace(state, stage=stage, stage_since=since, **changes)


def _with_current_test(state: ChallengeState, test: TestRecord) -> tuple[TestRecord, ...]:
    return (*state.tests[:-1], test)


def _resolve(
    state: ChallengeState, outcome: Outcome, now: float, **changes: Any
) -> tuple[ChallengeState, Event]:
    """Settle ``state`` with ``outcome`` (after ``changes``): the loser loses
    every Trait she bid (one Loss per entry), a draw costs both sides their
    bids, the winner's bid is safe; in an attack the losing character takes one
    wound (none on a draw or void). seeds/000 "Testing", "Health"."""
    state = replace(state, **changes)
    losers: tuple[Side, ...] = {
        Outcome.CHALLENGER_WINS: (Side.DEFENDER,),
        Outcome.DEFENDER_WINS: (Side.CHALLENGER,),
        Outcome.DRAW: (Side.CHALLENGER, Side.DEFENDER),
        Outcome.VOID: (),
    }[outcome]
    losses: list[Loss] = []
    wounds: list[int] = []
    for side in losers:
        who = state.combatant(side)
        if who is None or state.category is None:
            continue  # the narrator's side, or a simple test: nothing was bid
        losses.extend(
            Loss(who.character_id, name, state.category, trait_id)
            for name, trait_id in state.bid_entries(side)
        )
        if state.is_attack and outcome is not Outcome.DRAW:
            wounds.append(who.character_id)
    resolved = _at_stage(
        state, Stage.RESOLVED, now, outcome=outcome, losses=tuple(losses), wounds=tuple(wounds)
    )
    event = Event(
        "resolved",
        {
            "outcome": outcome.value,
            "losses": [[x.character_id, x.trait, x.category.value] for x in resolved.losses],
            "wounds": list(resolved.wounds),
        },
    )
    return resolved, event


def _opened(state: ChallengeState) -> Event:
    """The public "opened" event: no narrator throw, no difficulty."""
    return Event(
        "opened",
        {
            "kind": state.kind.value,
            "ruleset": state.ruleset,
            "category": None if state.category is None else state.category.value,
            "challenger": state.challenger.character_id,
            "defender": None if state.defender is None else state.defender.character_id,
            "is_attack": state.is_attack,
            "stakes": state.stakes,
        },
    )


def _compare_counts(
    state: ChallengeState, test: TestRecord, now: float, events: list[Event]
) -> Transition:
    """Settle a tie by declared counts: more wins, equal is a draw (both lose
    their bids) under ``draw_on_equal_counts``. seeds/000 "Testing"."""
    ruleset = get_ruleset(state.ruleset)
    mine, theirs = test.challenger_declared, test.defender_declared
    assert mine is not None and theirs is not None
    if mine > theirs:
        outcome, winner = Outcome.CHALLENGER_WINS, Side.CHALLENGER
    elif mine < theirs:
        outcome, winner = Outcome.DEFENDER_WINS, Side.DEFENDER
    elif ruleset.draw_on_equal_counts:
        outcome, winner = Outcome.DRAW, None
    else:  # pragma: no cover - no ruleset uses it yet
        raise NotImplementedError("Retests on equal counts (ukm) are not built yet.")
    test = replace(test, winner=winner)
    state, resolved = _resolve(state, outcome, now, tests=_with_current_test(state, test))
    return Transition(state, (*events, resolved))


# --- opposed challenges --------------------------------------------------------


def open_opposed(
    *,
    ruleset: str,
    challenger: Combatant,
    defender: Combatant,
    category: Category,
    bids: Sequence[str],
    is_attack: bool = False,
    stakes: str = "",
    now: float,
) -> Transition:
    """The challenger names the defender, the category, her bid (Trait names,
    ``bids_required`` of them) and the stakes → stage RESPONSE.

    Events: "opened", "bid". RulesError: unknown ruleset; challenging
    yourself; an Incapacitated (or worse) challenger; a wrong number of bids;
    a bid Trait she does not hold free in ``category``, of another category, or
    Negative. A defender of any health may be challenged.
    seeds/000 "Initial Bid".
    """
    rules = get_ruleset(ruleset)
    if challenger.character_id == defender.character_id:
        raise RulesError("You cannot challenge yourself.")
    _require_can_enter(challenger)
    category = Category(category)
    names, ids = _validate_bids(challenger, category, bids, rules)
    state = ChallengeState(
        kind=Kind.OPPOSED,
        ruleset=rules.name,
        category=category,
        challenger=challenger,
        defender=defender,
        difficulty=None,
        challenger_bids=names,
        defender_bids=(),
        challenger_bid_ids=ids,
        relented=False,
        is_attack=bool(is_attack),
        stakes=str(stakes),
        stage=Stage.RESPONSE,
        stage_since=now,
        tests=(),
        outcome=None,
        losses=(),
        wounds=(),
    )
    bid_event = Event("bid", {"side": Side.CHALLENGER.value, "traits": list(names)})
    return Transition(state, (_opened(state), bid_event))


def respond(state: ChallengeState, *, bids: Sequence[str] | None, now: float) -> Transition:
    """The defender answers an opposed challenge.

    ``bids`` None or empty: she relents and loses at once → RESOLVED,
    CHALLENGER_WINS, no Trait lost by anyone (the challenger's bid is safe);
    in an attack she takes a wound, since the stated action happens. Events:
    "relented", "resolved". Otherwise she bids Traits of the challenge's
    category → stage THROWS with a fresh test; event "responded".
    RulesError: not an opposed challenge, not stage RESPONSE, resolved, or an
    illegal bid (as in ``open_opposed``). seeds/000 "Initial Bid".
    """
    _require_unresolved(state)
    if state.kind is not Kind.OPPOSED or state.stage is not Stage.RESPONSE:
        raise RulesError("It is not time to answer a challenge.")
    assert state.defender is not None and state.category is not None
    if not bids:
        relented = Event("relented", {"side": Side.DEFENDER.value})
        resolved_state, resolved = _resolve(state, Outcome.CHALLENGER_WINS, now, relented=True)
        return Transition(resolved_state, (relented, resolved))
    names, ids = _validate_bids(state.defender, state.category, bids, get_ruleset(state.ruleset))
    new = _at_stage(
        state,
        Stage.THROWS,
        now,
        defender_bids=names,
        defender_bid_ids=ids,
        tests=(*state.tests, TestRecord()),
    )
    return Transition(
        new, (Event("responded", {"side": Side.DEFENDER.value, "traits": list(names)}),)
    )


# --- throws and ties -----------------------------------------------------------


def throw(state: ChallengeState, *, side: Side, throw: Throw, now: float) -> Transition:
    """``side`` commits its throw for the current test.

    When both throws are in the test is revealed: a winner resolves the
    challenge; a tie goes to DECLARE_CHALLENGER (opposed and static: the
    challenger declares first, a static challenge's other count is the
    difficulty), except in a simple test, where a tie is a success under
    ``simple_test_tie_succeeds`` (else a failure). Events: "threw" (side only,
    never the throw), then "revealed" with both throws, then "tied" or
    "resolved". RulesError: resolved; not stage THROWS; the narrator's side in a
    static challenge or simple test (its throw is set at open); a second throw
    by the same side; not a throw. seeds/000 "Testing", "Simple Tests".
    """
    _require_unresolved(state)
    if state.stage is not Stage.THROWS:
        raise RulesError("It is not time to throw.")
    side = Side(side)
    gesture = _as_throw(throw)
    if state.kind is not Kind.OPPOSED and side is Side.DEFENDER:
        raise RulesError("The narrator's throw is already set.")
    test = state.current_test
    assert test is not None
    if test.throw_of(side) is not None:
        raise RulesError("You have already thrown.")
    if side is Side.CHALLENGER:
        test = replace(test, challenger_throw=gesture)
    else:
        test = replace(test, defender_throw=gesture)
    events: list[Event] = [Event("threw", {"side": side.value})]
    if not test.revealed:
        return Transition(replace(state, tests=_with_current_test(state, test)), tuple(events))

    ch, de = test.challenger_throw, test.defender_throw
    assert ch is not None and de is not None
    winner = Side.CHALLENGER if beats(ch, de) else Side.DEFENDER if beats(de, ch) else None
    test = replace(test, winner=winner, tie=winner is None)
    events.append(
        Event(
            "revealed",
            {
                "test": len(state.tests),
                "challenger_throw": ch.value,
                "defender_throw": de.value,
                "winner": None if winner is None else winner.value,
                "tie": winner is None,
            },
        )
    )
    tests = _with_current_test(state, test)
    if winner is not None:
        outcome = Outcome.CHALLENGER_WINS if winner is Side.CHALLENGER else Outcome.DEFENDER_WINS
        resolved_state, resolved = _resolve(state, outcome, now, tests=tests)
        return Transition(resolved_state, (*events, resolved))
    if state.kind is Kind.SIMPLE:
        ok = get_ruleset(state.ruleset).simple_test_tie_succeeds
        outcome = Outcome.CHALLENGER_WINS if ok else Outcome.DEFENDER_WINS
        resolved_state, resolved = _resolve(state, outcome, now, tests=tests)
        return Transition(resolved_state, (*events, resolved))
    events.append(Event("tied", {"test": len(state.tests)}))
    return Transition(_at_stage(state, Stage.DECLARE_CHALLENGER, now, tests=tests), tuple(events))


def declare(
    state: ChallengeState, *, side: Side, count: int | None = None, now: float
) -> Transition:
    """After a tie, ``side`` declares its Trait count in the category
    (``count`` None: her full count, ``combatant.count(category)``).

    The challenger declares first, then the defender; then the higher count
    wins and equal counts are a draw (both lose their bids). In a static
    challenge the narrator's count is the difficulty, compared as soon as the
    player declares. A side may declare fewer Traits than she has, never
    more. Events: "declared" (per side; in static also the narrator's
    difficulty), then "resolved" when settled. RulesError: resolved; no tie to
    declare; out of turn ("The challenger declares first."); the narrator's
    side in a static challenge; a count that is not a whole number, negative,
    or above her real count ("You cannot declare more Traits than you have
    (N)."). seeds/000 "Testing".
    """
    _require_unresolved(state)
    if state.stage not in (Stage.DECLARE_CHALLENGER, Stage.DECLARE_DEFENDER):
        raise RulesError("There is no tie to declare Traits for.")
    side = Side(side)
    if state.kind is not Kind.OPPOSED and side is Side.DEFENDER:
        raise RulesError("The narrator's count is the difficulty; there is nothing to declare.")
    if state.stage is Stage.DECLARE_CHALLENGER and side is Side.DEFENDER:
        raise RulesError("The challenger declares first.")
    if state.stage is Stage.DECLARE_DEFENDER and side is Side.CHALLENGER:
        raise RulesError("You have already declared.")
    who = state.combatant(side)
    assert who is not None and state.category is not None
    real = who.count(state.category)
    if count is None:
        count = real
    if isinstance(count, bool) or not isinstance(count, int):
        raise RulesError("Declare a whole number of Traits.")
    if count < 0:
        raise RulesError("You cannot declare fewer than zero Traits.")
    if count > real:
        raise RulesError(f"You cannot declare more Traits than you have ({real}).")

    test = state.current_test
    assert test is not None
    events: list[Event] = [Event("declared", {"side": side.value, "count": count})]
    if side is Side.CHALLENGER:
        test = replace(test, challenger_declared=count)
    else:
        test = replace(test, defender_declared=count)

    if state.kind is Kind.STATIC:
        assert state.difficulty is not None
        test = replace(test, defender_declared=state.difficulty)
        events.append(Event("declared", {"side": Side.DEFENDER.value, "count": state.difficulty}))
        return _compare_counts(state, test, now, events)
    if side is Side.CHALLENGER:
        new = _at_stage(state, Stage.DECLARE_DEFENDER, now, tests=_with_current_test(state, test))
        return Transition(new, tuple(events))
    return _compare_counts(state, test, now, events)


# --- narrator rulings ------------------------------------------------------------


def void(state: ChallengeState, *, reason: str, now: float) -> Transition:
    """A narrator voids an unresolved challenge (a dispute ruled): RESOLVED,
    Outcome.VOID, no Trait lost, no wound. Events: "voided" {"reason"},
    "resolved". RulesError if it is already over. RULES.md "Time out and
    order of play" (disputes)."""
    _require_unresolved(state)
    voided = Event("voided", {"reason": str(reason)})
    new, resolved = _resolve(state, Outcome.VOID, now)
    return Transition(new, (voided, resolved))


# --- static challenges -----------------------------------------------------------


def open_static(
    *,
    ruleset: str,
    challenger: Combatant,
    category: Category,
    difficulty: int,
    narrator_throw: Throw | None,
    choose: Chooser,
    stakes: str = "",
    now: float,
) -> Transition:
    """A narrator sets a static challenge: ``difficulty`` (a Trait count ≥ 1)
    in ``category`` → stage BID, waiting on the player's bid.

    The narrator's throw (``narrator_throw``, or ``choose(list(Throw))`` if
    None) is stored at once in ``tests[0].defender_throw``; the test is not
    revealed until the player throws. Event: "opened" (without the throw or
    the difficulty). RulesError: unknown ruleset, difficulty below 1 or not a
    whole number, an Incapacitated (or worse) player, a bad throw.
    seeds/000 "Static Challenges".
    """
    rules = get_ruleset(ruleset)
    if isinstance(difficulty, bool) or not isinstance(difficulty, int) or difficulty < 1:
        raise RulesError("The difficulty must be at least 1 Trait.")
    _require_can_enter(challenger)
    category = Category(category)
    first = TestRecord(defender_throw=_narrator_throw(narrator_throw, choose))
    state = ChallengeState(
        kind=Kind.STATIC,
        ruleset=rules.name,
        category=category,
        challenger=challenger,
        defender=None,
        difficulty=difficulty,
        challenger_bids=(),
        defender_bids=(),
        relented=False,
        is_attack=False,
        stakes=str(stakes),
        stage=Stage.BID,
        stage_since=now,
        tests=(first,),
        outcome=None,
        losses=(),
        wounds=(),
    )
    return Transition(state, (_opened(state),))


def bid(state: ChallengeState, *, bids: Sequence[str] | None, now: float) -> Transition:
    """The player of a static challenge bids (→ stage THROWS; event "bid") or,
    with ``bids`` None or empty, relents (→ RESOLVED, DEFENDER_WINS, nothing
    lost; events "relented", "resolved"). RulesError: not a static challenge
    at stage BID, resolved, an Incapacitated player, or an illegal bid (as in
    ``open_opposed``). seeds/000 "Static Challenges".
    """
    _require_unresolved(state)
    if state.kind is not Kind.STATIC or state.stage is not Stage.BID:
        raise RulesError("It is not time to bid.")
    assert state.category is not None
    if not bids:
        relented = Event("relented", {"side": Side.CHALLENGER.value})
        new, resolved = _resolve(state, Outcome.DEFENDER_WINS, now, relented=True)
        return Transition(new, (relented, resolved))
    _require_can_enter(state.challenger)
    names, ids = _validate_bids(state.challenger, state.category, bids, get_ruleset(state.ruleset))
    new = _at_stage(state, Stage.THROWS, now, challenger_bids=names, challenger_bid_ids=ids)
    return Transition(new, (Event("bid", {"side": Side.CHALLENGER.value, "traits": list(names)}),))


# --- simple tests ----------------------------------------------------------------


def open_simple(
    *,
    ruleset: str,
    challenger: Combatant,
    narrator_throw: Throw | None,
    choose: Chooser,
    stakes: str = "",
    now: float,
) -> Transition:
    """A narrator calls a simple test → stage THROWS, nothing bid, no
    category. The narrator's throw is set at once as in ``open_static``. The
    player succeeds (CHALLENGER_WINS) on a win, or on a tie under
    ``simple_test_tie_succeeds``; a loss is DEFENDER_WINS. Nothing is lost and
    nobody is wounded either way. Event: "opened". RulesError: unknown
    ruleset, a bad throw. A character of any health may be asked (the
    narrator's call). seeds/000 "Simple Tests".
    """
    rules = get_ruleset(ruleset)
    first = TestRecord(defender_throw=_narrator_throw(narrator_throw, choose))
    state = ChallengeState(
        kind=Kind.SIMPLE,
        ruleset=rules.name,
        category=None,
        challenger=challenger,
        defender=None,
        difficulty=None,
        challenger_bids=(),
        defender_bids=(),
        relented=False,
        is_attack=False,
        stakes=str(stakes),
        stage=Stage.THROWS,
        stage_since=now,
        tests=(first,),
        outcome=None,
        losses=(),
        wounds=(),
    )
    return Transition(state, (_opened(state),))
