"""A narrator's edit of a Trait bid in an open challenge: the challenge keeps
the Trait as it was bid (its id and name at the time) and always resolves; the
edit applies to later challenges; deleting a Trait at risk is refused."""

from __future__ import annotations

import uuid

import pytest
from django.db import transaction
from django.db.models import ProtectedError

from challenges import services
from challenges.consistency import find_inconsistencies
from challenges.models import TraitLoss
from challenges.rules import Outcome, RulesError, Stage
from characters.models import Trait
from tests.factories import opposed_challenge

pytestmark = pytest.mark.django_db


def _id() -> str:
    return uuid.uuid4().hex


def _trait(game, who: str, name: str) -> Trait:
    return Trait.objects.get(character=game[who], name=name)


def _rename(game, who: str, name: str, new: str) -> Trait:
    trait = _trait(game, who, name)
    trait.name = new
    trait.save()
    return trait


def _throw(game, challenge, who: str, throw: str):
    return services.challenge_throw(
        challenge_id=challenge.pk,
        character=game[who],
        throw=throw,
        user=game[f"{who}_player"],
        msg_id=_id(),
    )


@pytest.mark.parametrize(
    "renamed_after, loser, throws",
    [
        # The defender's Trait renamed between her bid and the throws; she loses.
        ("answer", "grady", ("rock", "scissors")),
        # The challenger's Trait renamed before the answer; she loses.
        ("open", "helen", ("scissors", "rock")),
        # The defender's Trait renamed; the challenger loses: his Trait is safe.
        ("answer", "helen", ("scissors", "rock")),
    ],
)
def test_a_challenge_whose_bid_trait_is_renamed_still_resolves(game, renamed_after, loser, throws):
    session = game["session"]
    challenge = opposed_challenge(session, game["helen"], game["grady"], bid="Ferocious")
    if renamed_after == "open":
        ferocious = _rename(game, "helen", "Ferocious", "Savage")
    services.challenge_bid(
        challenge_id=challenge.pk,
        character=game["grady"],
        bids=["Resilient"],
        user=game["grady_player"],
        msg_id=_id(),
    )
    if renamed_after == "answer":
        resilient = _rename(game, "grady", "Resilient", "Unbowed")
        ferocious = _trait(game, "helen", "Ferocious")
    else:
        resilient = _trait(game, "grady", "Resilient")
    _throw(game, challenge, "helen", throws[0])
    challenge = _throw(game, challenge, "grady", throws[1])
    assert challenge.stage == Stage.RESOLVED
    lost = resilient if loser == "grady" else ferocious
    assert list(TraitLoss.objects.filter(challenge=challenge).values_list("trait", flat=True)) == [
        lost.pk
    ]
    # The challenge keeps the names as bid; the history stays consistent.
    assert (challenge.state["challenger_bids"], challenge.state["defender_bids"]) == (
        ["Ferocious"],
        ["Resilient"],
    )
    assert find_inconsistencies() == []


def test_a_declaration_after_a_rename_resolves_a_tie(game):
    challenge = opposed_challenge(
        game["session"], game["helen"], game["grady"], bid="Quick", answer="Tough"
    )
    _rename(game, "grady", "Tough", "Hardy")
    _throw(game, challenge, "helen", "rock")
    _throw(game, challenge, "grady", "rock")
    for who in ("helen", "grady"):
        challenge = services.challenge_declare(
            challenge_id=challenge.pk,
            character=game[who],
            count=None,
            user=game[f"{who}_player"],
            msg_id=_id(),
        )
    assert challenge.outcome == Outcome.CHALLENGER_WINS
    assert TraitLoss.objects.get(challenge=challenge).trait.name == "Hardy"
    assert find_inconsistencies() == []


def test_a_renamed_trait_keeps_its_copies_at_risk_and_new_challenges_use_its_new_name(game):
    session, helen, grady = game["session"], game["helen"], game["grady"]
    for _ in range(2):  # both copies of Ferocious at risk
        opposed_challenge(session, helen, grady, bid="Ferocious")
    _rename(game, "helen", "Ferocious", "Savage")
    savage = services.combatant(helen, session).holdings("Savage")[0]
    assert (savage.count, savage.at_risk, savage.free) == (2, 2, 0)
    with pytest.raises(RulesError, match="already at risk"):
        opposed_challenge(session, helen, grady, bid="Savage")
    with pytest.raises(RulesError, match="no Physical Trait 'Ferocious'"):
        opposed_challenge(session, helen, grady, bid="Ferocious")
    later = opposed_challenge(session, helen, grady, bid="Quick")
    _rename(game, "helen", "Quick", "Swift")
    services.challenge_void(
        challenge_id=later.pk, reason="ruled", user=game["narrator"], msg_id=_id()
    )
    fresh = opposed_challenge(session, helen, grady, bid="Swift")
    assert fresh.state["challenger_bids"] == ["Swift"]


@pytest.mark.parametrize("bid_in", ["challenger", "defender"])
def test_deleting_a_trait_at_risk_is_refused_naming_the_challenge(game, bid_in):
    answer = "Resilient" if bid_in == "defender" else None
    challenge = opposed_challenge(
        game["session"], game["helen"], game["grady"], bid="Ferocious", answer=answer
    )
    trait = _trait(
        game,
        "helen" if bid_in == "challenger" else "grady",
        "Ferocious" if bid_in == "challenger" else "Resilient",
    )
    # A refused delete spoils the transaction it runs in, as any database error.
    with pytest.raises(ProtectedError) as refused, transaction.atomic():
        trait.delete()
    assert str(refused.value.args[0]) == (
        f"{trait.name} is bid in the open challenge #{challenge.pk} (Helen vs Grady); "
        "void or finish it first."
    )
    with pytest.raises(ProtectedError), transaction.atomic():
        Trait.objects.filter(pk=trait.pk).delete()
    with pytest.raises(ProtectedError), transaction.atomic():
        game["helen" if bid_in == "challenger" else "grady"].delete()
    assert Trait.objects.filter(pk=trait.pk).exists()
    services.challenge_void(
        challenge_id=challenge.pk, reason="ruled", user=game["narrator"], msg_id=_id()
    )
    trait.delete()
    assert not Trait.objects.filter(pk=trait.pk).exists()


def test_a_trait_not_at_risk_deletes_as_before(game):
    opposed_challenge(game["session"], game["helen"], game["grady"], bid="Ferocious")
    _trait(game, "helen", "Quick").delete()
    assert not Trait.objects.filter(character=game["helen"], name="Quick").exists()


@pytest.mark.parametrize(
    "count, category, refusal",
    [
        (
            0,
            None,
            "Ferocious is bid in the open challenge #{pk} (Helen vs Grady) and others; "
            "void or finish it first.",
        ),
        (
            1,
            None,
            "2 copies of Ferocious are bid in the open challenge #{pk} (Helen vs Grady) "
            "and others; keep at least 2 until that is over.",
        ),
        (2, None, ""),
        (5, None, ""),
        (
            2,
            "social",
            "Ferocious is bid in the open challenge #{pk} (Helen vs Grady) and others; "
            "its category cannot change until that is over.",
        ),
        (2, "physical", ""),
    ],
)
def test_what_a_narrator_may_change_of_a_trait_at_risk(game, count, category, refusal):
    first = opposed_challenge(game["session"], game["helen"], game["grady"], bid="Ferocious")
    opposed_challenge(game["session"], game["helen"], game["grady"], bid="Ferocious")
    trait = _trait(game, "helen", "Ferocious")
    got = services.trait_edit_refusal(trait.pk, count=count, category=category)
    assert got == refusal.format(pk=first.pk)


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_the_resolving_throw_after_a_rename_is_acknowledged_and_shows_the_name_as_bid(game):
    """Before: the throw raised Trait.DoesNotExist, the socket closed 1011 and
    the defender learnt her throw would win."""
    from channels.db import database_sync_to_async

    from tests.challenges.wsutil import act, connect

    challenge = await database_sync_to_async(opposed_challenge)(
        game["session"], game["helen"], game["grady"], bid="Ferocious", answer="Resilient"
    )
    await database_sync_to_async(_rename)(game, "grady", "Resilient", "Unbowed")
    helen, _ = await connect(f"/ws/play/{game['helen'].pk}/", game["helen_player"])
    grady, _ = await connect(f"/ws/play/{game['grady'].pk}/", game["grady_player"])
    reply, _ = await act(helen, action="challenge.throw", challenge=challenge.pk, throw="rock")
    assert reply["status"] == "ok"
    reply, frames = await act(
        grady, action="challenge.throw", challenge=challenge.pk, throw="scissors"
    )
    assert reply["status"] == "ok", reply
    assert any("your <bdi>Resilient</bdi> is lost" in frame for frame in frames)
    await helen.disconnect()
    await grady.disconnect()


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_deleting_a_defender_not_yet_at_risk_leaves_the_challengers_phone_working(game):
    """A shell may delete Grady before he answers (none of his Traits is bid):
    the challenge goes with him, Helen's bid is free again, her phone answers
    her in words and its next heartbeat redraws it without the card."""
    from channels.db import database_sync_to_async

    from tests.faults.phones import Phone

    challenge = await database_sync_to_async(opposed_challenge)(
        game["session"], game["helen"], game["grady"], bid="Ferocious"
    )
    helen = Phone(f"/ws/play/{game['helen'].pk}/", game["helen_player"])
    await helen.connect()
    assert f'id="card-{challenge.pk}"' in helen.view
    await database_sync_to_async(game["grady"].delete)()
    reply = await helen.act(_id(), action="challenge.throw", challenge=challenge.pk, throw="rock")
    assert reply == {"type": "error", "id": reply["id"], "message": "There is no such challenge."}
    assert await helen.heartbeat() is None  # a whole view, not a pong
    assert f'id="card-{challenge.pk}"' not in helen.view
    assert "(at risk" not in helen.view
    await helen.close()
