"""The frames of issue 10's moves through the real router: Negative Traits
named and paid for, overbids with their second test, accepting a lost test,
two bids when wounded, a narrator's forced retest, and forged frames refused
without a change. seeds/000 "Negative Traits", "Overbidding", "Health"."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from challenges.models import Challenge, Test, TraitLoss
from characters.models import Presence
from tests.challenges.wsutil import act, connect, drain
from tests.factories import make_character, make_user, narrated_chronicle

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


@database_sync_to_async
def _challenge(pk: int) -> Challenge:
    return Challenge.objects.get(pk=pk)


@database_sync_to_async
def _latest() -> Challenge:
    return Challenge.objects.latest("created_at")


@database_sync_to_async
def _lost(character) -> list[str]:
    return sorted(
        TraitLoss.objects.filter(character=character).values_list("trait__name", flat=True)
    )


@database_sync_to_async
def _health(character) -> int:
    return Presence.objects.get(character=character).health


@database_sync_to_async
def _tests(challenge) -> list[tuple[str, str, str]]:
    return list(
        Test.objects.filter(challenge=challenge)
        .order_by("number")
        .values_list("retest", "by", "winner")
    )


@database_sync_to_async
def _godfrey_and_connor() -> dict:
    """seeds/000 "Overbidding": Sir Godfrey (15 Physical, Crinos) and Connor
    (5 Physical, Homid)."""
    built = narrated_chronicle("Overbid Chronicle")
    godfrey = make_character(
        built["chronicle"],
        "Sir Godfrey",
        make_user("godfrey"),
        traits=[("Brawny", "physical", 10), ("Relentless", "physical", 5)],
    )
    connor = make_character(
        built["chronicle"],
        "Connor",
        make_user("connor"),
        traits=[("Quick", "physical", 5)],
        negatives=[("Clumsy", "physical", 1)],
    )
    return {**built, "godfrey": godfrey, "connor": connor}


async def _ok(phone, **message) -> None:
    reply, _ = await act(phone, **message)
    assert reply.get("status") == "ok", reply


async def _seats(world):
    godfrey, _ = await connect(f"/ws/play/{world['godfrey'].pk}/", world["godfrey"].player)
    connor, _ = await connect(f"/ws/play/{world['connor'].pk}/", world["connor"].player)
    return godfrey, connor


async def test_sir_godfrey_overbids_and_wins_the_tied_second_test():
    """He loses the first test, risks Relentless, declares 15 against
    Connor's 5 (15 ≥ 2×5), the second test ties and the overbidder wins: he
    loses the Brawny of the lost test, Connor loses Quick and a health level."""
    world = await _godfrey_and_connor()
    godfrey, connor = await _seats(world)
    await _ok(
        godfrey,
        action="challenge.open",
        defender=str(world["connor"].pk),
        bid="physical:Brawny",
        is_attack="on",
    )
    challenge = await _latest()
    await _ok(connor, action="challenge.bid", challenge=challenge.pk, bid="Quick")
    await _ok(godfrey, action="challenge.throw", challenge=challenge.pk, throw="scissors")
    await _ok(connor, action="challenge.throw", challenge=challenge.pk, throw="rock")
    assert (await _challenge(challenge.pk)).stage == "retest"

    # Connor won the test: only the loser may retest or accept.
    reply, _ = await act(connor, action="challenge.accept", challenge=challenge.pk)
    assert reply["type"] == "error" and "no result for you to accept" in reply["message"]
    reply, _ = await act(godfrey, action="challenge.retest", challenge=challenge.pk, kind="ability")
    assert reply["type"] == "error" and "Ability retest is not open" in reply["message"]
    assert (await _challenge(challenge.pk)).version == 4  # open, bid, two throws: nothing more

    await _ok(
        godfrey,
        action="challenge.retest",
        challenge=challenge.pk,
        kind="overbid",
        traits=["Relentless"],
    )
    assert (await _challenge(challenge.pk)).stage == "retest_answer"
    await _ok(connor, action="challenge.answer", challenge=challenge.pk)  # his full 5
    for phone in (godfrey, connor):
        await _ok(phone, action="challenge.throw", challenge=challenge.pk, throw="rock")

    done = await _challenge(challenge.pk)
    assert (done.stage, done.outcome) == ("resolved", "challenger_wins")
    assert await _tests(done) == [("", "", "defender"), ("overbid", "challenger", "challenger")]
    assert await _lost(world["godfrey"]) == ["Brawny"]
    assert await _lost(world["connor"]) == ["Quick"]
    assert await _health(world["connor"]) == 1
    assert await _health(world["godfrey"]) == 0
    for phone in (godfrey, connor):
        await phone.disconnect()


async def test_a_correct_negative_trait_makes_the_other_add_a_trait_before_the_test():
    """seeds/000 "Negative Traits": Godfrey names Connor's Clumsy: Connor must
    bid one more Trait; nobody throws until he has; a wrong call (Lame) makes
    Godfrey risk one more too."""
    world = await _godfrey_and_connor()
    godfrey, connor = await _seats(world)
    await _ok(
        godfrey, action="challenge.open", defender=str(world["connor"].pk), bid="physical:Brawny"
    )
    challenge = await _latest()
    await _ok(connor, action="challenge.bid", challenge=challenge.pk, bid="Quick")
    await _ok(godfrey, action="challenge.negative", challenge=challenge.pk, name="clumsy")
    await _ok(godfrey, action="challenge.negative", challenge=challenge.pk, name="Lame")
    state = (await _challenge(challenge.pk)).state
    assert (state["challenger_owed"], state["defender_owed"]) == (1, 1)

    reply, _ = await act(godfrey, action="challenge.throw", challenge=challenge.pk, throw="rock")
    assert reply["type"] == "error" and "must first add 1 Trait" in reply["message"]
    reply, _ = await act(
        connor, action="challenge.add_bid", challenge=challenge.pk, bids=["Quick", "Quick"]
    )
    assert reply["type"] == "error" and "Add 1 Trait" in reply["message"]
    await _ok(connor, action="challenge.add_bid", challenge=challenge.pk, bids=["Quick"])
    await _ok(godfrey, action="challenge.add_bid", challenge=challenge.pk, bids=["Relentless"])
    state = (await _challenge(challenge.pk)).state
    assert state["defender_bids"] == ["Quick", "Quick"]
    assert state["challenger_bids"] == ["Brawny", "Relentless"]
    await _ok(godfrey, action="challenge.throw", challenge=challenge.pk, throw="rock")
    await _ok(connor, action="challenge.throw", challenge=challenge.pk, throw="scissors")
    done = await _challenge(challenge.pk)
    assert done.outcome == "challenger_wins"
    assert await _lost(world["connor"]) == ["Quick", "Quick"]
    for phone in (godfrey, connor):
        await phone.disconnect()


async def test_a_bruised_defender_answers_with_two_traits_and_a_loser_accepts():
    """seeds/000 "Health": Bruised, Connor must bid two Traits ("bids"); one is
    refused. Losing the test with an overbid open, Godfrey accepts."""
    world = await _godfrey_and_connor()
    await database_sync_to_async(Presence.objects.filter(character=world["connor"]).update)(
        health=1
    )
    godfrey, connor = await _seats(world)
    await _ok(
        godfrey, action="challenge.open", defender=str(world["connor"].pk), bid="physical:Brawny"
    )
    challenge = await _latest()
    reply, _ = await act(connor, action="challenge.bid", challenge=challenge.pk, bid="Quick")
    assert reply["type"] == "error" and "must bid 2 Traits" in reply["message"]
    await _ok(connor, action="challenge.bid", challenge=challenge.pk, bids=["Quick", "Quick"])
    await _ok(godfrey, action="challenge.throw", challenge=challenge.pk, throw="paper")
    await _ok(connor, action="challenge.throw", challenge=challenge.pk, throw="scissors")
    assert (await _challenge(challenge.pk)).stage == "retest"
    await _ok(godfrey, action="challenge.accept", challenge=challenge.pk)
    done = await _challenge(challenge.pk)
    assert (done.stage, done.outcome) == ("resolved", "defender_wins")
    assert await _lost(world["godfrey"]) == ["Brawny"]
    assert await _lost(world["connor"]) == []
    for phone in (godfrey, connor):
        await phone.disconnect()


async def test_a_narrator_forces_a_retest_with_a_reason():
    """RULES.md "Time out and order of play": a narrator rules a retest of a
    test being settled; a ruling without a reason is refused."""
    world = await _godfrey_and_connor()
    godfrey, connor = await _seats(world)
    dashboard, _ = await connect(f"/ws/narrate/{world['session'].pk}/", world["narrator"])
    await _ok(
        godfrey, action="challenge.open", defender=str(world["connor"].pk), bid="physical:Brawny"
    )
    challenge = await _latest()
    await _ok(connor, action="challenge.bid", challenge=challenge.pk, bid="Quick")
    reply, _ = await act(
        dashboard, action="challenge.force_retest", challenge=challenge.pk, reason="re-do"
    )
    assert reply["type"] == "error" and "no test to hold again" in reply["message"]
    await _ok(godfrey, action="challenge.throw", challenge=challenge.pk, throw="paper")
    await _ok(connor, action="challenge.throw", challenge=challenge.pk, throw="scissors")
    reply, _ = await act(dashboard, action="challenge.force_retest", challenge=challenge.pk)
    assert reply["type"] == "error" and "Give a reason" in reply["message"]
    await _ok(
        dashboard,
        action="challenge.force_retest",
        challenge=challenge.pk,
        reason="the throw was late",
    )
    moved = await _challenge(challenge.pk)
    assert moved.stage == "throws"
    assert await _tests(moved) == [("", "", "defender"), ("narrator", "", "")]
    await drain(dashboard)
    for phone in (godfrey, connor, dashboard):
        await phone.disconnect()


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ({"action": "challenge.retest", "kind": "cheat"}, "'kind' must be overbid, ability"),
        ({"action": "challenge.negative", "name": ""}, "'name' is empty"),
        ({"action": "challenge.negative", "name": "x" * 101}, "'name' is too long"),
        ({"action": "challenge.add_bid", "bids": ["Quick"] * 6}, "'bids' is too long"),
        ({"action": "challenge.add_bid", "bids": [1, 2]}, "'bids' is not valid"),
        ({"action": "challenge.blood", "amount": "lots"}, "must be a number"),
        ({"action": "challenge.answer", "count": -1}, "out of range"),
        ({"action": "challenge.answer", "cheat": 1}, "is not part of this action"),
        ({"action": "challenge.add_bid", "bids": ["Quick"]}, "You owe no more Traits"),
        ({"action": "challenge.blood", "amount": 2}, "cannot spend Blood"),
        ({"action": "challenge.preempt", "gift": "Luna's Armor"}, "Only the defender"),
        ({"action": "challenge.retest", "kind": "willpower"}, "not your retest to call"),
        ({"action": "challenge.negative", "name": "Clumsy"}, "after both bids"),
        ({"action": "challenge.accept"}, "no result for you to accept"),
    ],
)
async def test_forged_frames_of_the_new_moves_are_refused_and_change_nothing(message, expected):
    world = await _godfrey_and_connor()
    godfrey, connor = await _seats(world)
    await _ok(
        godfrey, action="challenge.open", defender=str(world["connor"].pk), bid="physical:Brawny"
    )
    challenge = await _latest()
    before = (await _challenge(challenge.pk)).state
    reply, _ = await act(godfrey, challenge=challenge.pk, **message)
    assert reply["type"] == "error" and expected in reply["message"], reply
    assert (await _challenge(challenge.pk)).state == before
    for phone in (godfrey, connor):
        await phone.disconnect()


@database_sync_to_async
def _ukm_pair() -> dict:
    """A ``ukm`` chronicle: Ann (Charming ×3, Subterfuge 3, Dominate) against
    Bo (Witty ×3, Empathy 1, Willpower 2)."""
    from characters.models import Discipline

    built = narrated_chronicle("UKM Chronicle")
    built["chronicle"].ruleset = "ukm"
    built["chronicle"].save()
    ann = make_character(
        built["chronicle"],
        "Ann",
        make_user("ann"),
        traits=[("Charming", "social", 3)],
        abilities=[("Subterfuge", 3)],
    )
    Discipline.objects.create(character=ann, name="Dominate", rating=2)
    bo = make_character(
        built["chronicle"],
        "Bo",
        make_user("bo"),
        traits=[("Witty", "social", 3)],
        abilities=[("Empathy", 1)],
    )
    bo.willpower = 2
    bo.save()
    return {**built, "ann": ann, "bo": bo}


@database_sync_to_async
def _spent_and_immune(world) -> tuple[int, list[tuple[int, str]]]:
    from characters.models import Immunity

    spent = Presence.objects.get(character=world["bo"]).willpower_spent
    immune = list(Immunity.objects.filter(character=world["bo"]).values_list("attacker", "power"))
    return spent, immune


async def test_ukm_an_ability_retest_then_a_final_willpower_retest():
    """seeds/004 "Retrying The Test In An Ability-Based Challenge": Ann loses
    the first test and retests with Subterfuge 3 against Bo's Empathy 1; Bo
    loses the retest and spends Willpower for the last, final test, wins it,
    and is immune to Ann's Dominate for ten minutes: her next Dominate is
    refused."""
    world = await _ukm_pair()
    ann, _ = await connect(f"/ws/play/{world['ann'].pk}/", world["ann"].player)
    bo, _ = await connect(f"/ws/play/{world['bo'].pk}/", world["bo"].player)
    await _ok(
        ann,
        action="challenge.open",
        defender=str(world["bo"].pk),
        bid="social:Charming",
        power="Dominate",
    )
    challenge = await _latest()
    await _ok(bo, action="challenge.bid", challenge=challenge.pk, bid="Witty")
    await _ok(ann, action="challenge.throw", challenge=challenge.pk, throw="rock")
    await _ok(bo, action="challenge.throw", challenge=challenge.pk, throw="paper")
    await _ok(
        ann, action="challenge.retest", challenge=challenge.pk, kind="ability", name="Subterfuge"
    )
    reply, _ = await act(bo, action="challenge.answer", challenge=challenge.pk, name="Dodge")
    assert reply["type"] == "error" and "no Ability 'Dodge'" in reply["message"]
    await _ok(bo, action="challenge.answer", challenge=challenge.pk, name="Empathy")
    await _ok(ann, action="challenge.throw", challenge=challenge.pk, throw="rock")
    await _ok(bo, action="challenge.throw", challenge=challenge.pk, throw="scissors")
    await _ok(bo, action="challenge.retest", challenge=challenge.pk, kind="willpower")
    await _ok(ann, action="challenge.throw", challenge=challenge.pk, throw="rock")
    await _ok(bo, action="challenge.throw", challenge=challenge.pk, throw="paper")

    done = await _challenge(challenge.pk)
    assert (done.stage, done.outcome) == ("resolved", "defender_wins")
    assert await _tests(done) == [
        ("", "", "defender"),
        ("ability", "challenger", "challenger"),
        ("willpower", "defender", "defender"),
    ]
    assert await _lost(world["ann"]) == ["Charming"]
    assert await _spent_and_immune(world) == (1, [(world["ann"].pk, "Dominate")])
    reply, _ = await act(
        ann,
        action="challenge.open",
        defender=str(world["bo"].pk),
        bid="social:Charming",
        power="dominate",
    )
    assert reply["type"] == "error" and "immune to it for another 10 minutes" in reply["message"]
    for phone in (ann, bo):
        await phone.disconnect()


async def test_ukm_a_difficult_simple_test_fails_on_a_tie_and_the_form_offers_it():
    """seeds/004 "Difficult Test": only an outright win succeeds; "Simple
    Test": the initiator wins ties (the player unless the narrator initiates)."""
    world = await _ukm_pair()
    ann, _ = await connect(f"/ws/play/{world['ann'].pk}/", world["ann"].player)
    dashboard, _ = await connect(f"/ws/narrate/{world['session'].pk}/", world["narrator"])
    results = []
    for extra in ({"difficult": "on"}, {}, {"narrator_initiated": "on"}):
        await _ok(
            dashboard,
            action="simple.open",
            character=str(world["ann"].pk),
            narrator_throw="rock",
            **extra,
        )
        test = await _latest()
        await _ok(ann, action="challenge.throw", challenge=test.pk, throw="rock")
        results.append((await _challenge(test.pk)).outcome)
    assert results == ["defender_wins", "challenger_wins", "defender_wins"]
    for phone in (ann, dashboard):
        await phone.disconnect()


@pytest.mark.parametrize("ruleset", ["met_classic", "ukm"])
def test_the_simple_test_forms_ask_who_initiates_and_difficult_only_under_ukm(ruleset, client):
    from django.urls import reverse

    from characters.models import Chronicle

    world = async_to_sync_world()
    Chronicle.objects.filter(pk=world["chronicle"].pk).update(ruleset=ruleset)
    client.force_login(world["narrator"])
    page = client.get(reverse("narrate", args=[world["session"].pk])).content.decode()
    panel = client.get(
        reverse("narrate_character", args=[world["session"].pk, world["ann"].pk])
    ).content.decode()
    for html in (page, panel):
        assert ('name="difficult"' in html) == (ruleset == "ukm")
        assert ('name="narrator_initiated"' in html) == (ruleset == "ukm")


def async_to_sync_world() -> dict:
    from asgiref.sync import async_to_sync

    return async_to_sync(_ukm_pair)()
