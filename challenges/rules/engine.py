"""Transitions of a challenge: pure functions from a state (and a move) to a
:class:`Transition` (new state + events), or RulesError for an illegal move.

Every check runs before any new state is built, so a refused move leaves
nothing half-changed. ``now`` is epoch seconds; ``stage_since`` takes it
whenever the stage changes. The narrator's throws are drawn by the caller's
``choose`` (the service passes ``secrets.choice``; None means
``secrets.choice`` too). Where the rulesets differ, a move reads its
ruleset's options (``challenges/rules/options.py``) through ``judge``.

The moves, in the order of a challenge: :func:`open_opposed` (or
:func:`open_static` + :func:`bid`, :func:`open_simple`), :func:`respond`,
:func:`relent`, :func:`preempt`, :func:`call_negative`, :func:`add_bids`,
:func:`spend_blood`, :func:`throw`, :func:`declare`, :func:`call_retest`,
:func:`answer_retest`, :func:`accept`; a narrator's :func:`narrator_retest`
, :func:`void` and :func:`settle`. :func:`challenges.rules.judge.legal_moves` lists what a side
may do now.
"""

from __future__ import annotations

import secrets
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from challenges.rules import judge
from challenges.rules.core import (
    Category,
    ChallengeState,
    Combatant,
    Event,
    Immunity,
    Kind,
    Loss,
    NegativeCall,
    Outcome,
    PendingRetest,
    Pool,
    RetestKind,
    RulesError,
    Side,
    Stage,
    TestRecord,
    Throw,
    Transition,
    _norm,
    beats,
)
from challenges.rules.options import Incapacitated, NegativeNamed, Overbid, SimpleTie
from challenges.rules.rulesets import bids_required, get_ruleset, met_ruleset

Chooser = Callable[[Sequence[Throw]], Throw]
"""Picks the narrator's throw from a list of throws, e.g. ``secrets.choice``."""

MAX_TEXT = 100
"""Longest name a move takes (a Negative Trait, a Gift, a power), in characters."""


# --- checks -----------------------------------------------------------------


def _require_unresolved(state: ChallengeState) -> None:
    if state.stage is Stage.RESOLVED:
        raise RulesError("This challenge is over.")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _text(value: Any, what: str) -> str:
    """A short name from a player: spaces collapsed, at most MAX_TEXT
    characters; RulesError if it is not text."""
    if not isinstance(value, str):
        raise RulesError(f"Name a {what}.")
    return " ".join(value.split())[:MAX_TEXT]


def _validate_bids(
    who: Combatant,
    category: Category,
    bids: Sequence[str],
    *,
    need: int | None,
    already: Sequence[tuple[str, int | None]] = (),
    stamina_only: bool = False,
) -> tuple[tuple[str, ...], tuple[int | None, ...]]:
    """The bid as the Traits' own names, one entry per copy, and beside them
    the ``trait_id`` of the holding each copy is taken from; or RulesError.

    Each Trait must be a non-negative Trait of ``category`` she holds free
    (count - at_risk, minus copies bid earlier in this bid and ``already``
    bid in this challenge); with ``stamina_only`` (a surprised defender) a
    Stamina-based one. ``need``: the exact number of entries (None: any).
    seeds/000 "Initial Bid", "Negative Traits"; seeds/004 Surprise.
    """
    if isinstance(bids, str):
        bids = (bids,)
    if not all(isinstance(name, str) for name in bids):
        raise RulesError("A bid is a list of Trait names.")
    if need is not None and len(bids) != need:
        raise RulesError(f"You must bid {_plural(need, 'Trait')}, not {len(bids)}.")
    used: Counter[str] = Counter(name for name, _ in already)
    taken: Counter[int | None] = Counter(trait_id for _, trait_id in already)
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
        if stamina_only and not all(t.stamina for t in own):
            raise RulesError(
                f"Surprised, you can defend only with Stamina-based Physical Traits; "
                f"'{own[0].name}' is not one."
            )
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


def _narrator_throw(narrator_throw: Throw | None, choose: Chooser | None) -> Throw:
    if narrator_throw is not None:
        return _as_throw(narrator_throw)
    return _as_throw((choose or secrets.choice)(list(Throw)))


def _count(value: Any, most: int, *, what: str = "Traits") -> int:
    """A declared count: a whole number from 0 to ``most``; RulesError else."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise RulesError(f"Declare a whole number of {what}.")
    if value < 0:
        raise RulesError(f"You cannot declare fewer than zero {what}.")
    if value > most:
        raise RulesError(f"You cannot declare more {what} than you have ({most}).")
    return value


# --- building blocks -----------------------------------------------------------


def _at_stage(state: ChallengeState, stage: Stage, now: float, **changes: Any) -> ChallengeState:
    """``state`` with ``changes`` and ``stage``; ``stage_since`` moves only if
    the stage changes."""
    since = now if stage is not state.stage else state.stage_since
    return replace(state, stage=stage, stage_since=since, **changes)


def _with_current_test(state: ChallengeState, test: TestRecord) -> tuple[TestRecord, ...]:
    return (*state.tests[:-1], test)


def _per_side(side: Side, **fields: Any) -> dict[str, Any]:
    """Per-side field changes: ``_per_side(DEFENDER, owed=1)`` is
    ``{"defender_owed": 1}``."""
    return {f"{Side(side).value}_{name}": value for name, value in fields.items()}


def _no_counterattack(state: ChallengeState) -> bool:
    """The challenger of an attack takes no wound when she loses it: the
    defender was surprised, or is unarmed against a ranged weapon (seeds/004
    Surprise, "Weapons / Ranged Combat")."""
    if state.surprise:
        return True
    weapon = state.challenger.weapon(state.challenger_weapon) if state.challenger_weapon else None
    return weapon is not None and weapon.ranged and not state.defender_weapon


def _resolve(
    state: ChallengeState, outcome: Outcome, now: float, **changes: Any
) -> tuple[ChallengeState, Event]:
    """Settle ``state`` with ``outcome`` (after ``changes``).

    Traits lost, one Loss per bid entry (seeds/000 "Testing", "Overbidding",
    "Negative Traits"): the loser loses every Trait she bid, a draw costs both
    sides their bids, the winner loses only the entries she forfeited by
    losing an earlier test (``*_forfeits``); a side whose bid is ``safe``
    loses nothing, and a relent costs nobody a Trait. Wounds (seeds/000
    "Health"): in an attack the losing character takes one, except on a draw
    or void, a challenger who relented, or a challenger the defender could
    not harm (surprise, unarmed against a ranged weapon). A defender who
    fended off the attack with a Willpower retest is immune to that
    attacker's power for ``willpower_immunity_minutes`` (seeds/004). In a
    static challenge under ``static_loser`` AGGRESSOR_ONLY the player loses
    her bid only when she loses (:func:`judge.aggressor_only`).
    """
    state = replace(state, **changes)
    losers: tuple[Side, ...] = {
        Outcome.CHALLENGER_WINS: (Side.DEFENDER,),
        Outcome.DEFENDER_WINS: (Side.CHALLENGER,),
        Outcome.DRAW: (Side.CHALLENGER, Side.DEFENDER),
        Outcome.VOID: (),
    }[outcome]
    losses: list[Loss] = []
    for side in (Side.CHALLENGER, Side.DEFENDER):
        who = state.combatant(side)
        if who is None or state.category is None or state.relented or outcome is Outcome.VOID:
            continue
        if judge.safe(state, side):
            continue
        entries = state.bid_entries(side)
        lost = entries if side in losers else entries[: state.of(side, "forfeits")]
        if judge.aggressor_only(state) and outcome is not Outcome.DEFENDER_WINS:
            lost = ()  # only the aggressor loses, and only when she loses (seeds/004)
        losses.extend(Loss(who.character_id, name, state.category, tid) for name, tid in lost)
    wounds: list[int] = []
    if state.is_attack and outcome in (Outcome.CHALLENGER_WINS, Outcome.DEFENDER_WINS):
        loser = losers[0]
        spared = loser is Side.CHALLENGER and (state.relented or _no_counterattack(state))
        who = state.combatant(loser)
        if who is not None and not spared:
            wounds.append(who.character_id)
    granted = state.granted
    minutes = judge.options_of(state).willpower_immunity_minutes
    # She fended off the attack with Willpower: she won after calling it (its
    # test, or the retests on equal counts that settled a tie in it).
    if (
        outcome is Outcome.DEFENDER_WINS
        and (Side.DEFENDER, RetestKind.WILLPOWER) in state.called
        and state.defender is not None
        and minutes
    ):
        power = state.power or (state.category.label if state.category else "")
        immunity = Immunity(state.challenger.character_id, power, now + minutes * 60)
        granted = (*granted, (state.defender.character_id, immunity))
    resolved = _at_stage(
        state,
        Stage.RESOLVED,
        now,
        outcome=outcome,
        losses=tuple(losses),
        wounds=tuple(wounds),
        granted=granted,
        retest_side=None,
        pending=None,
    )
    data: dict[str, Any] = {
        "outcome": outcome.value,
        "losses": [[x.character_id, x.trait, x.category.value] for x in resolved.losses],
        "wounds": list(resolved.wounds),
    }
    if granted != state.granted:
        data["immunity"] = [[c, i.attacker_id, i.power, i.until] for c, i in granted]
    return resolved, Event("resolved", data)


def _opened(state: ChallengeState) -> Event:
    """The public "opened" event: no narrator throw, no difficulty."""
    data: dict[str, Any] = {
        "kind": state.kind.value,
        "ruleset": state.ruleset,
        "category": None if state.category is None else state.category.value,
        "challenger": state.challenger.character_id,
        "defender": None if state.defender is None else state.defender.character_id,
        "is_attack": state.is_attack,
        "stakes": state.stakes,
    }
    for key in ("surprise", "challenger_weapon", "power", "narrator_initiated", "difficult"):
        if getattr(state, key):
            data[key] = getattr(state, key)
    return Event("opened", data)


def _new_test(
    state: ChallengeState,
    now: float,
    events: list[Event],
    *,
    retest: RetestKind,
    by: Side | None,
    choose: Chooser | None,
) -> Transition:
    """Hold another test (a retest): a fresh TestRecord at stage THROWS, with
    the narrator's throw drawn at once in a static challenge. Event "retest"."""
    test = TestRecord(retest=retest, by=by)
    if state.kind is not Kind.OPPOSED:
        test = replace(test, defender_throw=_narrator_throw(None, choose))
    new = _at_stage(
        state, Stage.THROWS, now, tests=(*state.tests, test), retest_side=None, pending=None
    )
    events.append(
        Event(
            "retest",
            {"test": len(new.tests), "kind": retest.value, "by": None if by is None else by.value},
        )
    )
    return Transition(new, tuple(events))


def _outcome_for(winner: Side) -> Outcome:
    return Outcome.CHALLENGER_WINS if winner is Side.CHALLENGER else Outcome.DEFENDER_WINS


def _test_won(
    state: ChallengeState,
    test: TestRecord,
    winner: Side,
    now: float,
    events: list[Event],
    choose: Chooser | None = None,
) -> Transition:
    """The current ``test`` has a ``winner``. If its loser is due the free
    extra test against a Wounded character, it is held at once; if she may
    call a retest (:func:`judge.retest_offers`) the challenge waits at stage
    RETEST (event "retest_open"); else it resolves. A Willpower retest is final. The
    narrator's side of a static challenge retests only as a prepared static
    allows it, played at once (:func:`judge.object_retest`)."""
    test = replace(test, winner=winner)
    state = replace(state, tests=_with_current_test(state, test), pending=None)
    loser = winner.other
    if loser is Side.DEFENDER and test.retest is not RetestKind.WILLPOWER:
        kind = judge.object_retest(state)
        if kind is not None:
            return _object_retest(state, kind, now, events, choose)
    final = test.retest is RetestKind.WILLPOWER or state.combatant(loser) is None
    if not final and judge.free_test_due(state, loser):
        called = (*state.called, (loser, RetestKind.WOUNDED))
        state = replace(state, called=called)
        return _new_test(state, now, events, retest=RetestKind.WOUNDED, by=loser, choose=None)
    if not final:
        waiting = _at_stage(state, Stage.RETEST, now, retest_side=loser)
        if judge.retest_offers(waiting, loser):
            events.append(Event("retest_open", {"side": loser.value}))
            return Transition(waiting, tuple(events))
    resolved, event = _resolve(state, _outcome_for(winner), now)
    return Transition(resolved, (*events, event))


def _object_retest(
    state: ChallengeState,
    kind: RetestKind,
    now: float,
    events: list[Event],
    choose: Chooser | None,
) -> Transition:
    """The narrator's side of a static challenge, having lost a test, calls
    ``kind`` (:func:`judge.object_retest`), played by the server.

    ABILITY or NARRATOR: the object's retest, held at once. OVERBID: the object announces
    its difficulty and risks nothing (it has no Traits to lose); the player's
    answer is her most count with modifiers, the best answer she has (a
    lower one could only grant the overbid), so it is given for her; the
    overbid is called only when it is granted. Events: "retest_called"
    {"side": "defender", "kind", "count"?}, "retest_answered" (overbid), then
    "retest". seeds/000 "Static Challenges"; seeds/004 "Static Challenges".
    """
    assert state.difficulty is not None
    state = replace(state, called=(*state.called, (Side.DEFENDER, kind)))
    data: dict[str, Any] = {"side": Side.DEFENDER.value, "kind": kind.value}
    if kind is RetestKind.OVERBID:
        count = judge.most_declarable(state, Side.CHALLENGER)
        theirs = judge.effective(state, Side.CHALLENGER, count)
        data["count"] = state.difficulty
        events.append(Event("retest_called", data))
        events.append(
            Event(
                "retest_answered",
                {
                    "side": Side.CHALLENGER.value,
                    "kind": kind.value,
                    "count": count,
                    "compared": [state.difficulty, theirs],
                    "granted": True,
                },
            )
        )
        if judge.options_of(state).declared_counts_stand:
            state = replace(state, challenger_standing=count)
    else:
        events.append(Event("retest_called", data))
    return _new_test(state, now, events, retest=kind, by=Side.DEFENDER, choose=choose)


def _compare(
    state: ChallengeState, test: TestRecord, now: float, events: list[Event], choose: Chooser | None
) -> Transition:
    """Settle a tie by declared counts plus each side's modifiers (a static
    challenge's other count is its difficulty): more wins; equal is a draw in
    which both lose their bids (``met_classic``, seeds/000 "Testing") or a
    retest until someone wins (``ukm``, seeds/004 "In The Case Of A Draw").
    Event "compared" with both effective counts."""
    assert test.challenger_declared is not None and test.defender_declared is not None
    mine = judge.effective(state, Side.CHALLENGER, test.challenger_declared)
    if state.kind is Kind.STATIC:
        theirs = test.defender_declared
    else:
        theirs = judge.effective(state, Side.DEFENDER, test.defender_declared)
    events.append(Event("compared", {"challenger": mine, "defender": theirs}))
    state = replace(state, tests=_with_current_test(state, test))
    if mine != theirs:
        winner = Side.CHALLENGER if mine > theirs else Side.DEFENDER
        return _test_won(state, test, winner, now, events, choose)
    if judge.draws_on_equal_counts(state):
        resolved, event = _resolve(state, Outcome.DRAW, now)
        return Transition(resolved, (*events, event))
    return _new_test(state, now, events, retest=RetestKind.EQUAL_COUNTS, by=None, choose=choose)


def _after_tie(
    state: ChallengeState, test: TestRecord, now: float, events: list[Event], choose: Chooser | None
) -> Transition:
    """A tied test of an opposed or static challenge: a Wounded side loses it
    (seeds/000 "Health"); in a ``met_classic`` overbid test the overbidder
    wins it (seeds/000 "Overbidding"); with counts that stand (``ukm``) they
    are compared at once; else the sides declare, challenger first."""
    opts = judge.options_of(state)
    for side in (Side.CHALLENGER, Side.DEFENDER):
        if judge.loses_ties(state, side):
            events.append(Event("tie_lost", {"side": side.value, "reason": "wounded"}))
            return _test_won(state, test, side.other, now, events, choose)
    if (
        test.retest is RetestKind.OVERBID
        and test.by is not None
        and opts.overbid is Overbid.NEW_TRAIT_DOUBLE_COUNT
    ):
        events.append(Event("tie_won", {"side": test.by.value, "reason": "overbid"}))
        return _test_won(state, test, test.by, now, events, choose)
    standing_c = state.challenger_standing
    standing_d = state.difficulty if state.kind is Kind.STATIC else state.defender_standing
    if opts.declared_counts_stand and standing_c is not None and standing_d is not None:
        test = replace(test, challenger_declared=standing_c, defender_declared=standing_d)
        return _compare(state, test, now, events, choose)
    events.append(Event("tied", {"test": len(state.tests)}))
    tests = _with_current_test(state, test)
    return Transition(_at_stage(state, Stage.DECLARE_CHALLENGER, now, tests=tests), tuple(events))


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
    surprise: bool = False,
    weapon: str = "",
    power: str = "",
    now: float,
) -> Transition:
    """The challenger names the defender, the category, her bid (Trait names,
    ``bids_required`` of them: two when Bruised or Wounded under
    ``met_classic``), the stakes, and optionally Surprise (``ukm``), the
    weapon she wields (one of hers) and the power she uses (for a Willpower
    retest's immunity) → stage RESPONSE.

    Events: "opened", "bid". RulesError: unknown ruleset or one with no
    Trait bids (``met_ruleset``); challenging yourself; a challenger who may
    not initiate (Incapacitated); Surprise
    where the ruleset has none; a weapon she does not have; a defender immune
    to her ``power`` (or, with none named, to her challenges of this category)
    after a Willpower retest; a wrong number of bids; a bid Trait she does not
    hold free in ``category``, of another category, or Negative.
    seeds/000 "Initial Bid"; seeds/004 "The Challenge", Surprise, "Weapons".
    """
    rules = met_ruleset(ruleset)
    opts = rules.options
    if challenger.character_id == defender.character_id:
        raise RulesError("You cannot challenge yourself.")
    if not judge.can_enter(challenger, opts, initiate=True):
        if opts.incapacitated is Incapacitated.CANNOT_INITIATE:
            raise RulesError("You are incapacitated and cannot start a challenge.")
        raise RulesError("You are incapacitated and cannot enter challenges.")
    category = Category(category)
    if surprise and not opts.surprise:
        raise RulesError("Surprise is not part of this chronicle's rules.")
    weapon = _text(weapon, "weapon") if weapon else ""
    if weapon and challenger.weapon(weapon) is None:
        raise RulesError(f"You have no weapon '{weapon}'.")
    if weapon:
        weapon = challenger.weapon(weapon).name  # type: ignore[union-attr]
    power = _text(power, "power") if power else ""
    immune = defender.immune_to(challenger.character_id, power or category.label, now)
    if immune is not None:
        minutes = max(1, round((immune.until - now) / 60))
        raise RulesError(
            f"{defender.name} fended off your {immune.power} with Willpower: "
            f"immune to it for another {_plural(minutes, 'minute')}."
        )
    names, ids = _validate_bids(challenger, category, bids, need=bids_required(challenger, rules))
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
        surprise=bool(surprise),
        challenger_weapon=weapon,
        power=power,
    )
    bid_event = Event("bid", {"side": Side.CHALLENGER.value, "traits": list(names)})
    return Transition(state, (_opened(state), bid_event))


def respond(
    state: ChallengeState,
    *,
    bids: Sequence[str] | None,
    now: float,
    stakes: str = "",
    weapon: str = "",
) -> Transition:
    """The defender answers an opposed challenge (stage RESPONSE).

    ``bids`` None or empty: she relents (:func:`relent`). Otherwise she bids
    ``bids_required`` Traits of the challenge's category (Stamina-based ones
    only if surprised in a Physical challenge), with her stated action
    (``stakes``) and the weapon she wields (one of hers) → stage THROWS with a
    fresh test; event "responded". RulesError: not an opposed challenge, not
    stage RESPONSE, resolved, a defender who may not enter challenges
    (Incapacitated under ``met_classic``: she can only relent), a weapon she
    does not have, or an illegal bid (as in ``open_opposed``).
    seeds/000 "Initial Bid"; seeds/004 "The Challenge", Surprise.
    """
    _require_unresolved(state)
    if state.kind is not Kind.OPPOSED or state.stage is not Stage.RESPONSE:
        raise RulesError("It is not time to answer a challenge.")
    assert state.defender is not None and state.category is not None
    if not bids:
        return relent(state, side=Side.DEFENDER, now=now)
    rules = get_ruleset(state.ruleset)
    if not judge.can_enter(state.defender, rules.options, initiate=False):
        raise RulesError("You are incapacitated: you can only relent.")
    weapon = _text(weapon, "weapon") if weapon else ""
    held = state.defender.weapon(weapon) if weapon else None
    if weapon and held is None:
        raise RulesError(f"You have no weapon '{weapon}'.")
    names, ids = _validate_bids(
        state.defender,
        state.category,
        bids,
        need=bids_required(state.defender, rules),
        stamina_only=judge.stamina_only(state, Side.DEFENDER),
    )
    new = _at_stage(
        state,
        Stage.THROWS,
        now,
        defender_bids=names,
        defender_bid_ids=ids,
        defender_stakes=str(stakes),
        defender_weapon="" if held is None else held.name,
        tests=(*state.tests, TestRecord()),
    )
    data: dict[str, Any] = {"side": Side.DEFENDER.value, "traits": list(names)}
    if new.defender_stakes:
        data["stakes"] = new.defender_stakes
    if new.defender_weapon:
        data["weapon"] = new.defender_weapon
    return Transition(new, (Event("responded", data),))


def relent(state: ChallengeState, *, side: Side, now: float) -> Transition:
    """``side`` gives up instead of testing: she loses the challenge, nobody
    loses a Trait, and the other side's stated action happens (in an attack
    a relenting defender takes the wound; a relenting challenger takes none
    automatically). When it is legal: :func:`judge.can_relent`
    (``met_classic``: the defender when answering, either side while she
    owes Traits for a Negative Trait; ``ukm``: either side until the first
    test).
    Events: "relented", "resolved". RulesError if ``side`` may not relent now.
    seeds/000 "Initial Bid"; seeds/004 "The Challenge".
    """
    _require_unresolved(state)
    side = Side(side)
    if not judge.can_relent(state, side):
        raise RulesError("You cannot relent now.")
    if state.kind is Kind.STATIC:
        return bid(state, bids=None, now=now)
    relented = Event("relented", {"side": side.value})
    new, resolved = _resolve(state, _outcome_for(side.other), now, relented=True)
    return Transition(new, (relented, resolved))


def preempt(state: ChallengeState, *, gift: str, now: float) -> Transition:
    """``met_classic``: the defender spends a point of Rage to pre-empt the
    challenge and activate a Gift as a defensive action (seeds/000 "Order of
    Challenges"): the challenge ends void, nobody loses a Trait, and her Gift
    goes first. Events: "preempted" {"gift"}, "resolved". RulesError: the
    ruleset has no Rage pre-emption, not the defender's answer, no Rage left,
    no Gift named."""
    _require_unresolved(state)
    moves = judge.legal_moves(state, Side.DEFENDER)
    if not judge.options_of(state).rage_preempt:
        raise RulesError("Pre-empting with Rage is not part of this chronicle's rules.")
    if state.stage is not Stage.RESPONSE or state.kind is not Kind.OPPOSED:
        raise RulesError("You can pre-empt only when you answer a challenge.")
    if not moves.preempt:
        raise RulesError("You have no Rage left to spend.")
    gift = _text(gift, "Gift")
    if not gift:
        raise RulesError("Name the Gift you activate.")
    assert state.defender is not None
    spent = (*state.spent, (state.defender.character_id, Pool.RAGE, 1))
    new, resolved = _resolve(state, Outcome.VOID, now, spent=spent)
    return Transition(new, (Event("preempted", {"side": "defender", "gift": gift}), resolved))


def call_negative(state: ChallengeState, *, side: Side, name: str, now: float) -> Transition:
    """``side`` names a Negative Trait she believes the other side has, after
    both bids and before either throws (:func:`judge.calls_open`). It is
    correct if the other holds a Negative Trait of that name in the
    challenge's category.

    ``met_classic`` (seeds/000 "Negative Traits"): correct → the other owes one
    more Trait before the test (if she has none to add, the call is
    unmatched: the caller's bid is safe and counts one extra Trait in a tie or
    overbid); wrong → the caller owes one more Trait. ``ukm`` (seeds/004):
    correct → the other is one Trait down in comparisons; wrong → the caller
    is. The caller must be able to pay if wrong
    (:func:`judge.can_pay_wrong_call`). Event "negative_named" {"side", "name",
    "correct", "matched"}. RulesError: not the time; a name already named by
    her; no name; she could not pay if wrong.
    """
    _require_unresolved(state)
    side = Side(side)
    if state.combatant(side) is None:
        raise RulesError("Only a side of the challenge can name a Negative Trait.")
    if not judge.calls_open(state):
        raise RulesError("Negative Traits are named after both bids, before anyone throws.")
    name = _text(name, "Negative Trait")
    if not name:
        raise RulesError("Name a Negative Trait.")
    if any(c.caller is side and _norm(c.name) == _norm(name) for c in state.calls):
        raise RulesError(f"You have already named {name}.")
    if not judge.can_pay_wrong_call(state, side):
        raise RulesError("You could not pay for a wrong call: you have no Trait left to risk.")
    other = state.combatant(side.other)
    assert other is not None and state.category is not None
    correct = any(t.negative for t in other.holdings(name, state.category))
    changes: dict[str, Any] = {}
    matched = True
    if judge.options_of(state).negative_named is NegativeNamed.BID_ONE_MORE:
        if not correct:
            changes = _per_side(side, owed=state.of(side, "owed") + 1)
        elif judge.spare(state, side.other) >= 1:
            changes = _per_side(side.other, owed=state.of(side.other, "owed") + 1)
        else:
            matched = False
    call = NegativeCall(side, name, correct, matched)
    new = replace(state, calls=(*state.calls, call), **changes)
    event = Event(
        "negative_named",
        {"side": side.value, "name": name, "correct": correct, "matched": matched},
    )
    return Transition(new, (event,))


def add_bids(state: ChallengeState, *, side: Side, bids: Sequence[str], now: float) -> Transition:
    """``side`` adds Traits she owes to her bid (``met_classic`` Negative
    Traits, seeds/000): between one and what she owes, each as in a bid.
    Event "bid" {"side", "traits", "added": True}. RulesError: she owes
    nothing; too many; an illegal Trait (as in ``open_opposed``)."""
    _require_unresolved(state)
    side = Side(side)
    owed = state.of(side, "owed") if state.stage is Stage.THROWS else 0
    who = state.combatant(side)
    if not owed or who is None:
        raise RulesError("You owe no more Traits to this bid.")
    if isinstance(bids, str):
        bids = (bids,)
    if not bids or len(bids) > owed:
        raise RulesError(f"Add {_plural(owed, 'Trait')} to your bid.")
    assert state.category is not None
    names, ids = _validate_bids(
        who,
        state.category,
        bids,
        need=None,
        already=state.bid_entries(side),
        stamina_only=judge.stamina_only(state, side),
    )
    new = replace(
        state,
        **_per_side(
            side,
            bids=(*state.of(side, "bids"), *names),
            bid_ids=(*state.bid_entries_ids(side), *ids),
            owed=owed - len(names),
        ),
    )
    event = Event("bid", {"side": side.value, "traits": list(names), "added": True})
    return Transition(new, (event,))


def spend_blood(state: ChallengeState, *, side: Side, amount: int, now: float) -> Transition:
    """``ukm``: ``side`` spends ``amount`` Blood for as many extra Physical
    Traits in this challenge, at any time before the first test is thrown
    open (seeds/004 "Expending Blood"): up to the preset's three or her
    generation's limit, never when surprised. Event "blood_spent" {"side",
    "amount"}. RulesError: not allowed now, not a whole number ≥ 1, more than
    :func:`judge.blood_room`."""
    _require_unresolved(state)
    side = Side(side)
    room = judge.blood_room(state, side)
    if not room:
        raise RulesError("You cannot spend Blood for Traits now.")
    if isinstance(amount, bool) or not isinstance(amount, int) or amount < 1:
        raise RulesError("Spend a whole number of Blood, at least 1.")
    if amount > room:
        raise RulesError(f"You can spend at most {room} Blood now.")
    who = state.combatant(side)
    assert who is not None
    new = replace(
        state,
        spent=(*state.spent, (who.character_id, Pool.BLOOD, amount)),
        **_per_side(side, blood=state.of(side, "blood") + amount),
    )
    return Transition(new, (Event("blood_spent", {"side": side.value, "amount": amount}),))


# --- throws and ties -----------------------------------------------------------


def throw(
    state: ChallengeState,
    *,
    side: Side,
    throw: Throw,
    now: float,
    choose: Chooser | None = None,
) -> Transition:
    """``side`` commits its throw for the current test.

    When both throws are in the test is revealed. A winner wins the test: the
    loser may then retest (stage RETEST) or the challenge resolves. A tie: in
    a simple test it succeeds or fails by the ruleset (``met_classic``: a
    success; ``ukm``: the initiator wins, a difficult test fails); otherwise
    a Wounded side loses it, a ``met_classic`` overbidder wins it, standing
    counts (``ukm``) are compared, or the sides declare (DECLARE_CHALLENGER).
    ``choose`` draws the narrator's throw of a static retest. Events: "threw"
    (side only, never the throw), then "revealed" with both throws, then what
    followed. RulesError: resolved; not stage THROWS; a side still owes
    Traits; the narrator's side in a static challenge or simple test; a
    second throw by the same side; not a throw. seeds/000 "Testing",
    "Simple Tests"; seeds/004 "The Test", "Simple Test", "Difficult Test".
    """
    _require_unresolved(state)
    if state.stage is not Stage.THROWS:
        raise RulesError("It is not time to throw.")
    side = Side(side)
    gesture = _as_throw(throw)
    if state.kind is not Kind.OPPOSED and side is Side.DEFENDER:
        raise RulesError("The narrator's throw is already set.")
    for owing in (Side.CHALLENGER, Side.DEFENDER):
        owed = state.of(owing, "owed")
        if owed:
            who = state.combatant(owing)
            assert who is not None
            raise RulesError(f"{who.name} must first add {_plural(owed, 'Trait')} to the bid.")
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
    test = replace(test, tie=winner is None)
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
    state = replace(state, tests=_with_current_test(state, test))
    if winner is not None:
        return _test_won(state, test, winner, now, events, choose)
    if state.kind is Kind.SIMPLE:
        opts = judge.options_of(state)
        if state.difficult:
            ok = False
        elif opts.simple_test_tie is SimpleTie.SUCCEEDS:
            ok = True
        else:
            ok = not state.narrator_initiated
        test = replace(test, winner=Side.CHALLENGER if ok else Side.DEFENDER)
        outcome = Outcome.CHALLENGER_WINS if ok else Outcome.DEFENDER_WINS
        resolved_state, resolved = _resolve(
            state, outcome, now, tests=_with_current_test(state, test)
        )
        return Transition(resolved_state, (*events, resolved))
    return _after_tie(state, test, now, events, choose)


def declare(
    state: ChallengeState,
    *,
    side: Side,
    count: int | None = None,
    now: float,
    choose: Chooser | None = None,
) -> Transition:
    """After a tie, ``side`` declares its Trait count in the category
    (``count`` None: all she may declare, :func:`judge.declarable`).

    The challenger declares first, then the defender; then the counts plus
    each side's modifiers are compared (:func:`judge.modifiers`): more wins
    the test, equal is a draw (``met_classic``) or a retest (``ukm``). In a
    static challenge the narrator's count is the difficulty, compared as soon
    as the player declares. A side may declare fewer Traits than she has,
    never more; under ``ukm`` a declared count stands for the rest of the
    challenge. Events: "declared" (per side; in static also the narrator's
    difficulty), then what followed. RulesError: resolved; no tie to declare;
    out of turn ("The challenger declares first."); the narrator's side in a
    static challenge; a count that is not a whole number, negative, or above
    her real count ("You cannot declare more Traits than you have (N)."); under
    ``ukm``, a count other than the one she declared before in this challenge
    ("Your declared count stands for this challenge: N.").
    seeds/000 "Testing"; seeds/004 "In The Case Of A Draw".
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
    standing = state.of(side, "standing")
    if standing is not None and judge.options_of(state).declared_counts_stand:
        if count is not None and count != standing:
            raise RulesError(f"Your declared count stands for this challenge: {standing}.")
        count = int(standing)
    else:
        real = judge.declarable(state, side)
        count = _count(real if count is None else count, real)

    test = state.current_test
    assert test is not None
    events: list[Event] = [Event("declared", {"side": side.value, "count": count})]
    if side is Side.CHALLENGER:
        test = replace(test, challenger_declared=count)
    else:
        test = replace(test, defender_declared=count)
    if judge.options_of(state).declared_counts_stand:
        state = replace(state, **_per_side(side, standing=count))

    if state.kind is Kind.STATIC:
        assert state.difficulty is not None
        test = replace(test, defender_declared=state.difficulty)
        events.append(Event("declared", {"side": Side.DEFENDER.value, "count": state.difficulty}))
        return _compare(state, test, now, events, choose)
    if side is Side.CHALLENGER:
        new = _at_stage(state, Stage.DECLARE_DEFENDER, now, tests=_with_current_test(state, test))
        return Transition(new, tuple(events))
    return _compare(state, test, now, events, choose)


# --- retests ---------------------------------------------------------------------


def call_retest(
    state: ChallengeState,
    *,
    side: Side,
    kind: RetestKind,
    now: float,
    traits: Sequence[str] = (),
    count: int | None = None,
    name: str = "",
    choose: Chooser | None = None,
) -> Transition:
    """The loser of the last test (stage RETEST, ``retest_side``) calls a
    retest of ``kind``, one of :func:`judge.retest_offers`.

    - OVERBID, ``met_classic`` (seeds/000 "Overbidding"): she risks one new
      Trait (``traits``, one name) and declares her count (``count``, None =
      all); the bids of the tests she lost are forfeited whatever happens.
      ``ukm`` (seeds/004 "Challenge Re-Tests"): she announces ``count`` (None
      = her most, modifiers included) and risks nothing new. The other side
      answers (:func:`answer_retest`); a static challenge's difficulty
      answers at once.
    - ABILITY (``ukm``): ``name`` is her Ability; the other side answers with
      hers.
    - DISCIPLINE (``ukm``): ``name`` is her Discipline; the other side may
      cancel it with the same one.
    - WILLPOWER (``ukm``): spends one Willpower; the retest is held at once
      and is final.

    (The free extra test against a Wounded character is held without being
    called: :func:`judge.free_test_due`.)

    Events: "retest_called" {"side", "kind", …}, then "retest" when a test is
    held. RulesError: not her retest to call; a kind not open to her now; a
    missing or unknown Trait, Ability or Discipline; a bad count.
    """
    _require_unresolved(state)
    side = Side(side)
    if state.stage is not Stage.RETEST or state.retest_side is not side:
        raise RulesError("It is not your retest to call.")
    try:
        kind = RetestKind(kind)
    except ValueError:
        raise RulesError("There is no such retest.") from None
    if kind not in judge.retest_offers(state, side):
        raise RulesError(f"{kind.label} is not open to you now.")
    who = state.combatant(side)
    assert who is not None and state.category is not None
    opts = judge.options_of(state)
    called = (*state.called, (side, kind))
    data: dict[str, Any] = {"side": side.value, "kind": kind.value}
    changes: dict[str, Any] = {"called": called}
    pending: PendingRetest | None = None
    if kind is RetestKind.OVERBID:
        if opts.overbid is Overbid.NEW_TRAIT_DOUBLE_COUNT:
            if isinstance(traits, str):
                traits = (traits,)
            names, ids = _validate_bids(
                who,
                state.category,
                traits,
                need=1,
                already=state.bid_entries(side),
                stamina_only=judge.stamina_only(state, side),
            )
            most = judge.declarable(state, side)
            declared = _count(most if count is None else count, most)
            bids = state.of(side, "bids")
            changes.update(
                _per_side(
                    side,
                    bids=(*bids, *names),
                    bid_ids=(*state.bid_entries_ids(side), *ids),
                    forfeits=len(bids),
                )
            )
            data.update(traits=list(names), count=declared)
        else:
            standing = state.of(side, "standing")
            base = judge.declarable(state, side) if standing is None else standing
            most = judge.effective(state, side, base)
            declared = _count(most if count is None else count, most)
            data.update(count=declared)
        pending = PendingRetest(kind, side, count=declared)
    elif kind in (RetestKind.ABILITY, RetestKind.DISCIPLINE):
        word = "Ability" if kind is RetestKind.ABILITY else "Discipline"
        text = _text(name, word)
        found = who.ability(text) if kind is RetestKind.ABILITY else who.discipline(text)
        if found is None:
            raise RulesError(f"You have no {word} '{text}'." if text else f"Name your {word}.")
        _require_fit(state, side, kind, found.name)
        pending = PendingRetest(kind, side, name=found.name, rating=found.rating)
        data.update(name=found.name, rating=found.rating)
    elif kind is RetestKind.WILLPOWER:
        changes["spent"] = (*state.spent, (who.character_id, Pool.WILLPOWER, 1))
    events = [Event("retest_called", data)]
    state = replace(state, **changes)
    if pending is None:
        return _new_test(state, now, events, retest=kind, by=side, choose=choose)
    state = _at_stage(state, Stage.RETEST_ANSWER, now, pending=pending, retest_side=None)
    other = side.other
    if state.kind is Kind.STATIC:
        assert state.difficulty is not None
        return _answered(
            state, now, events, count=state.difficulty, rating=0, cancel=False, choose=choose
        )
    standing = state.of(other, "standing")
    if kind is RetestKind.OVERBID and opts.declared_counts_stand and standing is not None:
        return _answered(state, now, events, count=standing, rating=0, cancel=False, choose=choose)
    return Transition(state, tuple(events))


def answer_retest(
    state: ChallengeState,
    *,
    side: Side,
    now: float,
    count: int | None = None,
    name: str = "",
    cancel: bool = False,
    choose: Chooser | None = None,
) -> Transition:
    """The other side answers the retest waiting on her (stage RETEST_ANSWER).

    - OVERBID: she declares her count (``count``, None = all she may; under
      ``ukm`` a count she declared before stands). The retest is held if the
      overbidder's count (with modifiers) is at least double hers (with
      modifiers): seeds/000 "Overbidding"; under ``ukm``, unless hers is more
      than half the announced number, seeds/004. A failed ``met_classic``
      overbid loses the challenge.
    - ABILITY: ``name`` is her Ability (empty: none, rating 0); the retest is
      held only if the caller's rating is higher (seeds/004).
    - DISCIPLINE: ``cancel`` with the same Discipline (she must have it)
      cancels the retest (seeds/004 "Challenge Re-Tests").

    A retest not held is used up; its caller may call another open retest or
    accept (stage RETEST), or the challenge resolves if none is open. Events:
    "retest_answered" {"side", "kind", "granted", …}, then "retest" or what
    followed. RulesError: nothing to answer, or not hers; a bad count; an
    unknown Ability; cancelling without the Discipline.
    """
    _require_unresolved(state)
    side = Side(side)
    pending = state.pending
    if state.stage is not Stage.RETEST_ANSWER or pending is None or pending.side is not side.other:
        raise RulesError("There is no retest for you to answer.")
    rating = 0
    if pending.kind is RetestKind.OVERBID:
        standing = state.of(side, "standing")
        most = judge.declarable(state, side) if standing is None else standing
        count = _count(most if count is None else count, most)
        stands = standing is not None and judge.options_of(state).declared_counts_stand
        if stands and count != standing:
            raise RulesError(f"Your declared count stands for this challenge: {standing}.")
    elif pending.kind is RetestKind.ABILITY:
        text = _text(name, "Ability") if name else ""
        if text:
            who = state.combatant(side)
            found = who.ability(text) if who is not None else None
            if found is None:
                raise RulesError(f"You have no Ability '{text}'.")
            _require_fit(state, side, RetestKind.ABILITY, found.name)
            rating = found.rating
    elif cancel:
        who = state.combatant(side)
        if who is None or who.discipline(pending.name) is None:
            raise RulesError(f"You have no {pending.name} to cancel it with.")
    return _answered(state, now, [], count=count, rating=rating, cancel=bool(cancel), choose=choose)


def _require_fit(state: ChallengeState, side: Side, kind: RetestKind, name: str) -> None:
    """RulesError unless ``name`` applies to the challenge's category
    (:func:`judge.retest_ratings`)."""
    if name not in {r.name for r in judge.retest_ratings(state, side, kind)}:
        assert state.category is not None
        raise RulesError(f"{name} does not apply to a {state.category.label} challenge.")


def _answered(
    state: ChallengeState,
    now: float,
    events: list[Event],
    *,
    count: int | None,
    rating: int,
    cancel: bool,
    choose: Chooser | None,
) -> Transition:
    """Settle the pending retest with the other side's (checked) answer."""
    pending = state.pending
    assert pending is not None
    caller, other = pending.side, pending.side.other
    opts = judge.options_of(state)
    data: dict[str, Any] = {"side": other.value, "kind": pending.kind.value}
    if pending.kind is RetestKind.OVERBID:
        assert count is not None and pending.count is not None
        theirs = count if state.kind is Kind.STATIC else judge.effective(state, other, count)
        if opts.overbid is Overbid.NEW_TRAIT_DOUBLE_COUNT:
            mine = judge.effective(state, caller, pending.count)
        else:
            mine = pending.count
        granted = mine >= 2 * theirs
        data.update(count=count, compared=[mine, theirs])
    elif pending.kind is RetestKind.ABILITY:
        granted = pending.rating > rating
        data.update(rating=rating)
    else:
        granted = not cancel
        data.update(cancelled=cancel)
    data["granted"] = granted
    events.append(Event("retest_answered", data))
    state = replace(state, pending=None)
    if granted:
        return _new_test(state, now, events, retest=pending.kind, by=caller, choose=choose)
    if pending.kind is RetestKind.OVERBID and opts.overbid is Overbid.NEW_TRAIT_DOUBLE_COUNT:
        resolved, event = _resolve(state, _outcome_for(other), now)
        return Transition(resolved, (*events, event))
    waiting = _at_stage(state, Stage.RETEST, now, retest_side=caller)
    if judge.retest_offers(waiting, caller):
        events.append(Event("retest_open", {"side": caller.value}))
        return Transition(waiting, tuple(events))
    resolved, event = _resolve(state, _outcome_for(other), now)
    return Transition(resolved, (*events, event))


def accept(state: ChallengeState, *, side: Side, now: float) -> Transition:
    """The loser of the last test (stage RETEST) takes no retest: the other
    side wins the challenge. Events: "accepted", "resolved". RulesError if it
    is not her decision now."""
    _require_unresolved(state)
    side = Side(side)
    if state.stage is not Stage.RETEST or state.retest_side is not side:
        raise RulesError("There is no result for you to accept.")
    new, resolved = _resolve(state, _outcome_for(side.other), now)
    return Transition(new, (Event("accepted", {"side": side.value}), resolved))


# --- narrator rulings ------------------------------------------------------------


def narrator_retest(
    state: ChallengeState, *, reason: str, now: float, choose: Chooser | None = None
) -> Transition:
    """A narrator forces a retest of an unresolved challenge whose test is
    settled or being settled (stages RETEST, RETEST_ANSWER, DECLARE_*): a new
    test, outside every retest limit. Events: "narrator_retest" {"reason"},
    "retest". RulesError: resolved, or no test to hold again (before the
    first test, or while its throws are awaited). RULES.md "Time out and
    order of play" (disputes)."""
    _require_unresolved(state)
    if state.stage not in (
        Stage.RETEST,
        Stage.RETEST_ANSWER,
        Stage.DECLARE_CHALLENGER,
        Stage.DECLARE_DEFENDER,
    ):
        raise RulesError("There is no test to hold again now.")
    events = [Event("narrator_retest", {"reason": str(reason)})]
    return _new_test(state, now, events, retest=RetestKind.NARRATOR, by=None, choose=choose)


def void(state: ChallengeState, *, reason: str, now: float) -> Transition:
    """A narrator voids an unresolved challenge (a dispute ruled): RESOLVED,
    Outcome.VOID, no Trait lost, no wound. Events: "voided" {"reason"},
    "resolved". RulesError if it is already over. RULES.md "Time out and
    order of play" (disputes)."""
    _require_unresolved(state)
    voided = Event("voided", {"reason": str(reason)})
    new, resolved = _resolve(state, Outcome.VOID, now)
    return Transition(new, (voided, resolved))


def settle(state: ChallengeState, *, winner: Side, reason: str, now: float) -> Transition:
    """A narrator settles an unresolved challenge for ``winner`` (a dispute
    ruled): RESOLVED with ``winner``'s outcome, applied exactly as a test won
    by ``winner`` and accepted would be (:func:`_resolve`): the loser loses
    every Trait she has bid so far (one per bid entry; none if she has not
    bid yet), the winner only the entries she had already forfeited
    (``met_classic`` overbid); a side whose bid is safe loses nothing
    (``ukm`` static: only the aggressor loses a Trait); in an attack the
    loser takes one wound, unless she is a challenger the defender could not
    harm; a retest awaiting an answer is dropped. In a static challenge or
    simple test the defender is the narrator's side. Pools already spent stay
    spent. Events: "settled" {"winner", "reason"}, "resolved". RulesError: it
    is over, or ``reason`` is blank. RULES.md "Disputes"; seeds/000
    "Adjudication"."""
    _require_unresolved(state)
    winner = Side(winner)
    text = str(reason).strip()
    if not text:
        raise RulesError("Give a reason for the ruling.")
    settled = Event("settled", {"winner": winner.value, "reason": text})
    new, resolved = _resolve(state, _outcome_for(winner), now)
    return Transition(new, (settled, resolved))


# --- static challenges -----------------------------------------------------------


def open_static(
    *,
    ruleset: str,
    challenger: Combatant,
    category: Category,
    difficulty: int,
    narrator_throw: Throw | None,
    choose: Chooser | None,
    stakes: str = "",
    object_overbids: bool = False,
    object_retests: bool = False,
    now: float,
) -> Transition:
    """A narrator sets a static challenge: ``difficulty`` (a Trait count ≥ 1)
    in ``category`` → stage BID, waiting on the player's bid.
    ``object_overbids`` / ``object_retests``: the narrator's side may overbid
    / retest, played by the server (:func:`judge.object_retest`).

    The narrator's throw (``narrator_throw``, or ``choose(list(Throw))`` if
    None) is stored at once in ``tests[0].defender_throw``; the test is not
    revealed until the player throws. Event: "opened" (without the throw or
    the difficulty). RulesError: unknown ruleset or one with no Trait bids,
    difficulty below 1 or not a whole number, a player who may not initiate
    (Incapacitated), a bad throw.
    seeds/000 "Static Challenges".
    """
    rules = met_ruleset(ruleset)
    if isinstance(difficulty, bool) or not isinstance(difficulty, int) or difficulty < 1:
        raise RulesError("The difficulty must be at least 1 Trait.")
    if not judge.can_enter(challenger, rules.options, initiate=True):
        raise RulesError("You are incapacitated and cannot enter challenges.")
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
        object_overbids=bool(object_overbids),
        object_retests=bool(object_retests),
    )
    return Transition(state, (_opened(state),))


def bid(state: ChallengeState, *, bids: Sequence[str] | None, now: float) -> Transition:
    """The player of a static challenge bids (→ stage THROWS; event "bid") or,
    with ``bids`` None or empty, relents (→ RESOLVED, DEFENDER_WINS, nothing
    lost; events "relented", "resolved"). RulesError: not a static challenge
    at stage BID, resolved, a player who may not initiate, or an illegal bid
    (as in ``open_opposed``). seeds/000 "Static Challenges".
    """
    _require_unresolved(state)
    if state.kind is not Kind.STATIC or state.stage is not Stage.BID:
        raise RulesError("It is not time to bid.")
    assert state.category is not None
    if not bids:
        relented = Event("relented", {"side": Side.CHALLENGER.value})
        new, resolved = _resolve(state, Outcome.DEFENDER_WINS, now, relented=True)
        return Transition(new, (relented, resolved))
    rules = get_ruleset(state.ruleset)
    if not judge.can_enter(state.challenger, rules.options, initiate=True):
        raise RulesError("You are incapacitated and cannot enter challenges.")
    names, ids = _validate_bids(
        state.challenger, state.category, bids, need=bids_required(state.challenger, rules)
    )
    new = _at_stage(state, Stage.THROWS, now, challenger_bids=names, challenger_bid_ids=ids)
    return Transition(new, (Event("bid", {"side": Side.CHALLENGER.value, "traits": list(names)}),))


# --- simple tests ----------------------------------------------------------------


def open_simple(
    *,
    ruleset: str,
    challenger: Combatant,
    narrator_throw: Throw | None,
    choose: Chooser | None,
    stakes: str = "",
    narrator_initiated: bool = False,
    difficult: bool = False,
    category: Category | None = None,
    bids: Sequence[str] = (),
    now: float,
) -> Transition:
    """A narrator calls a simple test → stage THROWS, nothing bid, no
    category; or, with ``bids`` (Trait names of ``category``, checked as a
    bid is), a simple test with those Traits at stake: she loses them if she
    fails (RULES.md "Simple test": "nothing bid unless stated"; event
    "bid"). The narrator's throw is set at once as in ``open_static``. The
    player succeeds (CHALLENGER_WINS) on a win; a tie succeeds under
    ``met_classic`` (seeds/000 "Simple Tests"), and under ``ukm`` goes to the
    initiator (the player unless ``narrator_initiated``), except in a
    ``difficult`` test, which needs an outright win (seeds/004 "Simple Test",
    "Difficult Test"). Nobody is wounded; only Traits bid are lost, on a
    failure. Events: "opened" (and "bid"). RulesError: unknown ruleset or
    one with no Trait bids, a bad throw, a difficult test where the ruleset
    has none. A character of any health may be asked.
    """
    rules = met_ruleset(ruleset)
    if difficult and not rules.options.difficult_tests:
        raise RulesError("Difficult tests are not part of this chronicle's rules.")
    names: tuple[str, ...] = ()
    ids: tuple[int | None, ...] = ()
    if bids:
        if category is None:
            raise RulesError("Name the category of the Trait at stake.")
        category = Category(category)
        names, ids = _validate_bids(challenger, category, bids, need=None)
    first = TestRecord(defender_throw=_narrator_throw(narrator_throw, choose))
    state = ChallengeState(
        kind=Kind.SIMPLE,
        ruleset=rules.name,
        category=category if names else None,
        challenger=challenger,
        defender=None,
        difficulty=None,
        challenger_bids=names,
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
        narrator_initiated=bool(narrator_initiated),
        difficult=bool(difficult),
        challenger_bid_ids=ids,
    )
    events = [_opened(state)]
    if names:
        events.append(Event("bid", {"side": Side.CHALLENGER.value, "traits": list(names)}))
    return Transition(state, tuple(events))
