"""One-tap join links: accepted only by the HTTP join view, expiring, and
revocable by a narrator (``characters.services.join_links_revoke``)."""

from __future__ import annotations

import time

import pytest
from django.contrib.auth import BACKEND_SESSION_KEY, SESSION_KEY
from django.test import Client
from django.urls import reverse
from sesame.utils import get_token

from characters.models import JoinLinkRevocation
from characters.services import JOIN_BACKEND, join_links_revoke
from tests.security.wsrec import open_socket


@pytest.fixture
def clock(monkeypatch):
    """``time.time`` (what django-sesame stamps and checks tokens with) under the
    test's control, starting at the real time."""

    class Clock:
        now = time.time()

        def __call__(self) -> float:
            return self.now

    fake = Clock()
    monkeypatch.setattr(time, "time", fake)
    return fake


def _join(token: str) -> tuple[int, Client]:
    client = Client()
    response = client.get(reverse("join"), {"token": token})
    return response.status_code, client


def _logged_in_as(client: Client):
    return client.session.get(SESSION_KEY)


@pytest.mark.django_db
def test_a_join_link_logs_its_player_in_and_leads_home(world):
    status, client = _join(get_token(world["helen_player"], scope="join"))
    assert status == 302
    assert _logged_in_as(client) == str(world["helen_player"].pk)
    assert client.session[BACKEND_SESSION_KEY] == JOIN_BACKEND
    assert client.get(reverse("home")).status_code == 302  # on to her only character


@pytest.mark.django_db
def test_a_revoked_link_is_refused_and_a_new_one_works(world, clock):
    player = world["helen_player"]
    old = get_token(player, scope="join")
    clock.now += 5
    join_links_revoke(user=player)
    assert _join(old)[0] == 403
    clock.now += 1  # a link of the revocation's own second is refused too
    new = get_token(player, scope="join")
    clock.now += 60
    status, client = _join(new)
    assert status == 302 and _logged_in_as(client) == str(player.pk)
    assert _join(old)[0] == 403
    # Another player's links are untouched.
    assert _join(get_token(world["grady_player"], scope="join"))[0] == 302


@pytest.mark.django_db
def test_an_expired_link_is_refused(world, clock, settings):
    token = get_token(world["helen_player"], scope="join")
    clock.now += settings.SESAME_MAX_AGE - 5
    assert _join(token)[0] == 302
    clock.now += 10
    assert _join(token)[0] == 403


@pytest.mark.django_db
def test_revoking_logs_out_the_browsers_that_came_in_by_a_link(world):
    player = world["helen_player"]
    _, by_link = _join(get_token(player, scope="join"))
    by_password = Client()
    assert by_password.login(username="helen", password="pw-helen")
    assert join_links_revoke(user=player) == 1
    assert by_link.get(reverse("home"))["Location"].startswith(reverse("login"))
    assert by_password.get(reverse("home")).status_code == 302
    assert "/play/" in by_password.get(reverse("home"))["Location"]


@pytest.mark.django_db
def test_a_token_of_another_scope_or_url_logs_no_one_in(world):
    player = world["helen_player"]
    unscoped = get_token(player)  # the default scope is not the join scope
    assert _join(unscoped)[0] == 403
    token = get_token(player, scope="join")
    for url in (reverse("home"), reverse("play", args=[world["helen"].pk]), reverse("login")):
        client = Client()
        response = client.get(url, {"token": token, "sesame": token})
        assert _logged_in_as(client) is None, url
        assert response.status_code in (200, 302)
        if response.status_code == 302:
            assert response["Location"].startswith(reverse("login"))


@pytest.mark.django_db(transaction=True)
async def test_a_socket_ignores_a_token_in_its_url(world):
    token = get_token(world["helen_player"], scope="join")
    socket, first = await open_socket(f"/ws/play/{world['helen'].pk}/?token={token}")
    assert first == "closed:4401"
    await socket.disconnect()


@pytest.mark.django_db
def test_a_narrator_revokes_her_players_links_from_the_admin(world):
    helen_link = get_token(world["helen_player"], scope="join")
    bea_link = get_token(world["bea_player"], scope="join")
    url = reverse("admin:characters_character_changelist")
    for narrator, characters in [
        (world["other_narrator"], [world["helen"]]),  # not her chronicle: ignored
        (world["narrator"], [world["helen"], world["bea"]]),  # Bea is not hers either
    ]:
        client = Client()
        client.force_login(narrator)
        response = client.post(
            url,
            {"action": "revoke_join_links", "_selected_action": [c.pk for c in characters]},
            follow=True,
        )
        assert response.status_code == 200
    revoked = set(JoinLinkRevocation.objects.values_list("user__username", flat=True))
    assert revoked == {"helen"}
    assert _join(helen_link)[0] == 403
    assert _join(bea_link)[0] == 302
