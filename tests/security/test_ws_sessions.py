"""A websocket is only as good as the Django session behind it, read again on
every (re)connect (``narrator.wsauth``): a session ended by a logout, a join-link
revocation, a password change, its expiry, or a delete by another process no
longer opens a phone or a dashboard. The user is looked up after ``accept``, so
a refused login is a close with 4401 once the handshake is done."""

from __future__ import annotations

from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.sessions.models import Session
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from characters.services import join_links_revoke
from narrator.asgi import application
from narrator.wsauth import resolve_user
from tests.challenges.wsutil import WAIT, _session_cookie, join_cookie

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


async def _first(path: str, cookie: str | None) -> str:
    """The first frame of a socket at ``path`` with session ``cookie``: the view's
    HTML, or "closed:CODE"."""
    headers = [(b"host", b"testserver"), (b"origin", b"http://testserver")]
    if cookie is not None:
        headers.append((b"cookie", f"sessionid={cookie}".encode()))
    communicator = WebsocketCommunicator(application, path, headers=headers)
    connected, _ = await communicator.connect(timeout=5)
    assert connected, "the handshake is accepted before the login is checked"
    first = await communicator.receive_output(timeout=5)
    await communicator.disconnect()
    if first["type"] == "websocket.close":
        return f"closed:{first.get('code')}"
    return first["text"]


def _play(world) -> str:
    return f"/ws/play/{world['helen'].pk}/"


def _narrate(world) -> str:
    return f"/ws/narrate/{world['session'].pk}/"


async def test_revoking_join_links_refuses_the_next_reconnect(world):
    cookie = await join_cookie(world["helen_player"])
    assert 'id="live"' in await _first(_play(world), cookie)
    assert await database_sync_to_async(join_links_revoke)(user=world["helen_player"]) == 1
    assert await _first(_play(world), cookie) == "closed:4401"
    # Another player's session is untouched.
    grady = await _session_cookie(world["grady_player"])
    assert 'id="live"' in await _first(f"/ws/play/{world['grady'].pk}/", grady)


async def test_a_session_deleted_by_another_process_is_refused(world):
    """What ``join_links_revoke`` run by ``manage.py`` elsewhere amounts to: the
    row is gone from the database, nothing of this process was told."""
    cookie = await _session_cookie(world["narrator"])
    assert 'id="challenge-list"' in await _first(_narrate(world), cookie)
    await database_sync_to_async(Session.objects.filter(session_key=cookie).delete)()
    assert await _first(_narrate(world), cookie) == "closed:4401"


async def test_a_logged_out_session_is_refused(world):
    client = Client()
    await database_sync_to_async(client.force_login)(world["helen_player"])
    cookie = client.cookies["sessionid"].value
    assert 'id="live"' in await _first(_play(world), cookie)
    await database_sync_to_async(client.post)(reverse("logout"))
    assert await _first(_play(world), cookie) == "closed:4401"


async def test_a_password_change_ends_the_other_sessions(world):
    cookie = await _session_cookie(world["helen_player"])
    assert 'id="live"' in await _first(_play(world), cookie)

    def change_password():
        world["helen_player"].set_password("a-new-secret")
        world["helen_player"].save()

    await database_sync_to_async(change_password)()
    assert await _first(_play(world), cookie) == "closed:4401"


async def test_an_expired_session_is_refused(world):
    cookie = await _session_cookie(world["helen_player"])
    yesterday = timezone.now() - timedelta(days=1)
    await database_sync_to_async(Session.objects.filter(session_key=cookie).update)(
        expire_date=yesterday
    )
    assert await _first(_play(world), cookie) == "closed:4401"


async def test_a_deactivated_user_is_refused(world):
    cookie = await _session_cookie(world["narrator"])

    def deactivate():
        world["narrator"].is_active = False
        world["narrator"].save(update_fields=["is_active"])

    await database_sync_to_async(deactivate)()
    assert await _first(_narrate(world), cookie) == "closed:4401"


async def test_a_forged_or_missing_cookie_is_refused(world):
    assert await _first(_play(world), "not-a-session-key-at-all-0123456") == "closed:4401"
    assert await _first(_play(world), None) == "closed:4401"


async def test_another_players_character_is_refused_after_login(world):
    cookie = await _session_cookie(world["grady_player"])
    assert await _first(_play(world), cookie) == "closed:4403"


async def test_resolve_user_refuses_a_scope_without_the_deferred_middleware(world):
    """A consumer mounted without ``DeferredAuthMiddlewareStack`` (or a scope
    whose user was set by someone else) fails loudly instead of trusting it."""
    with pytest.raises(ValueError, match="DeferredAuthMiddlewareStack"):
        resolve_user({"session": {}, "user": world["helen_player"]})
    with pytest.raises(ValueError, match="DeferredAuthMiddlewareStack"):
        resolve_user({"user": world["helen_player"]})


async def _open(path: str, cookie: str) -> WebsocketCommunicator:
    """A socket at ``path`` with session ``cookie``, its first view received."""
    headers = [(b"host", b"testserver"), (b"origin", b"http://testserver")]
    headers.append((b"cookie", f"sessionid={cookie}".encode()))
    communicator = WebsocketCommunicator(application, path, headers=headers)
    connected, _ = await communicator.connect(timeout=WAIT)
    assert connected
    assert 'id="live"' in await communicator.receive_from(timeout=WAIT)
    return communicator


async def test_revoking_join_links_closes_her_open_join_link_socket_at_once(world):
    """The socket that came in by a join link closes with 4401 when her links
    are revoked; her own password login and another player keep theirs."""
    by_link = await _open(_play(world), await join_cookie(world["helen_player"]))
    by_password = await _open(_play(world), await _session_cookie(world["helen_player"]))
    grady_cookie = await _session_cookie(world["grady_player"])
    grady = await _open(f"/ws/play/{world['grady'].pk}/", grady_cookie)

    assert await database_sync_to_async(join_links_revoke)(user=world["helen_player"]) == 1
    closed = await by_link.receive_output(timeout=WAIT)
    assert closed == {"type": "websocket.close", "code": 4401}
    for survivor in (by_password, grady):
        await survivor.send_json_to({"action": "sync"})
        assert 'id="live"' in await survivor.receive_from(timeout=WAIT)
        await survivor.disconnect()
    await by_link.disconnect()
