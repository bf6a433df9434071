"""Every worked example of seeds/000 (``met_classic``) and every case of
seeds/004 (``ukm``), each a named test under its preset, played through the
engine's public moves. Helen/Grady is in test_opposed.py and Steps-in-Gum in
test_static_and_simple.py."""

from __future__ import annotations

import pytest

from challenges.rules import (
    ChallengeState,
    HealthLevel,
    Immunity,
    Loss,
    Outcome,
    Pool,
    RetestKind,
    RulesError,
    Stage,
    TraitHolding,
    Weapon,
    accept,
    add_bids,
    answer_retest,
    call_negative,
    call_retest,
    declare,
    legal_moves,
    modifiers,
    open_opposed,
    open_simple,
    open_static,
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
    kinds,
    opposed,
    played,
    traits,
)

# --- seeds/000: met_classic ---------------------------------------------------------


def ray():  # type: ignore[no-untyped-def]
    """Ray, a Shadow Lord Galliard: Social Commanding, Persuasive, Eloquent."""
    return character(1, "Ray", traits(SOCIAL, "Commanding", "Persuasive", "Eloquent"))


def camille():  # type: ignore[no-untyped-def]
    """Camille, a Toreador: Social Alluring ×2, Graceful; Negative Social Vain."""
    return character(2, "Camille", traits(SOCIAL, "Alluring*2", "Graceful", negatives=["Vain"]))


def test_ray_names_condescending_wrongly_and_must_risk_persuasive_too() -> None:
    """seeds/000 "Negative Traits", Example of Play: Ray bids Commanding,
    Camille Alluring; Ray names Condescending, which she lacks, so Ray must
    risk one more Social Trait (Persuasive) before they test."""
    state = opposed("met_classic", ray(), camille(), SOCIAL, ["Commanding"], ["Alluring"])
    t = call_negative(state, side=CH, name="Condescending", now=300.0)
    state = t.state
    assert t.events[0].data == {
        "side": "challenger",
        "name": "Condescending",
        "correct": False,
        "matched": True,
    }
    assert legal_moves(state, CH).owed == 1
    assert not legal_moves(state, CH).throw and not legal_moves(state, DE).throw
    with pytest.raises(RulesError, match="Ray must first add 1 Trait"):
        throw(state, side=DE, throw=R, now=301.0)
    state = add_bids(state, side=CH, bids=["Persuasive"], now=302.0).state
    assert state.challenger_bids == ("Commanding", "Persuasive")
    assert legal_moves(state, CH).throw and legal_moves(state, DE).throw
    # Ray now risks both: losing the test costs him both Traits.
    state = played(state, LOSE).state
    state = accept(state, side=CH, now=400.0).state if state.stage is Stage.RETEST else state
    assert state.outcome is Outcome.DEFENDER_WINS
    assert sorted(x.trait for x in state.losses) == ["Commanding", "Persuasive"]


def test_a_correct_negative_trait_makes_the_other_bid_one_more() -> None:
    """seeds/000 "Negative Traits": named correctly, the opponent is forced
    to bid an additional Trait."""
    state = opposed("met_classic", ray(), camille(), SOCIAL, ["Commanding"], ["Alluring"])
    state = call_negative(state, side=CH, name="vain", now=300.0).state
    assert state.calls[0].correct and state.calls[0].matched
    assert legal_moves(state, DE).owed == 1 and legal_moves(state, CH).owed == 0
    state = add_bids(state, side=DE, bids=["Graceful"], now=301.0).state
    assert state.defender_bids == ("Alluring", "Graceful")


def test_an_unmatched_negative_trait_makes_the_callers_bid_safe_and_counts_one() -> None:
    """seeds/000 "Negative Traits": if the opponent has no Trait left to add,
    the caller's Trait is not at risk, and the call counts as one extra Trait
    in a tie."""
    poor = character(2, "Camille", traits(SOCIAL, "Alluring", negatives=["Vain"]))
    state = opposed("met_classic", ray(), poor, SOCIAL, ["Commanding"], ["Alluring"])
    state = call_negative(state, side=CH, name="Vain", now=300.0).state
    assert not state.calls[0].matched and state.defender_owed == 0
    assert modifiers(state, CH) == (("Vain: not matched", 1),)
    # Ray loses the test, yet his bid is safe.
    state = played(state, LOSE).state
    if state.stage is Stage.RETEST:
        state = accept(state, side=CH, now=400.0).state
    assert state.outcome is Outcome.DEFENDER_WINS
    assert state.losses == ()


def test_a_caller_names_only_what_she_could_pay_for_if_wrong() -> None:
    """seeds/000 "Negative Traits": "as long as you can pay the price if
    you're wrong": with no Trait left to risk, Ray may not name one."""
    alone = character(1, "Ray", traits(SOCIAL, "Commanding"))
    state = opposed("met_classic", alone, camille(), SOCIAL, ["Commanding"], ["Alluring"])
    assert not legal_moves(state, CH).call
    before = state.to_dict()
    with pytest.raises(RulesError, match="could not pay"):
        call_negative(state, side=CH, name="Condescending", now=300.0)
    assert state.to_dict() == before


def sir_godfrey():  # type: ignore[no-untyped-def]
    """Sir Godfrey, a Silver Fang Ahroun in Crinos: 15 Physical Traits."""
    return character(
        10, "Sir Godfrey", traits(PHYSICAL, "Brutal", "Relentless", "Ferocious*5", "Quick*8")
    )


def connor():  # type: ignore[no-untyped-def]
    """Connor, a Fianna Ragabash in Homid: 5 Physical Traits."""
    return character(11, "Connor", traits(PHYSICAL, "Nimble", "Wiry*4"))


def test_sir_godfrey_overbids_connor_and_wins_the_tied_second_test() -> None:
    """seeds/000 "Overbidding", Example of Play: Sir Godfrey loses the first
    test, overbids risking Relentless; 15 >= 2×5, so they test again and tie:
    Sir Godfrey wins. He has lost his first bid Trait; Connor loses his and a
    health level."""
    state = opposed(
        "met_classic", sir_godfrey(), connor(), PHYSICAL, ["Brutal"], ["Nimble"], is_attack=True
    )
    state = played(state, LOSE).state
    assert state.stage is Stage.RETEST and state.retest_side is CH
    assert legal_moves(state, CH).retests == (RetestKind.OVERBID,)
    t = call_retest(
        state, side=CH, kind=RetestKind.OVERBID, traits=["Relentless"], count=15, now=300.0
    )
    state = t.state
    assert state.stage is Stage.RETEST_ANSWER
    assert legal_moves(state, DE).answer is RetestKind.OVERBID
    assert legal_moves(state, DE).answer_max == 5
    t = answer_retest(state, side=DE, count=5, now=301.0)
    assert t.events[0].data["granted"] is True
    assert t.events[0].data["compared"] == [15, 5]
    state = t.state
    assert state.stage is Stage.THROWS and len(state.tests) == 2
    t = played(state, TIE, now=400.0)
    state = t.state
    assert "tie_won" in kinds(t)
    assert state.outcome is Outcome.CHALLENGER_WINS
    assert sorted((x.character_id, x.trait) for x in state.losses) == [
        (10, "Brutal"),
        (11, "Nimble"),
    ]
    assert state.wounds == (11,)


def test_an_overbid_needs_double_the_others_count() -> None:
    """seeds/000 "Overbidding": "If you have double the number of Traits as
    your opponent ... you may attempt another test"; a failed overbid loses
    the challenge, and the overbidder loses both Traits she risked."""
    state = opposed("met_classic", sir_godfrey(), connor(), PHYSICAL, ["Brutal"], ["Nimble"])
    state = played(state, LOSE).state
    state = call_retest(
        state, side=CH, kind=RetestKind.OVERBID, traits=["Relentless"], count=9, now=300.0
    ).state
    t = answer_retest(state, side=DE, count=5, now=301.0)
    assert t.events[0].data["granted"] is False
    assert t.state.outcome is Outcome.DEFENDER_WINS
    assert sorted(x.trait for x in t.state.losses) == ["Brutal", "Relentless"]


def test_an_overbid_is_not_offered_when_it_could_not_be_granted() -> None:
    """seeds/000 "Overbidding": Connor (5) cannot reach double Sir Godfrey's 15."""
    state = opposed("met_classic", connor(), sir_godfrey(), PHYSICAL, ["Nimble"], ["Brutal"])
    state = played(state, LOSE).state
    assert state.outcome is Outcome.DEFENDER_WINS
    with pytest.raises(RulesError):
        call_retest(state, side=CH, kind=RetestKind.OVERBID, traits=["Wiry"], now=300.0)


def howls_at_dawn(health: HealthLevel, lost: int = 0):  # type: ignore[no-untyped-def]
    """Howls-at-Dawn: 6 Physical Traits, less ``lost`` Quick ones."""
    return character(
        20,
        "Howls-at-Dawn",
        traits(PHYSICAL, "Tough", f"Quick*{5 - lost}" if lost < 5 else "Tough"),
        health=health,
    )


def logan():  # type: ignore[no-untyped-def]
    """Logan: 8 Physical Traits."""
    return character(21, "Logan", traits(PHYSICAL, "Brawny*4", "Ferocious*4"))


def test_bruised_howls_at_dawn_must_risk_two_traits_logan_one() -> None:
    """seeds/000 "Health", Example: Bruised, Howls-at-Dawn must risk two
    Traits to defend himself from Logan; Logan only needs to risk one."""
    state = opposed(
        "met_classic", logan(), howls_at_dawn(HealthLevel.BRUISED), PHYSICAL, ["Brawny"]
    )
    assert legal_moves(state, DE).bid == 2
    before = state.to_dict()
    with pytest.raises(RulesError, match="must bid 2 Traits"):
        respond(state, bids=["Tough"], now=200.0)
    assert state.to_dict() == before
    state = respond(state, bids=["Tough", "Quick"], now=200.0).state
    assert state.defender_bids == ("Tough", "Quick")
    # As challenger, Bruised Howls-at-Dawn also bids two.
    with pytest.raises(RulesError, match="must bid 2 Traits"):
        opposed("met_classic", howls_at_dawn(HealthLevel.BRUISED), logan(), PHYSICAL, ["Tough"])


def wounded_howls_vs_logan() -> ChallengeState:
    """Howls-at-Dawn, Wounded and three Physical Traits down, bids two
    against Logan's attack."""
    howls = howls_at_dawn(HealthLevel.WOUNDED, lost=3)
    assert howls.count(PHYSICAL) == 3
    return opposed(
        "met_classic", logan(), howls, PHYSICAL, ["Brawny"], ["Tough", "Quick"], is_attack=True
    )


@pytest.mark.parametrize(
    ("first", "second", "outcome"),
    [
        (WIN, None, Outcome.CHALLENGER_WINS),
        (TIE, None, Outcome.CHALLENGER_WINS),
        (LOSE, WIN, Outcome.CHALLENGER_WINS),
        (LOSE, TIE, Outcome.CHALLENGER_WINS),
        (LOSE, LOSE, Outcome.DEFENDER_WINS),
    ],
    ids=["win", "tie", "lose then win", "lose then tie", "lose both"],
)
def test_wounded_howls_at_dawn_loses_if_logan_wins_or_ties_either_of_two_tests(
    first: tuple, second: tuple | None, outcome: Outcome
) -> None:
    """seeds/000 "Health", Example: Wounded, Howls-at-Dawn must risk two
    Traits, loses on ties, and Logan (more Traits) gets two tests: if he wins
    or ties either, Howls-at-Dawn is Incapacitated."""
    state = wounded_howls_vs_logan()
    t = played(state, first)
    state = t.state
    if second is not None:
        assert state.stage is Stage.THROWS and len(state.tests) == 2
        assert state.tests[1].retest is RetestKind.WOUNDED and state.tests[1].by is CH
        t = played(state, second, now=300.0)
        state = t.state
    if state.stage is Stage.RETEST:
        # Howls-at-Dawn (3 Traits) cannot overbid Logan (8); nothing else is open.
        state = accept(state, side=state.retest_side, now=400.0).state  # type: ignore[arg-type]
    assert state.outcome is outcome
    if outcome is Outcome.CHALLENGER_WINS:
        assert state.wounds == (20,)
        assert sorted(x.trait for x in state.losses) == ["Quick", "Tough"]
    else:
        assert state.wounds == (21,)
        assert [x.trait for x in state.losses] == ["Brawny"]


def test_the_free_extra_test_is_held_only_once() -> None:
    """seeds/000 "Health": the opponent gets *a* free extra test."""
    state = wounded_howls_vs_logan()
    state = played(state, LOSE).state
    state = played(state, LOSE, now=300.0).state
    # No third free test: Logan may still overbid (8 >= 2x3), or accept.
    assert state.stage is Stage.RETEST and state.retest_side is CH
    assert legal_moves(state, CH).retests == (RetestKind.OVERBID,)
    state = accept(state, side=CH, now=400.0).state
    assert state.outcome is Outcome.DEFENDER_WINS
    assert [t.retest for t in state.tests] == [None, RetestKind.WOUNDED]


def test_incapacitated_may_not_enter_challenges_met_classic() -> None:
    """seeds/000 "Health": Incapacitated, she "may not enter into challenges
    until she has healed at least one Health Level": not as challenger, and
    as defender she can only relent."""
    down = howls_at_dawn(HealthLevel.INCAPACITATED)
    with pytest.raises(RulesError, match="incapacitated"):
        opposed("met_classic", down, logan(), PHYSICAL, ["Tough", "Quick"])
    state = opposed("met_classic", logan(), down, PHYSICAL, ["Brawny"], is_attack=True)
    moves = legal_moves(state, DE)
    assert moves.bid == 0 and moves.relent
    with pytest.raises(RulesError, match="only relent"):
        respond(state, bids=["Tough", "Quick"], now=200.0)
    state = relent(state, side=DE, now=200.0).state
    assert state.outcome is Outcome.CHALLENGER_WINS and state.losses == ()


# --- seeds/004: ukm ------------------------------------------------------------------


def brawler(**more):  # type: ignore[no-untyped-def]
    """The attacker: 6 Physical Traits, Brawl 2."""
    return character(
        30, "Brawler", traits(PHYSICAL, "Brawny*3", "Quick*3"), abilities={"Brawl": 2}, **more
    )


def dodger(dodge: int = 3, **more):  # type: ignore[no-untyped-def]
    """The defender: 6 Physical Traits (Tough Stamina-based), Dodge ``dodge``."""
    held = (
        TraitHolding("Tough", PHYSICAL, 3, stamina=True),
        TraitHolding("Nimble", PHYSICAL, 3),
    )
    return character(31, "Dodger", held, abilities={"Dodge": dodge}, **more)


def punch(challenger=None, defender=None, **options):  # type: ignore[no-untyped-def]
    """ukm: the Brawler punches the Dodger, who answers with Tough."""
    return opposed(
        "ukm",
        challenger or brawler(),
        defender or dodger(),
        PHYSICAL,
        ["Brawny"],
        ["Tough"],
        is_attack=True,
        **options,
    )


def test_ukm_dodge_retest_against_brawl_is_granted_when_dodge_is_higher() -> None:
    """seeds/004 "Retrying The Test In An Ability-Based Challenge": the loser
    declares her ability, the other his; if she has more, she gets one
    Re-Test. Dodging a punch compares Brawl and Dodge. Abilities are neither
    bid nor lost."""
    state = played(punch(), WIN).state
    assert state.stage is Stage.RETEST and state.retest_side is DE
    assert RetestKind.ABILITY in legal_moves(state, DE).retests
    state = call_retest(state, side=DE, kind=RetestKind.ABILITY, name="dodge", now=300.0).state
    assert state.pending is not None and (state.pending.name, state.pending.rating) == ("Dodge", 3)
    assert legal_moves(state, CH).answer is RetestKind.ABILITY
    t = answer_retest(state, side=CH, name="Brawl", now=301.0)
    assert t.events[0].data["granted"] is True
    state = played(t.state, LOSE, now=400.0).state
    assert state.outcome is Outcome.DEFENDER_WINS
    assert state.losses == (Loss(30, "Brawny", PHYSICAL),)
    assert state.wounds == (30,)


@pytest.mark.parametrize("dodge", [1, 2])
def test_ukm_dodge_retest_is_refused_unless_dodge_exceeds_brawl(dodge: int) -> None:
    """seeds/004 "Retrying The Test…": "If he has more, he gets one Re-Test"."""
    state = played(punch(defender=dodger(dodge)), WIN).state
    state = call_retest(state, side=DE, kind=RetestKind.ABILITY, name="Dodge", now=300.0).state
    t = answer_retest(state, side=CH, name="Brawl", now=301.0)
    assert t.events[0].data["granted"] is False
    assert len(t.state.tests) == 1
    # The ability retest is used up: it is not offered again.
    assert RetestKind.ABILITY not in legal_moves(t.state, DE).retests


def test_ukm_ability_retest_is_once_per_challenge() -> None:
    """seeds/004 "Challenge Re-Tests": one Ability based Re-Test."""
    state = played(punch(), WIN).state
    state = call_retest(state, side=DE, kind=RetestKind.ABILITY, name="Dodge", now=300.0).state
    state = answer_retest(state, side=CH, name="Brawl", now=301.0).state
    state = played(state, WIN, now=400.0).state
    if state.stage is Stage.RETEST:
        assert RetestKind.ABILITY not in legal_moves(state, DE).retests
        with pytest.raises(RulesError):
            call_retest(state, side=DE, kind=RetestKind.ABILITY, name="Dodge", now=500.0)
    else:
        assert state.outcome is Outcome.CHALLENGER_WINS


def dominator(**more):  # type: ignore[no-untyped-def]
    """An attacker with Dominate: 6 Mental Traits."""
    return character(40, "Dominator", traits(MENTAL, "Cunning*3", "Clever*3"), **more)


def mind(willpower: int = 1, **more):  # type: ignore[no-untyped-def]
    """A defender with 6 Mental Traits and ``willpower`` Willpower."""
    return character(
        41, "Mind", traits(MENTAL, "Wise*3", "Shrewd*3"), pools={Pool.WILLPOWER: willpower}, **more
    )


def dominate(defender=None, challenger=None, now: float = 100.0):  # type: ignore[no-untyped-def]
    return opposed(
        "ukm",
        challenger or dominator(),
        defender or mind(),
        MENTAL,
        ["Cunning"],
        ["Wise"],
        power="Dominate",
        now=now,
    )


def test_ukm_willpower_retest_fends_off_and_gives_ten_minutes_immunity() -> None:
    """seeds/004 "Retrying The Test…": losing a Mental or Social challenge, a
    defender may spend a Willpower point for one Re-Test, the last allowed,
    whose outcome is final; if it fends off the attack she is immune to that
    attacker using the same power for ten minutes."""
    state = played(dominate(), WIN).state
    assert RetestKind.WILLPOWER in legal_moves(state, DE).retests
    t = call_retest(state, side=DE, kind=RetestKind.WILLPOWER, now=300.0)
    state = t.state
    assert state.spent == ((41, Pool.WILLPOWER, 1),)
    assert state.tests[-1].retest is RetestKind.WILLPOWER
    state = played(state, LOSE, now=400.0).state
    assert state.outcome is Outcome.DEFENDER_WINS
    assert state.losses == (Loss(40, "Cunning", MENTAL),)
    immunity = Immunity(40, "Dominate", 401.0 + 600)
    assert state.granted == ((41, immunity),)
    immune = mind(immunities=(immunity,))
    with pytest.raises(RulesError, match="immune"):
        dominate(defender=immune, now=900.0)
    # Another power, another attacker, or after ten minutes: allowed.
    open_opposed(
        ruleset="ukm",
        challenger=dominator(),
        defender=immune,
        category=MENTAL,
        bids=["Cunning"],
        power="Dementation",
        now=900.0,
    )
    other = character(42, "Other", traits(MENTAL, "Cunning"))
    dominate(defender=immune, challenger=other, now=900.0)
    dominate(defender=immune, now=1002.0)


def test_ukm_willpower_retest_is_final_even_when_lost() -> None:
    """seeds/004: the Willpower Re-Test "cancels out all others, and the
    outcome is final": no further retest for either side."""
    state = played(dominate(defender=mind(willpower=3)), WIN).state
    state = call_retest(state, side=DE, kind=RetestKind.WILLPOWER, now=300.0).state
    state = played(state, WIN, now=400.0).state
    assert state.outcome is Outcome.CHALLENGER_WINS
    assert state.granted == ()
    assert state.losses == (Loss(41, "Wise", MENTAL),)


def test_ukm_willpower_is_only_for_a_defender_in_mental_or_social_challenges() -> None:
    """seeds/004: "a defender may spend a Willpower point" in "a Mental or
    Social Challenge"; "willpower can only be used defensively"."""
    willing = dominator(pools={Pool.WILLPOWER: 2})
    state = played(dominate(challenger=willing), LOSE).state
    assert (
        state.stage is Stage.RESOLVED or RetestKind.WILLPOWER not in legal_moves(state, CH).retests
    )
    state = played(punch(defender=dodger(pools={Pool.WILLPOWER: 2})), WIN).state
    assert RetestKind.WILLPOWER not in legal_moves(state, DE).retests
    state = played(dominate(defender=mind(willpower=0)), WIN).state
    assert (
        state.stage is Stage.RESOLVED or RetestKind.WILLPOWER not in legal_moves(state, DE).retests
    )


def test_ukm_discipline_retest_is_cancelled_by_the_same_discipline() -> None:
    """seeds/004 "Challenge Re-Tests": "One Discipline based Re-Test, if
    appropriate. Identical Re-Tests cancel each other out."""
    attacker = dominator(disciplines={"Dominate": 2})
    defender = mind(disciplines={"Dominate": 1})
    state = played(dominate(challenger=attacker, defender=defender), LOSE).state
    assert legal_moves(state, CH).retests[0] is RetestKind.DISCIPLINE
    called = call_retest(
        state, side=CH, kind=RetestKind.DISCIPLINE, name="Dominate", now=300.0
    ).state
    t = answer_retest(called, side=DE, cancel=True, now=301.0)
    assert t.events[0].data["granted"] is False and t.events[0].data["cancelled"] is True
    assert len(t.state.tests) == 1
    assert RetestKind.DISCIPLINE not in legal_moves(t.state, CH).retests
    # Not cancelled, the retest is held.
    t = answer_retest(called, side=DE, now=301.0)
    assert t.state.stage is Stage.THROWS and t.state.tests[-1].retest is RetestKind.DISCIPLINE
    # Only the same Discipline cancels it.
    other = played(dominate(challenger=attacker), LOSE).state
    other = call_retest(
        other, side=CH, kind=RetestKind.DISCIPLINE, name="Dominate", now=300.0
    ).state
    before = other.to_dict()
    with pytest.raises(RulesError, match="no Dominate"):
        answer_retest(other, side=DE, cancel=True, now=301.0)
    assert other.to_dict() == before


@pytest.mark.parametrize(
    ("announced", "revealed", "granted"),
    [(10, 5, True), (10, 6, False), (9, 4, True), (9, 5, False), (12, 3, True)],
)
def test_ukm_overbid_fails_when_the_other_reveals_more_than_half(
    announced: int, revealed: int, granted: bool
) -> None:
    """seeds/004 (overbid paragraph under "Expending Blood"): the overbidder
    announces a number of Traits and risks none; "If the defender reveals
    that he has more than half this number of Traits, the overbid fails"."""
    strong = character(50, "Elder", traits(SOCIAL, "Regal*6", "Eloquent*6"))
    weak = character(51, "Cub", traits(SOCIAL, "Witty*3", "Genial*3"))
    state = opposed("ukm", strong, weak, SOCIAL, ["Regal"], ["Witty"])
    state = played(state, LOSE).state
    assert RetestKind.OVERBID in legal_moves(state, CH).retests
    state = call_retest(state, side=CH, kind=RetestKind.OVERBID, count=announced, now=300.0).state
    assert state.challenger_bids == ("Regal",)  # no new Trait risked
    t = answer_retest(state, side=DE, count=revealed, now=301.0)
    assert t.events[0].data["granted"] is granted
    assert (t.state.stage is Stage.THROWS) is granted
    if not granted:
        assert t.state.outcome is Outcome.DEFENDER_WINS
        assert t.state.losses == (Loss(50, "Regal", SOCIAL),)


@pytest.mark.parametrize("side", [CH, DE])
def test_ukm_either_side_may_relent_before_the_test(side) -> None:  # type: ignore[no-untyped-def]
    """seeds/004 "The Challenge": "Either party may relent at any time up until
    the Test. If they do, the action as described by the other party takes
    place, but no Traits are lost."""
    state = punch()
    assert legal_moves(state, side).relent
    t = relent(state, side=side, now=300.0)
    assert t.state.outcome is (Outcome.DEFENDER_WINS if side is CH else Outcome.CHALLENGER_WINS)
    assert t.state.losses == ()
    assert t.state.wounds == (() if side is CH else (31,))
    # Once the test is revealed, nobody may relent.
    after = played(punch(), TIE).state
    assert not legal_moves(after, side).relent
    with pytest.raises(RulesError, match="cannot relent"):
        relent(after, side=side, now=300.0)


def test_met_classic_challenger_may_not_relent_after_bidding() -> None:
    """seeds/000: only the defender relents, when answering."""
    state = opposed(
        "met_classic", logan(), howls_at_dawn(HealthLevel.HEALTHY), PHYSICAL, ["Brawny"]
    )
    assert not legal_moves(state, CH).relent and legal_moves(state, DE).relent
    with pytest.raises(RulesError, match="cannot relent"):
        relent(state, side=CH, now=200.0)


def test_ukm_draws_are_retested_until_an_outright_win_and_declared_counts_stand() -> None:
    """seeds/004 "In The Case Of A Draw": the attacker first, then the
    defender, reveal a number of Traits; "cannot change your declaration that
    Challenge"; "If both characters still draw 'on Traits', they Re-Test until
    there is an outright winner"."""
    state = punch()
    state = played(state, TIE).state
    assert state.stage is Stage.DECLARE_CHALLENGER
    state = declare(state, side=CH, count=5, now=300.0).state
    assert legal_moves(state, DE).declare == 6
    t = declare(state, side=DE, count=5, now=301.0)
    assert t.state.stage is Stage.THROWS and t.state.tests[-1].retest is RetestKind.EQUAL_COUNTS
    assert (t.state.challenger_standing, t.state.defender_standing) == (5, 5)
    # A second tie compares the standing counts at once: another retest.
    t = played(t.state, TIE, now=400.0)
    assert "tied" not in kinds(t) and t.state.stage is Stage.THROWS
    assert len(t.state.tests) == 3
    state = played(t.state, WIN, now=500.0).state
    if state.stage is Stage.RETEST:
        state = accept(state, side=DE, now=600.0).state
    assert state.outcome is Outcome.CHALLENGER_WINS
    assert state.losses == (Loss(31, "Tough", PHYSICAL),)


def test_ukm_bruised_is_one_trait_down() -> None:
    """seeds/004 "Trait Categories": Bruised - one Trait down in Challenges
    (she bids one Trait, not two)."""
    state = opposed("ukm", brawler(), dodger(health=HealthLevel.BRUISED), PHYSICAL, ["Brawny"])
    assert legal_moves(state, DE).bid == 1
    state = respond(state, bids=["Tough"], now=200.0).state
    assert modifiers(state, DE) == (("Bruised", -1),)
    state = played(state, TIE).state
    state = declare(state, side=CH, count=6, now=300.0).state
    t = declare(state, side=DE, count=6, now=301.0)
    assert t.events[1].data == {"challenger": 6, "defender": 5}
    state = t.state
    if state.stage is Stage.RETEST:
        state = accept(state, side=DE, now=400.0).state
    assert state.outcome is Outcome.CHALLENGER_WINS


def test_ukm_wounded_loses_ties_and_a_stronger_opponent_gets_a_free_retest() -> None:
    """seeds/004 "Trait Categories": Wounded - "You lose all ties
    automatically without comparing Traits, and if your opponent has more
    Traits than you, he gets a free Re-Test" (she bids one Trait)."""
    hurt = character(31, "Dodger", traits(PHYSICAL, "Tough*2"), health=HealthLevel.WOUNDED)
    state = opposed("ukm", brawler(), hurt, PHYSICAL, ["Brawny"])
    assert legal_moves(state, DE).bid == 1
    state = respond(state, bids=["Tough"], now=200.0).state
    t = played(state, TIE)
    assert "tie_lost" in kinds(t) and "tied" not in kinds(t)
    assert t.state.outcome is Outcome.CHALLENGER_WINS
    t = played(state, LOSE)
    assert t.state.stage is Stage.THROWS and t.state.tests[-1].retest is RetestKind.WOUNDED


def test_ukm_incapacitated_cannot_initiate_but_defends() -> None:
    """seeds/004 "Trait Categories": Incapacitated - "unable to Initiate
    Challenges"; her opponent will normally qualify for Surprise."""
    down = dodger(health=HealthLevel.INCAPACITATED)
    with pytest.raises(RulesError, match="cannot start a challenge"):
        opposed("ukm", down, brawler(), PHYSICAL, ["Tough"])
    state = opposed("ukm", brawler(), down, PHYSICAL, ["Brawny"], surprise=True)
    assert legal_moves(state, DE).bid == 1
    state = respond(state, bids=["Tough"], now=200.0).state
    assert state.stage is Stage.THROWS


def test_ukm_surprised_defender_bids_stamina_traits_only_and_cannot_harm_the_attacker() -> None:
    """seeds/004, Surprise: the surprised "may not harm the attacker, even if
    he wins", "may only defend with Stamina based physical Traits", cannot
    burn blood for Traits and "cannot use a Brawl, Melee or Dodge Re-Test"."""
    state = opposed(
        "ukm",
        brawler(),
        dodger(pools={Pool.BLOOD: 5}),
        PHYSICAL,
        ["Brawny"],
        is_attack=True,
        surprise=True,
    )
    with pytest.raises(RulesError, match="Stamina-based"):
        respond(state, bids=["Nimble"], now=200.0)
    assert legal_moves(state, DE).blood == 0
    with pytest.raises(RulesError, match="cannot spend Blood"):
        spend_blood(state, side=DE, amount=1, now=200.0)
    state = respond(state, bids=["Tough"], now=200.0).state
    # She counts only her 3 Stamina-based Traits in a tie.
    tied = declare(played(state, TIE).state, side=CH, count=6, now=300.0).state
    assert legal_moves(tied, DE).declare == 3
    # No ability retest when she loses a test.
    lost = played(state, WIN).state
    assert lost.stage is Stage.RESOLVED or RetestKind.ABILITY not in legal_moves(lost, DE).retests
    # Winning, she does not harm the attacker.
    won = played(state, LOSE).state
    if won.stage is Stage.RETEST:
        won = accept(won, side=CH, now=400.0).state
    assert won.outcome is Outcome.DEFENDER_WINS
    assert won.wounds == ()
    assert won.losses == (Loss(30, "Brawny", PHYSICAL),)


def test_met_classic_has_no_surprise() -> None:
    """Surprise is seeds/004's rule, not seeds/000's."""
    with pytest.raises(RulesError, match="Surprise"):
        opposed("met_classic", logan(), connor(), PHYSICAL, ["Brawny"], surprise=True)


KNIFE = Weapon("Knife", bonus=2, ability="Melee")
PISTOL = Weapon("Pistol", bonus=2, ability="Firearms", ranged=True)


@pytest.mark.parametrize(("melee", "expected"), [(True, (("Knife", 2),)), (False, ())])
def test_ukm_weapon_bonus_counts_in_ties_only_with_the_matching_ability(
    melee: bool, expected: tuple
) -> None:
    """seeds/004 "Weapons / Ranged Combat": bonus Traits "added in the case of
    a draw"; "You require Melee ability to gain the additional Traits from
    Melee weapons" but may use the weapon without them."""
    abilities = {"Brawl": 2, "Melee": 1} if melee else {"Brawl": 2}
    armed = character(
        30, "Brawler", traits(PHYSICAL, "Brawny*3", "Quick*3"), abilities=abilities, weapons=[KNIFE]
    )
    state = punch(challenger=armed, weapon="knife")
    assert state.challenger_weapon == "Knife"
    assert modifiers(state, CH) == expected
    state = played(state, TIE).state
    state = declare(state, side=CH, count=6, now=300.0).state
    t = declare(state, side=DE, count=6, now=301.0)
    compared = next(e for e in t.events if e.kind == "compared")
    assert compared.data == {"challenger": 8 if melee else 6, "defender": 6}


@pytest.mark.parametrize(("armed", "wounded"), [(False, ()), (True, (30,))])
def test_ukm_unarmed_defender_cannot_counterattack_a_ranged_attack(armed: bool, wounded) -> None:  # type: ignore[no-untyped-def]
    """seeds/004 "Weapons / Ranged Combat": "if the defender is unarmed, he
    may not counterattack"."""
    shooter = character(
        30,
        "Shooter",
        traits(PHYSICAL, "Brawny*3", "Quick*3"),
        abilities={"Firearms": 2},
        weapons=[PISTOL],
    )
    defender = dodger(weapons=[KNIFE])
    state = opposed("ukm", shooter, defender, PHYSICAL, ["Brawny"], is_attack=True, weapon="Pistol")
    state = respond(state, bids=["Tough"], weapon="Knife" if armed else "", now=200.0).state
    state = played(state, LOSE).state
    if state.stage is Stage.RETEST:
        state = accept(state, side=CH, now=300.0).state
    assert state.outcome is Outcome.DEFENDER_WINS
    assert state.wounds == wounded


def test_ukm_blood_up_to_three_or_the_generation_limit_before_the_test() -> None:
    """seeds/004 "Expending Blood": up to three Blood for one Physical Trait
    each (subject to generation limit), at any time before the Test; they
    count in the totals of a draw."""
    vampire = brawler(pools={Pool.BLOOD: 10})
    state = opposed("ukm", vampire, dodger(), PHYSICAL, ["Brawny"])
    assert legal_moves(state, CH).blood == 3
    with pytest.raises(RulesError, match="at most 3"):
        spend_blood(state, side=CH, amount=4, now=150.0)
    state = spend_blood(state, side=CH, amount=2, now=150.0).state
    state = respond(state, bids=["Tough"], now=160.0).state
    assert legal_moves(state, CH).blood == 1
    state = spend_blood(state, side=CH, amount=1, now=170.0).state
    assert legal_moves(state, CH).blood == 0
    assert modifiers(state, CH) == (("Blood", 3),)
    assert state.spent == ((30, Pool.BLOOD, 2), (30, Pool.BLOOD, 1))
    tied = played(state, TIE).state
    assert legal_moves(tied, CH).blood == 0
    with pytest.raises(RulesError, match="cannot spend Blood"):
        spend_blood(tied, side=CH, amount=1, now=300.0)
    # A generation limit of 2 and a pool of 1 cap it lower.
    limited = opposed(
        "ukm", brawler(pools={Pool.BLOOD: 10}, blood_limit=2), dodger(), PHYSICAL, ["Brawny"]
    )
    assert legal_moves(limited, CH).blood == 2
    poor = opposed("ukm", brawler(pools={Pool.BLOOD: 1}), dodger(), PHYSICAL, ["Brawny"])
    assert legal_moves(poor, CH).blood == 1
    # Not in met_classic, not outside Physical challenges.
    classic = opposed("met_classic", vampire, dodger(), PHYSICAL, ["Brawny"])
    assert legal_moves(classic, CH).blood == 0


def test_ukm_blood_cannot_pay_for_a_wrong_negative_trait_call() -> None:
    """seeds/004 "Negative Traits": the announcer "must always be able to pay
    the price of being wrong"; "Blood Traits may not be used to counter
    negative Traits in a Physical Challenge"."""
    one = character(
        30,
        "Fledgling",
        traits(PHYSICAL, "Quick"),
        pools={Pool.BLOOD: 5},
        health=HealthLevel.BRUISED,
    )
    state = opposed("ukm", one, dodger(), PHYSICAL, ["Quick"])
    state = spend_blood(state, side=CH, amount=3, now=150.0).state
    state = respond(state, bids=["Tough"], now=160.0).state
    # 1 Trait, Bruised (−1): nothing to drop if wrong, whatever her Blood.
    assert not legal_moves(state, CH).call
    with pytest.raises(RulesError, match="could not pay"):
        call_negative(state, side=CH, name="Clumsy", now=170.0)


def test_ukm_negative_traits_are_one_trait_down_in_ties() -> None:
    """seeds/004 "Negative Traits": correct, the opponent is one Trait down in
    the event of a draw; wrong, the announcer is."""
    clumsy = character(31, "Dodger", traits(PHYSICAL, "Tough*3", "Nimble*3", negatives=["Clumsy"]))
    state = punch(defender=clumsy)
    state = call_negative(state, side=CH, name="Clumsy", now=150.0).state
    state = call_negative(state, side=DE, name="Lame", now=151.0).state
    assert state.challenger_owed == 0 and state.defender_owed == 0
    assert modifiers(state, DE) == (("Clumsy: Negative Trait", -1), ("Lame: wrong call", -1))
    assert modifiers(state, CH) == ()


def test_ukm_difficult_test_needs_an_outright_win() -> None:
    """seeds/004 "Difficult Test": "the character must outright win the test.
    A draw is not sufficient." seeds/000 has no difficult test."""

    def difficult(narrator):  # type: ignore[no-untyped-def]
        return open_simple(
            ruleset="ukm",
            challenger=dodger(),
            narrator_throw=narrator,
            choose=None,
            difficult=True,
            now=1.0,
        ).state

    assert throw(difficult(R), side=CH, throw=R, now=2.0).state.outcome is Outcome.DEFENDER_WINS
    assert throw(difficult(S), side=CH, throw=R, now=2.0).state.outcome is Outcome.CHALLENGER_WINS
    with pytest.raises(RulesError, match="Difficult tests"):
        open_simple(
            ruleset="met_classic",
            challenger=dodger(),
            narrator_throw=R,
            choose=None,
            difficult=True,
            now=1.0,
        )


@pytest.mark.parametrize(
    ("ruleset", "narrator_initiated", "outcome"),
    [
        ("ukm", False, Outcome.CHALLENGER_WINS),
        ("ukm", True, Outcome.DEFENDER_WINS),
        ("met_classic", False, Outcome.CHALLENGER_WINS),
        ("met_classic", True, Outcome.CHALLENGER_WINS),
    ],
)
def test_simple_test_ties_go_to_the_initiator_in_ukm_and_succeed_in_met_classic(
    ruleset: str, narrator_initiated: bool, outcome: Outcome
) -> None:
    """seeds/004 "Simple Test": "the initiator winning draws"; seeds/000
    "Simple Tests": the player succeeds on a win or a tie."""
    state = open_simple(
        ruleset=ruleset,
        challenger=dodger(),
        narrator_throw=P,
        choose=None,
        narrator_initiated=narrator_initiated,
        now=1.0,
    ).state
    assert throw(state, side=CH, throw=P, now=2.0).state.outcome is outcome


def test_ukm_static_challenge_only_the_aggressor_loses_a_trait() -> None:
    """seeds/004 "Static Challenges": compared against a pre-determined
    difficulty in a draw; only the aggressor loses a Trait."""
    state = open_static(
        ruleset="ukm",
        challenger=dodger(),
        category=PHYSICAL,
        difficulty=5,
        narrator_throw=R,
        choose=None,
        now=1.0,
    ).state
    state = static_bid(state, bids=["Nimble"], now=2.0).state
    state = throw(state, side=CH, throw=R, now=3.0).state
    t = declare(state, side=CH, count=4, now=4.0)
    state = t.state
    if state.stage is Stage.RETEST:
        state = accept(state, side=CH, now=5.0).state
    assert state.outcome is Outcome.DEFENDER_WINS
    assert state.losses == (Loss(31, "Nimble", PHYSICAL),)


def test_no_free_extra_test_against_a_wounded_character_with_more_traits() -> None:
    """seeds/000 "Health": "If she has less Traits, her opponent gets a free
    extra test": a Wounded Logan (8 Traits) still loses ties, but the weaker
    Howls-at-Dawn (6) gets no free test when he loses one."""
    hurt_logan = character(21, "Logan", traits(PHYSICAL, "Brawny*4", "Ferocious*4"), health=2)
    howls = howls_at_dawn(HealthLevel.HEALTHY)
    state = opposed("met_classic", howls, hurt_logan, PHYSICAL, ["Tough"], ["Brawny", "Ferocious"])
    t = played(state, LOSE)
    assert all(test.retest is not RetestKind.WOUNDED for test in t.state.tests)
    assert t.state.stage in (Stage.RETEST, Stage.RESOLVED)
    assert played(state, TIE).state.outcome is Outcome.CHALLENGER_WINS


def test_ukm_the_other_side_answers_an_ability_retest_only_with_her_own_ability() -> None:
    """seeds/004 "Retrying The Test…": each side declares her own rating."""
    state = played(punch(), WIN).state
    state = call_retest(state, side=DE, kind=RetestKind.ABILITY, name="Dodge", now=300.0).state
    before = state.to_dict()
    with pytest.raises(RulesError, match="no Ability 'Occult'"):
        answer_retest(state, side=CH, name="Occult", now=301.0)
    with pytest.raises(RulesError, match="no retest for you to answer"):
        answer_retest(state, side=DE, name="Dodge", now=301.0)
    assert state.to_dict() == before
    # Naming none is a rating of 0: the retest is granted.
    t = answer_retest(state, side=CH, now=301.0)
    assert t.events[0].data == {
        "side": "challenger",
        "kind": "ability",
        "rating": 0,
        "granted": True,
    }
