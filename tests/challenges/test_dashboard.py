"""The narrator's dashboard sorted by need, with a character panel, guarded
Void and Relent, and user-supplied text isolated in ``<bdi>``."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
from bs4 import BeautifulSoup
from channels.db import database_sync_to_async
from django.template.loader import render_to_string
from django.test import Client
from django.urls import reverse

from challenges import services, views
from challenges.models import Challenge, Event
from characters.models import Chronicle, GameSession
from tests.challenges.wsutil import act, connect, drain
from tests.factories import make_character, make_user, opposed_challenge
from tests.faults.phones import Phone, current_dashboard_stamp, split_stamp
from tests.screen import rendered

MINUTE = 60.0


def _aged(challenge: Challenge, seconds: float) -> Challenge:
    """``challenge`` as if its stage had changed ``seconds`` ago (a new version)."""
    since = datetime.now(tz=UTC).timestamp() - seconds
    challenge.state = {**challenge.state, "stage_since": since}
    challenge.stage_since = datetime.fromtimestamp(since, tz=UTC)
    challenge.version += 1
    challenge.save(update_fields=["state", "stage_since", "version"])
    return challenge


def _ids(doc: BeautifulSoup, container: str) -> list[int]:
    box = doc.find(id=container)
    return [int(a["id"].removeprefix("challenge-")) for a in box.find_all("article")]


async def _shows(dashboard: Phone, open_ids: list[int], result_ids: list[int]) -> None:
    """Once its frames are in, ``dashboard`` lists ``open_ids`` then
    ``result_ids``, and shows what a fresh dashboard would, with its stamp."""
    await dashboard.settle()
    assert _ids(dashboard.screen.doc, "open-challenges") == open_ids
    assert _ids(dashboard.screen.doc, "recent-results") == result_ids
    fresh = Phone(dashboard.path, dashboard.user)
    stamp, html = split_stamp(await fresh.connect())
    await fresh.close()
    assert dashboard.view == rendered(html) and dashboard.stamp == stamp


def _four(game) -> dict[str, Challenge]:
    """Two open challenges and two results between Helen and Grady."""
    session, helen, grady = game["session"], game["helen"], game["grady"]
    return {
        "open long": opposed_challenge(session, helen, grady, bid="Ferocious"),
        "open short": opposed_challenge(session, grady, helen, bid="Tough"),
        "old result": opposed_challenge(
            session, helen, grady, bid="Quick", answer="Resilient", throws=("rock", "scissors")
        ),
        "new result": opposed_challenge(
            session, helen, grady, bid="Brawny", answer="Tough", throws=("paper", "rock")
        ),
    }


# Open rows are (0, since, -id); results (1, -since, -id): views.dashboard_place.
SHOWN = {1: (0, 10.0, -1), 2: (0, 20.0, -2), 3: (1, -30.0, -3), 4: (1, -5.0, -4)}


@pytest.mark.parametrize(
    "challenge_id, place, limit, removed, swap",
    [
        # A new challenge waits the shortest: last of the open ones.
        (5, (0, 40.0, -5), 9, [], "beforeend:#open-challenges"),
        # One shown earlier (a lost broadcast) goes where it waits longest.
        (5, (0, 15.0, -5), 9, [], "beforebegin:#challenge-2"),
        # A move resets the clock: off the screen, then last of the open ones.
        (1, (0, 50.0, -1), 9, [1], "beforeend:#open-challenges"),
        # A result goes on top of the results.
        (2, (1, -60.0, -2), 9, [2], "beforebegin:#challenge-3"),
        # Beyond the limit the oldest result goes (4 resolved at 5 s).
        (5, (0, 40.0, -5), 4, [4], "beforeend:#open-challenges"),
        # A result older than every one shown does not fit: nothing to insert.
        (5, (1, -1.0, -5), 4, [], ""),
    ],
)
def test_a_changed_row_goes_where_a_fresh_dashboard_puts_it(
    challenge_id, place, limit, removed, swap
):
    placement = views.Placement(SHOWN)
    assert placement.move(challenge_id, place, limit) == (removed, swap)
    places = placement.places
    assert len(places) <= limit and (challenge_id in places) == bool(swap)


@pytest.mark.django_db
def test_open_challenges_come_first_longest_waiting_on_top_then_the_newest_results(game):
    made = _four(game)
    for name, age in (
        ("open long", 10 * MINUTE),
        ("open short", 1 * MINUTE),
        ("old result", 20 * MINUTE),
        ("new result", 1 * MINUTE),
    ):
        _aged(made[name], age)
    doc = BeautifulSoup(
        render_to_string("challenges/narrate_live.html", views.dashboard_context(game["session"])),
        "html.parser",
    )
    assert _ids(doc, "open-challenges") == [made["open long"].pk, made["open short"].pk]
    assert _ids(doc, "recent-results") == [made["new result"].pk, made["old result"].pk]
    # A result resolved more than three minutes ago shows its outcome line only.
    new, old = (
        doc.find(id=f"challenge-{made[n].pk}").details for n in ("new result", "old result")
    )
    assert new.has_attr("open") and not old.has_attr("open")
    assert old.summary.find(role="status").get_text() == "Helen wins. Grady loses Resilient."


@pytest.mark.django_db(transaction=True)
async def test_live_moves_put_each_row_where_a_fresh_dashboard_would(game):
    session = game["session"]
    dashboard = Phone(f"/ws/narrate/{session.pk}/", game["narrator"])
    await dashboard.connect()
    helen, grady = game["helen"], game["grady"]
    play = database_sync_to_async(opposed_challenge)

    first = await play(session, helen, grady, bid="Ferocious")
    second = await play(session, grady, helen, bid="Tough")
    await dashboard.settle()
    assert _ids(dashboard.screen.doc, "open-challenges") == [first.pk, second.pk]

    # Grady answers the first: a new stage, a new "waiting since": it goes below.
    await database_sync_to_async(services.challenge_bid)(
        challenge_id=first.pk,
        character=grady,
        bids=["Resilient"],
        user=game["grady_player"],
        msg_id=uuid.uuid4().hex,
    )
    await dashboard.settle()
    assert _ids(dashboard.screen.doc, "open-challenges") == [second.pk, first.pk]

    # Helen relents the second: it goes to the top of the results.
    await database_sync_to_async(services.challenge_bid)(
        challenge_id=second.pk,
        character=helen,
        bids=None,
        user=game["helen_player"],
        msg_id=uuid.uuid4().hex,
    )
    third = await play(session, helen, grady, bid="Quick")
    await _shows(dashboard, [first.pk, third.pk], [second.pk])
    assert dashboard.stamp == await current_dashboard_stamp(session)
    await dashboard.close()


@pytest.mark.django_db(transaction=True)
async def test_void_needs_a_reason_and_the_reason_is_kept_and_shown(game):
    challenge = await database_sync_to_async(opposed_challenge)(
        game["session"], game["helen"], game["grady"], bid="Ferocious"
    )
    narrator, _ = await connect(f"/ws/narrate/{game['session'].pk}/", game["narrator"])
    for reason in ("", "   "):
        reply, _ = await act(
            narrator, action="challenge.void", challenge=challenge.pk, reason=reason
        )
        assert reply == {
            "type": "error",
            "id": reply["id"],
            "message": "Give a reason to void a challenge: it is kept in the history.",
        }
    unchanged = await database_sync_to_async(Challenge.objects.get)(pk=challenge.pk)
    assert (unchanged.stage, unchanged.version) == (challenge.stage, challenge.version)

    reply, frames = await act(
        narrator, action="challenge.void", challenge=challenge.pk, reason="A dispute <ruled>"
    )
    assert reply["status"] == "ok"
    events = await database_sync_to_async(
        lambda: list(Event.objects.filter(challenge=challenge, kind="voided").values("data"))
    )()
    assert events == [{"data": {"reason": "A dispute <ruled>"}}]
    shown = "Reason: <bdi>A dispute &lt;ruled&gt;</bdi>"
    assert any(shown in f and "Voided by a narrator" in f for f in frames + await drain(narrator))
    # A fresh dashboard shows it too.
    again, first = await connect(f"/ws/narrate/{game['session'].pk}/", game["narrator"])
    assert shown in first
    for communicator in (narrator, again):
        await communicator.disconnect()


@pytest.mark.django_db
def test_the_character_panel_shows_her_sheet_tonight_and_starts_tests_for_her(
    game, django_assert_num_queries
):
    made = _four(game)
    with django_assert_num_queries(10):  # however many challenges, losses, bids (and mob scenes)
        views.character_panel_context(game["session"], game["grady"].pk)
    grady, session = game["grady"], game["session"]
    client = Client()
    client.force_login(game["narrator"])
    url = reverse("narrate_character", args=[session.pk, grady.pk])
    panel = BeautifulSoup(client.get(url, headers={"HX-Request": "true"}).content, "html.parser")

    sheet = panel.find("section", attrs={"aria-label": "Character Grady"})
    assert sheet is not None and panel.find(id="challenge-list") is None
    lost = [li.get_text(" ", strip=True) for li in sheet.select(".panel-lost li")]
    assert lost == [
        f"Resilient in #{made['old result'].pk} against Helen",
        f"Tough in #{made['new result'].pk} against Helen",
    ]
    assert "Physical 3 −2" in sheet.select_one(".panel-traits").get_text(" ", strip=True)
    assert sheet.find(string="Healthy") is not None
    challenges = sheet.select(".panel-challenges li")
    assert len(challenges) == 4 and f"#{made['new result'].pk}" in challenges[0].get_text()
    for action, button in (("static.open", "Static challenge"), ("simple.open", "Simple test")):
        form = sheet.find("input", attrs={"value": action}).find_parent("form")
        assert form.has_attr("ws-send")
        assert form.find("input", attrs={"name": "character"})["value"] == str(grady.pk)
        assert form.find("button").get_text() == button

    # The same address without htmx: the whole dashboard with her panel open.
    page = BeautifulSoup(client.get(url).content, "html.parser")
    assert page.find(id="challenge-list") is not None
    assert page.find(id="character-panel").find(attrs={"aria-label": "Character Grady"})


@pytest.mark.django_db
def test_the_character_panel_is_a_narrators_and_of_this_chronicle_only(game):
    elsewhere = Chronicle.objects.create(name="Elsewhere")
    GameSession.objects.create(chronicle=elsewhere)
    stranger = make_character(elsewhere, "Stranger", present=False)
    session = game["session"]
    narrator, player = Client(), Client()
    narrator.force_login(game["narrator"])
    player.force_login(game["helen_player"])
    hers = reverse("narrate_character", args=[session.pk, game["helen"].pk])
    assert narrator.get(hers).status_code == 200
    assert player.get(hers).status_code == 403
    assert (
        narrator.get(reverse("narrate_character", args=[session.pk, stranger.pk])).status_code
        == 404
    )
    assert (
        narrator.get(reverse("narrate_character", args=[9999, game["helen"].pk])).status_code == 404
    )


@pytest.mark.django_db
def test_roster_rows_isolate_names_and_drop_a_player_name_equal_to_the_characters(game):
    chronicle = game["chronicle"]
    make_character(chronicle, "Guest 1", make_user("sam", first_name="Sam"))
    make_character(chronicle, "Guest 2", make_user("guest2"))
    make_character(chronicle, "אסתר " + "x" * 190, make_user("ruth"))
    context = views.dashboard_context(game["session"])
    doc = BeautifulSoup(render_to_string("challenges/narrate_live.html", context), "html.parser")
    rows = {li.select_one(".name").get_text(): li for li in doc.select("#roster li")}
    assert rows["Helen"].small is None  # her player "helen": the same name
    assert rows["Guest 1"].small.get_text() == "(Sam)"
    assert rows["Guest 2"].small is None  # "guest2": the same, but for case and a space
    evil = rows["אסתר " + "x" * 190]  # right to left, then a 190-character word
    assert evil.select_one(".name").bdi.get_text().startswith("אסתר")


@pytest.mark.django_db
def test_challenge_rows_put_names_bids_and_stakes_in_bdi(game):
    chronicle, session = game["chronicle"], game["session"]
    odd = make_character(chronicle, "אסתר", make_user("odd"), traits=[("חזק", "physical", 2)])
    challenge = services.challenge_open(
        session=session,
        challenger=odd,
        defender=game["grady"],
        category="physical",
        bids=["חזק"],
        stakes="ש" * 200,
        user=odd.player,
        msg_id=uuid.uuid4().hex,
    )
    html = render_to_string(
        "challenges/_dashboard_row.html", views.dashboard_row_context(session, challenge.pk)
    )
    row = BeautifulSoup(html, "html.parser").article
    texts = [b.get_text() for b in row.find_all("bdi")]
    assert "אסתר" in texts and "חזק" in texts and "ש" * 200 in texts
    # (bidi controls never reach a sheet: characters.names removes them; real
    # right-to-left text must still be isolated)
    for text in row.find_all(string=lambda s: "ש" in s or "אסתר" in s or "חזק" in s):
        assert text.find_parent("bdi") is not None


@pytest.mark.django_db
def test_relent_is_apart_from_the_bids_and_asks_once(game):
    opposed_challenge(game["session"], game["helen"], game["grady"], bid="Ferocious")
    context = views.play_context(game["grady"], game["session"])
    doc = BeautifulSoup(render_to_string("challenges/play_live.html", context), "html.parser")
    relent = doc.find("input", attrs={"value": "challenge.relent"}).find_parent("form")
    guard = relent.find_parent("details")
    assert guard is not None and "relent" in guard["class"] and not guard.has_attr("open")
    assert guard.summary.get_text() == "Relent…"
    assert relent.button.get_text() == "Yes, relent" and "danger" in relent.button["class"]
    assert "nothing of yours is lost" in relent.get_text()
    bids = doc.find("input", attrs={"value": "challenge.bid"}).find_parent("form")
    assert bids.find_parent("details") is None


@pytest.mark.django_db(transaction=True)
async def test_each_section_keeps_its_window_a_new_result_takes_the_oldest_off(game, monkeypatch):
    """Every section lists a window of its own: a new result beyond it takes
    the oldest result off; an open challenge beyond its window is not shown,
    and takes nothing off the results."""
    window = views.Window(called=1, open=1, results=2)
    monkeypatch.setattr(views, "DASHBOARD_LIMIT", window)  # the consumer reads it here
    monkeypatch.setattr(views.dashboard, "DASHBOARD_LIMIT", window)  # the view-models, there
    session, helen, grady = game["session"], game["helen"], game["grady"]
    play = database_sync_to_async(opposed_challenge)
    older = await play(
        session, helen, grady, bid="Quick", answer="Tough", throws=("rock", "scissors")
    )
    newer = await play(
        session, helen, grady, bid="Brawny", answer="Tough", throws=("paper", "rock")
    )
    waiting = await play(session, grady, helen, bid="Resilient")
    dashboard = Phone(f"/ws/narrate/{session.pk}/", game["narrator"])
    await dashboard.connect()
    assert _ids(dashboard.screen.doc, "recent-results") == [newer.pk, older.pk]

    await play(session, helen, grady, bid="Ferocious")  # the open window is full
    await _shows(dashboard, [waiting.pk], [newer.pk, older.pk])
    latest = await play(
        session, helen, grady, bid="Quick", answer="Tough", throws=("scissors", "paper")
    )
    await _shows(dashboard, [waiting.pk], [latest.pk, newer.pk])
    await dashboard.close()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("status", "shown", "not_shown"),
    [
        ("present", ["Grady is on a break", "Grady has left"], ["not present tonight"]),
        ("break", ["Grady is back from the break", "Grady has left"], ["Grady is on a break"]),
        ("absent", ["not present tonight"], ["Grady has left", "Grady is on a break"]),
    ],
)
def test_the_character_panel_sets_who_is_here(game, status, shown, not_shown):
    services.presence_set(
        session=game["session"],
        character=game["grady"],
        status=status,
        user=game["narrator"],
        msg_id=uuid.uuid4().hex,
    )
    panel = views.character_panel_context(game["session"], game["grady"].pk)
    html = render_to_string(
        "challenges/_character_panel.html",
        {"panel": panel, "session": game["session"], "categories": []},
    )
    for text in shown:
        assert text in html
    for text in not_shown:
        assert text not in html
