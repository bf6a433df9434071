"""A chronicle with three players and a narrator, another chronicle with its own
narrator, and a superuser: every role of the permission table."""

from __future__ import annotations

import pytest

from challenges.models import Challenge
from characters.management.commands.demo import narrator_permissions
from characters.models import Chronicle, GameSession
from tests.factories import evening, make_character, make_user, opposed_challenge


def make_world() -> dict:
    """``evening()`` (Helen, Grady, their players, a narrator, an open session)
    plus Cain (a third player), a second chronicle narrated by ``other_narrator``
    with its own open session and character Bea, and ``admin`` (superuser).
    Narrators are staff with the demo narrator's permissions."""
    world = evening()
    world["cain_player"] = make_user("cain")
    world["cain"] = make_character(
        world["chronicle"], "Cain", world["cain_player"], traits=[("Wiry", "physical", 2)]
    )
    world["other_narrator"] = make_user("other_narrator", is_staff=True)
    world["bea_player"] = make_user("bea")
    other = Chronicle.objects.create(name="Other Chronicle")
    other.narrators.add(world["other_narrator"])
    world["other_chronicle"] = other
    world["other_session"] = GameSession.objects.create(chronicle=other, name="Elsewhere")
    world["bea"] = make_character(
        other, "Bea", world["bea_player"], traits=[("Deft", "physical", 1)]
    )
    world["narrator"].is_staff = True
    world["narrator"].save(update_fields=["is_staff"])
    for narrator in (world["narrator"], world["other_narrator"]):
        narrator.user_permissions.add(*narrator_permissions())
    world["admin"] = make_user("root", is_staff=True, is_superuser=True)
    return world


@pytest.fixture
def world(db):
    return make_world()


@pytest.fixture
def game(db):
    """Helen, Grady, their players, a narrator and an open session (seeds/000)."""
    return evening()


def challenge_at(world, *, challenger, defender, stage: str) -> Challenge:
    """An opposed Physical challenge between Helen and Grady (either way round),
    brought through the services to ``stage``: "response" (the defender to bid),
    "throws", "thrown" (the challenger has thrown scissors, the defender not
    yet) or "declare_challenger" (both threw rock: a tie)."""
    throws = {"response": (), "throws": (), "thrown": ("scissors",)}
    throws["declare_challenger"] = ("rock", "rock")
    assert stage in throws, stage
    bids = {"Helen": ("Ferocious", "Quick"), "Grady": ("Tough", "Resilient")}
    return opposed_challenge(
        world["session"],
        challenger,
        defender,
        bid=bids[challenger.name][0],
        answer=None if stage == "response" else bids[defender.name][1],
        throws=throws[stage],
    )
