"""What waits on a player is pinned at the top of her phone as one bar
(``#waiting-bar``, ``challenges.views.waiting``): drawn with her whole view
and sent out of band with each frame that changes it, so the screen a run of
frames builds equals a fresh render. Through the real router, on
``met_classic``, ``bns`` and ``storytelling``."""

from __future__ import annotations

import uuid

import pytest
from bs4 import BeautifulSoup
from channels.db import database_sync_to_async

from challenges.models import Challenge, DiceRoll
from tests.challenges.rolls_setup import story_evening
from tests.challenges.test_bns_flow import _by_night
from tests.faults.phones import Phone

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


def bar(phone: Phone) -> tuple[str, str] | None:
    """What the bar on ``phone``'s screen says and where its tap goes; None when hidden."""
    element = BeautifulSoup(phone.view, "html.parser").find(id="waiting-bar")
    assert element is not None, "no #waiting-bar on the screen"
    if element.has_attr("hidden"):
        assert not element.get_text(strip=True)
        return None
    link, more = element.find("a"), element.find(class_="waiting-more")
    said = " ".join(link.get_text().split()) + (f" ({more.get_text()})" if more else "")
    return said, link["data-target"]


async def _phone(character, user) -> Phone:
    phone = Phone(f"/ws/play/{character.pk}/", user)
    await phone.connect()
    return phone


async def _act(phone: Phone, *others: Phone, **message) -> None:
    reply = await phone.act(uuid.uuid4().hex, **message)
    assert reply.get("status") == "ok", reply
    for screen in (phone, *others):
        await screen.settle()


async def _fresh(phone: Phone) -> Phone:
    """A new socket of the same player: her whole view now."""
    fresh = Phone(phone.path, phone.user)
    await fresh.connect()
    await fresh.close()
    return fresh


@database_sync_to_async
def _latest(model):
    return model.objects.latest("id").pk


async def test_a_challenged_player_sees_it_pinned_at_the_top_until_she_has_moved(game):
    helen = await _phone(game["helen"], game["helen_player"])
    grady = await _phone(game["grady"], game["grady_player"])
    assert bar(helen) is None and bar(grady) is None
    await _act(
        helen, grady, action="challenge.open", defender=game["grady"].pk, bid="physical:Ferocious"
    )
    pk = await _latest(Challenge)
    assert bar(grady) == ("Helen challenges you: answer", f"#card-{pk}")
    assert bar(helen) is None  # her move is made: his answer is awaited
    await _act(grady, helen, action="challenge.bid", challenge=pk, bid="Tough")
    assert bar(helen) == ("Challenge with Grady: your throw", f"#card-{pk}")
    assert bar(grady) == ("Challenge with Helen: your throw", f"#card-{pk}")
    await _act(helen, grady, action="challenge.throw", challenge=pk, throw="rock")
    assert bar(helen) is None
    assert bar(grady) == ("Challenge with Helen: your throw", f"#card-{pk}")
    for phone in (helen, grady):
        assert phone.view == (await _fresh(phone)).view  # every frame kept it true
        await phone.close()


async def test_a_second_challenge_waiting_on_her_is_counted_behind_the_first(game):
    helen = await _phone(game["helen"], game["helen_player"])
    grady = await _phone(game["grady"], game["grady_player"])
    for bid in ("physical:Ferocious", "social:Alluring"):
        await _act(helen, grady, action="challenge.open", defender=game["grady"].pk, bid=bid)
    first = (await _latest(Challenge)) - 1
    assert bar(grady) == ("Helen challenges you: answer (and 1 more)", f"#card-{first}")
    await _act(grady, helen, action="challenge.relent", challenge=first)
    assert bar(grady) == ("Helen challenges you: answer", f"#card-{first + 1}")
    assert grady.view == (await _fresh(grady)).view
    await helen.close()
    await grady.close()


async def test_a_bns_defender_is_told_to_choose_a_defence(db):
    night = await database_sync_to_async(_by_night)()
    rosa = await _phone(night["rosa"], night["rosa_player"])
    tooth = await _phone(night["tooth"], night["tooth_player"])
    await _act(rosa, tooth, action="bns.open", defender=str(night["tooth"].pk), attack="brawl")
    pk = await _latest(Challenge)
    assert bar(tooth) == ("Rosa attacks you: choose a defence", f"#card-{pk}")
    assert bar(rosa) is None
    assert tooth.view == (await _fresh(tooth)).view
    await rosa.close()
    await tooth.close()


async def test_a_storytelling_roll_called_for_her_waits_on_her(db):
    night = await database_sync_to_async(story_evening)()
    iris = await _phone(night["iris"], night["iris_player"])
    board = Phone(f"/ws/narrate/{night['session'].pk}/", night["narrator"])
    await board.connect()
    await _act(
        board,
        iris,
        action="roll.call",
        character=str(night["iris"].pk),
        attribute="Dexterity",
        skill="Stealth",
    )
    pk = await _latest(DiceRoll)
    assert bar(iris) == ("Your roll: Roll Dexterity + Stealth (3 dice)", f"#roll-{pk}")
    assert iris.view == (await _fresh(iris)).view
    await iris.close()
    await board.close()
