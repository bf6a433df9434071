"""Issue 12: a bns chronicle's sheets on the phone, the narrators' roster and
the character panel, in the seed's words (Physical 7, Brawl 3, Willpower 4/6,
wound boxes, Crinos), with nothing MET-only (no Traits, no Trait bids, no
MET challenge forms); MET rows stay as they were and cost no more queries."""

from dataclasses import replace

import pytest
from asgiref.sync import sync_to_async
from bs4 import BeautifulSoup
from django.template.loader import render_to_string
from django.test import Client
from django.urls import reverse

from challenges import views
from characters.models import Character, Chronicle, GameSession, Presence
from characters.services import character_sheets
from tests.challenges.wsutil import act, connect
from tests.factories import make_rosa, make_user, narrated_chronicle, opposed_challenge


def _bns_evening() -> dict:
    table = narrated_chronicle("By Night")
    chronicle, session = table["chronicle"], table["session"]
    chronicle.ruleset = Chronicle.Ruleset.BNS
    chronicle.save()
    rosa_player = make_user("rosa")
    rosa = make_rosa(chronicle, rosa_player)
    Presence.objects.create(session=session, character=rosa, willpower_spent=2, damage=4)
    tooth = Character.objects.create(
        chronicle=chronicle,
        name="Tooth",
        player=make_user("tooth"),
        physical_attribute=9,
        social_attribute=2,
        mental_attribute=3,
        willpower=4,
        garou=True,
        rage=4,
        form="homid",
    )
    Presence.objects.create(session=session, character=tooth, form="crinos", rage_spent=1)
    thug = Character.objects.create(
        chronicle=chronicle,
        name="Thug",
        physical_attribute=5,
        social_attribute=1,
        mental_attribute=1,
        stock_npc=True,
    )
    Presence.objects.create(session=session, character=thug, damage=1)
    return {**table, "rosa": rosa, "rosa_player": rosa_player, "tooth": tooth, "thug": thug}


@pytest.fixture
def bns(db):
    return _bns_evening()


def _text(node) -> str:
    return " ".join(node.get_text(" ", strip=True).split())


def _phone(character, user) -> BeautifulSoup:
    client = Client()
    client.force_login(user)
    response = client.get(reverse("play", args=[character.pk]))
    assert response.status_code == 200
    return BeautifulSoup(response.content, "html.parser")


def test_the_phone_shows_a_bns_sheet_in_its_own_words(bns):
    page = _phone(bns["rosa"], bns["rosa_player"])
    sheet = _text(page.find(id="sheet"))
    for words in ("Physical 7", "Social 3", "Mental 4", "Brawl 3", "Dodge 2", "Willpower 4/6"):
        assert words in sheet
    assert "Physical focus: Strength" in sheet and "Initiative 7" in sheet
    tracks = [_text(li) for li in page.select("#sheet .wound-track")]
    assert tracks == ["Healthy ■■■", "Injured ■□□", "Incapacitated □□□"]
    assert _text(page.find(id="health")) == "Injured track: 1 of 3 boxes marked"


def test_the_phone_of_a_bns_character_offers_no_traits_and_no_trait_bids(bns):
    page = _phone(bns["rosa"], bns["rosa_player"])
    html = str(page)
    assert "Traits tonight" not in html and "Bid a Trait" not in html
    assert page.find("button", attrs={"name": "bid"}) is None
    assert page.find(id="start-bids") is None
    # Issue 12 (s12 flow): her "Challenge someone" form is an attack of test pools.
    start = page.find(id="start")
    assert start.find("input", attrs={"name": "action"})["value"] == "bns.open"
    assert start.find("input", attrs={"name": "bids"}) is None
    attacks = [b["value"] for b in start.select(".attacks button[name=attack]")]
    assert attacks == ["brawl"]  # no Melee, thrown or Firearms Skill on her sheet


def test_a_garou_phone_shows_rage_and_tonights_form(bns):
    sheet = _text(_phone(bns["tooth"], bns["tooth"].player).find(id="sheet"))
    assert "Rage 3/4" in sheet and "Form: Crinos" in sheet


def test_the_roster_shows_bns_rows_in_their_own_words(bns):
    context = views.dashboard_context(bns["session"])
    doc = BeautifulSoup(render_to_string("challenges/narrate_live.html", context), "html.parser")
    rows = {li.select_one(".name").get_text(): _text(li) for li in doc.select("#roster li")}
    assert "Injured Healthy 3/3 Injured 1/3" in rows["Rosa"]
    assert "P 7 S 3 M 4 WP 4/6" in rows["Rosa"]
    assert "Healthy" in rows["Tooth"] and "Crinos" in rows["Tooth"]
    assert "Stock NPC · 1 damage" in rows["Thug"]
    assert not any("Traits left" in str(li) for li in doc.select("#roster li"))


MET_FORMS = ("Start a mob scene", "Start static challenge", "Start simple test")


def _dashboard(world) -> str:
    narrator = Client()
    narrator.force_login(world["narrator"])
    return narrator.get(reverse("narrate", args=[world["session"].pk])).content.decode()


def test_a_bns_dashboard_offers_no_met_challenge_forms(bns):
    page = _dashboard(bns)
    assert not [words for words in MET_FORMS if words in page]
    assert "Print join cards" in page and "Prepare, edit, retire" not in page


def test_a_met_dashboard_still_offers_its_challenge_forms(game):
    page = _dashboard(game)
    assert [words for words in MET_FORMS if words in page] == list(MET_FORMS)
    assert "Prepare, edit, retire" in page


def test_the_character_panel_shows_the_bns_sheet_and_no_met_tests(bns):
    client = Client()
    client.force_login(bns["narrator"])
    url = reverse("narrate_character", args=[bns["session"].pk, bns["rosa"].pk])
    panel = BeautifulSoup(client.get(url, headers={"HX-Request": "true"}).content, "html.parser")
    text = _text(panel)
    assert "Injured track: 1 of 3 boxes marked" in text
    assert "Physical 7" in text and "Brawl 3" in text and "Willpower 4/6" in text
    assert "Traits tonight" not in text
    assert panel.find("input", attrs={"value": "static.open"}) is None
    assert panel.find("input", attrs={"value": "simple.open"}) is None


def test_a_met_roster_row_reads_no_chronicle_and_no_trait_line(game, django_assert_num_queries):
    session = GameSession.objects.select_related("chronicle").get(pk=game["session"].pk)
    # The row, then its three: a roster sums Trait counts in the database (issue 14).
    with django_assert_num_queries(4) as counted:
        context = views.roster_row_context(session, game["helen"].pk)
    assert not any("characters_chronicle" in q["sql"] for q in counted.captured_queries)
    assert context["entry"].sheet.attributes is None
    html = render_to_string("challenges/_roster_row.html", context)
    assert "P 7" in _text(BeautifulSoup(html, "html.parser"))


def test_a_roster_sheet_is_the_sheet_without_its_copies_at_risk(game):
    """Issue 14: a narrator's roster reads no open bids; every other figure of
    the sheet (what its row shows: held and lost per category) is the same."""
    session = game["session"]
    opposed_challenge(session, game["helen"], game["grady"], bid="Ferocious")
    people = [game["helen"], game["grady"]]
    full, lean = character_sheets(people, session), character_sheets(people, session, risks=False)
    assert {t.name: t.at_risk for t in full[game["helen"].pk].traits}["Ferocious"] == 1
    for pk, sheet in full.items():
        assert all(t.at_risk == 0 and t.risked_in == () for t in lean[pk].traits)
        unrisked = [
            [replace(t, at_risk=0, risked_in=()) for t in c.traits] for c in sheet.categories
        ]
        assert [c.traits for c in lean[pk].categories] == unrisked
        assert [(c.held, c.lost) for c in lean[pk].categories] == [
            (c.held, c.lost) for c in sheet.categories
        ]


def test_a_bns_roster_row_costs_no_more_than_a_met_one(bns, django_assert_num_queries):
    session = GameSession.objects.select_related("chronicle").get(pk=bns["session"].pk)
    with django_assert_num_queries(5):
        context = views.roster_row_context(session, bns["rosa"].pk)
    assert context["entry"].sheet.attributes.willpower_left == 4


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_bns_phone_asking_for_a_trait_challenge_is_refused_and_nothing_opens():
    world = await sync_to_async(_bns_evening)()
    phone, first = await connect(f"/ws/play/{world['rosa'].pk}/", world["rosa_player"])
    assert "Willpower 4/6" in first and "Bid a Trait" not in first
    reply, _ = await act(
        phone, action="challenge.open", defender=str(world["tooth"].pk), bid="physical:Brawl"
    )
    assert reply["type"] == "error", reply
    assert "By Night Studios MET: its sheets have no Traits to bid" in reply["message"]
    from challenges.models import Challenge

    assert not await Challenge.objects.filter(session=world["session"]).aexists()
    await phone.disconnect()


def test_every_page_of_the_bns_demo_opens(db):
    """A bns chronicle crashes nothing that exists: the narrator's and a
    player's pages of the demo's "By Night demo" all open."""
    from io import StringIO

    from django.core.management import call_command

    from characters.management.commands.demo import BNS_CHRONICLE

    call_command("demo", stdout=StringIO())
    chronicle = Chronicle.objects.get(name=BNS_CHRONICLE)
    session = chronicle.open_session()
    rosa = chronicle.characters.get(name="Rosa")
    narrator, player = Client(), Client()
    narrator.force_login(chronicle.narrators.get())
    player.force_login(rosa.player)
    for client, name, args in [
        (player, "home", []),
        (player, "play", [rosa.pk]),
        (player, "play_history", [rosa.pk]),
        (narrator, "narrate_index", []),
        (narrator, "narrate", [session.pk]),
        (narrator, "narrate_character", [session.pk, rosa.pk]),
        (narrator, "narrate_history", [session.pk]),
        (narrator, "prepared_statics", [chronicle.pk]),
        (narrator, "statics_sheet", [chronicle.pk]),
        (narrator, "join_sheet", [chronicle.pk]),
    ]:
        response = client.get(reverse(name, args=args))
        assert response.status_code in (200, 302), (name, response.status_code)
    admin = Client()
    admin.force_login(type(rosa.player).objects.get(username="admin"))
    for url in (
        reverse("admin:characters_character_change", args=[rosa.pk]),
        reverse("admin:characters_character_changelist"),
        reverse("admin:characters_chronicle_change", args=[chronicle.pk]),
        reverse("admin:characters_presence_changelist"),
    ):
        assert admin.get(url).status_code == 200, url


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_bns_dashboard_connects_and_shows_its_roster():
    world = await sync_to_async(_bns_evening)()
    dashboard, first = await connect(f"/ws/narrate/{world['session'].pk}/", world["narrator"])
    assert "WP 4/6" in first and "Stock NPC" in first
    await dashboard.disconnect()


def test_a_bns_arrival_and_a_change_of_who_is_here_send_no_met_choices(bns):
    row = views.roster_row_context(bns["session"], bns["rosa"].pk)
    arrival = render_to_string("challenges/_roster_row_oob.html", {**row, "insert": True})
    assert "WP 4/6" in arrival and "static-character" not in arrival
    context = views.dashboard_context(bns["session"])
    choices = render_to_string("challenges/_character_choices_oob.html", context)
    assert "static-character" not in choices and "mob-characters" not in choices


def test_a_met_arrival_can_still_be_chosen_for_a_static_challenge(game):
    row = views.roster_row_context(game["session"], game["helen"].pk)
    arrival = render_to_string("challenges/_roster_row_oob.html", {**row, "insert": True})
    assert 'hx-swap-oob="beforeend:#static-character"' in arrival
    choices = render_to_string(
        "challenges/_character_choices_oob.html", views.dashboard_context(game["session"])
    )
    assert "innerHTML:#static-character" in choices and "innerHTML:#mob-characters" in choices


@pytest.mark.parametrize(
    ("damage", "words"),
    [
        (0, "Healthy track: no box marked"),
        (2, "Healthy track: 2 of 3 boxes marked"),
        (3, "Healthy track: 3 of 3 boxes marked"),
        (7, "Incapacitated track: 1 of 3 boxes marked"),
    ],
)
def test_the_phone_names_the_wound_track_reached_and_its_boxes_marked(bns, damage, words):
    Presence.objects.filter(character=bns["rosa"]).update(damage=damage)
    health = _text(_phone(bns["rosa"], bns["rosa_player"]).find(id="health"))
    assert health == words
    assert "damage" not in health


def test_a_stock_npc_reads_its_damage_without_a_track(bns):
    sheet = character_sheets([bns["thug"]], bns["session"])[bns["thug"].pk].attributes
    html = render_to_string("challenges/_wounds.html", {"a": sheet})
    words = _text(BeautifulSoup(html, "html.parser"))
    assert words == "Stock NPC: no wound track · 1 damage tonight"
