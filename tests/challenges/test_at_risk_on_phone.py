"""Traits already at risk in another open challenge are shown as such on the
phone's sheet and not offered for a bid (issue 9, section 5)."""

from __future__ import annotations

import uuid

import pytest
from channels.db import database_sync_to_async

from challenges import services, views
from challenges.models import Challenge
from tests.faults.phones import Phone, current_play_stamp
from tests.screen import rendered

pytestmark = pytest.mark.django_db(transaction=True)


def _start_bids(phone: Phone) -> list[str]:
    return [b["value"] for b in phone.screen.doc.find(id="start-bids").find_all("button")]


def _sheet_line(phone: Phone, name: str) -> str:
    sheet = phone.screen.doc.find(id="sheet")
    return next(li.get_text(" ", strip=True) for li in sheet.find_all("li") if name in li.text)


async def _open(phone: Phone, game, bid: str) -> int:
    reply = await phone.act(
        uuid.uuid4().hex, action="challenge.open", defender=game["grady"].pk, bid=bid
    )
    assert reply.get("status") == "ok", reply
    await phone.settle()
    return await database_sync_to_async(lambda: Challenge.objects.latest("id").pk)()


async def _assert_current(phone: Phone, game) -> None:
    fresh = Phone(phone.path, phone.user)
    first = await fresh.connect()
    await fresh.close()
    assert phone.view == fresh.view == rendered(first.split("-->", 1)[1])
    assert phone.stamp == await current_play_stamp(game["helen"], game["session"])


@pytest.mark.asyncio
async def test_her_phone_marks_copies_at_risk_and_offers_only_free_ones(game):
    helen = Phone(f"/ws/play/{game['helen'].pk}/", game["helen_player"])
    await helen.connect()
    assert "physical:Ferocious" in _start_bids(helen)

    first = await _open(helen, game, "physical:Ferocious")  # one of her two copies
    assert _sheet_line(helen, "Ferocious") == f"Ferocious ×2 (at risk in #{first})"
    assert "physical:Ferocious" in _start_bids(helen)
    await _assert_current(helen, game)

    second = await _open(helen, game, "physical:Ferocious")  # her last free copy
    assert _sheet_line(helen, "Ferocious") == f"Ferocious ×2 (2 at risk in #{first}, #{second})"
    assert "physical:Ferocious" not in _start_bids(helen)
    assert "physical:Quick" in _start_bids(helen)
    await _assert_current(helen, game)

    # A narrator voids the first: one copy is free again.
    await database_sync_to_async(services.challenge_void)(
        challenge_id=first, reason="ruled", user=game["narrator"], msg_id=uuid.uuid4().hex
    )
    await helen.settle()
    assert _sheet_line(helen, "Ferocious") == f"Ferocious ×2 (at risk in #{second})"
    assert "physical:Ferocious" in _start_bids(helen)
    await _assert_current(helen, game)
    await helen.close()


def test_a_bid_card_offers_only_copies_not_at_risk(game):
    session, helen, grady = game["session"], game["helen"], game["grady"]
    for bid in ("Ferocious", "Ferocious", "Quick"):  # both Ferocious, one of three Quick
        services.challenge_open(
            session=session,
            challenger=helen,
            defender=grady,
            category="physical",
            bids=[bid],
            user=game["helen_player"],
            msg_id=uuid.uuid4().hex,
        )
    services.static_open(
        session=session,
        character=helen,
        category="physical",
        difficulty=2,
        user=game["narrator"],
        msg_id=uuid.uuid4().hex,
    )
    context = views.play_context(helen, session)
    card = next(c for c in context["challenges"] if c.can_bid)
    assert [(t.name, t.free) for t in card.bid_choices] == [("Brawny", 2), ("Quick", 2)]
    assert [t.name for t in context["bid_options"]["physical"]] == ["Brawny", "Quick"]


@pytest.mark.django_db
def test_a_sheet_told_of_one_challenge_agrees_with_a_sheet_read_again():
    """``Sheet.with_risk`` (the phone's sheet after a move of one challenge, no
    query) equals ``character_sheet`` read again, move after move."""
    from characters.services import character_sheet
    from tests.factories import evening, opposed_challenge

    game = evening()
    helen, grady, session = game["helen"], game["grady"], game["session"]

    def check(challenge_id: int, who) -> None:
        challenge = Challenge.objects.get(pk=challenge_id)
        before = character_sheet(who, session)
        # As the phone holds it: the sheet before this challenge's last move.
        stale = before.with_risk(challenge_id, None, [])
        card = views.challenge_view(challenge, who)
        told = stale.with_risk(challenge_id, card.state.category, card.my_bid_copies)
        assert told.categories == character_sheet(who, session).categories

    first = opposed_challenge(session, helen, grady, bid="Ferocious")
    check(first.pk, helen)
    second = opposed_challenge(session, helen, grady, bid="Ferocious", answer="Resilient")
    check(second.pk, helen)
    check(second.pk, grady)
    ferocious = next(t for t in character_sheet(helen, session).traits if t.name == "Ferocious")
    assert ferocious.at_risk == 2 and ferocious.free == 0  # both copies bid
    services.challenge_void(
        challenge_id=first.pk, reason="ruled", user=game["narrator"], msg_id=uuid.uuid4().hex
    )
    check(first.pk, helen)


@pytest.mark.django_db
def test_a_sheet_told_of_a_result_agrees_with_a_sheet_read_again():
    """``Sheet.with_losses`` (the loser's sheet after a result, no query)
    equals ``character_sheet`` read again, and counts the TraitLoss rows the
    result wrote; a loss of a Trait no longer on the sheet changes nothing."""
    from challenges.models import TraitLoss
    from characters.services import character_sheet
    from tests.factories import evening, opposed_challenge

    game = evening()
    helen, grady, session = game["helen"], game["grady"], game["session"]
    for _ in range(2):  # the second loss of Tough too
        before = character_sheet(grady, session)
        rows = TraitLoss.objects.filter(character=grady).count()
        challenge = opposed_challenge(
            session, helen, grady, bid="Ferocious", answer="Tough", throws=("rock", "scissors")
        )
        card = views.challenge_view(challenge, grady)
        lost = [(x.trait_id, x.trait, x.category) for x in card.state.losses]
        told, matched = before.with_losses(lost)
        assert told.categories == character_sheet(grady, session).categories
        assert matched == TraitLoss.objects.filter(character=grady).count() - rows == 1
    tough = next(t for t in told.traits if t.name == "Tough")
    assert (tough.lost, tough.held) == (2, 1)
    by_name, matched = before.with_losses([(None, "Tough", tough.category)])
    assert next(t for t in by_name.traits if t.name == "Tough").lost == 2 and matched == 1
    same, matched = told.with_losses([(None, "Gone", tough.category), (10**6, "X", tough.category)])
    assert same.categories == told.categories and matched == 0
