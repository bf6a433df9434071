"""The sheet's pools, Disciplines, weapons and Stamina-based Traits (issue 10,
"Pools on the sheet"): model validation, and the admin's character page with
its pools and inlines, and the Presence admin with what was spent tonight."""

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from challenges.rules import Category
from characters.models import (
    Character,
    Chronicle,
    Discipline,
    Immunity,
    Presence,
    Trait,
    Weapon,
)
from characters.services import presence_join, session_start
from tests.characters.test_admin import admin_url, existing_rows, formset_errors, sheet_post

pytestmark = pytest.mark.django_db


@pytest.fixture
def chronicle(admin_user):
    chronicle = Chronicle.objects.create(name="London by Night", ruleset="ukm")
    chronicle.narrators.add(admin_user)
    return chronicle


@pytest.fixture
def camille(chronicle):
    camille = Character.objects.create(
        chronicle=chronicle, name="Camille", willpower=5, blood=10, blood_per_turn=2
    )
    Trait.objects.create(
        character=camille, name="Tough", category=Category.PHYSICAL, count=2, stamina=True
    )
    Discipline.objects.create(character=camille, name="Dominate", rating=2)
    Weapon.objects.create(character=camille, name="Sabre", bonus=2, ability="Melee")
    return camille


def test_ukm_is_a_chronicle_ruleset():
    chronicle = Chronicle(name="UKM", ruleset="ukm")
    chronicle.full_clean()
    assert chronicle.get_ruleset_display() == "UK Masquerade house rules (MET)"


def test_pools_default_to_none_and_refuse_more_than_20(chronicle):
    ray = Character.objects.create(chronicle=chronicle, name="Ray")
    assert (ray.willpower, ray.rage, ray.gnosis, ray.blood, ray.blood_per_turn) == (
        0,
        0,
        0,
        0,
        None,
    )
    ray.rage = 21
    with pytest.raises(ValidationError, match="less than or equal to 20"):
        ray.full_clean()


def test_only_physical_traits_are_stamina_based(camille):
    witty = Trait(character=camille, name="Witty", category=Category.SOCIAL, stamina=True)
    with pytest.raises(ValidationError, match="Only Physical Traits"):
        witty.full_clean()
    frail = Trait(
        character=camille, name="Frail", category=Category.PHYSICAL, negative=True, stamina=True
    )
    with pytest.raises(ValidationError, match="Only Physical Traits"):
        frail.full_clean()
    Trait(character=camille, name="Enduring", category=Category.PHYSICAL, stamina=True).full_clean()


def test_discipline_and_weapon_names_are_cleaned_and_bounded(camille):
    weapon = Weapon.objects.create(
        character=camille, name="  Pistol ", bonus=1, ability=" Firearms "
    )
    assert (weapon.name, weapon.ability) == ("Pistol", "Firearms")
    with pytest.raises(ValidationError, match="less than or equal to 5"):
        Weapon(character=camille, name="Cannon", bonus=6).full_clean()
    with pytest.raises(ValidationError, match="greater than or equal to 1"):
        Discipline(character=camille, name="Celerity", rating=0).full_clean()
    assert str(camille.disciplines.get()) == "Dominate 2"
    assert str(camille.weapons.get(name="Sabre")) == "Sabre (+2)"


def test_character_page_shows_pools_disciplines_weapons_and_stamina(admin_client, camille):
    response = admin_client.get(admin_url(Character, "change", camille.pk))

    assert response.status_code == 200
    content = response.content.decode()
    for marker in (
        "disciplines-TOTAL_FORMS",
        "weapons-TOTAL_FORMS",
        'name="willpower"',
        'name="blood_per_turn"',
        'name="traits-0-stamina"',
        "Dominate",
        "Sabre",
        "Melee",
    ):
        assert marker in content, marker


def test_a_sheet_is_saved_with_pools_disciplines_and_weapons(admin_client, camille):
    camille.rage = 3
    rows = [{**row, "stamina": "on"} for row in existing_rows(camille)]
    data = sheet_post(
        camille,
        rows,
        disciplines=[{"name": "Presence", "rating": 3}],
        weapons=[{"name": "Rifle", "bonus": 2, "ability": "Firearms", "ranged": "on"}],
    )

    response = admin_client.post(admin_url(Character, "change", camille.pk), data)

    assert response.status_code == 302
    camille.refresh_from_db()
    assert (camille.rage, camille.willpower, camille.blood_per_turn) == (3, 5, 2)
    assert camille.disciplines.get(name="Presence").rating == 3
    rifle = camille.weapons.get(name="Rifle")
    assert (rifle.bonus, rifle.ability, rifle.ranged) == (2, "Firearms", True)
    assert camille.traits.get(name="Tough").stamina


def test_the_admin_refuses_a_discipline_twice_and_a_social_stamina_trait(admin_client, camille):
    rows = [*existing_rows(camille), {"name": "Witty", "category": "social", "stamina": "on"}]
    data = sheet_post(
        camille, rows, disciplines=[{"name": "Auspex"}, {"name": "auspex", "rating": 2}]
    )
    data["disciplines-0-rating"] = 1

    response = admin_client.post(admin_url(Character, "change", camille.pk), data)

    assert response.status_code == 200
    assert "appears twice on this sheet" in str(formset_errors(response, "disciplines"))
    assert "Only Physical Traits" in str(formset_errors(response, "traits"))
    assert not camille.disciplines.filter(name__iexact="auspex").exists()


def test_presence_admin_shows_pools_spent_tonight(admin_client, chronicle, camille):
    session = session_start(chronicle=chronicle)
    presence_join(session=session, character=camille)
    Presence.objects.filter(character=camille).update(willpower_spent=1, blood_spent=2)

    changelist = admin_client.get(admin_url(Presence, "changelist")).content.decode()
    page = admin_client.get(
        admin_url(Presence, "change", Presence.objects.get(character=camille).pk)
    ).content.decode()

    assert "Willpower 1, Blood 2" in changelist
    assert 'name="blood_traits_until_0"' in page or 'name="blood_traits_until"' in page
    assert 'name="willpower_spent"' in page


def test_immunities_are_listed_read_only(admin_client, chronicle, camille):
    session = session_start(chronicle=chronicle)
    ray = Character.objects.create(chronicle=chronicle, name="Ray")
    immunity = Immunity.objects.create(
        session=session,
        character=camille,
        attacker=ray,
        power="Dominate",
        until=timezone.now() + timedelta(minutes=10),
    )

    listed = admin_client.get(admin_url(Immunity, "changelist")).content.decode()
    page = admin_client.get(admin_url(Immunity, "change", immunity.pk))

    assert "Dominate" in listed and "Camille" in listed
    assert page.status_code == 200
    assert 'name="power"' not in page.content.decode()  # read-only
    assert admin_client.get(admin_url(Immunity, "add")).status_code == 403
