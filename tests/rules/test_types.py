"""The engine's types: throws, health, Trait pools, rulesets, and the lossless
dict form of ChallengeState through JSON and msgpack."""

from __future__ import annotations

import json
from collections.abc import Callable

import msgpack
import pytest

import challenges.rules as rules
from challenges.rules import (
    RULESETS,
    Category,
    ChallengeState,
    Combatant,
    HealthLevel,
    Outcome,
    RulesError,
    Side,
    Stage,
    Throw,
    TraitHolding,
    beats,
    bid,
    bids_required,
    declare,
    get_ruleset,
    open_opposed,
    open_simple,
    open_static,
    respond,
    throw,
    void,
)

PHYSICAL, MENTAL = Category.PHYSICAL, Category.MENTAL
R, P, S = Throw.ROCK, Throw.PAPER, Throw.SCISSORS
CH, DE = Side.CHALLENGER, Side.DEFENDER

# --- throws ---------------------------------------------------------------------

BEATS = [
    (R, S, True),
    (S, P, True),
    (P, R, True),
    (S, R, False),
    (P, S, False),
    (R, P, False),
    (R, R, False),
    (P, P, False),
    (S, S, False),
]


def _beats_id(a: Throw, b: Throw, wins: bool) -> str:
    if a is b:
        return f"{a.value} ties {b.value}"
    return f"{a.value} beats {b.value}" if wins else f"{a.value} loses to {b.value}"


@pytest.mark.parametrize(("a", "b", "wins"), BEATS, ids=[_beats_id(*row) for row in BEATS])
def test_rock_paper_scissors(a: Throw, b: Throw, wins: bool) -> None:
    assert beats(a, b) is wins
    if a is not b:
        assert beats(b, a) is not wins


def test_enums_are_json_safe_strings() -> None:
    assert json.dumps([R, PHYSICAL, CH, Stage.THROWS, Outcome.DRAW]) == (
        '["rock", "physical", "challenger", "throws", "draw"]'
    )
    assert isinstance(R, str) and Throw("paper") is P


# --- health ---------------------------------------------------------------------

HEALTH = [
    (HealthLevel.HEALTHY, HealthLevel.BRUISED, "Healthy"),
    (HealthLevel.BRUISED, HealthLevel.WOUNDED, "Bruised"),
    (HealthLevel.WOUNDED, HealthLevel.INCAPACITATED, "Wounded"),
    (HealthLevel.INCAPACITATED, HealthLevel.MORTALLY_WOUNDED, "Incapacitated"),
    (HealthLevel.MORTALLY_WOUNDED, HealthLevel.DEAD, "Mortally Wounded"),
    (HealthLevel.DEAD, HealthLevel.DEAD, "Dead"),
]


@pytest.mark.parametrize(
    ("level", "after", "label"), HEALTH, ids=[f"a wound makes {r[2]} worse" for r in HEALTH]
)
def test_a_wound_costs_one_health_level(level: HealthLevel, after: HealthLevel, label: str) -> None:
    assert level.worse() is after
    assert level.label == label


def test_health_levels_are_ordered_integers() -> None:
    assert [int(h) for h in HealthLevel] == [0, 1, 2, 3, 4, 5]


# --- Trait pools ----------------------------------------------------------------


def test_a_combatants_count_ignores_negative_traits_and_other_categories() -> None:
    who = Combatant(
        3,
        "Ray",
        (
            TraitHolding("Quick", PHYSICAL, 3, at_risk=2),
            TraitHolding("Brawny", PHYSICAL, 0),
            TraitHolding("Clumsy", PHYSICAL, 2, negative=True),
            TraitHolding("Cunning", MENTAL, 4),
        ),
    )
    assert who.count(PHYSICAL) == 3  # bid (at risk) copies included
    assert who.count(MENTAL) == 4
    assert who.count(Category.SOCIAL) == 0
    assert who.free("Quick", PHYSICAL) == 1
    assert who.free("quick", PHYSICAL) == 1
    assert who.free("Quick", MENTAL) == 0
    assert who.free("Clumsy", PHYSICAL) == 0
    assert who.free("Brawny", PHYSICAL) == 0


def test_trait_holdings_take_category_values_and_refuse_negative_counts() -> None:
    assert TraitHolding("Quick", "physical", 1).category is PHYSICAL  # type: ignore[arg-type]
    assert Combatant(1, "A", [], 2).health is HealthLevel.WOUNDED  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        TraitHolding("Quick", PHYSICAL, -1)


# --- rulesets ---------------------------------------------------------------------


def test_the_rulesets_are_met_classic_ukm_bns_and_storytelling() -> None:
    assert set(RULESETS) == {"met_classic", "ukm", "bns", "storytelling"}
    classic = get_ruleset("met_classic")
    assert classic.draw_on_equal_counts and classic.simple_test_tie_succeeds
    ukm = get_ruleset("ukm")
    assert not ukm.draw_on_equal_counts and not ukm.simple_test_tie_succeeds
    assert get_ruleset("bns").sheet is rules.SheetKind.ATTRIBUTES
    assert get_ruleset("storytelling").sheet is rules.SheetKind.DICE


def test_an_unknown_ruleset_is_refused() -> None:
    with pytest.raises(RulesError, match="Unknown ruleset 'exalted'"):
        get_ruleset("exalted")
    with pytest.raises(RulesError, match="Unknown ruleset 'exalted'"):
        rules.met_ruleset("exalted")


def test_the_met_engine_opens_nothing_in_a_ruleset_with_no_trait_bids() -> None:
    """``bns`` (seeds/002) bids no Traits: a MET mob scene (or challenge) is refused."""
    with pytest.raises(RulesError, match="By Night Studios MET: its sheets have no Traits"):
        rules.open_mob(ruleset="bns", category=rules.Category.PHYSICAL, participants=[], now=0.0)


@pytest.mark.parametrize(
    ("health", "classic", "ukm"),
    [
        (HealthLevel.HEALTHY, 1, 1),
        (HealthLevel.BRUISED, 2, 1),
        (HealthLevel.WOUNDED, 2, 1),
        (HealthLevel.INCAPACITATED, 2, 1),
    ],
    ids=lambda v: v.label if isinstance(v, HealthLevel) else str(v),
)
def test_bids_required_follows_the_presets_wound_rules(
    health: HealthLevel, classic: int, ukm: int
) -> None:
    """seeds/000 "Health": Bruised and Wounded bid two Traits; seeds/004 "Trait
    Categories": one Trait down instead, so one bid."""
    assert bids_required(Combatant(1, "A", (), health), "met_classic") == classic
    assert bids_required(Combatant(1, "A", (), health), get_ruleset("ukm")) == ukm


def test_the_package_exports_the_whole_api() -> None:
    for name in rules.__all__:
        assert hasattr(rules, name), name


# --- round trips ------------------------------------------------------------------


def _pool(character_id: int, name: str) -> Combatant:
    return Combatant(
        character_id,
        name,
        (
            TraitHolding("Ferocious", PHYSICAL, 2, at_risk=1),
            TraitHolding("Quick", PHYSICAL, 3),
            TraitHolding("Clumsy", PHYSICAL, 1, negative=True),
            TraitHolding("Cunning", MENTAL, 2),
        ),
        HealthLevel.BRUISED,
    )


def _opposed_states() -> list[ChallengeState]:
    t = open_opposed(
        ruleset="met_classic",
        challenger=_pool(1, "Helen"),
        defender=_pool(2, "Grady"),
        category=PHYSICAL,
        bids=["Ferocious", "Quick"],
        is_attack=True,
        stakes='I bite — "hard" ✓',
        now=1700000000.123456,
    )
    states = [t.state]
    for step in (
        lambda s: respond(s, bids=["Quick", "Quick"], now=1700000001.5),
        lambda s: throw(s, side=DE, throw=S, now=1700000002.25),
        lambda s: throw(s, side=CH, throw=S, now=1700000003.0),
        lambda s: declare(s, side=CH, count=4, now=1700000004.0),
        lambda s: declare(s, side=DE, now=1700000005.0),
    ):
        states.append(step(states[-1]).state)
    return states


def _static_states() -> list[ChallengeState]:
    t = open_static(
        ruleset="met_classic",
        challenger=_pool(5, "Steps-in-Gum"),
        category=MENTAL,
        difficulty=4,
        narrator_throw=None,
        choose=lambda options: options[0],
        now=1.0,
    )
    states = [t.state, bid(t.state, bids=["Cunning", "Cunning"], now=2.0).state]
    states.append(throw(states[-1], side=CH, throw=R, now=3.0).state)
    states.append(declare(states[-1], side=CH, now=4.0).state)
    return states


def _simple_states() -> list[ChallengeState]:
    opened = open_simple(
        ruleset="met_classic", challenger=_pool(6, "Ray"), narrator_throw=P, choose=max, now=0.5
    ).state
    return [
        opened,
        throw(opened, side=CH, throw=S, now=0.75).state,
        void(opened, reason="", now=1).state,
    ]


SAMPLES: list[tuple[str, Callable[[], list[ChallengeState]]]] = [
    ("an opposed challenge at every stage", _opposed_states),
    ("a static challenge at every stage", _static_states),
    ("a simple test at every stage", _simple_states),
]


@pytest.mark.parametrize("make", [s[1] for s in SAMPLES], ids=[s[0] for s in SAMPLES])
@pytest.mark.parametrize(
    "codec",
    [
        lambda d: json.loads(json.dumps(d)),
        lambda d: msgpack.unpackb(msgpack.packb(d), raw=False),
    ],
    ids=["through json", "through msgpack"],
)
def test_a_state_survives_a_round_trip(
    make: Callable[[], list[ChallengeState]], codec: Callable[[dict], dict]
) -> None:
    for state in make():
        d = state.to_dict()
        back = ChallengeState.from_dict(codec(d))
        assert back == state
        assert back.to_dict() == d
        assert type(back.stage) is Stage and type(back.challenger.health) is HealthLevel


def test_the_dict_form_names_category_and_bids_at_the_top() -> None:
    d = _opposed_states()[1].to_dict()
    assert d["category"] == "physical"
    assert d["challenger_bids"] == ["Ferocious", "Quick"]
    assert d["defender_bids"] == ["Quick", "Quick"]
    assert d["schema"] == 1


def test_an_unknown_schema_is_refused() -> None:
    d = _opposed_states()[0].to_dict()
    d["schema"] = 99
    with pytest.raises(ValueError):
        ChallengeState.from_dict(d)
