"""Issue 12: the admin edits a bns sheet (Attributes, Skills, Willpower, wound
boxes, focus, form, flags) on a bns chronicle's character page, and hides
what a Trait sheet uses; a MET chronicle's page is unchanged."""

import pytest
from django.urls import reverse

from characters.models import Character, Chronicle, Presence
from characters.services import presence_join, session_start
from tests.characters.test_admin import character_url as _url
from tests.characters.test_admin import form_fields as _fields
from tests.characters.test_admin import inline_names as _inlines
from tests.characters.test_admin import inline_post, sheet_post
from tests.factories import make_rosa

pytestmark = pytest.mark.django_db

BNS_ONLY = ["physical_attribute", "healthy_boxes", "stock_npc", "no_knockout", "focus", "creature"]
MET_ONLY = ["health", "gnosis", "blood", "blood_per_turn", "battle_scars", "auto_answer"]


@pytest.fixture
def bns(admin_user):
    chronicle = Chronicle.objects.create(name="By Night", ruleset=Chronicle.Ruleset.BNS)
    chronicle.narrators.add(admin_user)
    return chronicle


@pytest.fixture
def rosa(bns):
    rosa = make_rosa(bns, skills=[("Brawl", 3)])
    return rosa


def bns_post(character: Character, skills: list[dict], **changes) -> dict:
    data = {
        "chronicle": character.chronicle_id,
        "name": character.name,
        "player": character.player_id or "",
        "concept": character.concept,
        "notes": character.notes,
        "physical_attribute": character.physical_attribute,
        "social_attribute": character.social_attribute,
        "mental_attribute": character.mental_attribute,
        "focus": character.focus,
        "willpower": character.willpower,
        "rage": character.rage,
        "healthy_boxes": character.healthy_boxes,
        "injured_boxes": character.injured_boxes,
        "incapacitated_boxes": character.incapacitated_boxes,
        "form": character.form,
        "_save": "Save",
        **changes,
        **inline_post(character, "abilities", skills),
    }
    return {k: v for k, v in data.items() if v is not False}


def test_a_bns_character_page_shows_the_bns_sheet_and_skills_and_no_trait_inlines(
    admin_client, rosa
):
    response = admin_client.get(_url("change", rosa.pk))
    assert response.status_code == 200
    fields = _fields(response)
    assert set(BNS_ONLY) <= fields
    assert not fields & set(MET_ONLY)
    assert _inlines(response) == ["Skills"]
    html = response.content.decode()
    assert "Incapacitated boxes" in html
    assert "Negative" not in html and "Disciplines" not in html


def test_a_met_character_page_keeps_its_trait_sheet_and_shows_no_bns_fields(admin_client):
    met = Chronicle.objects.create(name="Apocalypse")
    helen = Character.objects.create(chronicle=met, name="Helen")
    response = admin_client.get(_url("change", helen.pk))
    fields = _fields(response)
    assert set(MET_ONLY) <= fields
    assert not fields & set(BNS_ONLY)
    assert _inlines(response) == ["traits", "abilities", "disciplines", "weapons"]


def test_adding_a_character_to_a_bns_chronicle_asks_for_its_attributes(admin_client, bns):
    assert set(BNS_ONLY) <= _fields(admin_client.get(_url("add") + f"?chronicle={bns.pk}"))
    assert set(MET_ONLY) <= _fields(admin_client.get(_url("add")))
    for nonsense in ("abc", "99999", " 1"):
        assert set(MET_ONLY) <= _fields(admin_client.get(_url("add") + f"?chronicle={nonsense}"))


def test_a_bns_sheet_is_saved_with_its_skills(admin_client, rosa):
    data = bns_post(
        rosa,
        [
            {"id": rosa.abilities.get().pk, "name": "Brawl", "rating": 4},
            {"name": "Dodge", "rating": 2},
        ],
        physical_attribute=8,
        stock_npc="on",
    )
    response = admin_client.post(_url("change", rosa.pk), data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    rosa.refresh_from_db()
    assert (rosa.physical_attribute, rosa.stock_npc) == (8, True)
    assert dict(rosa.abilities.values_list("name", "rating")) == {"Brawl": 4, "Dodge": 2}


@pytest.mark.parametrize(
    ("changes", "skills", "message"),
    [
        ({"physical_attribute": 16}, [], "Physical is rated 1 to 15"),
        ({"mental_attribute": 0}, [], "Mental is rated 1 to 15"),
        ({"willpower": 11}, [], "Willpower is rated 0 to 10"),
        ({}, [{"name": "Melee", "rating": 6}], "Skills are rated 0 to 5"),
        ({}, [{"name": "Dodge", "rating": 1}, {"name": "dodge", "rating": 2}], "appears twice"),
        ({"form": "crinos"}, [], "Only a Garou has a form"),
    ],
)
def test_a_bns_sheet_out_of_range_is_refused_with_a_form_error(
    admin_client, rosa, changes, skills, message
):
    response = admin_client.post(_url("change", rosa.pk), bns_post(rosa, skills, **changes))
    assert response.status_code == 200
    assert message in response.content.decode()
    rosa.refresh_from_db()
    assert (rosa.physical_attribute, rosa.willpower, rosa.abilities.count()) == (7, 6, 1)


def test_adding_to_a_bns_chronicle_from_the_trait_sheet_asks_for_attributes_not_a_crash(
    admin_client, bns
):
    new = Character(chronicle=bns, name="Late")
    response = admin_client.post(_url("add"), sheet_post(new, []))
    assert response.status_code == 200
    assert "physical_attribute" in _fields(response)
    assert not Character.objects.filter(name="Late").exists()


def test_the_changelist_shows_a_bns_characters_attributes(admin_client, rosa):
    response = admin_client.get(_url("changelist"))
    row = next(r for r in response.context["cl"].result_list if r.pk == rosa.pk)
    admin = response.context["cl"].model_admin
    assert (admin.physical(row), admin.social(row), admin.mental(row)) == (7, 3, 4)


def test_the_chronicle_page_says_a_bns_chronicle_has_no_met_rule_options(admin_client, bns):
    response = admin_client.get(reverse("admin:characters_chronicle_change", args=[bns.pk]))
    html = response.content.decode()
    assert "no MET rule options apply" in html
    link = _url("add") + f"?chronicle={bns.pk}"
    assert f'href="{link}"' in html
    assert set(BNS_ONLY) <= _fields(admin_client.get(link))


def test_a_bns_presence_takes_damage_up_to_its_wound_boxes(admin_client, rosa, bns):
    session = session_start(chronicle=bns)
    presence = presence_join(session=session, character=rosa)
    url = reverse("admin:characters_presence_change", args=[presence.pk])
    assert {"damage", "form", "fate"} <= set(admin_client.get(url).context["adminform"].form.fields)
    data = {
        "session": session.pk,
        "character": rosa.pk,
        "health": presence.health,
        "willpower_spent": 1,
        "rage_spent": 0,
        "gnosis_spent": 0,
        "blood_spent": 0,
        "blood_traits": 0,
        "form": "",
        "_save": "Save",
    }
    refused = admin_client.post(url, {**data, "damage": 10})
    assert "Rosa has 9 wound boxes in all." in refused.content.decode()
    assert admin_client.post(url, {**data, "damage": 4}).status_code == 302
    assert Presence.objects.get(pk=presence.pk).damage == 4
