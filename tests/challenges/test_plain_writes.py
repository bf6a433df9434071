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
