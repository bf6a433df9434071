"""What a challenge's state means under its ruleset's options, without moving
it: how many Traits a side may declare, the modifiers of her count in a
comparison, which retests she may call, and every move legal for her now
(:func:`legal_moves`, which the phones show and the property tests walk).

Pure reads: nothing here builds a new state. Sources: seeds/000 (MET
``met_classic``) and seeds/004 (``ukm``); the options are
``challenges/rules/options.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

from challenges.rules.core import (
    Category,
    ChallengeState,
    Combatant,
    HealthLevel,
    Kind,
    Pool,
    Rating,
    RetestKind,
    Side,
    Stage,
)
from challenges.rules.options import (
    EqualCounts,
    Incapacitated,
    MetOptions,
    NegativeNamed,
    Overbid,
    Relent,
    StaticLoser,
    Wounded,
)
from challenges.rules.retest_fit import ABILITY_CATEGORIES, DISCIPLINE_CATEGORIES, applies
from challenges.rules.rulesets import bids_required, get_ruleset

RETEST_ORDER = (RetestKind.DISCIPLINE, RetestKind.ABILITY, RetestKind.OVERBID, RetestKind.WILLPOWER)
"""seeds/004 "Challenge Re-Tests": the retests a ``ukm`` challenge allows, in
their order, one of each; the Willpower retest is always the last."""

LIMITED = frozenset(RETEST_ORDER)


def options_of(state: ChallengeState) -> MetOptions:
    """The rule options of the challenge's ruleset (RulesError if unknown)."""
    return get_ruleset(state.ruleset).options


def retest_ratings(state: ChallengeState, side: Side, kind: RetestKind) -> tuple[Rating, ...]:
    """``side``'s Abilities (``kind`` ABILITY) or Disciplines (DISCIPLINE)
    that apply to the challenge's category (``retest_fit``), in her sheet's
    order; () for another kind, or without a combatant or category.
    seeds/004 "Retrying The Test In An Ability-Based Challenge", "Challenge
    Re-Tests" ("if appropriate")."""
    who = state.combatant(Side(side))
    if who is None or state.category is None:
        return ()
    if kind is RetestKind.ABILITY:
        ratings, table = who.abilities, ABILITY_CATEGORIES
    elif kind is RetestKind.DISCIPLINE:
        ratings, table = who.disciplines, DISCIPLINE_CATEGORIES
    else:
        return ()
    return tuple(r for r in ratings if applies(r.name, state.category, table))


def surprised(state: ChallengeState, side: Side) -> bool:
    """``side`` is a surprised defender (seeds/004 "Negative Traits", Surprise)."""
    return state.surprise and Side(side) is Side.DEFENDER


def stamina_only(state: ChallengeState, side: Side) -> bool:
    """A surprised defender in a Physical challenge bids and counts only her
    Stamina-based Physical Traits (seeds/004 Surprise)."""
    return surprised(state, side) and state.category is Category.PHYSICAL


def declarable(state: ChallengeState, side: Side) -> int:
    """The most Traits ``side`` may declare in a comparison: her Trait count in
    the category (bid ones included, lost ones excluded; Stamina-based only
    for a surprised defender in a Physical challenge), before modifiers.
    0 for the narrator's side. seeds/000 "Testing"."""
    who = state.combatant(side)
    if who is None or state.category is None:
        return 0
    return who.count(state.category, stamina_only=stamina_only(state, side))


def spare(state: ChallengeState, side: Side) -> int:
    """Copies ``side`` could still add to her bid in this challenge: free
    copies in the category (held, not at risk elsewhere) minus those already
    bid here and those she owes (Stamina-based only when surprised in a
    Physical challenge). A Trait count ≥ 0."""
    who = state.combatant(side)
    if who is None or state.category is None:
        return 0
    only = stamina_only(state, side)
    free = sum(
        t.free
        for t in who.traits
        if t.category is state.category and not t.negative and (t.stamina or not only)
    )
    return max(0, free - len(state.of(side, "bids")) - int(state.of(side, "owed")))


def pool_left(state: ChallengeState, side: Side, pool: Pool) -> int:
    """What ``side`` has left of ``pool``: her pool tonight less what she
    spent in this challenge (``state.spent``); 0 for the narrator's side."""
    who = state.combatant(side)
    if who is None:
        return 0
    used = sum(n for c, p, n in state.spent if c == who.character_id and p is Pool(pool))
    return max(0, who.pool(pool) - used)


def _is_wounded(who: Combatant | None) -> bool:
    return who is not None and who.health >= HealthLevel.WOUNDED


def loses_ties(state: ChallengeState, side: Side) -> bool:
    """``side`` loses every tie without comparing Traits: she is Wounded (or
    worse) and the other side is not. seeds/000 "Health"; seeds/004 "Trait
    Categories"."""
    return _is_wounded(state.combatant(side)) and not _is_wounded(state.combatant(Side(side).other))


def modifiers(state: ChallengeState, side: Side) -> tuple[tuple[str, int], ...]:
    """What is added to (or taken from) ``side``'s declared count in a tie or
    an overbid, as ``(reason, Traits)`` pairs in the order shown on phones:

    - ``met_classic``: +1 for each Negative Trait she named correctly that the
      other could not match with one more Trait (seeds/000 "Negative Traits");
    - ``ukm``: −1 for each Negative Trait of hers the other named correctly,
      −1 for each she named wrongly (seeds/004 "Negative Traits"); −1 when
      Bruised (seeds/004 "Trait Categories"); a mob's defender −1 per attacker
      beyond the leader (seeds/004 "Mob Scenes");
    - Blood Traits spent, in a Physical challenge (seeds/004 "Expending Blood");
    - her weapon's bonus Traits when she has its Ability (seeds/004 "Weapons").

    () for the narrator's side."""
    side = Side(side)
    who = state.combatant(side)
    if who is None:
        return ()
    opts = options_of(state)
    out: list[tuple[str, int]] = []
    for call in state.calls:
        if opts.negative_named is NegativeNamed.BID_ONE_MORE:
            if call.caller is side and call.correct and not call.matched:
                out.append((f"{call.name}: not matched", 1))
        elif call.caller is side and not call.correct:
            out.append((f"{call.name}: wrong call", -1))
        elif call.caller is not side and call.correct:
            out.append((f"{call.name}: Negative Trait", -1))
    extra = state.mob_attackers - 1
    if side is Side.DEFENDER and extra > 0 and opts.mob_extra_attackers_down:
        out.append((f"Mob: {extra} more attacker{'s' if extra > 1 else ''}", -extra))
    if who.health == HealthLevel.BRUISED and opts.bruised.value == "one_trait_down":
        out.append(("Bruised", -1))
    blood = state.of(side, "blood") + who.blood_traits
    if blood and state.category is Category.PHYSICAL:
        out.append(("Blood", blood))
    weapon = who.weapon(state.of(side, "weapon")) if state.of(side, "weapon") else None
    if (
        weapon is not None
        and weapon.bonus
        and opts.weapon_bonus_in_ties
        and (not weapon.ability or who.ability(weapon.ability) is not None)
    ):
        out.append((weapon.name, weapon.bonus))
    return tuple(out)


def effective(state: ChallengeState, side: Side, declared: int) -> int:
    """``declared`` plus ``side``'s :func:`modifiers`, never below 0."""
    return max(0, declared + sum(n for _, n in modifiers(state, side)))


def safe(state: ChallengeState, side: Side) -> bool:
    """``met_classic``: ``side``'s bid is not at risk, because she named a
    Negative Trait the other could not match (seeds/000 "Negative Traits")."""
    return any(c.caller is Side(side) and c.correct and not c.matched for c in state.calls)


def retests_taken(state: ChallengeState) -> tuple[RetestKind, ...]:
    """The kinds of retest called so far in this challenge (granted or not),
    oldest first; a refused overbid or ability retest is used up too."""
    return tuple(kind for _, kind in state.called)


def _ordered_ok(opts: MetOptions, taken: tuple[RetestKind, ...], kind: RetestKind) -> bool:
    """``ukm``: one of each limited retest, in RETEST_ORDER (seeds/004
    "Challenge Re-Tests"); ``met_classic`` has no such limit."""
    if not opts.retests_limited:
        return True
    if kind in taken:
        return False
    later = RETEST_ORDER[RETEST_ORDER.index(kind) + 1 :]
    return not any(k in taken for k in later)


def retest_offers(state: ChallengeState, side: Side) -> tuple[RetestKind, ...]:
    """The retests ``side`` may call now, in the order phones offer them:
    only in stage RETEST, only for the loser of the last test (``retest_side``).

    - OVERBID (opposed, static): ``met_classic`` needs a new Trait to risk
      (:func:`spare` ≥ 1); ``ukm`` risks none, once per challenge.
    - ABILITY (``ukm``): she has an Ability that applies to the challenge's
      category (:func:`retest_ratings`); not for a surprised defender.
    - DISCIPLINE (``ukm``): she has a Discipline that applies to it.
    - WILLPOWER (``ukm``): the defender of a Mental or Social opposed
      challenge with Willpower left.
    - OVERBID is offered only when it could be granted
      (:func:`overbid_can_succeed`). The free extra test against a Wounded
      character is not offered: it is held at once (:func:`free_test_due`).

    None after a Willpower retest, which is final. ``ukm`` allows each of
    DISCIPLINE, ABILITY, OVERBID, WILLPOWER once and in that order.
    """
    side = Side(side)
    if state.stage is not Stage.RETEST or state.retest_side is not side:
        return ()
    if state.kind is Kind.SIMPLE or state.combatant(side) is None:
        return ()
    taken = retests_taken(state)
    if RetestKind.WILLPOWER in taken:
        return ()
    opts = options_of(state)
    who = state.combatant(side)
    assert who is not None
    offers: list[RetestKind] = []
    if (
        opts.discipline_retest
        and retest_ratings(state, side, RetestKind.DISCIPLINE)
        and _ordered_ok(opts, taken, RetestKind.DISCIPLINE)
    ):
        offers.append(RetestKind.DISCIPLINE)
    if (
        opts.ability_retest
        and retest_ratings(state, side, RetestKind.ABILITY)
        and not surprised(state, side)
        and _ordered_ok(opts, taken, RetestKind.ABILITY)
    ):
        offers.append(RetestKind.ABILITY)
    if (
        _ordered_ok(opts, taken, RetestKind.OVERBID)
        and (opts.overbid is Overbid.ANNOUNCE_MORE_THAN_HALF or spare(state, side) >= 1)
        and overbid_can_succeed(state, side)
    ):
        offers.append(RetestKind.OVERBID)
    if (
        opts.willpower_retest
        and state.kind is Kind.OPPOSED
        and side is Side.DEFENDER
        and state.category in (Category.MENTAL, Category.SOCIAL)
        and pool_left(state, side, Pool.WILLPOWER) >= 1
    ):
        offers.append(RetestKind.WILLPOWER)
    return tuple(offers)


def free_test_due(state: ChallengeState, side: Side) -> bool:
    """``side`` just lost a test against a Wounded (or worse) character, is not
    Wounded herself, has more Traits in the category, and has not had her
    free extra test yet: it is held at once (seeds/000 "Health": "the
    opponent gets a free extra test"; seeds/004 "Trait Categories"). Never
    after a Willpower retest, which is final."""
    side = Side(side)
    who, other = state.combatant(side), state.combatant(side.other)
    if state.kind is not Kind.OPPOSED or who is None or other is None or state.category is None:
        return False
    taken = retests_taken(state)
    return (
        RetestKind.WOUNDED not in taken
        and RetestKind.WILLPOWER not in taken
        and _is_wounded(other)
        and not _is_wounded(who)
        and who.count(state.category) > other.count(state.category)
    )


def most_declarable(state: ChallengeState, side: Side) -> int:
    """The count ``side`` would declare at most now: her standing count if one
    stands (``ukm``), else :func:`declarable`; a static challenge's narrator
    side declares its difficulty."""
    if state.combatant(side) is None:
        return state.difficulty or 0
    standing = state.of(side, "standing")
    return declarable(state, side) if standing is None else int(standing)


def overbid_can_succeed(state: ChallengeState, side: Side) -> bool:
    """An overbid by ``side`` could be granted: her most (with modifiers) is at
    least double the other side's most (with modifiers; a static challenge's
    difficulty). Phones offer an overbid only then: one that cannot succeed
    would only cost ``met_classic``'s new Trait (seeds/000 "Overbidding";
    seeds/004 "Challenge Re-Tests")."""
    side = Side(side)
    mine = effective(state, side, most_declarable(state, side))
    other = side.other
    theirs = most_declarable(state, other)
    if state.combatant(other) is not None:
        theirs = effective(state, other, theirs)
    return mine >= 2 * theirs


def can_relent(state: ChallengeState, side: Side) -> bool:
    """``side`` may relent now (no Trait lost; the other's stated action happens).

    ``met_classic`` (seeds/000 "Initial Bid", "Negative Traits"): the defender,
    when asked to answer; either side before the first test while she owes
    Traits for a Negative Trait (the defender named correctly, "possibly even
    to the point where she relents"; the caller named wrongly, who must risk
    one more Trait "if he wished to continue the challenge"). ``ukm`` (seeds/004 "The Challenge"):
    either side of an opposed challenge, at any time until the first test is
    thrown open. The player of a static challenge may relent before bidding.
    """
    side = Side(side)
    if state.stage is Stage.RESOLVED:
        return False
    if state.kind is Kind.STATIC:
        return state.stage is Stage.BID and side is Side.CHALLENGER
    if state.kind is not Kind.OPPOSED:
        return False
    first_open = state.stage is Stage.THROWS and len(state.tests) == 1
    if options_of(state).relent is Relent.EITHER_SIDE_BEFORE_TEST:
        return state.stage is Stage.RESPONSE or first_open
    if state.stage is Stage.RESPONSE:
        return side is Side.DEFENDER
    return first_open and state.of(side, "owed") > 0


def calls_open(state: ChallengeState) -> bool:
    """Negative Traits may be named now: an opposed challenge whose first test
    has not been thrown by either side (seeds/000 "Negative Traits": "during
    the initial bid phase")."""
    if state.kind is not Kind.OPPOSED or state.stage is not Stage.THROWS:
        return False
    if len(state.tests) != 1:
        return False
    test = state.tests[0]
    return test.challenger_throw is None and test.defender_throw is None


def can_pay_wrong_call(state: ChallengeState, side: Side) -> bool:
    """``side`` could pay for a wrong Negative Trait call: ``met_classic``, one
    more Trait to risk (:func:`spare` ≥ 1); ``ukm``, a Trait to drop (her count
    with modifiers, Blood excluded, at least 1). seeds/000, seeds/004
    "Negative Traits"."""
    if options_of(state).negative_named is NegativeNamed.BID_ONE_MORE:
        return spare(state, side) >= 1
    mods = sum(n for reason, n in modifiers(state, side) if reason != "Blood")
    return declarable(state, side) + mods >= 1


def blood_room(state: ChallengeState, side: Side) -> int:
    """Blood ``side`` may still spend in this challenge for Physical Traits
    (``ukm``, seeds/004 "Expending Blood"): the preset's most (3) or her
    generation's limit, less what is active or spent, and no more than her
    Blood pool; 0 outside the window (before the first test is thrown open),
    outside Physical challenges, or for a surprised defender."""
    side = Side(side)
    opts = options_of(state)
    who = state.combatant(side)
    if who is None or not opts.blood_traits_max or state.category is not Category.PHYSICAL:
        return 0
    if surprised(state, side):
        return 0
    window = state.stage is Stage.RESPONSE or (
        state.stage is Stage.THROWS and len(state.tests) == 1 and not state.tests[0].revealed
    )
    if state.kind is Kind.STATIC:
        window = state.stage in (Stage.BID, Stage.THROWS) and not state.tests[0].revealed
    if not window:
        return 0
    limit = (
        opts.blood_traits_max
        if who.blood_limit is None
        else min(opts.blood_traits_max, who.blood_limit)
    )
    left = limit - who.blood_traits - int(state.of(side, "blood"))
    return max(0, min(left, pool_left(state, side, Pool.BLOOD)))


def can_enter(who: Combatant, options: MetOptions, *, initiate: bool) -> bool:
    """``who`` may enter a challenge (``initiate``: open one; else answer with
    a bid). ``met_classic``: not when Incapacitated or worse (seeds/000
    "Health"). ``ukm``: an Incapacitated character cannot initiate but may
    defend (seeds/004 "Trait Categories")."""
    if who.health < HealthLevel.INCAPACITATED:
        return True
    return options.incapacitated is Incapacitated.CANNOT_INITIATE and not initiate


@dataclass(frozen=True)
class Moves:
    """Every move ``side`` may make now (:func:`legal_moves`); phones offer
    exactly these. Counts are Traits.

    ``bid``: Traits she must bid to answer or to bid (0: no bid now, or too
    few Traits free to make one, so she can only relent);
    ``relent``; ``preempt``: spend Rage to pre-empt with a Gift; ``call``:
    name a Negative Trait; ``owed``: Traits she must add before the test;
    ``blood``: Blood she may still spend; ``throw``; ``declare``: the most
    she may declare now (None: no declaration now); ``retests``: retests she
    may call; ``answer``: the retest she must answer (None: none);
    ``answer_max``: the most she may declare in answer to an overbid;
    ``accept``: accept losing the last test.
    """

    bid: int = 0
    relent: bool = False
    preempt: bool = False
    call: bool = False
    owed: int = 0
    blood: int = 0
    throw: bool = False
    declare: int | None = None
    retests: tuple[RetestKind, ...] = ()
    answer: RetestKind | None = None
    answer_max: int | None = None
    accept: bool = False

    @property
    def any(self) -> bool:
        """She has something to do now."""
        return bool(
            self.bid
            or self.relent
            or self.preempt
            or self.call
            or self.owed
            or self.blood
            or self.throw
            or self.declare is not None
            or self.retests
            or self.answer
            or self.accept
        )


def legal_moves(state: ChallengeState, side: Side) -> Moves:
    """The moves ``side`` may make in ``state`` now (none once resolved, none
    for a side that is not in the challenge). Every move listed is accepted by
    its transition; any other raises RulesError (tests/rules prove both)."""
    side = Side(side)
    who = state.combatant(side)
    if state.stage is Stage.RESOLVED or who is None:
        return Moves()
    opts = options_of(state)
    bid = 0
    preempt = False
    if state.stage is Stage.RESPONSE and side is Side.DEFENDER:
        if can_enter(who, opts, initiate=False):
            bid = bids_required(who, state.ruleset)
        preempt = opts.rage_preempt and pool_left(state, side, Pool.RAGE) >= 1
    if state.stage is Stage.BID and side is Side.CHALLENGER and can_enter(who, opts, initiate=True):
        bid = bids_required(who, state.ruleset)
    if bid > spare(state, side):
        bid = 0  # she has too few Traits free to bid: she can only relent
    owed = state.of(side, "owed") if state.stage is Stage.THROWS else 0
    call = calls_open(state) and can_pay_wrong_call(state, side)
    test = state.current_test
    throw = (
        state.stage is Stage.THROWS
        and test is not None
        and test.throw_of(side) is None
        and not state.challenger_owed
        and not state.defender_owed
    )
    declare = None
    if (state.stage is Stage.DECLARE_CHALLENGER and side is Side.CHALLENGER) or (
        state.stage is Stage.DECLARE_DEFENDER and side is Side.DEFENDER
    ):
        standing = state.of(side, "standing")
        declare = declarable(state, side) if standing is None else standing
    answer = None
    answer_max = None
    pending = state.pending
    if state.stage is Stage.RETEST_ANSWER and pending is not None and pending.side is side.other:
        answer = pending.kind
        if answer is RetestKind.OVERBID:
            answer_max = most_declarable(state, side)
    return Moves(
        bid=bid,
        relent=can_relent(state, side),
        preempt=preempt,
        call=call,
        owed=owed,
        blood=blood_room(state, side),
        throw=throw,
        declare=declare,
        retests=retest_offers(state, side),
        answer=answer,
        answer_max=answer_max,
        accept=state.stage is Stage.RETEST and state.retest_side is side,
    )


def draws_on_equal_counts(state: ChallengeState) -> bool:
    """Equal counts after a tie end in a draw (``met_classic``) rather than a
    retest until someone wins (``ukm``)."""
    return options_of(state).equal_counts is EqualCounts.DRAW


def wounded_bids_two(options: MetOptions) -> bool:
    """``met_classic``: Wounded bids two Traits (seeds/000 "Health")."""
    return options.wounded is Wounded.BID_TWO_LOSE_TIES_FREE_TEST


# --- the object of a prepared static (issue 11, statics) -------------------------


def object_retest(state: ChallengeState) -> RetestKind | None:
    """What the narrator's side of a static challenge does when it has just
    lost a test (stage about to be RETEST for it), as the server plays it for
    a prepared static with no narrator present (seeds/000 "Static
    Challenges": "the Narrator can overbid as well"; seeds/004 "Static
    Challenges": overbids and Ability retests "often for both parties").

    The policy, one retest of each kind per challenge: the object's retest
    (``object_retests``) first: an ABILITY retest where the ruleset has them
    (``ukm``, within its limits: one per challenge, before the overbid), else
    a NARRATOR retest (``met_classic`` has no Ability retests: the narrator's
    side retests by her ruling); else
    OVERBID (``object_overbids``) when it would be granted, its difficulty
    being at least double the player's most count with modifiers
    (:func:`overbid_can_succeed`), an overbid that must fail being useless;
    else None: the player wins. Never after a Willpower retest; never for
    an opposed challenge or a simple test."""
    if state.kind is not Kind.STATIC or state.difficulty is None:
        return None
    taken = retests_taken(state)
    if RetestKind.WILLPOWER in taken:
        return None
    own = {kind for side, kind in state.called if side is Side.DEFENDER}
    opts = options_of(state)
    retest = RetestKind.ABILITY if opts.ability_retest else RetestKind.NARRATOR
    if (
        state.object_retests
        and not own & {RetestKind.ABILITY, RetestKind.NARRATOR}
        and (retest is RetestKind.NARRATOR or _ordered_ok(opts, taken, retest))
    ):
        return retest
    if (
        state.object_overbids
        and RetestKind.OVERBID not in own
        and _ordered_ok(opts, taken, RetestKind.OVERBID)
        and overbid_can_succeed(state, Side.DEFENDER)
    ):
        return RetestKind.OVERBID
    return None


def aggressor_only(state: ChallengeState) -> bool:
    """A static challenge under ``static_loser`` AGGRESSOR_ONLY (``ukm``,
    seeds/004 "Static Challenges": "Only the aggressor will lose a trait in
    the event of losing a static challenge"): the player, its aggressor,
    loses her bid only when she loses the challenge, never on a draw nor
    for an earlier test she lost before winning. ``as_opposed``
    (``met_classic``, seeds/000 "Static Challenges": "exactly as it would if
    you were testing against another character") plays it as an opposed
    challenge."""
    return (
        state.kind is Kind.STATIC and options_of(state).static_loser is StaticLoser.AGGRESSOR_ONLY
    )
