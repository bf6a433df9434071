"""The ``bns`` opposed challenge's moves: pure functions from a
:class:`BnsChallengeState` (and the move) to a :class:`~challenges.rules.core.Transition`-like
:class:`BnsTransition` (new state + events), or RulesError for an illegal
move, raised before anything is built, so a refused move changes nothing.

Order of play: :func:`open_challenge` (the attacker: attack, maneuvers) →
:func:`answer` (the defender's defence; both pools are then known) →
:func:`throw` by each side (hidden until both are in) → on a lost first test
the loser may :func:`retest` with 1 Willpower or :func:`accept` → resolved.
A narrator may :func:`void` or :func:`settle` it at any stage before that.
:func:`legal_moves` lists what a side may do now. ``now`` is epoch seconds.
Source: seeds/002 (By Night Studios MET combat summary).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from challenges.rules.bns.maneuvers import (
    MANEUVERS,
    Assist,
    Effect,
    Maneuver,
    ManeuverUse,
    Payment,
    check_maneuvers,
    parse_maneuver,
)
from challenges.rules.bns.options import BNS, BnsOptions, ExceptionalOrder
from challenges.rules.bns.sheet import (
    DEFENCE_OF,
    AttackKind,
    Defence,
    Fighter,
    lacking_skill,
    test_pool,
)
from challenges.rules.bns.state import (
    BnsChallengeState,
    BnsStage,
    BnsTest,
    Inflicted,
    Result,
)
from challenges.rules.core import (
    Event,
    RulesError,
    Side,
    Throw,
    beats,
    immunity_to,
    more_minutes,
)

DAMAGE: Mapping[AttackKind, int] = {
    AttackKind.BRAWL: 1,
    AttackKind.MELEE: 1,
    AttackKind.THROWN: 1,
    AttackKind.FIREARMS: 2,
}
"""Default damage of a Physical attack, in points: "a thrown, brawl, or melee
attack inflicts 1 point of damage. Default firearms attacks inflict 2"
(seeds/002, under "Common Test Pools")."""

ESCAPE_ATTACKS: tuple[AttackKind, ...] = (AttackKind.BRAWL, AttackKind.MELEE)
"""The attacks a grappled character escapes with: "She can escape from your
Grapple by using a simple action and besting you in an opposed challenge
(Brawl or Melee)" (seeds/002 "Combat Maneuvers", Grapple); her pool is
Physical + that Skill (:func:`~challenges.rules.bns.sheet.test_pool`)."""

MAX_TEXT = 100
"""Longest power name or reason a move takes, in characters."""


class BnsTransition(NamedTuple):
    """What a move produces: the new state and the events it emitted, in order.
    Events are core's :class:`~challenges.rules.core.Event` with JSON-primitive
    data; "threw" never carries the throw (throws are public in "revealed")."""

    state: BnsChallengeState
    events: tuple[Event, ...]


# --- reads --------------------------------------------------------------------


def pool_modifiers(state: BnsChallengeState, side: Side) -> tuple[tuple[str, int], ...]:
    """Every (reason, amount) added to ``side``'s pool: the app's modifiers
    given when the challenge opened, and for the attacker each maneuver's
    (Disarm −2, Knock Out −2, Pierce the Heart −3) and a Stock NPC's Assist
    Attacker (+1); for the defender a Stock NPC's Assist Defender (+1, only
    to a Dodge-based defence). seeds/002 "Combat Maneuvers", "Stock NPC Tactics"."""
    if Side(side) is Side.CHALLENGER:
        mods = list(state.attacker_modifiers)
        for use in state.maneuvers:
            amount = MANEUVERS[use.maneuver].pool_modifier
            if amount:
                mods.append((use.maneuver.label, amount))
        if state.assist is Assist.STOCK_NPC:
            mods.append(("Stock NPC's assist", 1))
        return tuple(mods)
    mods = list(state.defender_modifiers)
    if state.defence_assist and state.defence is Defence.DODGE:
        mods.append(("Stock NPC's assist", 1))
    return tuple(mods)


def attack_pool(state: BnsChallengeState) -> int:
    """The attacker's test pool, ≥ 0 (seeds/002 "Common Test Pools")."""
    return test_pool(
        state.attacker,
        attack=state.attack,
        thrown_skill=state.options.thrown_skill,
        power_skill=state.power_skill,
        modifiers=pool_modifiers(state, Side.CHALLENGER),
    )


def defence_pool(state: BnsChallengeState, defence: Defence) -> int:
    """The defender's test pool with ``defence``, ≥ 0, her Willpower as it
    stands before the first test (seeds/002 "Common Test Pools")."""
    chosen = replace(state, defence=Defence(defence))
    return test_pool(
        state.defender, defence=defence, modifiers=pool_modifiers(chosen, Side.DEFENDER)
    )


def test_winner(test: BnsTest, attacker_pool: int, defender_pool: int) -> tuple[Side, bool]:
    """(winner, tie) of a test both sides threw: the winning hand wins; on a
    tie the attacker wins only if her pool is greater than the defender's.
    seeds/002 "Winning a Test", "Tying the Test", "Losing the Test"."""
    a, d = test.attacker_throw, test.defender_throw
    if a is None or d is None:
        raise RulesError("Both sides must throw first.")
    if beats(a, d):
        return Side.CHALLENGER, False
    if beats(d, a):
        return Side.DEFENDER, False
    return (Side.CHALLENGER if attacker_pool > defender_pool else Side.DEFENDER), True


test_winner.__test__ = False  # type: ignore[attr-defined]  # not a pytest test


def is_exceptional(tests: Sequence[BnsTest], attacker_pool: int, defender_pool: int) -> bool:
    """The attacker won every test of the challenge outright (no ties) and her
    pool is higher than the defender's; a defender never scores one.
    seeds/002 "Exceptional Success"."""
    return bool(tests) and all(t.outright for t in tests) and attacker_pool > defender_pool


def damage_of(
    attack: AttackKind,
    *,
    exceptional: bool,
    maneuvers: Sequence[ManeuverUse] = (),
    options: BnsOptions = BNS,
) -> int:
    """Points of damage a successful attack inflicts, ≥ 0: brawl, melee and
    thrown 1, firearms 2 (a power ``options.power_damage``); an exceptional
    success +1 on a Physical attack (a power's bonus is the power's); less the
    maneuvers' reductions (Blinding Attack 3, Grapple 3, Knock Down 1), in the
    order ``options.exceptional_order`` says. seeds/002 "Common Test Pools"
    (damage), "Exceptional Success", "Combat Maneuvers"."""
    attack = AttackKind(attack)
    base = DAMAGE.get(attack, options.power_damage)
    extra = 1 if exceptional and attack.physical else 0
    cut = sum(MANEUVERS[u.maneuver].damage_reduction for u in maneuvers)
    if options.exceptional_order is ExceptionalOrder.AFTER_REDUCTION:
        return max(0, base - cut) + extra
    return max(0, base + extra - cut)


def effects_of(state: BnsChallengeState, now: float) -> tuple[Inflicted, ...]:
    """What a successful attack's maneuvers do to the defender (seeds/002
    "Combat Maneuvers"). Pierce the Heart stakes a Stock NPC "regardless of
    how much damage they currently have", kills a mortal instantly, stakes
    a vampire hit with a staking weapon; anyone else (a Garou, a vampire
    without a staking weapon) takes the damage only."""
    out: list[Inflicted] = []
    for use in state.maneuvers:
        rule = MANEUVERS[use.maneuver]
        effect = rule.effect
        if use.maneuver is Maneuver.PIERCE_THE_HEART:
            if state.defender.stock_npc:
                effect = Effect.STAKED
            elif state.defender.mortal:
                effect = Effect.KILLED
            else:
                effect = Effect.STAKED if state.staking and state.defender.vampire else None
        if effect is not None:
            out.append(Inflicted(effect, rule.effect_seconds, now))
    return tuple(out)


@dataclass(frozen=True)
class BnsMoves:
    """Every move a side may make now (:func:`legal_moves`); phones offer
    exactly these. ``answer``: choose a defence among ``defences`` (one: a
    single tap); ``throw``; ``retest``: spend 1 Willpower to retest;
    ``accept``: accept losing the test."""

    answer: bool = False
    defences: tuple[Defence, ...] = ()
    throw: bool = False
    retest: bool = False
    accept: bool = False

    @property
    def any(self) -> bool:
        """She has something to do now."""
        return self.answer or self.throw or self.retest or self.accept


def legal_moves(state: BnsChallengeState, side: Side) -> BnsMoves:
    """The moves ``side`` (CHALLENGER: the attacker, DEFENDER: the defender)
    may make in ``state`` now; none once resolved. Every move listed is
    accepted; any other raises RulesError. A narrator's :func:`void` and
    :func:`settle` are legal at every stage but RESOLVED."""
    side = _side(side)
    stage = state.stage
    if stage is BnsStage.ANSWER and side is Side.DEFENDER:
        return BnsMoves(answer=True, defences=state.defences)
    if stage is BnsStage.THROWS:
        test = state.current_test
        return BnsMoves(throw=test is not None and test.throw_of(side) is None)
    if stage is BnsStage.RETEST and state.retest_side is side:
        return BnsMoves(retest=state.willpower_left(side) >= 1, accept=True)
    return BnsMoves()


def maneuver_offers(
    *,
    attacker: Fighter,
    defender: Fighter,
    attack: AttackKind | str,
    assist: Assist | None = None,
    surprise: bool = False,
    first_round: bool = False,
) -> tuple[ManeuverUse, ...]:
    """Each (maneuver, payment) the attacker could apply alone to this attack
    (the attack form's buttons); combining them follows :func:`open_challenge`'s
    limits (one per payment, two at most). seeds/002 "Combat Maneuvers"."""
    out: list[ManeuverUse] = []
    for maneuver in Maneuver:
        for paid in Payment:
            use = ManeuverUse(maneuver, paid)
            try:
                check_maneuvers(
                    (use,),
                    attacker=attacker,
                    defender=defender,
                    attack=_attack(attack),
                    assist=assist,
                    surprise=surprise,
                    first_round=first_round,
                )
            except RulesError:
                continue
            out.append(use)
    return tuple(out)


# --- checks -------------------------------------------------------------------


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise RulesError(f"Give {what} in words.")
    return " ".join(value.split())[:MAX_TEXT]


def _attack(value: Any) -> AttackKind:
    try:
        return AttackKind(value)
    except ValueError:
        kinds = ", ".join(k.value for k in AttackKind)
        raise RulesError(f"An attack is one of: {kinds}.") from None


def _defence(value: Any) -> Defence:
    try:
        return Defence(value)
    except ValueError:
        raise RulesError("A defence is dodge, social or mental.") from None


def _modifiers(raw: Any) -> tuple[tuple[str, int], ...]:
    out: list[tuple[str, int]] = []
    for item in raw:
        if (
            not isinstance(item, (tuple, list))
            or len(item) != 2
            or not isinstance(item[0], str)
            or isinstance(item[1], bool)
            or not isinstance(item[1], int)
        ):
            raise RulesError("A pool modifier is a reason and a whole number.")
        out.append((_text(item[0], "a modifier's reason"), item[1]))
    return tuple(out)


def _uses(raw: Any) -> tuple[ManeuverUse, ...]:
    out: list[ManeuverUse] = []
    for item in raw:
        if isinstance(item, ManeuverUse):
            out.append(item)
        elif isinstance(item, (tuple, list)) and len(item) == 2:
            try:
                paid = Payment(item[1])
            except ValueError:
                raise RulesError("A maneuver is paid with willpower, focus or assist.") from None
            out.append(ManeuverUse(parse_maneuver(item[0]), paid))
        else:
            out.append(ManeuverUse(parse_maneuver(item), Payment.WILLPOWER))
    return tuple(out)


def _side(value: Any) -> Side:
    try:
        return Side(value)
    except ValueError:
        raise RulesError("A side is the challenger (attacker) or the defender.") from None


def _unresolved(state: BnsChallengeState) -> None:
    if state.stage is BnsStage.RESOLVED:
        raise RulesError("This challenge is over.")


def _at(state: BnsChallengeState, stage: BnsStage, now: float, **changes: Any) -> BnsChallengeState:
    since = now if stage is not state.stage else state.stage_since
    return replace(state, stage=stage, stage_since=since, **changes)


# --- moves --------------------------------------------------------------------


def open_challenge(
    *,
    attacker: Fighter,
    defender: Fighter,
    attack: AttackKind | str,
    now: float,
    power: str = "",
    power_skill: str = "",
    maneuvers: Sequence[ManeuverUse | tuple[str, str] | str] = (),
    surprise: bool = False,
    first_round: bool = False,
    assist: Assist | str | None = None,
    defence_assist: bool = False,
    staking: bool = False,
    attacker_blind: bool = False,
    escape: bool = False,
    defences: Sequence[Defence | str] | None = None,
    attacker_modifiers: Sequence[tuple[str, int]] = (),
    defender_modifiers: Sequence[tuple[str, int]] = (),
    options: BnsOptions = BNS,
) -> BnsTransition:
    """The attacker opens an opposed challenge: stage ANSWER (the defender
    chooses her defence next).

    ``attack``: an :class:`AttackKind`; a Mental or Social attack names its
    ``power`` (required) and the skill its pool adds (``power_skill``).
    ``maneuvers``: :class:`ManeuverUse` or (maneuver, payment) pairs or bare
    maneuver names (paid with Willpower), checked by
    :func:`~challenges.rules.bns.maneuvers.check_maneuvers`; a Willpower
    maneuver costs her 1 Willpower at once, a focus maneuver spends her free
    one for the combat. ``assist``: an ally's Assist Attacker, and
    ``defence_assist``: a Stock NPC's Assist Defender (Physical attacks only:
    "You cannot use these tactics to enhance or defend against Mental or
    Social attacks"). ``defences``: those the defender may choose (default:
    the one the seed pairs with the attack). ``attacker_blind``: she cannot
    see the defender: without Fighting Blind the attack misses at once
    (stage RESOLVED, Result.FAILURE, Willpower spent stays spent).
    ``escape``: the grappled attacker tries to escape the defender's Grapple
    ("besting you in an opposed challenge (Brawl or Melee)"): brawl or melee,
    no maneuver (:data:`ESCAPE_ATTACKS`); a success frees her and deals no
    damage. Events: "opened" {attack, attacker, defender, power, maneuvers,
    willpower_spent, escape}, then "missed" and "resolved" for such a miss.
    RulesError: a fighter against herself, an unknown attack, a power missing
    or given to a Physical attack, a tactic on a Mental or Social attack, a
    defender immune to the attacker's power at ``now`` (her ``immunities``:
    "Grady is immune to Helen's Dominate for 9 more minutes."), bad
    modifiers, an illegal maneuver, a pool adding a Skill the attacker does
    not have (a melee, thrown or firearms attack without it, a power naming
    it; :func:`~challenges.rules.bns.sheet.lacking_skill`, unless
    ``options.unskilled_attacks``). seeds/002 "Tests and Challenges",
    "Combat Maneuvers" (Grapple: escaping), "Physical Focuses in Combat",
    "Mass Combat".
    """
    if not isinstance(attacker, Fighter) or not isinstance(defender, Fighter):
        raise RulesError("A challenge needs an attacker and a defender.")
    if attacker is defender or (
        attacker.character_id is not None and attacker.character_id == defender.character_id
    ):
        raise RulesError("A character cannot challenge herself.")
    kind = _attack(attack)
    power = _text(power, "the power")
    power_skill = _text(power_skill, "the power's skill")
    if kind.physical and power:
        raise RulesError("A Physical attack names no power.")
    if not kind.physical and not power:
        raise RulesError(f"Name the {kind.category.label} power you use.")
    helper = None if assist is None else _as_assist(assist)
    if not kind.physical and (helper is not None or defence_assist):
        raise RulesError("Mass combat tactics go only with Physical attacks.")
    if not kind.physical:
        _not_immune(attacker, defender, power, now)
    allowed = (
        (DEFENCE_OF[kind.category],)
        if defences is None
        else tuple(dict.fromkeys(_defence(d) for d in defences))
    )
    if not allowed:
        raise RulesError("The defender needs at least one defence.")
    uses = _uses(maneuvers)
    if escape and (kind not in ESCAPE_ATTACKS or uses):
        raise RulesError("A grapple is escaped with Brawl or Melee, without maneuvers.")
    check_maneuvers(
        uses,
        attacker=attacker,
        defender=defender,
        attack=kind,
        assist=helper,
        surprise=bool(surprise),
        first_round=bool(first_round),
    )
    if not isinstance(options, BnsOptions):
        raise RulesError("Unknown rule options.")
    _has_skill(attacker, kind, power_skill, options)
    state = BnsChallengeState(
        attacker=attacker,
        defender=defender,
        attack=kind,
        stage=BnsStage.ANSWER,
        stage_since=now,
        power=power,
        power_skill=power_skill,
        maneuvers=uses,
        surprise=bool(surprise),
        first_round=bool(first_round),
        assist=helper,
        defence_assist=bool(defence_assist),
        staking=bool(staking),
        attacker_blind=bool(attacker_blind),
        escape=bool(escape),
        defences=allowed,
        attacker_modifiers=_modifiers(attacker_modifiers),
        defender_modifiers=_modifiers(defender_modifiers),
        options=options,
        attacker_willpower_spent=sum(1 for u in uses if u.paid is Payment.WILLPOWER),
        focus_used=any(u.paid is Payment.FOCUS for u in uses),
    )
    opened = Event(
        "opened",
        {
            "attack": kind.value,
            "attacker": attacker.character_id,
            "defender": defender.character_id,
            "power": power,
            "maneuvers": [[u.maneuver.value, u.paid.value] for u in uses],
            "willpower_spent": state.attacker_willpower_spent,
            "escape": state.escape,
        },
    )
    if state.attacker_blind and Maneuver.FIGHTING_BLIND not in {u.maneuver for u in uses}:
        new, resolved = _resolve(state, Side.DEFENDER, now)
        return BnsTransition(new, (opened, Event("missed", {"reason": "fighting blind"}), resolved))
    return BnsTransition(state, (opened,))


def _has_skill(attacker: Fighter, kind: AttackKind, power_skill: str, options: BnsOptions) -> None:
    """RulesError when her pool would add a Skill she does not have
    (:func:`~challenges.rules.bns.sheet.lacking_skill`)."""
    lacking = lacking_skill(attacker, kind, power_skill=power_skill, options=options)
    if not lacking:
        return
    if kind.physical:
        why = f"she cannot make a {kind.label} attack."
    else:
        why = "leave the power's Skill blank or name one she has."
    raise RulesError(f"{attacker.name} has no {lacking}: {why}")


def _not_immune(attacker: Fighter, defender: Fighter, power: str, now: float) -> None:
    """RulesError while ``defender`` is immune to ``attacker``'s ``power``
    (core's :func:`~challenges.rules.core.immunity_to`, the check every
    ruleset shares). seeds/002 "Retrying Failed Attacks"."""
    immunity = immunity_to(defender.immunities, attacker.character_id, power, now)
    if immunity is not None:
        raise RulesError(
            f"{defender.name} is immune to {attacker.name}'s {immunity.power} for"
            f" {more_minutes(immunity.until - now)}."
        )


def _as_assist(value: Any) -> Assist:
    try:
        return Assist(value)
    except ValueError:
        raise RulesError("An assist is a player's or a Stock NPC's.") from None


def answer(
    state: BnsChallengeState, *, defence: Defence | str | None = None, now: float
) -> BnsTransition:
    """The defender answers with ``defence`` (None: the only one allowed):
    both pools are computed and fixed for the challenge, and the first test
    begins (stage THROWS). Event "pools" {"defence", "attacker_pool",
    "defender_pool"}. RulesError: not at ANSWER, no choice made among
    several defences, a defence not allowed. seeds/002 "Common Test Pools"."""
    if state.stage is not BnsStage.ANSWER:
        _unresolved(state)
        raise RulesError("The defender has already answered.")
    if defence is None:
        if len(state.defences) > 1:
            labels = " or ".join(d.label for d in state.defences)
            raise RulesError(f"Choose your defence: {labels}.")
        chosen = state.defences[0]
    else:
        chosen = _defence(defence)
        if chosen not in state.defences:
            raise RulesError(f"You cannot defend with {chosen.label} against this attack.")
    a_pool = attack_pool(state)
    d_pool = defence_pool(state, chosen)
    new = _at(
        state,
        BnsStage.THROWS,
        now,
        defence=chosen,
        attacker_pool=a_pool,
        defender_pool=d_pool,
        tests=(BnsTest(),),
    )
    data = {"defence": chosen.value, "attacker_pool": a_pool, "defender_pool": d_pool}
    return BnsTransition(new, (Event("pools", data),))


def throw(
    state: BnsChallengeState, *, side: Side | str, throw: Throw | str, now: float
) -> BnsTransition:
    """``side`` throws in the current test (stage THROWS), hidden until both
    are in. Then the test's winner (:func:`test_winner`); the loser of the
    first test with Willpower left may retest (stage RETEST), else the
    challenge is resolved: won by the winner of the final test. Events:
    "threw" {"side", "test"}; once both are in "revealed" {"test",
    "attacker_throw", "defender_throw", "winner", "tie", "attacker_pool",
    "defender_pool"}, then "resolved" or nothing more.
    RulesError: not at THROWS, a bad throw, a second throw by the same side.
    seeds/002 "Tests and Challenges", "Winning a Challenge"."""
    side = _side(side)
    if state.stage is not BnsStage.THROWS:
        raise RulesError("There is no test to throw in now.")
    try:
        gesture = Throw(throw)
    except ValueError:
        raise RulesError("Throw rock, paper or scissors.") from None
    test = state.current_test
    assert test is not None
    if test.throw_of(side) is not None:
        raise RulesError("You have already thrown in this test.")
    if side is Side.CHALLENGER:
        test = replace(test, attacker_throw=gesture)
    else:
        test = replace(test, defender_throw=gesture)
    events = [Event("threw", {"side": side.value, "test": len(state.tests)})]
    a_throw, d_throw = test.attacker_throw, test.defender_throw
    if a_throw is None or d_throw is None:
        tests = (*state.tests[:-1], test)
        return BnsTransition(replace(state, tests=tests), tuple(events))
    a_pool, d_pool = state.attacker_pool or 0, state.defender_pool or 0
    winner, tie = test_winner(test, a_pool, d_pool)
    test = replace(test, winner=winner, tie=tie)
    state = replace(state, tests=(*state.tests[:-1], test))
    events.append(
        Event(
            "revealed",
            {
                "test": len(state.tests),
                "attacker_throw": a_throw.value,
                "defender_throw": d_throw.value,
                "winner": winner.value,
                "tie": tie,
                "attacker_pool": a_pool,
                "defender_pool": d_pool,
            },
        )
    )
    loser = winner.other
    if len(state.tests) == 1 and state.willpower_left(loser) >= 1:
        new = _at(state, BnsStage.RETEST, now, retest_side=loser)
        return BnsTransition(new, tuple(events))
    new, resolved = _resolve(state, winner, now)
    return BnsTransition(new, (*events, resolved))


def retest(state: BnsChallengeState, *, side: Side | str, now: float) -> BnsTransition:
    """The side that lost the first test spends 1 Willpower to retest (stage
    RETEST → THROWS): a second test, whose result is final. Event "retest"
    {"by"}. RulesError: not her retest to call (she did not lose, a retest was
    already held), no Willpower left. seeds/002 "Exceptional Success" (the
    retest paragraph: "If you lose an opposed test (and only if you lose)...")."""
    side = _side(side)
    if state.stage is not BnsStage.RETEST or state.retest_side is not side:
        raise RulesError("Only the side that lost the first test may retest, once.")
    if state.willpower_left(side) < 1:
        raise RulesError("You have no Willpower left to retest.")
    who = "attacker" if side is Side.CHALLENGER else "defender"
    spent = {f"{who}_willpower_spent": state.willpower_spent(side) + 1}
    new = _at(
        state,
        BnsStage.THROWS,
        now,
        tests=(*state.tests, BnsTest(retest_by=side)),
        retest_side=None,
        **spent,
    )
    return BnsTransition(new, (Event("retest", {"by": side.value, "willpower": 1}),))


def accept(state: BnsChallengeState, *, side: Side | str, now: float) -> BnsTransition:
    """The loser of the first test takes no retest: the challenge resolves as
    the test went. Event "resolved". RulesError: not her choice now."""
    side = _side(side)
    if state.stage is not BnsStage.RETEST or state.retest_side is not side:
        raise RulesError("There is no lost test for you to accept now.")
    new, resolved = _resolve(state, side.other, now)
    return BnsTransition(new, (resolved,))


def void(state: BnsChallengeState, *, reason: str, now: float) -> BnsTransition:
    """A narrator voids an unresolved challenge: RESOLVED, Result.VOID, no
    damage, no effect; Willpower spent stays spent. Events "voided"
    {"reason"}, "resolved". RulesError: already over, or no reason given.
    RULES.md "Time out and order of play" (disputes)."""
    _unresolved(state)
    why = _text(reason, "a reason")
    if not why:
        raise RulesError("Give a reason for voiding the challenge.")
    new = _at(state, BnsStage.RESOLVED, now, result=Result.VOID, retest_side=None, reason=why)
    return BnsTransition(new, (Event("voided", {"reason": why}), _resolved_event(new)))


def settle(
    state: BnsChallengeState, *, winner: Side | str, reason: str, now: float
) -> BnsTransition:
    """A narrator settles an unresolved challenge for ``winner``: the attacker
    (CHALLENGER) succeeds (never exceptionally; damage and effects as for a
    success) or fails. A retest on offer is dropped; Willpower spent stays
    spent. Events "settled" {"winner", "reason"}, "resolved". RulesError:
    already over, or no reason. RULES.md "Disputes"."""
    _unresolved(state)
    side = _side(winner)
    why = _text(reason, "a reason")
    if not why:
        raise RulesError("Give a reason for settling the challenge.")
    new, resolved = _resolve(replace(state, reason=why), side, now, settled=True)
    return BnsTransition(new, (Event("settled", {"winner": side.value, "reason": why}), resolved))


def _resolve(
    state: BnsChallengeState, winner: Side, now: float, *, settled: bool = False
) -> tuple[BnsChallengeState, Event]:
    """Resolve for ``winner`` of the final test: the result, damage (none for
    a grapple escape), effects, and a failed Mental/Social attack's immunity. seeds/002 "Winning a
    Challenge", "Exceptional Success", "Retrying Failed Attacks"."""
    a_pool, d_pool = state.attacker_pool or 0, state.defender_pool or 0
    result = Result.FAILURE
    damage = 0
    effects: tuple[Inflicted, ...] = ()
    immune = None
    if winner is Side.CHALLENGER:
        exceptional = not settled and is_exceptional(state.tests, a_pool, d_pool)
        result = Result.EXCEPTIONAL if exceptional else Result.SUCCESS
        damage = (
            0
            if state.escape
            else damage_of(
                state.attack,
                exceptional=exceptional,
                maneuvers=state.maneuvers,
                options=state.options,
            )
        )
        effects = effects_of(state, now)
    elif not state.attack.physical:
        immune = now + state.options.immunity_seconds
    new = _at(
        state,
        BnsStage.RESOLVED,
        now,
        result=result,
        damage=damage,
        effects=effects,
        immune_until=immune,
        retest_side=None,
    )
    return new, _resolved_event(new)


def _resolved_event(state: BnsChallengeState) -> Event:
    assert state.result is not None
    return Event(
        "resolved",
        {
            "result": state.result.value,
            "damage": state.damage,
            "effects": [[i.effect.value, i.until] for i in state.effects],
            "willpower_spent": {
                "challenger": state.attacker_willpower_spent,
                "defender": state.defender_willpower_spent,
            },
            "immune_until": state.immune_until,
            "power": state.power,
            "immune_seconds": state.options.immunity_seconds if state.immune_until else None,
        },
    )
