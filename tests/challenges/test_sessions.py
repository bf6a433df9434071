"""Starting and ending sessions, and who is here (challenges.services): the old
session's unresolved challenges end with a recorded reason, its history is
kept, the new one starts with every Trait and health level restored; a
character on a break cannot be challenged, an absent one leaves the lists."""

from __future__ import annotations

import uuid

import pytest
from django.test import Client
from django.urls import reverse

from challenges import services, views
from challenges.consistency import find_inconsistencies
from challenges.models import Challenge, Event, TraitLoss
from challenges.rules import Category, HealthLevel, Outcome, Stage
from characters.models import Chronicle, GameSession, Presence
from characters.services import character_sheet
from tests.factories import grady_loses_resilient, make_user, opposed_challenge

pytestmark = pytest.mark.django_db


def _id() -> str:
    return uuid.uuid4().hex


def _played_evening(game):
    """Grady lost Resilient and a health level (an attack, Helen's Paper on his
    Rock); a second challenge of Helen's against him is still open."""
    lost = grady_loses_resilient(game)
    open_ = opposed_challenge(game["session"], game["helen"], game["grady"], bid="Quick")
    assert lost.stage == Stage.RESOLVED and open_.stage != Stage.RESOLVED
    return lost, open_


def test_a_new_session_voids_the_old_ones_open_challenges_and_restores_every_sheet(game):
    old = game["session"]
    lost, open_ = _played_evening(game)
    assert character_sheet(game["grady"], old).held(Category.PHYSICAL) == 4

    new = services.session_start(chronicle=game["chronicle"], user=game["narrator"])

    old.refresh_from_db()
    open_.refresh_from_db()
    assert old.ended_at is not None and new.ended_at is None
    assert (new.number, old.number) == (2, 1)
    assert new.label.startswith("Session 2 · ")
    # The open challenge ended with the reason, nobody lost anything by it.
    assert (open_.stage, open_.outcome) == (Stage.RESOLVED, Outcome.VOID)
    voided = Event.objects.get(challenge=open_, kind="voided")
    assert voided.data == {"reason": "the session ended"}
    assert not TraitLoss.objects.filter(challenge=open_).exists()
    ended = Event.objects.get(session=old, kind="session_ended")
    assert (ended.actor, ended.data) == (game["narrator"], {"voided": [open_.pk]})
    assert Event.objects.filter(session=new, kind="session_started").count() == 1
    # The old session keeps its history; the new one starts whole.
    assert TraitLoss.objects.filter(session=old, challenge=lost).count() == 1
    assert character_sheet(game["grady"], old).held(Category.PHYSICAL) == 4
    assert character_sheet(game["grady"], old).health == HealthLevel.BRUISED
    assert character_sheet(game["grady"], new).held(Category.PHYSICAL) == 5
    assert character_sheet(game["grady"], new).health == HealthLevel.HEALTHY
    assert set(Presence.objects.filter(session=new).values_list("character", flat=True)) == {
        game["helen"].pk,
        game["grady"].pk,
    }
    assert find_inconsistencies() == []


def test_ending_a_session_voids_its_open_challenges_and_opens_nothing(game):
    _, open_ = _played_evening(game)

    services.session_end(session=game["session"], user=game["narrator"], msg_id=_id())

    open_.refresh_from_db()
    assert open_.outcome == Outcome.VOID
    assert game["chronicle"].open_session() is None
    assert game["chronicle"].latest_session() == game["session"]
    assert find_inconsistencies() == []
    with pytest.raises(services.ActionRefused, match="already over"):
        services.session_end(session=game["session"], user=game["narrator"], msg_id=_id())


@pytest.mark.parametrize(
    ("who", "number", "refusal"),
    [
        ("helen_player", 2, "Only this chronicle's narrators"),
        ("narrator", 1, "Session 1 has already started"),
        ("narrator", 3, "Session 1 has already started"),
    ],
)
def test_a_session_start_that_is_not_allowed_changes_nothing(game, who, number, refusal):
    with pytest.raises(services.ActionRefused, match=refusal):
        services.session_start(
            chronicle=game["chronicle"], user=game[who], number=number, msg_id=_id()
        )

    assert list(GameSession.objects.all()) == [game["session"]]
    assert game["session"].ended_at is None


def test_a_narrator_of_another_chronicle_cannot_end_this_session(game):
    other = make_user("other_narrator")
    Chronicle.objects.create(name="Elsewhere").narrators.add(other)

    with pytest.raises(services.ActionRefused, match="narrators"):
        services.session_end(session=game["session"], user=other, msg_id=_id())
    assert game["chronicle"].open_session() == game["session"]


def _set(game, who: str, status: str):
    return services.presence_set(
        session=game["session"],
        character=game[who],
        status=status,
        user=game["narrator"],
        msg_id=_id(),
    )


@pytest.mark.parametrize(
    ("on_break", "refusal"),
    [
        ("grady", "Grady is on a break (out of character): nobody can challenge Grady now."),
        ("helen", "You are on a break (out of character)"),
    ],
)
def test_nobody_challenges_or_is_challenged_on_a_break(game, on_break, refusal):
    _set(game, on_break, "break")

    with pytest.raises(
        services.ActionRefused, match=refusal.replace("(", r"\(").replace(")", r"\)")
    ):
        opposed_challenge(game["session"], game["helen"], game["grady"], bid="Ferocious")
    assert not Challenge.objects.exists()

    _set(game, on_break, "present")
    assert opposed_challenge(game["session"], game["helen"], game["grady"], bid="Ferocious")


def test_an_absent_character_leaves_the_lists_until_her_phone_opens(game):
    _set(game, "grady", "absent")
    session, helen, grady = game["session"], game["helen"], game["grady"]

    assert views.present_opponents(session, helen) == []
    assert [e.character for e in views.dashboard_context(session)["roster"]] == [helen]
    with pytest.raises(services.ActionRefused, match="Grady is not present tonight"):
        opposed_challenge(session, helen, grady, bid="Ferocious")

    views.player_seat(game["grady_player"], grady.pk)

    assert Presence.objects.get(session=session, character=grady).status == "present"
    assert views.present_opponents(session, helen) == [grady]


def test_a_character_on_a_break_is_not_offered_as_an_opponent_but_stays_on_the_roster(game):
    _set(game, "grady", "break")

    assert views.present_opponents(game["session"], game["helen"]) == []
    roster = views.dashboard_context(game["session"])["roster"]
    assert [(e.character.name, e.sheet.on_break) for e in roster] == [
        ("Grady", True),
        ("Helen", False),
    ]


def test_presence_set_refuses_a_player_and_an_unknown_status(game):
    with pytest.raises(services.ActionRefused, match="narrators"):
        services.presence_set(
            session=game["session"],
            character=game["grady"],
            status="break",
            user=game["helen_player"],
            msg_id=_id(),
        )
    with pytest.raises(services.ActionRefused, match="present, on a break or absent"):
        _set(game, "grady", "asleep")
    assert Presence.objects.get(character=game["grady"]).status == "present"
    assert not Event.objects.filter(kind="presence_set").exists()


def test_narrate_reaches_the_latest_session_or_offers_the_first(game):
    client = Client()
    client.force_login(game["narrator"])
    services.session_end(session=game["session"], user=game["narrator"], msg_id=_id())

    response = client.get(reverse("narrate_index"))
    assert response["Location"] == reverse("narrate", args=[game["session"].pk])
    page = client.get(response["Location"]).content.decode()
    assert "Start session 2" in page and "Yes, start session 2" in page
    assert "End session" not in page

    fresh = Chronicle.objects.create(name="Fresh")
    solo = make_user("solo")
    fresh.narrators.add(solo)
    client.force_login(solo)
    page = client.get(reverse("narrate_index")).content.decode()
    assert "Start session 1" in page
    response = client.post(reverse("narrate_index"), {"chronicle": fresh.pk})
    started = fresh.open_session()
    assert started is not None and started.number == 1
    assert response["Location"] == reverse("narrate", args=[started.pk])
