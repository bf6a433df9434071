"""The phone's sheet and the narrator's character panel show pools left
tonight ("Willpower 3 of 5"), Disciplines and weapons, and only what the
character has (issue 10 item 7)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from bs4 import BeautifulSoup
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from characters.models import Discipline, Presence, Weapon
from characters.services import character_sheet

pytestmark = pytest.mark.django_db


@pytest.fixture
def armed(game):
    helen = game["helen"]
    helen.willpower, helen.blood = 5, 10
    helen.save()
    Discipline.objects.create(character=helen, name="Dominate", rating=2)
    Weapon.objects.create(character=helen, name="Pistol", bonus=2, ability="Firearms", ranged=True)
    Presence.objects.filter(character=helen).update(
        willpower_spent=2,
        blood_spent=1,
        blood_traits=2,
        blood_traits_until=timezone.now() + timedelta(minutes=4),
    )
    return game


def _phone_sheet(game, who: str):
    client = Client()
    client.force_login(game[f"{who}_player"])
    response = client.get(reverse("play", args=[game[who].pk]))
    assert response.status_code == 200
    return BeautifulSoup(response.content, "html.parser").find(id="sheet")


def _texts(node, selector: str) -> list[str]:
    return [li.get_text(" ", strip=True) for li in node.select(selector)]


def test_the_sheet_reads_pools_left_tonight(armed):
    sheet = character_sheet(armed["helen"], armed["session"])
    assert [p.text for p in sheet.pools] == ["Willpower 3 of 5", "Blood 9 of 10"]
    assert [str(d) for d in sheet.disciplines] == ["Dominate 2"]
    assert sheet.blood_traits == 2
    assert [str(a) for a in sheet.abilities] == ["Brawl 2"]
    Presence.objects.filter(character=armed["helen"]).update(blood_traits_until=timezone.now())
    assert character_sheet(armed["helen"], armed["session"]).blood_traits == 0


def test_the_phone_shows_pools_disciplines_and_weapons(armed):
    sheet = _phone_sheet(armed, "helen")

    assert _texts(sheet, ".pools .pool") == ["Willpower 3 of 5", "Blood 9 of 10"]
    assert _texts(sheet, ".blood-traits")[0].startswith("2 Blood Traits active until")
    assert _texts(sheet, ".disciplines li") == ["Dominate 2"]
    assert _texts(sheet, ".weapons li") == ["Pistol +2 Traits with Firearms (ranged)"]


def test_the_phone_shows_nothing_of_pools_she_has_none_of(armed):
    sheet = _phone_sheet(armed, "grady")

    assert sheet.select(".pools") == []
    assert "Rage" not in sheet.get_text() and "Willpower" not in sheet.get_text()
    assert sheet.select(".disciplines, .weapons") == []


def test_the_narrators_panel_shows_pools_disciplines_and_weapons(armed):
    client = Client()
    client.force_login(armed["narrator"])
    url = reverse("narrate_character", args=[armed["session"].pk, armed["helen"].pk])
    panel = BeautifulSoup(client.get(url, headers={"HX-Request": "true"}).content, "html.parser")

    pools = panel.select_one(".panel-pools").get_text(" ", strip=True)
    assert pools.startswith("Pools tonight: Willpower 3 of 5 · Blood 9 of 10 · 2 Blood Traits")
    assert panel.select_one(".panel-disciplines").get_text(" ", strip=True) == (
        "Disciplines: Dominate 2"
    )
    assert panel.select_one(".panel-weapons").get_text(" ", strip=True) == (
        "Weapons: Pistol +2 with Firearms (ranged)"
    )
    url = reverse("narrate_character", args=[armed["session"].pk, armed["grady"].pk])
    grady = BeautifulSoup(client.get(url, headers={"HX-Request": "true"}).content, "html.parser")
    assert grady.select(".panel-pools, .panel-disciplines, .panel-weapons") == []
