"""What a socket costs before its view: the login and the seat (a phone's
character and open session, a narrator's session), and the in-memory layer's
sweep. Query counts on the test database (SQLite by default, PostgreSQL alike:
no move, no locks)."""

from __future__ import annotations

import pytest
from channels.auth import UserLazyObject
from django.contrib.sessions.backends.db import SessionStore
from django.test import Client

from challenges import views
from characters.models import GameSession, Presence
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


@pytest.mark.django_db
@pytest.mark.parametrize("present", [True, False])
def test_a_seat_is_built_as_the_orm_reads_its_rows(game, present):
    """``player_seat`` builds her character and the open session from plain
    rows (``_from_row``, issue 14): every field as the ORM reads it, saved
    rows, with the chronicle's ruleset and whether she was seated before."""
    from characters.models import Character

    if not present:
        Presence.objects.filter(character=game["helen"]).delete()
    character, session = views.player_seat(game["helen_player"], game["helen"].pk)
    for found, model in ((character, Character), (session, GameSession)):
        fields = [f.attname for f in model._meta.concrete_fields]
        orm = model.objects.get(pk=found.pk)
        assert [getattr(found, f) for f in fields] == [getattr(orm, f) for f in fields]
        assert not found._state.adding and found._state.db == "default"
    assert session.chronicle_ruleset == game["session"].chronicle.ruleset
    assert session.seated is present
    assert Presence.objects.filter(character=character, session=session).exists()
