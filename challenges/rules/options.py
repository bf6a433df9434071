"""MET rule options as data: one field per row of RULES.md "Where the rulesets
differ", so ``met_classic`` and ``ukm`` are two presets of one dataclass and a
club changes one rule with ``dataclasses.replace(MET_CLASSIC, ...)``.

Each field's ``metadata`` gives its RULES.md row (``row``) and its seed source
(``seed``: seeds/000 is ``met_classic``, seeds/004 is ``ukm``; the quoted names
are the seeds' section headings). The engine reads them through
``judge.options_of`` and ``rulesets``; READ_BY_ENGINE names those it reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, TypeVar

T = TypeVar("T")


class Relent(StrEnum):
    DEFENDER_AT_ONCE = "defender_at_once"  # defender loses at once, no Trait lost
    EITHER_SIDE_BEFORE_TEST = "either_side_before_test"  # other side's action happens


class EqualCounts(StrEnum):
    DRAW = "draw"  # both lose their bids
    RETEST_UNTIL_WIN = "retest_until_win"


class NegativeNamed(StrEnum):
    BID_ONE_MORE = "bid_one_more"  # correct: opponent bids one more; wrong: caller risks one
    ONE_TRAIT_DOWN = "one_trait_down"  # correct: opponent one down in ties; wrong: caller


class Overbid(StrEnum):
    NEW_TRAIT_DOUBLE_COUNT = "new_trait_double_count"  # risks a new Trait, needs >= 2x
    ANNOUNCE_MORE_THAN_HALF = "announce_more_than_half"  # no new Trait; fails if other > half


class Bruised(StrEnum):
    BID_TWO = "bid_two"
    ONE_TRAIT_DOWN = "one_trait_down"


class Wounded(StrEnum):
    BID_TWO_LOSE_TIES_FREE_TEST = "bid_two_lose_ties_free_test"
    LOSE_TIES_FREE_RETEST = "lose_ties_free_retest"


class Incapacitated(StrEnum):
    OUT_TEN_MINUTES = "out_ten_minutes"  # no challenges for 10 minutes
    CANNOT_INITIATE = "cannot_initiate"  # attackers normally qualify for Surprise


class StaticLoser(StrEnum):
    AS_OPPOSED = "as_opposed"  # the loser loses a Trait, as in an opposed challenge
    AGGRESSOR_ONLY = "aggressor_only"  # only the aggressor loses a Trait


class SimpleTie(StrEnum):
    SUCCEEDS = "succeeds"  # win or tie succeeds
    INITIATOR_WINS = "initiator_wins"


def _opt(default: T, row: str, seed: str) -> T:
    """An option's field: its default (``met_classic``'s), RULES.md row and seed source."""
    return field(default=default, metadata={"row": row, "seed": seed})


@dataclass(frozen=True)
class MetOptions:
    """The options of one MET preset. Frozen: change one with ``dataclasses.replace``.

    Defaults are ``met_classic``'s (seeds/000); ``UKM`` sets seeds/004's.
    """

    relent: Relent = _opt(
        Relent.DEFENDER_AT_ONCE, "relent", 'seeds/000 "Challenges"; seeds/004 "The Challenge"'
    )
    equal_counts: EqualCounts = _opt(
        EqualCounts.DRAW,
        "equal counts after a tie",
        'seeds/000 "Testing"; seeds/004 "In The Case Of A Draw"',
    )
    negative_named: NegativeNamed = _opt(
        NegativeNamed.BID_ONE_MORE,
        "Negative Trait named",
        'seeds/000 "Negative Traits"; seeds/004 "Negative Traits"',
    )
    overbid: Overbid = _opt(
        Overbid.NEW_TRAIT_DOUBLE_COUNT,
        "overbid",
        'seeds/000 "Overbidding"; seeds/004 "Challenge Re-Tests", "Expending Blood"',
    )
    ability_retest: bool = _opt(
        False, "other retests", 'seeds/004 "Retrying The Test In An Ability-Based Challenge"'
    )
    discipline_retest: bool = _opt(False, "other retests", 'seeds/004 "Challenge Re-Tests"')
    willpower_retest: bool = _opt(
        False, "other retests", 'seeds/004 "Retrying The Test In An Ability-Based Challenge"'
    )
    willpower_immunity_minutes: int = _opt(
        0, "other retests", 'seeds/004 "Retrying The Test In An Ability-Based Challenge"'
    )
    retests_limited: bool = _opt(False, "other retests", 'seeds/004 "Challenge Re-Tests"')
    declared_counts_stand: bool = _opt(False, "other retests", 'seeds/004 "In The Case Of A Draw"')
    bruised: Bruised = _opt(
        Bruised.BID_TWO, "Bruised", 'seeds/000 "Health"; seeds/004 "Trait Categories"'
    )
    wounded: Wounded = _opt(
        Wounded.BID_TWO_LOSE_TIES_FREE_TEST,
        "Wounded",
        'seeds/000 "Health"; seeds/004 "Trait Categories"',
    )
    incapacitated: Incapacitated = _opt(
        Incapacitated.OUT_TEN_MINUTES,
        "Incapacitated",
        'seeds/000 "Health"; seeds/004 "Trait Categories"',
    )
    incapacitated_minutes: int = _opt(
        10,
        "Incapacitated",
        'seeds/000 "Health" (ten minutes out of play); seeds/004 "Trait Categories" (none)',
    )
    static_loser: StaticLoser = _opt(
        StaticLoser.AS_OPPOSED,
        "static challenge",
        'seeds/000 "Static Challenges"; seeds/004 "Static Challenges"',
    )
    simple_test_tie: SimpleTie = _opt(
        SimpleTie.SUCCEEDS, "simple test", 'seeds/000 "Simple Tests"; seeds/004 "Simple Test"'
    )
    difficult_tests: bool = _opt(False, "simple test", 'seeds/004 "Difficult Test"')
    rage_preempt: bool = _opt(True, "extras", 'seeds/000 "Order of Challenges"')
    blood_traits_max: int = _opt(0, "extras", 'seeds/004 "Expending Blood"')
    weapon_bonus_in_ties: bool = _opt(False, "extras", 'seeds/004 "Weapons / Ranged Combat"')
    surprise: bool = _opt(False, "extras", 'seeds/004 "Negative Traits" (Surprise paragraph)')
    firearms_one_category: bool = _opt(False, "extras", 'seeds/004 "Trait Categories"')
    mob_attackers_max: int = _opt(0, "extras", 'seeds/004 "Mob Scenes"')
    mob_defender_bids_each: bool = _opt(
        True, "extras", 'seeds/000 "The Mob Scene"; seeds/004 "Mob Scenes"'
    )
    mob_extra_attackers_down: bool = _opt(False, "extras", 'seeds/004 "Mob Scenes"')
    mob_most_damaging_effect: bool = _opt(False, "extras", 'seeds/004 "Mob Scenes"')


MET_CLASSIC = MetOptions()
"""seeds/000, the options Narrator plays today."""

UKM = MetOptions(
    relent=Relent.EITHER_SIDE_BEFORE_TEST,
    equal_counts=EqualCounts.RETEST_UNTIL_WIN,
    negative_named=NegativeNamed.ONE_TRAIT_DOWN,
    overbid=Overbid.ANNOUNCE_MORE_THAN_HALF,
    ability_retest=True,
    discipline_retest=True,
    willpower_retest=True,
    willpower_immunity_minutes=10,
    retests_limited=True,
    declared_counts_stand=True,
    bruised=Bruised.ONE_TRAIT_DOWN,
    wounded=Wounded.LOSE_TIES_FREE_RETEST,
    incapacitated=Incapacitated.CANNOT_INITIATE,
    incapacitated_minutes=0,
    static_loser=StaticLoser.AGGRESSOR_ONLY,
    simple_test_tie=SimpleTie.INITIATOR_WINS,
    difficult_tests=True,
    rage_preempt=False,
    blood_traits_max=3,
    weapon_bonus_in_ties=True,
    surprise=True,
    firearms_one_category=True,
    mob_attackers_max=5,
    mob_defender_bids_each=False,
    mob_extra_attackers_down=True,
    mob_most_damaging_effect=True,
)
"""seeds/004 (UK Masquerade), played by the engine as ruleset ``ukm``."""

PRESETS: dict[str, MetOptions] = {"met_classic": MET_CLASSIC, "ukm": UKM}
"""Presets by name; each is a ruleset of rulesets.RULESETS."""

READ_BY_ENGINE = frozenset(
    {
        "relent",
        "equal_counts",
        "negative_named",
        "overbid",
        "ability_retest",
        "discipline_retest",
        "willpower_retest",
        "willpower_immunity_minutes",
        "retests_limited",
        "declared_counts_stand",
        "bruised",
        "wounded",
        "incapacitated",
        "incapacitated_minutes",
        "static_loser",
        "simple_test_tie",
        "difficult_tests",
        "rage_preempt",
        "blood_traits_max",
        "weapon_bonus_in_ties",
        "surprise",
        "mob_attackers_max",
        "mob_defender_bids_each",
        "mob_extra_attackers_down",
        "mob_most_damaging_effect",
    }
)
"""The options the engine reads. Not read: ``firearms_one_category`` (a
challenge has one category, so Mental or Physical is never both). The
``mob_*`` options are read by ``challenges.rules.mob`` (and
``judge.modifiers``)."""


def option_rows() -> dict[str, str]:
    """Each option's RULES.md row: {field name: row}."""
    return {f.name: f.metadata["row"] for f in fields(MetOptions)}


def changed_options(options: MetOptions, base: MetOptions = MET_CLASSIC) -> list[tuple[str, Any]]:
    """The options ``options`` sets differently from ``base``: [(field name, value)],
    in field order; [] when they are equal."""
    return [
        (f.name, getattr(options, f.name))
        for f in fields(MetOptions)
        if getattr(options, f.name) != getattr(base, f.name)
    ]
