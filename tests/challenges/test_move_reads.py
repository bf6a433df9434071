"""A move re-reads from the database what its transition reads of the
combatants, and nothing else (``services._reads._refreshed``): a bid her free copies
and health, a declaration her held copies, a throw, a relent or a void nothing.
And a narrator's open locks the character's row as a player's open does."""

from __future__ import annotations

import uuid

import pytest

from challenges import rules, services
from challenges.models import TraitLoss
from challenges.rules import HealthLevel, Outcome, Stage
from characters.models import Presence
from tests.challenges.test_query_counts import _as, _bid, _declare, _open, _throw

pytestmark = pytest.mark.django_db


def _id() -> str:
    return uuid.uuid4().hex


def test_a_declaration_counts_traits_lost_since_the_tie(game):
    """Helen ties holding 7 Physical Traits, then loses a Brawny in another
    challenge: her full count declared is 6."""
    tied = _open(game, bids=["Quick"], is_attack=False)
    _bid(game, tied, ["Tough"])
    _throw(game, tied, "helen", "rock")
    _throw(game, tied, "grady", "rock")
    lost = _open(game, bids=["Brawny"], is_attack=False)
    _bid(game, lost, ["Resilient"])
    _throw(game, lost, "helen", "scissors")
    _throw(game, lost, "grady", "rock")  # Grady wins: Helen loses her Brawny
    assert TraitLoss.objects.filter(character=game["helen"], trait__name="Brawny").count() == 1
    tied = _declare(game, tied, "helen")
    assert tied.state["tests"][-1]["challenger_declared"] == 6
    # The Traits at risk in the stored state are those of the last bid: Quick in
    # this challenge is not at risk "elsewhere".
    quick = next(t for t in tied.state["challenger"]["traits"] if t["name"] == "Quick")
    assert (quick["count"], quick["at_risk"]) == (3, 0)


def test_a_bid_reads_copies_at_risk_in_other_challenges(game):
    """Grady answers two of Helen's challenges with Tough (3 held): the second
    answer sees the copy bid in the first since it opened. Then his one Witty,
    bid in a social challenge after a narrator set him a static one, cannot be
    bid in the static challenge."""
    first = _open(game, bids=["Quick"], is_attack=False)
    second = _open(game, bids=["Quick"], is_attack=False)  # before his first answer
    _bid(game, first, ["Tough"])
    second = _bid(game, second, ["Tough"])
    tough = next(t for t in second.state["defender"]["traits"] if t["name"] == "Tough")
    assert (tough["count"], tough["at_risk"]) == (3, 1)

    static = services.static_open(
        session=game["session"],
        character=game["grady"],
        category="social",
        difficulty=1,
        user=game["narrator"],
        msg_id=_id(),
    )
    social = services.challenge_open(
        session=game["session"],
        challenger=game["helen"],
        defender=game["grady"],
        category="social",
        bids=["Alluring"],
        user=game["helen_player"],
        msg_id=_id(),
    )
    _bid(game, social, ["Witty"])
    with pytest.raises(rules.RulesError, match="already at risk in another challenge"):
        _as(game, "grady", services.challenge_bid, static, bids=["Witty"])
    assert services.combatant(game["grady"], game["session"]).free("Witty", "social") == 0


def test_a_static_bid_reads_health_taken_since_the_open(game):
    """Helen is incapacitated after a narrator set her a static challenge: she
    can no longer bid in it."""
    static = services.static_open(
        session=game["session"],
        character=game["helen"],
        category="physical",
        difficulty=3,
        narrator_throw="rock",
        user=game["narrator"],
        msg_id=_id(),
    )
    Presence.objects.filter(session=game["session"], character=game["helen"]).update(
        health=HealthLevel.INCAPACITATED
    )
    with pytest.raises(rules.RulesError, match="incapacitated"):
        _as(game, "helen", services.challenge_bid, static, bids=["Quick"])
    # A relent reads nothing of her and still ends it.
    relented = _as(game, "helen", services.challenge_bid, static, bids=None)
    assert (relented.stage, relented.outcome) == (Stage.RESOLVED, Outcome.DEFENDER_WINS)


@pytest.mark.parametrize("kind", ["static", "simple"])
def test_a_narrators_open_locks_the_characters_row(game, monkeypatch, kind):
    """As a player's open does (``_lock_characters``: FOR NO KEY UPDATE on
    PostgreSQL; tests/workers has the real lock), and before her presence is
    written."""
    calls = []
    real_lock, real_join = services.static._lock_characters, services.static.presence_join

    def lock(*ids):
        calls.append(("lock", ids))
        real_lock(*ids)

    def join(**kwargs):
        calls.append(("join", kwargs["character"].pk))
        return real_join(**kwargs)

    monkeypatch.setattr(services.static, "_lock_characters", lock)
    monkeypatch.setattr(services.static, "presence_join", join)
    common = dict(session=game["session"], character=game["helen"], user=game["narrator"])
    if kind == "static":
        services.static_open(**common, category="physical", difficulty=2, msg_id=_id())
    else:
        services.simple_test_open(**common, msg_id=_id())
    assert calls == [("lock", (game["helen"].pk,)), ("join", game["helen"].pk)]
