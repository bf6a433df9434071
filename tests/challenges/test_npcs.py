"""Characters the narrators run (issue 11, section 4) through the real
router and the services: a player challenges an auto-answering NPC and it
answers by itself (bid, throw, declared count); a narrator plays an NPC
from her dashboard; nobody else may act as one; a time out holds the NPC's
answer until Resume."""

from __future__ import annotations

import uuid

import pytest
from channels.db import database_sync_to_async
from django.test import Client

from challenges import services
from challenges.models import Challenge, Event, TraitLoss
from challenges.rules import Outcome, Stage
from characters.models import Ability, Chronicle, Presence, Trait
from tests.challenges.wsutil import act, connect, drain, expect
from tests.factories import make_character, make_user, narrated_chronicle

pytestmark = pytest.mark.django_db(transaction=True)


def _world(*, auto=True, relents="never"):
    built = narrated_chronicle("Umbra Chronicle")
    helen = make_character(
        built["chronicle"],
        "Helen",
        make_user("helen"),
        traits=[("Ferocious", "physical", 7), ("Alluring", "social", 2)],
    )
    spider = make_character(
        built["chronicle"],
        "Pattern Spider",
        None,
        traits=[("Quick", "physical", 2), ("Tireless", "physical", 3), ("Calm", "social", 2)],
    )
    spider.auto_answer = auto
    spider.relents = relents
    spider.save()
    return {**built, "helen": helen, "spider": spider}


@database_sync_to_async
def _db_world(**kwargs):
    return _world(**kwargs)


@database_sync_to_async
def _latest() -> Challenge:
    return Challenge.objects.latest("created_at")


@database_sync_to_async
def _events(challenge) -> list[tuple[str, int | None]]:
    return list(
        Event.objects.filter(challenge=challenge).order_by("id").values_list("kind", "actor_id")
    )


@database_sync_to_async
def _lost(character) -> list[str]:
    return list(TraitLoss.objects.filter(character=character).values_list("trait__name", flat=True))


def _fixed(throw_: str, calls: list):
    def choose(options):
        calls.append(tuple(options))
        return next(o for o in options if o == throw_)

    return choose


@pytest.mark.asyncio
async def test_a_player_challenges_an_auto_answering_npc_and_it_answers(monkeypatch):
    world = await _db_world()
    calls: list = []
    monkeypatch.setattr("challenges.services.npcs.draw_throw", _fixed("rock", calls))
    helen, _ = await connect(f"/ws/play/{world['helen'].pk}/", world["helen"].player)

    reply, frames = await act(
        helen, action="challenge.open", defender=str(world["spider"].pk), bid="physical:Ferocious"
    )
    assert reply["status"] == "ok", reply
    challenge = await _latest()
    # It answered at once with its best Trait (Tireless ×3 before Quick ×2),
    # and has not thrown: she may still name a Negative Trait.
    assert challenge.stage == Stage.THROWS
    assert challenge.state["defender_bids"] == ["Tireless"]
    assert calls == []
    await expect(helen, "Tireless", frames=frames)

    # A tie (rock against its rock): Helen declares 7, it declares its true 5.
    reply, frames = await act(helen, action="challenge.throw", challenge=challenge.pk, throw="rock")
    assert reply["status"] == "ok", reply
    assert len(calls) == 1 and set(calls[0]) == {"rock", "paper", "scissors"}
    challenge = await _latest()
    assert challenge.stage == Stage.DECLARE_CHALLENGER
    reply, frames2 = await act(helen, action="challenge.declare", challenge=challenge.pk)
    assert reply["status"] == "ok", reply
    challenge = await _latest()
    test = challenge.state["tests"][0]
    assert (test["challenger_throw"], test["defender_throw"]) == ("rock", "rock")
    assert (test["challenger_declared"], test["defender_declared"]) == (7, 5)
    # It lost on counts with no retest open to it: resolved, Tireless lost.
    assert challenge.stage == Stage.RESOLVED
    assert challenge.outcome == Outcome.CHALLENGER_WINS
    assert await _lost(world["spider"]) == ["Tireless"]
    kinds = await _events(challenge)
    # The NPC's moves have no actor: its bid, throw and count.
    assert [k for k in kinds if k[1] is None][:3] == [
        ("responded", None),
        ("threw", None),
        ("revealed", None),
    ]
    assert ("declared", None) in kinds and kinds[-1] == ("resolved", None)
    # Her phone shows the result.
    await expect(helen, "Tireless", frames=[*frames, *frames2, *await drain(helen)])
    await helen.disconnect()


@pytest.mark.asyncio
async def test_an_npc_that_always_relents_relents_at_once():
    world = await _db_world(relents="always")
    helen, _ = await connect(f"/ws/play/{world['helen'].pk}/", world["helen"].player)
    reply, _ = await act(
        helen, action="challenge.open", defender=str(world["spider"].pk), bid="physical:Ferocious"
    )
    assert reply["status"] == "ok", reply
    challenge = await _latest()
    assert challenge.stage == Stage.RESOLVED and challenge.state["relented"]
    assert challenge.outcome == Outcome.CHALLENGER_WINS
    await helen.disconnect()


def _id() -> str:
    return uuid.uuid4().hex


def test_a_narrator_plays_a_non_auto_npc_from_the_dashboard():
    world = _world(auto=False)
    narrator, spider = world["narrator"], world["spider"]
    client = Client()
    client.force_login(narrator)
    panel = client.get(f"/narrate/{world['session'].pk}/character/{spider.pk}/")
    assert panel.status_code == 200
    page = panel.content.decode()
    assert "NPC: run by the narrators" in page and f'href="/play/{spider.pk}/"' in page
    play = client.get(f"/play/{spider.pk}/")
    assert play.status_code == 200
    assert "played by a narrator" in play.content.decode()

    challenge = _open(world)
    # Not auto-answering: it waits for the narrator.
    challenge.refresh_from_db()
    assert challenge.stage == Stage.RESPONSE
    services.challenge_bid(
        challenge_id=challenge.pk, character=spider, bids=["Quick"], user=narrator, msg_id=_id()
    )
    challenge.refresh_from_db()
    assert challenge.stage == Stage.THROWS and challenge.state["defender_bids"] == ["Quick"]
    services.challenge_throw(
        challenge_id=challenge.pk, character=spider, throw="paper", user=narrator, msg_id=_id()
    )
    challenge.refresh_from_db()
    assert challenge.state["tests"][0]["defender_throw"] == "paper"
    # The dashboard lists the challenge as usual.
    dashboard = client.get(f"/narrate/{world['session'].pk}/").content.decode()
    assert f"challenge-{challenge.pk}" in dashboard


@pytest.mark.asyncio
async def test_a_narrator_plays_an_npc_on_its_phone_socket():
    world = await _db_world(auto=False)
    phone, first = await connect(f"/ws/play/{world['spider'].pk}/", world["narrator"])
    assert not first.startswith("closed"), first
    assert "Pattern Spider" in first
    reply, _ = await act(
        phone, action="challenge.open", defender=str(world["helen"].pk), bid="social:Calm"
    )
    assert reply["status"] == "ok", reply
    challenge = await _latest()
    assert challenge.challenger_id == world["spider"].pk
    await phone.disconnect()


def test_a_player_cannot_act_as_an_npc():
    world = _world(auto=False)
    helen, spider = world["helen"], world["spider"]
    client = Client()
    client.force_login(helen.player)
    assert client.get(f"/play/{spider.pk}/").status_code == 404
    assert client.get(f"/play/{spider.pk}/opponents/").status_code == 404
    challenge = _open(world)
    with pytest.raises(services.ActionRefused):
        services.challenge_bid(
            challenge_id=challenge.pk,
            character=spider,
            bids=["Quick"],
            user=helen.player,
            msg_id=_id(),
        )
    # Nor may a narrator of another chronicle.
    stranger = make_user("stranger")
    Chronicle.objects.create(name="Other Chronicle").narrators.add(stranger)
    with pytest.raises(services.ActionRefused):
        services.challenge_bid(
            challenge_id=challenge.pk,
            character=spider,
            bids=["Quick"],
            user=stranger,
            msg_id=_id(),
        )
    client.force_login(stranger)
    assert client.get(f"/play/{spider.pk}/").status_code == 404
    challenge.refresh_from_db()
    assert challenge.stage == Stage.RESPONSE
    # A narrator may not act for a character who has a player.
    with pytest.raises(services.ActionRefused):
        services.challenge_throw(
            challenge_id=challenge.pk,
            character=helen,
            throw="rock",
            user=world["narrator"],
            msg_id=_id(),
        )


@pytest.mark.asyncio
async def test_a_player_cannot_open_an_npcs_phone_socket():
    world = await _db_world()
    phone, first = await connect(f"/ws/play/{world['spider'].pk}/", world["helen"].player)
    assert first == "closed:4403"


def test_an_npc_answers_at_resume_what_a_time_out_held():
    """Auto-answer switched on while a challenge waits on the NPC, during a
    time out: nothing moves until Resume, which makes the NPC's due move."""
    world = _world(auto=False)
    narrator, spider = world["narrator"], world["spider"]
    challenge = _open(world)
    services.session_time_out(session=world["session"], user=narrator, msg_id=_id())
    spider.auto_answer = True
    spider.save()
    challenge.refresh_from_db()
    assert challenge.stage == Stage.RESPONSE

    services.session_resume(session=world["session"], user=narrator, msg_id=_id())

    challenge.refresh_from_db()
    assert challenge.stage == Stage.THROWS
    assert challenge.state["defender_bids"] == ["Tireless"]


def test_the_npc_throws_in_the_same_move_as_the_player(monkeypatch):
    world = _world()
    monkeypatch.setattr("challenges.services.npcs.draw_throw", lambda options: options[0])
    helen = world["helen"]
    challenge = _open(world)
    services.challenge_throw(
        challenge_id=challenge.pk,
        character=helen,
        throw="scissors",
        user=helen.player,
        msg_id=_id(),
    )
    challenge.refresh_from_db()
    # Its throw (rock, the first of the three) beats scissors: it won the challenge.
    assert challenge.state["tests"][0]["defender_throw"] == "rock"
    assert challenge.outcome == Outcome.DEFENDER_WINS
    assert list(
        TraitLoss.objects.filter(character=helen).values_list("trait__name", flat=True)
    ) == ["Ferocious"]


def test_the_dashboard_lists_npcs_not_here_and_play_brings_one_in():
    world = _world(auto=True)
    spider = world["spider"]
    Presence.objects.filter(character=spider).delete()
    client = Client()
    client.force_login(world["narrator"])
    page = client.get(f"/narrate/{world['session'].pk}/").content.decode()
    assert "NPCs not here tonight (1)" in page and 'aria-label="Play Pattern Spider"' in page

    assert client.get(f"/play/{spider.pk}/").status_code == 200

    assert Presence.objects.filter(character=spider, session=world["session"]).exists()
    page = client.get(f"/narrate/{world['session'].pk}/").content.decode()
    assert "NPCs not here tonight" not in page
    assert f'id="roster-{spider.pk}"' in page and "NPC · auto" in page


def _open(world) -> Challenge:
    """Helen challenges the spider: Physical, bidding Ferocious."""
    return services.challenge_open(
        session=world["session"],
        challenger=world["helen"],
        defender=world["spider"],
        category="physical",
        bids=["Ferocious"],
        user=world["helen"].player,
        msg_id=_id(),
    )


_open_against = database_sync_to_async(_open)


@database_sync_to_async
def _refreshed(challenge) -> Challenge:
    challenge.refresh_from_db()
    return challenge


@pytest.mark.asyncio
async def test_the_dashboard_switches_auto_answer_on_and_the_npc_answers_at_once():
    world = await _db_world(auto=False)
    challenge = await _open_against(world)
    assert (await _refreshed(challenge)).stage == Stage.RESPONSE
    tablet, _ = await connect(f"/ws/narrate/{world['session'].pk}/", world["narrator"])

    # A forged setting and a played character are refused, changing nothing.
    reply, _ = await act(
        tablet, action="npc.set", character=str(world["spider"].pk), relents="sometimes"
    )
    assert reply["type"] == "error" and "never, wounded or always" in reply["message"]
    reply, _ = await act(
        tablet, action="npc.set", character=str(world["helen"].pk), auto_answer="on"
    )
    assert reply["type"] == "error" and "has a player" in reply["message"], reply
    assert (await _refreshed(challenge)).stage == Stage.RESPONSE

    reply, frames = await act(
        tablet,
        action="npc.set",
        character=str(world["spider"].pk),
        auto_answer="on",
        relents="wounded",
    )
    assert reply["status"] == "ok", reply
    challenge = await _refreshed(challenge)
    assert challenge.stage == Stage.THROWS
    assert challenge.state["defender_bids"] == ["Tireless"]
    spider = await database_sync_to_async(
        lambda: type(world["spider"]).objects.get(pk=world["spider"].pk)
    )()
    assert (spider.auto_answer, spider.relents) == (True, "wounded")
    await expect(tablet, f'id="roster-{spider.pk}"', frames=frames)
    await tablet.disconnect()


def test_the_npc_bids_what_it_still_has_tonight(monkeypatch):
    """Lost copies and copies at risk in another challenge are not its best:
    Tireless ×3 first; one lost, Quick ×2 and Tireless ×2 tie and the sheet's
    first (Quick) goes; with one Quick at risk elsewhere, Tireless."""
    monkeypatch.setattr("challenges.services.npcs.draw_throw", lambda options: "rock")
    world = _world()
    helen, spider = world["helen"], world["spider"]
    Trait.objects.filter(character=helen).update(count=20)

    def challenge() -> Challenge:
        return _open(world)

    first = challenge()
    assert first.state["defender_bids"] == ["Tireless"]
    services.challenge_throw(
        challenge_id=first.pk, character=helen, throw="paper", user=helen.player, msg_id=_id()
    )
    first.refresh_from_db()
    assert first.outcome == Outcome.CHALLENGER_WINS
    assert list(
        TraitLoss.objects.filter(character=spider).values_list("trait__name", flat=True)
    ) == ["Tireless"]
    second = challenge()
    assert second.state["defender_bids"] == ["Quick"]
    third = challenge()  # one Quick is at risk in the second
    assert third.state["defender_bids"] == ["Tireless"]


def test_ukm_equal_counts_the_npc_keeps_its_standing_count_and_accepts(monkeypatch):
    """``ukm`` (seeds/004 "In The Case Of A Draw"): equal counts are retested
    until someone wins; the NPC's declared count stands, and it takes no
    retest of its own when it loses."""
    monkeypatch.setattr("challenges.services.npcs.draw_throw", lambda options: "rock")
    world = _world()
    world["chronicle"].ruleset = "ukm"
    world["chronicle"].save()
    helen, spider = world["helen"], world["spider"]
    Trait.objects.filter(character=helen, name="Ferocious").update(count=5)
    Ability.objects.create(character=spider, name="Brawl", rating=3)  # an ability retest is open
    challenge = _open(world)
    services.challenge_throw(
        challenge_id=challenge.pk, character=helen, throw="rock", user=helen.player, msg_id=_id()
    )
    services.challenge_declare(
        challenge_id=challenge.pk, character=helen, count=None, user=helen.player, msg_id=_id()
    )
    challenge.refresh_from_db()
    first = challenge.state["tests"][0]
    assert (first["challenger_declared"], first["defender_declared"]) == (5, 5)
    assert challenge.stage == Stage.THROWS and len(challenge.state["tests"]) == 2
    assert challenge.state["tests"][1]["retest"] == "equal_counts"
    assert challenge.state["defender_standing"] == 5

    services.challenge_throw(
        challenge_id=challenge.pk, character=helen, throw="paper", user=helen.player, msg_id=_id()
    )
    challenge.refresh_from_db()
    assert challenge.outcome == Outcome.CHALLENGER_WINS
    kinds = list(
        Event.objects.filter(challenge=challenge, actor=None).values_list("kind", flat=True)
    )
    assert "retest_called" not in kinds and "accepted" in kinds


@pytest.mark.parametrize("opens", ["static", "simple"])
def test_a_static_challenge_or_simple_test_set_for_an_auto_npc_plays_itself(monkeypatch, opens):
    """Issue 11 section 4: "Statics … can include them". A narrator sets a
    static challenge (Physical, difficulty 1) or a simple test for the spider:
    it bids its best Physical Trait (Tireless, 3 copies) and throws at once, so
    the challenge is resolved by the narrator's one move."""
    world = _world()
    monkeypatch.setattr("challenges.services.npcs.draw_throw", lambda options: "rock")
    common = {
        "session": world["session"],
        "character": world["spider"],
        "narrator_throw": "scissors",
        "user": world["narrator"],
        "msg_id": _id(),
    }
    if opens == "static":
        challenge = services.static_open(category="physical", difficulty=1, **common)
    else:
        challenge = services.simple_test_open(**common)
    challenge.refresh_from_db()
    assert challenge.stage == Stage.RESOLVED
    assert challenge.outcome == Outcome.CHALLENGER_WINS
    assert challenge.state["tests"][0]["challenger_throw"] == "rock"
    if opens == "static":
        assert challenge.state["challenger_bids"] == ["Tireless"]
