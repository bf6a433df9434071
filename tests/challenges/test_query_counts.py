"""Each move costs a bounded number of database queries, so that a change which
adds queries to a move fails here before it shows in the bench.

Counted on the test database as pytest-django runs it (SQLite by default), the
move's own transaction being a savepoint: SAVEPOINT and RELEASE count as two
queries. On PostgreSQL a move also runs the session's FOR SHARE and the
characters' FOR NO KEY UPDATE (two more). The same moves cost, at first: open
21, bid 28, relent 22, throw 26, resolving throw 30, declare 26, resolving
declare 28; then: open 9, bid 11, relent 10, throw 11, resolving throw 14,
declare 11, resolving declare 13, void 11. Now the challenge is read with its
session in one query, and a move re-reads of its characters only what the
rules engine reads for it (a throw, relent or void nothing; a declaration the
Traits held): bid 10, relent 6, throw 7, resolving throw 10, declare 8,
resolving declare 10, void 7. The sheet's pools, Disciplines, weapons and
immunities (issue 10) cost the open two more (11): Abilities, Disciplines and
weapons in one query, pools, Blood Traits and immunities in another; a move
that spends a pool re-reads the latter only (``READS_POOLS``, one query).
Issue 14: a move's writes (the message id's claim, the challenge row, its
tests, events and lost Traits) are plain SQL: the same counts, less Python.
"""

from __future__ import annotations

import uuid

import pytest
from django.db import connection

from challenges import services
from challenges.models import Challenge, TraitLoss
from challenges.rules import Category, HealthLevel, Outcome, Stage
from characters.models import Presence
from characters.services import character_sheet

pytestmark = pytest.mark.django_db

# The bounds on SQLite; PostgreSQL adds its two lock statements to every move.
EXTRA = 2 if connection.vendor == "postgresql" else 0


def _id() -> str:
    return uuid.uuid4().hex


def _open(game, bids=("Ferocious",), is_attack=True) -> Challenge:
    return services.challenge_open(
        session=game["session"],
        challenger=game["helen"],
        defender=game["grady"],
        category="physical",
        bids=list(bids),
        is_attack=is_attack,
        user=game["helen_player"],
        msg_id=_id(),
    )


def _bid(game, challenge, bids):
    return services.challenge_bid(
        challenge_id=challenge.pk,
        character=game["grady"],
        bids=bids,
        user=game["grady_player"],
        msg_id=_id(),
    )


def _as(game, who, service, challenge, **kwargs) -> Challenge:
    """``who`` ("helen", "grady") makes a move with ``service`` on ``challenge``."""
    return service(
        challenge_id=challenge.pk,
        character=game[who],
        user=game[f"{who}_player"],
        msg_id=_id(),
        **kwargs,
    )


def _throw(game, challenge, who, throw):
    return _as(game, who, services.challenge_throw, challenge, throw=throw)


def _declare(game, challenge, who):
    return _as(game, who, services.challenge_declare, challenge, count=None)


def test_opening_a_challenge_costs_at_most_11_queries(game, django_assert_max_num_queries):
    with django_assert_max_num_queries(11 + EXTRA):
        challenge = _open(game)
    assert challenge.stage == Stage.RESPONSE


def test_answering_with_a_bid_costs_at_most_10_queries(game, django_assert_max_num_queries):
    challenge = _open(game)
    with django_assert_max_num_queries(10 + EXTRA):
        challenge = _bid(game, challenge, ["Resilient"])
    assert challenge.tests.count() == 1


def test_relenting_costs_at_most_6_queries(game, django_assert_max_num_queries):
    challenge = _open(game, is_attack=False)
    with django_assert_max_num_queries(6 + EXTRA):
        challenge = _bid(game, challenge, None)
    assert (challenge.stage, challenge.outcome) == (Stage.RESOLVED, Outcome.CHALLENGER_WINS)


def test_a_resolving_throw_costs_at_most_10_queries(game, django_assert_max_num_queries):
    """The first throw (7); then the second, which resolves an attack: a Trait
    lost and a wound."""
    challenge = _open(game)
    _bid(game, challenge, ["Resilient"])
    with django_assert_max_num_queries(7 + EXTRA):
        _throw(game, challenge, "helen", "rock")
    with django_assert_max_num_queries(10 + EXTRA):
        challenge = _throw(game, challenge, "grady", "scissors")
    assert challenge.outcome == Outcome.CHALLENGER_WINS
    assert TraitLoss.objects.filter(challenge=challenge, trait__name="Resilient").count() == 1
    grady = Presence.objects.get(session=game["session"], character=game["grady"])
    assert grady.health == HealthLevel.BRUISED


def test_declaring_after_a_tie_costs_at_most_10_queries(game, django_assert_max_num_queries):
    """A tying throw (7), the challenger's count (8), the defender's, which
    resolves (10)."""
    challenge = _open(game, bids=["Quick"], is_attack=False)
    _bid(game, challenge, ["Tough"])
    _throw(game, challenge, "helen", "rock")
    with django_assert_max_num_queries(7 + EXTRA):
        _throw(game, challenge, "grady", "rock")
    with django_assert_max_num_queries(8 + EXTRA):
        _declare(game, challenge, "helen")
    with django_assert_max_num_queries(10 + EXTRA):
        challenge = _declare(game, challenge, "grady")
    assert challenge.outcome == Outcome.CHALLENGER_WINS
    assert TraitLoss.objects.filter(challenge=challenge, trait__name="Tough").count() == 1


def test_a_narrators_void_costs_at_most_7_queries(game, django_assert_max_num_queries):
    challenge = _open(game)
    with django_assert_max_num_queries(7 + EXTRA):
        challenge = services.challenge_void(
            challenge_id=challenge.pk, reason="ruled", user=game["narrator"], msg_id=_id()
        )
    assert (challenge.stage, challenge.outcome) == (Stage.RESOLVED, Outcome.VOID)


def test_combatants_match_the_sheet_and_open_bids(game):
    """The lean builder agrees with ``character_sheet`` (held copies, order,
    Negative Traits, health) and counts copies bid in other open challenges."""
    resolved = _open(game)
    _bid(game, resolved, ["Resilient"])
    _throw(game, resolved, "helen", "rock")
    _throw(game, resolved, "grady", "scissors")  # Grady loses a Resilient, is wounded
    pending = _open(game, bids=["Quick"], is_attack=False)
    _bid(game, pending, ["Tough", "Tough"])  # Bruised: two Traits (seeds/000 "Health")
    fighters = services.combatants([game["helen"], game["grady"]], game["session"])
    for who, at_risk in (("helen", {"Quick": 1}), ("grady", {"Tough": 2})):
        sheet = character_sheet(game[who], game["session"])
        fighter = fighters[game[who].pk]
        assert [(t.name, t.category, t.count, t.negative) for t in fighter.traits] == [
            (line.name, line.category, line.held, line.negative)
            for line in [*sheet.traits, *sheet.negatives]
        ]
        assert {t.name: t.at_risk for t in fighter.traits if t.at_risk} == at_risk
        assert fighter.health == sheet.health
    assert fighters[game["grady"].pk].health == HealthLevel.BRUISED
    resilient = next(t for t in fighters[game["grady"].pk].traits if t.name == "Resilient")
    assert (resilient.category, resilient.count) == (Category.PHYSICAL, 1)
    left_out = services.combatants(
        [game["helen"]], game["session"], exclude_challenge_id=pending.pk
    )[game["helen"].pk]
    assert not any(t.at_risk for t in left_out.traits)
    assert services.combatants([], game["session"]) == {}


@pytest.mark.parametrize("level", list(HealthLevel))
def test_a_wound_takes_one_health_level_capped_at_dead(game, level):
    presence = Presence.objects.get(session=game["session"], character=game["grady"])
    presence.health = level
    presence.save()
    services._writes._wound(game["session"].pk, game["grady"].pk)
    presence.refresh_from_db()
    assert presence.health == level.worse()


def test_a_wound_to_an_absent_character_raises(game):
    Presence.objects.filter(session=game["session"], character=game["grady"]).delete()
    with pytest.raises(Presence.DoesNotExist):
        services._writes._wound(game["session"].pk, game["grady"].pk)
