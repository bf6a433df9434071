"""Issue 13: the ``storytelling`` ruleset (seeds/003) is registered as data
(flags the web layer reads), and its sheets of dots are validated:
Attributes 1–5, Skills 0–5 named from the catalogue with specialties only
on a Skill with dots, Merits 1–5, Willpower and Wisdom 1–10, Health,
Defense, Initiative, Speed, Size and armor in the app's ranges; the web
layer's view of a sheet draws dots and Health boxes as the seed does."""

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError

from challenges.rules import RULESETS, RulesError, SheetKind, get_ruleset, met_ruleset
from challenges.rules.storytelling.traits import ATTRIBUTES, SKILLS
from characters.models import Character, Chronicle, Merit, Presence, StorySheet, StorySkill
from characters.services import character_sheet, session_start
from characters.story_sheets import StorySheetView, dots_text, story_sheet, story_sheet_of
from tests.factories import make_iris, make_rosa

pytestmark = pytest.mark.django_db


@pytest.fixture
def story():
    return Chronicle.objects.create(name="Awakening", ruleset=Chronicle.Ruleset.STORYTELLING)


@pytest.fixture
def iris(story):
    return make_iris(story)


# Ruleset registry ------------------------------------------------------------
def test_storytelling_is_a_ruleset_of_dice_pools_with_no_traits_and_no_test_pools():
    rules = get_ruleset("storytelling")
    assert RULESETS["storytelling"] is rules
    assert rules.sheet is SheetKind.DICE
    flags = (
        rules.dice_pools,
        rules.adjective_traits,
        rules.met_challenges,
        rules.test_pools,
        rules.combat_rounds,
    )
    assert flags == (True, False, False, False, False)
    assert rules.skills_label == "Skills"
    assert rules.label == Chronicle.Ruleset.STORYTELLING.label


@pytest.mark.parametrize("name", ["met_classic", "ukm", "bns"])
def test_no_other_ruleset_rolls_dice_pools(name):
    assert get_ruleset(name).dice_pools is False


def test_the_met_engine_refuses_a_storytelling_chronicle_with_a_readable_message():
    with pytest.raises(RulesError, match=r"Storytelling System .*: its sheets have no Traits"):
        met_ruleset("storytelling")


def test_a_storytelling_chronicle_has_dice_pools_and_no_test_pools(story):
    assert (story.has_dice_pools, story.has_test_pools) == (True, False)
    assert Chronicle(name="x", ruleset="bns").has_dice_pools is False
    assert Chronicle(name="y", ruleset="gone").has_dice_pools is False


def test_the_sheet_has_one_field_per_attribute_of_the_catalogue():
    assert tuple(n.lower() for n in ATTRIBUTES) == StorySheet.ATTRIBUTE_FIELDS
    sheet = StorySheet(strength=3)
    assert sheet.dots("Strength") == 3
    with pytest.raises(KeyError):
        sheet.dots("Brawl")


# Validation ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("field", "value", "ok"),
    [
        ("strength", 1, True),
        ("strength", 5, True),
        ("strength", 0, False),
        ("composure", 6, False),
        ("health", 7, True),
        ("health", 0, False),
        ("health", 16, False),
        ("defense", 0, True),
        ("defense", 11, False),
        ("initiative", 15, True),
        ("initiative", 16, False),
        ("speed", 30, True),
        ("speed", 31, False),
        ("size", 0, False),
        ("size", 5, True),
        ("wisdom", 10, True),
        ("wisdom", 0, False),
        ("wisdom", 11, False),
        ("armor", 0, True),
        ("armor", 11, False),
    ],
)
def test_a_sheets_dots_are_checked_against_their_ranges(iris, field, value, ok):
    sheet = iris.story_sheet
    setattr(sheet, field, value)
    if ok:
        sheet.full_clean()
    else:
        with pytest.raises(ValidationError) as refused:
            sheet.full_clean()
        assert field in refused.value.message_dict


@pytest.mark.parametrize(
    ("name", "dots", "specialties", "error"),
    [
        ("Occult", 0, "", None),
        ("Occult", 5, "Ghosts", None),
        ("Academics", 2, " History ,  Law ", None),
        ("Occult", 6, "", "dots"),
        ("Dodge", 2, "", "name"),  # a MET/bns Ability, not a Storytelling Skill
        ("occult", 2, "", "name"),
        ("Occult", 0, "Ghosts", "specialties"),
        ("Occult", 2, "Ghosts, ghosts", "specialties"),
    ],
)
def test_a_skill_is_named_from_the_catalogue_and_has_specialties_only_with_dots(
    iris, name, dots, specialties, error
):
    iris.story_skills.all().delete()
    skill = StorySkill(character=iris, name=name, dots=dots, specialties=specialties)
    if error is None:
        skill.full_clean()
    else:
        with pytest.raises(ValidationError) as refused:
            skill.full_clean()
        assert error in refused.value.message_dict


def test_a_skills_specialties_are_tidied_when_saved(iris):
    skill = StorySkill.objects.create(
        character=iris, name="Science", dots=2, specialties=" A ,, B "
    )
    skill.refresh_from_db()
    assert (skill.specialties, skill.specialty_list) == ("A, B", ["A", "B"])
    assert str(skill) == "Science 2 (A, B)"


def test_a_skill_is_on_a_sheet_once(iris):
    with pytest.raises(IntegrityError):
        StorySkill.objects.create(character=iris, name="Occult", dots=1)


@pytest.mark.parametrize(("dots", "ok"), [(1, True), (5, True), (0, False), (6, False)])
def test_a_merit_has_one_to_five_dots(iris, dots, ok):
    merit = Merit(character=iris, name="Resources", dots=dots)
    if ok:
        merit.full_clean()
    else:
        with pytest.raises(ValidationError) as refused:
            merit.full_clean()
        assert "dots" in refused.value.message_dict


@pytest.mark.parametrize(("willpower", "ok"), [(1, True), (10, True), (0, False), (11, False)])
def test_willpower_of_a_storytelling_character_is_one_to_ten(iris, willpower, ok):
    iris.willpower = willpower
    if ok:
        iris.full_clean()
    else:
        with pytest.raises(ValidationError, match="Willpower is rated 1 to 10"):
            iris.full_clean()


def test_a_met_character_keeps_willpower_zero(story):
    met = Chronicle.objects.create(name="Apocalypse")
    Character(chronicle=met, name="Helen", willpower=0).full_clean()


# The web layer's view of a sheet ---------------------------------------------
@pytest.mark.parametrize(
    ("dots", "high", "text"), [(0, 5, "◦◦◦◦◦"), (3, 5, "•••◦◦"), (5, 5, "•••••"), (2, 0, "••")]
)
def test_dots_are_drawn_filled_then_empty(dots, high, text):
    assert dots_text(dots, high) == text


def test_the_sheet_lists_every_attribute_and_skill_in_catalogue_order(iris):
    view = story_sheet(iris, None)
    assert [a.name for a in view.attributes] == list(ATTRIBUTES)
    assert [s.name for s in view.skills] == list(SKILLS)
    assert (view.dots("Intelligence"), view.dots("Occult"), view.dots("Brawl")) == (3, 3, 0)
    occult = next(s for s in view.skills if s.name == "Occult")
    assert (occult.text, occult.specialties, occult.label) == (
        "•••◦◦",
        ("Ghosts", "Tarot"),
        "Occult 3 (Ghosts, Tarot)",
    )
    assert [(c.label, len(c.traits)) for c in view.skill_columns] == [
        ("Mental", 8),
        ("Physical", 8),
        ("Social", 8),
    ]
    assert [(m.name, m.text, m.note) for m in view.merits] == [
        ("Library", "••", "Rare occult texts")
    ]
    assert (view.willpower_text, view.health_text) == ("Willpower 5/5", "Health 7/7")


def test_seven_health_dots_show_seven_empty_boxes_with_the_wound_penalties_under_the_last_three(
    iris,
):
    view = story_sheet(iris, None)
    assert [b.mark for b in view.boxes] == [""] * 7
    assert [b.penalty for b in view.boxes] == [0, 0, 0, 0, -1, -2, -3]
    assert view.track_text == "·······"


@pytest.mark.parametrize(
    ("track", "text", "health"),
    [
        ((0, 0, 1), "/······", "Health 6/7"),  # seeds/003: one bashing
        ((0, 1, 1), "X/·····", "Health 5/7"),  # then one lethal pushes it right
        ((1, 1, 1), "*X/····", "Health 4/7"),  # then one aggravated pushes both
        ((2, 3, 2), "**XXX//", "Health 0/7"),
    ],
)
def test_tonights_track_is_drawn_aggravated_then_lethal_then_bashing(iris, track, text, health):
    view = story_sheet_of(iris, iris.story_sheet, track=track)
    assert (view.track_text, view.health_text) == (text, health)


@pytest.mark.parametrize(("health", "penalties"), [(1, [-3]), (2, [-2, -3]), (3, [-1, -2, -3])])
def test_a_short_track_keeps_the_last_penalties(iris, health, penalties):
    view = story_sheet_of(iris, StorySheet(character=iris, health=health))
    assert [b.penalty for b in view.boxes] == penalties


def test_a_sheet_tonight_reads_willpower_spent_and_the_track_from_her_presence(iris, story):
    session = session_start(chronicle=story)
    Presence.objects.create(
        session=session, character=iris, willpower_spent=2, track_lethal=1, track_bashing=2
    )
    sheet = character_sheet(iris, session)
    assert sheet.attributes is None and not sheet.trait_sheet
    assert sheet.story.willpower_text == "Willpower 3/5"
    assert sheet.story.track_text == "X//····"


def test_a_character_with_no_sheet_row_yet_shows_the_defaults(story):
    bare = Character.objects.create(chronicle=story, name="New", willpower=3)
    view = story_sheet(bare, None)
    assert {a.dots for a in view.attributes} == {1}
    assert (view.health, view.wisdom, view.size) == (7, 7, 5)


def test_other_rulesets_sheets_have_no_dots(story):
    bns = Chronicle.objects.create(name="By Night", ruleset=Chronicle.Ruleset.BNS)
    sheet = character_sheet(make_rosa(bns), None)
    assert sheet.story is None and sheet.attributes is not None and not sheet.trait_sheet
    met = Chronicle.objects.create(name="Apocalypse")
    helen = Character.objects.create(chronicle=met, name="Helen")
    assert character_sheet(helen, None).trait_sheet


@pytest.mark.parametrize(
    ("marks", "penalty"),
    [
        ((0, 0, 0), 0),
        ((0, 0, 4), 0),  # seven boxes: four marked, three clear
        ((0, 1, 4), -1),  # the third-to-last box marked
        ((1, 1, 4), -2),
        ((2, 2, 3), -3),  # every box marked
    ],
)
def test_her_track_tonight_is_the_engines_and_sets_her_wound_penalty(marks, penalty):
    """seeds/003 "Wound Penalties": −1, −2, −3 as the third-to-last, second-to-last
    and last of her seven boxes are marked."""
    aggravated, lethal, bashing = marks
    view = StorySheetView(
        attributes=(), skills=(), health=7, aggravated=aggravated, lethal=lethal, bashing=bashing
    )
    assert (view.track.aggravated, view.track.lethal, view.track.bashing) == marks
    assert view.wound_penalty == penalty
