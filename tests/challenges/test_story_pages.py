"""Issue 13: a storytelling chronicle's pages (the demo's "Awakening demo")
open and show its sheets of dots in the seed's words (Attributes and Skills
as •••, specialties, Merits, Willpower 5/5, Health boxes, Defense,
Initiative, Speed, Size), with nothing it does not use: no Traits to bid,
no challenge form, no MET health levels or clocks, no static, simple or mob
forms, no combat rounds."""

from io import StringIO

import pytest
from asgiref.sync import sync_to_async
from bs4 import BeautifulSoup
from django.core.management import call_command
from django.template.loader import render_to_string
from django.test import Client
from django.urls import reverse

from challenges import views
from characters.management.commands.demo import STORY_CHRONICLE
from characters.models import Chronicle, Presence
from tests.challenges.wsutil import act, connect

pytestmark = pytest.mark.django_db

MET_WORDS = ["Traits tonight", "Bid a Trait", "Challenge someone", "Healthy", "Rock"]
DASHBOARD_FORMS = ["Static challenge", "Simple test", "Start a mob scene", "Start a combat"]


@pytest.fixture
def demo() -> dict:
    call_command("demo", stdout=StringIO())
    chronicle = Chronicle.objects.get(name=STORY_CHRONICLE)
    session = chronicle.open_session()
    iris = chronicle.characters.get(name="Iris Vale")
    narrator, player = Client(), Client()
    narrator.force_login(chronicle.narrators.get())
    player.force_login(iris.player)
    return {
        "chronicle": chronicle,
        "session": session,
        "iris": iris,
        "narrator": narrator,
        "player": player,
    }


def _text(node) -> str:
    return " ".join(node.get_text(" ", strip=True).split())


def _page(client: Client, name: str, *args, query: str = "") -> BeautifulSoup:
    response = client.get(reverse(name, args=args) + query)
    assert response.status_code == 200, (name, response.status_code)
    return BeautifulSoup(response.content, "html.parser")


def _line(page: BeautifulSoup, label: str) -> str:
    """The text of the sheet line whose aria-label is ``label``."""
    return _text(page.find(attrs={"aria-label": label}))


def test_the_phone_shows_attributes_and_skills_in_dots_with_specialties(demo):
    page = _page(demo["player"], "play", demo["iris"].pk)
    assert _line(page, "Intelligence 3") == "Intelligence •••◦◦"
    assert _line(page, "Strength 1") == "Strength •◦◦◦◦"
    assert _line(page, "Occult 3 (Ghosts, Tarot)") == "Occult (Ghosts, Tarot) •••◦◦"
    assert _line(page, "Brawl 0") == "Brawl ◦◦◦◦◦"
    assert _line(page, "Library 2") == "Library Rare occult texts ••"
    sheet = _text(page.find(id="sheet"))
    for words in (
        "Willpower 5/5",
        "Defense 2",
        "Initiative +5",
        "Speed 8",
        "Size 5",
        "Wisdom 7",
        "Armor 0",
        "Print my sheet",
    ):
        assert words in sheet
    boxes = page.select("#health .health-track .box")  # drawn once, above the sheet
    assert len(boxes) == 7 and [b.small.text for b in boxes[-3:]] == ["-1", "-2", "-3"]
    assert _text(page.find(id="health")).startswith("Health 7/7")


def test_the_phone_of_a_storytelling_character_offers_no_traits_no_bids_and_no_challenge(demo):
    page = _page(demo["player"], "play", demo["iris"].pk)
    assert page.find(id="start").has_attr("hidden")
    assert page.find(id="start-bids") is None
    assert not page.select("#start form")
    text = _text(page.find(id="socket"))
    for words in MET_WORDS:
        assert words not in text, words


def test_the_phone_shows_tonights_willpower_and_track(demo):
    Presence.objects.filter(character=demo["iris"]).update(
        willpower_spent=1, track_aggravated=1, track_lethal=1, track_bashing=1
    )
    page = _page(demo["player"], "play", demo["iris"].pk)
    assert "Willpower 4/5" in _text(page.find(id="sheet"))
    marks = [b.contents[0] if b.contents else "" for b in page.select("#health .box")]
    assert marks[:4] == ["*", "X", "/", ""]
    assert _text(page.find(id="health")).startswith("Health 4/7")


def test_the_dashboard_lists_the_mages_with_health_track_and_willpower_and_no_met_forms(demo):
    Presence.objects.filter(character=demo["iris"]).update(track_lethal=2, willpower_spent=2)
    page = _page(demo["narrator"], "narrate", demo["session"].pk)
    row = _text(page.find(id=f"roster-{demo['iris'].pk}"))
    assert "Iris Vale" in row and "Health 5/7" in row and "WP 3/5" in row
    boxes = page.select(f"#roster-{demo['iris'].pk} .health-track .box")
    assert [b.get("class") for b in boxes] == [["box", "box-lethal"]] * 2 + [["box"]] * 5
    assert len(page.select("#roster > li")) == 4
    text = _text(page.find("main"))
    for words in DASHBOARD_FORMS:
        assert words not in text, words
    assert "Print character sheets" in text
    assert page.select("form input[name=action][value='static.open']") == []


def test_the_character_panel_shows_her_sheet_and_no_met_controls(demo):
    page = _page(demo["narrator"], "narrate_character", demo["session"].pk, demo["iris"].pk)
    text = _text(page)
    assert _line(page, "Academics 3 (History)") == "Academics (History) •••◦◦"
    assert "Willpower 5/5" in text and "Health 7/7" in text and "Print her sheet" in text
    for words in ("Traits tonight", "Static challenge", "Simple test", "Heal one level"):
        assert words not in text, words


def test_a_roster_row_sent_on_arrival_adds_no_met_or_combat_choices(demo):
    context = views.roster_row_context(demo["session"], demo["iris"].pk)
    arrival = render_to_string("challenges/_roster_row_oob.html", {**context, "insert": True})
    assert "Health 7/7" in arrival
    assert "static-character" not in arrival and "combat-people" not in arrival


def test_the_print_sheets_show_every_mage_in_dots_one_a_page(demo):
    page = _page(demo["narrator"], "story_sheets_print", demo["chronicle"].pk)
    sheets = page.select("article.print-character")
    assert [s.h1.text for s in sheets] == ["Iris Vale", "Marcus Hale", "Nico Reyes", "Seraphine"]
    assert _line(sheets[1], "Firearms 3 (Pistols)") == "Firearms (Pistols) •••◦◦"
    assert "Contacts The police ••" in _text(sheets[1])
    one = _page(
        demo["narrator"],
        "story_sheets_print",
        demo["chronicle"].pk,
        query=f"?character={demo['iris'].pk}",
    )
    assert [s.h1.text for s in one.select("article.print-character")] == ["Iris Vale"]


def test_a_player_prints_her_own_sheet_only(demo):
    page = _page(demo["player"], "story_sheet_print", demo["iris"].pk)
    assert _line(page, "Occult 3 (Ghosts, Tarot)") == "Occult (Ghosts, Tarot) •••◦◦"
    marcus = demo["chronicle"].characters.get(name="Marcus Hale")
    assert demo["player"].get(reverse("story_sheet_print", args=[marcus.pk])).status_code == 404


def test_other_rulesets_have_no_printable_sheets_and_strangers_none(demo):
    by_night = Chronicle.objects.get(name="By Night demo")
    url = reverse("story_sheets_print", args=[by_night.pk])
    assert demo["narrator"].get(url).status_code == 404
    stranger = Client()
    stranger.force_login(demo["iris"].player)
    url = reverse("story_sheets_print", args=[demo["chronicle"].pk])
    assert stranger.get(url).status_code == 403


def test_every_other_page_of_the_storytelling_demo_opens(demo):
    session, iris, narrator = demo["session"], demo["iris"], demo["narrator"]
    for client, name, args in [
        (demo["player"], "play_history", [iris.pk]),
        (narrator, "narrate_history", [session.pk]),
        (narrator, "narrate_history_download", [session.pk, "csv"]),
        (narrator, "narrate_history_download", [session.pk, "json"]),
        (narrator, "join_sheet", [demo["chronicle"].pk]),
        (narrator, "narrate_index", []),
    ]:
        response = client.get(reverse(name, args=args), follow=True)
        assert response.status_code == 200, name
    admin = Client()
    admin.force_login(type(iris.player).objects.get(username="admin"))
    for url in (
        reverse("admin:characters_character_change", args=[iris.pk]),
        reverse("admin:characters_chronicle_change", args=[demo["chronicle"].pk]),
        reverse("admin:characters_gamesession_change", args=[session.pk]),
        reverse("admin:characters_presence_change", args=[iris.presences.get().pk]),
    ):
        assert admin.get(url).status_code == 200, url


def _story_evening() -> dict:
    """The demo, for a socket test (a transactional database has no fixture data)."""
    call_command("demo", stdout=StringIO())
    chronicle = Chronicle.objects.get(name=STORY_CHRONICLE)
    iris = chronicle.characters.select_related("player").get(name="Iris Vale")
    marcus = chronicle.characters.get(name="Marcus Hale")
    return {
        "session": chronicle.open_session(),
        "iris": iris,
        "player": iris.player,
        "marcus": marcus,
        "narrator": chronicle.narrators.get(),
    }


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_storytelling_phone_connects_shows_its_dots_and_bids_nothing():
    world = await sync_to_async(_story_evening)()
    phone, first = await connect(f"/ws/play/{world['iris'].pk}/", world["player"])
    assert "Willpower 5/5" in first and "•••◦◦" in first and "Bid a Trait" not in first
    reply, _ = await act(
        phone, action="challenge.open", defender=str(world["marcus"].pk), bid="mental:Occult"
    )
    assert reply["type"] == "error", reply
    assert "Storytelling System" in reply["message"] and "no Traits to bid" in reply["message"]
    from challenges.models import Challenge

    assert not await Challenge.objects.filter(session=world["session"]).aexists()
    await phone.disconnect()


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_storytelling_dashboard_connects_and_shows_its_roster():
    world = await sync_to_async(_story_evening)()
    dashboard, first = await connect(f"/ws/narrate/{world['session'].pk}/", world["narrator"])
    assert "WP 5/5" in first and "Health 7/7" in first and "Iris Vale" in first
    await dashboard.disconnect()


def test_a_storytelling_npcs_panel_offers_play_but_no_auto_answer(demo):
    from characters.models import Character, StorySheet

    ghost = Character.objects.create(chronicle=demo["chronicle"], name="A ghost", willpower=3)
    StorySheet.objects.create(character=ghost)
    page = _page(demo["narrator"], "narrate_character", demo["session"].pk, ghost.pk)
    assert page.find("a", class_="play-npc") is not None
    assert "Auto-answer" not in _text(page) and page.select("input[name=auto_answer]") == []
