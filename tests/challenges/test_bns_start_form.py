"""Issue 12: what a test-pool sheet's "Challenge someone" form offers
(``views.bns.bns_start_options``): the attacks her Skills allow, each with
its pool, and the maneuvers she can pay for, with Willpower or her focus
(seeds/002 "Common Test Pools", "Combat Maneuvers", "Physical Focuses in
Combat")."""

import pytest

from challenges.views.bns import bns_start_options
from characters.attribute_sheets import attribute_sheet
from characters.models import Chronicle
from tests.factories import make_rosa, narrated_chronicle


@pytest.fixture
def chronicle(db):
    table = narrated_chronicle("By Night")
    table["chronicle"].ruleset = Chronicle.Ruleset.BNS
    table["chronicle"].save()
    return table


def _options(character, session):
    return bns_start_options(attribute_sheet(character, session), character)


def test_attacks_follow_her_skills_with_their_pools(chronicle):
    rosa = make_rosa(chronicle["chronicle"], skills=(("Brawl", 3), ("Melee", 2), ("Firearms", 1)))
    attacks = _options(rosa, chronicle["session"])["bns_attacks"]
    assert attacks == [
        ("brawl", "Brawl", 10),
        ("melee", "Melee", 9),
        ("thrown", "Thrown", 9),  # a thrown attack's pool is Physical + Melee (BNS preset)
        ("firearms", "Firearms", 8),
    ]


def test_a_brawler_is_offered_brawl_alone(chronicle):
    rosa = make_rosa(chronicle["chronicle"])
    assert [a[0] for a in _options(rosa, chronicle["session"])["bns_attacks"]] == ["brawl"]


def test_maneuvers_are_offered_with_willpower_and_with_her_focus(chronicle):
    rosa = make_rosa(chronicle["chronicle"])
    offered = dict(_options(rosa, chronicle["session"])["bns_maneuvers"])
    assert offered["knock_out"] == "Knock Out (1 Willpower)"
    assert offered["disarm"] == "Disarm (1 Willpower)"
    assert any(value.endswith(":focus") for value in offered)


def test_no_willpower_left_offers_only_her_focus(chronicle):
    rosa = make_rosa(chronicle["chronicle"], willpower=0)
    offered = dict(_options(rosa, chronicle["session"])["bns_maneuvers"])
    assert offered and all(value.endswith(":focus") for value in offered)
