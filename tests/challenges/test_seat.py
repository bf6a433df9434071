"""What a socket costs before its view: the login and the seat (a phone's
character and open session, a narrator's session), and the in-memory layer's
sweep. Query counts on the test database (SQLite by default, PostgreSQL alike:
no move, no locks)."""

from __future__ import annotations

import asyncio

import pytest
from channels.auth import UserLazyObject
from django.contrib.sessions.backends.db import SessionStore
from django.test import Client

from challenges import views
from characters.models import GameSession, Presence
from narrator.memlayer import InMemoryChannelLayer
from narrator.wsauth import resolve_user


def _scope(user) -> dict:
    """A socket's scope as ``DeferredAuthMiddlewareStack`` leaves it, for a
    browser logged in as ``user``."""
    client = Client()
    client.force_login(user)
    return {"session": SessionStore(client.cookies["sessionid"].value), "user": UserLazyObject()}


@pytest.mark.django_db
def test_a_reconnecting_phone_costs_four_queries_before_its_view(game, django_assert_num_queries):
    """The session row, the user, her character, the open session with her presence."""
    scope = _scope(game["helen_player"])
    with django_assert_num_queries(4):
        user = resolve_user(scope)
        character, session = views.player_seat(user, game["helen"].pk)
    assert (user, character, session) == (game["helen_player"], game["helen"], game["session"])
    assert scope["user"] == game["helen_player"]


@pytest.mark.django_db
def test_an_arriving_phone_is_marked_present_at_her_starting_health(game):
    Presence.objects.filter(character=game["helen"]).delete()
    game["helen"].health = 3
    game["helen"].save(update_fields=["health"])
    character, session = views.player_seat(game["helen_player"], game["helen"].pk)
    assert session == game["session"]
    presence = Presence.objects.get(character=character, session=session)
    assert presence.health == 3
    # Seated again: nothing new.
    views.player_seat(game["helen_player"], game["helen"].pk)
    assert Presence.objects.filter(character=character).count() == 1


@pytest.mark.django_db
def test_a_seat_between_sessions_and_a_seat_that_is_not_hers(game):
    assert views.player_seat(game["grady_player"], game["helen"].pk) is None
    GameSession.objects.filter(pk=game["session"].pk).update(ended_at=game["session"].started_at)
    character, session = views.player_seat(game["helen_player"], game["helen"].pk)
    assert (character, session) == (game["helen"], None)


async def test_the_in_memory_layer_sweeps_at_most_once_per_interval(monkeypatch):
    layer = InMemoryChannelLayer(expiry=60)
    sweeps = []
    monkeypatch.setattr(
        "channels.layers.InMemoryChannelLayer._clean_expired",
        lambda self: sweeps.append(1),
    )
    now = [1000.0]
    monkeypatch.setattr("narrator.memlayer.time.monotonic", lambda: now[0])
    for _ in range(3):
        layer._clean_expired()
    assert len(sweeps) == 1
    now[0] += layer.sweep_every
    layer._clean_expired()
    assert len(sweeps) == 2


async def test_the_in_memory_layer_still_expires_messages_and_delivers():
    layer = InMemoryChannelLayer(expiry=60)
    layer.sweep_every = 0.0  # sweep on every call, as Channels does
    channel = await layer.new_channel()
    await layer.group_add("g", channel)
    await layer.group_send("g", {"type": "hello"})
    assert await asyncio.wait_for(layer.receive(channel), 1) == {"type": "hello"}
    # An expired message is swept with the channel's group memberships.
    await layer.send(channel, {"type": "stale"})
    expires, message = layer.channels[channel]._queue[0]
    layer.channels[channel]._queue[0] = (expires - 61, message)
    layer._clean_expired()
    assert channel not in layer.channels
    assert channel not in layer.groups.get("g", {})
