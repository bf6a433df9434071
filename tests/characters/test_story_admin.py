"""Issue 13: the admin edits a storytelling sheet (Willpower; the dots of the
Storytelling sheet; Skills with specialties; Merits) on a storytelling
chronicle's character page, validated, and hides what Trait and test-pool
sheets use; a presence takes marks on the health track up to the Health
boxes."""

import pytest
from django.urls import reverse

from characters.models import Character, Chronicle, Presence, StorySheet
from characters.services import presence_join, session_start
from tests.characters.test_admin import character_url as _url
from tests.characters.test_admin import form_fields as _fields
from tests.characters.test_admin import inline_names as _inlines
from tests.characters.test_admin import inline_post
from tests.factories import make_iris

pytestmark = pytest.mark.django_db

MET_ONLY = ["health", "gnosis", "blood", "rage", "auto_answer", "battle_scars"]
BNS_ONLY = ["physical_attribute", "healthy_boxes", "stock_npc", "focus"]
INLINES = ["Storytelling sheet", "Skills", "merits"]


@pytest.fixture
def story(admin_user):
    chronicle = Chronicle.objects.create(name="Awakening", ruleset=Chronicle.Ruleset.STORYTELLING)
    chronicle.narrators.add(admin_user)
    return chronicle


@pytest.fixture
def iris(story):
    return make_iris(story)


def _sheet_row(character: Character, **changes) -> dict:
    sheet = StorySheet.objects.filter(character=character).first() or StorySheet()
    row = {f.name: getattr(sheet, f.name) for f in StorySheet._meta.fields if f.name != "character"}
    return {**row, **changes}


def story_post(
    character: Character, sheet: dict, skills: list[dict], merits: list[dict], **changes
) -> dict:
    data = {
        "chronicle": character.chronicle_id,
        "name": character.name,
        "player": character.player_id or "",
        "concept": character.concept,
        "notes": character.notes,
        "willpower": character.willpower,
        "_save": "Save",
        **changes,
        **inline_post(character, "story_sheet", [sheet]),
        **inline_post(character, "story_skills", skills),
        **inline_post(character, "merits", merits),
    }
    if character.pk and StorySheet.objects.filter(character=character).exists():
        data["story_sheet-INITIAL_FORMS"] = 1
    return data


def _skill_rows(character: Character) -> list[dict]:
    return [
        {"id": s.pk, "name": s.name, "dots": s.dots, "specialties": s.specialties}
        for s in character.story_skills.all()
    ]


def _merit_rows(character: Character) -> list[dict]:
    return [
        {"id": m.pk, "name": m.name, "dots": m.dots, "note": m.note} for m in character.merits.all()
    ]


def test_a_storytelling_character_page_shows_willpower_and_the_sheet_of_dots_only(
    admin_client, iris
):
    response = admin_client.get(_url("change", iris.pk))
    assert response.status_code == 200
    fields = _fields(response)
    assert "willpower" in fields
    assert not fields & set(MET_ONLY) and not fields & set(BNS_ONLY)
    assert _inlines(response) == INLINES
    html = response.content.decode()
    for words in ("Intelligence", "Composure", "Initiative modifier", "Speed", "Wisdom"):
        assert words in html
    assert "Negative" not in html and "Disciplines" not in html and "Garou" not in html


def test_adding_a_character_to_a_storytelling_chronicle_asks_for_its_dots(admin_client, story):
    response = admin_client.get(_url("add") + f"?chronicle={story.pk}")
    assert _inlines(response) == INLINES
    assert set(MET_ONLY) <= _fields(admin_client.get(_url("add")))


def test_a_storytelling_sheet_is_saved_with_its_skills_and_merits(admin_client, iris):
    skills = [*_skill_rows(iris), {"name": "Brawl", "dots": 1, "specialties": ""}]
    skills[0]["specialties"] = "History, Law"
    merits = [*_merit_rows(iris), {"name": "Resources", "dots": 3, "note": ""}]
    data = story_post(
        iris, _sheet_row(iris, strength=2, health=8, armor=1), skills, merits, willpower=6
    )
    response = admin_client.post(_url("change", iris.pk), data)
    assert response.status_code == 302, response.context["errors"]
    iris.refresh_from_db()
    sheet = StorySheet.objects.get(character=iris)
    assert (iris.willpower, sheet.strength, sheet.health, sheet.armor) == (6, 2, 8, 1)
    assert dict(iris.story_skills.values_list("name", "specialties"))["Academics"] == "History, Law"
    assert dict(iris.merits.values_list("name", "dots")) == {"Library": 2, "Resources": 3}


def test_a_new_storytelling_character_gets_her_sheet_row_even_with_the_defaults(
    admin_client, story
):
    new = Character(chronicle=story, name="Nico", willpower=4)
    data = story_post(new, {}, [], [])
    data["story_sheet-TOTAL_FORMS"] = 0
    response = admin_client.post(_url("add"), data)
    assert response.status_code == 302, response.context["errors"]
    nico = Character.objects.get(name="Nico")
    assert StorySheet.objects.get(character=nico).health == 7


@pytest.mark.parametrize(
    ("sheet", "skills", "merits", "changes", "message"),
    [
        ({"strength": 6}, None, None, {}, "Ensure this value is less than or equal to 5"),
        ({"dexterity": 0}, None, None, {}, "Ensure this value is greater than or equal to 1"),
        ({"wisdom": 11}, None, None, {}, "Ensure this value is less than or equal to 10"),
        ({"health": 0}, None, None, {}, "Ensure this value is greater than or equal to 1"),
        ({}, None, None, {"willpower": 0}, "Willpower is rated 1 to 10"),
        ({}, [{"name": "Brawl", "dots": 6, "specialties": ""}], None, {}, "less than or equal"),
        (
            {},
            [{"name": "Brawl", "dots": 0, "specialties": "Boxing"}],
            None,
            {},
            "Only a Skill with dots has specialties",
        ),
        ({}, [{"name": "Dodge", "dots": 2, "specialties": ""}], None, {}, "Select a valid choice"),
        (
            {},
            [{"name": "Brawl", "dots": 1, "specialties": ""}] * 2,
            None,
            {},
            "appears twice",
        ),
        ({}, None, [{"name": "Resources", "dots": 6, "note": ""}], {}, "less than or equal"),
        ({}, None, [{"name": "library", "dots": 1, "note": ""}], {}, "appears twice"),
    ],
)
def test_a_storytelling_sheet_out_of_range_is_refused_with_a_form_error(
    admin_client, iris, sheet, skills, merits, changes, message
):
    before = (iris.willpower, StorySheet.objects.get(character=iris).strength)
    skill_rows = _skill_rows(iris) + (skills or [])
    merit_rows = _merit_rows(iris) + (merits or [])
    data = story_post(iris, _sheet_row(iris, **sheet), skill_rows, merit_rows, **changes)
    response = admin_client.post(_url("change", iris.pk), data)
    assert response.status_code == 200
    assert message in response.content.decode()
    iris.refresh_from_db()
    assert (iris.willpower, StorySheet.objects.get(character=iris).strength) == before
    assert (iris.story_skills.count(), iris.merits.count()) == (3, 1)


def test_the_chronicle_page_says_a_storytelling_chronicle_rolls_dice_pools(admin_client, story):
    response = admin_client.get(reverse("admin:characters_chronicle_change", args=[story.pk]))
    html = response.content.decode()
    assert "rolled as d10 dice pools" in html and "no MET rule options apply" in html


def test_a_storytelling_presence_marks_its_track_up_to_its_health_boxes(admin_client, iris, story):
    session = session_start(chronicle=story)
    presence = presence_join(session=session, character=iris)
    url = reverse("admin:characters_presence_change", args=[presence.pk])
    fields = set(admin_client.get(url).context["adminform"].form.fields)
    assert set(Presence.TRACK) <= fields and "damage" not in fields
    data = {
        "session": session.pk,
        "character": iris.pk,
        "health": presence.health,
        "willpower_spent": 1,
        "rage_spent": 0,
        "gnosis_spent": 0,
        "blood_spent": 0,
        "blood_traits": 0,
        "_save": "Save",
    }
    track = {"track_aggravated": 1, "track_lethal": 3, "track_bashing": 4}
    refused = admin_client.post(url, {**data, **track})
    assert "Iris has 7 Health boxes (8 marked)." in refused.content.decode()
    assert admin_client.post(url, {**data, **track, "track_bashing": 3}).status_code == 302
    presence.refresh_from_db()
    assert (presence.track_aggravated, presence.track_lethal, presence.track_bashing) == (1, 3, 3)
