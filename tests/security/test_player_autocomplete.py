"""A character's player is picked by typing her name (the admin's autocomplete):
a staff narrator who may edit sheets finds players without being able to
browse the users' admin."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from tests.characters.test_admin import existing_rows, sheet_post
from tests.factories import make_user

pytestmark = pytest.mark.django_db


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _players_found(client, term: str, field: str = "player") -> tuple[int, list[str]]:
    response = client.get(
        reverse("admin:autocomplete"),
        {"app_label": "characters", "model_name": "character", "field_name": field, "term": term},
    )
    found = response.json()["results"] if response.status_code == 200 else []
    return response.status_code, [row["text"] for row in found]


def test_the_player_field_is_an_autocomplete(world):
    page = _client(world["narrator"]).get(
        reverse("admin:characters_character_change", args=[world["helen"].pk])
    )

    assert page.status_code == 200
    assert 'data-ajax--url="/admin/autocomplete/"' in page.content.decode()
    assert "admin-autocomplete" in str(page.context["adminform"].form["player"])


def test_a_narrator_finds_a_player_by_name(world):
    make_user("nadia", first_name="Nadia", last_name="Okafor")

    status, found = _players_found(_client(world["narrator"]), "okafor")

    assert (status, found) == (200, ["nadia"])


def test_a_narrator_gives_a_character_to_the_player_she_found(world):
    nadia = make_user("nadia")
    grady = world["grady"]
    data = {**sheet_post(grady, existing_rows(grady)), "player": nadia.pk}

    response = _client(world["narrator"]).post(
        reverse("admin:characters_character_change", args=[grady.pk]), data
    )

    assert response.status_code == 302
    grady.refresh_from_db()
    assert grady.player == nadia


def test_a_narrator_cannot_browse_the_users_admin(world):
    narrator = _client(world["narrator"])

    assert narrator.get(reverse("admin:auth_user_changelist")).status_code == 403
    user = reverse("admin:auth_user_change", args=[world["helen_player"].pk])
    assert narrator.get(user).status_code == 403


def test_a_staff_user_who_may_not_edit_sheets_finds_no_player(world):
    onlooker = make_user("onlooker", is_staff=True)

    status, found = _players_found(_client(onlooker), "helen")

    assert (status, found) == (403, [])
