"""Issue 13 polish: a storytelling character's panel on the dashboard offers
the health-track ruling (mark damage of a type, heal points, with a reason)
with her preselected: the very form of the Fight block (one partial,
``_track_ruling_form.html``), sending the same ``track.mark`` and
``track.heal`` frames. A Trait or test-pool sheet's panel, and the panel of
a character not here tonight, offer none."""

from io import StringIO

import pytest
from bs4 import BeautifulSoup
from channels.db import database_sync_to_async
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from characters.management.commands.demo import BNS_CHRONICLE, CHRONICLE
from characters.models import Chronicle, Presence
from tests.challenges.wsutil import act_ok, connect, drain
from tests.factories import story_fight_evening

RULING = "Health track ruling"


def _panel(narrator, session, character) -> BeautifulSoup:
    client = Client()
    client.force_login(narrator)
    url = reverse("narrate_character", args=[session.pk, character.pk])
    response = client.get(url, headers={"HX-Request": "true"})
    assert response.status_code == 200
    return BeautifulSoup(response.content, "html.parser")


def _frame(form, **filled) -> dict:
    """What the browser sends for ``form`` (ws-send): each field's current
    value (a select's selected option, else its first), then ``filled``."""
    frame = {}
    for field in form.find_all(["input", "select"]):
        if field.name == "select":
            option = field.find("option", selected=True) or field.find("option")
            frame[field["name"]] = option["value"]
        else:
            frame[field["name"]] = field.get("value", "")
    return {**frame, **filled}


@pytest.mark.django_db
def test_her_panel_offers_the_fight_blocks_ruling_form_with_her_chosen():
    t = story_fight_evening()
    panel = _panel(t["narrator"], t["session"], t["bram"]).find(attrs={"aria-label": RULING})
    assert panel is not None
    options = [(o["value"], o.get("selected") is not None) for o in panel.find_all("option")]
    assert (str(t["bram"].pk), True) in options
    assert [o.text for o in panel.select("select[name=character] option")] == ["Bram"]
    assert [o["value"] for o in panel.select("select[name=damage_type] option")] == [
        "bashing",
        "lethal",
        "aggravated",
    ]
    # The dashboard's Fight block: the same form (one partial), everyone present, nobody chosen.
    client = Client()
    client.force_login(t["narrator"])
    page = BeautifulSoup(
        client.get(reverse("narrate", args=[t["session"].pk])).content, "html.parser"
    )
    block = page.find(attrs={"aria-label": RULING})
    assert [o.text for o in block.select("select[name=character] option")] == [
        "Ada",
        "Bram",
        "Cleo",
        "Dora",
    ]
    assert not block.select("option[selected]")
    strip = {"option"}  # the character choices differ; every other tag and attribute is shared
    assert _shape(panel, strip) == _shape(block, strip)


def _shape(form, strip) -> list:
    return [(tag.name, sorted(tag.attrs)) for tag in form.find_all(True) if tag.name not in strip]


@pytest.mark.django_db
def test_a_character_not_here_tonight_has_no_ruling_on_her_panel():
    t = story_fight_evening()
    Presence.objects.filter(session=t["session"], character=t["dora"]).delete()
    assert _panel(t["narrator"], t["session"], t["dora"]).find(attrs={"aria-label": RULING}) is None


@pytest.mark.django_db
@pytest.mark.parametrize("name", [CHRONICLE, BNS_CHRONICLE])
def test_a_trait_or_test_pool_panel_has_no_health_track_ruling(name):
    call_command("demo", stdout=StringIO())
    chronicle = Chronicle.objects.get(name=name)
    session = chronicle.open_session()
    character = Presence.objects.filter(session=session).first().character
    panel = _panel(chronicle.narrators.first(), session, character)
    assert panel.find(attrs={"aria-label": RULING}) is None
    assert "track.mark" not in str(panel)


@database_sync_to_async
def _track(t, name: str) -> tuple[int, int, int]:
    p = Presence.objects.get(session=t["session"], character=t[name])
    return (p.track_aggravated, p.track_lethal, p.track_bashing)


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_the_panels_form_marks_and_heals_her_track():
    t = await database_sync_to_async(story_fight_evening)()
    page = await database_sync_to_async(_panel)(t["narrator"], t["session"], t["cleo"])
    form = page.find(attrs={"aria-label": RULING})
    dash, _ = await connect(f"/ws/narrate/{t['session'].pk}/", t["narrator"])
    await drain(dash)
    mark = _frame(form, action="track.mark", points="2", damage_type="lethal", reason="fire")
    await act_ok(dash, **mark)
    assert await _track(t, "cleo") == (0, 2, 0)
    await act_ok(dash, **_frame(form, action="track.heal", reason="a spell"))
    assert await _track(t, "cleo") == (0, 1, 0)
    await dash.disconnect()
