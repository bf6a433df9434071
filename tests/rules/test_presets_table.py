"""One table test per row of RULES.md "Where the rulesets differ", each run
under both presets: ``met_classic`` (seeds/000) and ``ukm`` (seeds/004). The
same situation is played under each; the expected column says what each
preset does."""

from __future__ import annotations

import pytest

from challenges.rules import (
    HealthLevel,
    Outcome,
    Pool,
    RetestKind,
    RulesError,
    Stage,
    TraitHolding,
    Weapon,
    accept,
    answer_retest,
    call_negative,
    call_retest,
    declare,
    legal_moves,
    modifiers,
    open_simple,
    open_static,
    preempt,
    relent,
    respond,
    spend_blood,
    throw,
)
from challenges.rules import bid as static_bid
from tests.rules.sheets import (
    CH,
    DE,
    LOSE,
    MENTAL,
    PHYSICAL,
    SOCIAL,
    TIE,
    WIN,
    P,
    R,
    S,
    character,
    opposed,
    played,
    traits,
)

PRESETS = ["met_classic", "ukm"]


def both(**expected: object) -> pytest.MarkDecorator:
    """Parametrize over both presets with each one's expected value."""
    return pytest.mark.parametrize(
        ("ruleset", "expected"), [(p, expected[p]) for p in PRESETS], ids=PRESETS
    )


def a(health: HealthLevel = HealthLevel.HEALTHY, **more):  # type: ignore[no-untyped-def]
    """The challenger: 6 Traits in every category, Brawl 3, Dominate, Potence."""
    held = (
        traits(PHYSICAL, "Brawny*3", "Quick*3")
        + traits(SOCIAL, "Regal*3", "Witty*3")
        + traits(MENTAL, "Cunning*3", "Clever*3")
    )
    return character(
        1,
        "A",
        held,
        health=health,
        abilities={"Brawl": 3},
        disciplines={"Dominate": 1, "Potence": 1},
        **more,
    )


def b(health: HealthLevel = HealthLevel.HEALTHY, **more):  # type: ignore[no-untyped-def]
    """The defender: 6 Traits in every category (Tough Stamina-based),
    Negative Physical Clumsy, Dodge 1, Awareness 1, Willpower 2, Rage 1."""
    held = (
        (TraitHolding("Tough", PHYSICAL, 3, stamina=True),)
        + traits(PHYSICAL, "Nimble*3", negatives=["Clumsy"])
        + traits(SOCIAL, "Alluring*3", "Genial*3")
        + traits(MENTAL, "Wise*3", "Shrewd*3")
    )
    pools = more.pop("pools", {Pool.WILLPOWER: 2, Pool.RAGE: 1})
    abilities = {"Dodge": 1, "Awareness": 1}
    return character(2, "B", held, health=health, abilities=abilities, pools=pools, **more)


def fight(ruleset: str, **options):  # type: ignore[no-untyped-def]
    """A Physical attack by A (Brawny) answered by B (Tough)."""
    return opposed(ruleset, a(), b(), PHYSICAL, ["Brawny"], ["Tough"], is_attack=True, **options)


# --- relent ----------------------------------------------------------------------


@both(met_classic=(False, True, False), ukm=(True, True, True))
def test_row_relent(ruleset: str, expected: tuple[bool, bool, bool]) -> None:
    """RULES.md "relent": ``met_classic`` the defender, at once (seeds/000);
    ``ukm`` either side, any time before the test, the other side's action
    happens, no Trait lost (seeds/004 "The Challenge"). Expected: (challenger
    may relent before the test, defender may relent when answering, defender
    may relent after bidding, before the test)."""
    answering = opposed(ruleset, a(), b(), PHYSICAL, ["Brawny"], is_attack=True)
    bid_in = fight(ruleset)
    got = (
        legal_moves(bid_in, CH).relent,
        legal_moves(answering, DE).relent,
        legal_moves(bid_in, DE).relent,
    )
    assert got == expected
    t = relent(answering, side=DE, now=150.0)
    assert t.state.outcome is Outcome.CHALLENGER_WINS
    assert t.state.losses == () and t.state.wounds == (2,)
    if expected[0]:
        t = relent(bid_in, side=CH, now=150.0)
        assert t.state.outcome is Outcome.DEFENDER_WINS and t.state.losses == ()
    else:
        with pytest.raises(RulesError, match="cannot relent"):
            relent(bid_in, side=CH, now=150.0)


# --- equal counts after a tie ------------------------------------------------------


@both(met_classic=Outcome.DRAW, ukm=None)
def test_row_equal_counts_after_a_tie(ruleset: str, expected: Outcome | None) -> None:
    """RULES.md "equal counts after a tie": ``met_classic`` a draw, both lose
    their bids (seeds/000 "Testing"); ``ukm`` retest until someone wins
    outright (seeds/004 "In The Case Of A Draw")."""
    state = played(fight(ruleset), TIE).state
    state = declare(state, side=CH, count=6, now=300.0).state
    state = declare(state, side=DE, count=6, now=301.0).state
    assert state.outcome is expected
    if expected is Outcome.DRAW:
        assert sorted(x.trait for x in state.losses) == ["Brawny", "Tough"]
        assert state.wounds == ()
    else:
        assert state.stage is Stage.THROWS
        assert state.tests[-1].retest is RetestKind.EQUAL_COUNTS
        assert state.losses == ()


# --- Negative Trait named ----------------------------------------------------------


@both(
    met_classic={"correct": (1, ()), "wrong": (1, ())},
    ukm={
        "correct": (0, (("Clumsy: Negative Trait", -1),)),
        "wrong": (0, (("Lame: wrong call", -1),)),
    },
)
def test_row_negative_trait_named(ruleset: str, expected: dict) -> None:
    """RULES.md "Negative Trait named": ``met_classic`` correct, the opponent
    bids one more Trait; wrong, the caller risks one more (seeds/000);
    ``ukm`` correct, the opponent is one Trait down in ties; wrong, the
    caller is (seeds/004). Expected per call: (Traits owed by whoever pays,
    modifiers of whoever pays)."""
    state = fight(ruleset)
    correct = call_negative(state, side=CH, name="Clumsy", now=150.0).state
    assert correct.calls[0].correct
    assert (correct.defender_owed, modifiers(correct, DE)) == expected["correct"]
    assert correct.challenger_owed == 0
    wrong = call_negative(state, side=CH, name="Lame", now=150.0).state
    assert not wrong.calls[0].correct
    assert (wrong.challenger_owed, modifiers(wrong, CH)) == expected["wrong"]
    assert wrong.defender_owed == 0


# --- overbid -------------------------------------------------------------------------


def elder_against_cub(ruleset: str):  # type: ignore[no-untyped-def]
    elder = character(1, "Elder", traits(SOCIAL, "Regal*6", "Eloquent*6"))
    cub = character(2, "Cub", traits(SOCIAL, "Witty*3", "Genial*2"))
    state = opposed(ruleset, elder, cub, SOCIAL, ["Regal"], ["Witty"], is_attack=True)
    return played(state, LOSE).state


@both(
    met_classic={"risked": ("Regal", "Eloquent"), 5: True, 6: None},
    ukm={"risked": ("Regal",), 5: True, 6: False},
)
def test_row_overbid(ruleset: str, expected: dict) -> None:
    """RULES.md "overbid": ``met_classic`` the loser risks a new Trait and
    needs at least double the other's count (seeds/000 "Overbidding");
    ``ukm`` she announces a number, risks no new Trait, and fails if the
    other reveals more than half of it (seeds/004). The elder (12) announces
    10 against the cub's 5 (granted both ways); against 6 (a count the cub
    cannot reach under ``met_classic``, where she declares at most 5)."""
    state = elder_against_cub(ruleset)
    assert RetestKind.OVERBID in legal_moves(state, CH).retests
    extra = {"traits": ["Eloquent"]} if ruleset == "met_classic" else {}
    state = call_retest(state, side=CH, kind=RetestKind.OVERBID, count=10, now=300.0, **extra).state
    assert state.challenger_bids == expected["risked"]
    t = answer_retest(state, side=DE, count=5, now=301.0)
    assert t.events[0].data["granted"] is expected[5]
    if expected[6] is None:
        with pytest.raises(RulesError, match=r"more Traits than you have \(5\)"):
            answer_retest(state, side=DE, count=6, now=301.0)
    else:
        weak = character(2, "Cub", traits(SOCIAL, "Witty*3", "Genial*3"))
        state6 = state.with_combatants(state.challenger, weak)
        t = answer_retest(state6, side=DE, count=6, now=301.0)
        assert t.events[0].data["granted"] is expected[6]


@both(met_classic=Outcome.CHALLENGER_WINS, ukm=None)
def test_row_overbid_tie_in_the_second_test(ruleset: str, expected: Outcome | None) -> None:
    """seeds/000 "Overbidding": a tie in the overbid's test goes to the
    overbidder (she has more Traits); ``ukm`` has no such rule: the tie is
    settled by counts as any other."""
    state = elder_against_cub(ruleset)
    extra = {"traits": ["Eloquent"]} if ruleset == "met_classic" else {}
    state = call_retest(state, side=CH, kind=RetestKind.OVERBID, count=10, now=300.0, **extra).state
    state = answer_retest(state, side=DE, count=5, now=301.0).state
    t = played(state, TIE, now=400.0)
    assert t.state.outcome is expected
    if expected is None:
        assert t.state.stage is Stage.DECLARE_CHALLENGER


# --- other retests -------------------------------------------------------------------


@both(
    met_classic={"loser": (), "mental defender": ()},
    ukm={
        "loser": (RetestKind.DISCIPLINE, RetestKind.ABILITY),
        "mental defender": (RetestKind.ABILITY, RetestKind.WILLPOWER),
    },
)
def test_row_other_retests(ruleset: str, expected: dict) -> None:
    """RULES.md "other retests": none in ``met_classic``; ``ukm`` one ability
    retest, one Discipline retest, one Willpower retest for a defender in
    Mental/Social challenges, always last and final, in that order
    (seeds/004 "Challenge Re-Tests"). A (Brawl 3, Dominate, Potence) loses a
    Physical test; B (Dodge 1, Awareness 1, Willpower 2) loses a Mental one."""
    lost = played(fight(ruleset), LOSE).state
    offers = legal_moves(lost, CH).retests if lost.stage is Stage.RETEST else ()
    assert tuple(k for k in offers if k is not RetestKind.OVERBID) == expected["loser"]
    mental = opposed(ruleset, a(), b(), MENTAL, ["Cunning"], ["Wise"], power="Dominate")
    mental = played(mental, WIN).state
    offers = legal_moves(mental, DE).retests if mental.stage is Stage.RETEST else ()
    assert tuple(k for k in offers if k is not RetestKind.OVERBID) == expected["mental defender"]
    if ruleset == "ukm":
        # In order: once the ability retest is called, no Discipline retest.
        state = call_retest(lost, side=CH, kind=RetestKind.ABILITY, name="Brawl", now=300.0).state
        state = answer_retest(state, side=DE, name="Dodge", now=301.0).state
        state = played(state, LOSE, now=400.0).state
        if state.stage is Stage.RETEST:
            assert not {RetestKind.DISCIPLINE, RetestKind.ABILITY} & set(
                legal_moves(state, CH).retests
            )
        # Willpower is last and final: nothing after it, for either side.
        state = call_retest(mental, side=DE, kind=RetestKind.WILLPOWER, now=300.0).state
        state = played(state, WIN, now=400.0).state
        assert state.stage is Stage.RESOLVED


# --- Bruised, Wounded, Incapacitated ---------------------------------------------------


@both(met_classic=(2, ()), ukm=(1, (("Bruised", -1),)))
def test_row_bruised(ruleset: str, expected: tuple) -> None:
    """RULES.md "Bruised": ``met_classic`` bids two Traits (seeds/000
    "Health"); ``ukm`` one Trait down in challenges (seeds/004 "Trait
    Categories"). Expected: (Traits she must bid, her modifiers)."""
    state = opposed(ruleset, a(), b(HealthLevel.BRUISED), PHYSICAL, ["Brawny"])
    need, mods = expected
    assert legal_moves(state, DE).bid == need
    state = respond(state, bids=["Tough", "Nimble"][:need], now=200.0).state
    assert modifiers(state, DE) == mods


@both(met_classic=2, ukm=1)
def test_row_wounded(ruleset: str, expected: int) -> None:
    """RULES.md "Wounded": both presets lose ties and give a stronger
    opponent a free extra test (seeds/000 "Health"; seeds/004 "Trait
    Categories"); only ``met_classic`` makes her bid two. Expected: Traits
    she must bid."""
    hurt = character(2, "B", traits(PHYSICAL, "Tough*2", "Nimble"), health=HealthLevel.WOUNDED)
    state = opposed(ruleset, a(), hurt, PHYSICAL, ["Brawny"], is_attack=True)
    assert legal_moves(state, DE).bid == expected
    state = respond(state, bids=["Tough", "Nimble"][:expected], now=200.0).state
    tie = played(state, TIE)
    assert [e.kind for e in tie.events][-2:] == ["tie_lost", "resolved"]
    assert tie.state.outcome is Outcome.CHALLENGER_WINS
    lost = played(state, LOSE).state
    assert lost.stage is Stage.THROWS and lost.tests[-1].retest is RetestKind.WOUNDED


@both(met_classic=(False, False), ukm=(False, True))
def test_row_incapacitated(ruleset: str, expected: tuple[bool, bool]) -> None:
    """RULES.md "Incapacitated": ``met_classic`` no challenges (seeds/000
    "Health"); ``ukm`` cannot initiate, may defend, and her attacker normally
    qualifies for Surprise (seeds/004). Expected: (may initiate, may bid in
    defence)."""
    down = b(HealthLevel.INCAPACITATED)
    may_initiate = True
    try:
        opposed(ruleset, down, a(), PHYSICAL, ["Tough"])
    except RulesError as refused:
        assert "incapacitated" in str(refused)
        may_initiate = False
    state = opposed(ruleset, a(), down, PHYSICAL, ["Brawny"], surprise=ruleset == "ukm")
    assert (may_initiate, legal_moves(state, DE).bid > 0) == expected
    assert legal_moves(state, DE).relent


# --- static challenge, simple test -----------------------------------------------------


@both(met_classic=((1, "Witty"),), ukm=((1, "Witty"),))
def test_row_static_challenge(ruleset: str, expected: tuple) -> None:
    """RULES.md "static challenge": as opposed, against the difficulty
    (seeds/000 "Static Challenges"); ``ukm`` only the aggressor loses a
    Trait (seeds/004). The narrator's side bids nothing in either, so both
    presets agree: the player loses her bid, nobody else loses anything."""
    state = open_static(
        ruleset=ruleset,
        challenger=a(),
        category=SOCIAL,
        difficulty=7,
        narrator_throw=R,
        choose=None,
        now=1.0,
    ).state
    state = static_bid(state, bids=["Witty"], now=2.0).state
    state = throw(state, side=CH, throw=R, now=3.0).state
    state = declare(state, side=CH, now=4.0).state
    if state.stage is Stage.RETEST:
        state = accept(state, side=CH, now=5.0).state
    assert state.outcome is Outcome.DEFENDER_WINS
    assert tuple((x.character_id, x.trait) for x in state.losses) == expected


@both(
    met_classic={"player": True, "narrator": True, "difficult": None},
    ukm={"player": True, "narrator": False, "difficult": False},
)
def test_row_simple_test(ruleset: str, expected: dict) -> None:
    """RULES.md "simple test": ``met_classic`` a win or a tie succeeds
    (seeds/000 "Simple Tests"); ``ukm`` the initiator wins ties, and a
    difficult test needs an outright win (seeds/004). Expected: does a tie
    succeed when the player initiated it, when the narrator did, in a
    difficult test (None: no difficult tests)."""

    def tie(**options: bool) -> bool:
        state = open_simple(
            ruleset=ruleset, challenger=a(), narrator_throw=P, choose=None, now=1.0, **options
        ).state
        return throw(state, side=CH, throw=P, now=2.0).state.outcome is Outcome.CHALLENGER_WINS

    assert tie() is expected["player"]
    assert tie(narrator_initiated=True) is expected["narrator"]
    if expected["difficult"] is None:
        with pytest.raises(RulesError, match="Difficult tests"):
            tie(difficult=True)
    else:
        assert tie(difficult=True) is expected["difficult"]


# --- extras ------------------------------------------------------------------------------


@both(
    met_classic={"rage": True, "blood": 0, "weapon": (), "surprise": False},
    ukm={"rage": False, "blood": 3, "weapon": (("Knife", 2),), "surprise": True},
)
def test_row_extras(ruleset: str, expected: dict) -> None:
    """RULES.md "extras": ``met_classic`` Rage spent to pre-empt (seeds/000
    "Order of Challenges"); ``ukm`` Blood for up to 3 Physical Traits before
    the test (seeds/004 "Expending Blood"), weapon bonus Traits in ties with
    the matching ability ("Weapons / Ranged Combat"), and Surprise."""
    # Rage pre-emption, by a defender answering.
    answering = opposed(ruleset, a(), b(), PHYSICAL, ["Brawny"])
    assert legal_moves(answering, DE).preempt is expected["rage"]
    if expected["rage"]:
        t = preempt(answering, gift="Resist Pain", now=150.0)
        assert t.state.outcome is Outcome.VOID and t.state.spent == ((2, Pool.RAGE, 1),)
    else:
        with pytest.raises(RulesError, match="Pre-empting"):
            preempt(answering, gift="Resist Pain", now=150.0)
    # Blood.
    vampire = a(pools={Pool.BLOOD: 10})
    state = opposed(ruleset, vampire, b(), PHYSICAL, ["Brawny"])
    assert legal_moves(state, CH).blood == expected["blood"]
    if not expected["blood"]:
        with pytest.raises(RulesError, match="Blood"):
            spend_blood(state, side=CH, amount=1, now=150.0)
    # A weapon's bonus in ties, with the matching ability.
    knife = Weapon("Knife", bonus=2, ability="Brawl")
    armed = opposed(ruleset, a(weapons=[knife]), b(), PHYSICAL, ["Brawny"], weapon="Knife")
    assert modifiers(armed, CH) == expected["weapon"]
    # Surprise.
    if expected["surprise"]:
        state = opposed(ruleset, a(), b(), PHYSICAL, ["Brawny"], surprise=True, is_attack=True)
        with pytest.raises(RulesError, match="Stamina-based"):
            respond(state, bids=["Nimble"], now=200.0)
        state = respond(state, bids=["Tough"], now=200.0).state
        state = played(state, (S, R)).state  # the challenger loses
        if state.stage is Stage.RETEST:
            state = accept(state, side=CH, now=300.0).state
        assert state.outcome is Outcome.DEFENDER_WINS and state.wounds == ()
    else:
        with pytest.raises(RulesError, match="Surprise"):
            opposed(ruleset, a(), b(), PHYSICAL, ["Brawny"], surprise=True)
