"""A staff narrator (not a superuser) sees and edits only her own chronicles'
objects in the admin; a superuser sees everything."""

from __future__ import annotations

import uuid

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from challenges import services
from characters.models import Character, Chronicle
from tests.security.conftest import challenge_at

pytestmark = pytest.mark.django_db


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _listed(client, model_url: str) -> set[str]:
    response = client.get(reverse(f"admin:{model_url}_changelist"))
    assert response.status_code == 200
    return {str(obj) for obj in response.context["cl"].result_list}


@pytest.fixture
def played(world):
    """One challenge in each chronicle."""
    challenge_at(world, challenger=world["helen"], defender=world["grady"], stage="response")
    services.simple_test_open(
        session=world["other_session"],
        character=world["bea"],
        user=world["other_narrator"],
        msg_id=uuid.uuid4().hex,
    )
    return world


def test_each_narrator_lists_only_her_own_chronicles_objects(played):
    w = played
    narrator, other, admin = (
        _client(w["narrator"]),
        _client(w["other_narrator"]),
        _client(w["admin"]),
    )
    assert _listed(narrator, "characters_chronicle") == {"Test Chronicle"}
    assert _listed(other, "characters_chronicle") == {"Other Chronicle"}
    assert _listed(admin, "characters_chronicle") == {"Test Chronicle", "Other Chronicle"}
    assert _listed(narrator, "characters_character") == {"Helen", "Grady", "Cain"}
    assert _listed(other, "characters_character") == {"Bea"}
    assert _listed(narrator, "characters_gamesession") == {"Test Chronicle: Tonight"}
    assert _listed(other, "characters_presence") == {"Bea at Other Chronicle: Elsewhere"}
    assert {s.split(" ", 1)[1] for s in _listed(narrator, "challenges_challenge")} == {
        "Helen vs Grady (opposed)"
    }
    assert {s.split(" ", 1)[1] for s in _listed(other, "challenges_challenge")} == {
        "Bea vs the narrator (simple)"
    }
    narrator_events = narrator.get(reverse("admin:challenges_event_changelist")).context["cl"]
    assert {e.session_id for e in narrator_events.result_list} == {w["session"].pk}
    assert len(_listed(admin, "challenges_event")) > len(narrator_events.result_list)


def test_the_chronicle_filter_offers_only_her_chronicles(played):
    response = _client(played["narrator"]).get(reverse("admin:characters_character_changelist"))
    page = response.content.decode()
    assert "Test Chronicle" in page and "Other Chronicle" not in page


def test_another_chronicles_object_cannot_be_opened_or_changed(played):
    w = played
    other = _client(w["other_narrator"])
    url = reverse("admin:characters_character_change", args=[w["helen"].pk])
    assert other.get(url)["Location"] == reverse("admin:index")
    response = other.post(url, {"chronicle": w["other_chronicle"].pk, "name": "Stolen"})
    assert response.status_code == 302
    assert Character.objects.get(pk=w["helen"].pk).name == "Helen"
    assert _client(w["narrator"]).get(url).status_code == 200


def test_a_narrator_can_only_put_a_character_in_her_own_chronicle(played):
    w = played
    client = _client(w["other_narrator"])
    form = client.get(reverse("admin:characters_character_add")).context["adminform"].form
    assert list(form.fields["chronicle"].queryset) == [w["other_chronicle"]]
    response = client.post(
        reverse("admin:characters_character_add"),
        {
            "chronicle": w["chronicle"].pk,
            "name": "Mole",
            "health": 0,
            "traits-TOTAL_FORMS": 0,
            "traits-INITIAL_FORMS": 0,
            "abilities-TOTAL_FORMS": 0,
            "abilities-INITIAL_FORMS": 0,
            "disciplines-TOTAL_FORMS": 0,
            "disciplines-INITIAL_FORMS": 0,
            "weapons-TOTAL_FORMS": 0,
            "weapons-INITIAL_FORMS": 0,
            **{pool: 0 for pool in Character.POOLS},
        },
    )
    assert response.status_code == 200  # the form again, with an error
    assert "Select a valid choice" in response.content.decode()
    assert not Character.objects.filter(name="Mole").exists()


def test_a_narrator_who_creates_a_chronicle_narrates_it(played):
    w = played
    w["other_narrator"].user_permissions.add(Permission.objects.get(codename="add_chronicle"))
    client = _client(w["other_narrator"])
    response = client.post(
        reverse("admin:characters_chronicle_add"),
        {
            "name": "Fresh",
            "ruleset": "met_classic",
            "sessions-TOTAL_FORMS": 0,
            "sessions-INITIAL_FORMS": 0,
            "prepared_statics-TOTAL_FORMS": 0,  # issue 11: the prepared statics inline
            "prepared_statics-INITIAL_FORMS": 0,
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert w["other_narrator"] in Chronicle.objects.get(name="Fresh").narrators.all()
    assert "Fresh" in _listed(client, "characters_chronicle")


def test_client_action_ids_are_for_superusers_only(played):
    url = reverse("admin:challenges_clientaction_changelist")
    assert _client(played["narrator"]).get(url).status_code == 403
    assert _client(played["admin"]).get(url).status_code == 200
    index = _client(played["narrator"]).get(reverse("admin:index")).content.decode()
    assert "Client actions" not in index
