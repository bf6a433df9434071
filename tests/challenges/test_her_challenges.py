"""One character's challenges of a session, a side at a time (issue 14): the
ids ``models.her_challenges_sql`` selects, and, on SQLite, that the phone's
queries built on it search the two ``(side, session)`` indexes instead of
reading every challenge of the session (a reconnect storm late in an
evening read them all, three times per phone)."""

from __future__ import annotations

import re

import pytest
from django.db import connection

from challenges import heartbeat
from challenges.models import Challenge, Stage, her_challenges_params, her_challenges_sql
from challenges.views.phone import _cards_sql, _on_phone, phone_cards_shown
from characters.models import Chronicle, GameSession
from tests.factories import (
    crowded_session,
    evening,
    make_character,
    make_user,
    opposed_challenge,
)

pytestmark = pytest.mark.django_db


def _copy(challenge: Challenge, **fields) -> int:
    row = Challenge.objects.get(pk=challenge.pk)
    row.pk = None
    for name, value in fields.items():
        setattr(row, name, value)
    row.save()
    return row.pk


def test_her_challenges_are_those_of_the_session_on_either_side_each_once():
    game = evening()
    helen, grady, session = game["helen"], game["grady"], game["session"]
    ivan = make_character(game["chronicle"], "Ivan", make_user("ivan"), traits=[])
    hers = opposed_challenge(session, helen, grady, bid="Quick")
    against_her = _copy(hers, challenger=grady, defender=helen)
    static = _copy(hers, defender=None)  # against the narrator: no defender
    _copy(hers, challenger=grady, defender=ivan)  # not hers
    other = GameSession.objects.create(chronicle=Chronicle.objects.create(name="Other"), name="O")
    _copy(hers, session=other)  # hers, another session
    with connection.cursor() as cursor:
        cursor.execute(her_challenges_sql(), her_challenges_params(session.pk, helen.pk))
        ids = [pk for (pk,) in cursor.fetchall()]
    assert sorted(ids) == sorted([hers.pk, against_her, static])


def _plan(sql: str, params) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN QUERY PLAN {sql}", params)
        return [row[-1] for row in cursor.fetchall()]


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's query plans")
def test_a_phones_queries_search_her_challenges_by_side_not_the_whole_session():
    game = evening()
    session = game["session"]
    guests = crowded_session(session, characters=20, challenges=200)
    her = guests[5]
    open_sql, done_sql = _cards_sql()
    params = [*her_challenges_params(session.pk, her.pk), Stage.RESOLVED.value]
    open_, done = _on_phone(her, session)
    plans = {
        "cards shown, open": _plan(open_sql, params),
        "cards shown, results": _plan(done_sql, params),
        "whole view, open": _plan(*open_.query.sql_with_params()),
        "whole view, results": _plan(*done.query.sql_with_params()),
        "ping's exact check": _plan(
            heartbeat._PLAY_SQL.format(**heartbeat._tables()),
            {"session": session.pk, "character": her.pk},
        ),
    }
    for name, plan in plans.items():
        text = "\n".join(plan)
        assert "challenge_challenger_session" in text, (name, plan)
        assert "challenge_defender_session" in text, (name, plan)
        # No search of the challenges by their session alone (or with the stage).
        assert "(session_id=?)" not in text and "(session_id=? AND stage=?)" not in text, (
            name,
            plan,
        )
    # And what they find is hers: the same cards either way.
    shown, results = phone_cards_shown(her, session)
    assert shown == {c.pk: c.version for c in [*open_, *done]}
    assert results == [c.pk for c in done]
    assert shown and all(her.pk in (c.challenger_id, c.defender_id) for c in [*open_, *done])


def test_a_narrators_panel_and_an_npcs_due_moves_read_her_challenges_a_side_at_a_time():
    """The other readers of one character's challenges: a narrator's panel of
    her (open often on the tablet) and the NPC's due moves at Resume."""
    from django.db import transaction
    from django.test.utils import CaptureQueriesContext

    from challenges.services.npcs import npc_answer_session_due
    from challenges.views.dashboard import character_panel_context

    game = evening()
    session, helen = game["session"], game["helen"]
    opposed_challenge(session, helen, game["grady"], bid="Quick")
    with CaptureQueriesContext(connection) as panel:
        context = character_panel_context(session, helen.pk)
    assert context is not None and len(context["rows"]) == 1
    with CaptureQueriesContext(connection) as due, transaction.atomic():
        npc_answer_session_due(session.pk, character_id=helen.pk)
    for queries in (panel, due):
        sql = [q["sql"] for q in queries.captured_queries]
        either = [q for q in sql if re.search(r'challenger_id" = \S+ OR \S*defender_id"', q)]
        assert not either, either  # no OR of the two sides
        assert any(
            "UNION ALL SELECT id FROM challenges_challenge WHERE defender_id" in q for q in sql
        )
