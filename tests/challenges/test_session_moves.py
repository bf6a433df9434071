"""A session started or ended (from a dashboard or the admin) reaches every open
phone and dashboard of the chronicle at once; a narrator sets who is on a
break or absent from the dashboard. Through the real router."""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async
from django.test import Client
from django.urls import reverse

from challenges import services
from challenges.realtime import collecting
from characters.models import Chronicle, GameSession, Presence
from tests.challenges.wsutil import act, connect, drain, expect
from tests.factories import grady_loses_resilient, make_user

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


_grady_loses_resilient = database_sync_to_async(grady_loses_resilient)


@database_sync_to_async
def _open_session():
    return GameSession.objects.get(ended_at__isnull=True)


@database_sync_to_async
def _sessions() -> int:
    return GameSession.objects.count()


def _goto(frame: str) -> dict | None:
    if not frame.startswith("{"):
        return None
    data = json.loads(frame)
    return data if data.get("type") == "goto" else None


async def _screens(game):
    grady, grady_view = await connect(f"/ws/play/{game['grady'].pk}/", game["grady_player"])
    helen, _ = await connect(f"/ws/play/{game['helen'].pk}/", game["helen_player"])
    path = f"/ws/narrate/{game['session'].pk}/"
    tablet, _ = await connect(path, game["narrator"])
    second, _ = await connect(path, game["narrator"])
    return grady, grady_view, helen, tablet, second


async def test_a_session_started_from_a_dashboard_moves_every_phone_and_dashboard(game):
    await _grady_loses_resilient(game)
    grady, grady_view, helen, tablet, second = await _screens(game)
    assert "Bruised" in grady_view and '<s class="lost"' in grady_view
    for socket in (grady, helen, second):
        await drain(socket)

    reply, frames = await act(tablet, action="session.start", number="2")

    assert reply["status"] == "ok", reply
    new = await _open_session()
    url = reverse("narrate", args=[new.pk])
    for dashboard, seen in ((tablet, frames), (second, [])):
        got = await expect(dashboard, lambda f: (_goto(f) or {}).get("url") == url, frames=seen)
        assert [_goto(f) for f in got if _goto(f)] == [{"type": "goto", "url": url}]
    frames = await expect(grady, ("Session 2 · ", "Healthy", "<bdi>Resilient</bdi> ×2"))
    view = frames[-1]
    assert '<s class="lost"' not in view and "Bruised" not in view
    await expect(helen, "Session 2 · ")
    # The phone is in the new session's group: a Time out there reaches it.
    await database_sync_to_async(services.session_time_out)(
        session=new, user=game["narrator"], msg_id="t1"
    )
    await expect(grady, "Time out!")
    for socket in (grady, helen, tablet, second):
        await socket.disconnect()


async def test_ending_a_session_shows_no_session_tonight_and_the_start_button(game):
    grady, _, helen, tablet, second = await _screens(game)
    for socket in (grady, helen, second):
        await drain(socket)

    reply, frames = await act(tablet, action="session.end")

    assert reply["status"] == "ok", reply
    await expect(grady, "No session tonight")
    await expect(second, ("Yes, start session 2", "has ended"))
    await expect(tablet, "Yes, start session 2", frames=frames)
    reply, _ = await act(
        helen, action="challenge.open", defender=game["grady"].pk, bid="physical:Quick"
    )
    assert reply["type"] == "error" and reply["message"] == "No session is open tonight."

    # From the ended session's dashboard, the next one starts; a phone that had
    # no session gets its sheet and the "Challenge someone" form.
    reply, _ = await act(second, action="session.start", number=2, name="The Masquerade Ball")
    assert reply["status"] == "ok"
    frames = await expect(grady, '<p class="session-label"><bdi>The Masquerade Ball</bdi></p>')
    assert 'id="start" hx-swap-oob="true"' in frames[-1] and "Challenge someone" in frames[-1]
    # A second tap on the same confirmation starts nothing more.
    reply, _ = await act(tablet, action="session.start", number=2)
    assert reply["type"] == "error" and "Session 2 has already started" in reply["message"]
    assert await _sessions() == 2
    for socket in (grady, helen, tablet, second):
        await socket.disconnect()


async def test_a_player_cannot_start_or_end_a_session_nor_set_presence(game):
    helen, _ = await connect(f"/ws/play/{game['helen'].pk}/", game["helen_player"])
    for frame in (
        {"action": "session.start", "number": 2},
        {"action": "session.end"},
        {"action": "presence.set", "character": game["grady"].pk, "status": "break"},
    ):
        reply, _ = await act(helen, **frame)
        assert reply == {"type": "error", "id": reply["id"], "message": "Unknown action."}
    assert await _sessions() == 1
    status = await database_sync_to_async(Presence.objects.get)(character=game["grady"])
    assert status.status == "present"
    await helen.disconnect()


async def test_a_narrator_of_another_chronicle_cannot_set_presence_here(game):
    @database_sync_to_async
    def elsewhere():
        other = make_user("other_narrator")
        chronicle = Chronicle.objects.create(name="Elsewhere")
        chronicle.narrators.add(other)
        return other, GameSession.objects.create(chronicle=chronicle)

    other, session = await elsewhere()
    tablet, _ = await connect(f"/ws/narrate/{session.pk}/", other)
    reply, _ = await act(tablet, action="presence.set", character=game["grady"].pk, status="absent")
    assert reply["type"] == "error" and "no such character" in reply["message"]
    await tablet.disconnect()


async def test_a_break_set_on_the_dashboard_shows_on_her_phone_and_refuses_challenges(game):
    grady, _, helen, tablet, second = await _screens(game)
    await drain(grady)

    reply, frames = await act(
        tablet, action="presence.set", character=game["grady"].pk, status="break"
    )

    assert reply["status"] == "ok", reply
    await expect(grady, "You are on a break: nobody can challenge you.")
    # The roster row says so (the Back button is in her panel, tests/challenges/test_dashboard.py).
    await expect(second, (f"roster-{game['grady'].pk}", "on a break"))
    reply, _ = await act(
        helen, action="challenge.open", defender=game["grady"].pk, bid="physical:Quick"
    )
    assert reply["type"] == "error"
    assert reply["message"] == (
        "Grady is on a break (out of character): nobody can challenge Grady now."
    )

    reply, _ = await act(
        tablet, action="presence.set", character=game["grady"].pk, status="present"
    )
    await expect(grady, lambda f: 'id="live"' in f and "on a break" not in f)
    reply, _ = await act(
        helen, action="challenge.open", defender=game["grady"].pk, bid="physical:Quick"
    )
    assert reply["status"] == "ok"

    # Absent: off the roster; her phone opening again brings her back.
    reply, _ = await act(tablet, action="presence.set", character=game["grady"].pk, status="absent")
    await expect(second, lambda f: 'id="roster"' in f and "Grady" not in f.split('id="roster"')[1])
    again, _ = await connect(f"/ws/play/{game['grady'].pk}/", game["grady_player"])
    await expect(second, ('id="roster-', "Grady"))
    for socket in (grady, again, helen, tablet, second):
        await socket.disconnect()


async def test_a_phone_that_missed_the_move_follows_on_its_next_ping(game):
    grady, view = await connect(f"/ws/play/{game['grady'].pk}/", game["grady_player"])
    stamp = view[len("<!--v:") : view.index("-->")]

    @database_sync_to_async
    def start_and_lose_the_broadcast():
        with collecting():  # the outbox is never sent: the broadcast is lost
            services.session_start(chronicle=game["chronicle"], user=game["narrator"])

    await start_and_lose_the_broadcast()
    assert await drain(grady) == []

    await grady.send_to(text_data=json.dumps({"action": "ping", "v": stamp}))

    await expect(grady, ("Session 2 · ", 'id="start" hx-swap-oob="true"'))
    await grady.disconnect()


async def test_the_admin_action_moves_open_phones_and_dashboards_too(game):
    grady, _, helen, tablet, second = await _screens(game)
    for socket in (grady, tablet):
        await drain(socket)

    @database_sync_to_async
    def start_in_the_admin():
        admin = make_user("admin", is_staff=True, is_superuser=True)
        client = Client()
        client.force_login(admin)
        response = client.post(
            reverse("admin:characters_chronicle_changelist"),
            {
                "action": "start_new_session",
                "_selected_action": [game["chronicle"].pk],
                "post": "yes",
                f"number_{game['chronicle'].pk}": game["session"].number + 1,
            },
        )
        assert response.status_code == 302

    await start_in_the_admin()

    new = await _open_session()
    await expect(grady, "Session 2 · ")
    await expect(tablet, lambda f: (_goto(f) or {}).get("url") == reverse("narrate", args=[new.pk]))
    for socket in (grady, helen, tablet, second):
        await socket.disconnect()


async def test_a_dashboard_that_missed_the_move_follows_on_its_next_ping(game):
    tablet, view = await connect(f"/ws/narrate/{game['session'].pk}/", game["narrator"])
    stamp = view[len("<!--v:") : view.index("-->")]

    @database_sync_to_async
    def start_and_lose_the_broadcast():
        with collecting():
            return services.session_start(chronicle=game["chronicle"], user=game["narrator"])

    new = await start_and_lose_the_broadcast()
    await tablet.send_to(text_data=json.dumps({"action": "ping", "v": stamp}))

    url = reverse("narrate", args=[new.pk])
    await expect(tablet, lambda f: (_goto(f) or {}).get("url") == url)
    await tablet.disconnect()
    # Opened later, the old dashboard stays (its history) and links to the new one.
    old, view = await connect(f"/ws/narrate/{game['session'].pk}/", game["narrator"])
    assert f'href="{url}"' in view and "Go to Session 2 · " in view
    await old.disconnect()
