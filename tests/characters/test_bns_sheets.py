"""Issue 12: a bns chronicle's sheets (seeds/002): Attributes and Skills,
Willpower current and permanent, wound tracks, Garou form, focus and flags;
their validation; and the sheet the web layer reads
(``characters.attribute_sheets``, ``characters.services.character_sheets``)."""

import pytest
from django.core.exceptions import ValidationError
from hypothesis import given, settings
from hypothesis import strategies as st

from challenges.rules import RULESETS, RulesError, SheetKind, get_ruleset, met_ruleset
from characters.attribute_sheets import attribute_sheet, wound_tracks
from characters.models import Ability, Character, Chronicle, Presence
from characters.services import character_sheet, character_sheets, presence_join, session_start
from tests.factories import make_rosa

pytestmark = pytest.mark.django_db


@pytest.fixture
def bns():
    return Chronicle.objects.create(name="By Night", ruleset=Chronicle.Ruleset.BNS)


def _brawler(chronicle, **fields):
    return make_rosa(chronicle, **fields)


# Ruleset registry ------------------------------------------------------------
def test_bns_is_a_known_ruleset_whose_sheets_are_attributes_not_traits():
    bns = get_ruleset("bns")
    assert RULESETS["bns"] is bns
    assert bns.sheet is SheetKind.ATTRIBUTES
    assert (bns.test_pools, bns.adjective_traits, bns.met_challenges) == (True, False, False)
    assert bns.skills_label == "Skills"
    assert bns.label == Chronicle.Ruleset.BNS.label


@pytest.mark.parametrize("name", ["met_classic", "ukm"])
def test_met_rulesets_keep_trait_sheets_and_met_challenges(name):
    rules = get_ruleset(name)
    assert (rules.test_pools, rules.adjective_traits, rules.met_challenges) == (False, True, True)
    assert rules.skills_label == "Abilities"
    assert met_ruleset(name) is rules


def test_every_chronicle_ruleset_choice_is_a_registered_ruleset():
    assert {value for value, _ in Chronicle.Ruleset.choices} == set(RULESETS)


def test_the_met_engine_refuses_a_bns_chronicle_with_a_readable_message():
    with pytest.raises(RulesError, match="By Night Studios MET: its sheets have no Traits to bid"):
        met_ruleset("bns")


# Validation ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("field", "value", "ok"),
    [
        ("physical_attribute", 1, True),
        ("physical_attribute", 15, True),
        ("physical_attribute", 0, False),
        ("social_attribute", 16, False),
        ("mental_attribute", 0, False),
        ("willpower", 0, True),
        ("willpower", 10, True),
        ("willpower", 11, False),
    ],
)
def test_a_bns_sheet_rates_attributes_1_to_15_and_willpower_0_to_10(bns, field, value, ok):
    character = _brawler(bns, **{field: value})
    if ok:
        character.full_clean()
    else:
        with pytest.raises(ValidationError) as error:
            character.full_clean()
        assert field in error.value.message_dict


def test_a_met_sheet_needs_no_attributes(admin_user):
    met = Chronicle.objects.create(name="Apocalypse")
    Character(chronicle=met, name="Helen", willpower=12).full_clean()


@pytest.mark.parametrize(("rating", "ok"), [(1, True), (5, True), (6, False)])
def test_a_bns_skill_is_rated_at_most_5(bns, rating, ok):
    skill = Ability(character=_brawler(bns), name="Melee", rating=rating)
    if ok:
        skill.full_clean()
    else:
        with pytest.raises(ValidationError, match="Skills are rated 0 to 5"):
            skill.full_clean()


def test_a_met_ability_may_still_be_rated_above_5():
    met = Chronicle.objects.create(name="Apocalypse")
    helen = Character.objects.create(chronicle=met, name="Helen")
    Ability(character=helen, name="Brawl", rating=8).full_clean()


def test_only_a_garou_has_a_starting_form(bns):
    with pytest.raises(ValidationError, match="Only a Garou has a form"):
        _brawler(bns, form="crinos").full_clean()
    _brawler(bns, name="Tooth", form="crinos", garou=True, rage=4).full_clean()


# The sheet for the web layer -----------------------------------------------
@pytest.mark.parametrize(
    ("damage", "filled"),
    [
        (0, (0, 0, 0)),
        (2, (2, 0, 0)),
        (3, (3, 0, 0)),
        (4, (3, 1, 0)),
        (7, (3, 3, 1)),
        (20, (3, 3, 3)),
    ],
)
def test_damage_fills_healthy_then_injured_then_incapacitated(damage, filled):
    tracks = wound_tracks([3, 3, 3], damage)
    assert tuple(t.filled for t in tracks) == filled
    assert [t.label for t in tracks] == ["Healthy", "Injured", "Incapacitated"]


@settings(max_examples=150, deadline=None)
@given(
    boxes=st.lists(st.integers(1, 10), min_size=3, max_size=3),
    damage=st.integers(0, 40),
)
def test_damage_fills_the_tracks_in_order_and_is_never_lost_or_made_up(boxes, damage):
    tracks = wound_tracks(boxes, damage)
    assert sum(t.filled for t in tracks) == min(damage, sum(boxes))
    assert all(0 <= t.filled <= t.boxes for t in tracks)
    # A track fills only once every track before it is full.
    for before, after in zip(tracks, tracks[1:], strict=False):
        assert after.filled == 0 or before.filled == before.boxes


def test_the_bns_sheet_gives_attributes_skills_willpower_damage_form_and_flags(
    bns, django_assert_num_queries
):
    session = session_start(chronicle=bns)
    tooth = _brawler(
        bns, name="Tooth", garou=True, rage=4, form="homid", no_knockout=True, mental_attribute=9
    )
    presence = presence_join(session=session, character=tooth)
    Presence.objects.filter(pk=presence.pk).update(
        willpower_spent=2, rage_spent=1, damage=4, form="crinos"
    )
    with django_assert_num_queries(2):
        sheet = attribute_sheet(tooth, session)
    assert sheet.attributes == [("Physical", 7), ("Social", 3), ("Mental", 9)]
    assert [s.text for s in sheet.skills] == ["Brawl 3", "Dodge 2"]
    assert (sheet.skill("brawl"), sheet.skill("Firearms")) == (3, 0)
    assert sheet.willpower_text == "Willpower 4/6"
    assert sheet.rage_text == "Rage 3/4"
    assert [t.text for t in sheet.tracks] == ["Healthy 3/3", "Injured 1/3", "Incapacitated 0/3"]
    assert sheet.wound_track == "Injured"
    assert (sheet.form_label, sheet.starting_form) == ("Crinos", "homid")
    assert sheet.focus_label == "Strength"
    assert sheet.initiative == 9  # the higher of Physical and Mental (seeds/002)
    assert sheet.no_knockout and not sheet.stock_npc
    data = sheet.as_dict()
    assert data["initiative"] == 9
    assert data["skills"][0] == {"name": "Brawl", "rating": 3}


def test_between_sessions_a_bns_sheet_is_whole_and_in_its_starting_form(bns):
    tooth = _brawler(bns, name="Tooth", garou=True, rage=4, form="crinos")
    sheet = attribute_sheet(tooth, None)
    assert (sheet.willpower_left, sheet.rage_left, sheet.damage) == (6, 4, 0)
    assert sheet.form == "crinos"
    assert sheet.wound_track == "Healthy"


def test_a_garou_arriving_at_a_session_is_in_her_starting_form(bns):
    session = session_start(chronicle=bns)
    tooth = _brawler(bns, name="Tooth", garou=True, rage=4, form="lupus")
    presence_join(session=session, character=tooth)
    assert attribute_sheet(tooth, session).form_label == "Lupus"


def test_a_stock_npc_has_no_wound_track(bns):
    thug = _brawler(bns, name="Thug", stock_npc=True)
    sheet = attribute_sheet(thug, None)
    assert sheet.tracks == ()
    assert sheet.wound_track == ""


def test_the_character_sheet_of_a_bns_character_carries_its_attribute_sheet(bns):
    session = session_start(chronicle=bns)
    rosa = _brawler(bns)
    presence_join(session=session, character=rosa)
    Presence.objects.filter(character=rosa).update(willpower_spent=1, damage=2)
    sheet = character_sheet(rosa, session)
    assert sheet.attributes == attribute_sheet(rosa, session)
    assert sheet.attributes.willpower_text == "Willpower 5/6"
    assert not sheet.traits


def test_a_met_character_sheet_has_no_attribute_sheet(admin_user):
    met = Chronicle.objects.create(name="Apocalypse")
    session = session_start(chronicle=met)
    helen = Character.objects.create(chronicle=met, name="Helen")
    assert character_sheet(helen, session).attributes is None


def test_character_sheets_read_the_ruleset_without_a_query_when_the_session_carries_it(
    bns, django_assert_num_queries
):
    session = session_start(chronicle=bns)
    rosa = Character.objects.get(pk=_brawler(bns).pk)  # her chronicle not read
    presence_join(session=session, character=rosa)
    with django_assert_num_queries(5):
        sheets = character_sheets([rosa], session)
    assert sheets[rosa.pk].attributes.physical == 7
