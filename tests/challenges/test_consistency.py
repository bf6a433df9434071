"""The consistency check finds each planted break and nothing in honest play."""

from __future__ import annotations

import uuid

import pytest
from django.core.management import CommandError, call_command

from challenges import services
from challenges.consistency import find_inconsistencies
from challenges.models import Challenge, ClientAction, Event, Test, TraitLoss
from characters.models import Presence, Trait
from tests.factories import opposed_challenge

pytestmark = pytest.mark.django_db


def _id() -> str:
    return uuid.uuid4().hex


@pytest.fixture
def played(game):
    """One resolved attack, one open challenge, a static challenge settled by a
    tie, a lost simple test, a voided challenge and a (repeated) time out."""
    session, helen, grady = game["session"], game["helen"], game["grady"]
    # Helen attacks Grady, Ferocious against Resilient: her rock beats his scissors.
    resolved = opposed_challenge(
        session,
        helen,
        grady,
        bid="Ferocious",
        answer="Resilient",
        throws=("rock", "scissors"),
        is_attack=True,
    )
    assert resolved.stage == "resolved"
    pending = opposed_challenge(session, helen, grady, bid="Quick")
    static = services.static_open(
        session=session,
        character=helen,
        category="physical",
        difficulty=3,
        narrator_throw="paper",
        user=game["narrator"],
        msg_id=_id(),
    )
    services.challenge_bid(
        challenge_id=static.pk,
        character=helen,
        bids=["Brawny"],
        user=game["helen_player"],
        msg_id=_id(),
    )
    services.challenge_throw(
        challenge_id=static.pk,
        character=helen,
        throw="paper",
        user=game["helen_player"],
        msg_id=_id(),
    )
    services.challenge_declare(
        challenge_id=static.pk,
        character=helen,
        count=None,
        user=game["helen_player"],
        msg_id=_id(),
    )
    simple = services.simple_test_open(
        session=session,
        character=grady,
        narrator_throw="rock",
        user=game["narrator"],
        msg_id=_id(),
    )
    services.challenge_throw(
        challenge_id=simple.pk,
        character=grady,
        throw="scissors",
        user=game["grady_player"],
        msg_id=_id(),
    )
    voided = opposed_challenge(session, helen, grady, bid="Alluring", category="social")
    services.challenge_void(
        challenge_id=voided.pk, reason="dispute", user=game["narrator"], msg_id=_id()
    )
    services.session_time_out(session=session, user=game["narrator"], msg_id=_id())
    services.session_time_out(session=session, user=game["narrator"], msg_id=_id())
    return {**game, "resolved": resolved, "pending": pending, "static": static}


def test_honest_play_is_consistent(played):
    played["static"].refresh_from_db()
    assert played["static"].stage == "resolved"  # a tie settled by Trait counts
    assert Challenge.objects.filter(stage="resolved").count() == 4
    assert find_inconsistencies() == []
    assert find_inconsistencies(played["session"].pk) == []


def test_a_stage_that_disagrees_with_the_state_is_found(played):
    Challenge.objects.filter(pk=played["pending"].pk).update(stage="throws")
    problems = find_inconsistencies()
    assert any(f"challenge #{played['pending'].pk}: stage/outcome" in p for p in problems)


def test_a_missing_test_row_is_found(played):
    Test.objects.filter(challenge=played["resolved"]).delete()
    assert any("Test rows do not match" in p for p in find_inconsistencies())


def test_a_changed_throw_in_a_test_row_is_found(played):
    Test.objects.filter(challenge=played["resolved"]).update(defender_throw="paper")
    assert any("Test rows do not match" in p for p in find_inconsistencies())


def test_a_missing_lost_trait_is_found(played):
    TraitLoss.objects.filter(challenge=played["resolved"]).delete()
    problems = find_inconsistencies()
    assert any(f"challenge #{played['resolved'].pk}: lost Traits []" in p for p in problems)


def test_a_lost_trait_on_an_open_challenge_is_found(played):
    TraitLoss.objects.create(
        session=played["session"],
        character=played["helen"],
        trait=Trait.objects.get(character=played["helen"], name="Quick"),
        challenge=played["pending"],
    )
    assert any("1 lost Traits but not resolved" in p for p in find_inconsistencies())


def test_a_second_resolved_event_is_found(played):
    Event.objects.create(
        session=played["session"], challenge=played["resolved"], kind="resolved", data={}
    )
    assert any("2 'resolved' events, expected 1" in p for p in find_inconsistencies())


def test_a_resolved_event_on_an_open_challenge_is_found(played):
    Event.objects.create(
        session=played["session"], challenge=played["pending"], kind="resolved", data={}
    )
    assert any("1 'resolved' events, expected 0" in p for p in find_inconsistencies())


def test_a_wound_never_applied_is_found(played):
    Presence.objects.filter(character=played["grady"]).update(health=0)
    problems = find_inconsistencies()
    assert any(f"character #{played['grady'].pk} took 1 wounds" in p for p in problems)


def test_an_action_id_without_its_move_is_found(played):
    ClientAction.objects.create(
        user=played["grady_player"], msg_id="lost", action="challenge.throw"
    )
    problems = find_inconsistencies()
    assert any("3 'challenge.throw' action ids but 2 moves applied" in p for p in problems)


def test_a_move_without_its_action_id_is_found(played):
    ClientAction.objects.filter(user=played["grady_player"], action="challenge.bid").delete()
    problems = find_inconsistencies()
    assert any("0 'challenge.bid' action ids but 1 moves applied" in p for p in problems)


def test_checkstate_prints_the_problems_and_fails(played, capsys):
    call_command("checkstate")
    assert "consistent" in capsys.readouterr().out
    Test.objects.filter(challenge=played["resolved"]).delete()
    with pytest.raises(CommandError, match="1 inconsistencies"):
        call_command("checkstate", "--session", str(played["session"].pk))
    assert "Test rows do not match" in capsys.readouterr().out


def test_checkstate_raises_no_false_alarm_after_renames(played, capsys):
    """Lost Traits are compared by the Trait bid (its id), whatever it is
    called now; a real mismatch is still found."""
    for trait in Trait.objects.all():
        trait.name = f"{trait.name} the Second"
        trait.save()
    call_command("checkstate")
    assert "consistent" in capsys.readouterr().out
    loss = TraitLoss.objects.filter(challenge=played["resolved"]).get()
    loss.trait = Trait.objects.filter(character=loss.character).exclude(pk=loss.trait_id).first()
    loss.save()
    with pytest.raises(CommandError, match="inconsistencies"):
        call_command("checkstate")
    assert "lost Traits" in capsys.readouterr().out
