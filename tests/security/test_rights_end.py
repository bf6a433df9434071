"""An open socket has no more rights than a new one would (``challenges.rights``):
a logout, a password change, a deactivation, a narrator role or a character
taken away close every socket concerned at once, with 4401 (signed out: to the
login page) or 4410 (signed in, but no longer hers: to her home page); the
sockets of other sessions, users and characters stay open and answer.

Each test holds the socket open across the change: before ``challenges.rights``
the socket kept answering, acting and receiving as if nothing had happened."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from challenges.realtime import layer_failed
from characters.models import Character, GameSession
from narrator.asgi import application
from tests.challenges.wsutil import WAIT, _session_cookie
from tests.factories import make_character

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

SIGNED_OUT = {"type": "websocket.close", "code": 4401}
SEAT_LOST = {"type": "websocket.close", "code": 4410}


async def _open(path: str, cookie: str, first: str = 'id="live"') -> WebsocketCommunicator:
    """A socket at ``path`` with session ``cookie``, its first view received."""
    headers = [(b"host", b"testserver"), (b"origin", b"http://testserver")]
    headers.append((b"cookie", f"sessionid={cookie}".encode()))
    communicator = WebsocketCommunicator(application, path, headers=headers)
    connected, _ = await communicator.connect(timeout=WAIT)
    assert connected
    assert first in await communicator.receive_from(timeout=WAIT)
    return communicator


async def _phone(world, name: str, cookie: str) -> WebsocketCommunicator:
    return await _open(f"/ws/play/{world[name].pk}/", cookie)


async def _dashboard(session: GameSession, cookie: str) -> WebsocketCommunicator:
    return await _open(f"/ws/narrate/{session.pk}/", cookie, first='id="challenge-list"')


async def _narrators_sockets(world) -> tuple[WebsocketCommunicator, ...]:
    """The narrator's dashboard and her phone of a new NPC, and the other
    chronicle's narrator's dashboard."""
    npc = await database_sync_to_async(make_character)(world["chronicle"], "Ghoul")
    cookie = await _session_cookie(world["narrator"])
    dashboard = await _dashboard(world["session"], cookie)
    npc_phone = await _open(f"/ws/play/{npc.pk}/", cookie)
    other = await _dashboard(world["other_session"], await _session_cookie(world["other_narrator"]))
    return dashboard, npc_phone, other


async def _still_answers(*sockets: WebsocketCommunicator) -> None:
    """Each socket is open and serves its view on ``sync``; then disconnected."""
    for socket in sockets:
        await socket.send_json_to({"action": "sync"})
        frame = await socket.receive_from(timeout=WAIT)
        assert frame.startswith("<!--v:"), frame[:200]
        await socket.disconnect()


async def _closed(socket: WebsocketCommunicator, expected: dict) -> None:
    assert await socket.receive_output(timeout=WAIT) == expected
    # Nothing more reaches it, even what it asks for.
    await socket.send_json_to({"action": "sync"})
    assert await socket.receive_nothing(timeout=0.3)
    await socket.disconnect()


def _logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


async def test_logging_out_closes_that_browsers_open_sockets_at_once(world):
    browser = await database_sync_to_async(_logged_in)(world["helen_player"])
    phone = await _phone(world, "helen", browser.cookies["sessionid"].value)
    other_login = await _phone(world, "helen", await _session_cookie(world["helen_player"]))
    grady = await _phone(world, "grady", await _session_cookie(world["grady_player"]))

    await database_sync_to_async(browser.post)(reverse("logout"))

    await _closed(phone, SIGNED_OUT)
    await _still_answers(other_login, grady)


async def test_a_logged_out_narrator_can_no_longer_call_time_out(world):
    browser = await database_sync_to_async(_logged_in)(world["narrator"])
    dashboard = await _dashboard(world["session"], browser.cookies["sessionid"].value)

    await database_sync_to_async(browser.post)(reverse("logout"))

    assert await dashboard.receive_output(timeout=WAIT) == SIGNED_OUT
    await dashboard.send_json_to({"id": "t1", "action": "session.time_out"})
    assert await dashboard.receive_nothing(timeout=0.3)
    await dashboard.disconnect()
    session = await database_sync_to_async(GameSession.objects.get)(pk=world["session"].pk)
    assert not session.time_out


async def test_a_password_change_closes_her_other_sessions_sockets(world):
    phone = await _phone(world, "helen", await _session_cookie(world["helen_player"]))
    grady = await _phone(world, "grady", await _session_cookie(world["grady_player"]))

    def change_password():
        world["helen_player"].set_password("a-new-secret")
        world["helen_player"].save()

    await database_sync_to_async(change_password)()
    await _closed(phone, SIGNED_OUT)
    await _still_answers(grady)


async def test_deactivating_a_narrator_closes_her_dashboard_and_phones(world):
    dashboard, npc_phone, other = await _narrators_sockets(world)

    def deactivate():
        world["narrator"].is_active = False
        world["narrator"].save()

    await database_sync_to_async(deactivate)()
    await _closed(dashboard, SIGNED_OUT)
    await _closed(npc_phone, SIGNED_OUT)
    await _still_answers(other)


async def test_deleting_a_user_closes_her_sockets(world):
    phone = await _phone(world, "cain", await _session_cookie(world["cain_player"]))
    await database_sync_to_async(
        get_user_model().objects.filter(pk=world["cain_player"].pk).delete
    )()
    assert await phone.receive_output(timeout=WAIT) in (SIGNED_OUT, SEAT_LOST)
    await phone.disconnect()


async def test_removing_a_narrator_from_a_chronicle_closes_its_dashboard_and_npc_phones(world):
    dashboard, npc_phone, other = await _narrators_sockets(world)

    await database_sync_to_async(world["chronicle"].narrators.remove)(world["narrator"])

    await _closed(dashboard, SEAT_LOST)
    await _closed(npc_phone, SEAT_LOST)
    await _still_answers(other)


async def test_a_narrator_removed_from_the_users_side_or_by_clearing_loses_the_dashboard(world):
    """The relation changed from the user's side, and a chronicle's narrators cleared."""
    await database_sync_to_async(world["other_chronicle"].narrators.add)(world["narrator"])
    cookie = await _session_cookie(world["narrator"])
    here = await _dashboard(world["session"], cookie)
    there = await _dashboard(world["other_session"], cookie)
    other_narrator = await _dashboard(
        world["other_session"], await _session_cookie(world["other_narrator"])
    )

    await database_sync_to_async(world["narrator"].narrated_chronicles.remove)(
        world["other_chronicle"]
    )
    await _closed(there, SEAT_LOST)
    await database_sync_to_async(world["chronicle"].narrators.clear)()
    await _closed(here, SEAT_LOST)
    await _still_answers(other_narrator)


async def test_a_superuser_whose_flag_is_taken_keeps_only_what_she_narrates(world):
    cookie = await _session_cookie(world["admin"])
    dashboard = await _dashboard(world["session"], cookie)

    def demote():
        world["admin"].is_superuser = False
        world["admin"].save()

    await database_sync_to_async(demote)()
    await _closed(dashboard, SEAT_LOST)


async def test_a_character_given_to_another_player_closes_the_old_owners_phone(world):
    old_owner = await _phone(world, "helen", await _session_cookie(world["helen_player"]))
    grady = await _phone(world, "grady", await _session_cookie(world["grady_player"]))

    def give_helen_to_cain():
        helen = Character.objects.get(pk=world["helen"].pk)
        helen.player = world["cain_player"]
        helen.save()

    await database_sync_to_async(give_helen_to_cain)()
    await _closed(old_owner, SEAT_LOST)
    new_owner = await _phone(world, "helen", await _session_cookie(world["cain_player"]))
    await _still_answers(new_owner, grady)


async def test_the_old_owner_never_sees_the_new_owners_throw(world):
    """Given away mid-challenge: the new owner throws, the old phone hears nothing."""
    from challenges import services
    from tests.security.conftest import challenge_at

    challenge = await database_sync_to_async(challenge_at)(
        world, challenger=world["helen"], defender=world["grady"], stage="throws"
    )
    old_owner = await _phone(world, "helen", await _session_cookie(world["helen_player"]))

    def give_and_throw():
        helen = Character.objects.get(pk=world["helen"].pk)
        helen.player = world["cain_player"]
        helen.save()
        services.challenge_throw(
            challenge_id=challenge.pk,
            character=helen,
            throw="paper",
            user=world["cain_player"],
            msg_id="new-owner-throw",
        )

    await database_sync_to_async(give_and_throw)()
    assert await old_owner.receive_output(timeout=WAIT) == SEAT_LOST
    assert await old_owner.receive_nothing(timeout=0.5)
    await old_owner.disconnect()


async def test_an_npc_given_to_a_player_closes_the_narrators_npc_phone(world):
    npc = await database_sync_to_async(make_character)(world["chronicle"], "Ghoul")
    npc_phone = await _open(f"/ws/play/{npc.pk}/", await _session_cookie(world["narrator"]))

    await database_sync_to_async(Character.objects.filter(pk=npc.pk).update)(player=None)
    # An edit that is not a change of hands (the update above changes nothing;
    # a save of her name neither) leaves the phone open.
    npc.name = "Ghoul the Elder"
    await database_sync_to_async(npc.save)()
    redrawn = await npc_phone.receive_from(timeout=WAIT)  # her sheet's character.updated
    assert "Ghoul the Elder" in redrawn

    npc.player = world["cain_player"]
    await database_sync_to_async(npc.save)()
    await _closed(npc_phone, SEAT_LOST)


async def test_a_ping_after_a_layer_failure_reads_the_sockets_rights_again(world):
    """A failing channel layer may have lost the RIGHTS_CHANGED: the first
    heartbeat after any failure this worker saw checks the rights itself."""
    browser = await database_sync_to_async(_logged_in)(world["helen_player"])
    phone = await _phone(world, "helen", browser.cookies["sessionid"].value)
    # The session ends without a word to the socket (another process, a lost event).
    from django.contrib.sessions.models import Session

    await database_sync_to_async(
        Session.objects.filter(session_key=browser.cookies["sessionid"].value).delete
    )()
    await phone.send_json_to({"action": "ping", "v": "x"})
    assert (await phone.receive_output(timeout=WAIT))["type"] == "websocket.send"
    layer_failed()
    await phone.send_json_to({"action": "ping", "v": "x"})
    assert await phone.receive_output(timeout=WAIT) == SIGNED_OUT
    await phone.disconnect()
