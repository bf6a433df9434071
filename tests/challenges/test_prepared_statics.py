"""Prepared statics (issue 11, statics): QR codes on objects, played from a
phone with no narrator (seeds/000 "Static Challenges", Steps-in-Gum and the
Gaffling); the printable sheets; the narrator's page; refusals; simple tests
with a Trait at stake."""

from __future__ import annotations

import datetime
import re
import types
import uuid

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from sesame.utils import get_token

from challenges import services
from challenges.models import Challenge, Event, PreparedStatic, TraitLoss
from challenges.rules import Throw
from challenges.views.statics import qr_svg
from characters.models import Chronicle, GameSession, Presence
from tests.factories import make_character, make_user, narrated_chronicle


def _without_tokens(html: str) -> str:
    """``html`` without its random tokens: CSRF tokens' values and the message
    ids of its forms (32 hex digits): letters and digits ("…Qc37yY…") that a
    player never reads, and that would make a search for the difficulty fail
    at random."""
    html = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', 'name="csrfmiddlewaretoken"', html)
    return re.sub(r'value="[0-9a-f]{32}"', 'value=""', html)


@pytest.fixture
def gaffling(db, monkeypatch):
    """:func:`build_gaffling`."""
    return build_gaffling(monkeypatch)


def build_gaffling(monkeypatch) -> dict:
    """met_classic: Steps-in-Gum (6 Social), played by "steps", and the
    Gaffling: Social, difficulty 4, a prepared static. The server's throws
    are all rock (``secrets.choice`` patched)."""
    rocks = types.SimpleNamespace(choice=lambda seq: Throw.ROCK)
    monkeypatch.setattr("challenges.services.static.secrets", rocks)
    monkeypatch.setattr("challenges.rules.engine.secrets", rocks)
    table = narrated_chronicle()
    steps_player = make_user("steps")
    steps = make_character(
        table["chronicle"],
        "Steps-in-Gum",
        steps_player,
        traits=[
            ("Persuasive", "social", 2),
            ("Charismatic", "social", 2),
            ("Friendly", "social", 2),
        ],
    )
    static = PreparedStatic.objects.create(
        chronicle=table["chronicle"],
        name="the Gaffling",
        hint="A spirit in the old oak.",
        category="social",
        difficulty=4,
        reveal="The Gaffling agrees to help: it knows the way to the caern.",
    )
    return {**table, "steps": steps, "player": steps_player, "static": static}


def phone(user) -> Client:
    """A phone signed in through ``user``'s join link."""
    client = Client()
    response = client.get(reverse("join"), {"token": get_token(user, scope="join")})
    assert response.status_code == 302
    return client


def scan(client: Client, static: PreparedStatic, character=None):
    url = reverse("static_scan", args=[static.token])
    page = client.get(url)
    data = {"msg_id": uuid.uuid4().hex}
    if character is not None:
        data["character"] = character.pk
    return page, client.post(url, data)


def play(g, throw="paper", bid="Persuasive") -> Challenge:
    challenge = Challenge.objects.get(prepared=g["static"], challenger=g["steps"])
    services.challenge_bid(
        challenge_id=challenge.pk,
        character=g["steps"],
        bids=[bid],
        user=g["player"],
        msg_id=uuid.uuid4().hex,
    )
    return services.challenge_throw(
        challenge_id=challenge.pk,
        character=g["steps"],
        throw=throw,
        user=g["player"],
        msg_id=uuid.uuid4().hex,
    )


def test_steps_in_gum_convinces_the_gaffling_from_his_phone(gaffling):
    """seeds/000 "Static Challenges", Example of Play, played from a QR code
    with no narrator: he bids Persuasive, throws paper against rock, wins,
    loses nothing, and only then sees what the Gaffling reveals."""
    client = phone(gaffling["player"])
    page, response = scan(client, gaffling["static"], gaffling["steps"])
    assert page.status_code == 200
    html = page.content.decode()
    assert "the Gaffling" in html and "A spirit in the old oak." in html
    assert "Try it as" in html and "Steps-in-Gum" in html
    assert response.status_code == 302
    assert response["Location"] == reverse("play", args=[gaffling["steps"].pk])
    challenge = Challenge.objects.get(prepared=gaffling["static"])
    assert challenge.narrator is None and challenge.difficulty == 4
    assert challenge.kind == "static" and challenge.category == "social"
    before = client.get(response["Location"]).content.decode()
    assert "Static Social challenge" in before and "knows the way" not in before
    challenge = play(gaffling)
    assert challenge.outcome == "challenger_wins"
    assert not TraitLoss.objects.filter(challenge=challenge).exists()
    kinds = list(Event.objects.filter(challenge=challenge).values_list("kind", flat=True))
    assert kinds[0] == "opened" and "bid" in kinds and kinds[-1] == "resolved"
    after = client.get(response["Location"]).content.decode()
    assert "Success!" in after and "knows the way to the caern" in after


def test_losing_costs_the_bid_and_reveals_nothing(gaffling):
    client = phone(gaffling["player"])
    scan(client, gaffling["static"], gaffling["steps"])
    challenge = play(gaffling, throw="scissors")
    assert challenge.outcome == "defender_wins"
    lost = TraitLoss.objects.filter(challenge=challenge)
    assert [loss.trait.name for loss in lost] == ["Persuasive"]
    html = client.get(reverse("play", args=[gaffling["steps"].pk])).content.decode()
    assert "Failure: your <bdi>Persuasive</bdi> is lost." in html and "knows the way" not in html


def test_ukm_only_the_aggressor_loses_and_the_winner_keeps_her_bid(gaffling):
    Chronicle.objects.filter(pk=gaffling["chronicle"].pk).update(ruleset="ukm")
    client = phone(gaffling["player"])
    scan(client, gaffling["static"], gaffling["steps"])
    challenge = play(gaffling, throw="paper")
    assert challenge.outcome == "challenger_wins"
    assert not TraitLoss.objects.filter(challenge=challenge).exists()


def test_the_object_overbids_when_its_difficulty_doubles_his_count(gaffling):
    """Difficulty 12 against his 6: he wins the first test, the object
    overbids at once (no narrator), the retest ties and the overbidder wins
    it (met_classic): he loses Persuasive."""
    PreparedStatic.objects.filter(pk=gaffling["static"].pk).update(difficulty=12, may_overbid=True)
    client = phone(gaffling["player"])
    scan(client, gaffling["static"], gaffling["steps"])
    challenge = play(gaffling, throw="paper")
    assert challenge.stage == "throws"
    assert Event.objects.filter(challenge=challenge, kind="retest_called").exists()
    challenge = services.challenge_throw(
        challenge_id=challenge.pk,
        character=gaffling["steps"],
        throw="rock",
        user=gaffling["player"],
        msg_id=uuid.uuid4().hex,
    )
    assert challenge.outcome == "defender_wins"
    assert [x.trait.name for x in TraitLoss.objects.filter(challenge=challenge)] == ["Persuasive"]
    html = client.get(reverse("play", args=[gaffling["steps"].pk])).content.decode()
    assert "Overbid (the Gaffling)" in html
    visible = re.sub(r"\d{3,}|data-[a-z-]+=\"[^\"]*\"|id=\"[^\"]*\"", "", _without_tokens(html))
    assert "12" not in visible


def test_the_difficulty_never_appears_on_his_phone(gaffling):
    """A tie: he declares 6 against a difficulty of 37 and loses; no page of
    his shows 37, neither as a difficulty nor as a declared count."""
    PreparedStatic.objects.filter(pk=gaffling["static"].pk).update(difficulty=37)
    client = phone(gaffling["player"])
    page, _ = scan(client, gaffling["static"], gaffling["steps"])
    challenge = play(gaffling, throw="rock")
    assert challenge.stage == "declare_challenger"
    services.challenge_declare(
        challenge_id=challenge.pk,
        character=gaffling["steps"],
        count=None,
        user=gaffling["player"],
        msg_id=uuid.uuid4().hex,
    )
    challenge.refresh_from_db()
    assert challenge.outcome == "defender_wins"
    html = client.get(reverse("play", args=[gaffling["steps"].pk])).content.decode()
    assert "its difficulty" in html
    for text in (page.content.decode(), html):
        text = _without_tokens(text)
        # 37 as a number of its own (an id such as 1370 on PostgreSQL is not it)
        assert not re.search(r"(?<!\d)37(?!\d)", text) and "Difficulty" not in text


REFUSALS = [
    (
        "retired",
        lambda g: PreparedStatic.objects.filter(pk=g["static"].pk).update(active=False),
        "no longer in play",
    ),
    (
        "too late",
        lambda g: PreparedStatic.objects.filter(pk=g["static"].pk).update(
            available_until=timezone.now() - datetime.timedelta(minutes=1)
        ),
        "no longer in play",
    ),
    (
        "too early",
        lambda g: PreparedStatic.objects.filter(pk=g["static"].pk).update(
            available_from=timezone.now() + datetime.timedelta(hours=1)
        ),
        "not in play yet",
    ),
    (
        "another session",
        lambda g: PreparedStatic.objects.filter(pk=g["static"].pk).update(
            session=GameSession.objects.create(
                chronicle=g["chronicle"], name="Old", ended_at=timezone.now()
            )
        ),
        "not in play tonight",
    ),
    (
        "no session",
        lambda g: GameSession.objects.filter(pk=g["session"].pk).update(ended_at=timezone.now()),
        "No session is open",
    ),
    (
        "time out",
        lambda g: GameSession.objects.filter(pk=g["session"].pk).update(time_out=True),
        "Time out",
    ),
    ("no Trait", lambda g: g["steps"].traits.all().delete(), "no Social Trait left"),
    (
        "incapacitated",
        lambda g: Presence.objects.filter(character=g["steps"]).update(health=3),
        "incapacitated",
    ),
]


@pytest.mark.parametrize(("why", "arrange", "message"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_refusals_are_clear_and_change_nothing(gaffling, why, arrange, message):
    arrange(gaffling)
    client = phone(gaffling["player"])
    url = reverse("static_scan", args=[gaffling["static"].token])
    response = client.post(url, {"msg_id": uuid.uuid4().hex, "character": gaffling["steps"].pk})
    assert response.status_code == 200
    assert message in response.content.decode()
    assert not Challenge.objects.exists() and not Event.objects.exists()


def test_one_attempt_per_session_and_an_open_one_is_resumed(gaffling):
    client = phone(gaffling["player"])
    _, first = scan(client, gaffling["static"], gaffling["steps"])
    _, again = scan(client, gaffling["static"], gaffling["steps"])
    assert again.status_code == 302 and Challenge.objects.count() == 1
    play(gaffling)
    _, third = scan(client, gaffling["static"], gaffling["steps"])
    assert "has already tried the Gaffling tonight" in third.content.decode()
    assert Challenge.objects.count() == 1


def test_signed_out_phone_is_told_to_open_its_join_link(gaffling):
    response = Client().get(reverse("static_scan", args=[gaffling["static"].token]))
    html = response.content.decode()
    assert response.status_code == 200 and "not signed in" in html and "join link" in html
    assert Client().get(reverse("static_scan", args=["nope"])).status_code == 404


def test_a_player_with_two_characters_chooses(gaffling):
    second = make_character(
        gaffling["chronicle"], "Aunt Ruth", gaffling["player"], traits=[("Wise", "social", 3)]
    )
    client = phone(gaffling["player"])
    page, _ = scan(client, gaffling["static"])
    html = page.content.decode()
    assert 'type="radio"' in html and "Aunt Ruth" in html and "Steps-in-Gum" in html
    _, response = scan(client, gaffling["static"], second)
    assert response["Location"] == reverse("play", args=[second.pk])
    assert Challenge.objects.get().challenger == second


def test_someone_elses_character_is_refused(gaffling):
    other = make_user("other")
    client = phone(other)
    _, response = scan(client, gaffling["static"], gaffling["steps"])
    assert "None of your characters" in response.content.decode()
    assert not Challenge.objects.exists()


def test_the_dashboard_shows_the_attempt(gaffling):
    scan(phone(gaffling["player"]), gaffling["static"], gaffling["steps"])
    play(gaffling)
    narrator = Client()
    narrator.force_login(gaffling["narrator"])
    html = narrator.get(reverse("narrate", args=[gaffling["session"].pk])).content.decode()
    assert "Steps-in-Gum" in html and "the Gaffling" in html and "Success" in html


# --- the narrator's page and the printable sheets -----------------------------------


def test_narrator_creates_edits_and_retires_a_static(gaffling):
    client = Client()
    client.force_login(gaffling["narrator"])
    url = reverse("prepared_statics", args=[gaffling["chronicle"].pk])
    response = client.post(
        url,
        {
            "name": "the vault door",
            "hint": "Locked.",
            "category": "mental",
            "difficulty": 5,
            "active": "on",
        },
    )
    assert response.status_code == 302
    door = PreparedStatic.objects.get(name="the vault door")
    assert door.chronicle == gaffling["chronicle"] and door.active and len(door.token) >= 20
    page = client.get(url, {"edit": door.pk}).content.decode()
    assert "Edit" in page and "the vault door" in page
    client.post(
        url,
        {
            "id": door.pk,
            "name": "the vault door",
            "category": "mental",
            "difficulty": 6,
            "active": "on",
        },
    )
    door.refresh_from_db()
    assert door.difficulty == 6
    client.post(url, {"retire": door.pk})
    door.refresh_from_db()
    assert not door.active
    other = Client()
    other.force_login(gaffling["player"])
    assert other.get(url).status_code == 403


def test_the_statics_sheet_has_one_card_per_active_static(gaffling):
    PreparedStatic.objects.create(
        chronicle=gaffling["chronicle"], name="the vault door", category="mental", difficulty=5
    )
    PreparedStatic.objects.create(
        chronicle=gaffling["chronicle"],
        name="retired",
        category="mental",
        difficulty=5,
        active=False,
    )
    client = Client()
    client.force_login(gaffling["narrator"])
    html = client.get(reverse("statics_sheet", args=[gaffling["chronicle"].pk])).content.decode()
    assert html.count('class="card"') == 2 and html.count("<svg") == 2
    link = f"http://testserver/s/{gaffling['static'].token}/"
    assert link in html
    assert qr_svg(link) in html  # the QR code is the one qrcode makes of that link
    assert "A spirit in the old oak." in html and "retired" not in html
    assert "@page" in html and "A4" in html
    assert ">4<" not in html  # no difficulty on the printed card


def test_the_join_sheet_has_one_card_per_player_character(gaffling):
    make_character(gaffling["chronicle"], "An NPC", None, traits=[("Wise", "social", 1)])
    client = Client()
    client.force_login(gaffling["narrator"])
    html = client.get(reverse("join_sheet", args=[gaffling["chronicle"].pk])).content.decode()
    assert html.count('class="card"') == 1 and "Steps-in-Gum" in html and "An NPC" not in html
    link = re.search(r'href="(http://testserver/accounts/join/\?[^"]+)"', html).group(1)
    link = link.replace("&amp;", "&")
    assert qr_svg(link) in html
    assert link.endswith(f"next=/play/{gaffling['steps'].pk}/")
    landed = Client().get(link.removeprefix("http://testserver"))
    assert landed.status_code == 302 and landed["Location"] == f"/play/{gaffling['steps'].pk}/"


def _sheet_asked_by_a_forger(gaffling, name: str, **server):
    """The narrator's ``name`` sheet, asked for with a forged Host header."""
    client = Client()
    client.force_login(gaffling["narrator"])
    url = reverse(name, args=[gaffling["chronicle"].pk])
    return client.get(url, HTTP_HOST="evil.example", **server)


JOIN_BASE = re.compile(r'href="(https?://[^"/]+)/accounts/join/')


def test_the_join_sheet_links_to_the_configured_address_whatever_host_it_is_asked_for(
    gaffling, settings
):
    settings.PUBLIC_URL = "https://narrator.example.org"
    response = _sheet_asked_by_a_forger(gaffling, "join_sheet")
    html = response.content.decode()
    assert JOIN_BASE.findall(html) == ["https://narrator.example.org"]
    assert "evil.example" not in html


def test_the_join_sheet_is_never_cached(gaffling):
    response = _sheet_asked_by_a_forger(gaffling, "join_sheet")
    assert "no-store" in response["Cache-Control"]


def test_the_join_sheet_links_to_the_servers_own_address_when_none_is_configured(
    gaffling, settings
):
    settings.PUBLIC_URL = ""
    server = {"SERVER_NAME": "10.0.0.5", "SERVER_PORT": "8000"}
    html = _sheet_asked_by_a_forger(gaffling, "join_sheet", **server).content.decode()
    assert JOIN_BASE.findall(html) == ["http://10.0.0.5:8000"]
    assert "evil.example" not in html and "set <code>PUBLIC_URL</code>" in html


def test_the_statics_sheet_links_to_the_configured_address_whatever_host_it_is_asked_for(
    gaffling, settings
):
    settings.PUBLIC_URL = "https://narrator.example.org"
    html = _sheet_asked_by_a_forger(gaffling, "statics_sheet").content.decode()
    assert f'href="https://narrator.example.org/s/{gaffling["static"].token}/"' in html
    assert "evil.example" not in html


def test_the_chronicle_admin_edits_its_statics(gaffling):
    admin = make_user("root", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(admin)
    url = reverse("admin:characters_chronicle_change", args=[gaffling["chronicle"].pk])
    html = client.get(url).content.decode()
    assert "prepared_statics-0-difficulty" in html and "the Gaffling" in html


# --- simple tests with a Trait at stake ---------------------------------------------


@pytest.mark.parametrize(("throw", "lost"), [("scissors", ["Friendly"]), ("paper", [])])
def test_simple_test_with_a_trait_at_stake(gaffling, throw, lost):
    challenge = services.simple_test_open(
        session=gaffling["session"],
        character=gaffling["steps"],
        at_stake="friendly",
        user=gaffling["narrator"],
        msg_id=uuid.uuid4().hex,
    )
    assert challenge.state["challenger_bids"] == ["Friendly"] and challenge.category == "social"
    challenge = services.challenge_throw(
        challenge_id=challenge.pk,
        character=gaffling["steps"],
        throw=throw,
        user=gaffling["player"],
        msg_id=uuid.uuid4().hex,
    )
    assert [x.trait.name for x in TraitLoss.objects.filter(challenge=challenge)] == lost


def test_a_simple_test_cannot_stake_a_trait_she_lacks(gaffling):
    with pytest.raises(services.ActionRefused, match="no Trait 'Brave'"):
        services.simple_test_open(
            session=gaffling["session"],
            character=gaffling["steps"],
            at_stake="Brave",
            user=gaffling["narrator"],
            msg_id=uuid.uuid4().hex,
        )
    assert not Challenge.objects.exists()


def test_the_narrators_form_keeps_its_times(gaffling):
    """A time typed in the tablet's date-and-time box is kept, and the edit
    form shows it again in the box's own format."""
    client = Client()
    client.force_login(gaffling["narrator"])
    url = reverse("prepared_statics", args=[gaffling["chronicle"].pk])
    static = gaffling["static"]
    client.post(
        url,
        {
            "id": static.pk,
            "name": static.name,
            "category": "social",
            "difficulty": 4,
            "available_until": "2031-11-24T22:30",
            "session": gaffling["session"].pk,
            "active": "on",
        },
    )
    static.refresh_from_db()
    assert static.available_until is not None and static.session == gaffling["session"]
    page = client.get(url, {"edit": static.pk}).content.decode()
    assert 'value="2031-11-24T22:30"' in page


# --- names cleaned ------------------------------------------------------------------

#: A hostile static: a bidi override (U+202E) and a zero-width space (U+200B)
#: in each text, and an isolate (U+2066, U+2069) in the hint.
HOSTILE = {
    "name": "the \u202evault\u200b door",
    "hint": "Locked.\u200b \u2066Mental\u2069 to pick.",
    "reveal": "Inside:\u202e a map.\n\nAnd a key\u200b.",
}
CLEANED = {
    "name": "the vault door",
    "hint": "Locked. Mental to pick.",
    "reveal": "Inside: a map.\n\nAnd a key.",
}


def _made_on_the_dashboard(g, texts: dict) -> None:
    client = Client()
    client.force_login(g["narrator"])
    url = reverse("prepared_statics", args=[g["chronicle"].pk])
    fields = {**texts, "category": "mental", "difficulty": 5, "active": "on"}
    assert client.post(url, fields).status_code == 302


def _made_in_the_admin(g, texts: dict) -> None:
    client = Client()
    client.force_login(make_user("root", is_staff=True, is_superuser=True))
    fields = {
        **texts,
        "chronicle": g["chronicle"].pk,
        "category": "mental",
        "difficulty": 5,
        "active": "on",
    }
    response = client.post(reverse("admin:challenges_preparedstatic_add"), fields)
    assert response.status_code == 302, response.content.decode()[:2000]


def _made_in_code(g, texts: dict) -> None:
    PreparedStatic.objects.create(
        chronicle=g["chronicle"], category="mental", difficulty=5, **texts
    )


@pytest.mark.parametrize(
    "make",
    [_made_on_the_dashboard, _made_in_the_admin, _made_in_code],
    ids=["dashboard", "admin", "code"],
)
def test_a_statics_name_hint_and_reveal_lose_bidi_and_zero_width_characters(gaffling, make):
    """Whatever the path, a prepared static keeps its texts as names are kept
    (``characters.names``): no bidi control to reorder a player's screen or
    printed card, no zero-width character; the reveal keeps its lines."""
    make(gaffling, HOSTILE)
    static = PreparedStatic.objects.exclude(pk=gaffling["static"].pk).get()
    assert {key: getattr(static, key) for key in CLEANED} == CLEANED


def test_a_static_named_with_invisible_characters_only_is_refused(gaffling):
    client = Client()
    client.force_login(gaffling["narrator"])
    url = reverse("prepared_statics", args=[gaffling["chronicle"].pk])
    response = client.post(
        url, {"name": "\u200b\u202e", "category": "mental", "difficulty": 5, "active": "on"}
    )
    assert response.status_code == 200
    assert "at least one visible letter" in response.content.decode()
    assert PreparedStatic.objects.count() == 1
