"""MET rule options: every row of RULES.md "Where the rulesets differ" is a
field, the two presets set the seeds' values, options are frozen, and the
engine reads the same two as before."""

import dataclasses
import re
from pathlib import Path

import pytest

from challenges.rules import PRESETS, MetOptions, changed_options, get_ruleset
from challenges.rules.options import (
    MET_CLASSIC,
    READ_BY_ENGINE,
    UKM,
    Bruised,
    EqualCounts,
    Incapacitated,
    NegativeNamed,
    Overbid,
    Relent,
    SimpleTie,
    StaticLoser,
    Wounded,
    option_rows,
)

RULES_MD = Path("/work/shared/RULES.md")


def _table_rows(text: str) -> list[str]:
    """The first column of the table under "## Where the rulesets differ"."""
    section = text.split("## Where the rulesets differ", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    return [
        row.split("|")[1].strip()
        for row in rows[2:]  # header and --- line
    ]


def test_every_row_of_rules_md_maps_to_an_option() -> None:
    if not RULES_MD.exists():
        pytest.skip("RULES.md is not beside the clone")
    rows = _table_rows(RULES_MD.read_text())
    assert len(rows) == 11
    assert set(rows) == set(option_rows().values())


def test_every_option_names_its_seed_section() -> None:
    for f in dataclasses.fields(MetOptions):
        assert re.search(r'seeds/00[04] "[^"]+"', f.metadata["seed"]), f.name


PRESET_VALUES = [
    # (option, met_classic, ukm)
    ("relent", Relent.DEFENDER_AT_ONCE, Relent.EITHER_SIDE_BEFORE_TEST),
    ("equal_counts", EqualCounts.DRAW, EqualCounts.RETEST_UNTIL_WIN),
    ("negative_named", NegativeNamed.BID_ONE_MORE, NegativeNamed.ONE_TRAIT_DOWN),
    ("overbid", Overbid.NEW_TRAIT_DOUBLE_COUNT, Overbid.ANNOUNCE_MORE_THAN_HALF),
    ("ability_retest", False, True),
    ("discipline_retest", False, True),
    ("willpower_retest", False, True),
    ("willpower_immunity_minutes", 0, 10),
    ("retests_limited", False, True),
    ("declared_counts_stand", False, True),
    ("bruised", Bruised.BID_TWO, Bruised.ONE_TRAIT_DOWN),
    ("wounded", Wounded.BID_TWO_LOSE_TIES_FREE_TEST, Wounded.LOSE_TIES_FREE_RETEST),
    ("incapacitated", Incapacitated.OUT_TEN_MINUTES, Incapacitated.CANNOT_INITIATE),
    ("incapacitated_minutes", 10, 0),
    ("static_loser", StaticLoser.AS_OPPOSED, StaticLoser.AGGRESSOR_ONLY),
    ("simple_test_tie", SimpleTie.SUCCEEDS, SimpleTie.INITIATOR_WINS),
    ("difficult_tests", False, True),
    ("rage_preempt", True, False),
    ("blood_traits_max", 0, 3),
    ("weapon_bonus_in_ties", False, True),
    ("surprise", False, True),
    ("firearms_one_category", False, True),
    ("mob_attackers_max", 0, 5),
    ("mob_defender_bids_each", True, False),
    ("mob_extra_attackers_down", False, True),
    ("mob_most_damaging_effect", False, True),
]


@pytest.mark.parametrize(("name", "classic", "ukm"), PRESET_VALUES, ids=lambda v: str(v))
def test_preset_values(name: str, classic: object, ukm: object) -> None:
    assert getattr(MET_CLASSIC, name) == classic
    assert getattr(UKM, name) == ukm


def test_the_preset_table_covers_every_option() -> None:
    assert [row[0] for row in PRESET_VALUES] == [f.name for f in dataclasses.fields(MetOptions)]
    assert PRESETS == {"met_classic": MET_CLASSIC, "ukm": UKM}


def test_options_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        MET_CLASSIC.relent = Relent.EITHER_SIDE_BEFORE_TEST  # type: ignore[misc]


def test_replace_changes_one_option() -> None:
    club = dataclasses.replace(MET_CLASSIC, mob_attackers_max=5)
    assert changed_options(club) == [("mob_attackers_max", 5)]
    assert MET_CLASSIC.mob_attackers_max == 0
    assert changed_options(MET_CLASSIC) == []


def test_ukm_changes_every_option_from_met_classic() -> None:
    assert [name for name, _ in changed_options(UKM)] == [
        f.name for f in dataclasses.fields(MetOptions)
    ]


def test_the_engine_reads_its_policies_from_the_options() -> None:
    classic = get_ruleset("met_classic")
    assert classic.options is MET_CLASSIC
    assert classic.draw_on_equal_counts and classic.simple_test_tie_succeeds
    ukm_like = dataclasses.replace(classic, options=UKM)
    assert not ukm_like.draw_on_equal_counts
    assert not ukm_like.simple_test_tie_succeeds


def test_the_engine_reads_exactly_the_options_it_says_it_reads() -> None:
    """READ_BY_ENGINE is true of the code: each of its options is read as an
    attribute (``opts.surprise``) somewhere in challenges/rules, no other is."""
    rules_dir = Path(__file__).resolve().parents[2] / "challenges" / "rules"
    code = "\n".join(p.read_text() for p in rules_dir.glob("*.py") if p.name != "options.py")
    for f in dataclasses.fields(MetOptions):
        read = re.search(rf"\.{f.name}\b", code) is not None
        assert read == (f.name in READ_BY_ENGINE), f.name


DOCS = Path(__file__).resolve().parents[2] / "docs" / "rules.md"


@pytest.mark.parametrize(("name", "classic", "ukm"), PRESET_VALUES, ids=lambda v: str(v))
def test_docs_list_every_option_with_its_values(name: str, classic: object, ukm: object) -> None:
    row = next(line for line in DOCS.read_text().splitlines() if line.startswith(f"| `{name}` |"))
    assert f"| `{classic}` | `{ukm}` |" in row
    assert ("**yes**" in row) == (name in READ_BY_ENGINE)


def test_the_docs_example_changes_one_option() -> None:
    example = DOCS.read_text().split("```python\n", 1)[1].split("```", 1)[0]
    scope: dict[str, object] = {}
    exec(example, scope)
    assert changed_options(scope["our_club"]) == [("simple_test_tie", SimpleTie.INITIATOR_WINS)]  # type: ignore[arg-type]
