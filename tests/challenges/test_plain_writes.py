"""The move path's plain-SQL writes (``services._core._insert``, ``_update``)
store what the ORM would: JSON, aware datetimes, foreign keys by id; a
repeated message id is still refused as AlreadyDone, changing nothing."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from challenges import services
from challenges.models import ClientAction, Event, Test
from challenges.services._core import _insert, _update
from tests.factories import opposed_challenge

pytestmark = pytest.mark.django_db


def test_an_insert_and_an_update_store_what_the_orm_reads_back(game):
    challenge = opposed_challenge(game["session"], game["helen"], game["grady"], bid="Ferocious")
    when = datetime(2026, 11, 27, 16, 30, 5, 123456, tzinfo=UTC)
    data = {"bids": ["Ferocious", "Tough"], "n": 2, "nested": {"none": None, "é": True}}
    rows = [
        {
            "session": game["session"].pk,
            "challenge": challenge.pk,
            "kind": kind,
            "data": data,
            "actor": game["helen_player"].pk,
            "created_at": when,
        }
        for kind in ("plain.one", "plain.two")
    ]
    _insert(Event, rows)
    stored = list(Event.objects.filter(kind__startswith="plain.").order_by("id"))
    assert [e.kind for e in stored] == ["plain.one", "plain.two"]
    assert all(e.data == data and e.created_at == when for e in stored)
    assert stored[0].actor_id == game["helen_player"].pk
    assert stored[0].challenge_id == challenge.pk

    key = {"challenge": challenge.pk, "number": 9}
    assert _update(Test, key, {"challenger_throw": "rock"}) == 0  # no such row
    blank = {"challenger_throw": "", "defender_throw": "", "winner": "", "retest": "", "by": ""}
    _insert(
        Test,
        [{**key, **blank, "challenger_declared": None, "defender_declared": None, "tie": False}],
    )
    assert _update(Test, key, {"challenger_throw": "rock", "tie": True}) == 1
    test = Test.objects.get(challenge=challenge, number=9)
    assert (test.challenger_throw, test.tie, test.defender_declared) == ("rock", True, None)


def test_a_repeated_message_id_is_already_done_and_changes_nothing(game):
    challenge = opposed_challenge(game["session"], game["helen"], game["grady"], bid="Ferocious")
    msg_id = uuid.uuid4().hex
    services.challenge_bid(
        challenge_id=challenge.pk,
        character=game["grady"],
        bids=["Tough"],
        user=game["grady_player"],
        msg_id=msg_id,
    )
    challenge.refresh_from_db()
    with pytest.raises(services.AlreadyDone):
        services.challenge_throw(
            challenge_id=challenge.pk,
            character=game["grady"],
            throw="rock",
            user=game["grady_player"],
            msg_id=msg_id,
        )
    assert Test.objects.get(challenge=challenge).defender_throw == ""
    assert type(challenge).objects.get(pk=challenge.pk).version == challenge.version
    assert ClientAction.objects.filter(msg_id=msg_id).count() == 1


def test_a_defender_is_found_in_the_sessions_chronicle_only(game):
    """``views.character_in_session`` (plain SQL): her full row, or
    ActionRefused for a character of another chronicle or none."""
    from challenges import views
    from characters.models import Chronicle
    from tests.factories import make_character

    found = views.character_in_session(game["session"], game["grady"].pk)
    assert (found.pk, found.name, found.chronicle_id) == (
        game["grady"].pk,
        "Grady",
        game["session"].chronicle_id,
    )
    assert found.health == game["grady"].health and found.player_id == game["grady_player"].pk
    # Every field as the ORM reads it (JSON, dates, booleans converted), a saved row.
    from characters.models import Character

    fields = [f.attname for f in Character._meta.concrete_fields]
    orm = Character.objects.get(pk=found.pk)
    assert [getattr(found, f) for f in fields] == [getattr(orm, f) for f in fields]
    assert not found._state.adding and found._state.db == "default"
    elsewhere = make_character(
        Chronicle.objects.create(name="Elsewhere"), "Stranger", present=False
    )
    for pk in (elsewhere.pk, 10**6):
        with pytest.raises(services.ActionRefused, match="no such character in this chronicle"):
            views.character_in_session(game["session"], pk)


@pytest.mark.parametrize(
    ("change", "refusal"),
    [({"time_out": True}, "Time out!"), ({"ended_at": datetime.now(UTC)}, "session is over")],
)
def test_an_open_in_a_time_out_or_an_ended_session_is_refused(game, change, refusal):
    """The open reads its session and ruleset in one plain query
    (``_lock_session_ruleset``) and still refuses, creating nothing."""
    from challenges.models import Challenge
    from characters.models import GameSession

    GameSession.objects.filter(pk=game["session"].pk).update(**change)
    with pytest.raises(services.ActionRefused, match=refusal):
        opposed_challenge(game["session"], game["helen"], game["grady"], bid="Ferocious")
    assert not Challenge.objects.exists() and not ClientAction.objects.exists()


def test_a_locked_challenge_is_the_row_the_orm_reads(game):
    """``_lock_challenge`` builds the row from a plain query (``_from_row``):
    every field as the ORM converts it (state decoded, aware datetimes), and
    its session's state beside it."""
    from challenges.models import Challenge
    from challenges.services._core import _lock_challenge

    challenge = opposed_challenge(
        game["session"], game["helen"], game["grady"], bid="Ferocious", answer="Tough"
    )
    locked = _lock_challenge(challenge.pk, for_play=True)
    orm = Challenge.objects.get(pk=challenge.pk)
    for field in Challenge._meta.concrete_fields:
        mine, theirs = getattr(locked, field.attname), getattr(orm, field.attname)
        assert (mine, type(mine)) == (theirs, type(theirs)), field.name
    assert isinstance(locked.state, dict) and locked.stage_since.tzinfo is not None
    assert not locked._state.adding and locked.session_chronicle_id == game["session"].chronicle_id
    assert not locked.session_ended_at and not locked.session_time_out
    with pytest.raises(services.ActionRefused, match="no such challenge"):
        _lock_challenge(10**6, for_play=True)
